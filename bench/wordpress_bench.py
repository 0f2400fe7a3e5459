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
interleaved, not one after the other: PHP-FPM and MariaDB set the rate, and
their own CPU per page drifts by tens of percent from one run to the next
(54.7k, 60.6k and 72.6k µs in three consecutive runs of one Apache point),
so back-to-back runs would mostly compare that drift. Every server of the
set runs at once (each on its own port); in each round every server gets
one run, in alternating order (ABC, CBA, ABC, …), so a drift falls on all
alike. A full run has max(BENCH_RUNS, 5) rounds (quick mode: BENCH_RUNS, 1
by default). Beside each server's medians, a point other than Apache's
carries the median over rounds of its req/s ÷ Apache's in the same round
(`paired_ratio_median`, from `paired_ratios`), and the same for the
backend's CPU per page (`paired_backend_cpu_ratio_median`).
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
# A WordPress page costs PHP tens of milliseconds (under 20 pages a second
# from one CPU): a point runs three times the suite's duration and at least
# this long, or it holds too few requests to tell the servers apart (/proc
# counts CPU time in 10 ms ticks).
MIN_SECONDS = 10
# Rounds per scenario set in a full run (see the module's docstring).
ROUNDS = 5
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


def _noise(r):
    return max(r.get("other_on_cpu0_pct", 0), r.get("other_on_cpu1_pct", 0))


def _quiet(server, backend, url, settings):
    attempts = [_wrk(server, backend, url, settings["seconds"])]
    while (
        len(attempts) <= settings["noisy_retries"]
        and _noise(attempts[-1]) > settings["noisy_pct"]
    ):
        attempts.append(_wrk(server, backend, url, settings["seconds"]))
    best = min(attempts, key=_noise)
    best["attempts"] = len(attempts)
    best["discarded_noisy_rps"] = [r["rps"] for r in attempts if r is not best]
    return best


def rounds(settings):
    """Rounds of a scenario set: at least ROUNDS in a full run, the suite's
    run count in quick mode."""
    if settings["mode"] == "quick":
        return settings["runs"]
    return max(settings["runs"], ROUNDS)


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
                measure.wrk(server, url, settings["warmup"], connections=CONNECTIONS, headers=HOST)
        long = dict(settings, seconds=max(MIN_SECONDS, 3 * settings["seconds"]))
        n = rounds(settings)
        runs = {id(point): [] for point, *_ in running}
        for k in range(n):
            order = running if k % 2 == 0 else running[::-1]
            for point, server, _, url in order:
                r = _quiet(server, backend, url, long)
                r["round"] = k
                runs[id(point)].append(r)
            if len(running) > 1:
                log(
                    f"W/{scens[0].name} round {k + 1}/{n}: "
                    + ", ".join(f"{p['server']} {runs[id(p)][-1]['rps']}" for p, *_ in order)
                    + " req/s"
                )
        reference = next((runs[id(p)] for p, *_ in running if p["server"] == "apache"), None)
        for point, *_ in running:
            own = runs[id(point)]
            point["seconds"] = long["seconds"]
            point["rounds"] = n
            point["interleaved_with"] = [p["server"] for p, *_ in running if p is not point]
            point["runs"] = own
            point.update(measure.summarise(own))
            point["other_on_cpu1_pct_max"] = max((r.get("other_on_cpu1_pct", 0) for r in own), default=None)
            backend_us = sorted(r["backend_cpu_us_per_req"] for r in own if r["backend_cpu_us_per_req"])
            point["backend_cpu_us_per_req_median"] = backend_us[len(backend_us) // 2] if backend_us else None
            if reference is not None and point["server"] != "apache":
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
