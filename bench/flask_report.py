"""The Flask group (F) in bench/REPORT.md: its chart and its section, from
results.json like the rest of the report (bench/report.py calls these)."""

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MODES = (
    ("app", "the application sends the bytes"),
    ("xsendfile", "the application answers X-Sendfile, the server sends the file"),
    ("static", "the server sends the file directly"),
    ("rewrite", "the application sends the bytes, reached through a `.htaccess` `RewriteRule … [P]`"),
)
COLORS = {"apache": "#b03a2e", "htaccel": "#1f6f8b"}
NOISY_PCT = 15.0


def _points(points):
    return {(p["mode"], p["connections"], p["server"]): p for p in points if p.get("group") == "F"}


def _conns(idx):
    return sorted({c for (_, c, _) in idx})


def _rps(p):
    return p.get("rps_median") if p and p.get("status") in ("ok", "errors") else None


def _fmt(v, nd=0):
    return "–" if v is None else f"{v:,.{nd}f}"


def _noisy(p):
    return bool(p and (p.get("other_on_cpu0_pct_max") or 0) > NOISY_PCT)


def chart(points, out):
    """chart-flask.png/.svg: req/s and server CPU per request, by mode and
    concurrency, Apache beside htaccel. Nothing when the group did not run."""
    idx = _points(points)
    if not idx:
        return False
    labels, keys = [], []
    for mode, _ in MODES:
        for c in _conns(idx):
            labels.append(f"{mode} c={c}")
            keys.append((mode, c))
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(15, 4.8))
    width = 0.4
    for i, server in enumerate(("apache", "htaccel")):
        xs = [x + (i - 0.5) * width for x in range(len(keys))]
        pts = [idx.get((m, c, server)) for m, c in keys]
        rps = [_rps(p) for p in pts]
        cpu = [(p or {}).get("cpu_us_per_req_median") for p in pts]
        ax1.bar(xs, [v or 0 for v in rps], width, label=server, color=COLORS[server])
        ax2.bar(xs, [v or 0 for v in cpu], width, label=server, color=COLORS[server])
        for x, v in zip(xs, rps):
            if v is None:
                ax1.text(x, 0, "failed", rotation=90, ha="center", va="bottom", fontsize=7)
    for ax, ylabel in ((ax1, "requests/s (median)"), (ax2, "server CPU µs per request (median)")):
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
        ax.set_ylabel(ylabel)
        ax.legend()
        ax.grid(axis="y", alpha=0.3)
    ax1.set_title("7 KB file: Flask app, X-Sendfile, static (wrk -c N)")
    ax2.set_title("Server CPU per request (the application's not included)")
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(out, f"chart-flask.{ext}"), dpi=110, bbox_inches="tight")
    plt.close(fig)
    return True


def section(res, rel):
    """The report's lines for group F (none when it did not run)."""
    idx = _points(res.get("points", []))
    if not idx:
        return []
    any_p = next(iter(idx.values()))
    o = ["## F: a Flask application behind the server (DXR comparison)\n"]
    o.append(
        "The same 7 KB HTML file, four ways — "
        + "; ".join(f"**{m}**: {d} (`{_path(idx, m)}`)" for m, d in MODES)
        + ". htaccel and Apache (mpm_event, mod_proxy_http, mod_xsendfile) read the same "
        "configuration (`ProxyPass /app/`, `XSendFile On`, `XSendFilePath`; `/front/.htaccess` for "
        "**rewrite**); the server is pinned "
        f"to CPU 0 as in the other pinned points. The application: {any_p.get('app')} (Debian's "
        "python3-flask and python3-gunicorn, `tests/difftest/flaskapp.py`), sharing CPU 1 with "
        "wrk (`wrk -t1 -cN`, N below); it is started once for the group and kept between points. "
        "Server CPU per request counts the server's process tree only; the application's is "
        "its own column: where the application uses nearly all of its core (CPU 1, shared "
        "with wrk), it is the limit and req/s says little about the server; compare server "
        "µs/req there. ⚠: other work took more than "
        f"{NOISY_PCT:.0f} % of CPU 0 during the point.\n"
    )
    o.append(f"![Flask group]({rel}/chart-flask.png) ([SVG]({rel}/chart-flask.svg))\n")
    rows = []
    for mode, _ in MODES:
        for c in _conns(idx):
            a, h = idx.get((mode, c, "apache")), idx.get((mode, c, "htaccel"))
            ra, rh = _rps(a), _rps(h)
            rows.append([
                mode, c, _fmt(ra) + (" ⚠" if _noisy(a) else ""), _fmt(rh) + (" ⚠" if _noisy(h) else ""),
                f"{rh / ra:.2f}×" if ra and rh else "–",
                _fmt((a or {}).get("cpu_us_per_req_median"), 1), _fmt((h or {}).get("cpu_us_per_req_median"), 1),
                _fmt((a or {}).get("app_cpu_us_per_req_median"), 1) + " / "
                + _fmt((h or {}).get("app_cpu_us_per_req_median"), 1),
                _fmt(_app_pct(a)) + " / " + _fmt(_app_pct(h)),
                _fmt((a or {}).get("p99_ms_median"), 2) + " / " + _fmt((h or {}).get("p99_ms_median"), 2),
                _status(a) + " / " + _status(h),
            ])  # fmt: skip
    header = ["mode", "wrk -c", "Apache req/s", "htaccel req/s", "htaccel ÷ Apache",
              "Apache server µs/req", "htaccel server µs/req", "app µs/req (Apache / htaccel)", "app CPU % of one core (Apache / htaccel)",
              "p99 ms (Apache / htaccel)", "status"]  # fmt: skip
    o.append("| " + " | ".join(header) + " |")
    o.append("|" + "|".join("---" for _ in header) + "|")
    o += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    o.append("")
    o += _findings(idx)
    o.append("")
    return o


def _findings(idx):
    """One line per concurrency: what X-Sendfile and static gain over the
    application sending the bytes, for each server."""
    out = []
    for c in _conns(idx):
        parts = []
        for server in ("apache", "htaccel"):
            app, xs, st = (_rps(idx.get((m, c, server))) for m in ("app", "xsendfile", "static"))
            if app and xs and st:
                parts.append(
                    f"{server}: X-Sendfile {xs / app:.2f}× the application's own answer, "
                    f"static {st / app:.2f}×"
                )
        if parts:
            out.append(f"- c={c}: " + "; ".join(parts) + ".")
    return out


def _app_pct(p):
    """The application's CPU use during the point, in % of one core."""
    r, us = _rps(p), (p or {}).get("app_cpu_us_per_req_median")
    return r * us / 1e4 if r and us is not None else None


def _status(p):
    if p is None:
        return "–"
    return p["status"] if p["status"] != "failed" else "**failed**: " + (p.get("error") or "")[:120]


def _path(idx, mode):
    for (m, _, _), p in idx.items():
        if m == mode:
            return p["path"]
    return "?"

