wordpress-multisite-subdomain: wp-config.php
