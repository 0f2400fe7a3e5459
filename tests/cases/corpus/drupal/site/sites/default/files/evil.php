drupal: sites/default/files/evil.php
