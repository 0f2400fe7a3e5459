nextcloud: ocs-provider/index.php
