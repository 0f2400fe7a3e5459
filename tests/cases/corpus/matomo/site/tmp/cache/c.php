matomo: tmp/cache/c.php
