#!/usr/bin/env bash
# The security suite on its own: `scripts/security.sh` runs it in the
# bounded form CI runs (scripts/test.sh includes it), `--full` runs the
# whole campaign:
#
#   part                                 bounded (CI)       --full
#   hostile paths (security/hostile-paths)   50,000 requests   1,000,000
#   smuggling probes (security/smuggling), every case of security/ and protocol/
#   hostile access files, clients, faults,  200 slow clients, 1,000, 10 s
#   TLS handshake stalls and floods         300 stalls, 3 s    flood
#   h2spec, HTTP/2 attacks (h2attacks.py)  1.5 s an attack    the same
#   testssl.sh against htaccel and Apache   2 configurations  the same
#   fuzzing (scripts/fuzz.sh)                30 s a target     600 s
#
# then writes docs/security.md from what was measured
# (scripts/security_report.py). Needs what scripts/test.sh installs.
set -euo pipefail
cd "$(dirname "$0")/.."

full=""
scale=1
fuzz_seconds=30
if [ "${1:-}" = "--full" ]; then
    full="--full"
    scale=20
    fuzz_seconds=600
fi
cargo build -q -p htaccel -p difftest
export HTACCEL_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/htaccel"
status=0
DIFFTEST_SCALE=$scale cargo run -q -p difftest -- --time-limit 20000 \
    --summary-json target/security/difftest.json security/ protocol/ || status=1
python3 tests/security/hostile.py $full || status=1
python3 tests/security/h2spec.py || status=1
python3 tests/security/h2attacks.py || status=1
python3 tests/security/testssl.py || status=1
bash scripts/fuzz.sh "$fuzz_seconds" || status=1
python3 scripts/security_report.py
exit $status
