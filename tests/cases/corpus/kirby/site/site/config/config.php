kirby: site/config/config.php
