grav: system/src/x.php
