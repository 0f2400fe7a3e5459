aiowps-6g: wp-admin/index.php
