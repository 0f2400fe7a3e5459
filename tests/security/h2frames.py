"""Raw HTTP/2 frames for the attack clients of tests/security/h2attacks.py:
just enough framing and HPACK (RFC 9113, RFC 7541) to send what a hostile
client sends and to read what the server answers, without a library that
would refuse to send it. Standard library only.
"""

import socket
import struct
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, \
    WINDOW_UPDATE, CONTINUATION = range(10)
END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY_FLAG = 0x1, 0x1, 0x4, 0x8, 0x20

# Error codes (RFC 9113, section 7).
NO_ERROR, PROTOCOL_ERROR, INTERNAL_ERROR, FLOW_CONTROL_ERROR = 0, 1, 2, 3
REFUSED_STREAM, CANCEL, COMPRESSION_ERROR, ENHANCE_YOUR_CALM = 7, 8, 9, 11

# SETTINGS identifiers.
HEADER_TABLE_SIZE, ENABLE_PUSH, MAX_CONCURRENT_STREAMS = 1, 2, 3
INITIAL_WINDOW_SIZE, MAX_FRAME_SIZE = 4, 5


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + struct.pack(">BBI", kind, flags, stream) + payload


def settings(**values):
    ids = {"header_table_size": HEADER_TABLE_SIZE, "enable_push": ENABLE_PUSH,
           "initial_window_size": INITIAL_WINDOW_SIZE, "max_frame_size": MAX_FRAME_SIZE}
    return frame(SETTINGS, 0, 0, b"".join(struct.pack(">HI", ids[k], v) for k, v in values.items()))


def rst(stream, code=CANCEL):
    return frame(RST_STREAM, 0, stream, struct.pack(">I", code))


def window_update(stream, increment):
    return frame(WINDOW_UPDATE, 0, stream, struct.pack(">I", increment))


def ping(data=b"12345678"):
    return frame(PING, 0, 0, data)


# ---------------------------------------------------------------- HPACK

def hpack_int(value, prefix_bits, first=0):
    """An integer with an N-bit prefix (RFC 7541, section 5.1)."""
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    out = [first | limit]
    value -= limit
    while value >= 128:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def hpack_str(text):
    data = text if isinstance(text, bytes) else text.encode()
    return hpack_int(len(data), 7) + data


def literal(name, value, index_name=0, incremental=False):
    """A literal field, its name by static index or spelled out."""
    if incremental:
        head = hpack_int(index_name, 6, 0x40)
    else:
        head = hpack_int(index_name, 4, 0x00)
    return head + (b"" if index_name else hpack_str(name)) + hpack_str(value)


def request_block(path="/index.html", authority="localhost", scheme="http"):
    """GET `path`: :method GET (2), :scheme (6 http / 7 https), :path and
    :authority by indexed names."""
    return (b"\x82" + (b"\x86" if scheme == "http" else b"\x87")
            + literal(None, path, index_name=4) + literal(None, authority, index_name=1))


def headers(stream, block, end_stream=True, end_headers=True):
    flags = (END_STREAM if end_stream else 0) | (END_HEADERS if end_headers else 0)
    return frame(HEADERS, flags, stream, block)


# ---------------------------------------------------------------- reading

class Conn:
    """One HTTP/2 connection in cleartext with prior knowledge."""

    def __init__(self, port, timeout=5.0, rcvbuf=None, window=None):
        self.sock = socket.socket()
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(timeout)
        self.sock.connect(("127.0.0.1", port))
        opts = {} if window is None else {"initial_window_size": window}
        self.sock.sendall(PREFACE + settings(**opts))
        self.buf = b""

    def send(self, data):
        self.sock.sendall(data)

    def read_frame(self, timeout=None):
        """The next frame (type, flags, stream, payload), or None when the
        connection ended or nothing came within `timeout`."""
        if timeout is not None:
            self.sock.settimeout(timeout)
        try:
            while len(self.buf) < 9 or len(self.buf) < 9 + int.from_bytes(self.buf[:3], "big"):
                chunk = self.sock.recv(65536)
                if not chunk:
                    return None
                self.buf += chunk
        except OSError:
            return None
        length = int.from_bytes(self.buf[:3], "big")
        kind, flags, stream = struct.unpack(">BBI", self.buf[3:9])
        payload = self.buf[9:9 + length]
        self.buf = self.buf[9 + length:]
        return kind, flags, stream & 0x7FFFFFFF, payload

    def wait_for(self, match, seconds):
        """Read frames until `match(frame)` is true: that frame, or None
        (the connection ended, or `seconds` passed)."""
        until = time.time() + seconds
        while time.time() < until:
            f = self.read_frame(timeout=max(0.01, until - time.time()))
            if f is None:
                return None
            if f[0] == SETTINGS and not f[1] & ACK:
                try:
                    self.send(frame(SETTINGS, ACK, 0))
                except OSError:
                    pass
            if match(f):
                return f
        return None

    def close(self):
        self.sock.close()


def goaway_code(f):
    return struct.unpack(">I", f[3][4:8])[0] if f and f[0] == GOAWAY else None


def rst_code(f):
    return struct.unpack(">I", f[3][:4])[0] if f and f[0] == RST_STREAM else None


def get(port, path="/index.html", timeout=5.0):
    """One GET on a fresh h2c connection: (200 when the answer was a 200
    with its body ended, else None; seconds)."""
    start = time.time()
    try:
        c = Conn(port, timeout=timeout)
    except OSError:
        return None, time.time() - start
    try:
        c.send(headers(1, request_block(path)))
        status = None
        while True:
            f = c.wait_for(lambda f: f[2] == 1, timeout)
            if f is None:
                return None, time.time() - start
            kind, flags, _, payload = f
            if kind == HEADERS and status is None:
                # :status 200 is static entry 8, indexed: 0x88.
                status = 200 if payload[:1] == b"\x88" else 0
            if kind == RST_STREAM:
                return None, time.time() - start
            if flags & END_STREAM and kind in (HEADERS, DATA):
                return (200 if status == 200 else None), time.time() - start
    except OSError:
        return None, time.time() - start
    finally:
        c.close()
