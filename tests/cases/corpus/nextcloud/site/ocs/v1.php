nextcloud: ocs/v1.php
