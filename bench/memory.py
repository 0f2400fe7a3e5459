"""Memory: resident set size of a server's process tree when idle, with
10,000 idle keep-alive connections, and after requests have touched
100,000 directories (each one a compiled-config level, a metadata entry
and, with inotify, a watch)."""

import os
import resource
import socket
import threading
import time

import servers
from httpclient import Conn

PAGE = b"<h1>It works!</h1>\n"


def raise_nofile(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (n, max(n, hard)))
        except (ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def make_dirs(docroot, count, fanout=1000):
    """`count` directories d/NNN/MMM, each with one page; return their URLs."""
    urls = []
    for i in range(count):
        top, leaf = divmod(i, fanout)
        d = os.path.join(docroot, "d", f"{top:03d}", f"{leaf:03d}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "i.html"), "wb") as f:
            f.write(PAGE)
        urls.append(f"/d/{top:03d}/{leaf:03d}/i.html")
    for dirpath, _, files in os.walk(docroot):
        os.chmod(dirpath, 0o755)
    return urls


def inotify_watches(pids):
    """Number of inotify watches the processes hold (from fdinfo)."""
    total = 0
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fdinfo")
        except OSError:
            continue
        for fd in fds:
            try:
                with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                    total += sum(1 for line in f if line.startswith("inotify wd:"))
            except OSError:
                continue
    return total


def idle_connections(port, count):
    """Open `count` connections, one answered request each, left open."""
    socks, failed = [], 0
    req = b"GET /index.html HTTP/1.1\r\nHost: localhost\r\n\r\n"
    for _ in range(count):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(req)
            data = b""
            while not data.endswith(PAGE):
                chunk = s.recv(4096)
                if not chunk:
                    raise ConnectionError("closed")
                data += chunk
            socks.append(s)
        except OSError:
            failed += 1
    return socks, failed


def touch(port, urls, clients=4):
    """Request every URL once, spread over `clients` keep-alive connections."""
    statuses = {}
    lock = threading.Lock()

    def worker(part):
        conn, seen = Conn(port), {}
        for url in part:
            try:
                conn.send(url)
                status, _ = conn.read()
            except OSError:
                conn.close()
                status = "error"
            seen[status] = seen.get(status, 0) + 1
        conn.close()
        with lock:
            for k, v in seen.items():
                statuses[k] = statuses.get(k, 0) + v

    threads = [threading.Thread(target=worker, args=(urls[i::clients],)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {str(k): v for k, v in statuses.items()}


def run(server, docroot, connections=10000, directories=100000):
    raise_nofile(connections + 1000)
    pids = server.pids()
    out = {"server": server.name}
    servers.http_get(server.port, "/index.html")
    time.sleep(0.5)
    out["rss_idle_kib"] = servers.rss_kib(pids)
    t = time.monotonic()
    socks, failed = idle_connections(server.port, connections)
    time.sleep(1.0)
    out["idle_connections"] = len(socks)
    out["idle_connections_failed"] = failed
    out["rss_with_idle_connections_kib"] = servers.rss_kib(server.pids())
    out["connect_seconds"] = round(time.monotonic() - t - 1.0, 2)
    for s in socks:
        s.close()
    time.sleep(1.0)
    out["rss_after_closing_kib"] = servers.rss_kib(server.pids())
    t = time.monotonic()
    urls = make_dirs(docroot, directories)
    out["make_dirs_seconds"] = round(time.monotonic() - t, 1)
    t = time.monotonic()
    out["touch_statuses"] = touch(server.port, urls)
    out["touch_seconds"] = round(time.monotonic() - t, 1)
    time.sleep(0.5)
    out["directories"] = directories
    out["rss_after_directories_kib"] = servers.rss_kib(server.pids())
    out["inotify_watches"] = inotify_watches(server.pids())
    return out
