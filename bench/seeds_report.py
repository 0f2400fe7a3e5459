"""Section K of bench/REPORT.md ("the published experiments with their own
tools"), from the newest bench/results/seeds/<timestamp>.json of each kind
(a k6 run and an ab run may be separate files) that bench/seeds.py wrote,
with one bar chart per table (mean ± standard deviation of the runs).

    python3 bench/seeds_report.py     # rewrite that section of REPORT.md in place

bench/report.py calls `section()` when it regenerates the whole report, so
the section is written in one place only.
"""

import json
import os
import sys

import h2_report

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "results", "seeds")
TITLE = "## K: the published experiments with their own tools"
COLORS = {"apache": "#b03a2e", "htaccel": "#1f6f8b", "nginx": "#2e8b57"}
TABLES = (
    ("k6_static", "k6, static page `/index.html` (19 bytes)"),
    ("k6_wordpress", "k6, WordPress home page `/` (PHP-FPM, MariaDB)"),
    ("ab_depth26", "ab, 26-deep tree `/1/…/26/index.html`"),
    ("ab_bar10", "ab, 10-deep tree, `.bar` sent to PHP-FPM by the leaf's rule"),
)


def latest():
    """{table key: (results, path relative to bench/)} from the newest file holding it."""
    try:
        names = sorted(n for n in os.listdir(ROOT) if n.endswith(".json"))
    except OSError:
        return {}
    found = {}
    for name in reversed(names):
        with open(os.path.join(ROOT, name)) as f:
            res = json.load(f)
        for key, _ in TABLES:
            if key in res and key not in found:
                found[key] = (res, os.path.join("results", "seeds", name))
    return found


def _f(v, nd=0):
    return "—" if v is None else f"{v:,.{nd}f}"


def _pm(p, key, nd=0):
    m, s = p.get(f"{key}_mean"), p.get(f"{key}_std")
    if m is None:
        return "—"
    return f"{m:,.{nd}f} ± {s:,.{nd}f}" if s is not None else f"{m:,.{nd}f}"


def _points(res, key):
    v = res[key]
    return v["points"] if isinstance(v, dict) else v


def _reference(points, p):
    """The point `p` is compared with: its server under AllowOverride None."""
    for q in points:
        if q["server"] == p["server"] and q["key"].endswith("-none") and q is not p:
            return q
    return None


def _cost(points, p):
    """(cost in req/s, cost in server CPU per request) against the same
    server's AllowOverride None point: 1 − req/s ÷ req/s(None), and
    1 − µs(None) ÷ µs (the req/s the CPU would buy on an idle core)."""
    ref = _reference(points, p)
    if not ref or p["server"] == "nginx":
        return "—", "—"
    out = []
    for key, inverse in (("rps_mean", False), ("cpu_us_per_req_mean", True)):
        a, b = p.get(key), ref.get(key)
        if not a or not b:
            out.append("—")
            continue
        out.append(f"{100 * (1 - (b / a if inverse else a / b)):+.1f} %")
    return tuple(out)


def _table(res, key, rel):
    points = _points(res, key)
    wp = key == "k6_wordpress"
    client = "k6" if key.startswith("k6") else "ab"
    o = ["| point | req/s (mean ± std) | runs | mean latency ms | p95 ms | server µs/request | "
         + ("PHP+DB µs/page | " if wp else "") + f"{client} CPU % | cost in req/s | cost in server CPU "
         "| published | other work on CPU 0, max % |",
         "|---|---:|---:|---:|---:|---:|" + ("---:|" if wp else "") + "---:|---:|---:|---|---:|"]
    for p in points:
        if p.get("status") == "failed" or "runs" not in p:
            o.append(f"| {p['label']} | not measured: {p.get('error', 'failed')[:300]} |||||||"
                     + ("|" if wp else "") + "||")
            continue
        row = [p["label"] + ("" if p["status"] == "ok" else f" ({p['failed_total']} failed requests)"),
               _pm(p, "rps", 1 if wp else 0), str(p["runs_done"]), _pm(p, "mean_ms", 2),
               _pm(p, "p95_ms", 2 if client == "k6" else 0),
               _pm(p, "cpu_us_per_req", 1)]
        if wp:
            row.append(_f(p.get("backend_cpu_us_per_req_mean")))
        row += [_f(p.get("client_cpu_pct_mean")), *_cost(points, p), p.get("published", "—"),
                _f(p.get("other_on_cpu0_pct_max"), 1)]
        o.append("| " + " | ".join(row) + " |")
    return o


