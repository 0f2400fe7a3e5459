opencart: system/config/default.php
