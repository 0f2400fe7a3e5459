"""One load run: wrk pinned to CPU 1 against a running server, with the
server's CPU time (utime + stime of its whole process tree, from
/proc/PID/stat) sampled before and after, and what the rest of the machine
did meanwhile (/proc/stat), so noisy runs can be recognised.
"""

import os
import re
import statistics
import subprocess
import time

import servers

WRK_CPU = "1"


def _cpu_busy():
    """Per-CPU (busy, total) jiffies from /proc/stat."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu") and line[3].isdigit():
                name, *vals = line.split()
                vals = [int(v) for v in vals]
                idle = vals[3] + vals[4]
                out[name] = (sum(vals) - idle, sum(vals))
    return out


_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1000.0, "m": 60000.0}


def _ms(text):
    m = re.match(r"([\d.]+)(us|ms|s|m)$", text)
    return float(m.group(1)) * _UNITS[m.group(2)] if m else None


def parse_wrk(text):
    r = {}
    m = re.search(r"(\d+) requests in", text)
    r["requests"] = int(m.group(1)) if m else 0
    m = re.search(r"Requests/sec:\s+([\d.]+)", text)
    r["rps"] = float(m.group(1)) if m else 0.0
    for pct in ("50", "99"):
        m = re.search(rf"^\s+{pct}%\s+(\S+)", text, re.M)
        r[f"p{pct}_ms"] = _ms(m.group(1)) if m else None
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    r["non2xx"] = int(m.group(1)) if m else 0
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    r["socket_errors"] = sum(int(g) for g in m.groups()) if m else 0
    return r


def wrk(server, url, seconds, connections=50, headers=(), script=None):
    """Run wrk once (with `headers`, "Name: value" each, and `script`: a Lua
    file and its arguments); return its figures plus server and machine CPU
    use."""
    pids = server.pids()
    user0, sys0 = servers.cpu_split(pids)
    cpu0 = user0 + sys0
    busy0 = _cpu_busy()
    t0 = time.monotonic()
    cmd = [
        "taskset", "-c", WRK_CPU, "wrk", "-t1", f"-c{connections}", f"-d{seconds}s",
        "--latency", *[a for h in headers for a in ("-H", h)],
        *(["-s", script[0]] if script else []), url, *(["--", *script[1:]] if script else []),
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = proc.stdout.read()
    _, status, rusage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    busy1 = _cpu_busy()
    user1, sys1 = servers.cpu_split(server.pids())
    cpu1 = user1 + sys1
    r = parse_wrk(out)
    r["wrk_exit"] = proc.returncode
    server_cpu = cpu1 - cpu0
    wrk_cpu = rusage.ru_utime + rusage.ru_stime
    r["server_cpu_s"] = round(server_cpu, 3)
    r["server_cpu_pct"] = round(100 * server_cpu / wall, 1)
    r["wrk_cpu_pct"] = round(100 * wrk_cpu / wall, 1)
    r["cpu_us_per_req"] = round(1e6 * server_cpu / r["requests"], 3) if r["requests"] else None
    # Split: the server's own code (user) and the kernel's work for it
    # (system: socket reads and writes, TCP, epoll).
    if r["requests"]:
        r["user_us_per_req"] = round(1e6 * (user1 - user0) / r["requests"], 3)
        r["sys_us_per_req"] = round(1e6 * (sys1 - sys0) / r["requests"], 3)
    # What every CPU was busy with, minus the server and wrk: other tenants.
    tck = servers.CLK_TCK
    machine = sum((busy1[c][0] - busy0[c][0]) for c in busy1 if c in busy0) / tck
    r["other_cpu_pct"] = round(max(0.0, 100 * (machine - server_cpu - wrk_cpu) / wall), 1)
    for c in ("cpu0", "cpu1"):
        if c in busy0 and c in busy1:
            r[f"{c}_busy_pct"] = round(100 * (busy1[c][0] - busy0[c][0]) / tck / wall, 1)
    # Other work on the server's core (meaningful when the server is pinned to CPU 0).
    if "cpu0_busy_pct" in r:
        r["other_on_cpu0_pct"] = round(max(0.0, r["cpu0_busy_pct"] - r["server_cpu_pct"]), 1)
    if r["requests"] == 0:
        r["wrk_output"] = out[-500:]
    return r


def quiet_wrk(server, url, seconds, retries, threshold, key="other_on_cpu0_pct"):
    """wrk once; again (up to `retries` times) while other work took more
    than `threshold` % of the server's core (`key`: for a server on both
    cores, "other_cpu_pct", other work on the whole machine). Keep the
    quietest attempt; the others are returned too, for the record."""
    attempts = [wrk(server, url, seconds)]
    while len(attempts) <= retries and attempts[-1].get(key, 0) > threshold:
        attempts.append(wrk(server, url, seconds))
    best = min(attempts, key=lambda r: r.get(key, 0))
    best["attempts"] = len(attempts)
    best["discarded_noisy_rps"] = [r["rps"] for r in attempts if r is not best]
    return best


def summarise(runs):
    """Median and spread of a point's runs."""
    rps = [r["rps"] for r in runs]
    cpu = [r["cpu_us_per_req"] for r in runs if r["cpu_us_per_req"] is not None]

    def med(key):
        vals = [r[key] for r in runs if r.get(key) is not None]
        return round(statistics.median(vals), 3) if vals else None

    median = statistics.median(rps) if rps else 0.0
    return {
        "rps_median": round(median, 1),
        "rps_min": round(min(rps), 1) if rps else 0.0,
        "rps_max": round(max(rps), 1) if rps else 0.0,
        "spread_pct": round(100 * (max(rps) - min(rps)) / median, 1) if median and len(rps) > 1 else None,
        "cpu_us_per_req_median": round(statistics.median(cpu), 3) if cpu else None,
        "user_us_per_req_median": med("user_us_per_req"),
        "sys_us_per_req_median": med("sys_us_per_req"),
        "p50_ms_median": med("p50_ms"),
        "p99_ms_median": med("p99_ms"),
        "server_cpu_pct_median": med("server_cpu_pct"),
        "wrk_cpu_pct_median": med("wrk_cpu_pct"),
        "other_cpu_pct_max": max((r["other_cpu_pct"] for r in runs), default=None),
        "other_on_cpu0_pct_max": max((r.get("other_on_cpu0_pct", 0) for r in runs), default=None),
        "non2xx_total": sum(r["non2xx"] for r in runs),
        "requests_total": sum(r["requests"] for r in runs),
    }