def chart(res, key, title, stem):
    """Bars of mean req/s with the runs' standard deviation; PNG and SVG
    beside the results file. Returns the charts' paths relative to bench/."""
    points = [p for p in _points(res, key) if p.get("rps_mean") is not None]
    if not points:
        return None
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(points) + 1.4))
    ys = range(len(points))
    ax.barh(list(ys), [p["rps_mean"] for p in points], xerr=[p.get("rps_std") or 0 for p in points],
            color=[COLORS.get(p["server"], "#888888") for p in points], capsize=4)
    ax.set_yticks(list(ys))
    ax.set_yticklabels([p["label"] for p in points], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("requests per second (mean ± std of the runs)")
    ax.set_title(title.replace("`", ""), fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    base = os.path.join(ROOT, f"{stem}-{key.replace('_', '-')}")
    for ext in ("png", "svg"):
        fig.savefig(f"{base}.{ext}", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return os.path.relpath(base, HERE)


def _how(res, key, rel):
    s = res["settings"]
    if key.startswith("k6"):
        cmd = f"`k6 run --vus {res['vus']} --duration {s['k6_seconds']}s` (script below, no sleep)"
        runs = (f"{s['k6_runs']} run(s) per point after a 2 s warm-up, the points' runs interleaved "
                "round after round (order alternating)")
    else:
        v = res[key]
        cmd = f"`ab -c {v['concurrency']} -n {v['requests']}` (no keep-alive, as published)"
        runs = (f"{s['ab_runs']} runs per point in a random order (seed {v['seed']}): "
                + ", ".join(v["order"]))
        if "interrupted_after" in v:
            runs += (f" — INTERRUPTED after the first {v['interrupted_after']} of these runs "
                     "(the deadline): each point's mean is over the runs it got (column runs)")
    extra = ""
    if key == "k6_wordpress":
        extra = (" PHP-FPM and MariaDB run on CPU 1 with k6 (group W's site, bench/wordpress_bench.py); "
                 "the pool is drained before every run.")
    if key == "ab_bar10":
        extra = f" {res[key].get('backend', '')}."
    return (f"From `{rel}` ({s['mode']} mode; run {res['started']} – {res['finished']}, load average "
            f"{' '.join(res['loadavg_start'])} at start, {' '.join(res['loadavg_end'])} at end): "
            f"{cmd}, {runs}.{extra}")


def section():
    found = latest()
    o = [TITLE, ""]
    if not found:
        return "\n".join(o + ["Not run (`python3 bench/seeds.py`).", ""])
    any_res = next(iter(found.values()))[0]
    o += ["The published `.htaccess` experiments this project answers were run with k6 and ab, "
          "not wrk; `bench/seeds.py` runs them again with those tools (generated by "
          "`bench/seeds_report.py`). Every server pinned to CPU 0 with one worker "
          "(`bench/servers.py`), the load generator on CPU 1; all points of a table run at once on "
          "their own ports and their runs are interleaved. Server µs/request: Δ(utime + stime) of "
          "the server's process tree from /proc / requests answered. Latency: k6's "
          "`http_req_duration` (mean, p95); ab's \"time per request (mean)\" and its 95 % line. "
          "Cost in req/s: 1 − req/s ÷ req/s of the same server with AllowOverride None (in the ab "
          "and WordPress tables, None with the same rule in the main configuration's `<Directory>`); "
          "cost in server CPU: 1 − µs/request(None) ÷ µs/request, the throughput lost on a core the "
          "server had to itself. The published figures are costs in req/s.",
          "",
          "- This machine is shared: the last column is the share of CPU 0 that other work took "
          "during a point's runs (the load averages are given with each table). With that much "
          "other work the req/s follow the CPU the server was given, so the standard deviations "
          "are wide; server CPU per request moves much less and is the steadier figure here. "
          "A client CPU % far under 100 means the client was not the limit (or was itself "
          "crowded on CPU 1).",
          "- k6 counts its rate over the whole test, including the graceful stop in which the "
          "requests still in flight finish: with WordPress's seconds-long answers that stop is a "
          "large part of a short run, and k6's req/s is lower than pages ÷ duration.",
          "",
          f"- Versions: {any_res.get('k6') or 'k6 not installed'}; {any_res.get('ab')}; "
          f"{any_res.get('apache')}; {any_res.get('htaccel')}; {any_res.get('nginx')}.",
          "- Published figures known to the project, beside ours where a point corresponds: Apache "
          "AllowOverride None static ≈ 9.9k req/s; AllowOverride All with no file ≈ 16 % cost; the "
          "realistic 12 KB WordPress file ≈ 40 %; the 26-deep tree halves throughput (5.1k req/s "
          "against 9.95k with AllowOverride None). 8,000 directives ≈ 90 % has no point here (the "
          "file's content is not published in our sources). For the WordPress k6 scenario and the "
          "`.bar` tree no figure is published in our sources. The published runs were on other "
          "hardware: compare costs (ratios), not req/s.",
          ""]
    for key, title in TABLES:
        o.append(f"### {title}")
        o.append("")
        if key not in found:
            missing = any_res.get("k6_missing" if key.startswith("k6") else "ab_missing")
            o += [f"Not run{': ' + missing if missing else ''} (`python3 bench/seeds.py --only "
                  f"{key.split('_')[0]}`).", ""]
            continue
        res, rel = found[key]
        o += [_how(res, key, rel), ""]
        o += _table(res, key, rel)
        o.append("")
        stem = os.path.splitext(os.path.basename(rel))[0]
        path = chart(res, key, title, stem)
        if path:
            o += [f"![{title}]({path}.png) ([SVG]({path}.svg))", ""]
    k6res = found.get("k6_static", (None,))[0]
    if k6res:
        o += ["The k6 script:", "", "```js", k6res["k6_script"].rstrip(), "```", ""]
    return "\n".join(o)


def main():
    h2_report.replace_section(TITLE, section())
    print("wrote section K of bench/REPORT.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
