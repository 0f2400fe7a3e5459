drupal front controller
