"""Goal (c) of bench/REPORT.md, WordPress vs Apache, from the points of group
W in results.json (bench/wordpress_bench.py); bench/report.py calls goal_c.

The goal: in front of the same PHP-FPM pool, htaccel serves each WordPress
page (the home page and a pretty permalink) at least as fast as Apache with
mod_proxy_fcgi: req/s ≥ RATIO × Apache's, the tolerance of goal (a). PHP
does nearly all the work, so the server's own CPU per request is given
beside it: there the two servers differ most.

The verdict rule (bench/wordpress_bench.py says why): the servers are
measured in short interleaved windows; the verdict takes the pooled ratio R
(htaccel's total requests ÷ Apache's over the same windows) — met when
R ≥ RATIO, NOT met below — and adds "within noise" when the 95 % interval
of R (over pairs of rounds) contains RATIO. Results of older runs, without
a pooled ratio, are judged as they were then: the median of the rounds'
ratios (`paired_ratio_median`), else the ratio of the two medians; a miss
there with other work above NOISY_PCT is inconclusive.
"""

import statistics

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
    if _pooled(idx):
        w = sorted({p["window_seconds"] for p in idx.values() if p.get("window_seconds")})
        return (
            f"The servers run side by side and are loaded in {rounds} of one "
            f"{'/'.join(str(v) for v in w)} s window each, in alternating order (Apache, htaccel, "
            "nginx; then the reverse), the pool drained (its CPU idle) before every window, so a "
            "drift of the backend falls on every server alike and cancels over each pair of rounds. "
            "The verdict takes the pooled ratio: htaccel's total requests ÷ Apache's over the same "
            f"windows; met when it is ≥ {RATIO}, and *within noise* when its 95 % interval (ratio "
            "estimator over pairs of rounds, Student's t) contains "
            f"{RATIO}. The median of the rounds' own ratios is shown beside it."
        )
    return (
        f"The servers run side by side and are loaded in {rounds} of "
        "one run each, in alternating order (Apache, htaccel, nginx; then the reverse), so a drift "
        "of the backend falls on every server alike; the paired ratio is the median of each "
        "round's ratio (htaccel ÷ Apache), and the verdict uses it."
    )


def _pooled(idx):
    """Whether the run measured pooled ratios (its points carry them)."""
    return any("pooled_ratio" in p for p in idx.values())


def _why_not(a, h):
    bad = [p for p in (a, h) if not _ok(p)]
    why = "; ".join(f"{p['server']}: {p.get('status')} {(p.get('error') or '')[:100]}" for p in bad if p)
    return f"not measured ({why or 'point missing'})"


def _verdict(a, h):
    """(verdict, req/s ratio, CPU-per-request ratio Apache ÷ htaccel) of a
    run without pooled ratios. The req/s ratio is the paired one (median
    of the rounds' ratios) when the points were measured interleaved, else
    the ratio of the medians."""
    if not (_ok(a) and _ok(h)):
        return _why_not(a, h), None, None
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


def pooled_verdict(h):
    """The verdict on htaccel's point `h` by its pooled ratio and interval."""
    ratio, ci = h.get("pooled_ratio"), h.get("pooled_ratio_ci95")
    v = "met" if ratio >= RATIO else "NOT met"
    if ci is None:
        return v + " (no interval: fewer than two pairs of rounds)"
    if ci[0] <= RATIO <= ci[1]:
        return v + ", within noise"
    return v


def _ci(p):
    ci = p.get("pooled_ratio_ci95")
    return f"{ci[0]:.3f}–{ci[1]:.3f}" if ci else "–"


def _quartiles(vals):
    vals = sorted(v for v in vals or [] if v is not None)
    if len(vals) < 4:
        return None
    q = statistics.quantiles(vals, n=4)
    return q[0], q[2]


def _round_ratios(p):
    """The rounds' ratios (this ÷ Apache) in round order, with their median
    and interquartile range."""
    vals = p.get("paired_ratios") or []
    text = " ".join(_fmt(v, 2) for v in vals)
    q = _quartiles(vals)
    iqr = f", interquartile {q[0]:.2f}–{q[1]:.2f}" if q else ""
    return f"{text} (median {_fmt(p.get('paired_ratio_median'), 3)}{iqr})"


