//! `%{NAME}o` in the access log for the fields the protocol layer adds to
//! an answer (Apache's `ap_set_keepalive` and HTTP header filter put them
//! in `r->headers_out`, where mod_log_config reads them): `Connection`
//! (`close`, `Keep-Alive` merged into a handler's own), `Keep-Alive`,
//! `Transfer-Encoding`, `Content-Length`; and `%{force-response-1.0}e`,
//! which `force-no-vary` sets as the HTTP header filter runs. Compared with Debian's apache2 on
//! the same configuration (the differential harness compares what a
//! client sees, not log files).

mod common;

use common::TempDir;
use std::io::{Read, Write};
use std::path::Path;

fn conf(r: &Path, port: u16) -> String {
    let head = common::server_head(r, port, "localhost", &["headers", "autoindex", "setenvif"]);
    let r = r.display();
    format!(
        "{head}ErrorLog {r}/error.log\n\
         KeepAlive On\nMaxKeepAliveRequests 3\nKeepAliveTimeout 5\n\
         LogFormat \"%>s %U [%{{Connection}}o] [%{{Keep-Alive}}o] [%{{Transfer-Encoding}}o] [%{{Content-Length}}o] [%{{force-response-1.0}}e]\" fields\n\
         CustomLog {r}/fields.log fields\n\
         DocumentRoot {r}/site\n<Directory {r}/site>\n  Require all granted\n  Options +Indexes\n</Directory>\n\
         <Location /own>\n  Header set Connection \"x-mine\"\n</Location>\n\
         BrowserMatch ^novary force-no-vary\n"
    )
}

/// Send `requests` on one connection and read until the server closes it.
fn exchange(port: u16, requests: &str) {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    s.write_all(requests.as_bytes()).unwrap();
    let _ = s.read_to_end(&mut Vec::new());
}

fn logged(program: &str, extra: &[&str]) -> String {
    let root = TempDir::new("fieldslog");
    root.write("site/index.html", "hi\n");
    root.write("site/dir/a.txt", "a\n");
    root.write("site/own/x.txt", "x\n");
    // A listing too long to be measured before it is sent: chunked.
    for i in 0..400 {
        root.write(&format!("site/big/file-with-a-long-name-{i:04}.txt"), "");
    }
    let port = common::free_port();
    root.write("server.conf", &conf(root.path(), port));
    let child = common::start_program(program, &root.path().join("server.conf"), extra, port);
    let get =
        |path: &str, extra: &str| format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n{extra}\r\n");
    // Kept alive until MaxKeepAliveRequests, then closed; a listing
    // (chunked), a 404, a handler's own Connection field.
    exchange(
        port,
        &[
            get("/index.html", ""),
            get("/dir/", ""),
            get("/missing", ""),
            get("/own/x.txt", ""),
        ]
        .concat(),
    );
    exchange(port, &get("/index.html", "Connection: close\r\n"));
    exchange(
        port,
        &[get("/big/", ""), get("/big/", "Connection: close\r\n")].concat(),
    );
    exchange(port, &get("/own/x.txt", "Connection: close\r\n"));
    // HTTP/1.0: keep-alive only when asked for.
    exchange(
        port,
        "GET /index.html HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /dir/ HTTP/1.0\r\n\r\n",
    );
    exchange(port, "HEAD /index.html HTTP/1.0\r\n\r\n");
    // force-no-vary notes force-response-1.0 where the log sees it.
    exchange(port, &get("/index.html", "User-Agent: novary\r\n"));
    common::stop_program(child);
    std::fs::read_to_string(root.path().join("fields.log")).unwrap_or_default()
}

#[test]
fn fields_the_protocol_adds_are_logged_as_in_apache() {
    let apache = logged("/usr/sbin/apache2", &["-DFOREGROUND"]);
    let ours = logged(env!("CARGO_BIN_EXE_htaccel"), &[]);
    assert_eq!(ours, apache);
    assert!(apache.contains("[close]"), "{apache}");
    assert!(apache.contains("[timeout=5"), "{apache}");
    assert!(apache.contains("[chunked]"), "{apache}");
    assert!(apache.contains("[1]"), "{apache}");
}
