#!/usr/bin/env bash
# Builds the Debian packages (scripts/package.sh) and checks them as CI
# does: lintian without errors or warnings, the systemd unit verified and
# its exposure scored by systemd-analyze, the package's contents (the
# binary stripped, its debug information in the dbgsym package under the
# binary's build ID, the man page), and that the packaged binary runs.
# Closing line: `package: N passed, M failed`.
set -uo pipefail
cd "$(dirname "$0")/.."

passed=0
failed=0
check() {
    local what="$1"
    shift
    if "$@"; then
        passed=$((passed + 1))
        echo "ok     package: $what"
    else
        failed=$((failed + 1))
        echo "FAIL   package: $what"
    fi
}

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if ! bash scripts/package.sh "$out"; then
    echo "package: 0 passed, 1 failed"
    exit 1
fi
deb=$(ls "$out"/htaccel_*.deb)
dbg=$(ls "$out"/htaccel-dbgsym_*.deb)
x="$out/x"
dpkg-deb -x "$deb" "$x"
dpkg-deb -x "$dbg" "$x"

check "lintian finds no error or warning" \
    lintian --fail-on error,warning --allow-root "$deb" "$dbg"
check "systemd-analyze verify accepts the unit" \
    systemd-analyze verify --man=no "$x/usr/lib/systemd/system/htaccel.service"
exposure() {
    local score
    score=$(systemd-analyze security --offline=yes "$x/usr/lib/systemd/system/htaccel.service" 2>/dev/null |
        sed -n 's/.*Overall exposure level for htaccel.service: \([0-9.]*\).*/\1/p')
    echo "  systemd-analyze security: exposure $score (0 best, 10 worst)"
    awk -v s="$score" 'BEGIN { exit !(s != "" && s + 0 <= 3.0) }'
}
check "the unit's exposure is at most 3.0" exposure
check "the binary carries no debug information" \
    sh -c "! readelf -S '$x/usr/sbin/htaccel' | grep -q '\.debug_info'"
build_id=$(readelf -n "$x/usr/sbin/htaccel" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
check "the dbgsym package holds the debug information by build ID" \
    sh -c "readelf -S '$x/usr/lib/debug/.build-id/${build_id:0:2}/${build_id:2}.debug' | grep -q '\.debug_info'"
check "the man page is there and names the commands" \
    sh -c "zcat '$x/usr/share/man/man8/htaccel.8.gz' | grep -q 'configtest'"
check "the packaged binary accepts the packaged /etc/htaccel/htaccel.conf" \
    sh -c "'$x/usr/sbin/htaccel' -t -f '$x/etc/htaccel/htaccel.conf' 2>&1 | grep -q '^Syntax OK'"
echo "  binary: $(stat -c %s "$x/usr/sbin/htaccel") bytes; package: $(stat -c %s "$deb") bytes"
echo "package: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
