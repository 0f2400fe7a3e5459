nextcloud-installed: cron.php
