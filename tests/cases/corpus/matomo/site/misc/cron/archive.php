matomo: misc/cron/archive.php
