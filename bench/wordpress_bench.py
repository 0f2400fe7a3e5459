"""Group W: WordPress through PHP-FPM, Apache (mpm_event + mod_proxy_fcgi)
against htaccel, both in front of the SAME pool (goal (c) of the report).

The site is the one the differential tests compare (`scripts/wordpress.sh`:
Debian's WordPress 6.1 with the twentytwentythree theme, the real WordPress
`.htaccess`, a private MariaDB, a post at /2024/01/hello-htaccel/). It is set
up once for the group. Two pages are measured:

- `home`: `/` (DirectoryIndex index.php);
- `post`: `/2024/01/hello-htaccel/`, a pretty permalink: the `.htaccess`
  rules send it to index.php (not a file, not a directory).

Beside the goal, each page is also measured
- on nginx, with the WordPress rules translated by hand the usual way
  (`try_files $uri $uri/ /index.php?$args`, `.php` to the same pool): what
  a site gives up its `.htaccess` for;
- with the 12 KB "realistic" `.htaccess` of group A (the WordPress block
  and 536 `Deny from` lines; none matches the client) on Apache and
  htaccel: the rules every request of a protected WordPress site runs.

The PHP-FPM pool is fixed for every point: pm = static with 4 children,
opcache on (`wordpress.sh fpm-args`), no php.ini. The pool and MariaDB run on
CPU 1 with wrk; the web server is pinned to CPU 0 like every pinned point, so
its own CPU per request is measured apart from PHP's (reported beside it).
Both servers read the same configuration text: the common one of bench/
plus `.php` files to the pool (the FilesMatch SetHandler of the differential
cases) and `DirectoryIndex index.php`.

The servers of one scenario set (the same page and `.htaccess`: Apache,
htaccel and nginx; or Apache and htaccel with the block list) are measured
interleaved, not one after the other. Every server of the set runs at once
(each on its own port) in front of the one pool.

How the set is measured, and why (decided before any result of it):

- What varies. PHP sets the rate: the pool keeps CPU 1 busy, so a window's
  page count is CPU 1's time over PHP's CPU per page (rate × backend µs per
  page ≈ 10^6 in every run so far); the web server's own CPU per page is
  under 1 ms of PHP's ~70. PHP's CPU per page drifts with the machine (other
  tenants, caches, frequency): in one run, adjacent 15 s windows of the same
  server differed by up to 19 %, and the rounds' htaccel ÷ Apache ratios
  ranged 0.84–1.11. Goal (c) needs ~3 %. The drift is the signal to cancel;
  the servers' own differences are small beside it.
- Pairing in time. A drift slower than the distance between two servers'
  windows falls on both alike, so windows must be short and adjacent: each
  round gives every server one window of WINDOW_SECONDS, the order
  alternating (ABC, CBA, ABC, …), ROUNDS rounds (even). Over a pair of
  rounds (ABC CBA) each server's windows have the same mean time, so a
  drift linear over the pair cancels exactly in the sums; only curvature
  and faster noise remain. Faster noise is not cancelled, only measured:
  with other work filling CPU 0, PHP's cost per page moved by up to 30 %
  between adjacent 4 s windows, and the interval widens accordingly.
- Short enough, long enough. At ~14 pages/s, 4 s is ~56 pages: completions
  arrive in bursts of up to the 4 children, so a window's count is uncertain
  by about ±2 pages (~2 % of one window, ~0.5 % of 16 windows summed), and
  the pages still in PHP when wrk stops (a common loss of about 2 pages per
  window, the same for every server) move a ratio of 0.97 by under 0.1 %.
  Shorter windows would pair better but quantise worse.
- Warm-up per window. When wrk stops, the pool still holds up to
  CONNECTIONS pages (4 in the children, the rest queued at the socket) —
  about half a second of PHP — which the next window's server would pay
  for. So before every window the pool is drained: wait until the
  backend's CPU stops moving (`_drain`). With the pool idle at the start,
  the window needs no warm-up of its own: PHP is busy within milliseconds
  of wrk's first requests (opcache and the site are warmed once per server
  before the first round). No window is retried when other work was seen
  (a retry would move it out of its place in the alternation); other work
  shows in the rounds' spread, so in the interval.
- The statistic. Per page, the pooled ratio R = total requests of htaccel
  ÷ total requests of Apache over the same interleaved windows of equal
  duration (`pooled_ratio`): a ratio of sums weights every second alike,
  and keeps the exact cancellation of linear drift over round pairs, which
  the median of per-round ratios (the previous statistic) loses (each
  round's ratio is biased by the slope, alternately up and down, and a
  median does not average the two). Its uncertainty: the classical
  ratio-estimator interval over blocks of two consecutive rounds (the unit
  in which the drift cancels): with per-block totals H_j and A_j and m
  blocks, s² = Σ (H_j − R·A_j)² / (m − 1), SE = √(s²/m) / mean(A_j), and the
  95 % interval R ± t(0.975, m − 1)·SE (`pooled_ratio_ci95`). It needs no
  random resampling (the report is reproducible from results.json), and
  Student's t accounts for having only 8 blocks, where a percentile
  bootstrap over 8 blocks would be too narrow. The rounds' own ratios
  (`paired_ratios`) and their median stay in the results as diagnostics.
- Verdict (bench/wordpress_report.py): met when R ≥ 0.97, NOT met when
  R < 0.97; in either case "within noise" is added when the 95 % interval
  contains 0.97 (the run cannot tell the two apart at that level).
- Beside it, the backend's CPU per page, pooled the same way (total
  backend CPU ÷ total pages, htaccel's ÷ Apache's in the same windows:
  `pooled_backend_cpu_ratio`): whether a server makes PHP work more per
  page.

Time: a set of k servers takes ROUNDS × k × (WINDOW_SECONDS + drain, ~0.5 s)
plus a warm-up of each server; the group (sets of 3, 3, 2 and 2 servers)
about 16 × 10 × 4.5 s ≈ 12 minutes, as the five 15 s rounds before it.
Quick mode: QUICK_ROUNDS rounds. BENCH_WP_ROUNDS and BENCH_WP_WINDOW
override both.
"""

