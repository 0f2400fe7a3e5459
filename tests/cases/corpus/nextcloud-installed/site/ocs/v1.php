nextcloud-installed: ocs/v1.php
