//! mod_logio's `%O` in the access log: the bytes sent for the answer,
//! status line and headers included. Apache's own figure differs from
//! htaccel's by the length of the `Server` header and the error pages'
//! text, so the differential harness cannot compare the numbers; the
//! definition can be checked directly: `%O` equals the bytes the client
//! received for that request.

mod common;

use common::{Server, TempDir};
use std::io::{Read, Write};
use std::net::TcpStream;

fn raw(port: u16, method: &str, path: &str) -> usize {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut got = Vec::new();
    s.read_to_end(&mut got).unwrap();
    got.len()
}

#[test]
fn percent_o_is_what_the_client_received() {
    let site = TempDir::new("logio-site");
    let logs = TempDir::new("logio-logs");
    site.write("small.txt", "hello\n");
    site.write("big.txt", &"x".repeat(300_000));
    let conf = format!(
        "LoadModule authz_core_module modules/mod_authz_core.so\n\
         LoadModule mime_module modules/mod_mime.so\nTypesConfig /etc/mime.types\n\
         Listen 127.0.0.1:@PORT@\nServerName localhost\nErrorLog /dev/stderr\n\
         LogFormat \"%r|%O\" bytes\nCustomLog {logs}/access.log bytes\n\
         DocumentRoot \"{root}\"\n<Directory \"{root}\">\n  Require all granted\n</Directory>\n",
        root = site.path().display(),
        logs = logs.path().display(),
    );
    let s = Server::with_config(&conf, logs.path());
    let requests = [
        ("GET", "/small.txt"),
        ("GET", "/big.txt"),
        ("HEAD", "/small.txt"),
        ("GET", "/missing"),
    ];
    let mut expected = Vec::new();
    for (method, path) in requests {
        let n = raw(s.port, method, path);
        expected.push(format!("{method} {path} HTTP/1.1|{n}"));
    }
    // The line is written once the answer is queued; give it a moment.
    let mut log = String::new();
    for _ in 0..100 {
        log = std::fs::read_to_string(logs.path().join("access.log")).unwrap_or_default();
        if log.lines().count() == expected.len() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines, expected);
}
