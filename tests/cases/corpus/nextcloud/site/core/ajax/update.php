nextcloud: core/ajax/update.php
