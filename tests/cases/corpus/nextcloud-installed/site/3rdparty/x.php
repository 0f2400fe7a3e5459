nextcloud-installed: 3rdparty/x.php
