drupal: core/modules/system/tests/https.php
