nextcloud-installed: console.php
