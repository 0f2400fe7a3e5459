backdrop: core/install.php
