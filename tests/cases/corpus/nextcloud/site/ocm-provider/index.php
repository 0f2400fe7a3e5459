nextcloud: ocm-provider/index.php
