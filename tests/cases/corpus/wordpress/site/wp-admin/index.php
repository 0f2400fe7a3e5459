wordpress: wp-admin/index.php
