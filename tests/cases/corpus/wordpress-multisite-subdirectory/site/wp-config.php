wordpress-multisite-subdirectory: wp-config.php
