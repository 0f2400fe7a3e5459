"""Run every benchmark scenario and write results.json and results.csv.

Usage: python3 bench/bench.py [--quick] [--only SUBSTRING] [--both-cores] [--out DIR]
`--both-cores`: only group U (every server on both cores) and the one-core
points it doubles (D/static, A/ao-all-realistic12k), written under
bench/results/both-cores/<timestamp>/ so that the full run's directory,
from which bench/report.py builds the rest of the report, stays the newest.
Environment: BENCH_QUICK=1 (1 run of 2 s per point instead of 3 of 5 s),
BENCH_RUNS, BENCH_SECONDS, BENCH_WARMUP to override; BENCH_NOISY_PCT and
BENCH_NOISY_RETRIES (repeat a run while other work used more than that
share of the server's core; default 15 %, 2 retries, 1 in quick mode);
HTACCEL_BIN. Group W (WordPress) measures the servers of a scenario
interleaved, in 16 rounds of one 4 s window per server (4 rounds in quick
mode; BENCH_WP_ROUNDS and BENCH_WP_WINDOW override), see
bench/wordpress_bench.py.
"""

import argparse
import csv
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import flask_bench  # noqa: E402
import instructions  # noqa: E402
import measure  # noqa: E402
import memory  # noqa: E402
import scenarios  # noqa: E402
import servers  # noqa: E402
import visibility  # noqa: E402
import wordpress_bench  # noqa: E402

# Benchmarks that need parts not built yet; listed, never measured.
PENDING = [
    {
        "name": "HTTP/3 (htaccel_http3): req/s and server CPU per request on the static page",
        "servers": "htaccel, caddy (2.6.2 here speaks HTTP/3; nginx 1.22.1 here predates its HTTP/3 module)",
        "needs": "an HTTP/3 load generator in the runs: the installed h2load (nghttp2 1.52.0) is built "
        "without QUIC (offered h3, it opens TCP) and wrk speaks HTTP/1.1 only; measured by hand with "
        "crates/htaccel/examples/h3load.rs in bench/http3.md",
    },
]


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def machine(htaccel_bin, peers):
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    git = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    return {
        "cpu_model": cpu,
        "cpus": os.cpu_count(),
        "kernel": platform.release(),
        "os": _os_name(),
        "htaccel_commit": git,
        "htaccel_build_note": os.environ.get("HTACCEL_BUILD_NOTE"),
        "versions": {
            s: servers.version(s, htaccel_bin) for s in ["htaccel", "apache", "wrk"] + list(peers)
        },
    }


def _os_name():
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.system()


def expected_status(s):
    return 200


def last_error_line(rundir):
    """The server's last error-log line, without Apache's timestamp and pid prefix."""
    try:
        with open(os.path.join(rundir, "error.log"), errors="replace") as f:
            lines = [line.strip() for line in f if line.strip()]
    except OSError:
        return "(no error log)"
    if not lines:
        return "(empty error log)"
    return re.sub(r"^(\[[^\]]*\] )+", "", lines[-1])[:400]


def batches(todo):
    """The points in run order, as lists measured together: the points of
    group W that share a scenario (one page and `.htaccess`, several
    servers) form one list, at the place of its first point, and are
    measured interleaved (bench/wordpress_bench.py); every other point is
    a list of its own."""
    out, sets = [], {}
    for s in todo:
        if s.group != "W":
            out.append([s])
        elif s.name in sets:
            sets[s.name].append(s)
        else:
            sets[s.name] = [s]
            out.append(sets[s.name])
    return out


def run_batch(batch, base, settings, log):
    """The points of one list of batches(), in its order."""
    if batch[0].group == "W":
        return wordpress_bench.run_points(batch, base, settings, log)
    return [run_point(s, base, settings, log) for s in batch]


