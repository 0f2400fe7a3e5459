matomo: libs/l.php
