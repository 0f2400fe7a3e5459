8g-firewall-setenvif: wp-login.php
