nextcloud-installed: lib/base.php
