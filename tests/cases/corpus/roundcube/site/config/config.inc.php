roundcube: config/config.inc.php
