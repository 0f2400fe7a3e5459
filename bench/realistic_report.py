"""The "Realistic traffic" section of bench/REPORT.md and its charts, from
the bench/results/realistic/<timestamp>.json files that bench/realistic.py
wrote.

    python3 bench/realistic_report.py     # rewrite that section of REPORT.md in place

Each of the section's three parts (one core, both cores, instructions) comes
from the newest run that measured it in full (3 runs x 10 s; the
instruction count of the mix over 3,000 and 15,000 requests): a quick run
(bench/run.sh with BENCH_QUICK=1) checks that the bench works, and its
1 x 3 s figures would otherwise replace the full ones; the section names the
newer quick runs it left out. Without any full run the newest quick one is
shown, marked as such.

bench/report.py calls `section()` and `chart()` when it regenerates the
whole report, so the section is written in one place only.
"""

import json
import os
import sys

import h2_report

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "results", "realistic")
TITLE = "## R: realistic traffic (a WordPress-shaped tree, a Zipf mix of its URLs)"
RATIO_GOAL = 0.97
NOISY_PCT = 30.0  # other work above this share of one core: a noisy table
KINDS = ("points", "points_both_cores", "instructions")
FULL_RUNS, FULL_SECONDS, FULL_REQUESTS = 3, 10, [3000, 15000]
CHARTS = (("chart-realistic-throughput", "req/s and server CPU per request, one core and both cores"),
          ("chart-realistic-instructions", "instructions per request"))
MODES = (("points", "one core", "#1f6f8b"), ("points_both_cores", "both cores", "#d4a017"))
SERVER_COLORS = {"htaccel": "#1f6f8b", "apache": "#b03a2e", "nginx": "#2e8b57",
                 "lighttpd": "#d4a017", "h2o": "#6a4c93", "caddy": "#7f8c8d"}


def full(res, kind):
    """Whether `res` measured `kind` in full (not a quick run)."""
    if kind == "instructions":
        return res.get("requests") == FULL_REQUESTS
    return res.get("runs", 0) >= FULL_RUNS and res.get("seconds", 0) >= FULL_SECONDS


def comparable(res, kind):
    """Instruction counts of the mix over 4 connections only: --distinct and
    --connections counts are A/B measurements of another thing."""
    if kind != "instructions":
        return True
    return not res.get("distinct") and res.get("connections_counted", 4) == 4


def runs():
    """Every results file, oldest first: [(relative path, results)]."""
    try:
        names = sorted(n for n in os.listdir(ROOT) if n.endswith(".json"))
    except OSError:
        return []
    out = []
    for name in names:
        with open(os.path.join(ROOT, name)) as f:
            out.append((os.path.join("results", "realistic", name), json.load(f)))
    return out


def latest():
    """{kind: (results, relative path, newer quick runs left out)} for each
    kind measured: the newest full run of it, else the newest run."""
    found = {}
    for kind in KINDS:
        have = [(rel, res) for rel, res in runs() if kind in res and comparable(res, kind)]
        if not have:
            continue
        fulls = [(rel, res) for rel, res in have if full(res, kind)]
        rel, res = (fulls or have)[-1]
        left = [r for r, x in have if r > rel and not full(x, kind)]
        found[kind] = (res, rel, left)
    return found


def _f(v, digits=0):
    return "—" if v is None else f"{v:,.{digits}f}"


def _statuses(p):
    return ", ".join(f"{k}: {v}" for k, v in p["statuses"].items())


def _left_out(left):
    if not left:
        return []
    return [f"- Newer quick run(s) not shown here (1 run of a few seconds, a check that the bench "
            f"works): {', '.join(f'`{r}`' for r in left)}."]


def _quick_note(res, kind):
    return [] if full(res, kind) else ["- **A quick run** (no full run of this part yet): "
                                       "the figures are a smoke test, not a measurement to quote."]


def _noise(points):
    """A warning when other work took more than NOISY_PCT % of a core."""
    worst = max((p.get("other_cpu_pct_max") or 0 for p in points if "missing" not in p), default=0)
    if worst <= NOISY_PCT:
        return []
    return [f"- ⚠ **Other work took up to {worst:.0f} % of one core during these runs** (busy time of "
            "both CPUs minus server and wrk): the server and wrk had that much less, and the figures "
            "say more about the machine's load than about the servers; compare within the table."]


