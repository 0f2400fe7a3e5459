drupal: core/install.php
