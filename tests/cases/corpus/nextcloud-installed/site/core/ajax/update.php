nextcloud-installed: core/ajax/update.php