def _table(points, one_core=None):
    """The throughput rows; with `one_core` (the one-core points by label),
    a column of req/s against them."""
    o = ["| server | req/s" + (" | × one core" if one_core else "") + " | user µs/req | system µs/req "
         "| p50 ms | p99 ms | server CPU % | wrk CPU % | other work % | RSS MiB | memo hits | statuses |",
         "|---|---:" + ("|---:" if one_core else "") + "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for p in points:
        if "missing" in p:
            o.append(f"| {p['label']} | not measured: {p['missing']} |" + "|" * (11 if one_core else 10))
            continue
        hit = p.get("memo_hit_rate")
        cells = [f"| {p['label']}", _f(p["rps_median"])]
        if one_core:
            ref = one_core.get(p["label"])
            cells.append(f"{p['rps_median'] / ref['rps_median']:.2f}" if ref else "—")
        cells += [_f(p["user_us_per_req_median"], 1), _f(p["sys_us_per_req_median"], 1),
                  _f(p["p50_ms_median"], 2), _f(p["p99_ms_median"], 2), _f(p["server_cpu_pct_median"]),
                  _f(p["wrk_cpu_pct_median"]), _f(p.get("other_cpu_pct_max")), _f(p["rss_kib"] / 1024, 1),
                  "—" if hit is None else f"{100 * hit:.0f} %", _statuses(p)]
        o.append(" | ".join(cells) + " |")
    o.append("")
    return o


def _mix(res):
    return (f"- The tree: {res['tree_files']:,} files (mean answer of the mix {res['mean_bytes']:,} bytes); "
            "the mix: 100,000 URLs drawn from a Zipf distribution (s = 1), 5 % misses, 1 % directories "
            "without their slash, replayed in order by `wrk -t1 -c50` with `bench/replay.lua`, "
            f"{res['runs']} run(s) × {res['seconds']} s after a 2 s warm-up, median kept; {res['wrk']}.")


def _both_cores(res, rel, left, shown):
    """Table R2: the POINTS servers on both cores, sharing CPU 1 with wrk,
    with their req/s over the one-core points of the same run where it
    measured them, else over those of table R1 (`shown`)."""
    pts = res["points_both_cores"]
    one_core = res if "points" in res else None
    o = ["### R2: realistic traffic, server on both cores (sharing CPU 1 with wrk)", "",
         f"From `{rel}` (run {res['started']} – {res['finished']}; "
         f"`python3 bench/realistic.py --both-cores --runs {res['runs']} --seconds {res['seconds']}`):",
         "",
         _mix(res),
         f"- Every server unpinned on both CPUs ({res.get('cpus', 2)}) with one worker per CPU "
         "(nginx `worker_processes`, h2o `num-threads`, lighttpd `server.max-worker`, htaccel one "
         "thread per CPU it may run on; Apache: mpm_event, 1 process × 64 threads); **wrk stays on "
         "`taskset -c 1`, so the server shares CPU 1 with the load generator**, as group U places "
         "them. wrk stays pinned so that the only change from the one-core table is where the server "
         "runs: `wrk -t1` is one thread and cannot use a second core, and left free it would take "
         "turns on CPU 0 too, leaving neither core's load attributable.",
         "- Server CPU %: the server's CPU time over the run in % of one core (up to 200 % here). "
         + (("× one core: req/s over the same server's one-core req/s of the same run"
             + ("." if one_core is shown else f" (`{rel}` measured both; table R1 shows a full run)."))
            if one_core else "No ratio to table R1: it is another run, on a machine otherwise loaded."),
         *_noise(pts),
         f"- Load average at start {' '.join(res['loadavg_start'])}, at end "
         f"{' '.join(res['loadavg_end'])}.",
         *_quick_note(res, "points_both_cores"), *_left_out(left), ""]
    ref = {p["label"]: p for p in one_core["points"] if "missing" not in p} if one_core else None
    o += _table(pts, ref)
    by = {p["label"]: p for p in pts if "missing" not in p}
    ours = by.get("htaccel")
    for peer in ("h2o", "nginx", "lighttpd", "apache"):
        theirs = by.get(peer)
        if ours and theirs:
            o.append(f"- htaccel ÷ {peer} on both cores: req/s {ours['rps_median'] / theirs['rps_median']:.2f}, "
                     f"server CPU per request ({peer} ÷ htaccel) "
                     f"{theirs['cpu_us_per_req_median'] / ours['cpu_us_per_req_median']:.2f}.")
    o.append("")
    return o


def _throughput(res, rel, left):
    o = ["### R1: realistic traffic, server on one core (CPU 0), wrk on CPU 1", "",
         f"From `{rel}` (run {res['started']} – {res['finished']}; "
         f"`python3 bench/realistic.py --throughput --runs {res['runs']} --seconds {res['seconds']}`):",
         "",
         _mix(res),
         "- Every server on `taskset -c 0` with one worker, wrk on CPU 1; Apache and htaccel with "
         "`EnableSendfile On` like the others. nginx and lighttpd refuse Akismet's directory as its "
         ".htaccess does; h2o cannot without mruby and serves it (its status counts show it).",
         "- Statuses: the first URLs of the list, replayed once before the runs. CPU per request: "
         "Δ(utime, stime) of the server's processes / requests answered. RSS after the runs. "
         "Memo hits: htaccel's answer memo, from its metrics page during the runs. Other work: busy "
         "time of both CPUs minus server and wrk, in % of one core (largest of the runs).",
         f"- Load average at start {' '.join(res['loadavg_start'])}, at end "
         f"{' '.join(res['loadavg_end'])}.",
         *_noise(res["points"]), *_quick_note(res, "points"), *_left_out(left), ""]
    o += _table(res["points"])
    by = {p["label"]: p for p in res["points"] if "missing" not in p}
    ours = by.get("htaccel")
    for peer in ("h2o", "nginx", "apache"):
        theirs = by.get(peer)
        if not (ours and theirs):
            continue
        rps = ours["rps_median"] / theirs["rps_median"]
        cpu = theirs["cpu_us_per_req_median"] / ours["cpu_us_per_req_median"]
        wrk_bound = ours["wrk_cpu_pct_median"] >= 90
        met = cpu >= 1 if wrk_bound else rps >= 1
        o.append(f"- **htaccel ≥ {peer}: {'MET' if met else 'NOT MET'}** — req/s ratio {rps:.2f}, "
                 f"CPU per request ratio ({peer} ÷ htaccel) {cpu:.2f}"
                 f"{' (wrk is the limit: judged by CPU per request)' if wrk_bound else ''}.")
    o.append("")
    return o


def _instructions(res, rel, left):
    o = ["### Instructions per request", "",
         f"From `{rel}` (run {res['started']} – {res['finished']}; "
         f"`python3 bench/realistic.py --instructions --requests {res['requests'][0]} {res['requests'][1]}"
         f"{' --distinct' if res.get('distinct') else ''}`):",
         f"user-space instructions per request of {'distinct files' if res.get('distinct') else 'the mix'} "
         "under callgrind (every process of the server, pinned, one worker, "
         f"{res.get('connections_counted', 4)} keep-alive connection(s)), (I(N2) − I(N1)) / (N2 − N1); "
         "kernel work is not counted.",
         *_quick_note(res, "instructions"), *_left_out(left),
         "",
         "| server | instructions/request |",
         "|---|---:|"]
    for p in res["instructions"]:
        o.append(f"| {p['label']} | {'not measured: ' + p['missing'] if 'missing' in p else _f(p['per_request'])} |")
    o.append("")
    by = {p["label"]: p.get("per_request") for p in res["instructions"]}
    ours, h2o = by.get("htaccel"), by.get("h2o")
    if ours and h2o:
        o.append(f"- **Instructions per request ≤ h2o's: {'MET' if ours <= h2o else 'NOT MET'}** — "
                 f"htaccel {ours:,}, h2o {h2o:,} ({ours / h2o:.2f}×).")
    none = by.get("htaccel, AllowOverride None")
    if ours and none:
        r = none / ours
        o.append(f"- **With the .htaccess files ≥ {RATIO_GOAL} × AllowOverride None: "
                 f"{'MET' if r >= RATIO_GOAL else 'NOT MET'}** — {r:.3f} ({none:,} ÷ {ours:,}).")
    o.append("")
    return o


def _label(label):
    return label.replace(", AllowOverride None", "\nAllowOverride None")


def _save(fig, name):
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(ROOT, f"{name}.{ext}"), dpi=110, bbox_inches="tight",
                    metadata={"Date": None} if ext == "svg" else {})
    plt.close(fig)


