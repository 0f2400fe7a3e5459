prestashop: img/x.php
