nextcloud-installed: templates/t.php
