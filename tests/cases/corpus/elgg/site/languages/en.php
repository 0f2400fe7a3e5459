elgg: languages/en.php
