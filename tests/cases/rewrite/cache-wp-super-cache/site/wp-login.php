wordpress: wp-login.php
