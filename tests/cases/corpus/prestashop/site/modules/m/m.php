prestashop: modules/m/m.php
