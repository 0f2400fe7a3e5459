//! `DeflateFilterNote` and `BrotliFilterNote` in the access log (`%{name}n`):
//! the input and output sizes and the ratio each module notes, with its own
//! way of writing an empty body. Compared with Debian's apache2 on the same
//! configuration: the differential harness compares what a client sees,
//! not log files.

mod common;

use common::TempDir;
use std::io::{Read, Write};
use std::path::Path;

fn conf(r: &Path, port: u16) -> String {
    let head = common::server_head(r, port, "localhost", &["filter", "deflate", "brotli"]);
    let r = r.display();
    format!(
        "{head}ErrorLog {r}/error.log\n\
         DeflateFilterNote Input gin\nDeflateFilterNote Output gout\nDeflateFilterNote gratio\n\
         BrotliFilterNote Input bin\nBrotliFilterNote Output bout\nBrotliFilterNote Ratio bratio\n\
         CustomLog {r}/access.log \"%U %{{gin}}n %{{gout}}n %{{gratio}}n %{{bin}}n %{{bout}}n %{{bratio}}n\"\n\
         DocumentRoot {r}/site\n<Directory {r}/site>\n  Require all granted\n</Directory>\n\
         <Directory {r}/site/gz>\n  AddOutputFilterByType DEFLATE text/plain\n</Directory>\n\
         <Directory {r}/site/br>\n  AddOutputFilterByType BROTLI_COMPRESS text/plain\n</Directory>\n"
    )
}

/// One request with an `Accept-Encoding`, read to the end.
fn ask(port: u16, path: &str, accept: &str) {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let head = format!(
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: {accept}\r\nConnection: close\r\n\r\n"
    );
    s.write_all(head.as_bytes()).expect("send");
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
}

fn logged(program: &str, extra: &[&str]) -> String {
    let root = TempDir::new("compression-notes");
    let text: String = (0..300)
        .map(|i| format!("line {i} of a text that compresses well\n"))
        .collect();
    for dir in ["gz", "br"] {
        root.write(&format!("site/{dir}/a.txt"), &text);
        root.write(&format!("site/{dir}/tiny.txt"), "tiny\n");
        root.write(&format!("site/{dir}/empty.txt"), "");
    }
    let port = common::free_port();
    root.write("server.conf", &conf(root.path(), port));
    let child = common::start_program(program, &root.path().join("server.conf"), extra, port);
    for dir in ["gz", "br"] {
        for file in ["a.txt", "tiny.txt", "empty.txt"] {
            ask(port, &format!("/{dir}/{file}"), "gzip, br");
        }
        ask(port, &format!("/{dir}/a.txt"), "identity");
    }
    common::stop_program(child);
    std::fs::read_to_string(root.path().join("access.log")).unwrap_or_default()
}

#[test]
fn compression_notes_are_apaches() {
    let apache = logged("/usr/sbin/apache2", &["-DFOREGROUND"]);
    let ours = logged(env!("CARGO_BIN_EXE_htaccel"), &[]);
    assert_eq!(ours, apache);
    // Both modules compressed something, so the comparison saw notes.
    let lines: Vec<&str> = apache.lines().collect();
    assert_eq!(lines.len(), 8, "{apache}");
    assert!(
        lines[0].starts_with("/gz/a.txt 1") && !lines[0].contains(" - - - - - -"),
        "{apache}"
    );
    assert!(lines[4].starts_with("/br/a.txt - - - 1"), "{apache}");
}
