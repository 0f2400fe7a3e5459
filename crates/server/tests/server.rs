//! The server end to end on 127.0.0.1, with a small handler and raw
//! requests. The expected answers are Apache 2.4.71's for the same bytes
//! (observed with raw requests through a socket; see `src/head.rs` and
//! `src/body.rs` for the row-by-row tables of the parsers).
//!
//! Every wait is bounded: reads time out, servers are stopped at the end.

use bytes::Bytes;
use htaccel_engine::http::{
    AccessEntry, Body, BodyDisposal, BodyPart, Handler, Log, ProtocolError, Request, Response,
};
use htaccel_server::{Listeners, ReqTimeout, Server, ServerOptions};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

struct Recorder(Mutex<Vec<(u16, String)>>);

impl Log for Recorder {
    fn access(&self, e: &AccessEntry<'_>) {
        let line = e
            .request
            .map_or("-".to_string(), |r| r.request_line.clone());
        self.0.lock().unwrap().push((e.status, line));
    }
    fn error(&self, _: &str, _: &str, _: Option<SocketAddr>, _: &str) {}
}

struct TestHandler {
    log: Recorder,
    big: Arc<std::fs::File>,
    big_len: u64,
}

impl Handler for TestHandler {
    fn handle(&self, req: &Request) -> Response {
        let path = req.target.split('?').next().unwrap_or("");
        let mut r = Response::new(200);
        match path {
            "/big" => {
                r.add_header("Content-Length", self.big_len.to_string());
                r.add_header("Content-Type", "application/octet-stream");
                r.body = Body::file(self.big.clone(), 0, self.big_len);
            }
            "/small-file" => {
                r.add_header("Content-Type", "application/octet-stream");
                r.body = Body::file(self.big.clone(), 100, 1000);
            }
            "/limit10" => {
                r.body_limit = 10;
                r.add_header("Content-Type", "text/plain");
                r.body = Body::bytes("limited\n");
            }
            "/deny" => {
                r.status = 403;
                r.disposal = BodyDisposal::AfterResponse;
                r.add_header("Content-Type", "text/plain");
                r.body = Body::bytes("denied\n");
            }
            "/stuck" => {
                // A handler caught in a call that does not return (a read
                // from a hung file system).
                std::thread::sleep(Duration::from_secs(3600));
            }
            "/slow" => {
                std::thread::sleep(Duration::from_millis(400));
                r.add_header("Content-Type", "text/plain");
                r.body = Body::bytes("slow\n");
            }
            "/chunked" => {
                r.add_header("Transfer-Encoding", "chunked");
                r.add_header("Content-Type", "text/plain");
                r.body = Body {
                    parts: vec![
                        BodyPart::Bytes(Bytes::from_static(b"abc")),
                        BodyPart::Bytes(Bytes::from_static(b"defg")),
                    ],
                };
            }
            "/close" => {
                r.close = true;
                r.body = Body::bytes("bye\n");
            }
            "/inject" => {
                r.add_header("X-A", "a\r\nSet-Cookie: x=1");
                r.body = Body::bytes("never sent\n");
            }
            "/304" => {
                r.status = 304;
                r.add_header("ETag", "\"e\"");
                r.add_header("Content-Type", "text/plain");
            }
            _ => {
                r.add_header("Last-Modified", "Sat, 21 Nov 2026 06:33:33 GMT");
                r.add_header("Content-Type", "text/plain");
                r.body = Body::bytes("hello world");
            }
        }
        r
    }

    fn protocol_error(&self, e: &ProtocolError<'_>) -> Response {
        let (status, note) = (e.status, e.note.or(e.expect));
        let mut r = Response::new(status);
        r.add_header("Content-Type", "text/html; charset=iso-8859-1");
        r.body = Body::bytes(format!("E{status}:{}", note.unwrap_or("")));
        r.close = true;
        r
    }

    fn log(&self) -> &dyn Log {
        &self.log
    }
}

