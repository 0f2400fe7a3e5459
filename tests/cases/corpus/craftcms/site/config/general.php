craftcms: config/general.php