def run_point(s, base, settings, log):
    """Start the server for scenario `s`, check its answer, load it."""
    if s.group == "W":
        return wordpress_bench.run_point(s, base, settings, log)
    wordpress_bench.stop()  # the WordPress backend runs only during its group
    if s.group == "F":
        return flask_bench.run_point(s, base, settings, log)
    flask_bench.stop()  # the Flask application too
    docroot = os.path.join(base, "trees", s.tree)
    rundir = tempfile.mkdtemp(prefix="run-", dir=base)
    port = servers.free_port()
    cmd = servers.write_config(s.server, rundir, docroot, port, s.override, s.pinned)
    point = {
        "id": s.id,
        "group": s.group,
        "scenario": s.name,
        "server": s.server,
        "path": s.path,
        "allow_override": s.override,
        "pinned": s.pinned,
        "tree": s.tree,
    }
    server = servers.Server(s.server, cmd, rundir, port, s.pinned)
    try:
        try:
            server.wait_ready(s.path)
            # Some servers answer before their handlers are in place.
            status, headers = servers.http_get(port, s.path)
            deadline = time.time() + 3
            while (status != 200 or headers.get("content-length") != "19") and time.time() < deadline:
                time.sleep(0.2)
                status, headers = servers.http_get(port, s.path)
        except (RuntimeError, OSError) as e:
            point["status"] = "failed"
            point["error"] = str(e)[-1500:]
            return point
        point["http_status"] = status
        if status != expected_status(s) or headers.get("content-length") != "19":
            point["status"] = "failed"
            point["error"] = (
                f"answered {status} (content-length {headers.get('content-length')}) instead of "
                f"200 with the 19-byte page; error log: {last_error_line(rundir)}"
            )
            return point
        url = f"http://127.0.0.1:{port}{s.path}"
        if settings["warmup"]:
            measure.wrk(server, url, settings["warmup"])
        runs = [
            measure.quiet_wrk(
                server, url, settings["seconds"], settings["noisy_retries"], settings["noisy_pct"],
                key="other_on_cpu0_pct" if s.pinned else "other_cpu_pct",
            )
            for _ in range(settings["runs"])
        ]
        point["runs"] = runs
        point.update(measure.summarise(runs))
        point["status"] = "ok" if point["non2xx_total"] == 0 else "errors"
        return point
    finally:
        server.stop()
        shutil.rmtree(rundir, ignore_errors=True)


def run_visibility(base, settings, log):
    out = []
    for server_name in ("htaccel", "apache"):
        for variant in ("header", "status"):
            for mode in ("inplace", "rename"):
                docroot = tempfile.mkdtemp(prefix="vis-", dir=base)
                os.chmod(docroot, 0o755)
                with open(os.path.join(docroot, "index.html"), "wb") as f:
                    f.write(scenarios.PAGE)
                os.chmod(os.path.join(docroot, "index.html"), 0o644)
                rundir = tempfile.mkdtemp(prefix="run-", dir=base)
                port = servers.free_port()
                cmd = servers.write_config(server_name, rundir, docroot, port, "All", True)
                server = servers.Server(server_name, cmd, rundir, port, True)
                try:
                    server.wait_ready("/index.html")
                    r = visibility.run(port, docroot, variant, mode, settings["visibility_seconds"])
                    r["server"] = server_name
                    r["status"] = "ok"
                except (RuntimeError, OSError) as e:
                    r = {"server": server_name, "variant": variant, "mode": mode}
                    r |= {"status": "failed", "error": str(e)[-800:]}
                finally:
                    server.stop()
                    shutil.rmtree(rundir, ignore_errors=True)
                    shutil.rmtree(docroot, ignore_errors=True)
                log(f"visibility {server_name} {variant} {mode}: {r.get('stale')} stale of {r.get('judged')}")
                out.append(r)
    return out


def run_memory(base, settings, log):
    docroot = tempfile.mkdtemp(prefix="mem-", dir=base)
    os.chmod(docroot, 0o755)
    with open(os.path.join(docroot, "index.html"), "wb") as f:
        f.write(scenarios.PAGE)
    os.chmod(os.path.join(docroot, "index.html"), 0o644)
    rundir = tempfile.mkdtemp(prefix="run-", dir=base)
    port = servers.free_port()
    conns = settings["memory_connections"]
    cmd = servers.write_config("htaccel", rundir, docroot, port, "All", True, keepalive_timeout=600)
    server = servers.Server("htaccel", cmd, rundir, port, True, nofile=conns + 4096)
    try:
        server.wait_ready("/index.html")
        r = memory.run(server, docroot, conns, settings["memory_directories"])
        r["status"] = "ok"
    except (RuntimeError, OSError) as e:
        r = {"server": "htaccel", "status": "failed", "error": str(e)[-800:]}
    finally:
        server.stop()
        shutil.rmtree(rundir, ignore_errors=True)
        shutil.rmtree(docroot, ignore_errors=True)
    log(f"memory: {r}")
    return r


def both_cores_points(todo):
    """Group U's points, each after the one-core point it doubles (same
    server, tree and URL on CPU 0), so that the pair runs minutes apart."""
    pinned = {(s.group, s.name, s.server): s for s in todo if s.pinned}
    out = []
    for s in todo:
        if s.group != "U":
            continue
        twin = pinned.get((*scenarios.one_core_counterpart(s.name), s.server))
        out.extend([twin, s] if twin else [s])
    return out


