backdrop: core/update.php
