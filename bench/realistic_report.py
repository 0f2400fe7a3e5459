"""The "Realistic traffic" section of bench/REPORT.md, from the newest
bench/results/realistic/<timestamp>.json that bench/realistic.py wrote.

    python3 bench/realistic_report.py     # rewrite that section of REPORT.md in place

bench/report.py calls `section()` when it regenerates the whole report, so
the section is written in one place only.
"""

import json
import os
import sys

import h2_report

HERE = os.path.dirname(os.path.abspath(__file__))
TITLE = "## R: realistic traffic (a WordPress-shaped tree, a Zipf mix of its URLs)"
RATIO_GOAL = 0.97


def latest():
    root = os.path.join(HERE, "results", "realistic")
    try:
        names = sorted(n for n in os.listdir(root) if n.endswith(".json"))
    except OSError:
        return None, None
    # The newest run of each kind: a throughput run and a count may be separate.
    found = {}
    for name in reversed(names):
        with open(os.path.join(root, name)) as f:
            res = json.load(f)
        for kind in ("points", "instructions"):
            if kind in res and kind not in found:
                found[kind] = (res, os.path.join("results", "realistic", name))
    return found.get("points"), found.get("instructions")


def _f(v, digits=0):
    return "—" if v is None else f"{v:,.{digits}f}"


def _statuses(p):
    return ", ".join(f"{k}: {v}" for k, v in p["statuses"].items())


def _throughput(res, rel):
    o = [f"Throughput from `{rel}` (run {res['started']} – {res['finished']}; "
         f"`python3 bench/realistic.py --throughput --runs {res['runs']} --seconds {res['seconds']}`):",
         "",
         f"- The tree: {res['tree_files']:,} files (mean answer of the mix {res['mean_bytes']:,} bytes); "
         "the mix: 100,000 URLs drawn from a Zipf distribution (s = 1), 5 % misses, 1 % directories "
         "without their slash, replayed in order by `wrk -t1 -c50` with `bench/replay.lua`, "
         f"{res['runs']} run(s) × {res['seconds']} s after a 2 s warm-up, median kept; {res['wrk']}.",
         "- Every server on `taskset -c 0` with one worker, wrk on CPU 1; Apache and htaccel with "
         "`EnableSendfile On` like the others. nginx and lighttpd refuse Akismet's directory as its "
         ".htaccess does; h2o cannot without mruby and serves it (its status counts show it).",
         "- Statuses: the first URLs of the list, replayed once before the runs. CPU per request: "
         "Δ(utime, stime) of the server's processes / requests answered. RSS after the runs. "
         "Memo hits: htaccel's answer memo, from its metrics page during the runs.",
         f"- Load average at start {' '.join(res['loadavg_start'])}, at end "
         f"{' '.join(res['loadavg_end'])}.",
         "",
         "| server | req/s | user µs/req | system µs/req | p50 ms | p99 ms | wrk CPU % | RSS MiB | memo hits | statuses |",
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for p in res["points"]:
        if "missing" in p:
            o.append(f"| {p['label']} | not measured: {p['missing']} |||||||||")
            continue
        hit = p.get("memo_hit_rate")
        o.append(" | ".join([
            f"| {p['label']}", _f(p["rps_median"]), _f(p["user_us_per_req_median"], 1),
            _f(p["sys_us_per_req_median"], 1), _f(p["p50_ms_median"], 2), _f(p["p99_ms_median"], 2),
            _f(p["wrk_cpu_pct_median"]), _f(p["rss_kib"] / 1024, 1),
            "—" if hit is None else f"{100 * hit:.0f} %", _statuses(p)]) + " |")
    o.append("")
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


def _instructions(res, rel):
    o = [f"Instructions from `{rel}` (run {res['started']} – {res['finished']}; "
         f"`python3 bench/realistic.py --instructions --requests {res['requests'][0]} {res['requests'][1]}"
         f"{' --distinct' if res.get('distinct') else ''}`):",
         f"user-space instructions per request of {'distinct files' if res.get('distinct') else 'the mix'} "
         "under callgrind (every process of the server, pinned, one worker, "
         f"{res.get('connections_counted', 4)} keep-alive connection(s)), (I(N2) − I(N1)) / (N2 − N1); "
         "kernel work is not counted.",
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


def section():
    (tp, tp_rel), (ins, ins_rel) = [x or (None, None) for x in latest()]
    o = [TITLE, ""]
    if tp is None and ins is None:
        return "\n".join(o + ["Not run (`python3 bench/realistic.py --throughput --instructions`).", ""])
    if tp is not None:
        o += _throughput(tp, tp_rel)
    if ins is not None:
        o += _instructions(ins, ins_rel)
    return "\n".join(o)


def main():
    h2_report.replace_section(TITLE, section())
    print("wrote the realistic-traffic section of bench/REPORT.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
