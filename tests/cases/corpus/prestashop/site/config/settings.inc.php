prestashop: config/settings.inc.php
