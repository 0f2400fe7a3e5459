"""Group K: the published .htaccess experiments again, with the tools they
were run with (k6 and ab) rather than our wrk groups, so that our figures
can stand beside theirs.

k6 (`--only k6`): 50 virtual users for 30 s with no sleep (`K6_SCRIPT`),
≥ 10 runs per point, mean and standard deviation of the runs' req/s, mean
latency and p95 as k6 reports them.

- static: the 19-byte `/index.html` of bench/scenarios.py on Apache with
  AllowOverride None, AllowOverride All without any `.htaccess`, and
  AllowOverride All with the realistic 12 KB file ("realistic12k": the
  WordPress block and 536 `Deny from` lines) at the document root; htaccel
  in the same three; nginx as a reference row.
- wordpress: the home page of group W's site (scripts/wordpress.sh:
  Debian's WordPress over one PHP-FPM pool with MariaDB, started privately
  by bench/wordpress_bench.py) through Apache and htaccel, each with
  WordPress's `.htaccess` under AllowOverride All, and with AllowOverride
  None and the same rules in the main configuration (`<Directory>`).

ab (`--only ab`), five runs per point in a seeded random order (the order
is recorded in the results):

- depth26: `/1/2/…/26/index.html` at `ab -c 100 -n 100000` (no
  keep-alive, as published). The rule: `Header set X-Seed leaf` for the
  leaf directory, in the leaf's `.htaccess` under AllowOverride All, or in
  a `<Directory>` of the main configuration under AllowOverride None; and
  AllowOverride All with no `.htaccess` anywhere (the published setting).
- bar10: `/1/…/10/hello.bar`, a tiny PHP script, at `ab -c 10 -n 1000`;
  the leaf's rule sends `.bar` files to a private PHP-FPM pool over
  FastCGI (`<FilesMatch "\\.bar$"> SetHandler "proxy:unix:…|fcgi://localhost"`),
  in the `.htaccess` or in the main configuration as above.

Every point of a set runs at once, each server on its own port, pinned to
CPU 0 with one worker (bench/servers.py); the load generator (and PHP-FPM,
MariaDB) on CPU 1. The runs of a set are interleaved (k6: round after
round, the order alternating; ab: the seeded shuffle), so that drift of the
shared machine falls on every point alike. Server CPU per request: Δ(utime
+ stime) of the server's process tree from /proc over the run / requests
answered, as measure.py does; other work on CPU 0 is recorded per run.

Every point is checked before it is measured (status, and the rule's
effect: the `X-Seed` header, the `.bar` script's output, the post title of
the WordPress page).

    python3 bench/seeds.py [--quick] [--only k6|ab|k6-static|k6-wordpress|ab-depth26|ab-bar10]
                           [--out FILE] [--lock-each LOCKFILE]

Quick: 2 k6 runs × 10 s, ab -n 10000 for the deep tree (five runs each):
about 9 minutes (k6 6, ab 3 on this loaded 2-core machine). Full: 10 k6
runs × 30 s for 7 static and 4 WordPress points (about 50 minutes), ab at
the published -n (about 8 minutes, the `.bar` tree 15 s of it): about an
hour.
`--lock-each LOCKFILE` takes an flock on LOCKFILE around each load run
rather than needing the whole script run under it (a shared machine's
other benchmarks then run between the long sets' runs); SIGINT ends an ab
set early and keeps the runs done (the report says so).
Results: bench/results/seeds/<timestamp>.json; bench/seeds_report.py
writes REPORT.md's section K from the newest.
"""

import argparse
import fcntl
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import measure
import scenarios
import servers
import wordpress_bench

