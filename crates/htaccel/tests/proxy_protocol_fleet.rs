//! A small fleet behind a real load balancer: HAProxy (Debian's `haproxy`)
//! on loopback in front of two htaccel instances, speaking the PROXY
//! protocol v2 to them (`send-proxy-v2`, health checks included, which
//! HAProxy sends as `LOCAL` headers). Checked: both backends are healthy
//! and share the requests; each sees the real client's address (for
//! `REMOTE_ADDR`, `Require ip` and its access log) rather than HAProxy's;
//! both serve one shared document root without inotify (`AccessFileWatch
//! Off`, as on NFS), where an `.htaccess` edited by one host is in force
//! on both within `AccessFileCheckInterval`; and a rolling graceful reload
//! (`SIGUSR1`) of both backends under load loses no request.

mod common;

use common::{Server, TempDir};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The client address the requests come from (HAProxy itself talks to
/// the backends from 127.0.0.1).
const CLIENT: [u8; 4] = [127, 0, 0, 5];

fn backend_conf(root: &std::path::Path, shared: &std::path::Path, name: &str) -> String {
    let r = root.display();
    let s = shared.display();
    format!(
        "ServerRoot {r}\n\
         LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so\n\
         LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so\n\
         LoadModule authz_host_module /usr/lib/apache2/modules/mod_authz_host.so\n\
         LoadModule headers_module /usr/lib/apache2/modules/mod_headers.so\n\
         LoadModule mime_module /usr/lib/apache2/modules/mod_mime.so\n\
         LoadModule remoteip_module /usr/lib/apache2/modules/mod_remoteip.so\n\
         TypesConfig /etc/mime.types\nListen 127.0.0.1:@PORT@\nServerName {name}\n\
         ErrorLog {r}/error.log\n\
         LogFormat \"%a %{{c}}a %>s %U\" pp\nCustomLog {r}/access.log pp\n\
         RemoteIPProxyProtocol On\n\
         Header always set X-Backend {name}\n\
         Header always set X-Client \"expr=%{{REMOTE_ADDR}}\"\n\
         AccessFileWatch Off\nAccessFileCheckInterval 1\n\
         DocumentRoot {s}\n\
         <Directory {s}>\n  Require all granted\n  AllowOverride All\n</Directory>\n"
    )
}

struct Backend {
    root: TempDir,
    server: Server,
}

/// The document root both backends serve.
fn shared_site() -> TempDir {
    let site = TempDir::new("fleet-shared");
    site.write("index.html", "shared\n");
    site.write("health", "ok\n");
    site.write("only-client/.htaccess", "Require ip 127.0.0.5\n");
    site.write("only-client/f.txt", "client\n");
    site.write("gate/f.txt", "open\n");
    site
}

fn backend(name: &str, shared: &std::path::Path) -> Backend {
    let root = TempDir::new(&format!("fleet-{name}"));
    let conf = backend_conf(root.path(), shared, name);
    let server = Server::with_config(&conf, root.path());
    Backend { root, server }
}

struct Haproxy(Child);

impl Drop for Haproxy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn haproxy(dir: &std::path::Path, port: u16, backends: &[u16]) -> Haproxy {
    let servers: String = backends
        .iter()
        .enumerate()
        .map(|(i, p)| {
            format!("    server b{i} 127.0.0.1:{p} send-proxy-v2 check inter 100 fall 2 rise 1\n")
        })
        .collect();
    let conf = format!(
        "global\n    maxconn 512\n\
         defaults\n    mode http\n    timeout connect 2s\n    timeout client 10s\n    timeout server 10s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n    default_backend be\n\
         backend be\n    balance roundrobin\n    option httpchk GET /health\n{servers}"
    );
    let file = dir.join("haproxy.cfg");
    std::fs::write(&file, conf).unwrap();
    let child = Command::new("haproxy")
        .arg("-db")
        .arg("-f")
        .arg(&file)
        .stdout(Stdio::null())
        .stderr(Stdio::from(
            std::fs::File::create(dir.join("haproxy.log")).unwrap(),
        ))
        .spawn()
        .expect("haproxy (Debian package `haproxy`) must be installed");
    Haproxy(child)
}

/// One GET through HAProxy from [`CLIENT`]: status and headers, or `None`
/// when the exchange failed.
fn get_from_client(port: u16, path: &str) -> Option<(u16, String)> {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).ok()?;
    socket.bind(&SocketAddr::from((CLIENT, 0)).into()).ok()?;
    socket
        .connect_timeout(
            &SocketAddr::from(([127, 0, 0, 1], port)).into(),
            Duration::from_secs(5),
        )
        .ok()?;
    let mut s: TcpStream = socket.into();
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    s.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: fleet\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .ok()?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).ok()?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text.split(' ').nth(1)?.parse().ok()?;
    let head = text.split_once("\r\n\r\n")?.0.to_string();
    Some((status, head))
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

