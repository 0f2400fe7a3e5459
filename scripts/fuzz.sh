#!/usr/bin/env bash
# Runs every cargo-fuzz target for a bounded time: `scripts/fuzz.sh [SECONDS]`
# (default 30 per target; scripts/test.sh runs it so in CI, and a longer
# campaign is `scripts/fuzz.sh 3600`). Installs cargo-fuzz from crates.io
# when it is missing. Uses the nightly toolchain when rustup has one, else
# the stable compiler with its unstable flags unlocked (RUSTC_BOOTSTRAP),
# without a sanitizer (the targets check their own invariants; Rust code
# has no memory errors for ASan to find outside `unsafe`).
#
# Each target starts from the committed seeds (fuzz/seeds/TARGET) plus what
# earlier local runs found (fuzz/corpus/TARGET, not committed). A crash or a
# time-out fails the run and leaves the input in fuzz/artifacts/TARGET.
# What each target did is written to target/security/fuzz.json for
# docs/security.md (scripts/security_report.py).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-30}"
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "== installing cargo-fuzz"
    cargo install cargo-fuzz --locked --quiet
fi
toolchain=()
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    toolchain=(+nightly)
else
    export RUSTC_BOOTSTRAP=1
fi

mkdir -p target/security
report=target/security/fuzz.json
targets=$(sed -n 's/^name = "\(.*\)"$/\1/p' fuzz/Cargo.toml | grep -v '^htaccel-fuzz$')
echo "== fuzzing ${targets//$'\n'/ } for ${seconds}s each"
(cd fuzz && cargo "${toolchain[@]}" fuzz build --sanitizer none -O >/dev/null)

passed=0
failed=0
entries=()
for t in $targets; do
    mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
    log=$(mktemp)
    set +e
    (cd fuzz && cargo "${toolchain[@]}" fuzz run --sanitizer none -O "$t" "corpus/$t" "seeds/$t" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1) >"$log" 2>&1
    status=$?
    set -e
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    corpus=$(ls "fuzz/corpus/$t" | wc -l)
    if [ "$status" -eq 0 ]; then
        passed=$((passed + 1))
        verdict=ok
    else
        failed=$((failed + 1))
        verdict=FAILED
        tail -40 "$log"
    fi
    echo "$verdict fuzz/$t: ${runs:-0} inputs in ${seconds}s, corpus $corpus"
    entries+=("{\"target\": \"$t\", \"seconds\": $seconds, \"runs\": ${runs:-0}, \"corpus\": $corpus, \"crashed\": $([ "$verdict" = ok ] && echo false || echo true)}")
    rm -f "$log"
done
{
    echo "["
    for i in "${!entries[@]}"; do
        sep=","
        [ "$i" -eq $((${#entries[@]} - 1)) ] && sep=""
        echo "  ${entries[$i]}$sep"
    done
    echo "]"
} >"$report"
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
