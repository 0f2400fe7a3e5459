"""Hostile access files, hostile clients and file-system faults, each with a
stated bound on time and memory, measured on htaccel and, beside it, on
Apache 2.4 with the same tree (`tests/oracle/serve-equivalent.conf`).

    python3 tests/security/hostile.py [--full] [--only NAME]

Run by scripts/test.sh in its bounded form; `--full` uses the campaign's
sizes (more slow clients, longer churn). Each scenario is a function that
gets a fresh document root, starts the servers it needs, measures, and
returns its findings; a scenario fails when htaccel breaks its bound.
Apache's figures are recorded, never judged: where Apache does worse, the
report says so. The results go to target/security/hostile.json for
docs/security.md (scripts/security_report.py); the last line is
`hostile: N passed, M failed`.

Only loopback addresses are used. Standard library only.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FULL = "--full" in sys.argv
ONLY = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
HTACCEL = os.environ.get("HTACCEL_BIN") or os.path.join(REPO, "target/debug/htaccel")
APACHE = shutil.which("apache2") or "/usr/sbin/apache2"
ORACLE = os.path.join(REPO, "tests/oracle/serve-equivalent.conf")
MIB = 1024 * 1024


# ---------------------------------------------------------------- servers

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port, proc, seconds=15):
    until = time.time() + seconds
    while time.time() < until:
        if proc.poll() is not None:
            raise RuntimeError("server exited with %s" % proc.returncode)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("server did not listen on %d" % port)


class Server:
    """htaccel (`serve DOCROOT`) or Apache (the oracle configuration)."""

    def __init__(self, kind, docroot, rundir, nofile=None, extra_conf=None):
        self.kind = kind
        self.port = free_port()
        self.tls_port = free_port() if extra_conf else None
        pre = None
        if nofile:
            pre = lambda: __import__("resource").setrlimit(  # noqa: E731
                __import__("resource").RLIMIT_NOFILE, (nofile, nofile))
        self.log = open(os.path.join(rundir, kind + ".log"), "wb")
        if kind == "htaccel" and not extra_conf:
            cmd = [HTACCEL, "serve", docroot, "--listen", "127.0.0.1:%d" % self.port]
        else:
            # The oracle configuration, with the scenario's lines; htaccel
            # then reads the same text (`-f`), as in the differential cases.
            conf = open(ORACLE).read() + "\n" + (extra_conf or "")
            conf = (conf.replace("@LISTEN@", "127.0.0.1:%d" % self.port)
                    .replace("@LISTEN_TLS@", "127.0.0.1:%d" % (self.tls_port or 0))
                    .replace("@TLS_PORT@", str(self.tls_port or 0))
                    .replace("@DOCROOT@", docroot).replace("@RUNDIR@", rundir))
            path = os.path.join(rundir, kind + ".conf")
            with open(path, "w") as f:
                f.write(conf)
            if kind == "htaccel":
                cmd = [HTACCEL, "-f", path]
            else:
                cmd = [APACHE, "-f", path, "-DFOREGROUND"]
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log,
                                     preexec_fn=pre, start_new_session=True)
        wait_listening(self.port, self.proc)

    def pids(self):
        """The server's process and its children (Apache's workers)."""
        pids = {self.proc.pid}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open("/proc/%s/stat" % entry) as f:
                        fields = f.read().rsplit(")", 1)[1].split()
                    if int(fields[1]) == self.proc.pid:
                        pids.add(int(entry))
                except OSError:
                    pass
        return pids

    def rss(self):
        """Resident memory of the server's processes together, in bytes."""
        total = 0
        for pid in self.pids():
            try:
                with open("/proc/%d/status" % pid) as f:
                    for line in f:
                        if line.startswith("VmRSS:"):
                            total += int(line.split()[1]) * 1024
            except OSError:
                pass
        return total

    def cpu_seconds(self):
        """User and system time of the server's processes together."""
        ticks = os.sysconf("SC_CLK_TCK")
        total = 0
        for pid in self.pids():
            try:
                with open("/proc/%d/stat" % pid) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])
            except OSError:
                pass
        return total / ticks

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()


