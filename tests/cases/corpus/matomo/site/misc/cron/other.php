matomo: misc/cron/other.php
