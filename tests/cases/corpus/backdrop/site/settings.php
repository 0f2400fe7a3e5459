backdrop: settings.php
