typo3: typo3conf/ext/e/Configuration/TCA/x.php
