"""Generate the charts and bench/REPORT.md from a results directory (default:
the latest under bench/results/). Every number in the report comes from
results.json; nothing here is typed by hand.

Usage: python3 bench/report.py [RESULTS_DIR]
"""

import json
import os
import sys

import bench
import flask_report
import fs_report
import h2_report
import https_report
import realistic_report
import scenarios
import seeds_report

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import wordpress_report  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
COLORS = {
    "apache": "#b03a2e",
    "htaccel": "#1f6f8b",
    "nginx": "#2e8b57",
    "lighttpd": "#d4a017",
    "h2o": "#6a4c93",
    "caddy": "#7f8c8d",
}
GOAL_A_RATIO = 0.97
WRK_LIMIT_PCT = 90.0  # wrk at or above this share of its core: the client is the limit


def latest():
    root = os.path.join(HERE, "results")
    dirs = sorted(d for d in os.listdir(root) if os.path.isfile(os.path.join(root, d, "results.json")))
    if not dirs:
        sys.exit("no results under bench/results/")
    return os.path.join(root, dirs[-1])


NOISY_PCT = 15.0  # other work above this share of CPU 0 makes a pinned run noisy


def other_on_cpu0(p):
    """Largest share of CPU 0 that other work took during the point's runs."""
    if p is None:
        return None
    if p.get("other_on_cpu0_pct_max") is not None:
        return p["other_on_cpu0_pct_max"]
    vals = [max(0.0, r["cpu0_busy_pct"] - r["server_cpu_pct"]) for r in p.get("runs", []) if "cpu0_busy_pct" in r]
    return round(max(vals), 1) if vals else None


def noisy(p):
    v = other_on_cpu0(p)
    return bool(p and p.get("pinned") and v is not None and v > NOISY_PCT)


def index(points):
    return {(p["group"], p["scenario"], p["server"], p["pinned"]): p for p in points}


def rps(p):
    return p.get("rps_median") if p and p.get("status") in ("ok", "errors") else None


def fmt(v, nd=0):
    if v is None:
        return "–"
    return f"{v:,.{nd}f}"


def save(fig, out, name):
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(out, f"{name}.{ext}"), dpi=110, bbox_inches="tight")
    plt.close(fig)


def bars(ax, labels, series, ylabel):
    """Grouped bars: series is [(name, [values])]; failed points marked."""
    n = len(series)
    width = 0.8 / n
    for i, (name, vals) in enumerate(series):
        xs = [x + (i - (n - 1) / 2) * width for x in range(len(labels))]
        heights = [v or 0 for v in vals]
        ax.bar(xs, heights, width, label=name, color=COLORS.get(name))
        for x, v in zip(xs, vals):
            if v is None:
                ax.text(x, 0, "failed", rotation=90, ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.legend()
    ax.grid(axis="y", alpha=0.3)


def chart_a(points, out):
    idx = index(points)
    names = [p["scenario"] for p in points if p["group"] == "A" and p["server"] == "apache"]
    series = [(s, [rps(idx.get(("A", n, s, True))) for n in names]) for s in ("apache", "htaccel")]
    cpu = [
        (s, [(idx.get(("A", n, s, True)) or {}).get("cpu_us_per_req_median") for n in names])
        for s in ("apache", "htaccel")
    ]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(15, 4.8))
    bars(ax, names, series, "requests/s (median)")
    ax.set_title(".htaccess size and content: Apache (mpm_event) vs htaccel, one pinned core")
    bars(ax2, names, cpu, "server CPU µs per request (median, log scale)")
    ax2.set_yscale("log")
    ax2.set_title("Server CPU per request")
    save(fig, out, "chart-htaccess")


