nextcloud: tests/t.php
