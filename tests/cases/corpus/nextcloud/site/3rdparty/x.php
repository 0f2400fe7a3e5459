nextcloud: 3rdparty/x.php
