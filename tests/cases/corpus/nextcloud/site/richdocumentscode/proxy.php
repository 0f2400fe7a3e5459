nextcloud: richdocumentscode/proxy.php
