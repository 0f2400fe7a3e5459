grav: user/themes/t/t.php