import atexit
import os
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import time

import measure
import scenarios
import servers

PAGES = {
    "home": "/",
    "post": "/2024/01/hello-htaccel/",
}
# One window per server per round, in seconds, and the rounds of a set (an
# even number: linear drift cancels over each pair of rounds); see the
# module's docstring.
WINDOW_SECONDS = 4
ROUNDS = 16
QUICK_ROUNDS = 4
# The pool counts as drained when its CPU grew by less than DRAIN_IDLE_S in
# one DRAIN_STEP_S; never wait longer than DRAIN_MAX_S.
DRAIN_STEP_S = 0.1
DRAIN_IDLE_S = 0.015
DRAIN_MAX_S = 5.0
# Enough connections to keep all 4 children busy.
CONNECTIONS = 8
CHILDREN = 4
BACKEND_CPU = "1"
HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "scripts", "wordpress.sh")
# What every page must contain: the post's title (the site really answered).
MARK = b"Hello htaccel"
# The site's own host name: with any other (wrk's default is the address and
# port) WordPress answers every page with a redirect to http://localhost/.
HOST = ["Host: localhost"]

# Appended to the common configuration of both servers.
EXTRA = """\
LoadModule proxy_module modules/mod_proxy.so
LoadModule proxy_fcgi_module modules/mod_proxy_fcgi.so
<FilesMatch "\\.php$">
    SetHandler "proxy:unix:{sock}|fcgi://localhost"
</FilesMatch>
DirectoryIndex index.php index.html
"""

POOL = """\
[global]
pid = {dir}/php-fpm.pid
error_log = {dir}/php-fpm.log
daemonize = no
[wordpress]
user = www-data
group = www-data
listen = {sock}
listen.mode = 0666
listen.backlog = 511
pm = static
pm.max_children = {children}
catch_workers_output = yes
"""


