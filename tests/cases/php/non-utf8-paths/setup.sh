# The shared PHP environment dump (tests/cases/fixtures/php-env.php), also
# under a directory and a script name that are not UTF-8.
cp "$CASE_DIR/../../fixtures/php-env.php" env.php
mkdir "d$(printf '\351')"
cp env.php "d$(printf '\351')/env.php"
cp env.php "s$(printf '\377').php"
