silverstripe: app/src/Page.php
