wordpress-multisite-subdirectory: wp-login.php
