matomo: misc/user/x.php
