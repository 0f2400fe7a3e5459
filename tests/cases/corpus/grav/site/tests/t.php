grav: tests/t.php
