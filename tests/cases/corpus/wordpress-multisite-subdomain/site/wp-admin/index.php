wordpress-multisite-subdomain: wp-admin/index.php
