"""Group G: how the cost of a request, start-up and memory grow with the
number of distinct files served and of virtual hosts configured.

Every other group asks for one URL, or for the 11,000 files of group R. A
server whose caches are bounded (htaccel's metadata cache holds 16,384
entries by default, its answer memo fewer) or whose start-up reads the
whole configuration may behave differently at a million files or ten
thousand virtual hosts. Each point here is one tree and one configuration,
served by htaccel and by Apache:

* Files (`files` points, N = 1, 100, 10,000, and 1,000,000 with `--full`):
  N small files (a dozen bytes each) in directories of 1,000, on a fresh
  ext4 file system per point (a loop-mounted image under /var/tmp, so that
  the tree is removed in seconds, not by a million unlinks), AllowOverride
  All with a small `.htaccess` at the document root (one `Header set`).
  The request list is the N files in a seeded random order, repeated until
  it has 100,000 lines (one pass of the million), so the mix spans every
  file; `wrk -t1 -c50` replays it with bench/replay.lua as group R does.
* Virtual hosts (`vhosts` points, N = 1, 100, 10,000): N name-based
  `<VirtualHost 127.0.0.1:PORT>` sections, each with its own ServerName
  (vN.test) and DocumentRoot holding an index.html; the same small
  `.htaccess` in the directory above the document roots (AllowOverride All
  there). The list spreads requests for / over every vhost's Host name
  ("HOST PATH" lines of bench/replay.lua).

Last (`vhost_order`): the largest vhost configuration asked only for its
first vhost's Host name, then only for its last's, which shows whether the
cost per request grows with the position of the host in the configuration.

Per point and server: start-up time (from starting the process to the
first 200 answer to a URL of the mix, polled every 10 ms; a timeout of
`--start-timeout` seconds is recorded as such), req/s and server CPU per
request under wrk (server on CPU 0, wrk on CPU 1, after a 2 s warm-up),
and the RSS of the server's processes after the runs. Three URLs of the
list (first, middle, last) are checked beforehand: their status, the
`.htaccess` header, and for virtual hosts that the body is that host's.

Usage: python3 bench/growth.py [--full] [--runs N] [--seconds S]
           [--only files|vhosts|order] [--out FILE]
Trees are generated under /var/tmp and removed afterwards. Results go to
bench/results/growth/<timestamp>.json; bench/fs_report.py makes
REPORT.md's section G from the newest.
"""

import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import measure
import servers

QUIET_DIR = "/var/tmp"
SEED = 22
LIST_LINES = 100_000
PER_DIR = 1000
ACCESS = b"Header set X-Growth on\n"
FILE_POINTS = (1, 100, 10_000)
FILE_POINTS_FULL = FILE_POINTS + (1_000_000,)
VHOST_POINTS = (1, 100, 10_000)
SERVERS = ("htaccel", "apache")


def _file_rel(i):
    return f"d{i // PER_DIR:04d}/f{i % PER_DIR:03d}.html"


