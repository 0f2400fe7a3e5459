drupal: core/lib/x.php