fn handler() -> Arc<TestHandler> {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("htaccel-server-test-{}-{n}", std::process::id()));
    let data: Vec<u8> = (0..1_048_576u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&path, &data).unwrap();
    let f = std::fs::File::open(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    Arc::new(TestHandler {
        log: Recorder(Mutex::new(Vec::new())),
        big: Arc::new(f),
        big_len: data.len() as u64,
    })
}

fn options() -> ServerOptions {
    ServerOptions {
        listen: vec!["127.0.0.1:0".parse().unwrap()],
        threads: 1,
        server_header: "Apache".into(),
        shutdown_timeout: Duration::from_secs(3),
        ..ServerOptions::default()
    }
}

fn start(h: Arc<TestHandler>, opts: ServerOptions) -> (Server, SocketAddr) {
    let l = Listeners::bind(&opts).unwrap();
    let addr = l.local_addrs()[0];
    (l.serve(h, &opts).unwrap(), addr)
}

/// Send `req`, read until the server closes or stays quiet for `quiet`.
/// Returns what was read and whether the server closed.
fn exchange(addr: SocketAddr, req: &[u8], quiet: Duration) -> (String, bool) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(req).unwrap();
    read_all(&mut s, quiet)
}

/// The first byte may take up to `quiet` plus a grace period (a loaded
/// machine); after data, `quiet` without more data ends the read.
fn read_all(s: &mut TcpStream, quiet: Duration) -> (String, bool) {
    s.set_read_timeout(Some(quiet + Duration::from_secs(2)))
        .unwrap();
    let end = Instant::now() + Duration::from_secs(10);
    let mut out = Vec::new();
    let mut buf = [0u8; 65536];
    let closed = loop {
        if Instant::now() > end {
            break false;
        }
        match s.read(&mut buf) {
            Ok(0) => break true,
            Ok(n) => {
                out.extend_from_slice(&buf[..n]);
                s.set_read_timeout(Some(quiet)).unwrap();
            }
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut =>
            {
                break false
            }
            Err(_) => break true,
        }
    };
    (String::from_utf8_lossy(&out).into_owned(), closed)
}

fn statuses(resp: &str) -> Vec<u16> {
    resp.match_indices("HTTP/1.1 ")
        .map(|(i, _)| resp[i + 9..i + 12].parse().unwrap())
        .collect()
}

const Q: Duration = Duration::from_millis(300);

