aiowps-classic: wp-config-sample.php
