backdrop: core/cron.php
