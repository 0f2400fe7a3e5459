elgg: engine/lib/a.php
