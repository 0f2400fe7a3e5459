#!/usr/bin/env bash
# The benchmark suite in one command: install what is missing, build htaccel
# (release), run every scenario, write bench/results/<timestamp>/ (and
# bench/results/h2/<timestamp>.json: HTTP/2 over TLS, bench/h2.py) and
# regenerate bench/REPORT.md and the charts from them.
#
#   bench/run.sh                 # full: 3 runs x 5 s per point after a 2 s warm-up
#   BENCH_QUICK=1 bench/run.sh   # quick: 1 run x 2 s per point
#   bench/run.sh --only B/d12    # only the points whose id contains B/d12 (no visibility/memory)
#   bench/run.sh --only flask    # only the Flask group (F: app, X-Sendfile, static at c=2,4,10)
#   bench/run.sh --skip-extra    # no change-visibility and memory runs
#   bench/run.sh --only wp       # only the WordPress group (W: home page and a permalink)
#   bench/run.sh --only realistic  # only group R: realistic traffic (bench/realistic.py),
#                                  # one core (R1), both cores (R2) and instructions
#   bench/run.sh --only both-cores # only group U (every server on both cores, static page)
#                                  # and the one-core points it doubles, into
#                                  # bench/results/both-cores/ (bench.py --both-cores)
#   (group R alone: about 3.5 minutes quick, 11 minutes full, 4.5 of them R2;
#    --only both-cores: 16 points, about 1.5 minutes quick, 5 minutes full on
#    a quiet machine and up to 13 when other work makes every run repeat)
#   bench/run.sh --only netfs    # only group N: docroot on a FUSE mount (bench/netfs.py)
#   (group N alone: about 2 minutes quick, 6 minutes full)
#   bench/run.sh --only growth   # only group G: cost growth with files and vhosts (bench/growth.py)
#   (group G alone: about 2.5 minutes quick; full, with 1,000,000 files, about 7 minutes)
#   bench/run.sh --only seeds    # only group K: the published experiments with
#                                # their own tools, k6 and ab (bench/seeds.py)
#   (group K alone: about 9 minutes quick; full about an hour: 10 k6 runs x
#   30 s for 6 static and 4 WordPress points, 50 min, and ab at the
#   published -n, about 8 min)
#
# "Both cores": the server unpinned with one worker per CPU while wrk stays
# on CPU 1, so the server shares CPU 1 with the load generator (group U, and
# R2 of group R).
#
# Needs root (apt-get, 10,000-descriptor limit for the memory run, servers
# that switch to www-data) and at least 2 CPUs (server on CPU 0, wrk on CPU 1).
set -euo pipefail
cd "$(dirname "$0")/.."

note() { printf '== %s\n' "$*" >&2; }

if [ "$(nproc)" -lt 2 ]; then
    echo "bench/run.sh needs 2 CPUs (server on CPU 0, wrk on CPU 1)" >&2
    exit 1
fi

# Debian packages: the peers that exist in this release, wrk, and what the
# Flask group (F) runs: mod_xsendfile for Apache, Flask under gunicorn.
available() { [ "$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}')" != "" ] &&
              [ "$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}')" != "(none)" ]; }
want=()
# valgrind: goal (a) is also judged by instructions per request (callgrind).
# nghttp2-client: h2load, for HTTP/2 over TLS (bench/h2.py).
# bindfs: a FUSE mount for group N (this kernel may have no NFS client).
# apache2-utils: ab, for group K (bench/seeds.py).
for pkg in apache2 apache2-utils nginx lighttpd h2o caddy wrk nghttp2-client valgrind libapache2-mod-xsendfile python3-flask python3-gunicorn bindfs; do
    if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
        continue
    fi
    if available "$pkg"; then
        want+=("$pkg")
    else
        note "package $pkg has no installation candidate here: skipped (the report lists it as missing)"
    fi
done
if [ "${#want[@]}" -gt 0 ]; then
    note "installing ${want[*]}"
    # The machine may be running someone else's apt-get: wait for the lock.
    # Debian starts a service on install where policy-rc.d allows it; every
    # server here is started by the benchmark on its own port instead.
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
        --no-install-recommends "${want[@]}" >&2
    for svc in apache2 nginx lighttpd h2o caddy; do
        case " ${want[*]} " in *" $svc "*) service "$svc" stop >/dev/null 2>&1 || true ;; esac
    done
fi
command -v wrk >/dev/null || { echo "wrk is required" >&2; exit 1; }
command -v taskset >/dev/null || { echo "taskset (util-linux) is required" >&2; exit 1; }

# The WordPress group (W): Debian's WordPress, MariaDB and PHP-FPM, run
# privately by scripts/wordpress.sh (policy-rc.d keeps the packages from
# starting their services). Without them only group W fails.
wp_want=()
for pkg in php-fpm php8.2-mysql mariadb-server wordpress wordpress-theme-twentytwentythree; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || wp_want+=("$pkg")
done
if [ "${#wp_want[@]}" -gt 0 ]; then
    note "installing ${wp_want[*]}"
    added_policy=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
        chmod 755 /usr/sbin/policy-rc.d
        added_policy=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
        --no-install-recommends "${wp_want[@]}" >&2 ||
        note "installing ${wp_want[*]} failed: group W will fail"
    [ -z "$added_policy" ] || rm -f /usr/sbin/policy-rc.d
fi

