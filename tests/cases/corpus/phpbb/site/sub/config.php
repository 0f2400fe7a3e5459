phpbb: sub/config.php
