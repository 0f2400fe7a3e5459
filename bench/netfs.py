"""Group N: the document root on a file system inotify cannot watch.

The published experiment also ran with the document root on NFS. This
machine's kernel has no NFS client (/proc/filesystems lists no `nfs`; the
script records the list), so the docroot is served from a FUSE mount
instead: Debian's `bindfs` mirrors a backing directory under /var/tmp. A
FUSE file system reports statfs magic `fuse`, which htaccel treats like
NFS (crates/engine/src/watch.rs `remote_fs`): no inotify watch, every fact
about the directory revalidated by `stat` once per AccessFileCheckInterval
(2 s unless configured). The script checks that htaccel's error log says so.

The mount is made with the kernel's FUSE caches off (attr_timeout,
entry_timeout and negative_timeout 0), so that every `stat` and `open`
reaches the backing directory: what a server shows after a change is then
its own doing, not the mount's (an NFS client's attribute cache would add
its own delay to every server, Apache included).

Two measurements on that mount:

* Throughput (`throughput`): htaccel and Apache, each with AllowOverride
  All and the realistic 12 KB `.htaccess` of bench/scenarios.py, and with
  AllowOverride None; `wrk -t1 -c50` on /index.html as group A does
  (server on CPU 0, wrk on CPU 1): req/s, server CPU per request, and the
  bindfs daemon's CPU per request (the file system's own work; bindfs runs
  on CPU 0 with the server, where an NFS client's work would be done).

* Change-to-visible latency across two instances (`visibility`): two
  servers of one kind on two ports serve the same FUSE docroot, as two
  hosts of a fleet share one NFS export. A writer flips the docroot's
  `.htaccess` between `Header set X-Rules A` and `... B` through the
  backing directory (as another NFS client would: no inotify event reaches
  the mount), in place or by rename, and waits until both instances show
  the new rules before the next flip. One client per instance polls
  /index.html on a keep-alive connection without pause. For each write and
  instance: the time from the write's completion (close or rename
  returned) to the arrival of the first answer with the new rules among
  requests sent after that completion. htaccel with its default interval
  and with `AccessFileCheckInterval 0.5`; Apache (reads the file on every
  request) as the control.

Usage: python3 bench/netfs.py [--runs N] [--seconds S] [--writes N] [--out FILE]
Results go to bench/results/netfs/<timestamp>.json; bench/fs_report.py
makes REPORT.md's section N from the newest.
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import httpclient
import measure
import scenarios
import servers

QUIET_DIR = "/var/tmp"
MOUNT_OPTIONS = "attr_timeout=0,entry_timeout=0,negative_timeout=0"
DEFAULT_INTERVAL = 2.0  # AccessFileCheckInterval when not configured (watch.rs Settings)
RULES = {"A": b"Header set X-Rules A\n", "B": b"Header set X-Rules B\n"}

# Throughput points: (label, server, AllowOverride, access file).
POINTS = [
    ("htaccel, AllowOverride All (12 KB)", "htaccel", "All"),
    ("htaccel, AllowOverride None", "htaccel", "None"),
    ("apache, AllowOverride All (12 KB)", "apache", "All"),
    ("apache, AllowOverride None", "apache", "None"),
]
# Visibility rounds: (label, server, AccessFileCheckInterval or None).
ROUNDS = [
    ("htaccel, interval default (2 s)", "htaccel", None),
    ("htaccel, interval 0.5 s", "htaccel", 0.5),
    ("apache (control)", "apache", None),
]


def kernel_filesystems():
    with open("/proc/filesystems") as f:
        return [line.split()[-1] for line in f if line.strip()]


def mount(back, mnt):
    os.makedirs(back, exist_ok=True)
    os.makedirs(mnt, exist_ok=True)
    # On CPU 0 with the server: an NFS client's work would be done there
    # too, in the server's own system calls.
    subprocess.run(["taskset", "-c", "0", "bindfs", "-o", MOUNT_OPTIONS, back, mnt], check=True)
    out = subprocess.run(["stat", "-f", "-c", "%t", mnt], capture_output=True, text=True, check=True)
    magic = out.stdout.strip()
    if magic != "65735546":
        raise RuntimeError(f"{mnt} has statfs magic {magic}, not FUSE's 65735546")
    return magic


def unmount(mnt):
    subprocess.run(["fusermount", "-u", "-z", mnt], capture_output=True)


def bindfs_pids(mnt):
    """The bindfs daemon serving `mnt` (its command line names the mount point)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"bindfs") and mnt.encode() in argv:
            out.append(int(entry))
    return out


def write_site(root, access):
    os.makedirs(root, exist_ok=True)
    os.chmod(root, 0o755)
    for name, body in (("index.html", scenarios.PAGE), (".htaccess", access)):
        with open(os.path.join(root, name), "wb") as f:
            f.write(body)
        os.chmod(os.path.join(root, name), 0o644)


