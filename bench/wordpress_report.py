"""Goal (c) of bench/REPORT.md, WordPress vs Apache, from the points of group
W in results.json (bench/wordpress_bench.py); bench/report.py calls goal_c.

The goal: in front of the same PHP-FPM pool, htaccel serves each WordPress
page (the home page and a pretty permalink) at least as fast as Apache with
mod_proxy_fcgi: req/s ≥ RATIO × Apache's, the tolerance of goal (a). PHP
does nearly all the work, so the server's own CPU per request is given
beside it: there the two servers differ most. The servers are measured in
interleaved rounds (bench/wordpress_bench.py); the verdict takes the
median of each round's ratio (`paired_ratio_median`) where the point has
it, else the ratio of the two medians (results of older runs).
"""

RATIO = 0.97
NOISY_PCT = 15.0  # other work above this share of CPU 0 makes a run noisy
PAGES = (("home", "home page"), ("post", "permalink"))


def _points(points):
    return {(p["scenario"], p["server"]): p for p in points if p.get("group") == "W"}


def _ok(p):
    return p is not None and p.get("status") == "ok" and p.get("rps_median")


def _noisy(p):
    """Other work above the threshold on CPU 0 (the server's) or CPU 1 (the
    backend's and wrk's, which sets the rate of a PHP-bound page)."""
    worst = max(p.get("other_on_cpu0_pct_max") or 0, p.get("other_on_cpu1_pct_max") or 0) if p else 0
    return worst > NOISY_PCT


def _other(p):
    return f"{_fmt(p.get('other_on_cpu0_pct_max'))} / {_fmt(p.get('other_on_cpu1_pct_max'))}"


def _fmt(v, nd=0):
    return "–" if v is None else f"{v:,.{nd}f}"


def _of_medians(a, h):
    """htaccel's median req/s ÷ Apache's."""
    if _ok(a) and _ok(h):
        return h["rps_median"] / a["rps_median"]
    return None


def _interleaving(idx):
    """The sentence on how the servers were measured against each other."""
    n = sorted({p["rounds"] for p in idx.values() if p.get("rounds")})
    if not n:  # results from before the interleaving: one server's runs after the other's
        return "Each server's runs came one after the other's; the ratio is that of the medians."
    rounds = "/".join(str(v) for v in n) + (" round" if n == [1] else " rounds")
    return (
        f"The servers run side by side and are loaded in {rounds} of "
        "one run each, in alternating order (Apache, htaccel, nginx; then the reverse), so a drift "
        "of the backend falls on every server alike; the paired ratio is the median of each "
        "round's ratio (htaccel ÷ Apache), and the verdict uses it."
    )


def _verdict(a, h):
    """(verdict, req/s ratio, CPU-per-request ratio Apache ÷ htaccel). The
    req/s ratio is the paired one (median of the rounds' ratios) when the
    points were measured interleaved, else the ratio of the medians."""
    if not (_ok(a) and _ok(h)):
        bad = [p for p in (a, h) if not _ok(p)]
        why = "; ".join(f"{p['server']}: {p.get('status')} {(p.get('error') or '')[:100]}" for p in bad if p)
        return f"not measured ({why or 'point missing'})", None, None
    ratio = h.get("paired_ratio_median")
    if ratio is None:
        ratio = _of_medians(a, h)
    ca, ch = a.get("cpu_us_per_req_median"), h.get("cpu_us_per_req_median")
    cpu = ca / ch if ca and ch else None
    if ratio >= RATIO:
        return "met", ratio, cpu
    if _noisy(a) or _noisy(h):
        return f"inconclusive: other work above {NOISY_PCT:.0f} % of a CPU", ratio, cpu
    return "NOT met", ratio, cpu


