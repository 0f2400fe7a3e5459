drupal: update.php
