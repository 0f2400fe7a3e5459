aiowps-classic: wp-admin/index.php
