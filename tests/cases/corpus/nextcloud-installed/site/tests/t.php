nextcloud-installed: tests/t.php