def start(server, rundir, docroot, override, extra=""):
    port = servers.free_port()
    cmd = servers.write_config(server, rundir, docroot, port, override, extra=extra)
    proc = servers.Server(server, cmd, rundir, port, pinned=True)
    try:
        proc.wait_ready("/index.html", timeout=30)
    except Exception:
        proc.stop()
        raise
    return proc


def fuse_notice(proc):
    """htaccel's error-log line saying the docroot is polled (None if absent)."""
    try:
        with open(os.path.join(proc.rundir, "error.log"), errors="replace") as f:
            lines = [line.strip() for line in f if "network file system" in line]
    except OSError:
        return None
    return lines[0] if lines else None


def throughput(base, mnt, runs, seconds, log):
    back_site = os.path.join(base, "back", "site")
    write_site(back_site, scenarios.CONTENTS["realistic12k"]())
    docroot = os.path.join(mnt, "site")
    fs_pids = bindfs_pids(mnt)
    out = []
    for label, server, override in POINTS:
        rundir = os.path.join(base, "run", label.replace(" ", "-").replace(",", "").replace("(", "").replace(")", ""))
        proc = start(server, rundir, docroot, override)
        try:
            url = f"http://127.0.0.1:{proc.port}/index.html"
            status = servers.http_get(proc.port, "/index.html")[0]
            measure.wrk(proc, url, 2)  # warm-up
            results = []
            for _ in range(runs):
                fs0 = servers.cpu_seconds(fs_pids)
                r = measure.wrk(proc, url, seconds)
                fs = servers.cpu_seconds(fs_pids) - fs0
                r["bindfs_cpu_s"] = round(fs, 3)
                r["bindfs_us_per_req"] = round(1e6 * fs / r["requests"], 3) if r["requests"] else None
                if "other_on_cpu0_pct" in r:
                    r["other_on_cpu0_minus_bindfs_pct"] = round(
                        max(0.0, r["other_on_cpu0_pct"] - 100 * fs / r.get("wall_s", seconds)), 1)
                results.append(r)
            rss = servers.rss_kib(proc.pids())
            notice = fuse_notice(proc) if server == "htaccel" else None
        finally:
            proc.stop()
        fs_per = [r["bindfs_us_per_req"] for r in results if r["bindfs_us_per_req"] is not None]
        point = {"label": label, "server": server, "override": override, "status": status,
                 "rss_kib": rss, "runs": results, **measure.summarise(results),
                 "bindfs_us_per_req_median": round(statistics.median(fs_per), 3) if fs_per else None}
        if server == "htaccel":
            point["fuse_notice"] = notice
        log(f"N {label}: {point['rps_median']:,.0f} req/s, {point['cpu_us_per_req_median']} µs/request "
            f"(bindfs {point['bindfs_us_per_req_median']}), status {status}")
        out.append(point)
    return out


def _write(path, body, mode):
    if mode == "rename":
        tmp = path + ".new"
        with open(tmp, "wb") as f:
            f.write(body)
        os.chmod(tmp, 0o644)
        os.rename(tmp, path)
    else:  # in place: truncate, write, close
        with open(path, "wb") as f:
            f.write(body)