# nginx in front of the same pool: the WordPress `.htaccess` as nginx users
# write it by hand (replaces the static-file location of servers.NGINX).
NGINX_LOCATIONS = """\
        index index.php index.html;
        location / {{ try_files $uri $uri/ /index.php?$args; }}
        location ~ \\.php$ {{
            include /etc/nginx/fastcgi_params;
            fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;
            fastcgi_pass unix:{sock};
        }}
"""

# The variant with the block list: the site's `.htaccess` becomes group A's
# realistic file (same WordPress block, 536 `Deny from` lines after it).
BLOCKLIST = "blocklist"


class Point(scenarios.Scenario):
    def __init__(self, page, server, variant=""):
        name = f"wp-{page}" + (f"-{variant}" if variant else "")
        super().__init__("W", name, server, "wordpress", PAGES[page])
        self.page = page
        self.variant = variant


def scenarios_list():
    """The group's points: each page on Apache, then on htaccel (goal (c));
    then on nginx, and with the block list on Apache and htaccel."""
    out = [Point(page, server) for page in PAGES for server in ("apache", "htaccel")]
    if os.path.exists(servers.BINARIES["nginx"]):
        out += [Point(page, "nginx") for page in PAGES]
    out += [Point(page, server, BLOCKLIST) for page in PAGES for server in ("apache", "htaccel")]
    return out


def _script(*args):
    r = subprocess.run(["bash", SCRIPT, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"wordpress.sh {' '.join(args)}: {(r.stdout + r.stderr)[-1500:]}")
    return r.stdout


def _php_fpm():
    for d in ("/usr/sbin", "/usr/local/sbin", "/usr/bin"):
        if os.path.exists(os.path.join(d, "php-fpm")):
            return os.path.join(d, "php-fpm")
        try:
            names = os.listdir(d)
        except OSError:
            continue
        found = sorted(n for n in names if n.startswith("php-fpm") and n[7:].replace(".", "").isdigit())
        if found:
            return os.path.join(d, found[-1])
    raise RuntimeError("php-fpm is not installed")


def _spawn(cmd, log):
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, preexec_fn=os.setsid)


def _stop(proc):
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


class Site:
    """The WordPress tree, its MariaDB and its PHP-FPM pool (CPU 1)."""

    def __init__(self, base):
        self.dir = tempfile.mkdtemp(prefix="wp-", dir=base)
        os.chmod(self.dir, 0o755)
        self.docroot = os.path.join(self.dir, "site")
        self.sock = os.path.join(self.dir, "php-fpm.sock")
        datadir = os.path.join(self.dir, "db")
        db_sock = os.path.join(self.dir, "db.sock")
        self.log = open(os.path.join(self.dir, "backend.log"), "wb")
        self.db = self.fpm = None
        try:
            _script("stage", self.docroot)
            _script("db-init", datadir)
            db = ["bash", SCRIPT, "db-run", datadir, db_sock]
            self.db = _spawn(["taskset", "-c", BACKEND_CPU, *db], self.log)
            _script("db-wait", db_sock)
            _script("config", self.docroot, "wordpress", db_sock)
            _script("install", self.docroot)
            conf = os.path.join(self.dir, "php-fpm.conf")
            with open(conf, "w") as f:
                f.write(POOL.format(dir=self.dir, sock=self.sock, children=CHILDREN))
            args = _script("fpm-args").split()
            cmd = ["taskset", "-c", BACKEND_CPU, _php_fpm(), "-n", *args, "-y", conf, "-F", "-R"]
            self.fpm = _spawn(cmd, self.log)
            deadline = time.time() + 15
            while not os.path.exists(self.sock):
                if self.fpm.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"php-fpm did not start: {self.backend_log()}")
                time.sleep(0.05)
        except BaseException:
            self.stop()
            raise

    def backend_log(self):
        text = ""
        for name in ("backend.log", "php-fpm.log", "db/error.log"):
            try:
                with open(os.path.join(self.dir, name), errors="replace") as f:
                    text += f.read()[-800:]
            except OSError:
                pass
        return text

    def pids(self):
        return servers.process_tree(self.fpm.pid) + servers.process_tree(self.db.pid)

    def stop(self):
        for proc in (self.fpm, self.db):
            if proc is not None:
                _stop(proc)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


