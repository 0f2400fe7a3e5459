nextcloud: status.php
