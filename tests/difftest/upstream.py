"""A small HTTP/1.1 application for the reverse-proxy cases: it echoes what
it received, answers with chosen statuses, headers and bodies, redirects,
streams, says whether its connection is a new one (`?conn=1`) and what follows the request on it (`?peek=1`), returns X-Sendfile, and answers late (`?sleep=SECONDS`); over TLS
with `--tls CERT KEY`.

It is also the naive back end of the request-smuggling probes
(tests/cases/security/smuggling): it frames a body as chunked whenever
Transfer-Encoding mentions chunked, else by Content-Length, without the
checks a careful server makes. A front end maps every path it proxies below a
prefix (/base/ ...), so a request for /SMUGGLED can only arrive when bytes
the front end took for a body were read here as a request of their own:
from then on every answer carries DESYNC_MARKER, which the probe case lists
among its secrets."""
import base64
import hashlib
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit, parse_qs


DESYNC_MARKER = "HTACCEL-DESYNC-4c1e"
desynced = False


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def end_headers(self):
        if desynced:
            self.send_header("X-Desync", DESYNC_MARKER)
        super().end_headers()

    def read_body(self):
        """The request body, by its length or decoded from chunks."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return body
                body += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def answer(self):
        global desynced
        if self.path.startswith("/SMUGGLED"):
            desynced = True
        url = urlsplit(self.path)
        q = parse_qs(url.query)
        body = self.read_body()
        if self.headers.get("Upgrade") and "noswitch" not in q:
            return self.switch(q, body)
        for code in q.get("interim", []):
            # Interim answers before the final one (`?interim=103`): 103
            # with the Link fields a browser preloads, others bare.
            self.wfile.write(b"HTTP/1.1 %s Interim\r\n" % code.encode())
            if code == "103":
                self.wfile.write(b"Link: </style.css>; rel=preload; as=style\r\n")
                self.wfile.write(b"Link: </app.js>; rel=preload; as=script\r\n")
                self.wfile.write(b"Connection: X-Hop\r\nX-Hop: 1\r\n")
            self.wfile.write(b"\r\n")
            self.wfile.flush()
        if "sleep" in q:
            # A slow application: the proxy's timeouts (ProxyTimeout,
            # timeout=) decide whether its answer is waited for.
            time.sleep(float(q["sleep"][0]))
        if url.path.endswith("/chunked") or "chunked" in q:
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            if self.command != "HEAD":
                for part in (b"first ", b"second ", b"third\n"):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                self.wfile.write(b"0\r\n\r\n")
            return
        status = int(q.get("status", ["200"])[0])
        out = []
        out.append("%s %s %s" % (self.command, self.path, self.request_version))
        for k, v in self.headers.items():
            out.append("%s: %s" % (k, v))
        if "peek" in q:
            # What follows the request on the connection at once
            # (`?peek=1`): a proxy's extra CRLF after the body.
            self.connection.settimeout(0.5)
            try:
                after = self.rfile.peek(2)[:2]
            except OSError:
                after = b""
            self.connection.settimeout(None)
            out.append("after=%r" % after)
        # Whether this upstream connection carried a request before
        # (`?conn=1`): a new connection or a kept one.
        self.served = getattr(self, "served", 0) + 1
        if "conn" in q:
            out.append("connection=%s" % ("new" if self.served == 1 else "kept"))
        if "sum" in q:
            # Large bodies: their length and digest only.
            out.append("body=%d bytes md5=%s" % (len(body), hashlib.md5(body).hexdigest()))
        else:
            out.append("body=%s" % body.decode("latin-1"))
        text = ("\n".join(out) + "\n").encode()
        self.send_response(status, q.get("reason", [None])[0])
        for h in q.get("h", []):
            k, _, v = h.partition(":")
            self.send_header(k, v.strip())
        if "loc" in q:
            self.send_header("Location", q["loc"][0])
        if "xs" in q:
            # @CWD@: the case's sandbox, where the harness starts this app.
            self.send_header("X-Sendfile", q["xs"][0].replace("@CWD@", os.getcwd()))
        self.send_header("Content-Type", "text/plain")
        if "xs" in q:
            # No body: Apache with mod_xsendfile would send a proxied
            # body after the file.
            text = b""
        if "close" in q:
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(text)
            self.close_connection = True
            return
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        if self.command != "HEAD" and status not in (204, 304):
            self.wfile.write(text)

    def switch(self, q, body):
        """Take the protocol the client asked for (`?as=` another one):
        a `101` with the WebSocket handshake's accept key, the request as
        it arrived, then an echo of each line the client sends (`echo:
        LINE`) until the client closes its side (`bye`); with `?close=1`,
        the upstream closes first, after the first line."""
        self.send_response(101, q.get("reason", [None])[0])
        self.send_header("Upgrade", q.get("as", [self.headers["Upgrade"]])[0])
        self.send_header("Connection", "Upgrade")
        key = self.headers.get("Sec-WebSocket-Key")
        if key:
            digest = hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()
            self.send_header("Sec-WebSocket-Accept", base64.b64encode(digest).decode())
        for h in q.get("h", []):
            k, _, v = h.partition(":")
            self.send_header(k, v.strip())
        self.end_headers()
        seen = ["%s %s %s" % (self.command, self.path, self.request_version)]
        seen += ["%s: %s" % (k, v) for k, v in self.headers.items()]
        seen.append("body=%s" % body.decode("latin-1"))
        self.wfile.write(("\n".join(seen) + "\n").encode())
        self.wfile.flush()
        self.close_connection = True
        while True:
            line = self.rfile.readline()
            if not line:
                self.wfile.write(b"bye\n")
                return
            self.wfile.write(b"echo: " + line)
            self.wfile.flush()
            if "close" in q:
                return

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_OPTIONS = do_PATCH = answer


server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
if len(sys.argv) == 5 and sys.argv[2] == "--tls":
    # An HTTPS upstream (SSLProxyEngine cases): the certificate and key
    # given; each handshake in its request's thread, so that one a client
    # gives up does not hold the others.
    import ssl
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[3], sys.argv[4])
    server.socket = context.wrap_socket(
        server.socket, server_side=True, do_handshake_on_connect=False
    )
server.serve_forever()