def chart_peers(points, out):
    idx = index(points)
    servers = [p["server"] for p in points if p["group"] == "D"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    vals = [rps(idx.get(("D", "static", s, True))) for s in servers]
    cpu = [idx.get(("D", "static", s, True), {}).get("cpu_us_per_req_median") for s in servers]
    ax1.bar(servers, [v or 0 for v in vals], color=[COLORS.get(s) for s in servers])
    ax1.set_ylabel("requests/s (median)")
    ax1.set_title("Same 19-byte static file, server on CPU 0")
    ax2.bar(servers, [v or 0 for v in cpu], color=[COLORS.get(s) for s in servers])
    ax2.set_ylabel("server CPU µs per request (median)")
    ax2.set_title("Server CPU per request")
    for ax in (ax1, ax2):
        ax.grid(axis="y", alpha=0.3)
    save(fig, out, "chart-peers")


def chart_depth(points, out):
    idx = index(points)
    depths = sorted({int(p["scenario"].split("-")[0][1:]) for p in points if p["group"] == "B"})
    variants = ["ao-none", "ao-all-nofile", "root-empty", "every-empty", "root-single",
                "every-single", "root-comments17k", "every-comments17k"]  # fmt: skip
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    for ax, server in zip(axes, ("apache", "htaccel")):
        for v in variants:
            ys = [rps(idx.get(("B", f"d{n}-{v}", server, True))) for n in depths]
            if any(y is not None for y in ys):
                ax.plot(depths, [y if y is not None else float("nan") for y in ys], marker="o", label=v)
        ax.set_xscale("log")
        ax.set_xticks(depths)
        ax.set_xticklabels([str(d) for d in depths])
        ax.set_xlabel("directory depth of the requested file")
        ax.set_title(server)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("requests/s (median)")
    if axes[1].get_legend_handles_labels()[0]:
        axes[1].legend(fontsize=7)
    save(fig, out, "chart-depth")


def goal_a_instructions(doc):
    """Goal (a) judged by instructions per request (bench/instructions.py)."""
    if not doc:
        return ["**(a) by instructions per request (callgrind): not measured in this run** "
                "(`python3 bench/instructions.py` adds it).\n"]
    by = {(p["group"], p["scenario"]): p.get("instructions_per_request") for p in doc["points"]}
    rows, passed, total = [], 0, 0
    for (group, name), v in by.items():
        if "ao-none" in name:
            continue
        ref_name = "ao-none" if group == "A" else name.split("-")[0] + "-ao-none"
        ref = by.get((group, ref_name))
        total += 1
        if not v or not ref:
            rows.append([f"{group}/{name}", ref_name, "–", "–", "–", "failed"])
            continue
        ratio = ref / v
        ok = ratio >= GOAL_A_RATIO
        passed += ok
        rows.append([f"{group}/{name}", ref_name, fmt(ref), fmt(v), fmt(ratio, 3), "met" if ok else "NOT met"])
    verdict = "MET" if passed == total else "NOT MET"
    missed = [r[0] for r in rows if r[-1] == "NOT met"]
    why = [f"- `{m}`: {WHY_COSTLY[m.split('/')[1]]}" for m in missed if m.split("/")[1] in WHY_COSTLY]
    out = [
        f"**(a) by instructions per request (callgrind; reference ÷ scenario ≥ {GOAL_A_RATIO}): "
        f"{verdict}** — {passed} of {total} scenarios pass. Instructions are counted by "
        f"`bench/instructions.py` (htaccel commit `{doc.get('htaccel_commit', '?')}`, "
        f"{doc.get('measured_utc', '?')}): the server under callgrind answers {doc['requests'][0]} and then "
        f"{doc['requests'][1]} keep-alive requests, and the difference is divided by the extra requests; "
        "the count does not move with other work on the machine, unlike req/s and CPU time. Kernel work "
        "is not in it (one socket read and one write per request in every scenario).\n",
        table(rows, ["scenario", "reference", "reference instr/req", "instr/req", "ratio", "verdict"]),
        "",
    ]
    if why:
        out += ["What the scenarios that miss ask for on every request:\n", *why, ""]
    return out


# Scenarios whose access file holds rules that must run for every request
# (not parsing: htaccel compiles each file once), and what they do.
WHY_COSTLY = {
    "ao-all-realistic12k": (
        "its file is not only text: the WordPress block's rewrite rules (an `[E=]` copy of the "
        "Authorization header, the `index.php` test, the front controller with its `-f`/`-d` "
        "conditions) and a 536-address `Deny from` list are evaluated for every request, as Apache "
        "evaluates them; the reference has no rules at all. The difference is that work, not reading "
        "the file."
    ),
}


def goal_a(points):
    """htaccel with any access file >= 0.97 x htaccel without one (same path)."""
    idx = index(points)
    rows, met = [], True
    for p in points:
        if p["server"] != "htaccel" or p["group"] not in ("A", "B") or "ao-none" in p["scenario"]:
            continue
        ref_name = "ao-none" if p["group"] == "A" else p["scenario"].split("-")[0] + "-ao-none"
        ref = idx.get((p["group"], ref_name, "htaccel", True))
        r, rr = rps(p), rps(ref)
        if r is None or rr is None or p.get("status") != "ok":
            rows.append((p, ref_name, None, None, "failed: " + _why(p)))
            met = False
            continue
        ratio = r / rr
        cpu, cref = p.get("cpu_us_per_req_median"), (ref or {}).get("cpu_us_per_req_median")
        cpu_ratio = cref / cpu if cpu and cref else None
        ok = ratio >= GOAL_A_RATIO
        met = met and ok
        if ok:
            verdict = "met"
        elif noisy(p) or noisy(ref):
            verdict = (f"inconclusive: other work took {fmt(other_on_cpu0(ref))} % / "
                       f"{fmt(other_on_cpu0(p))} % of CPU 0 (reference / this)")
        elif cpu_ratio is not None and cpu_ratio >= GOAL_A_RATIO:
            verdict = "NOT met by req/s; met by CPU per request"
        else:
            verdict = "NOT met"
        rows.append((p, ref_name, ratio, cpu_ratio, verdict))
    return met, rows


def _why(p):
    if p.get("status") == "errors":
        return f"{p.get('non2xx_total')} non-2xx answers"
    return (p.get("error") or "not measured").splitlines()[0][:400]


def settings_line(s):
    extra = ""
    if "noisy_retries" in s:
        extra = (f" A run was repeated (up to {s['noisy_retries']} more times, quietest kept) while other "
                 f"work took more than {s['noisy_pct']:.0f} % of CPU 0.")
    return extra


def goal_b(points):
    idx = index(points)
    h = idx.get(("D", "static", "htaccel", True))
    out = []
    for peer in ("h2o", "nginx"):
        p = idx.get(("D", "static", peer, True))
        if not p or rps(p) is None or rps(h) is None:
            out.append((peer, None, None, None, "peer not measured" if not p else "failed"))
            continue
        by_rps = rps(h) >= rps(p)
        wrk_bound = (h.get("wrk_cpu_pct_median") or 0) >= WRK_LIMIT_PCT
        cpu_h, cpu_p = h.get("cpu_us_per_req_median"), p.get("cpu_us_per_req_median")
        by_cpu = peer == "h2o" and wrk_bound and cpu_h is not None and cpu_p is not None and cpu_h < cpu_p
        verdict = "met (req/s)" if by_rps else "met (CPU per request, wrk-bound)" if by_cpu else "NOT met"
        if not verdict.startswith("met") and (noisy(h) or noisy(p)):
            verdict = (f"NOT met in this run; inconclusive: other work took {fmt(other_on_cpu0(h))} % / "
                       f"{fmt(other_on_cpu0(p))} % of CPU 0 (htaccel / {peer})")
        out.append((peer, rps(p), cpu_p, wrk_bound, verdict))
    return out


def cpu_split(idx):
    """Where each server's CPU per static request goes: its own code (user)
    and the kernel's work for it (system: socket reads and writes, TCP on
    loopback, epoll)."""
    rows = []
    for server in ("htaccel", "h2o", "nginx", "lighttpd", "caddy", "apache"):
        p = idx.get(("D", "static", server, True))
        if p and p.get("user_us_per_req_median") is not None:
            rows.append([server, fmt(p.get("user_us_per_req_median"), 2), fmt(p.get("sys_us_per_req_median"), 2),
                         fmt(p.get("cpu_us_per_req_median"), 2), fmt(rps(p))])  # fmt: skip
    if not rows:
        return []
    return [
        "Server CPU per static request split into user time (the server's own code) and system "
        "time (the kernel's socket, TCP and epoll work for it), medians of group D:\n",
        table(rows, ["server", "user µs/req", "system µs/req", "total µs/req", "req/s"]),
        "",
    ]


def headlines(res):
    """One line per finding, every figure read from the results."""
    idx = index(res["points"])
    out = []

    def pair(group, name):
        a, h = idx.get((group, name, "apache", True)), idx.get((group, name, "htaccel", True))
        return rps(a), rps(h), h

    for group, name in (("A", "ao-none"), ("A", "ao-all-options170k"), ("A", "ao-all-realistic12k"),
                        ("B", "d26-ao-all-nofile"), ("B", "d26-every-comments17k")):  # fmt: skip
        a, h, hp = pair(group, name)
        if a is None and h is None:
            continue
        if h is None:
            out.append(f"- {group}/{name}: Apache {fmt(a)} req/s; htaccel **failed** ({_why(hp or {})}).")
        elif a is None:
            out.append(f"- {group}/{name}: htaccel {fmt(h)} req/s; Apache failed.")
        else:
            out.append(f"- {group}/{name}: Apache {fmt(a)} req/s, htaccel {fmt(h)} req/s ({h / a:.1f}×).")
    peers = [(p["server"], rps(p), p.get("cpu_us_per_req_median")) for p in res["points"]
             if p["group"] == "D" and rps(p) is not None]  # fmt: skip
    if peers:
        out.append("- Peers on the static file (req/s, server µs/request): "
                   + ", ".join(f"{s} {fmt(r)} / {fmt(c, 1)}" for s, r, c in sorted(peers, key=lambda x: -x[1])) + ".")
    both, _ = both_cores_run(res, "")
    static = [(p["server"], rps(p)) for p in (both or {}).get("points", [])
              if p["group"] == "U" and p["scenario"] == "static" and rps(p) is not None]  # fmt: skip
    if static:
        worst = max((p.get("other_cpu_pct_max") or 0 for p in both["points"]), default=0)
        out.append("- Static file with the server on both cores, sharing CPU 1 with wrk (req/s"
                   + ("" if both is res else f", run {both['started_utc']}")
                   + (f"; noisy: other work took up to {fmt(worst)} % of a core" if worst > NOISY_PCT else "")
                   + "): "
                   + ", ".join(f"{s} {fmt(r)}" for s, r in sorted(static, key=lambda x: -x[1])) + ".")
    vis = [v for v in res.get("visibility") or [] if v.get("server") == "htaccel" and v.get("status") == "ok"]
    if vis:
        out.append(f"- Change visibility, htaccel: {sum(v['stale'] for v in vis):,} stale answers among "
                   f"{sum(v['judged'] for v in vis):,} requests sent after a completed write "
                   f"({sum(v['writes'] for v in vis):,} writes).")
    mem = res.get("memory") or {}
    if mem.get("status") == "ok":
        out.append(f"- Memory, htaccel: {fmt(mem['rss_idle_kib'] / 1024, 1)} MiB idle, "
                   f"{fmt(mem['rss_with_idle_connections_kib'] / 1024, 1)} MiB with {mem['idle_connections']:,} idle "
                   f"connections, {fmt(mem['rss_after_directories_kib'] / 1024, 1)} MiB after {mem['directories']:,} directories.")
    return out


def table(rows, header):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def point_rows(points, group):
    rows = []
    for p in points:
        if p["group"] != group:
            continue
        rows.append([
            p["scenario"], p["server"], "yes" if p["pinned"] else "no", f"`{p['path']}`",
            p["status"] if p["status"] != "failed" else "**failed**",
            fmt(p.get("rps_median")), fmt(p.get("spread_pct"), 1),
            fmt(p.get("cpu_us_per_req_median"), 2), fmt(p.get("p50_ms_median"), 2),
            fmt(p.get("p99_ms_median"), 2), fmt(p.get("server_cpu_pct_median")),
            fmt(p.get("wrk_cpu_pct_median")), fmt(other_on_cpu0(p)) + (" ⚠" if noisy(p) else ""),
            fmt(p.get("other_cpu_pct_max")),
        ])  # fmt: skip
    return rows


POINT_HEADER = ["scenario", "server", "pinned", "path", "status", "req/s", "spread %",
                "server µs/req", "p50 ms", "p99 ms", "server CPU %", "wrk CPU %",
                "other work on CPU 0 % (max)", "other work, both CPUs % (max)"]  # fmt: skip


def both_cores_run(res, rel):
    """The newest run with group U (a full one rather than a quick one):
    this one, or a `bench.py --both-cores` run under
    bench/results/both-cores/ (which leaves the full run's directory the
    newest). (results, relative directory)."""
    found = [(res, rel)] if any(p["group"] == "U" for p in res["points"]) else []
    root = os.path.join(HERE, "results", "both-cores")
    for d in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        path = os.path.join(root, d, "results.json")
        if os.path.isfile(path):
            with open(path) as f:
                found.append((json.load(f), os.path.relpath(os.path.dirname(path), HERE)))
    # A quick run checks that the bench works: the newest full run, if any.
    fulls = [x for x in found if x[0]["settings"]["mode"] == "full"]
    return max(fulls or found, key=lambda x: x[0]["started_utc"]) if found else (None, None)


def both_cores(main_res, main_rel):
    """Section U: every server on both cores on the static page (and the
    realistic 12 KB access file), beside its one-core point of the same run."""
    res, rel = both_cores_run(main_res, main_rel)
    title = "## U: server on both cores, sharing CPU 1 with wrk (static page)\n"
    if res is None:
        return [title, "Not run (`python3 bench/bench.py --both-cores`).", ""]
    s, m = res["settings"], res["machine"]
    idx = index(res["points"])
    how = "the run of the rest of this report" if res is main_res else "`python3 bench/bench.py --both-cores`"
    o = [title,
         f"From `{rel}/results.json` (run {res['started_utc']} – {res['finished_utc']}, {how}; "
         f"mode **{s['mode']}**: {s['runs']} run(s) × {s['seconds']} s after a {s['warmup']} s warm-up; "
         f"htaccel commit `{m['htaccel_commit']}`; load average at start {res['load_average_start']}, "
         f"at end {res['load_average_end']}).\n",
         "Each server runs unpinned on both CPUs with one worker per CPU (nginx `worker_processes`, "
         "h2o `num-threads`, lighttpd `server.max-worker`; htaccel one thread per CPU it may run on; "
         "Caddy's Go runtime one thread per CPU; Apache mpm_event 1 process × 64 threads), and "
         f"`wrk -t1 -c{s['connections']}` stays on `taskset -c 1`: **the server shares CPU 1 with the "
         "load generator**, so a server faster than wrk's one core cannot show it here. *One core*: the "
         "pinned point of the same run (`D/static`, or `A/ao-all-realistic12k` with the realistic 12 KB "
         "`.htaccess`), the server alone on CPU 0. Server CPU %: in % of one core (up to 200 %). Other "
         "work: busy time of both CPUs minus server and wrk, in % of one core.\n"]
    rows = []
    for p in res["points"]:
        if p["group"] != "U":
            continue
        one = idx.get((*scenarios.one_core_counterpart(p["scenario"]), p["server"], True))
        r, r1 = rps(p), rps(one)
        rows.append([
            p["scenario"], p["server"], p["allow_override"],
            p["status"] if p["status"] != "failed" else f"**failed**: {_why(p)}",
            fmt(r), fmt(p.get("spread_pct"), 1), fmt(r1), fmt(r / r1, 2) if r and r1 else "–",
            f"{fmt(p.get('cpu_us_per_req_median'), 2)} ({fmt(p.get('user_us_per_req_median'), 2)} + "
            f"{fmt(p.get('sys_us_per_req_median'), 2)})",
            fmt((one or {}).get("cpu_us_per_req_median"), 2),
            fmt(p.get("p50_ms_median"), 2), fmt(p.get("p99_ms_median"), 2),
            fmt(p.get("server_cpu_pct_median")), fmt(p.get("wrk_cpu_pct_median")),
            fmt(p.get("other_cpu_pct_max")), fmt(other_on_cpu0(one)) + (" ⚠" if noisy(one) else ""),
        ])  # fmt: skip
    others = [p.get("other_cpu_pct_max") or 0 for p in res["points"]]
    if others and max(others) > NOISY_PCT:
        o.append(f"⚠ Other work took up to {fmt(max(others))} % of one core during these points (load "
                 f"average {res['load_average_start']} at the start): the figures are noisy; a ratio "
                 "within a row (measured minutes apart) says more than a figure across runs.\n")
    o.append(table(rows, [
        "scenario", "server", "AllowOverride", "status", "req/s, both cores (shared with wrk)",
        "spread %", "req/s, one core", "× one core", "server µs/req, both cores (user + system)",
        "server µs/req, one core", "p50 ms", "p99 ms", "server CPU %", "wrk CPU %",
        "other work, both CPUs % (max)", "other work on CPU 0, one-core point % (max)"]))  # fmt: skip
    o.append("")
    return o


def report(res, rel, drawn=None):
    pts = res["points"]
    m = res["machine"]
    s = res["settings"]
    o = []
    o.append("# htaccel benchmark report\n")
    o.append(
        f"Generated by `bench/report.py` from `{rel}/results.json` (run {res['started_utc']} – "
        f"{res['finished_utc']}). Do not edit by hand: run `bench/run.sh` (or "
        "`python3 bench/report.py`) to regenerate.\n"
    )
    o.append("## Setup\n")
    o.append(f"- Machine: {m['cpus']} CPUs (`{m['cpu_model']}`), kernel {m['kernel']}, {m['os']}.")
    o.append("- Versions: " + ", ".join(f"{k}: `{v}`" for k, v in m["versions"].items()) + f"; htaccel commit `{m['htaccel_commit']}`.")
    if m.get("htaccel_build_note"):
        o.append(f"- **htaccel binary: {m['htaccel_build_note']}.**")
    o.append(
        f"- Mode: **{s['mode']}** — {s['runs']} run(s) × {s['seconds']} s per point after a "
        f"{s['warmup']} s warm-up; `taskset -c 1 wrk -t1 -c{s['connections']} --latency`; server on "
        "`taskset -c 0`. Group U (pinned = no) puts the server on both cores with one worker per CPU "
        "while wrk stays on CPU 1: there **the server shares CPU 1 with the load generator**."
        + settings_line(s)
    )
    o.append(
        "- Logging off everywhere (no access log; error log to a file). Page: 19-byte `index.html`. "
        "Apache: mpm_event, 1 process × 64 threads. nginx/h2o: 1 worker when pinned, one per CPU "
        "when not. Server CPU per request = Δ(utime+stime) of the server's whole process tree "
        "(`/proc/PID/stat`) / requests."
    )
    o.append(
        f"- **Load average at start: {res['load_average_start']}; at end: {res['load_average_end']}.** "
        "Other work shares this 2-core machine (other processes: builds, tests), so figures are "
        "noisy. For every run the report gives the CPU that other work took on the server's core "
        "(CPU 0 busy time minus the server's own) and on the whole machine (busy time of both cores "
        f"minus server and wrk, in % of one core); ⚠ marks pinned points above {NOISY_PCT:.0f} % on CPU 0, "
        "and a goal missed only by such points is reported inconclusive. Compare ratios within one "
        "run, not absolute numbers across runs."
    )
    if res.get("peers_missing"):
        o.append(f"- Peers not installed (no Debian package), skipped: {', '.join(res['peers_missing'])}.")
    else:
        o.append("- Every peer was present (nginx, lighttpd, h2o, caddy).")
    sizes = res["access_file_bytes"]
    o.append("- Access-file sizes (bytes): " + ", ".join(f"{k} {v:,}" for k, v in sizes.items()) + ".\n")

    o.append("## Headlines\n")
    o.extend(headlines(res))
    o.append("")

    # Goals.
    o.append("## Performance goals\n")
    met_a, rows_a = goal_a(pts)
    fails = [r for r in rows_a if r[4] != "met"]
    by_cpu = [r for r in rows_a if r[3] is not None and r[3] >= GOAL_A_RATIO]
    broken = [r for r in rows_a if r[4].startswith("failed")]
    unsure = [r for r in rows_a if r[4].startswith("inconclusive")]
    hard = [r for r in fails if r not in unsure]
    verdict_a = ("NOT MEASURED in this run (no access-file points)" if not rows_a
                 else "MET" if met_a else "NOT MET" if hard
                 else "INCONCLUSIVE (every miss was a noisy run)")
    o.append(
        f"**(a) htaccel with any `.htaccess` ≥ {GOAL_A_RATIO} × htaccel with none "
        f"(same path, AllowOverride None): {verdict_a}** — "
        f"{len(rows_a) - len(fails)} of {len(rows_a)} scenarios pass on req/s; "
        f"{len(unsure)} misses are inconclusive (other work took more than {NOISY_PCT:.0f} % of the "
        f"server's core during the point or its reference); misses measured quietly: "
        f"{len(hard) - len(broken)}; not measurable (failed answers): {len(broken)}. On server CPU per "
        f"request (reference µs/req ÷ scenario µs/req ≥ {GOAL_A_RATIO}) {len(by_cpu)} of {len(rows_a)} pass."
    )
    if fails:
        o.append("")
        o.append(table(
            [[f"{r[0]['group']}/{r[0]['scenario']}", r[1], fmt(r[2], 3) if r[2] else "–",
              fmt(r[3], 3) if r[3] else "–", r[4]] for r in fails],
            ["scenario", "reference", "req/s ratio", "CPU/req ratio (ref/this)", "verdict"],
        ))  # fmt: skip
    o.append("")
    o.append(
        "A ratio below 1 within the run's spread is noise rather than a cost; the CPU-per-request "
        "ratio is the less noisy figure. All ratios are in the table under *Goal (a) detail*.\n"
    )
    o.extend(goal_a_instructions(res.get("instructions")))
    gb = goal_b(pts)
    verdicts = [g[4] for g in gb]
    overall = ("NOT MEASURED in this run" if not verdicts
               else "MET" if all(v.startswith("met") for v in verdicts)
               else "NOT MET" if any(v == "NOT met" for v in verdicts) else "NOT MET in this run, inconclusive (noisy)")
    o.append(f"**(b) htaccel on the plain static file ≥ h2o and ≥ nginx (or less server CPU per request than h2o when wrk is the limit): {overall}**\n")
    idx = index(pts)
    h = idx.get(("D", "static", "htaccel", True), {})
    o.append(table(
        [[peer, fmt(r), fmt(c, 2), fmt(rps(h)), fmt(h.get("cpu_us_per_req_median"), 2),
          "yes" if wb else "no" if wb is not None else "–", v] for peer, r, c, wb, v in gb],
        ["peer", "peer req/s", "peer µs/req", "htaccel req/s", "htaccel µs/req", "htaccel run wrk-bound", "verdict"],
    ))  # fmt: skip
    o.append("")
    o.extend(cpu_split(idx))
    o.extend(wordpress_report.goal_c(res))

    # HTTP/2 over TLS (bench/h2.py's newest run).
    o.append(h2_report.section())
    # HTTPS with HTTP/1.1 (bench/https.py's newest run).
    o.append(https_report.section())
    # Realistic traffic (bench/realistic.py's newest runs).
    o.append(realistic_report.section(drawn))
    # Docroot on a FUSE mount and cost growth (bench/netfs.py, bench/growth.py).
    o.append(fs_report.netfs_section())
    o.append(fs_report.growth_section())
    # The published experiments with k6 and ab (bench/seeds.py's newest runs).
    o.append(seeds_report.section())
    o.append("## Charts\n")
    for name, title in (("chart-htaccess", ".htaccess size/content"), ("chart-peers", "peers"),
                        ("chart-depth", "directory depth")):  # fmt: skip
        o.append(f"![{title}]({rel}/{name}.png) ([SVG]({rel}/{name}.svg))\n")

    for group, title in (("A", "A: .htaccess size and content (request `/index.html`)"),
                         ("B", "B: directory depth (request `/1/…/N/file.html`)"),
                         ("D", "D: peers on the same static file"),
                         ("U", None),
                         ("W", "W: WordPress through one PHP-FPM pool (goal (c))"),
                         ("Z", "Z: control (first htaccel point repeated at the end: drift)")):  # fmt: skip
        if group == "U":
            o.extend(both_cores(res, rel))
            continue
        rows = point_rows(pts, group)
        if rows:
            o.append(f"## {title}\n")
            o.append(table(rows, POINT_HEADER))
            o.append("")
    o.extend(flask_report.section(res, rel))
    failed = [p for p in pts if p["status"] != "ok"]
    if failed:
        o.append("## Failed or erroneous points\n")
        for p in failed:
            o.append(f"- `{p['id']}`: {_why(p)}")
        o.append("")

    o.append("## Goal (a) detail\n")
    o.append(table(
        [[f"{r[0]['group']}/{r[0]['scenario']}", r[1], fmt(rps(r[0])), fmt(r[2], 3) if r[2] else "–",
          fmt(r[3], 3) if r[3] else "–", r[4]] for r in rows_a],
        ["scenario", "reference", "req/s", "req/s ratio", "CPU/req ratio (ref/this)", "verdict"],
    ))  # fmt: skip
    o.append("")

    o.append("## Change visibility\n")
    o.append(
        "A `.htaccess` is rewritten every 5–30 ms while 4 keep-alive clients request the page; each "
        "request is stamped before it is sent. *Stale* = sent after a write had completed (and "
        "before the next began) yet answered by the old rules. Variants: a response header "
        "(`Header set X-Rules A/B`) or 200 vs 403 (`Require all denied`); the file rewritten in "
        "place or replaced by rename. Apache (which reads the file on every request) is the control.\n"
    )
    vis = res.get("visibility") or []
    if vis:
        o.append(table(
            [[v["server"], v["variant"], v["mode"], v.get("status"), fmt(v.get("writes")),
              fmt(v.get("requests")), fmt(v.get("judged")), fmt(v.get("stale")),
              fmt(v.get("stale_pct"), 3) if v.get("stale_pct") is not None else "–",
              fmt(v.get("worst_stale_after_write_ms"), 2), fmt(v.get("unrecognised")),
              fmt(v.get("client_errors"))] for v in vis],
            ["server", "variant", "write", "status", "writes", "requests", "judged", "stale",
             "stale %", "worst stale ms after write", "unrecognised answers", "client errors"],
        ))  # fmt: skip
    else:
        o.append("Not run.")
    o.append("")

    o.append("## Memory\n")
    mem = res.get("memory")
    if mem and mem.get("status") == "ok":
        o.append(table([
            ["idle, after start", fmt(mem["rss_idle_kib"])],
            [f"{mem['idle_connections']:,} idle keep-alive connections ({mem['idle_connections_failed']} failed to open)",
             fmt(mem["rss_with_idle_connections_kib"])],
            ["after closing them", fmt(mem["rss_after_closing_kib"])],
            [f"after one request in each of {mem['directories']:,} directories (answers: {mem['touch_statuses']}; "
             f"{mem['inotify_watches']:,} inotify watches held)", fmt(mem["rss_after_directories_kib"])],
        ], ["htaccel state", "RSS KiB"]))  # fmt: skip
        per_conn = (mem["rss_with_idle_connections_kib"] - mem["rss_idle_kib"]) / max(1, mem["idle_connections"])
        per_dir = (mem["rss_after_directories_kib"] - mem["rss_after_closing_kib"]) / max(1, mem["directories"])
        o.append("")
        o.append(f"About {per_conn:.2f} KiB per idle connection and {per_dir:.2f} KiB per touched directory.")
    elif mem:
        o.append(f"Failed: {mem.get('error')}")
    else:
        o.append("Not run.")
    o.append("")

    # What is not built yet is a fact of the tree, not of the run.
    if bench.PENDING:
        o.append("## Pending (not measured yet — no numbers on purpose)\n")
        for p in bench.PENDING:
            o.append(f"- {p['name']} — {p['servers']}. Needs: {p['needs']}.")
        o.append("")
    return "\n".join(o)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else latest()
    out = os.path.abspath(out)
    with open(os.path.join(out, "results.json")) as f:
        res = json.load(f)
    counted = os.path.join(out, "instructions.json")
    if os.path.isfile(counted):
        with open(counted) as f:
            res["instructions"] = json.load(f)
    chart_a(res["points"], out)
    chart_peers(res["points"], out)
    chart_depth(res["points"], out)
    drawn = realistic_report.chart()
    flask_report.chart(res["points"], out)
    rel = os.path.relpath(out, HERE)
    with open(os.path.join(HERE, "REPORT.md"), "w") as f:
        f.write(report(res, rel, drawn))
    print(f"wrote bench/REPORT.md and charts in {out}")


if __name__ == "__main__":
    main()
