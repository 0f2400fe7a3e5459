aiowps-6g: wp-config.php
