backdrop: files/evil.php
