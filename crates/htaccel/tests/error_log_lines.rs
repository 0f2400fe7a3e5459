//! The error log's lines about requests, compared with Debian's apache2 on
//! the same configuration: the default format (the module that wrote the
//! line, the OS error, the client, `, referer: …`) and `ErrorLogFormat`s
//! (Debian's commented one and one using most items). The differential
//! harness compares what a client sees, not the error log, so this test
//! runs both servers itself; its configuration loads neither mod_dir
//! nor mod_autoindex, so a directory is the default handler's 404. Numbers (times, process and thread ids,
//! ports) are masked; everything else must match.

mod common;

use common::TempDir;
use std::io::{Read, Write};
use std::net::TcpStream;

/// The requests: each writes one line under `LogLevel info`.
const REQUESTS: &[(&str, Option<&str>)] = &[
    ("/deny/x.txt", None),
    ("/deny/x.txt", Some("http://ref.example/a \"b\"")),
    ("/noindex/", Some("http://ref.example/dir")),
    ("/broken/x.txt", None),
    // A broken `.htaccess` is written about by every request it stops.
    ("/broken/x.txt", Some("http://ref.example/again")),
    ("/missing.txt", Some("http://ref.example/m")),
];

fn request(port: u16, path: &str, referer: Option<&str>) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let referer = referer.map_or(String::new(), |r| format!("Referer: {r}\r\n"));
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: www.example:{port}\r\n{referer}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut sink = Vec::new();
    s.read_to_end(&mut sink).unwrap();
}

/// The lines `program` writes about the requests under `format`.
fn lines_of(program: &str, extra: &[&str], format: Option<&str>) -> Vec<String> {
    let root = TempDir::new("error-lines");
    root.write("site/deny/x.txt", "x\n");
    root.write("site/noindex/a.txt", "a\n");
    root.write("site/broken/.htaccess", "Bogus here\n");
    root.write("site/broken/x.txt", "x\n");
    let port = common::free_port();
    let r = root.path().display().to_string();
    let head = common::server_head(root.path(), port, "main.example", &["setenvif"]);
    let format = format.map_or(String::new(), |f| format!("ErrorLogFormat \"{f}\"\n"));
    root.write(
        "server.conf",
        &format!(
            "{head}ErrorLog {r}/error.log\nLogLevel info\n{format}\
             SetEnvIf Request_URI . TESTVAR=tv\n\
             DocumentRoot {r}/site\n<Directory {r}/site>\n  Require all granted\n  AllowOverride All\n</Directory>\n\
             <Directory {r}/site/deny>\n  Require all denied\n</Directory>\n"
        ),
    );
    let child = common::start_program(program, &root.path().join("server.conf"), extra, port);
    for (path, referer) in REQUESTS {
        request(port, path, *referer);
    }
    common::stop_program(child);
    let text = std::fs::read_to_string(root.path().join("error.log")).unwrap_or_default();
    text.lines()
        .filter(|l| l.contains(&format!("{r}/site")))
        .map(|l| common::mask_numbers(&l.replace(&r, "ROOT")))
        .collect()
}

fn compare(format: Option<&str>) -> Vec<String> {
    let apache = lines_of("/usr/sbin/apache2", &["-DFOREGROUND"], format);
    let ours = lines_of(env!("CARGO_BIN_EXE_htaccel"), &[], format);
    assert_eq!(ours, apache, "ErrorLogFormat {format:?}");
    // Not vacuous: a line for each request.
    assert_eq!(apache.len(), REQUESTS.len(), "{apache:#?}");
    apache
}

#[test]
fn default_format_as_apache() {
    let lines = compare(None);
    assert!(lines[0].contains("[authz_core:error]"), "{lines:#?}");
    assert!(
        lines[1].ends_with(", referer: http://ref.example/a \"b\""),
        "{lines:#?}"
    );
}

#[test]
fn debians_commented_format_as_apache() {
    compare(Some(
        r"[%{u}t] [%-m:%l] [pid %P:tid %T] %7F: %E: [client\ %a] %M% ,\ referer\ %{Referer}i",
    ));
}

#[test]
fn other_items_as_apache() {
    let lines = compare(Some(
        r"%{cuz}t|%t|%{g}T|%v|%V|%A|%{TESTVAR}e|%-{X-None}i% |%{X-None}i|% %4l|% %% %M",
    ));
    assert!(
        lines[0].contains("|main.example|www.example|"),
        "{lines:#?}"
    );
    assert!(lines[0].contains("|tv|-"), "{lines:#?}");
}
