"""HTTP/2 over TLS: the static page and the realistic 12 KB .htaccess, with
h2load (nghttp2-client) instead of wrk.

Every server listens with TLS (one self-signed P-256 certificate) and ALPN
`h2`, is pinned to CPU 0 with one worker (bench/servers.py's pinned
configuration plus its TLS and HTTP/2 lines), and h2load runs on CPU 1:

    taskset -c 1 h2load -t1 -c50 -m10 -D SECONDS https://127.0.0.1:PORT/index.html

after a 2 s warm-up run. Server CPU per request = Δ(utime+stime) of the
server's process tree over the measured run / requests answered. Points:

  D2/static   every server present (htaccel, Apache mpm_event + mod_http2,
              nginx, h2o, caddy), the 19-byte index.html, AllowOverride None
  A2/ao-none  htaccel, AllowOverride None        (= D2/static for htaccel)
  A2/ao-all-realistic12k  htaccel, AllowOverride All and the realistic
              12 KB root .htaccess of bench/scenarios.py

  F2/h2c      `--floor`: the same page over cleartext h2c (prior knowledge),
              for three servers: the `h2` crate alone answering a fixed
              page (crates/htaccel/examples/h2_floor.rs, htaccel's
              allocator, no configuration, no file, no log), htaccel
              (`Protocols h2c http/1.1`, `H2Direct on`) and h2o. It tells
              what any server on the `h2` crate pays before its own work.

Goals (the issue's): htaccel >= h2o in req/s on D2/static; A2 realistic12k
>= 0.97 x A2 ao-none. `--instructions` also counts instructions per request
for the two A2 points (callgrind, h2load -n N1 then -n N2 over 4
connections x 10 streams; TLS handshakes are the same in both runs and
cancel out, as bench/instructions.py does for HTTP/1.1).

    python3 bench/h2.py [--seconds 5] [--runs 3] [--instructions] [--floor]

`--floor` needs `cargo build --release --example h2_floor -p htaccel`
(or H2_FLOOR_BIN).

Writes bench/results/h2/<timestamp>.json; bench/h2_report.py puts the
newest one into bench/REPORT.md (section "HTTP/2 over TLS"), as
bench/report.py does when it regenerates the whole report.
"""

import argparse
import datetime
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import scenarios
import servers

HERE = os.path.dirname(os.path.abspath(__file__))
QUIET_DIR = "/var/tmp"
N1, N2 = 1000, 5000

TLS_APACHE = """\
LoadModule ssl_module modules/mod_ssl.so
LoadModule socache_shmcb_module modules/mod_socache_shmcb.so
LoadModule http2_module modules/mod_http2.so
Protocols h2 http/1.1
SSLEngine on
SSLCertificateFile {crt}
SSLCertificateKeyFile {key}
"""

NGINX_TLS = ("listen 127.0.0.1:{port};",
             "listen 127.0.0.1:{port} ssl http2;\n"
             "        ssl_certificate {crt};\n        ssl_certificate_key {key};")

H2O_TLS = ("  port: {port}\n",
           "  port: {port}\n  ssl:\n    certificate-file: {crt}\n    key-file: {key}\n")

CADDY_TLS = """\
{{
    admin off
    auto_https off
    log {{
        output file {rundir}/error.log
    }}
}}
https://127.0.0.1:{port} {{
    bind 127.0.0.1
    tls {crt} {key}
    root * {docroot}
    file_server
}}
"""


KEY_ALGORITHMS = {"ecdsa-p256": ["ec", "-pkeyopt", "ec_paramgen_curve:P-256"],
                  "rsa-2048": ["rsa:2048"]}


def certificate(base, algorithm="ecdsa-p256"):
    """A self-signed certificate and its key, `tls-<algorithm>.crt/.key`."""
    crt = os.path.join(base, f"tls-{algorithm}.crt")
    key = os.path.join(base, f"tls-{algorithm}.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey"] + KEY_ALGORITHMS[algorithm] + [
                    "-nodes", "-keyout", key, "-out", crt,
                    "-days", "2", "-subj", "/CN=localhost", "-addext",
                    # Caddy picks a certificate by its names, also without SNI.
                    "subjectAltName=IP:127.0.0.1,DNS:localhost"], check=True, capture_output=True)
    os.chmod(key, 0o644)
    return crt, key