#[test]
fn haproxy_balances_two_backends_that_see_the_real_client() {
    let shared = shared_site();
    let b1 = backend("b1", shared.path());
    let b2 = backend("b2", shared.path());
    let dir = TempDir::new("fleet-haproxy");
    let port = common::free_port();
    let _lb = haproxy(dir.path(), port, &[b1.server.port, b2.server.port]);

    // Until both backends passed their health checks (PROXY v2 `LOCAL`).
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let seen: Vec<String> = (0..4)
            .filter_map(|_| get_from_client(port, "/index.html"))
            .filter_map(|(_, h)| header(&h, "X-Backend").map(str::to_string))
            .collect();
        if seen.iter().any(|b| b == "b1") && seen.iter().any(|b| b == "b2") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "both backends never answered through HAProxy: {}",
            std::fs::read_to_string(dir.path().join("haproxy.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // Balanced, and the client is the real one.
    let mut per_backend = [0usize; 2];
    for _ in 0..40 {
        let (status, head) =
            get_from_client(port, "/index.html").expect("a request through HAProxy");
        assert_eq!(status, 200, "{head}");
        assert_eq!(header(&head, "X-Client"), Some("127.0.0.5"), "{head}");
        match header(&head, "X-Backend") {
            Some("b1") => per_backend[0] += 1,
            Some("b2") => per_backend[1] += 1,
            other => panic!("no backend named: {other:?}"),
        }
    }
    assert!(
        per_backend.iter().all(|&n| n >= 15),
        "round robin over two healthy backends: {per_backend:?}"
    );
    // `Require ip` sees the client too.
    let (status, _) = get_from_client(port, "/only-client/f.txt").unwrap();
    assert_eq!(status, 200);
    let (status, _) = common::get(port, "/only-client/f.txt");
    assert_eq!(status, 403, "a client at 127.0.0.1 is not 127.0.0.5");
    // The access log: the client, then the connection's peer (HAProxy).
    let log = std::fs::read_to_string(b1.root.path().join("access.log")).unwrap();
    assert!(
        log.contains("127.0.0.5 127.0.0.1 200 /index.html\n"),
        "{log}"
    );
    assert!(
        log.contains("127.0.0.1 127.0.0.1 403 /only-client/f.txt\n") || {
            let log2 = std::fs::read_to_string(b2.root.path().join("access.log")).unwrap();
            log2.contains("127.0.0.1 127.0.0.1 403 /only-client/f.txt\n")
        }
    );

    // An edit of the shared tree, made beside the servers (as another
    // host of the fleet would): in force on both within the interval.
    let through_both = |path: &str| -> Vec<(String, u16)> {
        let mut seen = Vec::new();
        for _ in 0..8 {
            if let Some((status, head)) = get_from_client(port, path) {
                seen.push((
                    header(&head, "X-Backend").unwrap_or("?").to_string(),
                    status,
                ));
            }
        }
        seen
    };
    assert!(through_both("/gate/f.txt").iter().all(|(_, s)| *s == 200));
    shared.write("gate/.htaccess", "Require all denied\n");
    let edited = Instant::now();
    let deadline = edited + Duration::from_secs(5);
    loop {
        let seen = through_both("/gate/f.txt");
        let denied_by = |b: &str| seen.iter().any(|(n, s)| n == b && *s == 403);
        if denied_by("b1") && denied_by("b2") && seen.iter().all(|(_, s)| *s == 403) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the edit is not in force on both backends: {seen:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!(
        "the shared edit was in force on both backends after {:?} (AccessFileCheckInterval 1)",
        edited.elapsed()
    );

    // A rolling graceful reload of both backends under load: not one
    // request lost.
    let stop = Arc::new(AtomicBool::new(false));
    let (ok, failed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let load: Vec<_> = (0..4)
        .map(|_| {
            let (stop, ok, failed) = (stop.clone(), ok.clone(), failed.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match get_from_client(port, "/index.html") {
                        Some((200, head)) if header(&head, "X-Client") == Some("127.0.0.5") => {
                            ok.fetch_add(1, Ordering::Relaxed)
                        }
                        _ => failed.fetch_add(1, Ordering::Relaxed),
                    };
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    for _ in 0..3 {
        for b in [&b1, &b2] {
            // SAFETY: kill(2) on the pid of a child this test started.
            assert_eq!(
                unsafe { libc::kill(b.server.pid() as i32, libc::SIGUSR1) },
                0
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }
    stop.store(true, Ordering::Relaxed);
    for l in load {
        l.join().expect("load thread");
    }
    let (ok, failed) = (ok.load(Ordering::Relaxed), failed.load(Ordering::Relaxed));
    eprintln!(
        "under three rolling graceful reloads of b1 and b2: {ok} requests answered, {failed} failed"
    );
    assert_eq!(failed, 0, "{ok} answered");
    assert!(ok > 50, "the load loop ran: {ok}");
    for b in [&b1, &b2] {
        let errors = std::fs::read_to_string(b.root.path().join("error.log")).unwrap_or_default();
        assert_eq!(
            errors.matches("AH00493: SIGUSR1 received").count(),
            3,
            "{errors}"
        );
    }
}
