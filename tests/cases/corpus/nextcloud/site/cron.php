nextcloud: cron.php
