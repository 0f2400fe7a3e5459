elgg: install/i.php
