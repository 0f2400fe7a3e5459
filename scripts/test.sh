#!/usr/bin/env bash
# The project's one test command, as CI runs it: formatting, lints, unit and
# integration tests, and the differential suite against real Apache.
#
# Installs what the tests need when it is missing (Debian packages: apache2 is
# the oracle of the differential tests, apache2-utils and curl help to write
# cases; strace checks that steady-state requests touch no access file). Needs
# root for that, and for the differential tests themselves
# (Apache switches to www-data; cases chown files).
set -euo pipefail

cd "$(dirname "$0")/.."

missing=()
command -v apache2 >/dev/null 2>&1 || [ -x /usr/sbin/apache2 ] || missing+=(apache2)
command -v htpasswd >/dev/null 2>&1 || missing+=(apache2-utils)
command -v curl >/dev/null 2>&1 || missing+=(curl)
# strace: the steady-state test proves no access file is touched per request.
command -v strace >/dev/null 2>&1 || missing+=(strace)
# php-fpm: the PHP differential cases run a private pool (never the service).
ls /usr/sbin/php-fpm* >/dev/null 2>&1 || command -v php-fpm >/dev/null 2>&1 || missing+=(php-fpm)
# mod_php: Apache runs PHP in process in the cases that need mod_php (htaccel
# runs the same scripts on PHP-FPM).
ls /usr/lib/apache2/modules/libphp*.so >/dev/null 2>&1 || missing+=(libapache2-mod-php)
# mod_xsendfile: the oracle for X-Sendfile from PHP.
[ -e /usr/lib/apache2/modules/mod_xsendfile.so ] || missing+=(libapache2-mod-xsendfile)
# Flask under gunicorn: the application behind the flask/ proxy cases.
/usr/bin/python3 -c 'import flask' >/dev/null 2>&1 || missing+=(python3-flask)
/usr/bin/python3 -c 'import gunicorn' >/dev/null 2>&1 || missing+=(python3-gunicorn)
# The official Prometheus client's parser reads htaccel's metrics page
# (crates/htaccel/tests/status_pages.rs).
/usr/bin/python3 -c 'import prometheus_client' >/dev/null 2>&1 || missing+=(python3-prometheus-client)
# WordPress with a private MariaDB: the wordpress/ cases (scripts/wordpress.sh).
[ -f /usr/share/wordpress/wp-settings.php ] || missing+=(wordpress)
[ -d /usr/share/wordpress/wp-content/themes/twentytwentythree ] || missing+=(wordpress-theme-twentytwentythree)
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || missing+=(mariadb-server)
ls /usr/lib/php/*/mysqli.so >/dev/null 2>&1 || missing+=(php8.2-mysql)
# HTTPS cases: openssl makes their certificates; ssl-cert is Debian's
# snakeoil certificate that default-ssl.conf names (https/debian-default-ssl).
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
[ -f /etc/ssl/certs/ssl-cert-snakeoil.pem ] || missing+=(ssl-cert)
# HAProxy: the load balancer in front of two htaccel instances speaking the
# PROXY protocol (crates/htaccel/tests/proxy_protocol_fleet.rs).
command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || missing+=(haproxy)
# testssl.sh: htaccel's TLS against Apache's on the same configuration
# (tests/security/testssl.py).
command -v testssl >/dev/null 2>&1 || missing+=(testssl.sh)
# The system zlib (mod_deflate's bytes come from the same library Apache
# links) and libcrypt (htpasswd crypt hashes), found through pkg-config.
dpkg -s zlib1g-dev >/dev/null 2>&1 || missing+=(zlib1g-dev)
dpkg -s libcrypt-dev >/dev/null 2>&1 || missing+=(libcrypt-dev)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
# The Debian package's build and checks (scripts/package_check.sh).
command -v lintian >/dev/null 2>&1 || missing+=(lintian)
command -v help2man >/dev/null 2>&1 || missing+=(help2man)
command -v dpkg-shlibdeps >/dev/null 2>&1 || missing+=(dpkg-dev)
command -v objcopy >/dev/null 2>&1 || missing+=(binutils)
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)
# h2load: HTTP/2 load for bench/ (nghttp2-client).
command -v h2load >/dev/null 2>&1 || missing+=(nghttp2-client)
if [ "${#missing[@]}" -gt 0 ]; then
    echo "== installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # Keep the package from starting a system Apache on port 80.
    added_policy=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
        chmod 755 /usr/sbin/policy-rc.d
        added_policy=1
    fi
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
    if [ -n "$added_policy" ]; then
        rm -f /usr/sbin/policy-rc.d
    fi
fi

# h2spec: HTTP/2 conformance (tests/security/h2spec.py), built with Go.
H2SPEC="$(command -v h2spec || echo "${GOPATH:-$HOME/go}/bin/h2spec")"
if [ ! -x "$H2SPEC" ]; then
    echo "== installing h2spec (go install)"
    command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ] || {
        echo "h2spec needs Go (https://go.dev/dl/ or Debian's golang-go)" >&2; exit 1; }
    "$(command -v go || echo /usr/local/go/bin/go)" install github.com/summerwind/h2spec/cmd/h2spec@latest
fi
export H2SPEC

# pebble, Let's Encrypt's test CA, and its DNS server: mod_md's
# certificates are obtained from it (tests/md/run.sh). A Go module.
export PATH="$PATH:${GOPATH:-$HOME/go}/bin"
if ! command -v pebble >/dev/null 2>&1 || ! command -v pebble-challtestsrv >/dev/null 2>&1; then
    echo "== installing pebble and pebble-challtestsrv (go install)"
    go="$(command -v go || echo /usr/local/go/bin/go)"
    "$go" install github.com/letsencrypt/pebble/v2/cmd/pebble@v2.10.3
    "$go" install github.com/letsencrypt/pebble/v2/cmd/pebble-challtestsrv@v2.10.3
fi

echo "== cargo fmt --check"
cargo fmt --all --check

echo "== cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings

echo "== module boundary (nothing new outside modules/ names a module)"
python3 scripts/module_boundary.py

echo "== cargo build -p htaccel (the differential suite runs this binary)"
cargo build -p htaccel
# (difftest also finds it beside itself; this only makes the choice explicit)
if [ -x "${CARGO_TARGET_DIR:-$PWD/target}/debug/htaccel" ]; then
    export HTACCEL_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/htaccel"
fi

echo "== cargo test (unit, integration, differential against Apache)"
# The differential run also rewrites docs/compatibility.md from the corpus/
# cases it compared (a changed table is reported by git, never a failure).
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
# Every GET and HEAD goes to htaccel five times, each answer compared with
# Apache's: with two worker threads, one of them sees it at least three
# times, so answers kept by the answer memo are checked too. The corpus/,
# apps/ and protocol/ cases (and a few others) then run once more over HTTP/2 (tests/difftest/tests/
# differential_http2.rs; DIFFTEST_HTTP2_ARGS changes the selection), and the
# h2c/ cases and a few static/ and methods/ ones as curl --http2 sends them in clear text,
# Upgrade: h2c (differential_h2c_upgrade.rs, DIFFTEST_H2C_ARGS; ~20 s).
DIFFTEST_ARGS="${DIFFTEST_ARGS:-} --repeat 5 --compat-report docs/compatibility.md --summary-json target/security/difftest.json" cargo test --workspace --no-fail-fast 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

# The rest of the security suite, bounded (scripts/security.sh --full runs
# the whole campaign): hostile access files, clients and faults, with
# Apache's figures beside htaccel's; h2spec and the HTTP/2 attacks
# (under a minute); testssl.sh's findings for htaccel and
# Apache on the same TLS configuration; every fuzz target for 30 s; then
# docs/security.md from what this run measured.
echo "== security: hostile access files, clients, faults"
python3 tests/security/hostile.py 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
echo "== security: HTTP/2 conformance (h2spec) and denial-of-service patterns"
python3 tests/security/h2spec.py 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
python3 tests/security/h2attacks.py 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
echo "== security: testssl.sh, htaccel against Apache on the same TLS configuration"
python3 tests/security/testssl.py 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
echo "== security: fuzzing"
bash scripts/fuzz.sh 30 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
python3 scripts/security_report.py
echo "== mod_md: certificates from pebble (http-01, tls-alpn-01, renewal, back-off)"
bash tests/md/run.sh 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
echo "== the Debian package: build, lintian, systemd-analyze"
bash scripts/package_check.sh 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
set -e

# One closing line for the whole run: the unit and integration tests of
# every test binary, plus each differential case compared with Apache.
awk '/^test result:/ { for (i = 1; i < NF; i++) { if ($(i+1) ~ /^passed;?$/) p += $i; if ($(i+1) ~ /^failed;?$/) f += $i } }
     /^([a-z0-9]+: )?[0-9]+ passed, [0-9]+ failed$/ { n = ($1 ~ /:$/); p += $(1 + n); f += $(3 + n) }
     END { printf "tests: %d passed, %d failed\n", p, f }' "$log"
exit "$status"
