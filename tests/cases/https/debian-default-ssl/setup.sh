# Debian's site file as shipped, with its port and document root made
# Define'd variables (both servers run at once on free ports).
sed -e 's/\*:443/*:${TLS_PORT}/' -e 's#/var/www/html#${DOCROOT}#' \
    /etc/apache2/sites-available/default-ssl.conf > ../default-ssl.conf
