silverstripe: vendor/x.php
