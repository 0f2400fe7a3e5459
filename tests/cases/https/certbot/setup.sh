# certbot's options file beside the site, where the vhost includes it.
cp "$CASE_DIR/options-ssl-apache.conf" ../options-ssl-apache.conf