CSV_FIELDS = [
    "id", "group", "scenario", "server", "pinned", "allow_override", "path", "status",
    "rps_median", "rps_min", "rps_max", "spread_pct", "cpu_us_per_req_median",
    "p50_ms_median", "p99_ms_median", "server_cpu_pct_median", "wrk_cpu_pct_median",
    "other_cpu_pct_max", "non2xx_total", "requests_total", "error",
]  # fmt: skip


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", help="run only points whose id contains this")
    ap.add_argument("--out", help="results directory (default bench/results/<timestamp>)")
    ap.add_argument("--skip-extra", action="store_true", help="no visibility and memory runs")
    ap.add_argument("--both-cores", action="store_true",
                    help="only group U and its one-core counterparts, into bench/results/both-cores/")
    args = ap.parse_args()
    quick = args.quick or os.environ.get("BENCH_QUICK") == "1"
    settings = {
        "mode": "quick" if quick else "full",
        "runs": int(os.environ.get("BENCH_RUNS", 1 if quick else 3)),
        "seconds": int(os.environ.get("BENCH_SECONDS", 2 if quick else 5)),
        "warmup": int(os.environ.get("BENCH_WARMUP", 1 if quick else 2)),
        "connections": 50,
        # A run is repeated (keeping the quietest) while other work used more
        # than noisy_pct % of the server's core.
        "noisy_pct": float(os.environ.get("BENCH_NOISY_PCT", 15)),
        "noisy_retries": int(os.environ.get("BENCH_NOISY_RETRIES", 1 if quick else 2)),
        "visibility_seconds": 2 if quick else 5,
        "memory_connections": 10000,
        "memory_directories": 100000,
    }
    here = os.path.dirname(os.path.abspath(__file__))
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = args.out or os.path.join(here, "results", *(["both-cores"] if args.both_cores else []), stamp)
    os.makedirs(out, exist_ok=True)
    htaccel_bin = os.path.abspath(
        os.environ.get("HTACCEL_BIN", os.path.join(here, "..", "target", "release", "htaccel"))
    )
    os.environ["HTACCEL_BIN"] = htaccel_bin
    peers = servers.present_peers()

    def log(msg):
        print(f"[{datetime.datetime.now().strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

    results = {
        "started_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "settings": settings,
        "load_average_start": loadavg(),
        "machine": machine(htaccel_bin, peers),
        "peers_missing": [p for p in servers.PEERS if p not in peers],
        "access_file_bytes": scenarios.access_file_sizes(),
        "pending": PENDING,
    }
    log(f"load average {results['load_average_start']}; peers {peers}; out {out}")
    base = tempfile.mkdtemp(prefix="htaccel-bench-")
    os.chmod(base, 0o755)
    try:
        scenarios.write_trees(os.path.join(base, "trees"))
        points = []
        todo = [s for s in scenarios.scenarios(peers) if not args.only or args.only in s.id]
        if args.both_cores:
            todo = both_cores_points(todo)
        for batch in batches(todo):
            for s, p in zip(batch, run_batch(batch, base, settings, log)):
                points.append(p)
                extra = p.get("error", "")[:160] if p["status"] == "failed" else ""
                log(
                    f"{len(points)}/{len(todo)} {s.id}: {p['status']} {p.get('rps_median', '-')} req/s "
                    f"{p.get('cpu_us_per_req_median', '-')} us/req {extra}"
                )
        results["points"] = points
        if not args.skip_extra and not args.only and not args.both_cores:
            results["visibility"] = run_visibility(base, settings, log)
            results["memory"] = run_memory(base, settings, log)
            if instructions.available():
                counted = {
                    "measured_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(
                        timespec="seconds"
                    ),
                    "htaccel_commit": results["machine"].get("htaccel_commit", "?"),
                    "requests": [instructions.N1, instructions.N2],
                    "points": instructions.run(base, log),
                }
                with open(os.path.join(out, "instructions.json"), "w") as f:
                    json.dump(counted, f, indent=1)
    finally:
        flask_bench.stop()
        shutil.rmtree(base, ignore_errors=True)
    results["load_average_end"] = loadavg()
    results["finished_utc"] = datetime.datetime.now(datetime.timezone.utc).isoformat(
        timespec="seconds"
    )
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        w.writeheader()
        for p in results["points"]:
            w.writerow(p)
    log(f"wrote {out}/results.json; load average {results['load_average_end']}")
    print(out)


if __name__ == "__main__":
    main()
