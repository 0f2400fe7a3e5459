wordpress-multisite-subdirectory: wp-signup.php