def request(port, path, timeout=5.0, head=None):
    """One GET on its own connection: (status or None, seconds, body)."""
    start = time.time()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall((head or "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n" % path).encode())
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
    except OSError:
        return None, time.time() - start, b""
    status = None
    if data.startswith(b"HTTP/"):
        try:
            status = int(data.split(b" ", 2)[1])
        except (IndexError, ValueError):
            pass
    return status, time.time() - start, data.partition(b"\r\n\r\n")[2]


def p99(samples):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


# ---------------------------------------------------------------- scenarios

SCENARIOS = []


def scenario(bound):
    def register(fn):
        SCENARIOS.append((fn.__name__, fn.__doc__.strip().split("\n")[0], bound, fn))
        return fn
    return register


def site(root):
    os.makedirs(os.path.join(root, "d"), exist_ok=True)
    with open(os.path.join(root, "d", "s.txt"), "w") as f:
        f.write("HTACCEL-SECRET-hostile\n")
    with open(os.path.join(root, "index.html"), "w") as f:
        f.write("home\n")


def first_answer(kind, root, rundir, path="/d/s.txt"):
    """Starts a server, times its first answer to `path` and 20 more, and
    reports status, latency, CPU and memory growth."""
    server = Server(kind, root, rundir)
    try:
        before = server.rss()
        cpu = server.cpu_seconds()
        status, first, body = request(server.port, path, timeout=30)
        worst = first
        for _ in range(20):
            worst = max(worst, request(server.port, path, timeout=30)[1])
        return {"status": status, "first_s": round(first, 3), "worst_s": round(worst, 3),
                "cpu_s": round(server.cpu_seconds() - cpu, 3),
                "rss_growth_mib": round((server.rss() - before) / MIB, 1),
                "leaked": b"HTACCEL-SECRET" in body, "alive": server.alive()}
    finally:
        server.stop()


def access_file_case(root, rundir, write, limit_s, limit_mib, apache=True):
    site(root)
    write(os.path.join(root, "d", ".htaccess"))
    ours = first_answer("htaccel", root, rundir)
    theirs = first_answer("apache", root, rundir) if apache else None
    ok = (ours["alive"] and not ours["leaked"] and ours["status"] is not None
          and ours["worst_s"] <= limit_s and ours["rss_growth_mib"] <= limit_mib)
    return ok, ours, theirs