# k6 for group K (bench/seeds.py), built as a Go module into $(go env GOPATH)/bin,
# where bench/seeds.py looks for it. Without Go only group K's k6 tables fail.
K6_VERSION=v1.8.1
GO=$(command -v go || echo /usr/local/go/bin/go)
if ! command -v k6 >/dev/null && [ -x "$GO" ]; then
    gobin=$("$GO" env GOPATH)/bin
    if ! "$gobin/k6" version 2>/dev/null | grep -q "k6 $K6_VERSION"; then
        note "installing k6 $K6_VERSION (go install)"
        "$GO" install "go.k6.io/k6@$K6_VERSION" >&2 || note "go install k6 failed: group K's k6 tables will say so"
    fi
    export PATH="$PATH:$gobin"
fi

# Python 3 with matplotlib (charts).
PY=${PYTHON:-python3}
if ! "$PY" -c 'import matplotlib' 2>/dev/null; then
    note "installing matplotlib with pip"
    "$PY" -m pip install -q matplotlib >&2 ||
        { note "pip failed; trying Debian's python3-matplotlib"; apt-get install -y -qq python3-matplotlib >&2; PY=/usr/bin/python3; }
fi

note "building htaccel (release)"
if ! cargo build --release -q -p htaccel; then
    # The workspace may be mid-edit; an existing binary is still worth
    # measuring, and the report says that it may predate the checkout.
    [ -x target/release/htaccel ] || exit 1
    note "build failed: measuring the existing target/release/htaccel"
    export HTACCEL_BUILD_NOTE="build of the checked-out tree failed; binary from $(date -u -r target/release/htaccel '+%Y-%m-%d %H:%M UTC') measured"
fi
# The h2 crate alone, for bench/h2.py --floor.
cargo build --release -q --example h2_floor -p htaccel || note "h2_floor not built: bench/h2.py leaves out its floor"
export HTACCEL_BIN="$PWD/target/release/htaccel"

# Group R: a WordPress-shaped tree of 11,000 files asked for in a Zipf mix
# (bench/realistic.py): every server under wrk replaying the list on one
# core (R1) and on both cores (R2), and user-space instructions per request
# under callgrind.
realistic() {
    note "R: realistic traffic"
    if [ -n "${BENCH_QUICK:-}" ]; then
        (cd bench && "$PY" realistic.py --throughput --both-cores --runs 1 --seconds 3 \
            --instructions --requests 1000 4000) >&2 || note "bench/realistic.py failed"
    else
        (cd bench && "$PY" realistic.py --throughput --both-cores --instructions) >&2 ||
            note "bench/realistic.py failed"
    fi
}
if [ "$*" = "--only realistic" ]; then
    realistic
    "$PY" bench/realistic_report.py
    exit 0
fi
# Group U alone, beside the newest full run: bench/report.py takes group U
# from the newest of that run and bench/results/both-cores/.
if [ "$*" = "--only both-cores" ]; then
    "$PY" bench/bench.py --both-cores >/dev/null
    "$PY" bench/report.py
    exit 0
fi

# Group N: the docroot on a FUSE mount (bindfs), which htaccel cannot watch:
# throughput against Apache, and change-to-visible latency across two
# instances sharing the mount (bench/netfs.py).
netfs() {
    note "N: docroot on a FUSE mount"
    if [ -n "${BENCH_QUICK:-}" ]; then
        (cd bench && "$PY" netfs.py --runs 1 --seconds 3 --writes 12) >&2 || note "bench/netfs.py failed"
    else
        (cd bench && "$PY" netfs.py) >&2 || note "bench/netfs.py failed"
    fi
}
# Group G: cost growth with 1 .. 1,000,000 files (full; 10,000 quick) and
# 1 .. 10,000 virtual hosts (bench/growth.py).
growth() {
    note "G: cost growth with files and virtual hosts"
    if [ -n "${BENCH_QUICK:-}" ]; then
        (cd bench && "$PY" growth.py --runs 1 --seconds 3) >&2 || note "bench/growth.py failed"
    else
        (cd bench && "$PY" growth.py --full) >&2 || note "bench/growth.py failed"
    fi
}
if [ "$*" = "--only netfs" ] || [ "$*" = "--only growth" ]; then
    "${2}"
    "$PY" bench/fs_report.py
    exit 0
fi

# Group K: the published experiments with their own tools (k6, ab).
seeds() {
    note "K: the published experiments with k6 and ab"
    (cd bench && "$PY" seeds.py ${BENCH_QUICK:+--quick}) >&2 || note "bench/seeds.py failed"
}
if [ "$*" = "--only seeds" ]; then
    seeds
    "$PY" bench/seeds_report.py
    exit 0
fi

note "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
out=$("$PY" bench/bench.py "$@" | tail -n 1)
if [ "$#" -eq 0 ]; then
    realistic
    netfs
    growth
    # HTTP/2 over TLS with h2load: the static page on every server, the
    # realistic 12 KB .htaccess against none, and over cleartext h2c the
    # h2 crate alone beside htaccel and h2o (bench/h2.py).
    note "HTTP/2 over TLS (h2load)"
    if [ -n "${BENCH_QUICK:-}" ]; then
        (cd bench && "$PY" h2.py --seconds 2 --runs 1 --floor) >&2 || note "bench/h2.py failed"
    else
        (cd bench && "$PY" h2.py --instructions --floor) >&2 || note "bench/h2.py failed"
    fi
    seeds
fi
"$PY" bench/report.py "$out"
note "results in $out; report in bench/REPORT.md"
