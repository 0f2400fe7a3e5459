nextcloud-installed: ocs/v2.php
