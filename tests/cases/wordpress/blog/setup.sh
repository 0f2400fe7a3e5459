# WordPress from Debian's package, with the real WordPress .htaccess; the
# database is set up by the harness (needs: wordpress).
bash "$CASE_DIR/../../../../scripts/wordpress.sh" stage "$PWD"
