phpmyadmin: setup/index.php
