#!/bin/bash
# mod_md against Let's Encrypt's test CA, pebble, all on the loopback:
# pebble-challtestsrv answers pebble's DNS queries (every name is
# 127.0.0.1, except fail.test, which points where nothing listens), and
# htaccel obtains certificates for example.test by http-01 and for
# alpn.test by tls-alpn-01 (its virtual host allows acme-tls/1; noalpn.test's
# does not, so that one is never tried), serves its temporary certificate meanwhile,
# renews them when the renew window opens (pebble issues 60-second
# certificates here), and retries the order for fail.test, which cannot
# succeed, with back-off, logging each failure.
#
# Needs pebble and pebble-challtestsrv (go install
# github.com/letsencrypt/pebble/v2/cmd/pebble@latest and …/pebble-challtestsrv@latest)
# in PATH or ~/go/bin, curl and openssl. Usage: tests/md/run.sh [htaccel binary]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${1:-$root/target/debug/htaccel}
PATH=$PATH:${GOPATH:-$HOME/go}/bin
for tool in pebble pebble-challtestsrv curl openssl; do
    command -v $tool >/dev/null || { echo "md: $tool not found" >&2; exit 2; }
done
pebble_dir=$(ls -d "${GOPATH:-$HOME/go}"/pkg/mod/github.com/letsencrypt/pebble/v2@*/test 2>/dev/null | tail -1)
[ -n "$pebble_dir" ] || { echo "md: pebble's test directory (its certificates) not found" >&2; exit 2; }

