wintercms: modules/system/models/M.php