_site = None


def site(base):
    global _site
    if _site is None:
        _site = Site(base)
        atexit.register(stop)
    return _site


def stop():
    """Stop the site (after the group)."""
    global _site
    if _site is not None:
        _site.stop()
        _site = None


def _get(port, path, timeout=30):
    """(status, whole answer) of one GET on a fresh connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\n{HOST[0]}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    line = data.split(b"\r\n", 1)[0].split()
    return (int(line[1]) if len(line) > 1 else 0), data


def _wrk(server, backend, url, seconds):
    """One wrk run, with the backend's CPU time (PHP-FPM and MariaDB)."""
    b0 = servers.cpu_seconds(backend.pids())
    t0 = time.monotonic()
    r = measure.wrk(server, url, seconds, connections=CONNECTIONS, headers=HOST)
    wall = time.monotonic() - t0
    cpu = servers.cpu_seconds(backend.pids()) - b0
    r["backend_cpu_s"] = round(cpu, 3)
    r["backend_cpu_us_per_req"] = round(1e6 * cpu / r["requests"], 1) if r["requests"] else None
    # The backend shares CPU 1 with wrk and limits the rate: other work there
    # makes a run as noisy as other work on the server's CPU 0.
    if "cpu1_busy_pct" in r:
        backend_pct = 100 * cpu / wall
        r["backend_cpu_pct"] = round(backend_pct, 1)
        r["other_on_cpu1_pct"] = round(max(0.0, r["cpu1_busy_pct"] - backend_pct - r["wrk_cpu_pct"]), 1)
    return r


def _drain(backend):
    """Wait until the pool has finished the pages still queued from the
    previous window (its CPU stops moving). Returns the seconds waited."""
    pids = backend.pids()
    t0 = time.monotonic()
    last = servers.cpu_seconds(pids)
    while time.monotonic() - t0 < DRAIN_MAX_S:
        time.sleep(DRAIN_STEP_S)
        now = servers.cpu_seconds(pids)
        if now - last < DRAIN_IDLE_S:
            break
        last = now
    return round(time.monotonic() - t0, 2)


def rounds(settings):
    """(rounds, window seconds) of a scenario set: ROUNDS in a full run,
    QUICK_ROUNDS in quick mode; BENCH_WP_ROUNDS and BENCH_WP_WINDOW
    override."""
    n = QUICK_ROUNDS if settings["mode"] == "quick" else ROUNDS
    n = int(os.environ.get("BENCH_WP_ROUNDS", n))
    return max(1, n), max(1, int(os.environ.get("BENCH_WP_WINDOW", WINDOW_SECONDS)))


# Student's t, two-sided 95 %, by degrees of freedom (1–30; 1.96 beyond).
T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042)  # fmt: skip


