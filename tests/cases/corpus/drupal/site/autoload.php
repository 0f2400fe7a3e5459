drupal: autoload.php
