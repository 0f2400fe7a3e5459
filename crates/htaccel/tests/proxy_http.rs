//! Reverse proxying against scripted upstreams (plain sockets in threads):
//! connections to the upstream are kept alive and reused; an upstream that
//! is not there answers 503, one that breaks off 502, one that does not
//! answer within `Timeout` 502 too (mod_proxy_http's answer when no status
//! line comes) — each in bounded time, and the server goes on serving.

mod common;

use common::{get, Server, TempDir};
use std::io::{BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How a scripted upstream behaves.
#[derive(Clone, Copy)]
enum Upstream {
    /// Answers every request of a connection with a 200.
    KeepAlive,
    /// Closes each connection as soon as the request head is read.
    Hangup,
    /// Reads the request and never answers.
    Silent,
    /// A `101` to a request with `Upgrade: websocket`, then an echo of
    /// each line; an ordinary 200 to any other request.
    WebSocket,
}

/// Starts an upstream; returns its port and the count of connections.
fn upstream(kind: Upstream) -> (u16, Arc<AtomicUsize>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let conns = Arc::new(AtomicUsize::new(0));
    let count = conns.clone();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            count.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || serve(s, kind));
        }
    });
    (port, conns)
}

fn serve(s: TcpStream, kind: Upstream) {
    if let Upstream::WebSocket = kind {
        return serve_websocket(s);
    }
    let mut r = BufReader::new(s.try_clone().unwrap());
    let mut w = s;
    while let Some(target) = common::read_request_target(&mut r) {
        match kind {
            Upstream::Hangup => return,
            Upstream::Silent => {
                let _ = r.read(&mut [0; 16]);
                return;
            }
            Upstream::WebSocket => unreachable!("served above"),
            Upstream::KeepAlive => {
                let body = format!("upstream saw {target}\n");
                let _ = write!(
                    w,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
            }
        }
    }
}

fn config(port_ok: u16, port_hangup: u16, port_silent: u16, port_down: u16) -> String {
    format!(
        "LoadModule authz_core_module modules/mod_authz_core.so\n\
         LoadModule mime_module modules/mod_mime.so\n\
         LoadModule proxy_module modules/mod_proxy.so\n\
         LoadModule proxy_http_module modules/mod_proxy_http.so\n\
         Listen 127.0.0.1:@PORT@\nServerName localhost\nErrorLog /dev/stderr\n\
         TypesConfig /etc/mime.types\nTimeout 2\nDocumentRoot /nonexistent\n\
         ProxyPass /ok/ http://127.0.0.1:{port_ok}/\n\
         ProxyPass /hangup/ http://127.0.0.1:{port_hangup}/\n\
         ProxyPass /silent/ http://127.0.0.1:{port_silent}/\n\
         ProxyPass /down/ http://127.0.0.1:{port_down}/\n"
    )
}

#[test]
fn upstream_connections_are_reused_and_failures_answer_in_time() {
    let (ok, conns) = upstream(Upstream::KeepAlive);
    let (hangup, _) = upstream(Upstream::Hangup);
    let (silent, _) = upstream(Upstream::Silent);
    // A port nobody listens on.
    let down = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let logs = TempDir::new("proxy-logs");
    let s = Server::with_config(&config(ok, hangup, silent, down), logs.path());

    for i in 0..5 {
        let (status, body) = s.get(&format!("/ok/item/{i}?q=1"));
        assert_eq!(status, 200);
        assert_eq!(body, format!("upstream saw /item/{i}?q=1\n"));
    }
    // One worker thread or several: far fewer connections than requests.
    let opened = conns.load(Ordering::SeqCst);
    assert!(opened < 5, "{opened} upstream connections for 5 requests");

    let t = Instant::now();
    assert_eq!(get(s.port, "/down/x").0, 503);
    assert_eq!(get(s.port, "/hangup/x").0, 502);
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    // A status line that does not come within Timeout: mod_proxy_http's
    // 502 (the difftest case proxy/timeouts compares it with Apache's).
    let t = Instant::now();
    assert_eq!(get(s.port, "/silent/x").0, 502);
    let waited = t.elapsed();
    assert!(
        waited >= Duration::from_millis(1900) && waited < Duration::from_secs(6),
        "502 after {waited:?}"
    );
    // Still serving, and the error log says why.
    assert_eq!(s.get("/ok/again").0, 200);
    let log = s.error_log();
    assert!(
        log.contains("AH01079") || log.contains("failed to make connection"),
        "{log}"
    );
    assert!(log.contains("AH01102"), "{log}");
}

/// A real upstream process: Python's `http.server` on `port`, serving `dir`.
fn python_upstream(port: u16, dir: &std::path::Path) -> std::process::Child {
    let child = std::process::Command::new("python3")
        .args([
            "-m",
            "http.server",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
        ])
        .arg("--directory")
        .arg(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("python3 (Debian's python3) runs the upstream");
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "upstream did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

#[test]
fn killing_the_upstream_under_load_gives_502_or_503_and_service_resumes() {
    let files = TempDir::new("proxy-files");
    files.write("item.txt", "from upstream\n");
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut app = python_upstream(port, files.path());
    let logs = TempDir::new("proxy-kill-logs");
    let s = Server::with_config(&config(port, port, port, port), logs.path());
    assert_eq!(s.get("/ok/item.txt"), (200, "from upstream\n".to_string()));

    // Load on several connections, then kill the upstream in the middle.
    let seen = common::under_load(s.port, "/ok/item.txt", 4, || {
        std::thread::sleep(Duration::from_millis(500));
        app.kill().unwrap();
        app.wait().unwrap();
        std::thread::sleep(Duration::from_millis(500));
    });
    assert!(seen.contains(&200), "{seen:?}");
    assert!(
        seen.iter().any(|s| *s == 502 || *s == 503),
        "no failure seen: {seen:?}"
    );
    assert!(seen.iter().all(|s| [200, 502, 503].contains(s)), "{seen:?}");
    assert_eq!(s.get("/ok/item.txt").0, 503, "the upstream is gone");

    // Back on the same port: the next request is served again.
    let mut app = python_upstream(port, files.path());
    assert_eq!(s.get("/ok/item.txt"), (200, "from upstream\n".to_string()));
    app.kill().unwrap();
    let _ = app.wait();
}

fn serve_websocket(s: TcpStream) {
    use std::io::BufRead;
    let mut r = BufReader::new(s.try_clone().unwrap());
    let mut w = s;
    let mut upgrade = false;
    let mut line = String::new();
    loop {
        line.clear();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        upgrade |= line.eq_ignore_ascii_case("upgrade: websocket\r\n");
        if line == "\r\n" {
            break;
        }
    }
    if !upgrade {
        let _ = w
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nplain\n");
        return;
    }
    let _ = w.write_all(
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
    );
    loop {
        line.clear();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let _ = write!(w, "echo: {line}");
    }
}

/// A server proxying `/ws/` (a `ws://` URL) and `/app/` to the WebSocket
/// upstream on `port`.
fn websocket_server(port: u16, logs: &std::path::Path) -> Server {
    let conf = format!(
        "LoadModule authz_core_module modules/mod_authz_core.so\n\
         LoadModule mime_module modules/mod_mime.so\n\
         LoadModule proxy_module modules/mod_proxy.so\n\
         LoadModule proxy_http_module modules/mod_proxy_http.so\n\
         Listen 127.0.0.1:@PORT@\nServerName localhost\nErrorLog /dev/stderr\n\
         TypesConfig /etc/mime.types\nTimeout 20\nDocumentRoot /nonexistent\n\
         ProxyPass /ws/ ws://127.0.0.1:{port}/ws/\n\
         ProxyPass /app/ http://127.0.0.1:{port}/app/ connectiontimeout=2\n"
    );
    Server::with_config(&conf, logs)
}

/// Open a WebSocket through `s` to `path`, the `101` read.
fn open_websocket(s: &Server, path: &str) -> TcpStream {
    let mut c = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        c,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
    )
    .unwrap();
    let head = read_until(&mut c, "\r\n\r\n");
    assert!(head.starts_with("HTTP/1.1 101 "), "{path}: {head}");
    c
}

/// Read from `s` until `end` has come (or the connection ends).
fn read_until(s: &mut TcpStream, end: &str) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&got).contains(end) {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// WebSockets are tunnels that may stay open for hours: more of them than
/// an upstream's bound of exchanges (64) stay open at once, each still
/// carrying its bytes, and ordinary requests to the same upstream are
/// answered meanwhile. (Apache's limit here is its worker threads; the
/// difftest cases proxy/websocket* compare the tunnel itself with Apache.)
#[test]
fn open_websockets_do_not_starve_the_upstreams_other_requests() {
    let (port, _) = upstream(Upstream::WebSocket);
    let logs = TempDir::new("proxy-ws-logs");
    let s = websocket_server(port, logs.path());
    let sockets: Vec<TcpStream> = (0..80)
        .map(|i| open_websocket(&s, &format!("/ws/{i}")))
        .collect();
    let mut sockets = sockets;
    for (i, c) in sockets.iter_mut().enumerate() {
        writeln!(c, "hello {i}").unwrap();
        let echo = read_until(c, "\n");
        assert_eq!(echo, format!("echo: hello {i}\n"));
    }
    let t = Instant::now();
    let (status, body) = s.get("/app/x");
    assert_eq!((status, body.as_str()), (200, "plain\n"));
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    drop(sockets);
    assert_eq!(s.get("/app/y").0, 200);
}

/// A graceful reload (SIGUSR1, as `apache2ctl graceful` and logrotate send
/// it) leaves an open WebSocket alone: the tunnel keeps carrying bytes on
/// the configuration it started with while new connections are served.
/// (Apache's graceful restart lets old children finish likewise; which
/// child a connection reaches cannot be compared, so this is checked here.)
#[test]
fn an_open_websocket_outlives_a_graceful_reload() {
    let (port, _) = upstream(Upstream::WebSocket);
    let logs = TempDir::new("proxy-ws-reload");
    let s = websocket_server(port, logs.path());
    let mut c = open_websocket(&s, "/ws/chat");
    writeln!(c, "before").unwrap();
    assert_eq!(read_until(&mut c, "\n"), "echo: before\n");
    // SAFETY: a signal to the server this test started.
    assert_eq!(unsafe { libc::kill(s.pid() as i32, libc::SIGUSR1) }, 0);
    let t = Instant::now();
    while !s.error_log().contains("AH00493") {
        assert!(t.elapsed() < Duration::from_secs(10), "{}", s.error_log());
        std::thread::sleep(Duration::from_millis(50));
    }
    for i in 0..5 {
        assert_eq!(s.get(&format!("/app/{i}")).0, 200);
    }
    writeln!(c, "after").unwrap();
    assert_eq!(read_until(&mut c, "\n"), "echo: after\n");
}