HERE = os.path.dirname(os.path.abspath(__file__))
QUIET_DIR = "/var/tmp"  # not /tmp: see realistic.py
LOAD_CPU = "1"
SEED = 22  # the ab shuffle
VUS = 50
K6_SCRIPT = """\
import http from 'k6/http';
const url = __ENV.URL;
const params = { headers: { Host: 'localhost' } };
export default function () { http.get(url, params); }
"""
FULL = {"k6_runs": 10, "k6_seconds": 30, "depth_n": 100000, "bar_n": 1000, "ab_runs": 5}
QUICK = {"k6_runs": 2, "k6_seconds": 10, "depth_n": 10000, "bar_n": 1000, "ab_runs": 5}
WARMUP_S = 2

HEADER_RULE = "Header set X-Seed leaf\n"
BAR_RULE = """\
<FilesMatch "\\.bar$">
    SetHandler "proxy:unix:{sock}|fcgi://localhost"
</FilesMatch>
"""
BAR_SCRIPT = b"<?php echo 'bar ', 6 * 7, \"\\n\";\n"
BAR_ANSWER = b"bar 42"
PROXY_MODULES = """\
LoadModule proxy_module modules/mod_proxy.so
LoadModule proxy_fcgi_module modules/mod_proxy_fcgi.so
"""
BAR_POOL = """\
[global]
pid = {dir}/php-fpm.pid
error_log = {dir}/php-fpm.log
daemonize = no
[bar]
user = www-data
group = www-data
listen = {sock}
listen.mode = 0666
listen.backlog = 511
pm = static
pm.max_children = 4
security.limit_extensions = .bar .php
"""

# Published figures known to the project (percent costs are 1 − AO All ÷ AO None).
PUBLISHED = {
    "apache-none": "≈ 9.9k req/s",
    "apache-all-nofile": "≈ 16 % cost",
    "apache-all-12k": "≈ 40 % cost",
    "depth26/apache-none": "9.95k req/s",
    "depth26/apache-all-nofile": "5.1k req/s (49 % cost)",
}
NOT_PUBLISHED = "not published in our sources"


def _loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[:3]


def _htaccel_version():
    """htaccel has no --version: the binary and its build time."""
    path = os.environ["HTACCEL_BIN"]
    try:
        built = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(os.path.getmtime(path)))
    except OSError:
        built = "missing"
    return f"htaccel {path} (built {built})"


def k6_binary():
    """k6 on PATH, or where `go install` puts it."""
    found = shutil.which("k6")
    if found:
        return found
    for d in (os.environ.get("GOBIN"), os.path.expanduser("~/go/bin"), "/root/go/bin"):
        if d and os.access(os.path.join(d, "k6"), os.X_OK):
            return os.path.join(d, "k6")
    return None


