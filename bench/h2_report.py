"""The "HTTP/2 over TLS" section of bench/REPORT.md, from the newest
bench/results/h2/<timestamp>.json that bench/h2.py wrote.

    python3 bench/h2_report.py     # rewrite that section of REPORT.md in place

bench/report.py calls `section()` when it regenerates the whole report, so
the section is written in one place only.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TITLE = "## HTTP/2 over TLS"
GOAL_PEER = "h2o"
GOAL_RATIO = 0.97


def latest():
    root = os.path.join(HERE, "results", "h2")
    try:
        names = sorted(n for n in os.listdir(root) if n.endswith(".json"))
    except OSError:
        return None, None
    if not names:
        return None, None
    with open(os.path.join(root, names[-1])) as f:
        return json.load(f), os.path.join("results", "h2", names[-1])


def _row(p):
    return "| %s | %s | %s | %s | %s | %s |" % (
        p["id"], p["server"], f"{p['rps']:,.0f}", ", ".join(f"{r:,}" for r in p["rps_runs"]),
        f"{p['server_us_per_request']:.1f}", f"{p['instructions_per_request']:,.0f}"
        if "instructions_per_request" in p else "—")


def section():
    res, rel = latest()
    o = [TITLE, ""]
    if res is None:
        return "\n".join(o + ["Not run (`python3 bench/h2.py`).", ""])
    points = res["points"]
    cmd = next((p["command"] for p in points), "")
    o += [f"Generated from `{rel}` by `bench/h2_report.py` (run {res['started']} – "
          f"{res['finished']}; `python3 bench/h2.py --seconds {res['seconds']} --runs "
          f"{res['runs']}{' --instructions' if any('instructions_per_request' in p for p in points) else ''}"
          f"{' --floor' if any(p['id'] == 'F2/h2c' for p in points) else ''}`).",
          "",
          f"- Load: `{cmd}` (the port is the point's), {res['runs']} run(s) × "
          f"{res['seconds']} s after a 2 s warm-up run, median kept; {res['h2load'] or 'h2load'}.",
          "- Every server on `taskset -c 0` with one worker (the pinned configuration of "
          "`bench/servers.py`) plus TLS (one self-signed P-256 certificate) and ALPN `h2`; "
          "every answer below was HTTP/2 (`Application protocol: h2`). Apache: mpm_event, "
          "mod_http2, mod_ssl. Server CPU per request = Δ(utime+stime) of the server's "
          "process tree / requests answered; it includes the 50 TLS handshakes of each run.",
          f"- Load average at start {' '.join(res['loadavg_start'])}, at end "
          f"{' '.join(res['loadavg_end'])}: other work shares this 2-core machine, so the "
          "figures are noisy; compare within the run.",
          ""]
    for server, why in sorted(res["missing"].items()):
        o.append(f"- Not measured: {server} — {why}")
    if res["missing"]:
        o.append("")
    o += ["| point | server | req/s (median) | runs | server µs/request | instructions/request |",
          "|---|---|---:|---|---:|---:|"]
    o += [_row(p) for p in points]
    o.append("")
    by = {(p["id"], p["server"]): p for p in points}
    ours = by.get(("D2/static", "htaccel"))
    peer = by.get(("D2/static", GOAL_PEER))
    if ours and peer:
        met = ours["rps"] >= peer["rps"]
        o.append(f"**Goal: htaccel ≥ {GOAL_PEER} in req/s on HTTP/2 static: "
                 f"{'MET' if met else 'NOT MET'}** — htaccel {ours['rps']:,.0f}, {GOAL_PEER} "
                 f"{peer['rps']:,.0f} ({ours['rps'] / peer['rps']:.2f}×); server µs/request "
                 f"{ours['server_us_per_request']:.1f} against {peer['server_us_per_request']:.1f}.")
    else:
        o.append(f"**Goal: htaccel ≥ {GOAL_PEER} on HTTP/2 static: not measured** "
                 f"({GOAL_PEER} {'missing' if not peer else 'measured'}, htaccel "
                 f"{'missing' if not ours else 'measured'}).")
    ref = by.get(("A2/ao-none", "htaccel"))
    real = by.get(("A2/ao-all-realistic12k", "htaccel"))
    if ref and real:
        r = real["rps"] / ref["rps"]
        c = ref["server_us_per_request"] / real["server_us_per_request"]
        line = (f"**Goal: realistic 12 KB .htaccess over HTTP/2 ≥ {GOAL_RATIO} × without: "
                f"{'MET' if r >= GOAL_RATIO else 'NOT MET'} on req/s** ({r:.3f}); CPU per "
                f"request ratio (without ÷ with) {c:.3f}")
        if "instructions_per_request" in ref and "instructions_per_request" in real:
            i = ref["instructions_per_request"] / real["instructions_per_request"]
            line += (f"; instructions per request ratio {i:.3f} "
                     f"({'met' if i >= GOAL_RATIO else 'not met'} by instructions)")
        o.append("")
        o.append(line + ".")
    floor = by.get(("F2/h2c", "h2 crate alone"))
    ours_c = by.get(("F2/h2c", "htaccel"))
    peer_c = by.get(("F2/h2c", GOAL_PEER))
    if floor and peer_c:
        o.append("")
        line = (f"**The `h2` crate's floor (F2/h2c, cleartext, no TLS):** the crate alone, "
                f"answering a fixed page with nothing else to do, costs "
                f"{floor['server_us_per_request']:.1f} µs of server CPU per request "
                f"({floor['rps']:,.0f} req/s) against {GOAL_PEER}'s "
                f"{peer_c['server_us_per_request']:.1f} µs ({peer_c['rps']:,.0f} req/s): no server "
                f"built on the `h2` crate reaches {GOAL_PEER} here")
        if ours_c:
            line += (f"; htaccel, serving the file through its configuration, costs "
                     f"{ours_c['server_us_per_request']:.1f} µs ({ours_c['rps']:,.0f} req/s), "
                     f"{ours_c['server_us_per_request'] - floor['server_us_per_request']:.1f} µs "
                     f"above the floor")
        if "instructions_per_request" in floor and ours_c and \
                "instructions_per_request" in ours_c:
            line += (f"; instructions per request {floor['instructions_per_request']:,.0f} "
                     f"(crate alone) and {ours_c['instructions_per_request']:,.0f} (htaccel)")
        o.append(line + ".")
    # A blank line before the next section.
    o += ["", ""]
    return "\n".join(o)


def replace_section(title, new):
    """Put `new` in place of bench/REPORT.md's section `title` (up to the
    next `## `), or before "## Charts" when it is not there yet."""
    path = os.path.join(HERE, "REPORT.md")
    with open(path) as f:
        text = f.read()
    if title in text:
        start = text.index(title)
        end = text.find("\n## ", start + len(title))
        text = text[:start] + new + (text[end + 1:] if end != -1 else "")
    else:
        anchor = text.find("## Charts")
        text = (text[:anchor] + new + "\n" + text[anchor:]) if anchor != -1 else text + "\n" + new
    with open(path, "w") as f:
        f.write(text)


def main():
    replace_section(TITLE, section())
    print("wrote the HTTP/2 section of bench/REPORT.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
