typo3: vendor/autoload.php