def _pooled_rows(idx):
    rows, verdicts, notes = [], [], []
    for page, label in PAGES:
        a, h = idx.get((f"wp-{page}", "apache")), idx.get((f"wp-{page}", "htaccel"))
        if not (_ok(a) and _ok(h)) or h.get("pooled_ratio") is None:
            v = _why_not(a, h) if not (_ok(a) and _ok(h)) else "not measured (no pooled ratio)"
            verdicts.append(v)
            rows.append([label, "–", "–", "–", "–", "–", "–", "–", "–", "–", "–", "–", v])
            continue
        v = pooled_verdict(h)
        verdicts.append(v)
        ca, ch = a.get("cpu_us_per_req_pooled"), h.get("cpu_us_per_req_pooled")
        rows.append([
            f"{label} `{a.get('path', '')}`",
            _fmt(a.get("rps_pooled"), 2) + (" ⚠" if _noisy(a) else ""),
            _fmt(h.get("rps_pooled"), 2) + (" ⚠" if _noisy(h) else ""),
            f"**{h['pooled_ratio']:.3f}**", _ci(h),
            f"{_fmt(h.get('paired_ratio_median'), 3)}",
            _fmt(ca, 1), _fmt(ch, 1), _fmt(ca / ch if ca and ch else None, 2),
            f"{_fmt(a.get('backend_cpu_us_per_req_pooled'))} / {_fmt(h.get('backend_cpu_us_per_req_pooled'))}"
            f" ({_fmt(h.get('pooled_backend_cpu_ratio'), 3)})",
            _fmt(a.get("p99_ms_median"), 1) + " / " + _fmt(h.get("p99_ms_median"), 1),
            _other(a) + " · " + _other(h),
            v,
        ])  # fmt: skip
        notes.append(
            f"- {label}, {h.get('rounds')} rounds of {h.get('window_seconds')} s, "
            f"{_fmt(a.get('requests_total'))} pages on Apache, {_fmt(h.get('requests_total'))} on htaccel. "
            f"Rounds' ratios htaccel ÷ Apache: {_round_ratios(h)}."
        )
        n = idx.get((f"wp-{page}", "nginx"))
        if _ok(n) and n.get("pooled_ratio") is not None:
            notes.append(
                f"  nginx ÷ Apache in the same rounds: pooled {n['pooled_ratio']:.3f} ({_ci(n)}); "
                f"rounds' ratios {_round_ratios(n)}; backend CPU per page "
                f"{_fmt(n.get('pooled_backend_cpu_ratio'), 3)} × Apache's."
            )
    return rows, verdicts, notes


def _overall(verdicts):
    if all(v.startswith("met") for v in verdicts):
        overall = "MET"
    elif any(v.startswith("NOT met") for v in verdicts):
        overall = "NOT MET"
    elif any(v.startswith("not measured") for v in verdicts):
        overall = "NOT MEASURED (a point failed)"
    else:
        overall = "INCONCLUSIVE (every miss was a noisy run)"
    if any("within noise" in v for v in verdicts):
        overall += " (within noise)"
    return overall


def goal_c(res):
    """The report's lines for goal (c): the verdict and one row per page."""
    idx = _points(res.get("points", []))
    head = (
        f"**(c) WordPress, htaccel ≥ {RATIO} × Apache (mpm_event + mod_proxy_fcgi) in req/s "
        "in front of the same PHP-FPM pool, home page and a permalink: "
    )
    if not idx:
        return [head + "NOT MEASURED in this run** — group W did not run (`bench/run.sh --only wp`).\n"]
    notes = []
    if _pooled(idx):
        rows, verdicts, notes = _pooled_rows(idx)
        header = ["page", "Apache req/s (pooled)", "htaccel req/s (pooled)", "pooled ratio htaccel ÷ Apache",
                  "95 % interval", "median of rounds' ratios", "Apache server µs/req",
                  "htaccel server µs/req", "server CPU ratio (Apache ÷ htaccel)",
                  "backend µs/page, Apache / htaccel (pooled ratio htaccel ÷ Apache)",
                  "p99 ms (Apache / htaccel)", "other work % CPU 0 / CPU 1 (Apache · htaccel)",
                  "verdict"]  # fmt: skip
    else:
        rows, verdicts = _old_rows(idx)
        header = ["page", "Apache req/s", "htaccel req/s", "req/s ratio (paired median; of medians)",
                  "Apache server µs/req", "htaccel server µs/req", "server CPU ratio (Apache ÷ htaccel)",
                  "backend µs/req, Apache / htaccel (paired ratio htaccel ÷ Apache)",
                  "p99 ms (Apache / htaccel)", "other work % CPU 0 / CPU 1 (Apache · htaccel)",
                  "verdict"]  # fmt: skip
    any_p = next(iter(idx.values()))
    o = [head + _overall(verdicts) + "**\n"]
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
    o.append("| " + " | ".join(header) + " |")
    o.append("|" + "|".join("---" for _ in header) + "|")
    o += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    o.append("")
    if notes:
        o += notes
        o.append("")
    o += _beside(idx)
    return o


def _old_rows(idx):
    """Rows and verdicts of a run without pooled ratios (older results)."""
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
    return rows, verdicts


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
                             "–", "–", "–", "–"])  # fmt: skip
                continue
            rows.append([
                label, how,
                _fmt(p.get("rps_pooled") or p.get("rps_median"), 1) + (" ⚠" if _noisy(p) else ""),
                _fmt(p.get("cpu_us_per_req_pooled") or p.get("cpu_us_per_req_median"), 1),
                _fmt(p.get("backend_cpu_us_per_req_pooled") or p.get("backend_cpu_us_per_req_median")),
                _fmt(p.get("p99_ms_median"), 1),
                f"{p['pooled_ratio']:.3f} ({_ci(p)})" if p.get("pooled_ratio") is not None
                else _fmt(p.get("paired_ratio_median"), 3),
            ])  # fmt: skip
    if not rows:
        return []
    o = [
        "Beside the goal, the same pages and pool on nginx with the rules translated by hand, and "
        "with the 12 KB block-list `.htaccess` of group A on Apache and htaccel (the server on "
        "CPU 0, the backend and wrk on CPU 1, as above); the last column is the server's req/s ÷ "
        "Apache's with the same rules in the same rounds (pooled, with its 95 % interval, where "
        "the run has it; else the median of the rounds' ratios):\n"
    ]
    header = ["page", "server and rules", "req/s", "server µs/req", "backend µs/req", "p99 ms",
              "÷ Apache, same rounds"]
    o.append("| " + " | ".join(header) + " |")
    o.append("|" + "|".join("---" for _ in header) + "|")
    o += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    o.append("")
    return o
