"""HTTPS with HTTP/1.1: keep-alive requests, new TLS connections, and one
large file, each server pinned to CPU 0 with one worker and the client on
CPU 1 (the TLS configuration of bench/h2.py on bench/servers.py's pinned
configuration, plus a session cache; one self-signed certificate per key
type, ECDSA P-256 or RSA-2048).

Points:

  S1/keepalive  every server present; the 19-byte index.html over
                HTTP/1.1 keep-alive on TLS (ECDSA P-256 certificate):
                    taskset -c 1 h2load --h1 -t1 -c50 -D SECONDS https://127.0.0.1:PORT/index.html
                after a 2 s warm-up run; req/s (median of RUNS) and server
                CPU per request = Δ(utime+stime) of the server's process tree
                / requests answered.
  S2/<cert>/<mode>  new TLS connections per second. CLIENTS concurrent
                `openssl s_time` processes on CPU 1, each
                    taskset -c 1 openssl s_time -connect 127.0.0.1:PORT -www /index.html -time T MODE
                opens connection after connection, each sending one
                HTTP/1.0 GET of index.html and closing; connections/s =
                all connections / wall time, server CPU per connection as
                above. Modes:
                  full         `-new` (TLS 1.3, full handshake every time)
                  tickets-1.3  `-reuse` (TLS 1.3, resumption with a ticket)
                  tickets-1.2  `-reuse -tls1_2` (TLS 1.2, ticket)
                  ids-1.2      `-reuse -tls1_2` against the server with
                               tickets off and a session cache: resumption
                               by session ID
                s_time prints one character per connection, `r` when the
                session was resumed; the share resumed is recorded, so a
                "resumed" rate that was really full handshakes shows.
  S3/100MB      a 100 MB file over TLS, HTTP/1.1:
                    taskset -c 1 curl -sk -o /dev/null -w %{speed_download} https://127.0.0.1:PORT/big.bin
                RUNS times, median MB/s, server CPU per transfer.

Goals (the HTTPS issue's): S1 htaccel >= h2o and >= nginx in req/s; S2
>= nginx on the same core; S3 >= nginx.

    python3 bench/https.py [--seconds 5] [--runs 3] [--only htaccel,nginx]

Writes bench/results/https/<timestamp>.json; bench/https_report.py puts
the newest one into bench/REPORT.md (section "HTTPS (HTTP/1.1 over TLS)").
"""

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import h2
import scenarios
import servers

HERE = os.path.dirname(os.path.abspath(__file__))
BIG = 100 * 1000 * 1000
CLIENTS = 16
MODES = {
    "full": (["-new"], False),
    "tickets-1.3": (["-reuse"], False),
    "tickets-1.2": (["-reuse", "-tls1_2"], False),
    "ids-1.2": (["-reuse", "-tls1_2"], True),
}
# Go's crypto/tls keeps no server-side session cache: Caddy resumes with
# tickets only.
NO_SESSION_IDS = {"caddy": "Go's crypto/tls has no server-side session-ID cache"}


def sessions(ids_only):
    """A `tweak` for h2.start: a session cache everywhere it is a setting,
    and with `ids_only` session tickets off (resumption by ID only)."""

    def tweak(server, text, v):
        if server in ("htaccel", "apache"):
            text += f"SSLSessionCache shmcb:{v['rundir']}/ssl_scache(512000)\n"
            if ids_only:
                text += "SSLSessionTickets off\n"
        elif server == "nginx":
            line = f"ssl_certificate_key {v['key']};"
            extra = " ssl_session_cache shared:SSL:10m;"
            if ids_only:
                extra += " ssl_session_tickets off;"
            text = text.replace(line, line + extra)
        elif server == "h2o" and ids_only:
            # h2o keeps an internal session cache and issues tickets by
            # default; `cache` alone turns the tickets off.
            text = "ssl-session-resumption:\n  mode: cache\n" + text
        return text

    return tweak


def keepalive(server, base, crt, key, seconds, runs):
    s = h2.start(server, base, "static", "None", crt, key, tweak=sessions(False))
    try:
        h2.h2load(s.port, "/index.html", ["--h1", "-c50", "-D", "2"])
        out = []
        for _ in range(runs):
            cpu = servers.cpu_seconds(s.pids())
            r = h2.h2load(s.port, "/index.html", ["--h1", "-c50", "-D", str(seconds)])
            r["server_us_per_request"] = 1e6 * (servers.cpu_seconds(s.pids()) - cpu) / max(
                r["succeeded"], 1)
            out.append(r)
        return {"server": server, "rps": statistics.median(r["rps"] for r in out),
                "rps_runs": [round(r["rps"]) for r in out],
                "server_us_per_request": statistics.median(r["server_us_per_request"] for r in out),
                "failed": sum(r["failed"] for r in out),
                "non_2xx": sum(r["succeeded"] - r["status_2xx"] for r in out),
                "protocol": out[0]["protocol"], "command": out[0]["command"]}
    finally:
        s.stop()


