phpmyadmin: libraries/common.inc.php
