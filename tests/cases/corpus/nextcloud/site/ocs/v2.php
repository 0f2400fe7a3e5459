nextcloud: ocs/v2.php
