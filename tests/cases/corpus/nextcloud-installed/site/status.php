nextcloud-installed: status.php
