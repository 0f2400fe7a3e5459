drupal: core/rebuild.php
