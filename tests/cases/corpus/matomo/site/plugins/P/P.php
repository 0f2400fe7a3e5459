matomo: plugins/P/P.php