def write_config(server, rundir, docroot, port, override, crt, key, tweak=None):
    """bench/servers.py's pinned configuration, then TLS and HTTP/2; `tweak`
    (server, text, values) -> text adds what a caller measures besides."""
    cmd = servers.write_config(server, rundir, docroot, port, override, True)
    path = next(a for a in cmd if a.startswith(rundir))
    with open(path) as f:
        text = f.read()
    v = dict(port=port, crt=crt, key=key, rundir=rundir, docroot=docroot)
    if server in ("htaccel", "apache"):
        text += TLS_APACHE.format(**v)
    elif server == "nginx":
        text = text.replace(NGINX_TLS[0].format(**v), NGINX_TLS[1].format(**v))
    elif server == "h2o":
        text = text.replace(H2O_TLS[0].format(**v), H2O_TLS[1].format(**v))
    elif server == "caddy":
        text = CADDY_TLS.format(**v)
    if tweak:
        text = tweak(server, text, v)
    with open(path, "w") as f:
        f.write(text)
    return cmd


H2C_APACHE = """\
LoadModule http2_module modules/mod_http2.so
Protocols h2c http/1.1
H2Direct on
"""


def h2load(port, path, extra, pin=True, scheme="https"):
    """h2load against 127.0.0.1:`port`; `scheme` http is h2c with prior
    knowledge."""
    cmd = (["taskset", "-c", "1"] if pin else []) + [
        "h2load", "-t1"] + extra + [f"{scheme}://127.0.0.1:{port}{path}"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600).stdout
    m = re.search(r"finished in ([\d.]+)(us|ms|s), ([\d.]+) req/s", out)
    r = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
                  r"(\d+) failed, (\d+) errored, (\d+) timeout", out)
    s = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", out)
    proto = re.search(r"Application protocol: (\S+)", out)
    if not (m and r and s):
        raise RuntimeError("h2load said: " + out[-800:])
    scale = {"us": 1e-6, "ms": 1e-3, "s": 1.0}[m.group(2)]
    return {"seconds": float(m.group(1)) * scale, "rps": float(m.group(3)),
            "succeeded": int(r.group(4)), "failed": int(r.group(5)) + int(r.group(6)),
            "status_2xx": int(s.group(1)), "protocol": proto.group(1) if proto else None,
            "command": " ".join(cmd)}


def start(server, base, tree, override, crt, key, callgrind=False, tweak=None):
    """The server answering over h2; under callgrind its counts go to
    `callgrind.out` in its run directory (the server's user writes it)."""
    rundir = tempfile.mkdtemp(prefix=f"{server}-", dir=base)
    os.chmod(rundir, 0o777)
    port = servers.free_port(28480)
    docroot = os.path.join(base, "trees", tree)
    cmd = write_config(server, rundir, docroot, port, override, crt, key, tweak)
    if callgrind:
        # Started as the user it would switch to: valgrind writes its
        # output at exit, with the rights the process has then.
        cmd = ["runuser", "-u", "www-data", "--", "valgrind", "--tool=callgrind",
               f"--callgrind-out-file={rundir}/callgrind.out"] + cmd
    s = servers.Server(server, cmd, rundir, port, True)
    return answering(s, callgrind, "https")


def answering(s, callgrind, scheme):
    """`s` once it answers one HTTP/2 request (h2 over TLS, or h2c with
    prior knowledge for `scheme` http); stopped and refused if it does not
    in time."""
    deadline = time.time() + (120 if callgrind else 20)
    while True:
        try:
            got = h2load(s.port, "/index.html", ["-n1", "-c1"], pin=False, scheme=scheme)
            if got["status_2xx"] == 1 and got["protocol"] in ("h2", "h2c"):
                return s
        except RuntimeError:
            pass
        if time.time() > deadline or s.proc.poll() is not None:
            s.stop()
            raise RuntimeError(f"{s.name} did not answer over {scheme} HTTP/2: {s.output()}")
        time.sleep(0.2)


def point(server, base, tree, override, crt, key, seconds, runs):
    s = start(server, base, tree, override, crt, key)
    try:
        p = measure(s, seconds, runs, "https")
    finally:
        s.stop()
    return {"server": server, "tree": tree, "override": override, **p}