def _chart_throughput(found):
    """req/s and server CPU per request (user solid, system hatched) of each
    server, one core beside both cores."""
    modes = [(kind, name, color) for kind, name, color in MODES if kind in found]
    labels = []
    for kind, _, _ in modes:
        labels += [p["label"] for p in found[kind][0][kind] if p["label"] not in labels]
    by = {kind: {p["label"]: p for p in found[kind][0][kind] if "missing" not in p} for kind, _, _ in modes}
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 4.8))
    width = 0.8 / len(modes)
    for i, (kind, name, color) in enumerate(modes):
        xs = [x + (i - (len(modes) - 1) / 2) * width for x in range(len(labels))]
        pts = [by[kind].get(label) for label in labels]
        ax1.bar(xs, [p["rps_median"] if p else 0 for p in pts], width, label=name, color=color)
        user = [p["user_us_per_req_median"] or 0 if p else 0 for p in pts]
        system = [p["sys_us_per_req_median"] or 0 if p else 0 for p in pts]
        ax2.bar(xs, user, width, label=f"{name}: user", color=color)
        ax2.bar(xs, system, width, bottom=user, label=f"{name}: system", color=color, alpha=0.45,
                hatch="//", edgecolor="white")
        for ax in (ax1, ax2):
            for x, p in zip(xs, pts):
                if p is None:
                    ax.text(x, 0, "not measured", rotation=90, ha="center", va="bottom", fontsize=7)
    ax1.set_ylabel("requests/s (median)")
    ax1.set_title("Realistic traffic: requests/s (wrk on CPU 1)")
    ax2.set_ylabel("server CPU µs per request (median)")
    ax2.set_title("Server CPU per request: user + system")
    fig.suptitle("; ".join(f"{name}: {os.path.basename(found[kind][1])}"
                           + ("" if full(found[kind][0], kind) else " (quick run)")
                           for kind, name, _ in modes), fontsize=8, y=0.995)
    for ax in (ax1, ax2):
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels([_label(label) for label in labels], rotation=35, ha="right", fontsize=8)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8)
    _save(fig, CHARTS[0][0])