def s_time(port, flags, seconds):
    """CLIENTS concurrent s_time runs: (connections, resumed, wall seconds, command)."""
    cmd = ["taskset", "-c", "1", "openssl", "s_time", "-connect", f"127.0.0.1:{port}",
           "-www", "/index.html", "-time", str(seconds)] + flags
    t0 = time.monotonic()
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for _ in range(CLIENTS)]
    outs = [p.communicate(timeout=seconds + 60)[0] for p in procs]
    wall = time.monotonic() - t0
    conns = resumed = 0
    for out in outs:
        lines = [ln for ln in out.splitlines() if " connections in " in ln and "user sec" in ln]
        if not lines:
            raise RuntimeError("s_time said: " + out[-500:])
        # With -new or -reuse only one timing block; its count line is the last.
        conns += int(lines[-1].split()[0])
        marks = "".join(ln for ln in out.splitlines() if set(ln) <= set("r*") and ln)
        resumed += marks.count("r")
    return conns, resumed, wall, " ".join(cmd)


def handshakes(server, base, cert, crt, key, seconds, runs, modes):
    out = []
    for ids_only in (False, True):
        wanted = [m for m in modes if MODES[m][1] == ids_only]
        if not wanted:
            continue
        s = h2.start(server, base, "static", "None", crt, key, tweak=sessions(ids_only))
        try:
            s_time(s.port, ["-new"], 1)  # warm-up
            for mode in wanted:
                flags = MODES[mode][0]
                rs = []
                for _ in range(runs):
                    cpu = servers.cpu_seconds(s.pids())
                    conns, resumed, wall, cmd = s_time(s.port, flags, seconds)
                    used = servers.cpu_seconds(s.pids()) - cpu
                    rs.append({"cps": conns / wall, "us": 1e6 * used / max(conns, 1),
                               "resumed": resumed / max(conns, 1)})
                out.append({"server": server, "cert": cert, "mode": mode,
                            "cps": statistics.median(r["cps"] for r in rs),
                            "cps_runs": [round(r["cps"]) for r in rs],
                            "server_us_per_connection": statistics.median(r["us"] for r in rs),
                            "resumed_share": min(r["resumed"] for r in rs),
                            "command": cmd.replace(str(s.port), "PORT")})
                print(f"S2/{cert}/{mode} {server}: {out[-1]['cps']:,.0f} conn/s, "
                      f"{out[-1]['server_us_per_connection']:.0f} µs/conn, "
                      f"resumed {out[-1]['resumed_share']:.0%}", flush=True)
        finally:
            s.stop()
    return out


def big_file(server, base, crt, key, runs):
    s = h2.start(server, base, "static", "None", crt, key, tweak=sessions(False))
    try:
        url = f"https://127.0.0.1:{s.port}/big.bin"
        cmd = ["taskset", "-c", "1", "curl", "-sk", "--http1.1", "-o", "/dev/null", "-w",
               "%{http_code} %{size_download} %{speed_download}", url]
        rs = []
        for _ in range(runs):
            cpu = servers.cpu_seconds(s.pids())
            got = subprocess.run(cmd, capture_output=True, text=True, timeout=300).stdout.split()
            used = servers.cpu_seconds(s.pids()) - cpu
            if got[:2] != ["200", str(BIG)]:
                raise RuntimeError(f"curl got {got}")
            rs.append({"mbps": float(got[2]) / 1e6, "cpu": used})
        return {"server": server, "mb_per_s": statistics.median(r["mbps"] for r in rs),
                "mb_per_s_runs": [round(r["mbps"]) for r in rs],
                "server_cpu_s": statistics.median(r["cpu"] for r in rs),
                "command": " ".join(cmd).replace(str(s.port), "PORT")}
    finally:
        s.stop()


def htaccel_build():
    """The binary has no --version: the source commit and the binary's time."""
    head = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    built = datetime.datetime.fromtimestamp(os.path.getmtime(os.environ["HTACCEL_BIN"]),
                                            datetime.timezone.utc)
    return f"{os.environ['HTACCEL_BIN']} built {built:%Y-%m-%d %H:%M} UTC, source at {head}"


