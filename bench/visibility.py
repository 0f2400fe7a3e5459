"""Change visibility: does a request sent after a `.htaccess` write has
completed ever see the old rules?

A writer thread alternates the access file between two versions that
answer differently (a response header, or 200 against 403) while client
threads send requests on keep-alive connections. Each request is stamped
just before it is sent; each write is stamped when it starts and when its
close (or rename) has returned. A request is judged only when no write was
started between its send and the arrival of its answer: it must then show
the version of the last write completed before it was sent, and is counted
stale otherwise. The send stamp is taken before the send and the arrival
stamp after the answer is read, so the window judged is never narrower
than the real one: the count cannot blame the server for a request that
raced a write.
"""

import bisect
import os
import random
import threading
import time

from httpclient import Conn

VARIANTS = {
    # name: (version A text, version B text, how an answer shows its version)
    "header": (
        b"Header set X-Rules A\n",
        b"Header set X-Rules B\n",
        lambda status, headers: headers.get("x-rules"),
    ),
    "status": (
        b"# open\n",
        b"Require all denied\n",
        lambda status, headers: {200: "A", 403: "B"}.get(status),
    ),
}


def _write(path, body, mode):
    if mode == "rename":
        tmp = path + ".new"
        with open(tmp, "wb") as f:
            f.write(body)
        os.chmod(tmp, 0o644)
        os.rename(tmp, path)
    else:  # in place: truncate, write, close
        with open(path, "wb") as f:
            f.write(body)


def run(port, docroot, variant, mode, seconds, clients=4, interval=(0.005, 0.03)):
    """Load `docroot`/index.html for `seconds` while rewriting its
    .htaccess; return the counts."""
    a, b, version_of = VARIANTS[variant]
    path = os.path.join(docroot, ".htaccess")
    _write(path, a, mode)
    os.chmod(path, 0o644)
    time.sleep(0.2)
    writes = [(0, time.monotonic_ns() - 1, "A")]  # (start, done, version)
    samples = []  # (send stamp, arrival stamp, version seen)
    errors = []
    stop = threading.Event()

    def client():
        conn = Conn(port)
        mine = []
        try:
            while not stop.is_set():
                t = time.monotonic_ns()
                conn.send("/index.html")
                status, headers = conn.read()
                mine.append((t, time.monotonic_ns(), version_of(status, headers)))
        except OSError as e:
            errors.append(str(e))
        finally:
            conn.close()
            samples.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + seconds
    version = "A"
    while time.monotonic() < deadline:
        time.sleep(random.uniform(*interval))
        version = "B" if version == "A" else "A"
        start = time.monotonic_ns()
        _write(path, b if version == "B" else a, mode)
        writes.append((start, time.monotonic_ns(), version))
    stop.set()
    for t in threads:
        t.join()
    return judge(writes, samples) | {
        "variant": variant,
        "mode": mode,
        "writes": len(writes) - 1,
        "client_errors": len(errors),
        "first_error": errors[0] if errors else None,
    }


def judge(writes, samples):
    done = [w[1] for w in writes]
    judged = stale = racing = unknown = 0
    worst_ms = 0.0
    for t, arrived, seen in samples:
        k = bisect.bisect_right(done, t) - 1
        if k < 0:
            continue
        if k + 1 < len(writes) and writes[k + 1][0] <= arrived:
            racing += 1  # a write began before the answer came: either answer is right
            continue
        if seen is None:
            unknown += 1
            continue
        judged += 1
        if seen != writes[k][2]:
            stale += 1
            worst_ms = max(worst_ms, (t - writes[k][1]) / 1e6)
    return {
        "requests": len(samples),
        "judged": judged,
        "stale": stale,
        "stale_pct": round(100 * stale / judged, 4) if judged else None,
        "worst_stale_after_write_ms": round(worst_ms, 3),
        "racing_skipped": racing,
        "unrecognised": unknown,
    }