def _chart_instructions(res, rel):
    pts = [p for p in res["instructions"] if "missing" not in p]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.bar([_label(p["label"]) for p in pts], [p["per_request"] for p in pts],
           color=[SERVER_COLORS.get(p["server"]) for p in pts])
    for i, p in enumerate(pts):
        ax.text(i, p["per_request"], f"{p['per_request']:,}", ha="center", va="bottom", fontsize=8)
    ax.set_ylabel("user-space instructions per request")
    ax.set_title(f"Realistic mix under callgrind (one worker): {os.path.basename(rel)}")
    ax.tick_params(axis="x", labelsize=8)
    ax.grid(axis="y", alpha=0.3)
    _save(fig, CHARTS[1][0])


def chart():
    """The section's charts, in bench/results/realistic/ (PNG and SVG); the
    names of those drawn."""
    found = latest()
    plt.rcParams["svg.hashsalt"] = "htaccel-realistic"  # the same SVG for the same figures
    drawn = []
    if "points" in found or "points_both_cores" in found:
        _chart_throughput(found)
        drawn.append(CHARTS[0])
    if "instructions" in found:
        _chart_instructions(*found["instructions"][:2])
        drawn.append(CHARTS[1])
    return drawn


def section(drawn=None):
    """The section's text; `drawn`: the charts chart() drew (by default those
    whose data exists)."""
    found = latest()
    o = [TITLE, ""]
    if not found:
        return "\n".join(o + ["Not run (`python3 bench/realistic.py --throughput --both-cores "
                              "--instructions`).", ""])
    if drawn is None:
        drawn = [c for c, kinds in zip(CHARTS, (("points", "points_both_cores"), ("instructions",)))
                 if any(k in found for k in kinds)]
    for name, title in drawn:
        o.append(f"![{title}](results/realistic/{name}.png) ([SVG](results/realistic/{name}.svg))")
        o.append("")
    one = found.get("points")
    if one is not None:
        o += _throughput(*one)
    if "points_both_cores" in found:
        o += _both_cores(*found["points_both_cores"], shown=one[0] if one else None)
    if "instructions" in found:
        o += _instructions(*found["instructions"])
    # A blank line before the next section's title.
    return "\n".join(o + [""])


def main():
    h2_report.replace_section(TITLE, section(chart()))
    print("wrote the realistic-traffic section of bench/REPORT.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
