nextcloud-installed: updater/index.php
