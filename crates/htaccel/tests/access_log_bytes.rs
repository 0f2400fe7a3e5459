//! mod_logio's `%I` and `%O` in the access log: the bytes received for
//! the request and sent for the answer, request line, status line and
//! headers included. Apache's `%O` differs from htaccel's by the length of
//! the `Server` header and the error pages' text, so the differential
//! harness cannot compare the numbers; the definitions can be checked
//! directly: `%I` equals the bytes the client sent, `%O` the bytes it
//! received, for that request.

mod common;

use common::{Server, TempDir};
use std::io::{Read, Write};
use std::net::TcpStream;

/// Send one request (with `body`, if any); (bytes sent, bytes received).
fn raw(port: u16, method: &str, path: &str, body: &str) -> (usize, usize) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let length = if body.is_empty() {
        String::new()
    } else {
        format!("Content-Length: {}\r\n", body.len())
    };
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\n{length}Connection: close\r\n\r\n{body}"
    );
    s.write_all(request.as_bytes()).unwrap();
    let mut got = Vec::new();
    s.read_to_end(&mut got).unwrap();
    (request.len(), got.len())
}

#[test]
fn percent_i_and_o_are_what_the_client_sent_and_received() {
    let site = TempDir::new("logio-site");
    let logs = TempDir::new("logio-logs");
    site.write("small.txt", "hello\n");
    site.write("big.txt", &"x".repeat(300_000));
    let conf = format!(
        "LoadModule authz_core_module modules/mod_authz_core.so\n\
         LoadModule mime_module modules/mod_mime.so\nTypesConfig /etc/mime.types\n\
         Listen 127.0.0.1:@PORT@\nServerName localhost\nErrorLog /dev/stderr\n\
         LogFormat \"%r|%I|%O\" bytes\nCustomLog {logs}/access.log bytes\n\
         DocumentRoot \"{root}\"\n<Directory \"{root}\">\n  Require all granted\n</Directory>\n",
        root = site.path().display(),
        logs = logs.path().display(),
    );
    let s = Server::with_config(&conf, logs.path());
    let requests = [
        ("GET", "/small.txt", ""),
        ("GET", "/big.txt", ""),
        ("HEAD", "/small.txt", ""),
        ("GET", "/missing", ""),
        ("POST", "/small.txt", "a=1&b=2"),
    ];
    let mut expected = Vec::new();
    for (method, path, body) in requests {
        let (sent, received) = raw(s.port, method, path, body);
        expected.push(format!("{method} {path} HTTP/1.1|{sent}|{received}"));
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
