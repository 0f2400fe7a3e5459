concretecms: application/config/database.php
