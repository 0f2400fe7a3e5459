opencart: admin/index.php
