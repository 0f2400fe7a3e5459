mediawiki: load.php
