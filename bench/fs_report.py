"""The sections "N: docroot on a FUSE mount" and "G: cost growth with files
and virtual hosts" of bench/REPORT.md, from the newest
bench/results/netfs/<timestamp>.json (bench/netfs.py) and
bench/results/growth/<timestamp>.json (bench/growth.py), with a chart each
(PNG and SVG beside the JSON).

    python3 bench/fs_report.py     # rewrite both sections of REPORT.md in place

bench/report.py calls `netfs_section()` and `growth_section()` when it
regenerates the whole report, so the sections are written in one place only.
"""

import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import h2_report  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
NETFS_TITLE = "## N: docroot on a FUSE mount"
GROWTH_TITLE = "## G: cost growth with files and virtual hosts"
COLORS = {"htaccel": "#1f6f8b", "apache": "#b03a2e"}
NOISY_PCT = 15.0


def latest(group, key=None):
    """The newest results of `group` (with a non-empty `key`, when given)."""
    root = os.path.join(HERE, "results", group)
    try:
        names = sorted(n for n in os.listdir(root) if n.endswith(".json"))
    except OSError:
        return None, None
    for name in reversed(names):
        with open(os.path.join(root, name)) as f:
            res = json.load(f)
        if key is None or res.get(key):
            return res, os.path.join(root, name)
    return None, None


def _f(v, digits=0):
    return "—" if v is None else f"{v:,.{digits}f}"


def _save(fig, json_path, suffix):
    stem = json_path[:-len(".json")] + suffix
    for ext in ("png", "svg"):
        fig.savefig(f"{stem}.{ext}", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return os.path.relpath(stem, HERE)


def netfs_chart(res, path):
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.5))
    pts = res.get("points", [])
    labels = [p["label"].replace(", AllowOverride ", "\nAllowOverride\n") for p in pts]
    a.bar(range(len(pts)), [p["rps_median"] for p in pts], color=[COLORS[p["server"]] for p in pts])
    a.set_xticks(range(len(pts)))
    a.set_xticklabels(labels, fontsize=8)
    a.set_ylabel("req/s (median)")
    a.set_title("/index.html on the FUSE mount")
    a.grid(axis="y", alpha=0.3)
    data, names, colors = [], [], []
    for r in res.get("visibility", []):
        for mode, per in r["modes"].items():
            for inst in per:
                data.append([v / 1000 for v in inst["latencies_ms"]] or [0])
                names.append(f"{r['label'].split(' (')[0].replace('interval ', '')}\n{mode}, #{inst['instance']}")
                colors.append(COLORS[r["server"]])
    if data:
        parts = b.boxplot(data, whis=(0, 100), patch_artist=True)
        for patch, c in zip(parts["boxes"], colors):
            patch.set_facecolor(c)
            patch.set_alpha(0.5)
        b.set_xticks(range(1, len(names) + 1))
        b.set_xticklabels(names, rotation=60, ha="right", fontsize=7)
        for r in res.get("visibility", []):
            if r.get("interval_s"):
                b.axhline(r["interval_s"], color="grey", ls=":", lw=1)
        b.set_ylabel("write completed → first new answer (s)")
        b.set_title("change visibility, two instances (dotted: intervals)")
        b.grid(axis="y", alpha=0.3)
    return _save(fig, path, "-netfs")


