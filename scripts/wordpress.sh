#!/usr/bin/env bash
# A WordPress site with its own database, for the differential tests
# (tests/cases/wordpress/, through difftest's `needs wordpress`) and the
# benchmark (bench/, scenario W). One script so that both serve the same site.
#
# Debian's packages: wordpress (6.1, /usr/share/wordpress),
# wordpress-theme-twentytwentythree, mariadb-server, php8.2-mysql. The
# database is a private MariaDB instance (own data directory and socket, no
# TCP), never the system service.
#
#   wordpress.sh stage DOCROOT          copy WordPress into DOCROOT with the
#                                       real WordPress .htaccess
#   wordpress.sh db-init DATADIR        create an empty MariaDB data directory
#   wordpress.sh db-run DATADIR SOCKET  run MariaDB in the foreground (exec)
#   wordpress.sh db-wait SOCKET         wait until MariaDB answers
#   wordpress.sh config DOCROOT DB SOCKET
#                                       write DOCROOT/wp-config.php for
#                                       database DB at SOCKET
#   wordpress.sh install DOCROOT        create the database named in
#                                       wp-config.php and install the site
#                                       (wordpress-install.php)
#   wordpress.sh clone SOCKET FROM TO   copy database FROM to a new TO
#   wordpress.sh fpm-args               the php-fpm options (one a line) that
#                                       load what WordPress needs into a pool
#                                       started with -n (no php.ini)
#
# The site: http://localhost, permalinks /%year%/%monthnum%/%postname%/,
# user `admin` with an application password (fixed, so that requests can
# name it), a post "Hello htaccel" dated 2024-01-15, uploads without
# year/month folders, cron off (no loopback requests to port 80).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
WP_SRC=${WP_SRC:-/usr/share/wordpress}
DB_USER=wp
DB_PASS=wp

die() { echo "wordpress.sh: $*" >&2; exit 1; }

client() { # client SOCKET [args...]: the MariaDB client as the data directory's root
    local sock=$1; shift
    mariadb --no-defaults --socket="$sock" -u root "$@"
}

cmd=${1:-}
shift || true
case "$cmd" in
stage)
    docroot=${1:?DOCROOT}
    [ -f "$WP_SRC/wp-settings.php" ] || die "$WP_SRC: no WordPress (install Debian's wordpress package)"
    [ -d "$WP_SRC/wp-content/themes/twentytwentythree" ] ||
        die "no theme twentytwentythree (install wordpress-theme-twentytwentythree)"
    mkdir -p "$docroot"
    # -L: Debian's tree links to /etc/wordpress and /usr/share/javascript;
    # the copy holds real files, with their time stamps (ETag, Last-Modified).
    cp -RL --preserve=mode,timestamps "$WP_SRC/." "$docroot/"
    rm -f "$docroot/wp-config.php" "$docroot/.htaccess"
    # The real WordPress .htaccess (the corpus copy kept in the repository).
    cp "$repo/tests/cases/corpus/wordpress/site/.htaccess" "$docroot/.htaccess"
    mkdir -p "$docroot/wp-content/uploads"
    chown www-data:www-data "$docroot/wp-content/uploads"
    chmod -R u=rwX,go=rX "$docroot"
    ;;
db-init)
    datadir=${1:?DATADIR}
    rm -rf "$datadir"
    mkdir -p "$datadir"
    mariadb-install-db --no-defaults --datadir="$datadir" --user="$(id -un)" \
        --auth-root-authentication-method=normal --skip-test-db >"$datadir.init.log" 2>&1 ||
        { cat "$datadir.init.log" >&2; die "mariadb-install-db failed"; }
    ;;
db-run)
    datadir=${1:?DATADIR}
    sock=${2:?SOCKET}
    exec mariadbd --no-defaults --datadir="$datadir" --socket="$sock" --skip-networking \
        --user="$(id -un)" --pid-file="$datadir/mariadbd.pid" --log-error="$datadir/error.log" \
        --skip-log-bin --innodb-buffer-pool-size=64M --max-connections=200
    ;;
