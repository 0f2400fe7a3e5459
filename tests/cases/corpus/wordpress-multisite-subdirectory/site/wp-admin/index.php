wordpress-multisite-subdirectory: wp-admin/index.php
