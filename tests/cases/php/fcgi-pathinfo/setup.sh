# The shared PHP environment dump (tests/cases/fixtures/php-env.php).
for d in none first last full unescape one handler handler-one handler-full handler-first; do
    mkdir -p $d && cp "$CASE_DIR/../../fixtures/php-env.php" $d/a.b.php
done
