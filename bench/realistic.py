"""Realistic traffic: a WordPress-shaped tree of ~10,000 files asked for in a
Zipf mix, the cost the answer memo does not hide.

Every other point of the bench asks for one URL, so from its second request
on htaccel answers from the answer memo. A site's visitors ask for
thousands of different files; most of those requests miss the memo and run
the whole request path (URI mapping, directory walk, metadata cache,
default handler, file open and send). This script builds such a site and
counts what a request of that mix costs.

The tree (`write_tree`): uploads under wp-content/uploads/YYYY/MM (each
image in WordPress's four sizes), a block theme's assets, a dozen plugins'
assets, wp-includes scripts and styles; file sizes as WordPress writes
them (thumbnails of a few KiB to originals of several hundred). Files are
sparse past their first bytes, so the tree costs almost no disk. Access
files where WordPress and its plugins put them: the realistic 12 KB root
file of bench/scenarios.py ("realistic12k": the WordPress rewrite block
and 536 `Deny from` lines), Akismet's own, a security plugin's
uploads/.htaccess refusing PHP, and a cache plugin's.

The mix (`url_list`): URLs drawn from a Zipf distribution (s = 1) over the
files in a random rank order (seeded: the same list on every run), 5 %
misses (names that do not exist: the root's WordPress rules rewrite them
to /index.php, absent here, so a 404), 1 % directory requests without
their slash (mod_dir's 301).

`--instructions`: the server runs under `valgrind --tool=callgrind`, pinned
to one core (one worker), twice: answering the list's first N1 URLs, then
its first N2, each sent by a keep-alive client over 4 connections.

    instructions per request = (I(N2) - I(N1)) / (N2 - N1)

as bench/instructions.py counts it (start-up, configuration and warm-up
cancel out; kernel work is not counted).

It counts htaccel (AllowOverride All and None), h2o and nginx (`COUNTED`),
each started as www-data under valgrind with `--trace-children=yes`.

`--throughput`: every server of `POINTS` (htaccel and Apache with the
tree's access files and with AllowOverride None; nginx, h2o, lighttpd),
pinned to CPU 0 with one worker, under `wrk -t1 -c50` on CPU 1 replaying
100,000 URLs of the mix (bench/replay.lua): req/s, server CPU per request
(user and system), p50/p99 latency, RSS, and htaccel's answer-memo hit
rate (its metrics page). The first `--check` URLs are replayed once
beforehand and their statuses recorded, so that a server answering
differently is seen.

`--both-cores`: the same points with the server on both cores (no
taskset; one worker per CPU, as bench/servers.py configures an unpinned
server; with --throughput too, each server's two points run back to back)
and wrk still on CPU 1, as group U of bench/bench.py places them:
the server's second worker shares CPU 1 with wrk. wrk stays pinned so
that the only change from the one-core rows is the server's placement:
wrk -t1 is one thread and cannot use a second core, and left free it
would wander onto CPU 0 as well, leaving neither core's load attributable.

Usage: python3 bench/realistic.py [--instructions] [--throughput] [--both-cores]
           [--only LABEL] [--requests N1 N2] [--runs N] [--seconds S]
           [--keep DIR] [--out FILE]
Results go to bench/results/realistic/<timestamp>.json;
bench/realistic_report.py makes REPORT.md's section R from the newest.
`--keep DIR` leaves the tree and the callgrind outputs in DIR (for
`callgrind_annotate --inclusive=yes DIR/htaccel-run-N2/callgrind.out.*`).
"""

import argparse
import collections
import json
import os
import random
import re
import shutil
import sys
import tempfile
import socket
import statistics
import threading
import time

import httpclient
import measure
import scenarios
import servers

SEED = 22
MISS_SHARE = 0.05
DIR_SHARE = 0.01
CONNECTIONS = 4
QUIET_DIR = "/var/tmp"

