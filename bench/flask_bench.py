"""Group F: a Flask application behind the server (the DXR comparison).

DXR served its pages from a Flask application that answered most of them
with `X-Sendfile`, leaving the bytes to the server in front. The same 7 KB
HTML file is served three ways, each at wrk concurrency 2, 4 and 10, by
htaccel and by Apache (mod_proxy_http + mod_xsendfile) with the same
configuration text:

- `app`: the application reads the file and answers its bytes
  (`/app/bytes/dxr.html`, proxied);
- `xsendfile`: the application answers `X-Sendfile` and no body, the server
  sends the file (`/app/xs/dxr.html`);
- `static`: the server sends the file itself (`/files/dxr.html`), the
  application idle;
- `rewrite`: the application sends the bytes as in `app`, reached through
  a front controller in a `.htaccess` (`RewriteRule ^(.*)$
  http://127.0.0.1:PORT/$1 [P]` in `/front/`) instead of `ProxyPass`: how
  sites without access to the main configuration reach their application.

The server is pinned to CPU 0 like every pinned point. The application
(`tests/difftest/flaskapp.py` under gunicorn, Debian's python3-flask and
python3-gunicorn: 2 worker processes of 8 threads) runs on CPU 1 with wrk,
started once for the whole group; its CPU time per request is recorded
beside the server's.
"""

import os
import shutil
import signal
import subprocess
import tempfile
import time

import measure
import scenarios
import servers

CONCURRENCY = (2, 4, 10)
MODES = {
    "app": "/app/bytes/dxr.html",
    "xsendfile": "/app/xs/dxr.html",
    "static": "/files/dxr.html",
    "rewrite": "/front/bytes/dxr.html",
}
FILE_BYTES = 7 * 1024
APP_CPU = "1"
HERE = os.path.dirname(os.path.abspath(__file__))
APP_DIR = os.path.join(HERE, "..", "tests", "difftest")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3"
XSENDFILE_SO = "/usr/lib/apache2/modules/mod_xsendfile.so"

# Appended to the common configuration of both servers.
EXTRA = """\
LoadModule proxy_module modules/mod_proxy.so
LoadModule proxy_http_module modules/mod_proxy_http.so
LoadModule xsendfile_module {xsendfile_so}
ProxyPass /app/ http://127.0.0.1:{app_port}/
<Location /app/>
    XSendFile On
</Location>
XSendFilePath "{files}"
"""

# The front controller of the `rewrite` mode (`/front/.htaccess`).
FRONT = """\
RewriteEngine On
RewriteRule ^(.*)$ http://127.0.0.1:{app_port}/$1 [P]
"""


def page():
    """7 KB of HTML, like a DXR source page."""
    head = b"<!doctype html>\n<title>dxr: src/main.c</title>\n<pre>\n"
    tail = b"</pre>\n"
    line = b'<span class="line">int f(int x) { return x * 2; } /* code */</span>\n'
    body = bytearray(head)
    while len(body) + len(line) + len(tail) <= FILE_BYTES:
        body += line
    body += b" " * (FILE_BYTES - len(body) - len(tail)) + tail
    return bytes(body)


class Point(scenarios.Scenario):
    def __init__(self, mode, conns, server):
        super().__init__("F", f"flask-{mode}-c{conns}", server, "flask", MODES[mode])
        self.mode = mode
        self.conns = conns


def scenarios_list():
    """The group's points, in run order: one server after the other."""
    return [
        Point(mode, c, server)
        for server in ("apache", "htaccel")
        for mode in MODES
        for c in CONCURRENCY
    ]


class App:
    """gunicorn with the Flask application, pinned to CPU 1."""

    def __init__(self, base):
        self.dir = tempfile.mkdtemp(prefix="flask-", dir=base)
        self.files = os.path.join(self.dir, "files")
        os.makedirs(self.files)
        with open(os.path.join(self.files, "dxr.html"), "wb") as f:
            f.write(page())
        for d in (self.dir, self.files):
            os.chmod(d, 0o755)
        os.chmod(os.path.join(self.files, "dxr.html"), 0o644)
        self.port = servers.free_port(28380)
        self.log = open(os.path.join(self.dir, "gunicorn.log"), "wb")
        env = dict(os.environ, FLASK_FILES=self.files)
        cmd = [
            "taskset", "-c", APP_CPU, PYTHON, "-m", "gunicorn", "--workers", "2",
            "--threads", "8", "--bind", f"127.0.0.1:{self.port}", "--pythonpath",
            os.path.abspath(APP_DIR), "flaskapp:app",
        ]  # fmt: skip
        self.proc = subprocess.Popen(
            cmd, cwd=self.dir, env=env, stdout=self.log, stderr=subprocess.STDOUT,
            preexec_fn=os.setsid,
        )  # fmt: skip
        deadline = time.time() + 20
        while True:
            if self.proc.poll() is not None or time.time() > deadline:
                self.stop()
                with open(os.path.join(self.dir, "gunicorn.log"), errors="replace") as f:
                    raise RuntimeError(f"gunicorn did not start: {f.read()[-1500:]}")
            try:
                if servers.http_get(self.port, "/bytes/dxr.html")[0] == 200:
                    break
            except OSError:
                time.sleep(0.1)

    def pids(self):
        return servers.process_tree(self.proc.pid)

    def stop(self):
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=10)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


