magento2: pub/cron.php