def measure(s, seconds, runs, scheme):
    """`runs` h2load runs of `seconds` on the running server `s` after a
    2 s warm-up: req/s and server CPU per request (medians) and what the
    runs answered."""
    h2load(s.port, "/index.html", ["-c50", "-m10", "-D", "2"], scheme=scheme)
    out = []
    for _ in range(runs):
        cpu = servers.cpu_seconds(s.pids())
        r = h2load(s.port, "/index.html", ["-c50", "-m10", "-D", str(seconds)], scheme=scheme)
        used = servers.cpu_seconds(s.pids()) - cpu
        r["server_us_per_request"] = 1e6 * used / max(r["succeeded"], 1)
        out.append(r)
    return {"rps": statistics.median(r["rps"] for r in out),
            "rps_runs": [round(r["rps"]) for r in out],
            "server_us_per_request": statistics.median(r["server_us_per_request"] for r in out),
            "failed": sum(r["failed"] for r in out),
            "non_2xx": sum(r["succeeded"] - r["status_2xx"] for r in out),
            "protocol": out[0]["protocol"], "command": out[0]["command"]}


def floor_bin():
    return os.path.abspath(os.environ.get(
        "H2_FLOOR_BIN", os.path.join(HERE, "..", "target", "release", "examples", "h2_floor")))


def start_cleartext(server, base, callgrind=False):
    """`server` answering h2c with prior knowledge on a cleartext port: the
    `h2` crate floor, htaccel or h2o, pinned as the TLS points are."""
    rundir = tempfile.mkdtemp(prefix=f"{server}-h2c-", dir=base)
    os.chmod(rundir, 0o777)
    port = servers.free_port(28480)
    if server == "floor":
        cmd = [floor_bin(), f"127.0.0.1:{port}"]
    else:
        docroot = os.path.join(base, "trees", "static")
        cmd = servers.write_config(server, rundir, docroot, port, "None", True)
        if server == "htaccel":
            with open(cmd[-1], "a") as f:
                f.write(H2C_APACHE)
    if callgrind:
        cmd = ["runuser", "-u", "www-data", "--", "valgrind", "--tool=callgrind",
               f"--callgrind-out-file={rundir}/callgrind.out"] + cmd
    s = servers.Server(server, cmd, rundir, port, True)
    return answering(s, callgrind, "http")


def floor_points(base, seconds, runs, count_instructions):
    """F2/h2c: the `h2` crate alone, htaccel and h2o over cleartext h2c."""
    points, missing = [], {}
    for server in ("floor", "htaccel", "h2o"):
        if server == "floor" and not os.access(floor_bin(), os.X_OK):
            missing["floor"] = ("not built (cargo build --release --example h2_floor "
                                "-p htaccel)")
            continue
        if server == "h2o" and "h2o" not in servers.present_peers():
            missing["h2o (h2c)"] = "not installed"
            continue
        s = start_cleartext(server, base)
        try:
            p = {"id": "F2/h2c", "server": "h2 crate alone" if server == "floor" else server,
                 **measure(s, seconds, runs, "http")}
        finally:
            s.stop()
        if count_instructions and server != "h2o":
            counts = []
            for n in (N1, N2):
                s = start_cleartext(server, base, callgrind=True)
                try:
                    h2load(s.port, "/index.html", ["-n", str(n), "-c4", "-m10"], pin=False,
                           scheme="http")
                finally:
                    s.stop()
                with open(os.path.join(s.rundir, "callgrind.out")) as f:
                    counts.append(int(re.search(r"^summary: (\d+)", f.read(), re.M).group(1)))
            p["instructions_per_request"] = (counts[1] - counts[0]) / (N2 - N1)
        points.append(p)
        print(f"F2/h2c {p['server']}: {p['rps']:,.0f} req/s, "
              f"{p['server_us_per_request']:.1f} µs/request"
              + (f", {p['instructions_per_request']:,.0f} instructions/request"
                 if "instructions_per_request" in p else ""), flush=True)
    return points, missing


def instructions(base, tree, override, crt, key):
    counts = []
    for n in (N1, N2):
        s = start("htaccel", base, tree, override, crt, key, callgrind=True)
        try:
            h2load(s.port, "/index.html", ["-n", str(n), "-c4", "-m10"], pin=False)
        finally:
            s.stop()
        with open(os.path.join(s.rundir, "callgrind.out")) as f:
            counts.append(int(re.search(r"^summary: (\d+)", f.read(), re.M).group(1)))
    return (counts[1] - counts[0]) / (N2 - N1)


