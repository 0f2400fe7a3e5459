phpbb: common.php
