elgg: mod/blog/actions/save.php
