magento2: app/etc/env.php
