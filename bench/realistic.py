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

Usage: python3 bench/realistic.py --instructions [--override None]
           [--requests N1 N2] [--keep DIR]
`--keep DIR` leaves the tree and the callgrind outputs in DIR (for
`callgrind_annotate --inclusive=yes DIR/run-N2/callgrind.out`).
"""

import argparse
import collections
import os
import random
import re
import shutil
import sys
import tempfile
import threading

import httpclient
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


def _count(base, docroot, urls, override, label):
    """Instructions htaccel executed to start, answer `urls`, and stop."""
    rundir = os.path.join(base, label)
    port = servers.free_port()
    cmd = servers.write_config("htaccel", rundir, docroot, port, override, True)
    out = os.path.join(rundir, "callgrind.out")
    cmd = ["runuser", "-u", "www-data", "--", "valgrind", "--tool=callgrind",
           f"--callgrind-out-file={out}"] + cmd
    server = servers.Server("htaccel", cmd, rundir, port, True)
    try:
        server.wait_ready("/robots.txt", timeout=120)
        counts = replay(port, urls)
    finally:
        server.stop()
    with open(out) as f:
        m = re.search(r"^summary: (\d+)", f.read(), re.M)
    if not m:
        raise RuntimeError(f"no callgrind summary in {out}: {server.output()}")
    return int(m.group(1)), counts


def instructions(base, override, n1, n2, log):
    docroot = os.path.join(base, "site")
    files = write_tree(docroot)
    log(f"tree: {len(files)} files under {docroot}")
    urls = url_list(files, n2)
    i1, c1 = _count(base, docroot, urls[:n1], override, f"run-{n1}")
    log(f"{n1} requests: {i1:,} instructions, statuses {dict(sorted(c1.items()))}")
    i2, c2 = _count(base, docroot, urls, override, f"run-{n2}")
    log(f"{n2} requests: {i2:,} instructions, statuses {dict(sorted(c2.items()))}")
    return (i2 - i1) / (n2 - n1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--instructions", action="store_true", help="count instructions per request (callgrind)")
    ap.add_argument("--override", default="All", help="AllowOverride for the document root (All or None)")
    ap.add_argument("--requests", nargs=2, type=int, default=[3000, 15000], metavar=("N1", "N2"))
    ap.add_argument("--keep", help="generate into this directory and keep it")
    args = ap.parse_args()
    if not args.instructions:
        ap.error("nothing to do: give --instructions")
    if shutil.which("valgrind") is None:
        sys.exit("realistic.py --instructions needs valgrind (apt-get install -y valgrind)")
    here = os.path.dirname(os.path.abspath(__file__))
    os.environ.setdefault(
        "HTACCEL_BIN", os.path.abspath(os.path.join(here, "..", "target", "release", "htaccel"))
    )

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    if args.keep:
        base = os.path.abspath(args.keep)
        os.makedirs(base, exist_ok=True)
    else:
        # Not under /tmp: the watcher watches every directory above the
        # document root, and any entry made or removed there (builds, other
        # tests) empties the memos mid-run, which moves the count by 10 %.
        base = tempfile.mkdtemp(prefix="htaccel-realistic-", dir=QUIET_DIR)
    os.chmod(base, 0o755)
    try:
        n1, n2 = args.requests
        v = instructions(base, args.override, n1, n2, log)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print(f"realistic mix, AllowOverride {args.override}: {v:,.0f} instructions per request")


if __name__ == "__main__":
    main()
