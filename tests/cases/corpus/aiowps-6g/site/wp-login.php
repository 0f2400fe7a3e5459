aiowps-6g: wp-login.php
