nextcloud: lib/base.php