def goal_c(res):
    """The report's lines for goal (c): the verdict and one row per page."""
    idx = _points(res.get("points", []))
    head = (
        f"**(c) WordPress, htaccel ≥ {RATIO} × Apache (mpm_event + mod_proxy_fcgi) in req/s "
        "in front of the same PHP-FPM pool, home page and a permalink: "
    )
    if not idx:
        return [head + "NOT MEASURED in this run** — group W did not run (`bench/run.sh --only wp`).\n"]
    rows, verdicts = [], []
    for page, label in PAGES:
        a, h = idx.get((f"wp-{page}", "apache")), idx.get((f"wp-{page}", "htaccel"))
        v, ratio, cpu = _verdict(a, h)
        verdicts.append(v)
        a, h = a or {}, h or {}
        rows.append([
            f"{label} `{(a or h).get('path', '')}`",
            _fmt(a.get("rps_median"), 1) + (" ⚠" if _noisy(a) else ""),
            _fmt(h.get("rps_median"), 1) + (" ⚠" if _noisy(h) else ""),
            _fmt(h.get("paired_ratio_median"), 3) + "; " + _fmt(_of_medians(a, h), 3),
            _fmt(a.get("cpu_us_per_req_median"), 1), _fmt(h.get("cpu_us_per_req_median"), 1),
            _fmt(cpu, 2),
            f"{_fmt(a.get('backend_cpu_us_per_req_median'))} / {_fmt(h.get('backend_cpu_us_per_req_median'))}"
            f" ({_fmt(h.get('paired_backend_cpu_ratio_median'), 3)})",
            _fmt(a.get("p99_ms_median"), 1) + " / " + _fmt(h.get("p99_ms_median"), 1),
            _other(a) + " · " + _other(h),
            v,
        ])  # fmt: skip
    if all(v == "met" for v in verdicts):
        overall = "MET"
    elif any(v == "NOT met" for v in verdicts):
        overall = "NOT MET"
    elif any(v.startswith("not measured") for v in verdicts):
        overall = "NOT MEASURED (a point failed)"
    else:
        overall = "INCONCLUSIVE (every miss was a noisy run)"
    any_p = next(iter(idx.values()))
    o = [head + overall + "**\n"]
    o.append(
        f"Both servers read the same configuration text (`.php` to the pool through `SetHandler "
        f"proxy:unix:…|fcgi://localhost`, `DirectoryIndex index.php`, the real WordPress `.htaccess`); "
        f"backend: {any_p.get('backend', '–')}; `wrk -c{any_p.get('connections', '–')}`; the server "
        "on CPU 0. The site is the one `tests/cases/wordpress/` compares with Apache "
        "(`scripts/wordpress.sh`). Server µs/req counts the web server's process tree only; the "
        "backend's (PHP-FPM and MariaDB) is its own column. PHP sets the rate, so other work on "
        "CPU 1 (busy time minus backend and wrk) makes a point as noisy as other work on CPU 0; ⚠: "
        f"more than {NOISY_PCT:.0f} % on either during the point. In the group's row of the point "
        "table below, *other work, both CPUs* includes the backend. " + _interleaving(idx) + "\n"
    )
    header = ["page", "Apache req/s", "htaccel req/s", "req/s ratio (paired median; of medians)",
              "Apache server µs/req", "htaccel server µs/req", "server CPU ratio (Apache ÷ htaccel)",
              "backend µs/req, Apache / htaccel (paired ratio htaccel ÷ Apache)", "p99 ms (Apache / htaccel)",
              "other work % CPU 0 / CPU 1 (Apache · htaccel)", "verdict"]  # fmt: skip
    o.append("| " + " | ".join(header) + " |")
    o.append("|" + "|".join("---" for _ in header) + "|")
    o += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    o.append("")
    o += _beside(idx)
    return o


# The points beside the goal: (scenario suffix, server, how the rules are given).
BESIDE = (
    ("", "apache", "Apache, the WordPress `.htaccess`"),
    ("", "htaccel", "htaccel, the WordPress `.htaccess`"),
    ("", "nginx", "nginx, the rules translated by hand (`try_files`)"),
    ("-blocklist", "apache", "Apache, WordPress block + 536 `Deny from` lines (12 KB)"),
    ("-blocklist", "htaccel", "htaccel, WordPress block + 536 `Deny from` lines (12 KB)"),
)


def _beside(idx):
    """Each page on every server and rule set group W measured."""
    rows = []
    for page, label in PAGES:
        for suffix, server, how in BESIDE:
            p = idx.get((f"wp-{page}{suffix}", server))
            if p is None:
                continue
            if not _ok(p):
                rows.append([label, how, f"not measured: {p.get('status')} {(p.get('error') or '')[:100]}",
                             "–", "–", "–"])  # fmt: skip
                continue
            rows.append([
                label, how,
                _fmt(p.get("rps_median"), 1) + (" ⚠" if _noisy(p) else ""),
                _fmt(p.get("cpu_us_per_req_median"), 1),
                _fmt(p.get("backend_cpu_us_per_req_median")),
                _fmt(p.get("p99_ms_median"), 1),
            ])  # fmt: skip
    if not rows:
        return []
    o = [
        "Beside the goal, the same pages and pool on nginx with the rules translated by hand, and "
        "with the 12 KB block-list `.htaccess` of group A on Apache and htaccel (the server on "
        "CPU 0, the backend and wrk on CPU 1, as above):\n"
    ]
    header = ["page", "server and rules", "req/s", "server µs/req", "backend µs/req", "p99 ms"]
    o.append("| " + " | ".join(header) + " |")
    o.append("|" + "|".join("---" for _ in header) + "|")
    o += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    o.append("")
    return o
