nextcloud: templates/t.php
