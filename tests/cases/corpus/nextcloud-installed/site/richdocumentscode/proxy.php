nextcloud-installed: richdocumentscode/proxy.php
