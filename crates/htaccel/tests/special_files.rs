//! Files read on the request path outside the caches (a `RewriteMap`, a
//! password file) that are FIFOs must not hold a worker thread: every
//! other request keeps being answered, and SIGTERM stops the server.
//!
//! Apache cannot be asked here: it opens such a file blocking, so the
//! requests that use it wait for a writer for ever (only those requests,
//! since each has its own thread). The answers Apache gives where it does
//! answer (a map or password file that is a directory or `/dev/null`) are
//! compared by the differential cases `security/special-file-*`.

mod common;

use common::{Server, TempDir};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn mkfifo(path: &std::path::Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// Send `GET path` with credentials (user `u`, password `p`) and leave
/// the connection open, unread.
fn send(port: u16, path: &str) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Basic dTpw\r\nConnection: close\r\n\r\n"
    );
    s.write_all(request.as_bytes()).unwrap();
    s
}

/// The status of the answer on `s`, waiting at most `limit`.
fn status_within(mut s: TcpStream, limit: Duration) -> Option<u16> {
    s.set_read_timeout(Some(limit)).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).ok()?;
    String::from_utf8_lossy(&raw)
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
}

fn config(root: &std::path::Path, fifo: &std::path::Path) -> String {
    format!(
        "LoadModule authz_core_module modules/mod_authz_core.so\n\
         LoadModule mime_module modules/mod_mime.so\n\
         LoadModule rewrite_module modules/mod_rewrite.so\n\
         LoadModule auth_basic_module modules/mod_auth_basic.so\n\
         LoadModule authn_file_module modules/mod_authn_file.so\n\
         LoadModule authn_core_module modules/mod_authn_core.so\n\
         LoadModule authz_user_module modules/mod_authz_user.so\n\
         Listen 127.0.0.1:@PORT@\nServerName localhost\nErrorLog /dev/stderr\nTypesConfig /etc/mime.types\n\
         DocumentRoot \"{root}\"\n\
         <Directory \"{root}\">\n  AllowOverride All\n  Require all granted\n</Directory>\n\
         RewriteMap fifo \"txt:{fifo}\"\n\
         <Location /private>\n  AuthType Basic\n  AuthName x\n  AuthUserFile \"{fifo}\"\n  Require valid-user\n</Location>\n",
        root = root.display(),
        fifo = fifo.display(),
    )
}

#[test]
fn a_fifo_map_or_password_file_blocks_nothing_and_sigterm_stops_the_server() {
    let site = TempDir::new("fifo");
    let logs = TempDir::new("fifo-logs");
    site.write("a.txt", "A\n");
    site.write("miss.txt", "miss\n");
    site.write("private/p.txt", "P\n");
    // `${…}` in the main configuration is a `Define`d variable: the rule
    // lives in the access file.
    site.write(
        ".htaccess",
        "RewriteEngine On\nRewriteRule ^map/(.*) ${fifo:$1|miss}.txt\n",
    );
    let fifo = logs.path().join("map.fifo");
    mkfifo(&fifo);
    let mut s = Server::with_config(&config(site.path(), &fifo), logs.path());

    // More map and password-file users than the machine has cores (one
    // worker thread per core), all pending at once.
    let pending: Vec<_> = (0..8)
        .map(|i| {
            let path = if i % 2 == 0 {
                format!("/map/k{i}")
            } else {
                "/private/p.txt".to_string()
            };
            (path.clone(), send(s.port, &path))
        })
        .collect();
    // Every other request is still answered, at once.
    let started = Instant::now();
    for _ in 0..5 {
        assert_eq!(s.get("/a.txt"), (200, "A\n".to_string()));
    }
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "ordinary requests were held up: {:?}",
        started.elapsed()
    );
    // The map and password-file users are answered too, without waiting
    // for a writer (Apache waits for one for ever): the map misses, the
    // password file is refused as not a regular file (500).
    for (path, conn) in pending {
        let status = status_within(conn, Duration::from_secs(5));
        let expected = if path.starts_with("/map/") { 200 } else { 500 };
        assert_eq!(status, Some(expected), "{path}\n{}", s.error_log());
    }
    assert!(
        s.error_log().contains("not a regular file"),
        "{}",
        s.error_log()
    );

    // A FIFO in the document root is refused at once (403, "doesn't point
    // to a file or directory"); Apache opens it and waits for a writer.
    mkfifo(&site.path().join("pipe"));
    let started = Instant::now();
    assert_eq!(s.get("/pipe").0, 403);
    assert!(started.elapsed() < Duration::from_secs(5));

    // SIGTERM stops the server (before the fix it could not: the worker
    // threads were stuck in open(2) on the FIFO).
    let _held = send(s.port, "/map/held");
    std::thread::sleep(Duration::from_millis(200));
    // SAFETY: kill(2) on the pid of the child this test started.
    assert_eq!(unsafe { libc::kill(s.pid() as i32, libc::SIGTERM) }, 0);
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(status) = s.child.try_wait().unwrap() {
            assert!(status.success(), "exit status {status}\n{}", s.error_log());
            break;
        }
        assert!(
            Instant::now() < deadline,
            "htaccel still running 15 s after SIGTERM\n{}",
            s.error_log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