class Poller(threading.Thread):
    """Polls one instance; notes the first answer with the awaited rules
    among requests sent after the awaited write completed."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port = port
        self.awaited = None  # (write number, version, completion ns)
        self.seen = {}  # write number -> arrival ns of the first new answer
        self.requests = 0
        self.errors = []
        self.stop = threading.Event()

    def run(self):
        conn = httpclient.Conn(self.port)
        while not self.stop.is_set():
            try:
                t = time.monotonic_ns()
                conn.send("/index.html")
                _, headers = conn.read()
                arrived = time.monotonic_ns()
            except OSError as e:
                self.errors.append(str(e))
                conn.close()
                time.sleep(0.01)
                continue
            self.requests += 1
            awaited = self.awaited
            if awaited and awaited[0] not in self.seen and t >= awaited[2] \
                    and headers.get("x-rules") == awaited[1]:
                self.seen[awaited[0]] = arrived
        conn.close()


def _dist(values):
    if not values:
        return {"n": 0}
    s = sorted(values)
    return {"n": len(s), "median_ms": round(statistics.median(s), 2),
            "p99_ms": round(s[min(len(s) - 1, int(0.99 * len(s)))], 2), "max_ms": round(s[-1], 2),
            "min_ms": round(s[0], 2)}


def visibility_round(base, mnt, label, server, interval, writes, log):
    """Two instances of `server` on one FUSE docroot; `writes` flips per write mode."""
    tag = label.split(",")[0].split(" ")[0] + ("" if interval is None else f"-{interval}")
    back_site = os.path.join(base, "back", f"vis-{tag}")
    write_site(back_site, RULES["A"])
    docroot = os.path.join(mnt, f"vis-{tag}")
    extra = "" if interval is None else f"AccessFileCheckInterval {interval}\n"
    procs = []
    try:
        for i in (1, 2):
            procs.append(start(server, os.path.join(base, "run", f"vis-{tag}-{i}"), docroot, "All", extra))
        bound = DEFAULT_INTERVAL if interval is None else interval
        if server == "apache":
            bound = 0.0
        timeout = 3 * max(bound, 0.5) + 5
        result = {"label": label, "server": server,
                  "interval_s": None if server == "apache" else (DEFAULT_INTERVAL if interval is None else interval),
                  "interval_configured": interval, "modes": {}}
        path = os.path.join(back_site, ".htaccess")
        version = "A"
        for mode in ("in place", "rename"):
            pollers = [Poller(p.port) for p in procs]
            for p in pollers:
                p.start()
            latencies = [[] for _ in procs]
            unseen = [0 for _ in procs]
            for k in range(writes):
                # A random phase against the instances' revalidation clocks:
                # without it each write would follow the last revalidation
                # by the same pause.
                time.sleep(random.uniform(0.05, 0.3) + random.uniform(0, bound))
                version = "B" if version == "A" else "A"
                _write(path, RULES[version], mode)
                done = time.monotonic_ns()
                for p in pollers:
                    p.awaited = (k, version, done)
                deadline = time.monotonic() + timeout
                while time.monotonic() < deadline and not all(k in p.seen for p in pollers):
                    time.sleep(0.002)
                for i, p in enumerate(pollers):
                    if k in p.seen:
                        latencies[i].append((p.seen[k] - done) / 1e6)
                    else:
                        unseen[i] += 1
            for p in pollers:
                p.stop.set()
            for p in pollers:
                p.join()
            per = []
            for i, p in enumerate(pollers):
                d = _dist(latencies[i])
                d.update({"instance": i + 1, "latencies_ms": [round(v, 2) for v in latencies[i]],
                          "not_seen_within_s": round(timeout, 1) if unseen[i] else None, "not_seen": unseen[i],
                          "over_interval": sum(1 for v in latencies[i] if v > 1000 * bound) if server != "apache" else None,
                          "requests": p.requests, "client_errors": len(p.errors)})
                per.append(d)
                log(f"N visibility {label}, {mode}, instance {i + 1}: median {d.get('median_ms')} ms, "
                    f"p99 {d.get('p99_ms')}, max {d.get('max_ms')} over {d['n']} writes ({unseen[i]} unseen), "
                    f"{p.requests} polls")
            result["modes"][mode] = per
        if server == "htaccel":
            result["fuse_notice"] = [fuse_notice(p) for p in procs]
        return result
    finally:
        for p in procs:
            p.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="wrk runs per throughput point")
    ap.add_argument("--seconds", type=int, default=5, help="seconds per wrk run")
    ap.add_argument("--writes", type=int, default=40, help="writes per write mode and round")
    ap.add_argument("--skip-throughput", action="store_true")
    ap.add_argument("--skip-visibility", action="store_true")
    ap.add_argument("--out", help="results file (default bench/results/netfs/<timestamp>.json)")
    args = ap.parse_args()
    for tool in ("bindfs", "fusermount", "wrk"):
        if shutil.which(tool) is None:
            sys.exit(f"netfs.py needs {tool} (apt-get install -y bindfs wrk)")
    here = os.path.dirname(os.path.abspath(__file__))
    os.environ.setdefault("HTACCEL_BIN", os.path.abspath(os.path.join(here, "..", "target", "release", "htaccel")))

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    fss = kernel_filesystems()
    res = {"started": started, "loadavg_start": _loadavg(), "runs": args.runs, "seconds": args.seconds,
           "writes": args.writes, "kernel_filesystems": fss, "kernel_has_nfs": any(f.startswith("nfs") for f in fss),
           "kernel": os.uname().release, "mount": f"bindfs -o {MOUNT_OPTIONS}",
           "bindfs": _bindfs_version(),
           "htaccel": servers.version("htaccel", os.environ["HTACCEL_BIN"]),
           "apache": servers.version("apache", ""), "wrk": servers.version("wrk", "")}
    log(f"N: kernel file systems include nfs: {res['kernel_has_nfs']}; serving from a FUSE mount")
    base = tempfile.mkdtemp(prefix="htaccel-netfs-", dir=QUIET_DIR)
    os.chmod(base, 0o755)
    mnt = os.path.join(base, "mnt")
    try:
        res["statfs_magic"] = mount(os.path.join(base, "back"), mnt)
        os.chmod(os.path.join(base, "back"), 0o755)
        if not args.skip_throughput:
            res["points"] = throughput(base, mnt, args.runs, args.seconds, log)
        if not args.skip_visibility:
            res["visibility"] = [visibility_round(base, mnt, label, server, interval, args.writes, log)
                                 for label, server, interval in ROUNDS]
    finally:
        unmount(mnt)
        shutil.rmtree(base, ignore_errors=True)
    res["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    res["loadavg_end"] = _loadavg()
    out = args.out or os.path.join(here, "results", "netfs", started.replace("-", "").replace(":", "") + ".json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
    log(f"results in {out}")
    print(out)


def _bindfs_version():
    try:
        return subprocess.run(["dpkg-query", "-W", "-f=bindfs ${Version}", "bindfs"],
                              capture_output=True, text=True).stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def _loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[:3]


if __name__ == "__main__":
    main()
