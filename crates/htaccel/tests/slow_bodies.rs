//! Chunked request bodies that clients send in bulk and then never finish
//! must not pile up in the server's memory: they stream on to the backend
//! (PHP-FPM over FastCGI, an HTTP upstream) as they arrive, as Apache's
//! mod_proxy streams them, or where they must go with their length
//! (`proxy-sendcl`) they are spooled to a temporary file; either way a
//! connection holds at most one prefetch (16 KiB) of its body in memory,
//! however much the client sends and however long it takes.
//!
//! Why not a differential case: what is measured is the server's resident
//! memory while bodies are half sent, which Apache cannot be asked about
//! through a client (the cases php/chunked-body and proxy/chunked-body
//! check that the backend sees what Apache's backend sees).

mod common;

use common::{Server, TempDir};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Clients per kind (upstream, FastCGI, spooled for the upstream).
const CLIENTS: usize = 20;
/// What each client sends of its body before it stalls.
const SENT: usize = 4 << 20;
/// The most the server's resident memory may grow while all of these
/// bodies are held: one prefetch and a few buffers per connection, far
/// below the 240 MiB that the 60 bodies would take if kept.
const GROWTH_MAX_KIB: u64 = 24 << 10;

/// A backend that reads everything sent to it and never answers; returns
/// its port and the bytes it received.
fn sink() -> (u16, Arc<AtomicU64>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let received = Arc::new(AtomicU64::new(0));
    let total = received.clone();
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            let total = total.clone();
            std::thread::spawn(move || {
                let mut buf = vec![0; 64 << 10];
                while let Ok(n) = s.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    total.fetch_add(n as u64, Ordering::Relaxed);
                }
            });
        }
    });
    (port, received)
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/PID/status")
}

/// Connect, send a request head and `SENT` bytes of chunked body, and
/// keep the connection (the body never ends).
fn stalled_client(port: u16, path: &str) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    .unwrap();
    let chunk = vec![b'x'; 64 << 10];
    for _ in 0..SENT / chunk.len() {
        write!(s, "{:x}\r\n", chunk.len()).unwrap();
        s.write_all(&chunk).unwrap();
        s.write_all(b"\r\n").unwrap();
    }
    s
}

#[test]
fn stalled_chunked_bodies_stream_to_the_backend_instead_of_piling_up() {
    let (http_port, http_seen) = sink();
    let (fcgi_port, fcgi_seen) = sink();
    let dir = TempDir::new("slow-bodies");
    let conf = format!(
        "LoadModule authz_core_module modules/mod_authz_core.so\n\
         LoadModule mime_module modules/mod_mime.so\n\
         LoadModule env_module modules/mod_env.so\n\
         LoadModule proxy_module modules/mod_proxy.so\n\
         LoadModule proxy_http_module modules/mod_proxy_http.so\n\
         LoadModule proxy_fcgi_module modules/mod_proxy_fcgi.so\n\
         Listen 127.0.0.1:@PORT@\nServerName localhost\nErrorLog /dev/stderr\n\
         TypesConfig /etc/mime.types\nTimeout 30\nDocumentRoot {}\n\
         ProxyPass /up/ http://127.0.0.1:{http_port}/\n\
         ProxyPass /php/ fcgi://127.0.0.1:{fcgi_port}/\n\
         ProxyPass /spool/ http://127.0.0.1:{http_port}/\n\
         <Location /spool/>\nSetEnv proxy-sendcl 1\n</Location>\n",
        dir.path().display()
    );
    let server = Server::with_config(&conf, dir.path());
    let _ = server.get("/warm-up");
    let before = rss_kib(server.pid());
    let started = Instant::now();
    let port = server.port;
    let clients: Vec<_> = (0..3 * CLIENTS)
        .map(|i| {
            let path = ["/up/x", "/php/x.php", "/spool/x"][i % 3];
            std::thread::spawn(move || stalled_client(port, path))
        })
        .collect();
    let held: Vec<TcpStream> = clients
        .into_iter()
        .map(|c| c.join().expect("client"))
        .collect();
    // Everything was sent; the server's share of it is what it keeps (the
    // spooled bodies are on disk, and reach the upstream only whole).
    let want = (CLIENTS * (SENT - (64 << 10))) as u64;
    let deadline = Instant::now() + Duration::from_secs(10);
    while (http_seen.load(Ordering::Relaxed) < want || fcgi_seen.load(Ordering::Relaxed) < want)
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut peak = 0;
    for _ in 0..10 {
        peak = peak.max(rss_kib(server.pid()));
        std::thread::sleep(Duration::from_millis(50));
    }
    let growth = peak.saturating_sub(before);
    // Meanwhile the server answers others at once.
    let asked = Instant::now();
    assert_eq!(server.get("/not-here").0, 404);
    assert!(
        asked.elapsed() < Duration::from_secs(2),
        "a plain request waited"
    );
    eprintln!(
        "{} clients, {} MiB each: RSS {before} KiB before, peak {peak} KiB (+{growth} KiB); \
         upstream got {} MiB, FastCGI {} MiB, in {:?}",
        3 * CLIENTS,
        SENT >> 20,
        http_seen.load(Ordering::Relaxed) >> 20,
        fcgi_seen.load(Ordering::Relaxed) >> 20,
        started.elapsed()
    );
    assert!(
        growth < GROWTH_MAX_KIB,
        "the server's memory grew by {growth} KiB while {} bodies were held (bound {GROWTH_MAX_KIB} KiB)",
        held.len()
    );
    // Streamed: the backends have (nearly) all of it already.
    assert!(
        http_seen.load(Ordering::Relaxed) >= want,
        "the HTTP upstream got {} bytes of {want}",
        http_seen.load(Ordering::Relaxed)
    );
    assert!(
        fcgi_seen.load(Ordering::Relaxed) >= want,
        "PHP-FPM's side got {} bytes of {want}",
        fcgi_seen.load(Ordering::Relaxed)
    );
    drop(held);
}