def mount_tree(root, n):
    """A fresh ext4 file system for the tree, in a sparse image beside
    `root` and mounted there: unlinking a million files here takes half an
    hour (2-4 ms each); unmounting and deleting the image takes seconds.
    Small files live inside their inodes (inline_data). Returns how the tree
    is stored; a plain directory when the mount fails."""
    image = root + ".img"
    os.makedirs(root)
    try:
        with open(image, "wb") as f:
            f.truncate(8 << 30)
        subprocess.run(["mkfs.ext4", "-q", "-F", "-O", "inline_data", "-N", str(max(16384, n + n // 8)),
                        image], check=True, capture_output=True)
        # noinit_itable: no background zeroing of inode tables during the runs.
        subprocess.run(["mount", "-o", "loop,noinit_itable", image, root], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as e:
        if os.path.exists(image):
            os.remove(image)
        return f"plain directory (loop mount failed: {e})"
    os.chmod(root, 0o755)
    return "ext4 (inline_data) in a loop-mounted image under /var/tmp"


def unmount_tree(root):
    image = root + ".img"
    if os.path.exists(image):
        subprocess.run(["umount", root], capture_output=True)
        os.remove(image)
    shutil.rmtree(root, ignore_errors=True)


def write_files(root, n):
    """`n` small files under `root` and the root's .htaccess; return their
    relative paths. Plain os calls: a million files in about a minute."""
    for d in range((n + PER_DIR - 1) // PER_DIR):
        os.mkdir(os.path.join(root, f"d{d:04d}"))
    rels = [_file_rel(i) for i in range(n)]
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    for rel in rels:
        fd = os.open(os.path.join(root, rel), flags, 0o644)
        os.write(fd, rel.encode()[-11:] + b"\n")
        os.close(fd)
    with open(os.path.join(root, ".htaccess"), "wb") as f:
        f.write(ACCESS)
    return rels


def write_vhosts(root, n):
    """`n` document roots v0 .. v(n-1) under `root`, the .htaccess in
    `root`; return the configuration text of the `<VirtualHost>` sections
    (with PORT to fill in) and the host names."""
    os.makedirs(root)
    with open(os.path.join(root, ".htaccess"), "wb") as f:
        f.write(ACCESS)
    sections, hosts = [], []
    for i in range(n):
        d = os.path.join(root, f"v{i}")
        os.mkdir(d)
        with open(os.path.join(d, "index.html"), "wb") as f:
            f.write(f"vhost v{i}\n".encode())
        hosts.append(f"v{i}.test")
        sections.append(f'<VirtualHost 127.0.0.1:{{port}}>\n    ServerName v{i}.test\n'
                        f'    DocumentRoot "{d}"\n</VirtualHost>\n')
    return "".join(sections), hosts


def request_list(items, lines=LIST_LINES):
    """`items` in seeded random orders, one pass after another, until at
    least `lines` (at least one whole pass)."""
    rng = random.Random(SEED)
    out = []
    while len(out) < lines or not out:
        order = list(items)
        rng.shuffle(order)
        out.extend(order)
    return out


def get(port, host, path, timeout=5):
    """One request on a fresh connection: (status, headers, body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    if not lines[0].startswith("HTTP/"):
        raise OSError("no HTTP answer")
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return int(lines[0].split()[1]), headers, body


def start_timed(server, rundir, docroot, extra, probe, timeout):
    """Start `server`; return (process, seconds to the first 200 answer to
    `probe` (host, path)) or (None, why) when it did not answer in time."""
    port = servers.free_port()
    cmd = servers.write_config(server, rundir, docroot, port, "All", extra=extra.replace("{port}", str(port)))
    t0 = time.monotonic()
    proc = servers.Server(server, cmd, rundir, port, pinned=True)
    deadline = t0 + timeout
    while time.monotonic() < deadline:
        if proc.proc.poll() is not None:
            return None, f"exited with status {proc.proc.returncode}: {proc.output()[-300:]}"
        try:
            if get(port, *probe)[0] == 200:
                return proc, round(time.monotonic() - t0, 3)
        except OSError:
            pass
        time.sleep(0.01)
    proc.stop()
    return None, f"no 200 answer within {timeout} s"


def check(proc, lines, vhosts):
    """Status, the .htaccess header, and (vhosts) the body of three URLs of the list."""
    out = []
    for line in (lines[0], lines[len(lines) // 2], lines[-1]):
        host, path = line.split(" ") if vhosts else ("localhost", line)
        status, headers, body = get(proc.port, host, path)
        ok = status == 200 and headers.get("x-growth") == "on"
        if vhosts:
            ok = ok and body == f"vhost {host.split('.')[0]}\n".encode()
        out.append({"url": line, "status": status, "x_growth": headers.get("x-growth"), "ok": ok})
    return out


def measure_point(kind, n, server, base, docroot, extra, lines, runs, seconds, timeout, log):
    listing = os.path.join(base, f"list-{kind}-{n}.txt")
    if not os.path.exists(listing):
        with open(listing, "w") as f:
            f.write("\n".join(lines) + "\n")
    script = (os.path.join(os.path.dirname(os.path.abspath(__file__)), "replay.lua"), listing)
    first = lines[0].split(" ") if kind == "vhosts" else ("localhost", lines[0])
    rundir = os.path.join(base, "run", f"{kind}-{n}-{server}")
    point = {"kind": kind, "n": n, "server": server}
    proc, started = start_timed(server, rundir, docroot, extra, tuple(first), timeout)
    if proc is None:
        point["missing"] = started
        log(f"G {kind} {n:,} {server}: {started}")
        return point
    point["startup_s"] = started
    try:
        point["checks"] = check(proc, lines, kind == "vhosts")
        point["rss_kib_started"] = servers.rss_kib(proc.pids())
        url = f"http://127.0.0.1:{proc.port}/"
        measure.wrk(proc, url, 2, script=script)  # warm-up
        results = [measure.wrk(proc, url, seconds, script=script) for _ in range(runs)]
        point["rss_kib"] = servers.rss_kib(proc.pids())
    finally:
        proc.stop()
    point.update(runs=results, **measure.summarise(results))
    log(f"G {kind} {n:,} {server}: start {started} s, {point['rps_median']:,.0f} req/s, "
        f"{point['cpu_us_per_req_median']} µs/request, RSS {point['rss_kib'] / 1024:.1f} MiB, "
        f"checks {'ok' if all(c['ok'] for c in point['checks']) else point['checks']}, "
        f"non-2xx {point['non2xx_total']}")
    return point


def files_points(base, sizes, runs, seconds, timeout, log):
    out = []
    for n in sizes:
        root = os.path.join(base, f"files-{n}")
        stored = mount_tree(root, n)
        t0 = time.monotonic()
        rels = write_files(root, n)
        made = round(time.monotonic() - t0, 1)
        log(f"G files {n:,}: tree written in {made} s")
        lines = request_list(["/" + r for r in rels])
        try:
            for server in SERVERS:
                p = measure_point("files", n, server, base, root, "", lines, runs, seconds, timeout, log)
                p["tree_written_s"] = made
                p["tree_fs"] = stored
                out.append(p)
        finally:
            t0 = time.monotonic()
            unmount_tree(root)
            log(f"G files {n:,}: tree removed in {time.monotonic() - t0:.1f} s")
    return out


def vhosts_points(base, sizes, runs, seconds, timeout, log):
    out = []
    for n in sizes:
        root = os.path.join(base, f"vhosts-{n}")
        extra, hosts = write_vhosts(root, n)
        lines = request_list([f"{h} /" for h in hosts])
        try:
            for server in SERVERS:
                out.append(measure_point("vhosts", n, server, base, root, extra, lines, runs, seconds,
                                         timeout, log))
        finally:
            shutil.rmtree(root, ignore_errors=True)
    return out


def vhost_order(base, n, seconds, timeout, log):
    """Where the cost of many virtual hosts goes: the same `n`-vhost
    configuration asked only for its first vhost's Host, then only for its
    last's (`wrk -H`, no script)."""
    root = os.path.join(base, f"order-{n}")
    extra, hosts = write_vhosts(root, n)
    out = []
    try:
        for server in SERVERS:
            rundir = os.path.join(base, "run", f"order-{n}-{server}")
            proc, started = start_timed(server, rundir, root, extra, (hosts[0], "/"), timeout)
            if proc is None:
                out.append({"server": server, "n": n, "missing": started})
                continue
            try:
                for host in (hosts[0], hosts[-1]):
                    url = f"http://127.0.0.1:{proc.port}/"
                    measure.wrk(proc, url, 1, headers=[f"Host: {host}"])  # warm-up
                    r = measure.wrk(proc, url, seconds, headers=[f"Host: {host}"])
                    out.append({"server": server, "n": n, "host": host, **r})
                    log(f"G order {n:,} {server} {host}: {r['rps']:,.0f} req/s, {r['cpu_us_per_req']} µs/request")
            finally:
                proc.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--full", action="store_true", help="add the 1,000,000-file point")
    ap.add_argument("--runs", type=int, default=3, help="wrk runs per point")
    ap.add_argument("--seconds", type=int, default=5, help="seconds per wrk run")
    ap.add_argument("--only", choices=("files", "vhosts", "order"),
                    help="order: only the first-against-last Host run at the largest vhost count")
    ap.add_argument("--files", type=int, nargs="+", help="file counts instead of the mode's")
    ap.add_argument("--vhosts", type=int, nargs="+", help="virtual host counts instead of the mode's")
    ap.add_argument("--start-timeout", type=int, default=300, help="seconds a server may take to answer")
    ap.add_argument("--out", help="results file (default bench/results/growth/<timestamp>.json)")
    args = ap.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("growth.py needs wrk (apt-get install -y wrk)")
    here = os.path.dirname(os.path.abspath(__file__))
    os.environ.setdefault("HTACCEL_BIN", os.path.abspath(os.path.join(here, "..", "target", "release", "htaccel")))
    os.umask(0o022)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    files = args.files or (FILE_POINTS_FULL if args.full else FILE_POINTS)
    vhosts = args.vhosts or VHOST_POINTS
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    res = {"started": started, "loadavg_start": _loadavg(), "runs": args.runs, "seconds": args.seconds,
           "full": args.full, "start_timeout_s": args.start_timeout, "list_lines": LIST_LINES,
           "htaccel": servers.version("htaccel", os.environ["HTACCEL_BIN"]),
           "apache": servers.version("apache", ""), "wrk": servers.version("wrk", ""), "points": []}
    base = tempfile.mkdtemp(prefix="htaccel-growth-", dir=QUIET_DIR)
    os.chmod(base, 0o755)
    try:
        if args.only in (None, "files"):
            res["points"] += files_points(base, files, args.runs, args.seconds, args.start_timeout, log)
        if args.only in (None, "vhosts"):
            res["points"] += vhosts_points(base, vhosts, args.runs, args.seconds, args.start_timeout, log)
        if args.only in (None, "order"):
            res["vhost_order"] = vhost_order(base, max(vhosts), args.seconds, args.start_timeout, log)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    res["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    res["loadavg_end"] = _loadavg()
    out = args.out or os.path.join(here, "results", "growth", started.replace("-", "").replace(":", "") + ".json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
    log(f"results in {out}")
    print(out)


def _loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[:3]


if __name__ == "__main__":
    main()
