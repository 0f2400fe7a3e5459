wintercms: info.php