_app = None


def app(base):
    global _app
    if _app is None:
        _app = App(base)
    return _app


def stop():
    """Stop the application (after the group)."""
    global _app
    if _app is not None:
        _app.stop()
        _app = None


def _wrk(server, application, url, seconds, conns):
    """One wrk run, with the application's CPU time beside the server's."""
    pids = application.pids()
    a0 = servers.cpu_seconds(pids)
    r = measure.wrk(server, url, seconds, connections=conns)
    app_cpu = servers.cpu_seconds(application.pids()) - a0
    r["app_cpu_s"] = round(app_cpu, 3)
    r["app_cpu_us_per_req"] = round(1e6 * app_cpu / r["requests"], 3) if r["requests"] else None
    # CPU 0 is the server's alone (the application and wrk share CPU 1).
    return r


def _quiet(server, application, url, settings, conns):
    attempts = [_wrk(server, application, url, settings["seconds"], conns)]
    while (
        len(attempts) <= settings["noisy_retries"]
        and attempts[-1].get("other_on_cpu0_pct", 0) > settings["noisy_pct"]
    ):
        attempts.append(_wrk(server, application, url, settings["seconds"], conns))
    best = min(attempts, key=lambda r: r.get("other_on_cpu0_pct", 0))
    best["attempts"] = len(attempts)
    best["discarded_noisy_rps"] = [r["rps"] for r in attempts if r is not best]
    return best


def _check(port, path):
    """The answer must be the 7 KB page, without the application's header."""
    status, headers = servers.http_get(port, path)
    if status != 200 or headers.get("content-length") != str(FILE_BYTES):
        return f"answered {status} (content-length {headers.get('content-length')})"
    if "x-sendfile" in headers:
        return "the X-Sendfile header reached the client"
    return None


def run_point(s, base, settings, log):
    """Like bench.run_point, for a point of group F."""
    point = {
        "id": s.id, "group": s.group, "scenario": s.name, "server": s.server, "path": s.path,
        "allow_override": s.override, "pinned": s.pinned, "tree": s.tree, "mode": s.mode,
        "connections": s.conns, "app": f"gunicorn 2 workers x 8 threads on CPU {APP_CPU}",
    }  # fmt: skip
    if not os.path.exists(XSENDFILE_SO):
        point |= {"status": "failed", "error": f"{XSENDFILE_SO} missing (libapache2-mod-xsendfile)"}
        return point
    try:
        application = app(base)
    except RuntimeError as e:
        point |= {"status": "failed", "error": str(e)}
        return point
    docroot = os.path.join(base, "trees", s.tree)
    if not os.path.isdir(docroot):
        os.makedirs(docroot)
        os.chmod(docroot, 0o755)
        # The static copy is the application's own file (same bytes, same name).
        os.symlink(application.files, os.path.join(docroot, "files"))
    front = os.path.join(docroot, "front")
    os.makedirs(front, exist_ok=True)
    os.chmod(front, 0o755)
    with open(os.path.join(front, ".htaccess"), "w") as f:
        f.write(FRONT.format(app_port=application.port))
    os.chmod(os.path.join(front, ".htaccess"), 0o644)
    rundir = tempfile.mkdtemp(prefix="run-", dir=base)
    port = servers.free_port()
    cmd = servers.write_config(s.server, rundir, docroot, port, s.override, s.pinned)
    conf = cmd[2]  # [binary, "-f", path, ...] for both
    with open(conf, "a") as f:
        f.write(EXTRA.format(xsendfile_so=XSENDFILE_SO, app_port=application.port, files=application.files))
    server = servers.Server(s.server, cmd, rundir, port, s.pinned)
    try:
        try:
            server.wait_ready(s.path)
            problem = _check(port, s.path)
        except (RuntimeError, OSError) as e:
            point |= {"status": "failed", "error": str(e)[-1500:]}
            return point
        if problem:
            point |= {"status": "failed", "error": f"{problem}; error log: {server.output()[-400:]}"}
            return point
        url = f"http://127.0.0.1:{port}{s.path}"
        if settings["warmup"]:
            measure.wrk(server, url, settings["warmup"], connections=s.conns)
        runs = [_quiet(server, application, url, settings, s.conns) for _ in range(settings["runs"])]
        point["runs"] = runs
        point.update(measure.summarise(runs))
        app_cpu = sorted(r["app_cpu_us_per_req"] for r in runs if r["app_cpu_us_per_req"] is not None)
        point["app_cpu_us_per_req_median"] = app_cpu[len(app_cpu) // 2] if app_cpu else None
        point["status"] = "ok" if point["non2xx_total"] == 0 else "errors"
        return point
    finally:
        server.stop()
        shutil.rmtree(rundir, ignore_errors=True)
