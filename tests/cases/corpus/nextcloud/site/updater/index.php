nextcloud: updater/index.php