#[test]
fn keep_alive_headers_and_order() {
    let (server, addr) = start(handler(), options());
    // HTTP/1.1 without a keep-alive token: persistent, no Connection header.
    let (r, closed) = exchange(addr, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", Q);
    assert!(!closed);
    let head = r.split("\r\n\r\n").next().unwrap();
    let names: Vec<&str> = head
        .lines()
        .skip(1)
        .map(|l| l.split(':').next().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "Date",
            "Server",
            "Last-Modified",
            "Content-Length",
            "Content-Type"
        ],
        "{r}"
    );
    assert!(r.ends_with("\r\n\r\nhello world"));
    // With the token: Apache's Keep-Alive header, before Content-Type.
    let (r, _) = exchange(
        addr,
        b"GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n",
        Q,
    );
    assert!(r.contains("Content-Length: 11\r\nKeep-Alive: timeout=5, max=100\r\nConnection: Keep-Alive\r\nContent-Type: text/plain\r\n"), "{r}");
    // HTTP/1.0: closes unless asked; keep-alive when asked.
    let (r, closed) = exchange(addr, b"GET / HTTP/1.0\r\n\r\n", Q);
    assert!(closed && r.contains("Connection: close\r\n"), "{r}");
    let (r, closed) = exchange(addr, b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", Q);
    assert!(!closed && r.contains("Connection: Keep-Alive"), "{r}");
    // Connection: close honoured; so is Apache's prefix match ("c").
    for req in [
        &b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"[..],
        b"GET / HTTP/1.1\r\nHost: x\r\nConnection: c\r\n\r\n",
    ] {
        let (r, closed) = exchange(addr, req, Q);
        assert!(closed && r.contains("Connection: close\r\n"), "{r}");
    }
    // A header that would split the response: 500 instead (Apache's header filter).
    let (r, closed) = exchange(addr, b"GET /inject HTTP/1.1\r\nHost: x\r\n\r\n", Q);
    assert!(
        closed && statuses(&r) == [500] && !r.contains("Set-Cookie") && r.ends_with("E500:"),
        "{r}"
    );
    // The engine asks to close.
    let (r, closed) = exchange(addr, b"GET /close HTTP/1.1\r\nHost: x\r\n\r\n", Q);
    assert!(closed && r.contains("Connection: close\r\n"), "{r}");
    server.shutdown();
    server.wait().unwrap();
}

#[test]
fn max_keepalive_requests() {
    let mut opts = options();
    opts.max_keepalive_requests = 3;
    let (server, addr) = start(handler(), opts);
    let mut s = TcpStream::connect(addr).unwrap();
    let mut seen = Vec::new();
    for _ in 0..4 {
        s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n")
            .unwrap();
        let (r, _) = read_all(&mut s, Q);
        seen.push(
            r.lines()
                .find(|l| l.starts_with("Keep-Alive") || l.starts_with("Connection: close"))
                .unwrap_or("")
                .to_string(),
        );
    }
    // Apache: max counts down, and the request after the last one closes.
    assert_eq!(
        seen,
        [
            "Keep-Alive: timeout=5, max=3",
            "Keep-Alive: timeout=5, max=2",
            "Keep-Alive: timeout=5, max=1",
            "Connection: close"
        ]
    );
    server.shutdown();
    server.wait().unwrap();
}

#[test]
fn pipelining_in_order() {
    let (server, addr) = start(handler(), options());
    let req = b"GET /a HTTP/1.1\r\nHost: x\r\n\r\nHEAD /b HTTP/1.1\r\nHost: x\r\n\r\nGET /chunked HTTP/1.1\r\nHost: x\r\n\r\nGET /304 HTTP/1.1\r\nHost: x\r\n\r\n";
    let (r, closed) = exchange(addr, req, Q);
    assert!(!closed);
    assert_eq!(statuses(&r), [200, 200, 200, 304], "{r}");
    let parts: Vec<&str> = r.split("HTTP/1.1 ").skip(1).collect();
    assert!(parts[0].ends_with("\r\n\r\nhello world"));
    // HEAD: no body and, as the engine set no Content-Length, none invented.
    assert!(
        parts[1].ends_with("\r\n\r\n") && !parts[1].contains("Content-Length"),
        "{}",
        parts[1]
    );
    // Chunked answer from the engine.
    assert!(parts[2].contains("Transfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n"), "{}", parts[2]);
    // 304: no body and no entity headers.
    assert!(
        parts[3].contains("ETag: \"e\"\r\n\r\n") && !parts[3].contains("Content-"),
        "{}",
        parts[3]
    );
    server.shutdown();
    server.wait().unwrap();
}

#[test]
fn request_bodies() {
    let (server, addr) = start(handler(), options());
    // A chunked upload (with extension and trailer) is discarded, the next request served.
    let req = b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\nT: 1\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n";
    let (r, closed) = exchange(addr, req, Q);
    assert_eq!(statuses(&r), [200, 200], "{r}");
    assert!(!closed);
    // Content-Length body, then the next request.
    let (r, _) = exchange(addr, b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\nHost: x\r\n\r\n", Q);
    assert_eq!(statuses(&r), [200, 200], "{r}");
    // Over LimitRequestBody: 413 without Content-Length (Apache), closed.
    let (r, closed) = exchange(
        addr,
        b"POST /limit10 HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n",
        Q,
    );
    assert!(
        closed && r.starts_with("HTTP/1.1 413 Request Entity Too Large\r\n"),
        "{r}"
    );
    assert!(
        r.contains("Connection: close\r\n") && !r.contains("Content-Length"),
        "{r}"
    );
    let (r, closed) = exchange(addr, b"POST /limit10 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\nhello!\r\n0\r\n\r\n", Q);
    assert!(closed && statuses(&r) == [413], "{r}");
    // A malformed chunk: 400 without Content-Length.
    let (r, closed) = exchange(
        addr,
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        Q,
    );
    assert!(
        closed && statuses(&r) == [400] && !r.contains("Content-Length"),
        "{r}"
    );
    // A bad trailer: 400 with Content-Length.
    let (r, _) = exchange(
        addr,
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nbad\r\n\r\n",
        Q,
    );
    assert!(statuses(&r) == [400] && r.contains("Content-Length"), "{r}");
    // Transfer-Encoding with Content-Length: served, then closed.
    let (r, closed) = exchange(addr, b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", Q);
    assert!(
        closed && statuses(&r) == [200] && r.contains("Connection: close"),
        "{r}"
    );
    // An answer sent before the body is read (AfterResponse): the body is
    // still discarded and the connection goes on.
    let (r, closed) = exchange(addr, b"POST /deny HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\nHost: x\r\n\r\n", Q);
    assert!(!closed && statuses(&r) == [403, 200], "{r}");
    server.shutdown();
    server.wait().unwrap();
}

#[test]
fn expect_100_continue() {
    let (server, addr) = start(handler(), options());
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(b"POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
        .unwrap();
    let (r, _) = read_all(&mut s, Q);
    assert_eq!(r, "HTTP/1.1 100 Continue\r\n\r\n");
    s.write_all(b"hello").unwrap();
    let (r, closed) = read_all(&mut s, Q);
    assert!(!closed && r.starts_with("HTTP/1.1 200 OK\r\n"), "{r}");
    // No body: no 100, and the connection closes (Apache keeps expecting).
    let (r, closed) = exchange(
        addr,
        b"GET / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n\r\n",
        Q,
    );
    assert!(
        closed && statuses(&r) == [200] && r.contains("Connection: close"),
        "{r}"
    );
    // An early answer: no 100, Connection: close.
    let (r, closed) = exchange(
        addr,
        b"POST /deny HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n",
        Q,
    );
    assert!(
        closed && statuses(&r) == [403] && r.contains("Connection: close"),
        "{r}"
    );
    // Over the limit: 413 at once, no 100.
    let (r, closed) = exchange(
        addr,
        b"POST /limit10 HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 50\r\n\r\n",
        Q,
    );
    assert!(closed && statuses(&r) == [413], "{r}");
    // Another expectation: 417, Keep-Alive headers as usual, closed anyway.
    let (r, closed) = exchange(
        addr,
        b"GET / HTTP/1.1\r\nHost: x\r\nExpect: foo\r\nConnection: keep-alive\r\n\r\n",
        Q,
    );
    assert!(
        closed
            && statuses(&r) == [417]
            && r.contains("Connection: Keep-Alive")
            && r.contains("E417:foo"),
        "{r}"
    );
    server.shutdown();
    server.wait().unwrap();
}

#[test]
fn malformed_heads() {
    let h = handler();
    let (server, addr) = start(h.clone(), options());
    let long_line = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(8200));
    let long_field = format!(
        "GET / HTTP/1.1\r\nHost: x\r\nX-Long: {}\r\n\r\n",
        "a".repeat(9000)
    );
    let many: String = (0..101).map(|i| format!("X-{i}: v\r\n")).collect();
    let many = format!("GET / HTTP/1.1\r\nHost: x\r\n{many}\r\n");
    let rows: Vec<(&[u8], u16, &str)> = vec![
        (long_line.as_bytes(), 414, "E414:"),
        (
            long_field.as_bytes(),
            400,
            "E400:Size of a request header field exceeds server limit.",
        ),
        (
            many.as_bytes(),
            400,
            "E400:The number of request header fields exceeds this server's limit.",
        ),
        (b"GET / HTTP/1.1\r\n\r\n", 400, "E400:"),
        (b"GET / HTTP/1.1\r\nHost: x\r\nFoo\r\n\r\n", 400, "E400:"),
        (
            b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            400,
            "E400:",
        ),
        (
            b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
            400,
            "E400:",
        ),
        (b"GET / http/1.1\r\nHost: x\r\n\r\n", 400, "E400:"),
        (b"GET\r\n\r\n", 400, "E400:"),
    ];
    for (req, status, body) in rows {
        let (r, closed) = exchange(addr, req, Q);
        assert!(closed, "{r}");
        assert_eq!(statuses(&r), [status], "{r}");
        assert!(
            r.contains("Connection: close\r\n") && r.ends_with(body),
            "{r}"
        );
    }
    // A refused HEAD request gets no body.
    let (r, _) = exchange(addr, b"HEAD / http/1.1\r\nHost: x\r\n\r\n", Q);
    assert!(
        r.starts_with("HTTP/1.1 400") && r.ends_with("\r\n\r\n"),
        "{r}"
    );
    // HTTP/0.9: the body alone, then close.
    let (r, closed) = exchange(addr, b"GET /\r\n", Q);
    assert!(closed && r == "hello world", "{r}");
    // End of input after the request line: 400; inside it: nothing.
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(statuses(&read_all(&mut s, Q).0), [400]);
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(b"GET / HTT").unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(read_all(&mut s, Q), (String::new(), true));
    server.shutdown();
    server.wait().unwrap();
    let log = h.log.0.lock().unwrap();
    // Refused before the request line was complete: no request to show.
    assert!(log.iter().any(|(s, l)| *s == 414 && l == "-"), "{log:?}");
    // Refused while reading the fields: the request line is known.
    assert!(
        log.iter()
            .filter(|(s, l)| *s == 400 && l == "GET / HTTP/1.1")
            .count()
            >= 4,
        "{log:?}"
    );
    assert!(
        log.iter().any(|(s, l)| *s == 400 && l == "GET / HTTP/1.1"),
        "{log:?}"
    );
}

#[test]
fn timeouts() {
    let mut opts = options();
    opts.timeouts.header = ReqTimeout {
        timeout: Duration::from_secs(1),
        max_timeout: Duration::from_secs(2),
        min_rate: 500,
    };
    opts.timeouts.body = ReqTimeout {
        timeout: Duration::from_secs(1),
        max_timeout: Duration::ZERO,
        min_rate: 500,
    };
    opts.timeouts.keepalive = Duration::from_secs(1);
    let (server, addr) = start(handler(), opts);
    let t = Instant::now();
    let q = Duration::from_secs(4);
    // Head incomplete after the request line: 408.
    let (r, closed) = exchange(addr, b"GET / HTTP/1.1\r\nHost: x\r\n", q);
    assert!(
        closed && statuses(&r) == [408] && r.contains("Connection: close"),
        "{r}"
    );
    // Request line incomplete: closed without an answer.
    assert_eq!(exchange(addr, b"GET / HTT", q), (String::new(), true));
    // Body incomplete: 408.
    let (r, closed) = exchange(
        addr,
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhello",
        q,
    );
    assert!(closed && statuses(&r) == [408], "{r}");
    // Idle keep-alive connection: closed silently after KeepAliveTimeout.
    let (r, closed) = exchange(addr, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", q);
    assert!(closed && statuses(&r) == [200], "{r}");
    let spent = t.elapsed();
    assert!(
        spent >= Duration::from_millis(3900) && spent < Duration::from_secs(8),
        "{spent:?}"
    );
    server.shutdown();
    server.wait().unwrap();
}

#[test]
fn files() {
    let h = handler();
    let (server, addr) = start(h.clone(), options());
    let mut expect = Vec::new();
    std::io::Read::read_to_end(&mut &*h.big, &mut expect).unwrap();
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\nGET /small-file HTTP/1.1\r\nHost: x\r\n\r\nHEAD /big HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut got = Vec::new();
    let want_len = expect.len() + 1000 + 600;
    let mut buf = vec![0u8; 1 << 16];
    while got.len() < want_len {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0);
        got.extend_from_slice(&buf[..n]);
        if got.windows(4).filter(|w| w == b"HTTP").count() >= 3 && got.ends_with(b"\r\n\r\n") {
            break;
        }
    }
    let text = String::from_utf8_lossy(&got);
    let first_end = text.find("\r\n\r\n").unwrap() + 4;
    assert!(text[..first_end].contains("Content-Length: 1048576\r\n"));
    assert_eq!(&got[first_end..first_end + expect.len()], &expect[..]);
    let rest = &got[first_end + expect.len()..];
    let rest_text = String::from_utf8_lossy(rest);
    let second_end = rest_text.find("\r\n\r\n").unwrap() + 4;
    assert!(rest_text[..second_end].contains("Content-Length: 1000\r\n"));
    assert_eq!(&rest[second_end..second_end + 1000], &expect[100..1100]);
    let third = String::from_utf8_lossy(&rest[second_end + 1000..]);
    assert!(
        third.starts_with("HTTP/1.1 200 OK")
            && third.contains("Content-Length: 1048576")
            && third.ends_with("\r\n\r\n"),
        "{third}"
    );
    server.shutdown();
    server.wait().unwrap();
}

#[test]
fn graceful_shutdown() {
    let (server, addr) = start(handler(), options());
    // One idle keep-alive connection, one request in flight.
    let mut idle = TcpStream::connect(addr).unwrap();
    idle.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let (r, _) = read_all(&mut idle, Q);
    assert_eq!(statuses(&r), [200]);
    let mut busy = TcpStream::connect(addr).unwrap();
    busy.write_all(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let t = Instant::now();
    server.shutdown();
    // The request in flight is answered, with Connection: close.
    let (r, closed) = read_all(&mut busy, Duration::from_secs(3));
    assert!(
        closed && statuses(&r) == [200] && r.contains("Connection: close") && r.ends_with("slow\n"),
        "{r}"
    );
    // The idle connection is closed without an answer.
    assert_eq!(
        read_all(&mut idle, Duration::from_secs(3)),
        (String::new(), true)
    );
    server.wait().unwrap();
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    // New connections are refused.
    assert!(TcpStream::connect(addr).is_err());
}

#[test]
fn a_stuck_worker_does_not_stop_the_stop() {
    let (server, addr) = start(handler(), options());
    let mut stuck = TcpStream::connect(addr).unwrap();
    stuck
        .write_all(b"GET /stuck HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let t = Instant::now();
    server.shutdown();
    let e = server.wait().unwrap_err();
    assert!(
        e.to_string().contains("1 worker thread(s) still busy"),
        "{e}"
    );
    // The drain (3 s in `options`) and two seconds more.
    assert!(
        t.elapsed() >= Duration::from_secs(5) && t.elapsed() < Duration::from_secs(7),
        "{:?}",
        t.elapsed()
    );
}

/// Runs `run()` in a child process (the parent test below) and is a no-op otherwise.
#[test]
fn sigterm_child() {
    let Ok(port) = std::env::var("HTACCEL_SERVER_TEST_CHILD_PORT") else {
        return;
    };
    let mut opts = options();
    opts.listen = vec![format!("127.0.0.1:{port}").parse().unwrap()];
    htaccel_server::run(handler(), opts, Box::new(|| Ok(()))).unwrap();
}

#[test]
fn sigterm_stops_gracefully() {
    if std::env::var("HTACCEL_SERVER_TEST_CHILD_PORT").is_ok() {
        return;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "sigterm_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("HTACCEL_SERVER_TEST_CHILD_PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let end = Instant::now() + Duration::from_secs(10);
    let mut busy = loop {
        if let Ok(s) = TcpStream::connect(addr) {
            break s;
        }
        assert!(Instant::now() < end, "child never listened");
        std::thread::sleep(Duration::from_millis(20));
    };
    busy.write_all(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill(2) on the pid of a child this test spawned and has not reaped.
    let rc = unsafe { libc::kill(pid, libc::SIGTERM) };
    assert_eq!(rc, 0);
    let (r, closed) = read_all(&mut busy, Duration::from_secs(3));
    assert!(
        closed && statuses(&r) == [200] && r.contains("Connection: close"),
        "{r}"
    );
    let t = Instant::now();
    let code = loop {
        if let Some(c) = child.try_wait().unwrap() {
            break c;
        }
        assert!(t.elapsed() < Duration::from_secs(5), "child did not exit");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(code.success(), "{code:?}");
}
