"""Goal (a) counted in instructions: what one request costs htaccel with an
access-file scenario, against the same path with AllowOverride None.

req/s and CPU time per request move by 5-20 % between two runs of the same
server on a shared 2-core virtual machine, more than the 3 % goal (a)
allows. callgrind counts the instructions the server executes instead:
the same count for the same binary, tree and requests, whatever else the
machine does. The server runs under `valgrind --tool=callgrind` twice per
scenario, answering N1 and then N2 keep-alive requests (`ab -k`), so that
start-up, configuration and warm-up cancel out:

    instructions per request = (I(N2) - I(N1)) / (N2 - N1)

Kernel work is not counted; it is the same per request here (one socket
read and one write, no file-system call once warm).

Usage: python3 bench/instructions.py [RESULTS_DIR]   (default: the newest
run under bench/results/); writes RESULTS_DIR/instructions.json, which
bench/report.py adds to the report.
"""

import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import scenarios
import servers

N1, N2 = 300, 1300


def available():
    return shutil.which("valgrind") is not None and shutil.which("ab") is not None


def _count(s, base, n):
    """Instructions htaccel executed to start, answer `n` requests for `s`, and stop."""
    docroot = os.path.join(base, "trees", s.tree)
    rundir = tempfile.mkdtemp(prefix="cg-", dir=base)
    port = servers.free_port()
    cmd = servers.write_config("htaccel", rundir, docroot, port, s.override, True)
    out = os.path.join(rundir, "callgrind.out")
    # Started as the user it would switch to: valgrind writes its output at
    # exit, with the rights the process has then.
    cmd = ["runuser", "-u", "www-data", "--", "valgrind", "--tool=callgrind",
           f"--callgrind-out-file={out}"] + cmd
    server = servers.Server("htaccel", cmd, rundir, port, True)
    try:
        server.wait_ready(s.path, timeout=120)
        subprocess.run(
            ["ab", "-q", "-k", "-n", str(n), "-c", "4", f"http://127.0.0.1:{port}{s.path}"],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    finally:
        server.stop()
    with open(out) as f:
        m = re.search(r"^summary: (\d+)", f.read(), re.M)
    if not m:
        raise RuntimeError(f"no callgrind summary for {s.id}")
    return int(m.group(1))


def per_request(s, base):
    return (_count(s, base, N2) - _count(s, base, N1)) / (N2 - N1)


def goal_a_scenarios():
    """htaccel's pinned A and B points: the references and the scenarios."""
    return [s for s in scenarios.scenarios([]) if s.server == "htaccel" and s.group in ("A", "B")]


def run(base, log):
    """Count every goal-(a) point; `base` holds the scenario trees (`trees/`)."""
    out = []
    for i, s in enumerate(goal_a_scenarios(), 1):
        try:
            v = per_request(s, base)
            out.append({"group": s.group, "scenario": s.name, "instructions_per_request": v})
            log(f"instructions {i}: {s.group}/{s.name}: {v:,.0f} per request")
        except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
            out.append({"group": s.group, "scenario": s.name, "error": str(e)[-400:]})
            log(f"instructions {i}: {s.group}/{s.name}: failed: {e}")
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    if len(sys.argv) > 1:
        results_dir = sys.argv[1]
    else:
        root = os.path.join(here, "results")
        results_dir = os.path.join(root, sorted(os.listdir(root))[-1])
    if not available():
        sys.exit("instructions.py needs valgrind and ab (apt-get install -y valgrind apache2-utils)")
    os.environ.setdefault(
        "HTACCEL_BIN", os.path.abspath(os.path.join(here, "..", "target", "release", "htaccel"))
    )

    def log(msg):
        print(f"[{datetime.datetime.now().strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

    base = tempfile.mkdtemp(prefix="htaccel-cg-")
    os.chmod(base, 0o755)
    try:
        scenarios.write_trees(os.path.join(base, "trees"))
        commit = subprocess.run(
            ["git", "-C", here, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        doc = {
            "measured_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "htaccel_commit": commit,
            "requests": [N1, N2],
            "points": run(base, log),
        }
    finally:
        shutil.rmtree(base, ignore_errors=True)
    with open(os.path.join(results_dir, "instructions.json"), "w") as f:
        json.dump(doc, f, indent=1)
    log(f"wrote {results_dir}/instructions.json")


if __name__ == "__main__":
    main()
