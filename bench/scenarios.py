"""The benchmark scenarios: which trees exist, which server serves them, and
which URL is asked for.

The scenarios reproduce the published .htaccess experiments (A: size and
content of one file at the document root; B: directory depth with files at
every level, at the root only, or none) plus the peer comparison (D) and the
two-core variant (U). Trees are generated, never checked in, so that the
byte counts stay exact and the repository stays small.
"""

import os

PAGE = b"<h1>It works!</h1>\n"  # the 19-byte page of the published runs
KB = 1024
DEPTHS = (1, 3, 6, 12, 26)

# Content of the access files, by name.
WORDPRESS = "/work/shared/corpus/wordpress/.htaccess"


def _fill(lines, size):
    """Repeat `lines` in turn until `size` bytes are written (whole lines)."""
    out, n, i = [], 0, 0
    while n < size:
        line = lines[i % len(lines)]
        out.append(line)
        n += len(line)
        i += 1
    return "".join(out).encode()


def _comments(size):
    line = "# This line is a comment; Apache reads and skips it on every request.\n"
    return _fill([line], size)


def _options(size):
    return _fill(["Options +FollowSymLinks\n", "Options -Indexes\n"], size)


def _wordpress_block():
    """The WordPress rewrite block from the corpus (a copy is embedded so the
    benchmark still runs where the corpus is absent)."""
    try:
        with open(WORDPRESS, "rb") as f:
            return f.read()
    except OSError:
        return (
            b"# BEGIN WordPress\n<IfModule mod_rewrite.c>\nRewriteEngine On\n"
            b"RewriteRule .* - [E=HTTP_AUTHORIZATION:%{HTTP:Authorization}]\n"
            b"RewriteBase /\nRewriteRule ^index\\.php$ - [L]\n"
            b"RewriteCond %{REQUEST_FILENAME} !-f\nRewriteCond %{REQUEST_FILENAME} !-d\n"
            b"RewriteRule . /index.php [L]\n</IfModule>\n# END WordPress\n"
        )


def _realistic(lines=536):
    """WordPress block plus an IP block list of 536 `Deny from 172.16.x.y`
    lines (about 12 KB), as in the published experiment."""
    out = bytearray(_wordpress_block())
    if not out.endswith(b"\n"):
        out += b"\n"
    for i in range(lines):
        out += b"Deny from 172.16.%d.%d\n" % (i // 250, i % 250 + 1)
    return bytes(out)


CONTENTS = {
    "empty": lambda: b"",
    "single": lambda: b"Options +FollowSymLinks\n",
    "comments17k": lambda: _comments(17 * KB),
    "comments170k": lambda: _comments(170 * KB),
    "options17k": lambda: _options(17 * KB),
    "options170k": lambda: _options(170 * KB),
    "realistic12k": lambda: _realistic(),
}


class Scenario:
    """One measured point: a tree, a server, a URL, an AllowOverride setting."""

    def __init__(self, group, name, server, tree, path, override="All", pinned=True):
        self.group = group  # A, B, D, F, U, W, Z
        self.name = name
        self.server = server
        self.tree = tree  # key into the generated trees
        self.path = path
        self.override = override
        self.pinned = pinned

    @property
    def id(self):
        return f"{self.group}/{self.name}/{self.server}" + ("" if self.pinned else "/unpinned")


def depth_path(n):
    return "/" + "/".join(str(i) for i in range(1, n + 1)) + "/file.html"


def trees():
    """Every tree by key: (description, files) where files maps a relative
    path to bytes."""
    out = {"static": {"index.html": PAGE}}
    for name, make in CONTENTS.items():
        out[f"root-{name}"] = {"index.html": PAGE, ".htaccess": make()}
    for n in DEPTHS:
        dirs = [str(i) for i in range(1, n + 1)]
        leaf = "/".join(dirs) + "/file.html"
        out[f"d{n}-none"] = {leaf: PAGE}
        for name in ("empty", "single", "comments17k"):
            body = CONTENTS[name]()
            out[f"d{n}-root-{name}"] = {leaf: PAGE, ".htaccess": body}
            every = {leaf: PAGE, ".htaccess": body}
            for k in range(1, n + 1):
                every["/".join(dirs[:k]) + "/.htaccess"] = body
            out[f"d{n}-every-{name}"] = every
    return out


def write_trees(base):
    """Generate every tree under `base`; readable by the servers' users."""
    for key, files in trees().items():
        root = os.path.join(base, key)
        for rel, body in files.items():
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(body)
    for dirpath, dirnames, filenames in os.walk(base):
        os.chmod(dirpath, 0o755)
        for f in filenames:
            os.chmod(os.path.join(dirpath, f), 0o644)


def access_file_sizes():
    return {name: len(make()) for name, make in CONTENTS.items()}


def both_cores(peers):
    """Group U: every server on both cores, in run order."""
    out = [
        Scenario("U", "static", server, "static", "/index.html", override="None", pinned=False)
        for server in ["htaccel", "apache"] + list(peers)
    ]
    for server in ("htaccel", "apache"):
        out.append(Scenario("U", "ao-all-realistic12k", server, "root-realistic12k", "/index.html",
                            pinned=False))
    return out


def one_core_counterpart(name):
    """(group, scenario) of the pinned point that group U's point `name` doubles."""
    return ("D", "static") if name == "static" else ("A", name)


def scenarios(peers):
    """The measured points, in run order. `peers`: the peer servers present."""
    out = []
    # A: one access file at the document root, Apache then htaccel.
    for server in ("apache", "htaccel"):
        out.append(Scenario("A", "ao-none", server, "static", "/index.html", override="None"))
        out.append(Scenario("A", "ao-all-nofile", server, "static", "/index.html"))
        for name in CONTENTS:
            out.append(Scenario("A", f"ao-all-{name}", server, f"root-{name}", "/index.html"))
    # B: depth.
    for server in ("apache", "htaccel"):
        for n in DEPTHS:
            p = depth_path(n)
            out.append(Scenario("B", f"d{n}-ao-none", server, f"d{n}-none", p, override="None"))
            out.append(Scenario("B", f"d{n}-ao-all-nofile", server, f"d{n}-none", p))
            for where in ("root", "every"):
                for name in ("empty", "single", "comments17k"):
                    key = f"d{n}-{where}-{name}"
                    out.append(Scenario("B", key, server, key, p))
    # D: peers on the same static file (Apache with AllowOverride None).
    for server in ["apache", "htaccel"] + list(peers):
        out.append(Scenario("D", "static", server, "static", "/index.html", override="None"))
    # U: the server on both cores (one worker per CPU), wrk still on CPU 1,
    # so the server shares CPU 1 with it: every server on the static page,
    # and htaccel and Apache with the realistic 12 KB access file. Their
    # one-core counterparts are D/static and A/ao-all-realistic12k.
    out.extend(both_cores(peers))
    # W: WordPress through one PHP-FPM pool (bench/wordpress_bench.py; imported
    # here, not at the top, because it builds on this module).
    import wordpress_bench

    out.extend(wordpress_bench.scenarios_list())
    # F: a Flask application behind the server, X-Sendfile and static
    # (bench/flask_bench.py, imported here for the same reason).
    import flask_bench

    out.extend(flask_bench.scenarios_list())
    # Z: control, the first htaccel point again, to show drift over the run.
    out.append(Scenario("Z", "control-ao-none", "htaccel", "static", "/index.html", override="None"))
    return out