@scenario("every answer within 2 s, memory growth <= 64 MiB, no secret")
def access_file_10mb(root, rundir):
    """A 10 MB .htaccess of comments"""
    def write(path):
        with open(path, "w") as f:
            f.write(("# " + "x" * 98 + "\n") * (10 * 1024 * 1024 // 100) + "Require all denied\n")
    return access_file_case(root, rundir, write, 2.0, 64)


@scenario("every answer within 2 s, memory growth <= 64 MiB, no secret")
def access_file_200k_directives(root, rundir):
    """A .htaccess of 200,000 directives"""
    def write(path):
        with open(path, "w") as f:
            f.write("Require all denied\n")
            f.write("Header set X-A b\n" * 200_000)
    return access_file_case(root, rundir, write, 2.0, 64)


@scenario("every answer within 2 s, memory growth <= 64 MiB, no secret")
def access_file_deep_nesting(root, rundir):
    """A .htaccess of 5,000 nested sections"""
    def write(path):
        with open(path, "w") as f:
            f.write("Require all denied\n")
            f.write("<IfModule !mod_nothing.c>\n" * 5000)
            f.write("Header set X-A b\n")
            f.write("</IfModule>\n" * 5000)
    return access_file_case(root, rundir, write, 2.0, 64)


@scenario("every answer within 2 s, memory growth <= 64 MiB, no secret")
def access_file_fifo(root, rundir):
    """A .htaccess that is a FIFO nobody writes"""
    return access_file_case(root, rundir, os.mkfifo, 2.0, 64, apache=False)


@scenario("every answer within 2 s, memory growth <= 64 MiB, no secret")
def access_file_dev_zero(root, rundir):
    """A .htaccess that is a symbolic link to /dev/zero"""
    return access_file_case(root, rundir, lambda p: os.symlink("/dev/zero", p), 2.0, 64,
                            apache=False)


@scenario("every answer within 2 s, memory growth <= 64 MiB, no secret")
def access_file_binary(root, rundir):
    """A .htaccess of 1 MiB of random bytes"""
    def write(path):
        with open(path, "wb") as f:
            f.write(b"Require all denied\n" + os.urandom(MIB - 64))
    return access_file_case(root, rundir, write, 2.0, 64)


@scenario("a normal client's p99 <= 0.5 s, memory growth <= 64 MiB, server alive")
def slow_clients(root, rundir):
    """Slowloris: connections that send a head a byte at a time, while a normal client asks"""
    site(root)
    count = 1000 if FULL else 200
    results = {}
    for kind in ("htaccel", "apache"):
        server = Server(kind, root, rundir)
        stop = threading.Event()
        socks = []
        try:
            before = server.rss()
            for _ in range(count):
                try:
                    s = socket.create_connection(("127.0.0.1", server.port), timeout=2)
                    s.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\n")
                    socks.append(s)
                except OSError:
                    break

            def drip():
                while not stop.wait(1.0):
                    for s in socks:
                        try:
                            s.send(b"X-a: b\r\n")
                        except OSError:
                            pass
            t = threading.Thread(target=drip, daemon=True)
            t.start()
            latencies, failures = [], 0
            for _ in range(100 if FULL else 50):
                status, took, _ = request(server.port, "/index.html", timeout=10)
                latencies.append(took)
                failures += status != 200
            results[kind] = {"slow_connections": len(socks), "p99_s": round(p99(latencies), 3),
                             "failed_requests": failures,
                             "rss_growth_mib": round((server.rss() - before) / MIB, 1),
                             "alive": server.alive()}
        finally:
            stop.set()
            for s in socks:
                s.close()
            server.stop()
    ours = results["htaccel"]
    ok = (ours["alive"] and ours["failed_requests"] == 0 and ours["p99_s"] <= 0.5
          and ours["rss_growth_mib"] <= 64)
    return ok, ours, results["apache"]


@scenario("memory growth <= 64 MiB with the readers stalled, a normal client's p99 <= 0.5 s")
def greedy_readers(root, rundir):
    """Clients that ask for a 20 MB file and never read"""
    site(root)
    with open(os.path.join(root, "big.bin"), "wb") as f:
        f.write(os.urandom(20 * MIB))
    count = 200 if FULL else 50
    results = {}
    for kind in ("htaccel", "apache"):
        server = Server(kind, root, rundir)
        socks = []
        try:
            before = server.rss()
            for _ in range(count):
                s = socket.socket()
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                s.connect(("127.0.0.1", server.port))
                s.sendall(b"GET /big.bin HTTP/1.1\r\nHost: localhost\r\n\r\n")
                socks.append(s)
            time.sleep(1.0)
            latencies, failures = [], 0
            for _ in range(50):
                status, took, _ = request(server.port, "/index.html", timeout=10)
                latencies.append(took)
                failures += status != 200
            results[kind] = {"stalled_readers": len(socks), "p99_s": round(p99(latencies), 3),
                             "failed_requests": failures,
                             "rss_growth_mib": round((server.rss() - before) / MIB, 1),
                             "alive": server.alive()}
        finally:
            for s in socks:
                s.close()
            server.stop()
    ours = results["htaccel"]
    ok = (ours["alive"] and ours["failed_requests"] == 0 and ours["p99_s"] <= 0.5
          and ours["rss_growth_mib"] <= 64)
    return ok, ours, results["apache"]


@scenario("the server survives descriptor exhaustion and serves again once connections close")
def descriptors_exhausted(root, rundir):
    """More connections than the process may open descriptors"""
    site(root)
    results = {}
    for kind in ("htaccel", "apache"):
        server = Server(kind, root, rundir, nofile=256)
        socks = []
        try:
            for _ in range(400):
                try:
                    s = socket.create_connection(("127.0.0.1", server.port), timeout=1)
                    socks.append(s)
                except OSError:
                    break
            time.sleep(0.5)
            for s in socks:
                s.close()
            socks = []
            time.sleep(1.5)
            statuses = [request(server.port, "/index.html", timeout=10)[0] for _ in range(20)]
            results[kind] = {"served_after": statuses.count(200), "of": len(statuses),
                             "alive": server.alive()}
        finally:
            for s in socks:
                s.close()
            server.stop()
    ours = results["htaccel"]
    return ours["alive"] and ours["served_after"] == ours["of"], ours, results["apache"]


@scenario("no crash and no secret while the document root disappears and returns")
def docroot_faults(root, rundir):
    """The document root removed, replaced by a file, and restored under requests"""
    site(root)
    results = {}
    for kind in ("htaccel", "apache"):
        server = Server(kind, root, rundir)
        try:
            seen = []
            aside = root + ".aside"
            os.rename(root, aside)
            seen.append(request(server.port, "/index.html")[0])
            with open(root, "w") as f:
                f.write("HTACCEL-SECRET-not-a-directory\n")
            status, _, body = request(server.port, "/index.html")
            seen.append(status)
            leaked = b"HTACCEL-SECRET" in body
            os.remove(root)
            os.rename(aside, root)
            seen.append(request(server.port, "/index.html")[0])
            results[kind] = {"statuses": seen, "leaked": leaked, "alive": server.alive()}
        finally:
            if not os.path.isdir(root):
                if os.path.exists(root):
                    os.remove(root)
                os.rename(root + ".aside", root)
            server.stop()
    ours = results["htaccel"]
    ok = ours["alive"] and not ours["leaked"] and ours["statuses"][-1] == 200
    return ok, ours, results["apache"]


def tls_conf(rundir):
    """mod_ssl on a second port with a fresh self-signed certificate."""
    crt, key = os.path.join(rundir, "tls.crt"), os.path.join(rundir, "tls.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-nodes", "-keyout", key, "-out", crt, "-days", "2", "-subj", "/CN=localhost"],
                   check=True, capture_output=True)
    os.chmod(key, 0o644)
    return ("LoadModule ssl_module modules/mod_ssl.so\n"
            "Listen @LISTEN_TLS@ https\n"
            "<VirtualHost *:@TLS_PORT@>\n"
            "    SSLEngine on\n"
            "    SSLCertificateFile %s\n"
            "    SSLCertificateKeyFile %s\n"
            "</VirtualHost>\n" % (crt, key))


def https_request(port, path="/index.html", timeout=10.0):
    import ssl
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    start = time.time()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as raw:
            with ctx.wrap_socket(raw, server_hostname="localhost") as s:
                s.sendall(("GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n" % path).encode())
                data = b""
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    data += chunk
    except (OSError, ValueError):
        return None, time.time() - start
    ok = data.startswith(b"HTTP/1.1 200")
    return (200 if ok else 0), time.time() - start


@scenario("a normal HTTPS client's p99 <= 0.5 s, memory growth <= 64 MiB, server alive")
def tls_handshake_stalls(root, rundir):
    """TLS connections that stall mid-handshake (a partial ClientHello, or nothing), while a normal HTTPS client asks"""
    site(root)
    conf = tls_conf(rundir)
    count = 1000 if FULL else 300
    results = {}
    for kind in ("htaccel", "apache"):
        server = Server(kind, root, rundir, extra_conf=conf)
        socks = []
        try:
            before = server.rss()
            for i in range(count):
                try:
                    s = socket.create_connection(("127.0.0.1", server.tls_port), timeout=2)
                    if i % 2 == 0:
                        # A TLS record header announcing a ClientHello that never comes.
                        s.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")
                    socks.append(s)
                except OSError:
                    break
            latencies, failures = [], 0
            for _ in range(40):
                status, took = https_request(server.tls_port)
                latencies.append(took)
                failures += status != 200
            results[kind] = {"stalled_handshakes": len(socks), "p99_s": round(p99(latencies), 3),
                             "failed_requests": failures,
                             "rss_growth_mib": round((server.rss() - before) / MIB, 1),
                             "alive": server.alive()}
        finally:
            for s in socks:
                s.close()
            server.stop()
    ours = results["htaccel"]
    ok = (ours["alive"] and ours["failed_requests"] == 0 and ours["p99_s"] <= 0.5
          and ours["rss_growth_mib"] <= 64)
    return ok, ours, results["apache"]


@scenario("server CPU per full handshake stated; a normal HTTPS client's p99 <= 1 s during the flood; server alive")
def tls_handshake_flood(root, rundir):
    """Full TLS handshakes as fast as two client threads can make them, each closed at once"""
    site(root)
    conf = tls_conf(rundir)
    seconds = 10 if FULL else 3
    results = {}
    for kind in ("htaccel", "apache"):
        server = Server(kind, root, rundir, extra_conf=conf)
        try:
            import ssl
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            done = [0]
            stop = time.time() + seconds

            def flood():
                while time.time() < stop:
                    try:
                        with socket.create_connection(("127.0.0.1", server.tls_port), timeout=5) as raw:
                            with ctx.wrap_socket(raw, server_hostname="localhost"):
                                done[0] += 1
                    except (OSError, ValueError):
                        pass
            cpu = server.cpu_seconds()
            threads = [threading.Thread(target=flood, daemon=True) for _ in range(2)]
            for t in threads:
                t.start()
            latencies, failures = [], 0
            while time.time() < stop:
                status, took = https_request(server.tls_port)
                latencies.append(took)
                failures += status != 200
            for t in threads:
                t.join()
            used = server.cpu_seconds() - cpu
            results[kind] = {"handshakes": done[0],
                             "cpu_ms_per_handshake": round(1000 * used / max(done[0], 1), 2),
                             "p99_s": round(p99(latencies), 3) if latencies else None,
                             "failed_requests": failures, "alive": server.alive()}
        finally:
            server.stop()
    ours = results["htaccel"]
    ok = (ours["alive"] and ours["failed_requests"] == 0 and ours["p99_s"] is not None
          and ours["p99_s"] <= 1.0 and ours["handshakes"] > 0)
    return ok, ours, results["apache"]


# ---------------------------------------------------------------- driver

def main():
    if not os.path.exists(HTACCEL):
        print("hostile: htaccel binary not found at %s (cargo build -p htaccel)" % HTACCEL)
        return 2
    out = []
    passed = failed = 0
    for name, what, bound, fn in SCENARIOS:
        if ONLY and ONLY not in name:
            continue
        work = tempfile.mkdtemp(prefix="htaccel-hostile.")
        os.chmod(work, 0o755)
        root = os.path.join(work, "root")
        rundir = os.path.join(work, "run")
        os.makedirs(root)
        os.makedirs(rundir)
        started = time.time()
        try:
            ok, ours, apache = fn(root, rundir)
            error = None
        except Exception as e:  # a scenario that cannot run is a failure
            ok, ours, apache, error = False, None, None, repr(e)
        seconds = round(time.time() - started, 1)
        passed += ok
        failed += not ok
        print("%-6s hostile/%s (%.1fs): htaccel %s; Apache %s%s" % (
            "ok" if ok else "FAIL", name, seconds, json.dumps(ours), json.dumps(apache),
            "; error " + error if error else ""))
        if not ok:
            logs = os.path.join(rundir, "htaccel.log")
            if os.path.exists(logs):
                print("  htaccel's log (tail):\n    " + "\n    ".join(
                    open(logs, errors="replace").read().splitlines()[-10:]))
        out.append({"name": name, "what": what, "bound": bound, "ok": bool(ok),
                    "htaccel": ours, "apache": apache, "error": error, "seconds": seconds,
                    "full": FULL})
        shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(REPO, "target/security"), exist_ok=True)
    with open(os.path.join(REPO, "target/security/hostile.json"), "w") as f:
        json.dump(out, f, indent=1)
    print("hostile: %d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
