matomo: config/config.ini.php