def main():
    base = tempfile.mkdtemp(prefix="htaccel-h2bench-", dir=QUIET_DIR)
    try:
        run(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def run(base):
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--instructions", action="store_true")
    ap.add_argument("--only", help="servers, comma-separated")
    ap.add_argument("--floor", action="store_true",
                    help="also F2/h2c: the h2 crate alone, htaccel and h2o over cleartext h2c")
    args = ap.parse_args()
    if not shutil.which("h2load"):
        sys.exit("bench/h2.py needs h2load (apt-get install -y nghttp2-client)")
    os.environ.setdefault("HTACCEL_BIN", os.path.join(HERE, "..", "target", "release", "htaccel"))
    os.environ["HTACCEL_BIN"] = os.path.abspath(os.environ["HTACCEL_BIN"])
    os.chmod(base, 0o755)
    trees = scenarios.trees()
    for key in ("static", "root-realistic12k"):
        for rel, body in trees[key].items():
            path = os.path.join(base, "trees", key, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(body)
    for dirpath, _, files in os.walk(base):
        os.chmod(dirpath, 0o755)
        for f in files:
            os.chmod(os.path.join(dirpath, f), 0o644)
    crt, key = certificate(base)
    started = datetime.datetime.now(datetime.timezone.utc)
    result = {"started": started.isoformat(timespec="seconds"), "seconds": args.seconds,
              "runs": args.runs, "loadavg_start": open("/proc/loadavg").read().split()[:3],
              "h2load": subprocess.run(["h2load", "--version"], capture_output=True,
                                       text=True).stdout.strip(),
              "versions": {}, "points": [], "missing": {}}
    wanted = args.only.split(",") if args.only else ["htaccel", "apache"] + list(servers.PEERS)
    for server in wanted:
        if server == "lighttpd":
            # Debian's lighttpd 1.4.69 speaks HTTP/2, but its configuration
            # here is the cleartext HTTP/1.1 one; not measured on HTTP/2.
            result["missing"][server] = "not configured for HTTP/2 over TLS in this bench"
            continue
        if server not in ("htaccel", "apache") and server not in servers.present_peers():
            result["missing"][server] = "not installed (no Debian package candidate)"
            continue
        try:
            result["versions"][server] = servers.version(server, os.environ["HTACCEL_BIN"])
            p = point(server, base, "static", "None", crt, key, args.seconds, args.runs)
            p["id"] = "D2/static"
            result["points"].append(p)
            print(f"D2/static {server}: {p['rps']:,.0f} req/s, "
                  f"{p['server_us_per_request']:.1f} µs/request ({p['protocol']})", flush=True)
        except (RuntimeError, OSError, subprocess.SubprocessError) as e:
            result["missing"][server] = f"failed: {str(e)[-300:]}"
            print(f"D2/static {server}: failed: {e}", flush=True)
    if not args.only or "htaccel" in wanted:
        for name, tree, override in (("ao-none", "static", "None"),
                                     ("ao-all-realistic12k", "root-realistic12k", "All")):
            p = point("htaccel", base, tree, override, crt, key, args.seconds, args.runs)
            p["id"] = f"A2/{name}"
            if args.instructions:
                try:
                    p["instructions_per_request"] = instructions(base, tree, override, crt, key)
                except (RuntimeError, OSError, AttributeError, subprocess.SubprocessError) as e:
                    p["instructions_error"] = str(e)[-300:]
            result["points"].append(p)
            print(f"A2/{name}: {p['rps']:,.0f} req/s, {p['server_us_per_request']:.1f} µs/request"
                  + (f", {p['instructions_per_request']:,.0f} instructions/request"
                     if "instructions_per_request" in p else ""), flush=True)
    if args.floor:
        points, missing = floor_points(base, args.seconds, args.runs, args.instructions)
        result["points"] += points
        result["missing"].update(missing)
    result["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
    result["finished"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    name = started.strftime("%Y%m%dT%H%M%SZ") + ".json"
    os.makedirs(os.path.join(HERE, "results", "h2"), exist_ok=True)
    with open(os.path.join(HERE, "results", "h2", name), "w") as f:
        json.dump(result, f, indent=1)
    print("written bench/results/h2/" + name)


if __name__ == "__main__":
    main()
