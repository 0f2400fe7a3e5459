# The shared PHP environment dump (tests/cases/fixtures/php-env.php).
mkdir -p php && cp "$CASE_DIR/../../fixtures/php-env.php" php/env.php