db-wait)
    sock=${1:?SOCKET}
    for _ in $(seq 1 200); do
        client "$sock" -e 'SELECT 1' >/dev/null 2>&1 && exit 0
        sleep 0.05
    done
    die "MariaDB at $sock does not answer"
    ;;
config)
    docroot=${1:?DOCROOT}
    db=${2:?DB}
    sock=${3:?SOCKET}
    # Fixed keys and salts: two copies of one site must make the same
    # nonces and cookies.
    cat >"$docroot/wp-config.php" <<EOF
<?php
// Written by scripts/wordpress.sh: a private test and benchmark site.
define('DB_NAME', '$db');
define('DB_USER', '$DB_USER');
define('DB_PASSWORD', '$DB_PASS');
define('DB_HOST', 'localhost:$sock');
define('DB_CHARSET', 'utf8mb4');
define('DB_COLLATE', '');
define('AUTH_KEY', 'htaccel-auth-key');
define('SECURE_AUTH_KEY', 'htaccel-secure-auth-key');
define('LOGGED_IN_KEY', 'htaccel-logged-in-key');
define('NONCE_KEY', 'htaccel-nonce-key');
define('AUTH_SALT', 'htaccel-auth-salt');
define('SECURE_AUTH_SALT', 'htaccel-secure-auth-salt');
define('LOGGED_IN_SALT', 'htaccel-logged-in-salt');
define('NONCE_SALT', 'htaccel-nonce-salt');
\$table_prefix = 'wp_';
// Application passwords over plain HTTP.
define('WP_ENVIRONMENT_TYPE', 'local');
// No loopback requests (cron, update checks) and no calls out.
define('DISABLE_WP_CRON', true);
define('AUTOMATIC_UPDATER_DISABLED', true);
define('WP_HTTP_BLOCK_EXTERNAL', true);
define('WP_DEBUG', false);
if (!defined('ABSPATH')) {
    define('ABSPATH', __DIR__ . '/');
}
require_once ABSPATH . 'wp-settings.php';
EOF
    chmod 644 "$docroot/wp-config.php"
    ;;
install)
    docroot=${1:?DOCROOT}
    conf="$docroot/wp-config.php"
    db=$(sed -n "s/^define('DB_NAME', '\(.*\)');/\1/p" "$conf")
    sock=$(sed -n "s/^define('DB_HOST', 'localhost:\(.*\)');/\1/p" "$conf")
    client "$sock" -e "CREATE DATABASE IF NOT EXISTS \`$db\`;
        CREATE USER IF NOT EXISTS '$DB_USER'@'localhost' IDENTIFIED BY '$DB_PASS';
        GRANT ALL ON *.* TO '$DB_USER'@'localhost';"
    php -d display_errors=stderr "$here/wordpress-install.php" "$docroot"
    ;;
clone)
    sock=${1:?SOCKET}
    from=${2:?FROM}
    to=${3:?TO}
    client "$sock" -e "DROP DATABASE IF EXISTS \`$to\`; CREATE DATABASE \`$to\`;"
    mariadb-dump --no-defaults --socket="$sock" -u root "$from" | client "$sock" "$to"
    ;;
fpm-args)
    # php-fpm -n reads no php.ini and no conf.d: name every extension.
    extdir=$(php -n -r 'echo ini_get("extension_dir");')
    for ext in mysqlnd mysqli ctype fileinfo exif iconv tokenizer gd; do
        if [ -e "$extdir/$ext.so" ]; then printf -- '-d\nextension=%s\n' "$ext"; fi
    done
    printf -- '-d\nzend_extension=opcache\n-d\nopcache.enable=1\n'
    printf -- '-d\nmemory_limit=256M\n'
    ;;
*)
    sed -n '2,/^set -e/p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