AKISMET = b"""\
# Only allow direct access to specific Web-available files.

# Apache 2.2
<IfModule !mod_authz_core.c>
\tOrder Deny,Allow
\tDeny from all
</IfModule>

# Apache 2.4
<IfModule mod_authz_core.c>
\tRequire all denied
</IfModule>

# Akismet CSS and JS
<FilesMatch "^(form\\.js|akismet(-frontend|-admin)?\\.js|akismet(-admin)?(-rtl)?\\.css|inline\\.js)$">
\t<IfModule !mod_authz_core.c>
\t\tAllow from all
\t</IfModule>
\t<IfModule mod_authz_core.c>
\t\tRequire all granted
\t</IfModule>
</FilesMatch>

# Akismet images
<FilesMatch "^logo-(a|full)-2x\\.png$">
\t<IfModule !mod_authz_core.c>
\t\tAllow from all
\t</IfModule>
\t<IfModule mod_authz_core.c>
\t\tRequire all granted
\t</IfModule>
</FilesMatch>
"""

# What security plugins write into wp-content/uploads/.
UPLOADS = b"""\
# BEGIN Security
<Files *.php>
deny from all
</Files>
Options -Indexes
# END Security
"""

# A cache plugin's rules for its own directory.
CACHE_PLUGIN = b"""\
# BEGIN Cache
<IfModule mod_expires.c>
ExpiresActive On
ExpiresByType text/css "access plus 1 month"
ExpiresByType application/javascript "access plus 1 month"
ExpiresByType image/png "access plus 1 year"
</IfModule>
<IfModule mod_headers.c>
Header set X-Cache-Plugin "on"
</IfModule>
# END Cache
"""

PLUGINS = [
    "akismet", "contact-form-7", "woocommerce", "yoast-seo", "jetpack", "elementor",
    "wpforms-lite", "classic-editor", "wordfence", "litespeed-cache", "updraftplus",
    "really-simple-ssl",
]


def _sizes(rng):
    """The four files WordPress writes for one uploaded image: (suffix, bytes)."""
    return [
        ("-150x150.jpg", rng.randint(4, 12) * 1024),
        ("-300x200.jpg", rng.randint(10, 30) * 1024),
        ("-1024x683.jpg", rng.randint(60, 200) * 1024),
        (".jpg", rng.randint(150, 900) * 1024),
    ]


