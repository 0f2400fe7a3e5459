drupal: x.sql