work=$(mktemp -d /var/tmp/htaccel-md.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

# Ports: pebble's ACME and management, the DNS server, htaccel's two.
base=$((12000 + RANDOM % 18000))  # below the ephemeral range
acme=$base; mgmt=$((base + 1)); dns=$((base + 2)); chall=$((base + 3))
http=$((base + 4)); https=$((base + 5))

cat > "$work/pebble.json" <<JSON
{ "pebble": {
    "listenAddress": "127.0.0.1:$acme",
    "managementListenAddress": "127.0.0.1:$mgmt",
    "certificate": "$pebble_dir/certs/localhost/cert.pem",
    "privateKey": "$pebble_dir/certs/localhost/key.pem",
    "httpPort": $http, "tlsPort": $https,
    "ocspResponderURL": "", "externalAccountBindingRequired": false,
    "retryAfter": { "authz": 1, "order": 1 },
    "keyAlgorithm": "ecdsa",
    "profiles": { "default": { "description": "short-lived", "validityPeriod": 60 } }
} }
JSON
pebble-challtestsrv -dnsserver 127.0.0.1:$dns -management 127.0.0.1:$chall \
    -http01 "" -https01 "" -tlsalpn01 "" -doh "" -defaultIPv6 "" \
    > "$work/challtestsrv.log" 2>&1 &
pids+=($!)
PEBBLE_VA_NOSLEEP=1 PEBBLE_VA_ALWAYS_VALID=0 PEBBLE_WFE_NONCEREJECT=0 \
    pebble -config "$work/pebble.json" -dnsserver 127.0.0.1:$dns > "$work/pebble.log" 2>&1 &
pids+=($!)
minica=$pebble_dir/certs/pebble.minica.pem
for _ in $(seq 50); do
    curl -s -o /dev/null --cacert "$minica" https://127.0.0.1:$acme/dir \
        && curl -s -o /dev/null --cacert "$minica" https://127.0.0.1:$mgmt/roots/0 \
        && curl -s -o /dev/null http://127.0.0.1:$chall/ && break
    sleep 0.2
done
if ! kill -0 "${pids[1]}" 2>/dev/null || ! kill -0 "${pids[0]}" 2>/dev/null; then
    echo "md: pebble did not start:"; cat "$work/pebble.log" "$work/challtestsrv.log"; exit 1
fi
# fail.test: an address where nothing answers pebble's validation.
curl -s -d '{"host":"fail.test.","addresses":["127.0.0.2"]}' http://127.0.0.1:$chall/add-a >/dev/null
curl -s -d '{"host":"files.test.","addresses":["127.0.0.2"]}' http://127.0.0.1:$chall/add-a >/dev/null

# htaccel runs as www-data, as a Debian server does: the certificate
# manager writes the store after privileges are dropped.
chmod 755 "$work"
cp "$minica" "$work/pebble-minica.pem"
# files.test has a certificate file of its own, served while mod_md has none.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj /CN=files.test -keyout "$work/files.key" -out "$work/files.crt" 2>/dev/null
mkdir -p "$work/docroot" "$work/logs" "$work/events"
chmod 777 "$work/events"
printf '#!/bin/sh\necho "$*" >> %s/events/%s\n' "$work" notify > "$work/notify.sh"
printf '#!/bin/sh\necho "$*" >> %s/events/%s\n' "$work" message > "$work/message.sh"
chmod 755 "$work/notify.sh" "$work/message.sh"
echo "managed" > "$work/docroot/index.html"
printf 'Require all denied\n<Files open.html>\n    Require all granted\n</Files>\n' > "$work/docroot/.htaccess"
echo "open" > "$work/docroot/open.html"
cat > "$work/httpd.conf" <<CONF
ServerRoot $work
PidFile $work/logs/httpd.pid
ErrorLog $work/logs/error.log
LogLevel warn md:notice
LoadModule ssl_module /usr/lib/apache2/modules/mod_ssl.so
LoadModule md_module /usr/lib/apache2/modules/mod_md.so
Listen 127.0.0.1:$http
Listen 127.0.0.1:$https https
ServerName localhost
User www-data
Group www-data
LoadModule mime_module /usr/lib/apache2/modules/mod_mime.so
LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
TypesConfig /etc/mime.types
DocumentRoot $work/docroot
<Directory $work/docroot>
    AllowOverride All
</Directory>
MDCertificateAuthority https://127.0.0.1:$acme/dir
MDCACertificateFile $work/pebble-minica.pem
MDCertificateAgreement accepted
MDContactEmail admin@example.test
MDStoreDir md
MDPortMap http:$http https:$https
MDRetryDelay 1s
MDNotifyCmd $work/notify.sh
MDMessageCmd $work/message.sh
MDRenewWindow 75%
MDCheckInterval 1s
MDServerStatus on
LoadModule status_module /usr/lib/apache2/modules/mod_status.so
MDPrivateKeys secp256r1
MDomain example.test
MDomain fail.test
MDomain files.test
<MDomain alpn.test>
    MDCAChallenges tls-alpn-01
    MDRequireHttps permanent
</MDomain>
<MDomain noalpn.test>
    MDCAChallenges tls-alpn-01
</MDomain>
<VirtualHost 127.0.0.1:$https>
    ServerName example.test
    SSLEngine on
</VirtualHost>
<VirtualHost 127.0.0.1:$https>
    ServerName alpn.test
    SSLEngine on
    Protocols h2 http/1.1 acme-tls/1
</VirtualHost>
<VirtualHost 127.0.0.1:$https>
    ServerName noalpn.test
    SSLEngine on
</VirtualHost>
<VirtualHost 127.0.0.1:$https>
    ServerName fail.test
    SSLEngine on
</VirtualHost>
<VirtualHost 127.0.0.1:$https>
    ServerName files.test
    SSLEngine on
    SSLCertificateFile $work/files.crt
    SSLCertificateKeyFile $work/files.key
</VirtualHost>
<VirtualHost 127.0.0.1:$http>
    ServerName example.test
    <Location /md-status>
        SetHandler md-status
        Require all granted
    </Location>
    <Location /server-status>
        SetHandler server-status
        Require all granted
    </Location>
</VirtualHost>
<VirtualHost 127.0.0.1:$http>
    ServerName fail.test
</VirtualHost>
<VirtualHost 127.0.0.1:$http>
    ServerName alpn.test
</VirtualHost>
CONF
"$bin" -f "$work/httpd.conf" -DFOREGROUND > "$work/htaccel.out" 2>&1 &
pids+=($!)

fails=0
passes=0
check() { # name condition
    if eval "$2"; then echo "ok   $1"; passes=$((passes + 1)); else echo "FAIL $1"; fails=$((fails + 1)); fi
}
# The certificate a TLS client is sent for NAME: subject, issuer, serial.
served() {
    openssl s_client -connect 127.0.0.1:$https -servername "$1" </dev/null 2>/dev/null \
        | openssl x509 -noout -subject -issuer -serial 2>/dev/null
}
for _ in $(seq 50); do
    curl -s -o /dev/null -k --resolve example.test:$https:127.0.0.1 https://example.test:$https/ && break
    sleep 0.2
done
if ! kill -0 "${pids[2]}" 2>/dev/null; then
    echo "md: htaccel did not start:"; cat "$work/htaccel.out"; exit 1
fi

# Until the CA's arrives, the temporary certificate.
first=$(served fail.test)
check "a domain without a certificate starts with the temporary one" \
    '[[ "$first" == *"Temporary Certificate"* ]]'

# The real certificate, obtained by http-01, then served.
got=""
for _ in $(seq 100); do
    s=$(served example.test)
    if [[ "$s" == *"Pebble Intermediate"* ]]; then got=$s; break; fi
    sleep 0.2
done
check "example.test gets pebble's certificate by http-01" '[ -n "$got" ]'
curl -s --cacert "$minica" https://127.0.0.1:$mgmt/roots/0 > "$work/root.pem"
body=$(curl -s --cacert "$work/root.pem" --resolve example.test:$https:127.0.0.1 https://example.test:$https/index.html)
check "a client trusting pebble's root verifies it (and the site answers)" \
    '[ "$(curl -s -o /dev/null -w "%{ssl_verify_result} %{http_code}" --cacert "$work/root.pem" --resolve example.test:$https:127.0.0.1 https://example.test:$https/)" = "0 403" ]'
check "the .htaccess denying everything did not hide the challenge (a 403 page now)" \
    '[[ "$body" == *Forbidden* ]]'
check "the store holds pubcert.secp256r1.pem and privkey.secp256r1.pem, mod_md's names for MDPrivateKeys secp256r1 (mode 0600, written as www-data)" \
    '[ -s "$work/md/domains/example.test/pubcert.secp256r1.pem" ] && [ "$(stat -c "%a %U" "$work/md/domains/example.test/privkey.secp256r1.pem")" = "600 www-data" ]'

# tls-alpn-01 for alpn.test.
alpn=""
for _ in $(seq 100); do
    s=$(served alpn.test)
    if [[ "$s" == *"Pebble Intermediate"* ]]; then alpn=$s; break; fi
    sleep 0.2
done
check "alpn.test gets pebble's certificate by tls-alpn-01" '[ -n "$alpn" ]'
check "alpn.test's MDRequireHttps permanent sends Strict-Transport-Security over HTTPS" \
    '[[ "$(curl -s -o /dev/null -D - --cacert "$work/root.pem" --resolve alpn.test:$https:127.0.0.1 https://alpn.test:$https/open.html)" == *"Strict-Transport-Security: max-age=15768000"* ]]'
check "noalpn.test, whose virtual host lacks Protocols acme-tls/1, is not tried by tls-alpn-01 (as mod_md)" \
    'grep -q "processing noalpn.test: none of the challenge types offered for noalpn.test can be used" "$work/logs/error.log" && [[ "$(served noalpn.test)" == *"Temporary Certificate"* ]]'

# Renewal: 60-second certificates, renewed in their last 75%.
serial1=$(grep serial <<<"$got")
renewed=""
for _ in $(seq 150); do
    s=$(served example.test)
    if [[ "$s" == *"Pebble Intermediate"* && "$(grep serial <<<"$s")" != "$serial1" ]]; then renewed=$s; break; fi
    sleep 0.2
done
check "the certificate is renewed inside its window, without restart" '[ -n "$renewed" ]'

# The failing order: retried with back-off, logged, the temporary
# certificate still served.
check "fail.test's failures are in the error log" \
    '[ "$(grep -c "AH10056: processing fail.test" "$work/logs/error.log")" -ge 2 ]'
check "the retries back off (1s, 2s, 4s...)" \
    'grep -q "attempt 1 failed, next attempt in 1.000s" "$work/logs/error.log" && grep -q "attempt 2 failed, next attempt in 2.000s" "$work/logs/error.log"'
redirect=$(curl -s -o /dev/null -w "%{http_code} %{redirect_url}" --resolve alpn.test:$http:127.0.0.1 "http://alpn.test:$http/a?b=1")
check "MDRequireHttps permanent redirects plain HTTP (301 to https://alpn.test/a?b=1)" \
    '[ "$redirect" = "301 https://alpn.test/a?b=1" ]'
status=$(curl -s --resolve example.test:$http:127.0.0.1 http://example.test:$http/md-status)
# RFC 9773's identifier holds the serial's DER bytes: a leading zero when
# the first byte's high bit is set (the hex serial shows none).
check "md-status shows example.test's certificate (issuer, RFC 9773 identifier) and fail.test's failing renewal" \
    'python3 -c "import json,sys; d={m[\"name\"]: m for m in json.loads(sys.argv[1])[\"managed-domains\"]}; e=d[\"example.test\"]; f=d[\"fail.test\"]; assert e[\"state\"]==2 and e[\"cert\"][\"secp256r1\"][\"serial\"] and e[\"cert\"][\"secp256r1\"][\"issuer-name\"].startswith(\"/CN=Pebble Intermediate CA \") and e[\"cert\"][\"secp256r1\"][\"ari-cert-id\"].split(\".\")[1]==__import__(\"base64\").urlsafe_b64encode((lambda b: b\"\\0\"*(b[0]>>7)+b)(bytes.fromhex(e[\"cert\"][\"secp256r1\"][\"serial\"].rjust(2*((len(e[\"cert\"][\"secp256r1\"][\"serial\"])+1)//2),\"0\")))).decode().rstrip(\"=\") and f[\"state\"]==1 and \"connection refused\" in f[\"renewal\"][\"last\"][\"detail\"], (e, f)" "$status"'
[[ "$status" == *managed-domains* ]] || echo "md-status answered: $status"
check "MDNotifyCmd ran after example.test's renewals; MDMessageCmd said renewed and errored" \
    'grep -qx "example.test" "$work/events/notify" && grep -qx "renewed example.test" "$work/events/message" && grep -qx "errored fail.test" "$work/events/message"'
# The certificate's public state, on each managed name, before any
# access check: its serial and fingerprint are the served certificate's.
current=$(served example.test)
fingerprint=$(openssl s_client -connect 127.0.0.1:$https -servername example.test </dev/null 2>/dev/null \
    | openssl x509 -noout -fingerprint -sha256 | sed 's/.*=//; s/://g' | tr A-F a-f)
certstatus=$(curl -s -k --resolve example.test:$https:127.0.0.1 https://example.test:$https/.httpd/certificate-status)
check "/.httpd/certificate-status names the served certificate (serial, SHA-256 fingerprint, validity)" \
    'python3 -c "import json,sys; j=json.loads(sys.argv[1]); c=j[\"secp256r1\"]; assert c[\"serial\"]==sys.argv[2] and c[\"sha256-fingerprint\"]==sys.argv[3] and \"until\" in j[\"valid\"], j" "$certstatus" "$(grep serial <<<"$current" | sed s/serial=//)" "$fingerprint"'
[ -n "$certstatus" ] || echo "certificate-status answered nothing"
auto=$(curl -s --resolve example.test:$http:127.0.0.1 "http://example.test:$http/server-status?auto")
check "server-status?auto counts the domains and shows example.test good, with its fingerprint link" \
    '[[ "$auto" == *"ManagedCertificatesTotal: 5"* && "$auto" == *"Domain: example.test"* ]] && grep -q "^ManagedDomain\[[0-9]\]Status: good$" <<<"$auto" && grep -q "CheckAtFingerprint: $fingerprint" <<<"$auto"'
check "server-status?auto shows fail.test's renewal failing: its status, detail and next run" \
    'grep -q "^ManagedDomain\[[0-9]\]ActivityLastStatus: " <<<"$auto" && grep -q "ActivityLastDetail: " <<<"$auto" && grep -q "ActivityFinished: no" <<<"$auto" && grep -q "ActivityNextRun: " <<<"$auto"'
html=$(curl -s --resolve example.test:$http:127.0.0.1 "http://example.test:$http/server-status")
check "the HTML page has the Managed Certificates table" \
    '[[ "$html" == *"<h3>Managed Certificates</h3>"* && "$html" == *"<td>example.test</td>"* && "$html" == *"crt.sh[secp256r1]"* ]]'
files=$(served files.test)
check "files.test, managed but with a certificate file, serves the file's while mod_md has none" \
    '[[ "$files" == *"subject=CN = files.test"* ]]'
last=$(served fail.test)
check "fail.test still gets the temporary certificate" '[[ "$last" == *"Temporary Certificate"* ]]'

if [ $fails -ne 0 ]; then
    echo "--- server-status?auto"; grep Managed <<<"$auto"
    echo "--- error.log"; cat "$work/logs/error.log"
    echo "--- htaccel"; cat "$work/htaccel.out"
    echo "--- pebble"; tail -30 "$work/pebble.log"
fi
echo "md: $passes passed, $fails failed"
[ $fails -eq 0 ]
