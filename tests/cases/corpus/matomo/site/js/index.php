matomo: js/index.php
