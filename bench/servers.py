"""Configuration files and start/stop for every server under test.

Every server: one listening address on loopback, the 19-byte page, access
logging off, the error log to a file, keep-alive unlimited or as high as the
server allows. htaccel and Apache read the same Apache-syntax text; only the
MPM block and the run-time paths are Apache's alone.
"""

import os
import shutil
import signal
import socket
import subprocess
import time

APACHE_MODULES = """\
LoadModule mpm_event_module   modules/mod_mpm_event.so
LoadModule authz_core_module  modules/mod_authz_core.so
LoadModule authz_host_module  modules/mod_authz_host.so
LoadModule authz_user_module  modules/mod_authz_user.so
LoadModule authn_core_module  modules/mod_authn_core.so
LoadModule access_compat_module modules/mod_access_compat.so
LoadModule mime_module        modules/mod_mime.so
LoadModule dir_module         modules/mod_dir.so
LoadModule alias_module       modules/mod_alias.so
LoadModule rewrite_module     modules/mod_rewrite.so
LoadModule headers_module     modules/mod_headers.so
LoadModule expires_module     modules/mod_expires.so
LoadModule env_module         modules/mod_env.so
LoadModule setenvif_module    modules/mod_setenvif.so
"""

# Shared by Apache and htaccel. No CustomLog: access logging is off.
COMMON = """\
ServerRoot /usr/lib/apache2
ErrorLog {rundir}/error.log
LogLevel warn
{modules}
User www-data
Group www-data
Listen 127.0.0.1:{port}
ServerName localhost
ServerTokens Prod
ServerSignature Off
HostnameLookups Off
TypesConfig /etc/mime.types
AddDefaultCharset Off
KeepAlive On
MaxKeepAliveRequests 0
KeepAliveTimeout {keepalive_timeout}
Timeout 60
EnableMMAP On
EnableSendfile {sendfile}
DocumentRoot "{docroot}"
AccessFileName .htaccess
<Directory />
    Options FollowSymLinks
    AllowOverride None
    Require all denied
</Directory>
<Directory "{docroot}">
    Options FollowSymLinks
    AllowOverride {override}
    Require all granted
</Directory>
DirectoryIndex index.html
<FilesMatch "^\\.ht">
    Require all denied
</FilesMatch>
"""

APACHE_ONLY = """\
Mutex file:{rundir} default
PidFile {rundir}/httpd.pid
DefaultRuntimeDir {rundir}
StartServers 1
ServerLimit 1
ThreadsPerChild 64
ThreadLimit 64
MaxRequestWorkers 64
MinSpareThreads 1
MaxSpareThreads 64
MaxConnectionsPerChild 0
"""

NGINX = """\
daemon off;
master_process on;
worker_processes {workers};
pid {rundir}/nginx.pid;
error_log {rundir}/error.log warn;
events {{ worker_connections 20000; }}
http {{
    access_log off;
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    keepalive_timeout 60s;
    client_body_temp_path {rundir}/body;
    proxy_temp_path {rundir}/proxy;
    fastcgi_temp_path {rundir}/fastcgi;
    uwsgi_temp_path {rundir}/uwsgi;
    scgi_temp_path {rundir}/scgi;
    server {{
        listen 127.0.0.1:{port};
        root {docroot};
        location / {{ }}
{extra}    }}
}}
"""

LIGHTTPD = """\
server.modules = ( "mod_indexfile", "mod_staticfile" )
server.document-root = "{docroot}"
server.bind = "127.0.0.1"
server.port = {port}
server.errorlog = "{rundir}/error.log"
server.pid-file = "{rundir}/lighttpd.pid"
server.max-worker = {lighttpd_workers}
server.max-keep-alive-requests = 1000000
server.max-keep-alive-idle = 60
server.max-fds = 20000
index-file.names = ( "index.html" )
mimetype.assign = ( ".html" => "text/html" )
"""

H2O = """\
user: nobody
pid-file: {rundir}/h2o.pid
error-log: {rundir}/error.log
num-threads: {workers}
max-connections: 20000
http1-request-timeout: 60
listen:
  host: 127.0.0.1
  port: {port}
hosts:
  default:
    paths:
      /:
        file.dir: {docroot}
"""

CADDY = """\
{{
    admin off
    auto_https off
    log {{
        output file {rundir}/error.log
    }}
}}
http://:{port} {{
    bind 127.0.0.1
    root * {docroot}
    file_server
}}
"""

PEERS = ("nginx", "lighttpd", "h2o", "caddy")
BINARIES = {
    "apache": "/usr/sbin/apache2",
    "nginx": "/usr/sbin/nginx",
    "lighttpd": "/usr/sbin/lighttpd",
    "h2o": "/usr/bin/h2o",
    "caddy": "/usr/bin/caddy",
}


def present_peers():
    return [p for p in PEERS if shutil.which(BINARIES[p]) or os.path.exists(BINARIES[p])]


def free_port(start=28180):
    for port in range(start, start + 200):
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise RuntimeError("no free port")


def _cpus():
    return len(os.sched_getaffinity(0))