def _version(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
        return (r.stdout + r.stderr).strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "unknown"


# ---------------------------------------------------------------- one run


LOCK = None  # --lock-each: a file locked around every load run


def _loaded(pids, cmd):
    """Run the load generator `cmd` on CPU 1 against a server whose
    processes are `pids`; return (output, figures from /proc)."""
    if LOCK is None:
        return _loaded_now(pids, cmd)
    with open(LOCK, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        return _loaded_now(pids, cmd)


def _loaded_now(pids, cmd):
    user0, sys0 = servers.cpu_split(pids)
    busy0 = measure._cpu_busy()
    t0 = time.monotonic()
    proc = subprocess.Popen(["taskset", "-c", LOAD_CPU, *cmd], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    out = proc.stdout.read()
    _, status, rusage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    busy1 = measure._cpu_busy()
    user1, sys1 = servers.cpu_split(pids)
    server = (user1 - user0) + (sys1 - sys0)
    r = {"exit": os.waitstatus_to_exitcode(status), "wall_s": round(wall, 2),
         "server_cpu_s": round(server, 3), "server_user_s": round(user1 - user0, 3),
         "server_sys_s": round(sys1 - sys0, 3),
         "server_cpu_pct": round(100 * server / wall, 1),
         "client_cpu_pct": round(100 * (rusage.ru_utime + rusage.ru_stime) / wall, 1)}
    tck = servers.CLK_TCK
    for c in ("cpu0", "cpu1"):
        if c in busy0 and c in busy1:
            r[f"{c}_busy_pct"] = round(100 * (busy1[c][0] - busy0[c][0]) / tck / wall, 1)
    if "cpu0_busy_pct" in r:
        r["other_on_cpu0_pct"] = round(max(0.0, r["cpu0_busy_pct"] - r["server_cpu_pct"]), 1)
    return out, r


def _per_request(r):
    n = r.get("requests") or 0
    r["cpu_us_per_req"] = round(1e6 * r["server_cpu_s"] / n, 2) if n else None
    r["user_us_per_req"] = round(1e6 * r["server_user_s"] / n, 2) if n else None
    r["sys_us_per_req"] = round(1e6 * r["server_sys_s"] / n, 2) if n else None
    return r


def k6_run(k6, script, server, url, seconds, workdir):
    """One k6 run (VUS users, `seconds`, no sleep); k6's summary figures."""
    summary = os.path.join(workdir, "summary.json")
    cmd = [k6, "run", "--quiet", "--no-color", "--no-usage-report", "--vus", str(VUS),
           "--duration", f"{seconds}s", "--summary-export", summary,
           "--summary-trend-stats", "avg,med,p(95),max", "-e", f"URL={url}", script]
    if os.path.exists(summary):
        os.remove(summary)
    out, r = _loaded(server.pids(), cmd)
    try:
        with open(summary) as f:
            m = json.load(f)["metrics"]
    except (OSError, ValueError, KeyError):
        r["error"] = out[-800:]
        r["requests"] = 0
        return r
    reqs = m.get("http_reqs", {})
    dur = m.get("http_req_duration", {})
    failed = m.get("http_req_failed", {})
    r["requests"] = int(reqs.get("count", 0))
    r["rps"] = round(reqs.get("rate", 0.0), 1)
    r["mean_ms"] = round(dur.get("avg", 0.0), 3)
    r["p95_ms"] = round(dur.get("p(95)", 0.0), 3)
    r["median_ms"] = round(dur.get("med", 0.0), 3)
    r["failed"] = int(round(failed.get("passes", failed.get("value", 0) * r["requests"])))
    return _per_request(r)


_AB = {
    "requests": r"Complete requests:\s+(\d+)",
    "failed": r"Failed requests:\s+(\d+)",
    "non2xx": r"Non-2xx responses:\s+(\d+)",
    "rps": r"Requests per second:\s+([\d.]+)",
    "mean_ms": r"Time per request:\s+([\d.]+) \[ms\] \(mean\)",
    "p95_ms": r"^\s+95%\s+(\d+)",
}


def ab_run(server, url, n, c):
    """One `ab -c c -n n` run (no keep-alive)."""
    out, r = _loaded(server.pids(), ["ab", "-q", "-H", "Host: localhost", "-c", str(c), "-n", str(n), url])
    for key, pat in _AB.items():
        m = re.search(pat, out, re.M)
        r[key] = (float(m.group(1)) if key in ("rps", "mean_ms") else int(m.group(1))) if m else 0
    if not r["requests"]:
        r["error"] = out[-800:]
    return _per_request(r)


def summarise(runs):
    """Mean ± standard deviation over the runs, as the published runs report."""

    def ms(key, nd=1):
        vals = [r[key] for r in runs if r.get(key) is not None]
        if not vals:
            return None, None
        sd = statistics.stdev(vals) if len(vals) > 1 else None
        return round(statistics.mean(vals), nd), (round(sd, nd) if sd is not None else None)

    out = {}
    for key, nd in (("rps", 1), ("mean_ms", 3), ("p95_ms", 3), ("cpu_us_per_req", 2),
                    ("user_us_per_req", 2), ("sys_us_per_req", 2), ("client_cpu_pct", 1)):
        out[f"{key}_mean"], out[f"{key}_std"] = ms(key, nd)
    out["requests_total"] = sum(r.get("requests", 0) for r in runs)
    out["failed_total"] = sum(r.get("failed", 0) + r.get("non2xx", 0) for r in runs)
    out["other_on_cpu0_pct_max"] = max((r.get("other_on_cpu0_pct", 0) for r in runs), default=None)
    out["runs_done"] = len(runs)
    return out


# ---------------------------------------------------------------- servers


def _start(point, docroot, base, extra, check):
    """Start `point`'s server on `docroot` with `extra` configuration;
    `check(port)` raises when the answer is not the expected one."""
    rundir = tempfile.mkdtemp(prefix=f"{point['label'].replace(' ', '-')}-", dir=base)
    port = servers.free_port()
    cmd = servers.write_config(point["server"], rundir, docroot, port, point["override"], True,
                               extra=extra)
    server = servers.Server(point["server"], cmd, rundir, port, True)
    try:
        server.wait_ready("/")
        check(port)
    except BaseException:
        server.stop()
        raise
    return server


def _start_all(points, make):
    """Start every point's server (`make(point)` → Server); a point that
    fails is marked and left out."""
    running = []
    for p in points:
        try:
            running.append((p, make(p)))
        except (RuntimeError, OSError) as e:
            p["status"] = "failed"
            p["error"] = str(e)[-1200:]
    return running


def _stop_all(running):
    for _, server in running:
        server.stop()


def _expect(path, status=200, header=None, body=None, host="localhost"):
    def check(port):
        got, answer = wordpress_bench._get(port, path)
        if got != status:
            raise RuntimeError(f"{path} answered {got}, not {status}: {answer[:300]!r}")
        head, _, rest = answer.partition(b"\r\n\r\n")
        if header and header.lower().encode() not in head.lower():
            raise RuntimeError(f"{path}: no {header!r} in {head[:400]!r}")
        if body and body not in rest:
            raise RuntimeError(f"{path}: no {body!r} in the answer")
    return check


def _write(root, files):
    for rel, data in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    for dirpath, _, filenames in os.walk(root):
        os.chmod(dirpath, 0o755)
        for f in filenames:
            os.chmod(os.path.join(dirpath, f), 0o644)


def _directory(docroot, rel, rule):
    """`rule` for the directory `rel` of the document root, in the main configuration."""
    return f'<Directory "{os.path.join(docroot, rel)}">\n{rule}</Directory>\n'


# ---------------------------------------------------------------- k6


def _k6_rounds(running, k6, script, url_of, settings, log):
    """settings' k6 runs of every running point, round after round, the
    order alternating."""
    for p, server in running:
        k6_run(k6, script, server, url_of(p, server), WARMUP_S, p["_dir"])
        p["runs"] = []
    for k in range(settings["k6_runs"]):
        order = running if k % 2 == 0 else running[::-1]
        for p, server in order:
            r = k6_run(k6, script, server, url_of(p, server), settings["k6_seconds"], p["_dir"])
            r["round"] = k
            p["runs"].append(r)
        log(f"K/k6 {running[0][0]['set']} round {k + 1}/{settings['k6_runs']}: "
            + ", ".join(f"{p['label']} {p['runs'][-1].get('rps', 0):,.0f}" for p, _ in order) + " req/s")


def k6_static(base, k6, script, settings, log):
    trees = os.path.join(base, "trees")
    _write(os.path.join(trees, "static"), {"index.html": scenarios.PAGE})
    _write(os.path.join(trees, "realistic12k"),
           {"index.html": scenarios.PAGE, ".htaccess": scenarios.CONTENTS["realistic12k"]()})
    points = []
    for server in ("apache", "htaccel"):
        points += [
            {"label": f"{server}, AllowOverride None", "key": f"{server}-none", "server": server,
             "override": "None", "tree": "static"},
            {"label": f"{server}, AllowOverride All, no .htaccess", "key": f"{server}-all-nofile",
             "server": server, "override": "All", "tree": "static"},
            {"label": f"{server}, AllowOverride All, realistic 12 KB .htaccess", "key": f"{server}-all-12k",
             "server": server, "override": "All", "tree": "realistic12k"},
        ]
    points.append({"label": "nginx (reference)", "key": "nginx", "server": "nginx", "override": "None",
                   "tree": "static"})
    if not os.path.exists(servers.BINARIES["nginx"]):
        points[-1] |= {"status": "failed", "error": "nginx is not installed"}
    for p in points:
        p["set"] = "static"
        p["path"] = "/index.html"
    todo = [p for p in points if "status" not in p]

    def make(p):
        p["_dir"] = tempfile.mkdtemp(prefix="k6-", dir=base)
        return _start(p, os.path.join(trees, p["tree"]), base, "", _expect("/index.html", body=scenarios.PAGE))

    running = _start_all(todo, make)
    try:
        _k6_rounds(running, k6, script, lambda p, s: f"http://127.0.0.1:{s.port}{p['path']}", settings, log)
    finally:
        _stop_all(running)
    return _finish(points)


def k6_wordpress(base, k6, script, settings, log):
    points = []
    for server in ("apache", "htaccel"):
        points += [
            {"label": f"{server}, AllowOverride All (WordPress .htaccess)", "key": f"{server}-all",
             "server": server, "override": "All"},
            {"label": f"{server}, AllowOverride None, the rules in <Directory>", "key": f"{server}-none",
             "server": server, "override": "None"},
        ]
    for p in points:
        p["set"] = "wordpress"
        p["path"] = wordpress_bench.PAGES["home"]
    try:
        site = wordpress_bench.site(base)
    except (RuntimeError, OSError) as e:
        for p in points:
            p |= {"status": "failed", "error": str(e)[-1200:]}
        return points
    with open(os.path.join(site.docroot, ".htaccess")) as f:
        rules = f.read()
    pool = (f"PHP-FPM pm=static {wordpress_bench.CHILDREN} children, opcache on, and MariaDB, "
            f"on CPU {wordpress_bench.BACKEND_CPU} with k6")

    def make(p):
        p["_dir"] = tempfile.mkdtemp(prefix="k6-", dir=base)
        p["backend"] = pool
        extra = wordpress_bench.EXTRA.format(sock=site.sock)
        if p["override"] == "None":
            extra += f'<Directory "{site.docroot}">\n{rules}\n</Directory>\n'
        return _start(p, site.docroot, base, extra, _expect(p["path"], body=wordpress_bench.MARK))

    running = _start_all(points, make)
    try:
        _k6_rounds_backend(running, k6, script, site, settings, log)
    finally:
        _stop_all(running)
        wordpress_bench.stop()
    return _finish(points)


def _k6_rounds_backend(running, k6, script, site, settings, log):
    """_k6_rounds, with the pool drained before every run (see
    wordpress_bench) and PHP's and MariaDB's CPU per page recorded."""
    def drain():
        wordpress_bench._drain(site)

    def url(p, s):
        return f"http://127.0.0.1:{s.port}{p['path']}"

    for p, server in running:
        drain()
        k6_run(k6, script, server, url(p, server), WARMUP_S, p["_dir"])
        p["runs"] = []
    for k in range(settings["k6_runs"]):
        order = running if k % 2 == 0 else running[::-1]
        for p, server in order:
            drain()
            b0 = servers.cpu_seconds(site.pids())
            r = k6_run(k6, script, server, url(p, server), settings["k6_seconds"], p["_dir"])
            b = servers.cpu_seconds(site.pids()) - b0
            r["backend_cpu_us_per_req"] = round(1e6 * b / r["requests"], 1) if r.get("requests") else None
            r["round"] = k
            p["runs"].append(r)
        log(f"K/k6 wordpress round {k + 1}/{settings['k6_runs']}: "
            + ", ".join(f"{p['label']} {p['runs'][-1].get('rps', 0):,.1f}" for p, _ in order) + " req/s")


def _finish(points):
    for p in points:
        p.pop("_dir", None)
        if "runs" in p:
            p.update(summarise(p["runs"]))
            backend = [r["backend_cpu_us_per_req"] for r in p["runs"] if r.get("backend_cpu_us_per_req")]
            if backend:
                p["backend_cpu_us_per_req_mean"] = round(statistics.mean(backend), 0)
            p["status"] = "ok" if p["failed_total"] == 0 and all(r.get("requests") for r in p["runs"]) else "errors"
        p.setdefault("status", "failed")
        p["published"] = PUBLISHED.get(p["key"] if p["set"] == "static" else f"{p['set']}/{p['key']}",
                                       "—" if p["server"] != "apache" else NOT_PUBLISHED)
    return points


# ---------------------------------------------------------------- ab


class Pool:
    """A private PHP-FPM pool for the `.bar` files (CPU 1, beside ab)."""

    def __init__(self, base):
        self.dir = tempfile.mkdtemp(prefix="fpm-", dir=base)
        os.chmod(self.dir, 0o755)
        self.sock = os.path.join(self.dir, "php-fpm.sock")
        conf = os.path.join(self.dir, "php-fpm.conf")
        with open(conf, "w") as f:
            f.write(BAR_POOL.format(dir=self.dir, sock=self.sock))
        self.log = open(os.path.join(self.dir, "fpm.log"), "wb")
        cmd = ["taskset", "-c", LOAD_CPU, wordpress_bench._php_fpm(), "-n", "-d", "zend_extension=opcache",
               "-d", "opcache.enable=1", "-y", conf, "-F", "-R"]
        self.proc = wordpress_bench._spawn(cmd, self.log)
        deadline = time.time() + 15
        while not os.path.exists(self.sock):
            if self.proc.poll() is not None or time.time() > deadline:
                self.stop()
                raise RuntimeError("php-fpm did not start")
            time.sleep(0.05)

    def stop(self):
        wordpress_bench._stop(self.proc)
        self.log.close()


def ab_set(name, base, settings, log):
    """The points of `name` (depth26 or bar10), five runs each in a seeded
    random order."""
    depth = 26 if name == "depth26" else 10
    dirs = "/".join(str(i) for i in range(1, depth + 1))
    root = os.path.join(base, name)
    pool = None
    if name == "depth26":
        leaf, n, c = f"{dirs}/index.html", settings["depth_n"], 100
        page = {leaf: scenarios.PAGE}
        rule, modules, check = HEADER_RULE, "", _expect("/" + leaf, header="X-Seed: leaf")
        variants = [("None", "rule in <Directory>", "conf"), ("All", "rule in the leaf .htaccess", "file"),
                    ("All", "no .htaccess", "nofile")]
    else:
        leaf, n, c = f"{dirs}/hello.bar", settings["bar_n"], 10
        page = {leaf: BAR_SCRIPT}
        pool = Pool(base)
        rule, modules = BAR_RULE.format(sock=pool.sock), PROXY_MODULES
        check = _expect("/" + leaf, body=BAR_ANSWER)
        variants = [("None", "rule in <Directory>", "conf"), ("All", "rule in the leaf .htaccess", "file")]
    points = []
    for server in ("apache", "htaccel"):
        for override, how, kind in variants:
            points.append({"set": name, "label": f"{server}, AllowOverride {override}, {how}",
                           "key": f"{server}-{'none' if kind == 'conf' else 'all-' + kind}",
                           "server": server, "override": override, "kind": kind, "path": "/" + leaf,
                           "ab": f"ab -c {c} -n {n}"})
    def make(p):
        tree = os.path.join(root, p["kind"])
        files = dict(page)
        if p["kind"] == "file":
            files[os.path.join(os.path.dirname(leaf), ".htaccess")] = rule.encode()
        if not os.path.exists(tree):
            _write(tree, files)
        extra = modules + (_directory(tree, os.path.dirname(leaf), rule) if p["kind"] == "conf" else "")
        return _start(p, tree, base, extra, check if p["kind"] != "nofile" else _expect("/" + leaf))

    try:
        running = _start_all(points, make)
        order = [(i, k) for i in range(len(running)) for k in range(settings["ab_runs"])]
        random.Random(SEED).shuffle(order)
        for p, _ in running:
            p["runs"] = []
        done = 0
        try:
            for step, (i, k) in enumerate(order):
                p, server = running[i]
                r = ab_run(server, f"http://127.0.0.1:{server.port}{p['path']}", n, c)
                r["run"], r["step"] = k, step
                p["runs"].append(r)
                done = step + 1
                log(f"K/ab {name} {step + 1}/{len(order)}: {p['label']} {r.get('rps', 0):,.0f} req/s")
        except KeyboardInterrupt:  # SIGINT: keep the runs done, say so
            log(f"K/ab {name}: interrupted after {done} of {len(order)} runs")
        finally:
            _stop_all(running)
        result = {"points": _finish(points), "order": [running[i][0]["key"] for i, _ in order],
                  "seed": SEED, "requests": n, "concurrency": c}
        if done < len(order):
            result["interrupted_after"] = done
        if pool:
            result["backend"] = f"PHP-FPM pm=static 4 children, opcache on, on CPU {LOAD_CPU} with ab"
        return result
    finally:
        if pool:
            pool.stop()


# ---------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 k6 runs x 10 s, ab -n 10000 on the deep tree")
    ap.add_argument("--only", choices=("k6", "ab", "k6-static", "k6-wordpress", "ab-depth26", "ab-bar10"),
                    help="only the k6 or only the ab experiments, or one table of them")
    ap.add_argument("--out", help="results file (default bench/results/seeds/<timestamp>.json)")
    ap.add_argument("--lock-each", metavar="FILE",
                    help="flock FILE around every load run instead of being run under the lock: "
                         "full mode's long sets then let other benchmarks in between runs")
    args = ap.parse_args()
    global LOCK
    LOCK = args.lock_each
    os.environ.setdefault("HTACCEL_BIN", os.path.abspath(os.path.join(HERE, "..", "target", "release", "htaccel")))
    settings = dict(QUICK if args.quick else FULL)
    settings["mode"] = "quick" if args.quick else "full"
    settings["warmup"] = WARMUP_S  # what wordpress_bench expects

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    k6 = k6_binary()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    res = {"started": started, "loadavg_start": _loadavg(), "settings": settings, "vus": VUS,
           "htaccel": _htaccel_version(),
           "apache": servers.version("apache", ""), "nginx": servers.version("nginx", ""),
           "k6": _version([k6, "version"]) if k6 else None, "ab": _version(["ab", "-V"]),
           "k6_script": K6_SCRIPT}
    base = tempfile.mkdtemp(prefix="htaccel-seeds-", dir=QUIET_DIR)
    os.chmod(base, 0o755)
    try:
        def wanted(table):
            return args.only is None or table.startswith(args.only)

        if wanted("k6-static") or wanted("k6-wordpress"):
            if k6 is None:
                res["k6_missing"] = "k6 is not installed (bench/run.sh installs it with go install)"
            else:
                script = os.path.join(base, "k6.js")
                with open(script, "w") as f:
                    f.write(K6_SCRIPT)
                if wanted("k6-static"):
                    res["k6_static"] = k6_static(base, k6, script, settings, log)
                if wanted("k6-wordpress"):
                    res["k6_wordpress"] = k6_wordpress(base, k6, script, settings, log)
        if wanted("ab-depth26") or wanted("ab-bar10"):
            if shutil.which("ab") is None:
                res["ab_missing"] = "ab is not installed (apache2-utils)"
            else:
                for name in ("depth26", "bar10"):
                    if wanted(f"ab-{name}"):
                        res[f"ab_{name}"] = ab_set(name, base, settings, log)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    res["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    res["loadavg_end"] = _loadavg()
    out = args.out or os.path.join(HERE, "results", "seeds", started.replace("-", "").replace(":", "") + ".json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
    log(f"results in {out}")
    print(out)


if __name__ == "__main__":
    main()
