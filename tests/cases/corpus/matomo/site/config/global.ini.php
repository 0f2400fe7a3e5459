matomo: config/global.ini.php