def pooled(own, reference, key="requests"):
    """Ratio of sums of `key` over the rounds both runs have, and its 95 %
    interval over blocks of two consecutive rounds (the ratio estimator's
    standard error with Student's t; see the module's docstring). Returns
    (ratio, (low, high) or None with fewer than two blocks, blocks)."""
    rounds_ = sorted({r["round"] for r in own} & {r["round"] for r in reference})
    mine = {r["round"]: r[key] for r in own}
    ref = {r["round"]: r[key] for r in reference}
    blocks = {}
    for k in rounds_:
        h, a = blocks.get(k // 2, (0.0, 0.0))
        blocks[k // 2] = (h + mine[k], a + ref[k])
    hs = [h for h, _ in blocks.values()]
    As = [a for _, a in blocks.values()]
    if not As or sum(As) <= 0:
        return None, None, len(blocks)
    ratio = sum(hs) / sum(As)
    m = len(blocks)
    if m < 2:
        return ratio, None, m
    s2 = sum((h - ratio * a) ** 2 for h, a in zip(hs, As)) / (m - 1)
    se = (s2 / m) ** 0.5 / (sum(As) / m)
    t = T975[m - 2] if m - 1 <= len(T975) else 1.96
    return ratio, (ratio - t * se, ratio + t * se), m


def _per_page(runs, key):
    """Total `key` over total requests, in µs per page."""
    n = sum(r["requests"] for r in runs)
    total = sum(r.get(key) or 0 for r in runs)
    return 1e6 * total / n if n else None


def _start(s, backend, base):
    """Start the server of point `s` on its own port and rundir, in front of
    the pool; check that it serves the page. Returns (server, rundir, url);
    raises RuntimeError or OSError (with the server stopped) if not."""
    rundir = tempfile.mkdtemp(prefix="run-", dir=base)
    port = servers.free_port()
    cmd = servers.write_config(s.server, rundir, backend.docroot, port, s.override, s.pinned)
    conf = cmd[2]  # [binary, "-f" or "-c", path, ...]
    if s.server == "nginx":
        with open(conf) as f:
            text = f.read()
        text = text.replace("        location / { }\n", NGINX_LOCATIONS.format(sock=backend.sock))
        with open(conf, "w") as f:
            f.write(text)
    else:
        with open(conf, "a") as f:
            f.write(EXTRA.format(sock=backend.sock))
    server = servers.Server(s.server, cmd, rundir, port, s.pinned)
    try:
        server.wait_ready("/wp-includes/css/dashicons.min.css")
        status, answer = _get(port, s.path)
        if status != 200 or MARK not in answer:
            raise RuntimeError(
                f"answered {status} without the post's title; error log: {server.output()[-400:]}; "
                f"backend: {backend.backend_log()[-400:]}"
            )
    except BaseException:
        server.stop()
        shutil.rmtree(rundir, ignore_errors=True)
        raise
    return server, rundir, f"http://127.0.0.1:{port}{s.path}"


def _round(v, nd):
    return round(v, nd) if v is not None else None


def _median(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def _paired(runs, reference, key):
    """Per round, this server's `key` divided by the reference's in the same
    round (None where either is missing)."""
    return [
        round(r[key] / a[key], 4) if r.get(key) is not None and a.get(key) else None
        for r, a in zip(runs, reference)
    ]


def run_point(s, base, settings, log):
    """Like bench.run_point, for a point of group W measured alone."""
    return run_points([s], base, settings, log)[0]


def run_points(scens, base, settings, log):
    """Measure the points of one scenario set (the same page and `.htaccess`
    on each server) interleaved: every server runs at once, each round
    loads each server once, in alternating order. Returns one point per
    scenario, in the order given, with the keys of bench.run_point's."""
    variant = scens[0].variant
    assert all(s.name == scens[0].name for s in scens), "one scenario set at a time"
    pool = f"PHP-FPM pm=static {CHILDREN} children, opcache on, and MariaDB, on CPU {BACKEND_CPU}"
    points = [
        {
            "id": s.id, "group": s.group, "scenario": s.name, "server": s.server, "path": s.path,
            "allow_override": s.override, "pinned": s.pinned, "tree": s.tree, "page": s.page,
            "connections": CONNECTIONS, "backend": pool, "variant": s.variant,
        }  # fmt: skip
        for s in scens
    ]
    try:
        backend = site(base)
    except (RuntimeError, OSError) as e:
        for point in points:
            point |= {"status": "failed", "error": str(e)[-1500:]}
        return points
    # The block list replaces the site's `.htaccess` for the whole set: every
    # server reads the same file, restored afterwards.
    htaccess = os.path.join(backend.docroot, ".htaccess")
    with open(htaccess, "rb") as f:
        original = f.read()
    if variant == BLOCKLIST:
        with open(htaccess, "wb") as f:
            f.write(scenarios.CONTENTS["realistic12k"]())
    running = []  # (point, server, rundir, url) of the servers that serve the page
    try:
        for s, point in zip(scens, points):
            if variant == BLOCKLIST:
                point["htaccess_bytes"] = os.path.getsize(htaccess)
            # One at a time: servers.free_port gives the lowest port not yet bound.
            try:
                server, rundir, url = _start(s, backend, base)
            except (RuntimeError, OSError) as e:
                point |= {"status": "failed", "error": str(e)[-1500:]}
                continue
            point["http_status"] = 200
            running.append((point, server, rundir, url))
        if settings["warmup"]:
            for _, server, _, url in running:
                _drain(backend)
                measure.wrk(server, url, settings["warmup"], connections=CONNECTIONS, headers=HOST)
        n, window = rounds(settings)
        runs = {id(point): [] for point, *_ in running}
        for k in range(n):
            order = running if k % 2 == 0 else running[::-1]
            for point, server, _, url in order:
                drained = _drain(backend)
                r = _wrk(server, backend, url, window)
                r["round"] = k
                r["drain_s"] = drained
                runs[id(point)].append(r)
            if len(running) > 1:
                log(
                    f"W/{scens[0].name} round {k + 1}/{n}: "
                    + ", ".join(f"{p['server']} {runs[id(p)][-1]['requests']}" for p, *_ in order)
                    + f" pages in {window} s"
                )
        reference = next((runs[id(p)] for p, *_ in running if p["server"] == "apache"), None)
        for point, *_ in running:
            own = runs[id(point)]
            point["seconds"] = window
            point["window_seconds"] = window
            point["rounds"] = n
            point["interleaved_with"] = [p["server"] for p, *_ in running if p is not point]
            point["runs"] = own
            point.update(measure.summarise(own))
            point["rps_pooled"] = round(point["requests_total"] / (window * len(own)), 2) if own else None
            point["cpu_us_per_req_pooled"] = _round(_per_page(own, "server_cpu_s"), 1)
            point["backend_cpu_us_per_req_pooled"] = _round(_per_page(own, "backend_cpu_s"), 0)
            point["drain_s_max"] = max((r["drain_s"] for r in own), default=None)
            point["other_on_cpu1_pct_max"] = max((r.get("other_on_cpu1_pct", 0) for r in own), default=None)
            backend_us = sorted(r["backend_cpu_us_per_req"] for r in own if r["backend_cpu_us_per_req"])
            point["backend_cpu_us_per_req_median"] = backend_us[len(backend_us) // 2] if backend_us else None
            if reference is not None and point["server"] != "apache":
                ratio, ci, blocks = pooled(own, reference)
                point["pooled_ratio"] = _round(ratio, 4)
                point["pooled_ratio_ci95"] = [round(v, 4) for v in ci] if ci else None
                point["pooled_blocks"] = blocks
                mine, ref = _per_page(own, "backend_cpu_s"), _per_page(reference, "backend_cpu_s")
                point["pooled_backend_cpu_ratio"] = _round(mine / ref if mine and ref else None, 4)
                point["paired_ratios"] = _paired(own, reference, "rps")
                m = _median(point["paired_ratios"])
                point["paired_ratio_median"] = round(m, 4) if m is not None else None
                point["paired_backend_cpu_ratios"] = _paired(own, reference, "backend_cpu_us_per_req")
                m = _median(point["paired_backend_cpu_ratios"])
                point["paired_backend_cpu_ratio_median"] = round(m, 4) if m is not None else None
            point["status"] = "ok" if point["non2xx_total"] == 0 else "errors"
        return points
    finally:
        for _, server, rundir, _ in running:
            server.stop()
            shutil.rmtree(rundir, ignore_errors=True)
        if variant == BLOCKLIST:
            with open(htaccess, "wb") as f:
                f.write(original)
