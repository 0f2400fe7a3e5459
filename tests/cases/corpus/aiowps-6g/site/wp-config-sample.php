aiowps-6g: wp-config-sample.php