def tree_files(rng, uploads=2300):
    """Every file of the tree: relative path -> size in bytes (access files
    are in `access_files`)."""
    files = {"index.html": 32 * 1024, "favicon.ico": 15086, "robots.txt": 67, "wp-login.php": 1500}
    for i in range(uploads):
        year = 2015 + i * 10 // uploads
        month = 1 + (i * 120 // uploads) % 12
        name = f"wp-content/uploads/{year}/{month:02d}/image-{i:05d}"
        for suffix, size in _sizes(rng):
            files[name + suffix] = size
    for i in range(300):  # documents and media besides images
        year = 2015 + i % 10
        ext, size = rng.choice([(".pdf", 400 * 1024), (".mp4", 4 << 20), (".png", 90 * 1024)])
        files[f"wp-content/uploads/{year}/{1 + i % 12:02d}/attachment-{i:04d}{ext}"] = size
    theme = "wp-content/themes/twentytwentyfour"
    files[f"{theme}/style.css"] = 6 * 1024
    for kind, ext, lo, hi, n in [
        ("css", "css", 2, 60, 40), ("js", "js", 1, 90, 60), ("fonts", "woff2", 20, 120, 24),
        ("images", "webp", 30, 300, 80), ("images", "svg", 1, 8, 40),
    ]:
        for i in range(n):
            files[f"{theme}/assets/{kind}/{kind}-{i:03d}.{ext}"] = rng.randint(lo, hi) * 1024
    for i in range(30):
        files[f"{theme}/patterns/pattern-{i:02d}.php"] = rng.randint(1, 8) * 1024
    for p in PLUGINS:
        base = f"wp-content/plugins/{p}"
        files[f"{base}/{p}.php"] = rng.randint(2, 40) * 1024
        for kind, ext, n in [("js", "js", 40), ("css", "css", 25), ("images", "png", 20)]:
            for i in range(n):
                files[f"{base}/assets/{kind}/{p}-{i:03d}.{ext}"] = rng.randint(1, 150) * 1024
    for name in ("form.js", "akismet-frontend.js", "akismet-admin.css", "logo-full-2x.png"):
        files[f"wp-content/plugins/akismet/_inc/{name}"] = rng.randint(2, 20) * 1024
    for i in range(400):
        files[f"wp-includes/js/script-{i:03d}.min.js"] = rng.randint(1, 120) * 1024
    for i in range(150):
        files[f"wp-includes/css/style-{i:03d}.min.css"] = rng.randint(1, 80) * 1024
    return files


def access_files():
    return {
        ".htaccess": scenarios.CONTENTS["realistic12k"](),
        "wp-content/plugins/akismet/.htaccess": AKISMET,
        "wp-content/uploads/.htaccess": UPLOADS,
        "wp-content/plugins/litespeed-cache/.htaccess": CACHE_PLUGIN,
    }


def write_tree(root):
    """Generate the tree under `root`; return the served files' relative paths."""
    rng = random.Random(SEED)
    files = tree_files(rng)
    for rel, size in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(rel.encode() + b"\n")
            f.truncate(size)
    for rel, body in access_files().items():
        with open(os.path.join(root, rel), "wb") as f:
            f.write(body)
    for dirpath, _, filenames in os.walk(root):
        os.chmod(dirpath, 0o755)
        for f in filenames:
            os.chmod(os.path.join(dirpath, f), 0o644)
    # The plugins' PHP files are not asked for by visitors.
    return sorted(rel for rel in files if not rel.endswith(".php"))


def url_list(files, n):
    """`n` URLs: a Zipf mix over `files` with misses and directory requests."""
    rng = random.Random(SEED)
    ranked = list(files)
    rng.shuffle(ranked)
    weights = [1.0 / (k + 1) for k in range(len(ranked))]
    picks = rng.choices(ranked, weights=weights, k=n)
    dirs = sorted({os.path.dirname(f) for f in files if os.path.dirname(f)})
    out = []
    for i, rel in enumerate(picks):
        r = rng.random()
        if r < MISS_SHARE:
            # A distinct missing name beside an existing file (old links, scanners).
            out.append("/" + "/".join(filter(None, [os.path.dirname(rel), f"gone-{i}.jpg"])))
        elif r < MISS_SHARE + DIR_SHARE:
            out.append("/" + rng.choice(dirs))
        else:
            out.append("/" + rel)
    return out


def replay(port, urls, connections=CONNECTIONS):
    """Send `urls` over `connections` keep-alive connections, one request in
    flight on each; return the count of answers by status."""
    counts = collections.Counter()
    lock = threading.Lock()
    errors = []

    def run(part):
        conn = httpclient.Conn(port, timeout=120)
        local = collections.Counter()
        try:
            for url in part:
                conn.send(url)
                status, _ = conn.read()
                local[status] += 1
        except (OSError, ConnectionError) as e:
            errors.append(e)
        finally:
            conn.close()
        with lock:
            counts.update(local)

    threads = [threading.Thread(target=run, args=(urls[i::connections],)) for i in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError(f"client failed: {errors[0]}")
    return counts


# What each server is told beyond bench/servers.py's static configuration.
# htaccel: its metrics page, for the answer memo's hit rate (one more
# <Location>, in both of htaccel's points; a file of that name exists, so
# that the root's WordPress rules leave the path alone). nginx and lighttpd: Akismet's
# .htaccess translated (its directory refused but for its own assets), the
# one rule of the tree whose answers a static server would otherwise change;
# h2o has no such rule without mruby and serves those files (its status
# counts show it). The WordPress rules send a miss to /index.php, absent
# here, so every server answers a miss with 404 and needs no translation.
METRICS_PATH = "/bench-metrics"
AKISMET_ASSETS = (r"/(form\.js|akismet(-frontend|-admin)?\.js|akismet(-admin)?(-rtl)?\.css"
                  r"|inline\.js|logo-(a|full)-2x\.png)$")
EXTRA = {
    "htaccel": f'<Location "{METRICS_PATH}">\n    SetHandler htaccel-metrics\n</Location>\n',
    "nginx": ("        location ^~ /wp-content/plugins/akismet/ {\n            deny all;\n"
              f'            location ~ "{AKISMET_ASSETS}" {{ allow all; }}\n        }}\n'),
    "lighttpd": ('server.modules += ( "mod_access" )\n'
                 '$HTTP["url"] =~ "^/wp-content/plugins/akismet/" {\n'
                 f'    $HTTP["url"] !~ "{AKISMET_ASSETS}" {{ url.access-deny = ( "" ) }}\n}}\n'),
}

# The throughput points: (label, server, AllowOverride).
POINTS = [
    ("htaccel", "htaccel", "All"),
    ("htaccel, AllowOverride None", "htaccel", "None"),
    ("apache", "apache", "All"),
    ("apache, AllowOverride None", "apache", "None"),
    ("nginx", "nginx", "None"),
    ("h2o", "h2o", "None"),
    ("lighttpd", "lighttpd", "None"),
]
# The instruction counts: (label, server, AllowOverride).
COUNTED = [
    ("htaccel", "htaccel", "All"),
    ("htaccel, AllowOverride None", "htaccel", "None"),
    ("h2o", "h2o", "None"),
    ("nginx", "nginx", "None"),
]


def _start(server, base, docroot, override, label, pinned=True, prefix=()):
    """Start `server` on the tree; with a `prefix` (valgrind) it runs as
    www-data from the start, since a server that switches users itself
    leaves valgrind unable to write the output of the process it became."""
    rundir = os.path.join(base, label.replace(" ", "-").replace(",", ""))
    port = servers.free_port()
    cmd = servers.write_config(server, rundir, docroot, port, override, pinned, sendfile="On",
                               extra=EXTRA.get(server, ""))
    if prefix:
        prefix = ["runuser", "-u", "www-data", "--", *prefix]
        if server == "h2o":  # h2o refuses `user:` when not started as root
            conf = os.path.join(rundir, "h2o.conf")
            with open(conf) as f:
                text = f.read().replace("user: nobody\n", "")
            with open(conf, "w") as f:
                f.write(text)
    proc = servers.Server(server, list(prefix) + cmd, rundir, port, pinned)
    try:
        proc.wait_ready("/robots.txt", timeout=120)
    except Exception:
        proc.stop()
        raise
    return proc


def _count(server, base, docroot, urls, override, label, connections=CONNECTIONS):
    """Instructions `server` (every process of it) executed to start, answer
    `urls`, and stop."""
    outdir = os.path.join(base, label)
    os.makedirs(outdir, exist_ok=True)
    os.chmod(outdir, 0o777)
    prefix = ["valgrind", "--tool=callgrind", "--trace-children=yes",
              f"--callgrind-out-file={outdir}/callgrind.out.%p"]
    proc = _start(server, base, docroot, override, label + "-server", prefix=prefix)
    try:
        counts = replay(proc.port, urls, connections)
    finally:
        proc.stop()
    total = 0
    for name in os.listdir(outdir):
        with open(os.path.join(outdir, name)) as f:
            m = re.search(r"^summary: (\d+)", f.read(), re.M)
        total += int(m.group(1)) if m else 0
    if not total:
        raise RuntimeError(f"no callgrind summary in {outdir}: {proc.output()}")
    return total, counts


def distinct_urls(files, n):
    """`n` URLs of the tree, each once, in a seeded random order: every
    request misses the answer memo (kept from a line's second sighting)."""
    urls = ["/" + f for f in files]
    random.Random(SEED).shuffle(urls)
    if n > len(urls):
        raise ValueError(f"{n} distinct URLs asked for, the tree has {len(urls)}")
    return urls[:n]


def instructions(base, docroot, files, server, override, n1, n2, log, label="htaccel",
                 connections=CONNECTIONS, distinct=False):
    """User-space instructions per request of the mix: (I(N2) - I(N1)) / (N2 - N1)."""
    urls = distinct_urls(files, n2) if distinct else url_list(files, n2)
    tag = label.replace(" ", "-").replace(",", "")
    i1, c1 = _count(server, base, docroot, urls[:n1], override, f"{tag}-run-{n1}", connections)
    log(f"{label}: {n1} requests: {i1:,} instructions, statuses {dict(sorted(c1.items()))}")
    i2, c2 = _count(server, base, docroot, urls, override, f"{tag}-run-{n2}", connections)
    log(f"{label}: {n2} requests: {i2:,} instructions, statuses {dict(sorted(c2.items()))}")
    return (i2 - i1) / (n2 - n1)


def _metrics(port):
    """(requests answered, answers from the memo) from htaccel's metrics page."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(f"GET {METRICS_PATH} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    text = data.decode("latin-1")

    def value(name):
        m = re.search(rf"^{name} (\d+)", text, re.M)
        if not m:
            raise RuntimeError(f"{name} not on htaccel's metrics page")
        return int(m.group(1))

    return value("htaccel_requests_total"), value("htaccel_answer_memo_hits_total")


def throughput(base, docroot, files, runs, seconds, check, log, placements=(True,)):
    """Every POINTS server under wrk replaying the mix, once per placement
    (True: the server on CPU 0 with one worker; False: on both cores with
    one worker per CPU; wrk on CPU 1 either way), a server's placements
    back to back so that their ratio is measured minutes apart:
    {placement: [one dict per point]}."""
    urls = url_list(files, 100_000)
    listing = os.path.join(base, "urls.txt")
    with open(listing, "w") as f:
        f.write("\n".join(urls) + "\n")
    script = (os.path.join(os.path.dirname(os.path.abspath(__file__)), "replay.lua"), listing)
    out = {pinned: [] for pinned in placements}
    for label, server, override in POINTS:
        for pinned in placements:
            if server in servers.PEERS and server not in servers.present_peers():
                log(f"{label}: not installed, skipped")
                out[pinned].append({"label": label, "server": server, "missing": "not installed"})
                continue
            point = _point(base, docroot, urls, script, label, server, override, pinned, runs, seconds,
                           check)
            log(f"{label}{'' if pinned else ' (both cores)'}: {point['rps_median']:,.0f} req/s, "
                f"{point['cpu_us_per_req_median']} µs/request, statuses {point['statuses']}")
            out[pinned].append(point)
    return out


def _point(base, docroot, urls, script, label, server, override, pinned, runs, seconds, check):
    """One server under wrk replaying the mix (see throughput)."""
    proc = _start(server, base, docroot, override, label, pinned=pinned)
    try:
        statuses = replay(proc.port, urls[:check])
        measure.wrk(proc, f"http://127.0.0.1:{proc.port}/", 2, script=script)  # warm-up
        results = []
        for _ in range(runs):
            before = _metrics(proc.port) if server == "htaccel" else None
            r = measure.wrk(proc, f"http://127.0.0.1:{proc.port}/", seconds, script=script)
            if before:
                after = _metrics(proc.port)
                answered = after[0] - before[0]
                r["memo_hit_rate"] = round((after[1] - before[1]) / answered, 4) if answered else None
            results.append(r)
        rss = servers.rss_kib(proc.pids())
    finally:
        proc.stop()
    point = {"label": label, "server": server, "override": override, "pinned": pinned,
             "statuses": {str(k): v for k, v in sorted(statuses.items())},
             "rss_kib": rss, "runs": results, **measure.summarise(results)}
    if server == "htaccel":
        rates = [r["memo_hit_rate"] for r in results if r.get("memo_hit_rate") is not None]
        point["memo_hit_rate"] = round(statistics.median(rates), 4) if rates else None
    return point


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--instructions", action="store_true", help="count instructions per request (callgrind)")
    ap.add_argument("--throughput", action="store_true", help="every server under wrk replaying the mix")
    ap.add_argument("--both-cores", action="store_true",
                    help="the throughput points again with the server on both cores (wrk on CPU 1)")
    ap.add_argument("--only", help="only the points whose label contains this text")
    ap.add_argument("--requests", nargs=2, type=int, default=[3000, 15000], metavar=("N1", "N2"))
    ap.add_argument("--distinct", action="store_true",
                    help="count requests for distinct files (every one a memo miss) instead of the mix")
    ap.add_argument("--connections", type=int, default=CONNECTIONS,
                    help="client connections of the count (1 takes the event loop's batching out of an A/B)")
    ap.add_argument("--runs", type=int, default=3, help="wrk runs per throughput point")
    ap.add_argument("--seconds", type=int, default=10, help="seconds per wrk run")
    ap.add_argument("--check", type=int, default=2000, help="URLs replayed first to record the statuses")
    ap.add_argument("--keep", help="generate into this directory and keep it")
    ap.add_argument("--out", help="results file (default bench/results/realistic/<timestamp>.json)")
    args = ap.parse_args()
    if not (args.instructions or args.throughput or args.both_cores):
        ap.error("nothing to do: give --instructions, --throughput and/or --both-cores")
    if args.instructions and shutil.which("valgrind") is None:
        sys.exit("realistic.py --instructions needs valgrind (apt-get install -y valgrind)")
    if (args.throughput or args.both_cores) and shutil.which("wrk") is None:
        sys.exit("realistic.py --throughput and --both-cores need wrk (apt-get install -y wrk)")
    here = os.path.dirname(os.path.abspath(__file__))
    os.environ.setdefault(
        "HTACCEL_BIN", os.path.abspath(os.path.join(here, "..", "target", "release", "htaccel"))
    )

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    def wanted(label):
        return args.only is None or args.only in label

    if args.keep:
        base = os.path.abspath(args.keep)
        os.makedirs(base, exist_ok=True)
    else:
        # Not under /tmp: the watcher watches every directory above the
        # document root, and any entry made or removed there (builds, other
        # tests) empties the memos mid-run, which moves the count by 10 %.
        base = tempfile.mkdtemp(prefix="htaccel-realistic-", dir=QUIET_DIR)
    os.chmod(base, 0o755)
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    res = {"started": started, "loadavg_start": _loadavg(), "requests": args.requests,
           "connections_counted": args.connections, "distinct": args.distinct,
           "runs": args.runs, "seconds": args.seconds, "connections": 50,
           "htaccel": servers.version("htaccel", os.environ["HTACCEL_BIN"]),
           "wrk": servers.version("wrk", "")}
    try:
        docroot = os.path.join(base, "site")
        files = write_tree(docroot)
        with open(os.path.join(docroot, METRICS_PATH.lstrip("/")), "w") as f:
            f.write("htaccel's metrics page, in the realistic bench's htaccel points\n")
        os.chmod(os.path.join(docroot, METRICS_PATH.lstrip("/")), 0o644)
        sizes = tree_files(random.Random(SEED))
        mix = url_list(files, 100_000)
        res["tree_files"] = len(files)
        res["mean_bytes"] = round(sum(sizes.get(u[1:], 0) for u in mix) / len(mix))
        log(f"tree: {len(files)} files under {docroot}, mean answer {res['mean_bytes']:,} bytes")
        if args.instructions:
            res["instructions"] = []
            for label, server, override in COUNTED:
                if not wanted(label):
                    continue
                if server in servers.PEERS and server not in servers.present_peers():
                    res["instructions"].append({"label": label, "missing": "not installed"})
                    continue
                n1, n2 = args.requests
                v = instructions(base, docroot, files, server, override, n1, n2, log, label,
                                 args.connections, args.distinct)
                log(f"{label}: {v:,.0f} instructions per request")
                res["instructions"].append({"label": label, "server": server, "override": override,
                                            "per_request": round(v)})
        global POINTS
        POINTS = [p for p in POINTS if wanted(p[0])]
        placements = [p for p, wanted_too in ((True, args.throughput), (False, args.both_cores)) if wanted_too]
        if placements:
            measured = throughput(base, docroot, files, args.runs, args.seconds, args.check, log, placements)
        if args.throughput:
            res["points"] = measured[True]
        if args.both_cores:
            res["cpus"] = len(os.sched_getaffinity(0))
            res["points_both_cores"] = measured[False]
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    res["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    res["loadavg_end"] = _loadavg()
    out = args.out or os.path.join(here, "results", "realistic", started.replace("-", "").replace(":", "") + ".json")
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