def main():
    # --dir: where the trees, the 100 MB file and the run directories go
    # (default bench/h2.py's /var/tmp; /dev/shm when the disk is full).
    where = sys.argv[sys.argv.index("--dir") + 1] if "--dir" in sys.argv else h2.QUIET_DIR
    base = tempfile.mkdtemp(prefix="htaccel-httpsbench-", dir=where)
    try:
        run(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def run(base):
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--handshake-seconds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", help="servers, comma-separated")
    ap.add_argument("--points", default="S1,S2,S3")
    ap.add_argument("--dir", default=h2.QUIET_DIR)
    args = ap.parse_args()
    for tool in ("h2load", "openssl", "curl"):
        if not shutil.which(tool):
            sys.exit(f"bench/https.py needs {tool}")
    os.environ.setdefault("HTACCEL_BIN", os.path.join(HERE, "..", "target", "release", "htaccel"))
    os.environ["HTACCEL_BIN"] = os.path.abspath(os.environ["HTACCEL_BIN"])
    os.chmod(base, 0o755)
    root = os.path.join(base, "trees", "static")
    for rel, body in scenarios.trees()["static"].items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(body)
    points = args.points.split(",")
    if "S3" in points:
        with open(os.path.join(root, "big.bin"), "wb") as f:
            chunk = os.urandom(1000 * 1000)
            for _ in range(BIG // len(chunk)):
                f.write(chunk)
    for dirpath, _, files in os.walk(base):
        os.chmod(dirpath, 0o755)
        for f in files:
            os.chmod(os.path.join(dirpath, f), 0o644)
    certs = {a: h2.certificate(base, a) for a in h2.KEY_ALGORITHMS}
    started = datetime.datetime.now(datetime.timezone.utc)
    result = {"started": started.isoformat(timespec="seconds"), "seconds": args.seconds,
              "handshake_seconds": args.handshake_seconds, "runs": args.runs,
              "dir": args.dir, "htaccel_bin": os.environ["HTACCEL_BIN"],
              "clients": CLIENTS, "loadavg_start": open("/proc/loadavg").read().split()[:3],
              "tools": {t: subprocess.run(c, capture_output=True, text=True).stdout.strip()
                        .splitlines()[0].split(" (")[0] for t, c in (("h2load", ["h2load", "--version"]),
                                                      ("openssl", ["openssl", "version"]),
                                                      ("curl", ["curl", "--version"]))},
              "versions": {}, "keepalive": [], "handshakes": [], "big_file": [],
              "missing": {}, "loadavg_samples": []}
    wanted = args.only.split(",") if args.only else ["htaccel", "apache"] + list(servers.PEERS)
    for server in wanted:
        if server not in ("htaccel", "apache") and server not in servers.present_peers():
            result["missing"][server] = "not installed (no Debian package candidate)"
            continue
        result["versions"][server] = htaccel_build() if server == "htaccel" else \
            servers.version(server, os.environ["HTACCEL_BIN"])
        crt, key = certs["ecdsa-p256"]
        result["loadavg_samples"].append(open("/proc/loadavg").read().split()[:3])
        try:
            if "S1" in points:
                p = keepalive(server, base, crt, key, args.seconds, args.runs)
                result["keepalive"].append(p)
                print(f"S1/keepalive {server}: {p['rps']:,.0f} req/s, "
                      f"{p['server_us_per_request']:.1f} µs/request ({p['protocol']})", flush=True)
            if "S2" in points:
                modes = [m for m in MODES if not (MODES[m][1] and server in NO_SESSION_IDS)]
                for cert, (crt2, key2) in certs.items():
                    result["handshakes"] += handshakes(server, base, cert, crt2, key2,
                                                       args.handshake_seconds, args.runs, modes)
            if "S3" in points:
                p = big_file(server, base, crt, key, args.runs)
                result["big_file"].append(p)
                print(f"S3/100MB {server}: {p['mb_per_s']:,.0f} MB/s, "
                      f"{p['server_cpu_s']:.2f} s server CPU", flush=True)
        except (RuntimeError, OSError, subprocess.SubprocessError) as e:
            result["missing"][server] = f"failed: {str(e)[-300:]}"
            print(f"{server}: failed: {e}", flush=True)
    result["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
    result["finished"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    name = started.strftime("%Y%m%dT%H%M%SZ") + ".json"
    os.makedirs(os.path.join(HERE, "results", "https"), exist_ok=True)
    with open(os.path.join(HERE, "results", "https", name), "w") as f:
        json.dump(result, f, indent=1)
    print("written bench/results/https/" + name)


if __name__ == "__main__":
    main()
