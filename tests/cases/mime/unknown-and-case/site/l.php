l.php
