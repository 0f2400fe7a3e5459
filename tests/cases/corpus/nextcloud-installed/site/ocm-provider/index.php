nextcloud-installed: ocm-provider/index.php
