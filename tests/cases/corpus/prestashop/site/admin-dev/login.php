prestashop: admin-dev/login.php
