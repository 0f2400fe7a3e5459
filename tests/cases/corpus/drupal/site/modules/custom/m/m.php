drupal: modules/custom/m/m.php
