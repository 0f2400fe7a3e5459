aiowps-classic: wp-login.php
