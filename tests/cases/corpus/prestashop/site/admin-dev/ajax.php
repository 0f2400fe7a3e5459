prestashop: admin-dev/ajax.php
