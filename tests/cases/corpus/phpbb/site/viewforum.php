phpbb: viewforum.php
