wordpress-multisite-subdomain: wp-login.php
