aiowps-classic: wp-config.php
