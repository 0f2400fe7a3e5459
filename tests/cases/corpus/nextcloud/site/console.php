nextcloud: console.php
