matomo: matomo.php
