phpmyadmin: setup/frames/index.inc.php
