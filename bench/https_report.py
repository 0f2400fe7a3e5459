"""The "HTTPS (HTTP/1.1 over TLS)" section of bench/REPORT.md, from the
newest bench/results/https/<timestamp>.json that bench/https.py wrote.

    python3 bench/https_report.py     # rewrite that section of REPORT.md in place

bench/report.py calls `section()` when it regenerates the whole report, so
the section is written in one place only; the in-place rewrite is
bench/h2_report.py's.
"""

import json
import os
import sys

import h2_report

HERE = os.path.dirname(os.path.abspath(__file__))
TITLE = "## HTTPS (HTTP/1.1 over TLS)"
MODE_MEANING = {
    "full": "TLS 1.3, full handshake (`-new`): key exchange + certificate signature",
    "tickets-1.3": "TLS 1.3 resumed with a ticket (`-reuse`): PSK with a fresh (EC)DHE, "
                   "no signature",
    "tickets-1.2": "TLS 1.2 resumed with a ticket (`-reuse -tls1_2`): abbreviated handshake",
    "ids-1.2": "TLS 1.2 resumed by session ID (`-reuse -tls1_2`, server with tickets off "
               "and a session cache)",
}


def latest():
    root = os.path.join(HERE, "results", "https")
    try:
        names = sorted(n for n in os.listdir(root) if n.endswith(".json"))
    except OSError:
        return None, None
    if not names:
        return None, None
    with open(os.path.join(root, names[-1])) as f:
        return json.load(f), os.path.join("results", "https", names[-1])


def _verdict(ours, theirs, key, higher_better=True):
    if ours is None or theirs is None:
        return "not measured"
    met = ours[key] >= theirs[key] if higher_better else ours[key] <= theirs[key]
    return f"{'MET' if met else 'NOT MET'} ({ours[key] / theirs[key]:.2f}×)"


def _keepalive(res):
    o = ["### S1: keep-alive static file (19-byte index.html, ECDSA P-256)", ""]
    pts = res["keepalive"]
    if not pts:
        return o + ["Not run.", ""]
    o += [f"- Load: `{pts[0]['command']}` (the port is the server's), {res['runs']} run(s) × "
          f"{res['seconds']} s after a 2 s warm-up run, median kept; {res['tools']['h2load']}. "
          "Every answer was HTTP/1.1 over TLS 1.3 (h2load `--h1` offers ALPN `http/1.1`); "
          "server µs/request includes the 50 handshakes of each run.", "",
          "| server | req/s (median) | runs | server µs/request | failed | non-2xx |",
          "|---|---:|---|---:|---:|---:|"]
    for p in pts:
        o.append(f"| {p['server']} | {p['rps']:,.0f} | {', '.join(f'{r:,}' for r in p['rps_runs'])}"
                 f" | {p['server_us_per_request']:.1f} | {p['failed']} | {p['non_2xx']} |")
    by = {p["server"]: p for p in pts}
    ours = by.get("htaccel")
    o.append("")
    for peer in ("h2o", "nginx"):
        o.append(f"**Goal: htaccel ≥ {peer} (req/s): {_verdict(ours, by.get(peer), 'rps')}**; "
                 f"server CPU per request ≤ {peer}: "
                 f"{_verdict(ours, by.get(peer), 'server_us_per_request', False)}.  ")
    o.append("")
    return o