def netfs_section():
    res, path = latest("netfs")
    o = [NETFS_TITLE, ""]
    if res is None:
        return "\n".join(o + ["Not run (`python3 bench/netfs.py`).", ""])
    rel = os.path.relpath(path, HERE)
    fss = res["kernel_filesystems"]
    o += [f"Generated from `{rel}` by `bench/fs_report.py` (run {res['started']} – {res['finished']}; "
          f"`python3 bench/netfs.py --runs {res['runs']} --seconds {res['seconds']} --writes {res['writes']}`).",
          "",
          f"- NFS: **not measured** — this machine's kernel ({res['kernel']}) has no NFS client: "
          f"/proc/filesystems lists {', '.join(fss)} "
          f"({'an nfs entry' if res['kernel_has_nfs'] else 'no nfs'}). The docroot is served from a FUSE "
          f"mount instead: `{res['mount']} BACK MNT` ({res['bindfs']}), statfs magic 0x{res['statfs_magic']}, "
          "which htaccel, like NFS, cannot watch with inotify; the kernel's FUSE attribute and entry "
          "caches are off, so every `stat`/`open` reaches the backing directory and what a server shows "
          "after a change is its own doing (an NFS client's attribute cache would delay every server, "
          "Apache included).",
          "- The bindfs daemon runs on CPU 0 with the server (where an NFS client's work would be "
          "done); its CPU per request is listed apart from the server's.",
          f"- Load average at start {' '.join(res['loadavg_start'])}, at end {' '.join(res['loadavg_end'])}."]
    notices = [p.get("fuse_notice") for p in res.get("points", []) if p["server"] == "htaccel"]
    notices += [n for r in res.get("visibility", []) for n in (r.get("fuse_notice") or [])]
    if notices:
        seen = [n for n in notices if n]
        o.append(f"- htaccel's error log, in {len(seen)} of its {len(notices)} starts: "
                 + (f"`{seen[0].split('] ', 3)[-1]}`" if seen else "no notice of the FUSE mount (wrong)."))
    o.append("")
    if res.get("points"):
        o += [f"Throughput: `wrk -t1 -c50` on /index.html, {res['runs']} run(s) × {res['seconds']} s after a "
              "2 s warm-up, median kept; server on CPU 0, wrk on CPU 1. AllowOverride All: the realistic "
              "12 KB `.htaccess` of bench/scenarios.py at the docroot.",
              "",
              "| point | req/s | server µs/req | user µs/req | system µs/req | bindfs µs/req | p99 ms | other work on CPU 0 % (max, bindfs excluded) | statuses |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
        for p in res["points"]:
            other = max((r.get("other_on_cpu0_minus_bindfs_pct", r.get("other_on_cpu0_pct", 0))
                         for r in p["runs"]), default=None)
            o.append(f"| {p['label']} | {_f(p['rps_median'])} | {_f(p['cpu_us_per_req_median'], 1)} | "
                     f"{_f(p['user_us_per_req_median'], 1)} | {_f(p['sys_us_per_req_median'], 1)} | "
                     f"{_f(p.get('bindfs_us_per_req_median'), 1)} | {_f(p['p99_ms_median'], 2)} | "
                     f"{_f(other, 1)}{' (noisy)' if other and other > NOISY_PCT else ''} | "
                     f"{p['status']}, non-2xx {p['non2xx_total']} |")
        by = {p["label"]: p for p in res["points"]}
        o.append("")
        for server in ("htaccel", "apache"):
            a, n = by.get(f"{server}, AllowOverride All (12 KB)"), by.get(f"{server}, AllowOverride None")
            if a and n and n["rps_median"]:
                o.append(f"- {server}: AllowOverride All ÷ None = {a['rps_median'] / n['rps_median']:.2f} in req/s; "
                         f"server CPU per request None ÷ All = "
                         f"{n['cpu_us_per_req_median'] / a['cpu_us_per_req_median']:.2f}.")
        ha, aa = by.get("htaccel, AllowOverride All (12 KB)"), by.get("apache, AllowOverride All (12 KB)")
        if ha and aa and aa["rps_median"]:
            o.append(f"- With the 12 KB file on the mount: htaccel ÷ Apache = {ha['rps_median'] / aa['rps_median']:.1f}× "
                     f"in req/s; Apache's server CPU per request ÷ htaccel's = "
                     f"{aa['cpu_us_per_req_median'] / ha['cpu_us_per_req_median']:.1f}× (bindfs's not counted).")
        o.append("")
    if res.get("visibility"):
        o += ["Change-to-visible latency across two instances serving the same mount: the writer flips "
              "`Header set X-Rules A`/`B` through the backing directory (no inotify event reaches the "
              f"mount), {res['writes']} writes per write mode, each after the previous one was visible on "
              "both instances and a random pause (50–300 ms plus up to one interval, so that writes fall at "
              "random points of the instances' revalidation clocks). One client per instance polls on a "
              "keep-alive connection. Latency: write completed (close or rename returned) → arrival of the "
              "first answer with the new rules among requests sent after it.",
              "",
              "| servers | write | instance | writes seen | median ms | p99 ms | max ms | over the interval | polls | client errors |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in res["visibility"]:
            for mode, per in r["modes"].items():
                for d in per:
                    over = "—" if d["over_interval"] is None else f"{d['over_interval']}"
                    seen = f"{d['n']}" + (f" ({d['not_seen']} not within {d['not_seen_within_s']} s)" if d["not_seen"] else "")
                    o.append(f"| {r['label']} | {mode} | {d['instance']} | {seen} | {_f(d.get('median_ms'), 1)} | "
                             f"{_f(d.get('p99_ms'), 1)} | {_f(d.get('max_ms'), 1)} | {over} | {_f(d['requests'])} | "
                             f"{d['client_errors']} |")
        o.append("")
        for r in res["visibility"]:
            if r["server"] != "htaccel":
                continue
            lat = [v for per in r["modes"].values() for d in per for v in d["latencies_ms"]]
            unseen = sum(d["not_seen"] for per in r["modes"].values() for d in per)
            if lat:
                bound = 1000 * r["interval_s"]
                worst = max(lat)
                o.append(f"- **{r['label']}: every change visible within the interval: "
                         f"{'YES' if worst <= bound and not unseen else 'NO'}** — worst {worst:,.0f} ms against "
                         f"{bound:,.0f} ms over {len(lat)} (write, instance) pairs"
                         f"{f', {unseen} never seen' if unseen else ''}.")
        o.append("")
    chart = netfs_chart(res, path)
    o += [f"![FUSE docroot]({chart}.png) ([SVG]({chart}.svg))", "", ""]
    return "\n".join(o)


def growth_chart(res, path):
    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    metrics = [("rps_median", "req/s (median)"), ("cpu_us_per_req_median", "server CPU µs per request"),
               ("startup_s", "start-up to first answer (s)"), ("rss_kib", "RSS after the runs (MiB)")]
    for ax, (key, label) in zip(axes.flat, metrics):
        for kind, style in (("files", "-o"), ("vhosts", "--s")):
            for server in ("htaccel", "apache"):
                pts = sorted((p for p in res["points"] if p["kind"] == kind and p["server"] == server
                              and p.get(key) is not None), key=lambda p: p["n"])
                if not pts:
                    continue
                ys = [p[key] / 1024 if key == "rss_kib" else p[key] for p in pts]
                ax.plot([p["n"] for p in pts], ys, style, color=COLORS[server], label=f"{server}, {kind}")
        ax.set_xscale("log")
        ax.set_xlabel("N (distinct files / virtual hosts)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        if key in ("startup_s", "cpu_us_per_req_median"):
            ax.set_yscale("log")
    axes.flat[0].legend(fontsize=8)
    return _save(fig, path, "-growth")


def growth_section():
    res, path = latest("growth", "points")
    o = [GROWTH_TITLE, ""]
    if res is None:
        return "\n".join(o + ["Not run (`python3 bench/growth.py`).", ""])
    rel = os.path.relpath(path, HERE)
    stored = next((p["tree_fs"] for p in res["points"] if p.get("tree_fs")), "a directory under /var/tmp")
    o += [f"Generated from `{rel}` by `bench/fs_report.py` (run {res['started']} – {res['finished']}; "
          f"`python3 bench/growth.py{' --full' if res['full'] else ''} --runs {res['runs']} "
          f"--seconds {res['seconds']}`).",
          "",
          f"- Files: N small files (a dozen bytes) in directories of 1,000, AllowOverride All with a one-line "
          "`.htaccess` (`Header set X-Growth on`) at the docroot; the list is the N files in seeded random "
          f"orders, one pass after another up to {res['list_lines']:,} lines (one pass when N is larger), "
          "replayed by `wrk -t1 -c50` with bench/replay.lua. Each tree on {stored}.",
          "- Virtual hosts: N name-based `<VirtualHost 127.0.0.1:PORT>` sections, each its own ServerName and "
          "DocumentRoot (an index.html), the same `.htaccess` above the document roots; requests for / "
          "spread over every host name the same way.",
          "- Start-up: process start → first 200 answer to a URL of the mix (polled every 10 ms, "
          f"timeout {res['start_timeout_s']} s). RSS: the server's processes, after the runs. "
          f"{res['runs']} run(s) × {res['seconds']} s after a 2 s warm-up, median kept; server on CPU 0, "
          "wrk on CPU 1. Checks: three URLs of the list (status, the `.htaccess` header, the host's own body).",
          f"- Load average at start {' '.join(res['loadavg_start'])}, at end {' '.join(res['loadavg_end'])}.",
          "",
          "| kind | N | server | start-up s | req/s | server µs/req | user µs/req | system µs/req | p99 ms | RSS MiB | other work on CPU 0 % (max) | checks |",
          "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for p in res["points"]:
        if "missing" in p:
            o.append(f"| {p['kind']} | {p['n']:,} | {p['server']} | not measured: {p['missing']} ||||||||")
            continue
        other = p.get("other_on_cpu0_pct_max")
        checks = "ok" if all(c["ok"] for c in p["checks"]) else "; ".join(
            f"{c['url']}: {c['status']}" for c in p["checks"] if not c["ok"])
        o.append(f"| {p['kind']} | {p['n']:,} | {p['server']} | {_f(p['startup_s'], 3)} | {_f(p['rps_median'])} | "
                 f"{_f(p['cpu_us_per_req_median'], 1)} | {_f(p['user_us_per_req_median'], 1)} | "
                 f"{_f(p['sys_us_per_req_median'], 1)} | {_f(p['p99_ms_median'], 2)} | {_f(p['rss_kib'] / 1024, 1)} | "
                 f"{_f(other, 1)}{' (noisy)' if other and other > NOISY_PCT else ''} | "
                 f"{checks}, non-2xx {p['non2xx_total']} |")
    o.append("")
    o += _growth_lines(res)
    o += _order_lines()
    chart = growth_chart(res, path)
    o += [f"![cost growth]({chart}.png) ([SVG]({chart}.svg))", "", ""]
    return "\n".join(o)


def _growth_lines(res):
    """From the smallest to the largest N of each kind and server."""
    o = []
    for kind in ("files", "vhosts"):
        for server in ("htaccel", "apache"):
            pts = sorted((p for p in res["points"] if p["kind"] == kind and p["server"] == server
                          and "missing" not in p), key=lambda p: p["n"])
            if len(pts) < 2:
                continue
            lo, hi = pts[0], pts[-1]
            o.append(f"- {server}, {kind} {lo['n']:,} → {hi['n']:,}: req/s {lo['rps_median']:,.0f} → "
                     f"{hi['rps_median']:,.0f}, CPU/request {lo['cpu_us_per_req_median']:.1f} → "
                     f"{hi['cpu_us_per_req_median']:.1f} µs, start-up {lo['startup_s']:.3f} → {hi['startup_s']:.3f} s, "
                     f"RSS {lo['rss_kib'] / 1024:.1f} → {hi['rss_kib'] / 1024:.1f} MiB.")
    if o:
        o.append("")
    return o


def _order_lines():
    """The first-against-last Host run (growth.py's `vhost_order`)."""
    res, path = latest("growth", "vhost_order")
    if res is None:
        return []
    rows = [r for r in res["vhost_order"] if "missing" not in r]
    n = res["vhost_order"][0]["n"]
    o = [f"Where the cost of {n:,} virtual hosts goes (`{os.path.relpath(path, HERE)}`, "
         f"`python3 bench/growth.py --only order --seconds {res['seconds']}`, load average "
         f"{' '.join(res['loadavg_start'])}): the same configuration asked only for its first vhost's "
         "Host, then only for its last's (`wrk -t1 -c50 -H 'Host: …'`, 1 s warm-up).",
         "",
         "| server | Host | req/s | server µs/req | other work on CPU 0 % |",
         "|---|---|---:|---:|---:|"]
    for r in rows:
        o.append(f"| {r['server']} | {r['host']} | {_f(r['rps'])} | {_f(r['cpu_us_per_req'], 1)} | "
                 f"{_f(r.get('other_on_cpu0_pct'), 1)} |")
    for r in res["vhost_order"]:
        if "missing" in r:
            o.append(f"| {r['server']} | — | not measured: {r['missing']} | | |")
    o.append("")
    return o


def main():
    h2_report.replace_section(NETFS_TITLE, netfs_section())
    h2_report.replace_section(GROWTH_TITLE, growth_section())
    print("wrote sections N and G of bench/REPORT.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
