elgg: mod/blog/classes/C.php
