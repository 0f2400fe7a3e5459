matomo: vendor/v/v.php