def _handshakes(res):
    o = ["### S2: new TLS connections per second", ""]
    pts = res["handshakes"]
    if not pts:
        return o + ["Not run.", ""]
    o += [f"- Load: {res['clients']} concurrent `openssl s_time` clients on CPU 1, each "
          f"`{pts[0]['command'].replace(' -new', ' MODE')}` ({res['tools']['openssl']}), "
          f"{res['runs']} run(s) × {res['handshake_seconds']} s, median kept. Each connection "
          "is one handshake, one HTTP/1.0 GET of the 19-byte page, and the close. "
          "conn/s = connections of all clients / wall time; it is bounded by the client "
          "core too (s_time's own handshake work), so **server µs/connection** "
          "(Δ utime+stime of the server's processes / connections) is the figure that "
          "compares the servers' cost. \"resumed\" is the smallest share of connections "
          "s_time saw resumed in a run (its `r` marks).",
          "- Modes: " + "; ".join(f"**{m}** = {t}" for m, t in MODE_MEANING.items()) + ".",
          "- Session cache configured everywhere it is a setting: `SSLSessionCache "
          "shmcb:…(512000)` (htaccel, Apache), `ssl_session_cache shared:SSL:10m` (nginx), "
          "h2o's and Caddy's defaults; for ids-1.2 `SSLSessionTickets off`, "
          "`ssl_session_tickets off`, h2o `ssl-session-resumption: {mode: cache}`; "
          "Caddy has no ids-1.2 row (Go's crypto/tls keeps no server-side session-ID cache).",
          "- Where htaccel's server CPU goes on a TLS 1.3 resumption (perf, 2026-11-26, "
          "rsa-2048 tickets-1.3): about 35 % in ring's X25519 (key generation and "
          "agreement), about 15 % in SHA-384 for the key schedule's HKDF, the rest in "
          "the kernel's TCP work and rustls' record writing. Both are the handshake's "
          "inherent work done by the crypto provider (ring), not by htaccel's code; "
          "OpenSSL's X25519 is faster.", ""]
    for cert in sorted({p["cert"] for p in pts}):
        o += [f"**{cert}**", "",
              "| mode | server | conn/s (median) | runs | server µs/connection | resumed |",
              "|---|---|---:|---|---:|---:|"]
        for p in (p for p in pts if p["cert"] == cert):
            o.append(f"| {p['mode']} | {p['server']} | {p['cps']:,.0f} | "
                     f"{', '.join(f'{r:,}' for r in p['cps_runs'])} | "
                     f"{p['server_us_per_connection']:.0f} | {p['resumed_share']:.0%} |")
        o.append("")
    by = {(p["cert"], p["mode"], p["server"]): p for p in pts}
    o += ["Goal: htaccel ≥ nginx on the same core (conn/s; and server CPU per connection, "
          "the less noisy figure):", ""]
    for (cert, mode, server), p in by.items():
        if server != "htaccel":
            continue
        peer = by.get((cert, mode, "nginx"))
        o.append(f"- {cert} {mode}: conn/s {_verdict(p, peer, 'cps')}; server µs/connection "
                 f"{_verdict(p, peer, 'server_us_per_connection', False)}")
    o.append("")
    return o


def _big(res):
    o = ["### S3: a 100 MB file over TLS", ""]
    pts = res["big_file"]
    if not pts:
        return o + ["Not run.", ""]
    o += [f"- Load: `{pts[0]['command']}` ({res['tools']['curl']}), {res['runs']} runs, "
          "median kept (curl's `speed_download`, bytes/s ÷ 10⁶); the file is random bytes "
          "(page-cached). Server CPU is Δ utime+stime per transfer. One curl decrypts on "
          "CPU 1, so MB/s is bounded by the client as much as by the server.", "",
          "| server | MB/s (median) | runs | server CPU s / 100 MB |", "|---|---:|---|---:|"]
    for p in pts:
        o.append(f"| {p['server']} | {p['mb_per_s']:,.0f} | "
                 f"{', '.join(str(r) for r in p['mb_per_s_runs'])} | {p['server_cpu_s']:.2f} |")
    by = {p["server"]: p for p in pts}
    o += ["", f"**Goal: htaccel ≥ nginx (MB/s): {_verdict(by.get('htaccel'), by.get('nginx'), 'mb_per_s')}**"
          f"; server CPU ≤ nginx: "
          f"{_verdict(by.get('htaccel'), by.get('nginx'), 'server_cpu_s', False)}.", ""]
    return o


def section():
    res, rel = latest()
    o = [TITLE, ""]
    if res is None:
        return "\n".join(o + ["Not run (`python3 bench/https.py`).", ""])
    o += [f"Generated from `{rel}` by `bench/https_report.py` (run {res['started']} – "
          f"{res['finished']}; `python3 bench/https.py --seconds {res['seconds']} "
          f"--handshake-seconds {res['handshake_seconds']} --runs {res['runs']} --dir "
          f"{res['dir']}`).", "",
          "- `--dir` holds the trees, the 100 MB file and the run directories; /dev/shm "
          "(RAM) when the disk is full, as it was when this run was prepared. The servers "
          "read from the page cache either way.",
          "- Every server on `taskset -c 0` with one worker (the pinned configuration of "
          "`bench/servers.py`) plus TLS as in bench/h2.py (self-signed certificate, ALPN "
          "`h2`/`http/1.1` offered by the server; these clients ask for HTTP/1.1). Clients on "
          "`taskset -c 1`. Apache: mpm_event, mod_ssl.",
          f"- Load average at start {' '.join(res['loadavg_start'])}, at end "
          f"{' '.join(res['loadavg_end'])} (before each server: "
          f"{'; '.join(' '.join(s) for s in res.get('loadavg_samples', []))}): other work "
          "shares this 2-core machine, so the figures are noisy; compare within the run, "
          "and prefer server CPU per request/connection to rates.",
          "- Versions: " + "; ".join(f"{k} {v}" for k, v in res["versions"].items()) + ".", ""]
    for server, why in sorted(res["missing"].items()):
        o.append(f"- Not measured: {server} — {why}")
    if res["missing"]:
        o.append("")
    o += _keepalive(res) + _handshakes(res) + _big(res)
    return "\n".join(o)


def main():
    h2_report.replace_section(TITLE, section())
    print("wrote the HTTPS section of bench/REPORT.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
