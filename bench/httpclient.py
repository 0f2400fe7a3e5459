"""A minimal keep-alive HTTP/1.1 client over a raw socket: enough to stamp
each request's send time and read the status and headers of its answer,
with none of a library's buffering between the stamp and the send."""

import socket


class Conn:
    def __init__(self, port, timeout=10):
        self.port = port
        self.timeout = timeout
        self.sock = None
        self.buf = b""

    def connect(self):
        self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def close(self):
        if self.sock:
            self.sock.close()
            self.sock = None

    def send(self, path):
        if self.sock is None:
            self.connect()
        self.sock.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())

    def read(self):
        """Read one answer: (status, headers). Closes when the server does."""
        while b"\r\n\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed before the answer")
            self.buf += chunk
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        length = int(headers.get("content-length", "0"))
        while len(self.buf) < length:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed inside the body")
            self.buf += chunk
        self.buf = self.buf[length:]
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, headers
