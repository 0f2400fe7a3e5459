nextcloud-installed: ocs-provider/index.php
