elgg: elgg_config/settings.php