def write_config(server, rundir, docroot, port, override="None", pinned=True, keepalive_timeout=60,
                 sendfile="Off", extra=""):
    """Write `server`'s configuration under `rundir`; return the command line.

    `sendfile` is Apache's and htaccel's EnableSendfile (nginx, lighttpd
    and h2o send files with sendfile(2) as configured here). `extra` is
    configuration text in the server's own language: appended to Apache's
    and htaccel's file and lighttpd's, placed in nginx's `server` block;
    h2o and Caddy take none."""
    os.makedirs(rundir, exist_ok=True)
    os.chmod(rundir, 0o777)
    workers = 1 if pinned else _cpus()
    # lighttpd: 0 is its single process; N > 0 forks N workers (on both
    # cores: one per CPU, like nginx's worker_processes and h2o's threads).
    lighttpd_workers = 0 if pinned else workers
    v = dict(
        rundir=rundir,
        docroot=docroot,
        port=port,
        override=override,
        modules=APACHE_MODULES,
        workers=workers,
        lighttpd_workers=lighttpd_workers,
        keepalive_timeout=keepalive_timeout,
        sendfile=sendfile,
        extra=extra,
    )
    if extra and server in ("h2o", "caddy"):
        raise ValueError(f"no extra configuration for {server}")
    if server == "htaccel":
        path = os.path.join(rundir, "htaccel.conf")
        text = COMMON.format(**v) + extra
        cmd = [os.environ.get("HTACCEL_BIN", "target/release/htaccel"), "-f", path]
    elif server == "apache":
        path = os.path.join(rundir, "httpd.conf")
        text = APACHE_ONLY.format(**v) + COMMON.format(**v) + extra
        cmd = [BINARIES["apache"], "-f", path, "-DFOREGROUND"]
    elif server == "nginx":
        path = os.path.join(rundir, "nginx.conf")
        text = NGINX.format(**v)
        cmd = [BINARIES["nginx"], "-c", path, "-p", rundir]
    elif server == "lighttpd":
        path = os.path.join(rundir, "lighttpd.conf")
        text = LIGHTTPD.format(**v) + extra
        cmd = [BINARIES["lighttpd"], "-D", "-f", path]
    elif server == "h2o":
        path = os.path.join(rundir, "h2o.conf")
        text = H2O.format(**v)
        cmd = [BINARIES["h2o"], "-c", path]
    elif server == "caddy":
        path = os.path.join(rundir, "Caddyfile")
        text = CADDY.format(**v)
        cmd = [BINARIES["caddy"], "run", "--config", path, "--adapter", "caddyfile"]
    else:
        raise ValueError(server)
    with open(path, "w") as f:
        f.write(text)
    return cmd


class Server:
    """A running server: its process group, and its whole process tree for
    CPU and memory accounting."""

    def __init__(self, name, cmd, rundir, port, pinned, nofile=None):
        self.name, self.port, self.rundir = name, port, rundir
        prefix = ["taskset", "-c", "0"] if pinned else []
        env = dict(os.environ)
        if name == "caddy":
            env["HOME"] = rundir
            env["XDG_DATA_HOME"] = rundir
            env["XDG_CONFIG_HOME"] = rundir

        def preexec():
            os.setsid()
            if nofile:
                import resource

                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        self.log = open(os.path.join(rundir, "stdout.log"), "wb")
        self.proc = subprocess.Popen(
            prefix + cmd, stdout=self.log, stderr=subprocess.STDOUT, preexec_fn=preexec, env=env
        )

    def wait_ready(self, path="/", timeout=15):
        """Wait until the port answers HTTP; return the status line of `path`."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited: {self.output()}")
            try:
                return http_get(self.port, path)
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"{self.name} did not answer on port {self.port}: {self.output()}")

    def output(self):
        text = ""
        for name in ("stdout.log", "error.log"):
            try:
                with open(os.path.join(self.rundir, name), errors="replace") as f:
                    text += f.read()[-2000:]
            except OSError:
                pass
        return text.strip()

    def pids(self):
        return process_tree(self.proc.pid)

    def stop(self):
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        # Apache and nginx children may outlive the parent for a moment.
        deadline = time.time() + 5
        while time.time() < deadline:
            try:
                os.killpg(self.proc.pid, 0)
                time.sleep(0.05)
            except ProcessLookupError:
                break
        else:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.log.close()


def process_tree(root):
    """`root` and every descendant."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_split(pids):
    """(utime, stime) (all threads) of the given processes, in seconds: the
    server's own code and the kernel's work for it."""
    user = system = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        user += int(fields[11])
        system += int(fields[12])
    return user / CLK_TCK, system / CLK_TCK


def cpu_seconds(pids):
    """utime + stime (all threads) of the given processes, in seconds."""
    return sum(cpu_split(pids))


def rss_kib(pids):
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            continue
    return total


def http_get(port, path, timeout=5):
    """One request on a fresh connection: (status, headers dict)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    if not head or not head[0].startswith("HTTP/"):
        raise OSError("no HTTP answer")
    headers = {}
    for line in head[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return int(head[0].split()[1]), headers


def version(server, htaccel_bin):
    def run(cmd):
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
            return (r.stdout + r.stderr).strip().splitlines()[0]
        except (OSError, IndexError, subprocess.TimeoutExpired):
            return "unknown"

    return {
        "htaccel": lambda: run([htaccel_bin, "--version"]),
        "apache": lambda: run([BINARIES["apache"], "-v"]),
        "nginx": lambda: run([BINARIES["nginx"], "-v"]),
        "lighttpd": lambda: run([BINARIES["lighttpd"], "-v"]),
        "h2o": lambda: run([BINARIES["h2o"], "-v"]),
        "caddy": lambda: run([BINARIES["caddy"], "version"]),
        "wrk": lambda: run(["dpkg-query", "-W", "-f=wrk ${Version}", "wrk"]),
    }[server]()
