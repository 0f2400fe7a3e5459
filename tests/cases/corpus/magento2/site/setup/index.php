magento2: setup/index.php
