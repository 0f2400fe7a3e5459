# The shared PHP environment dump (tests/cases/fixtures/php-env.php).
mkdir -p sub && cp "$CASE_DIR/../../fixtures/php-env.php" env.php && cp env.php sub/info.php
