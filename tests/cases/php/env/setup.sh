# The shared PHP environment dump (tests/cases/fixtures/php-env.php).
mkdir -p auth sub && cp "$CASE_DIR/../../fixtures/php-env.php" env.php && cp env.php auth/env.php && cp env.php sub/index.php
