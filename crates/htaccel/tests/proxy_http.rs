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
    let mut r = BufReader::new(s.try_clone().unwrap());
    let mut w = s;
    while let Some(target) = common::read_request_target(&mut r) {
        match kind {
            Upstream::Hangup => return,
            Upstream::Silent => {
                let _ = r.read(&mut [0; 16]);
                return;
            }
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
