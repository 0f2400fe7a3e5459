//! mod_logio's `LogIOTrackTTFB` and `%^FB`, compared with Debian's apache2
//! on the same configuration: which requests get a time to first byte
//! (a handler's answer where the setting is on) and which a `-` (where it
//! is off or unset, error pages, an `ErrorDocument`'s included, and
//! redirects). The times differ from run to run, so numbers are
//! masked; whether a field holds one is what must match. The setting is
//! also allowed in a `.htaccess` under any `AllowOverride`.
//! `<IfModule logio_module>` holds in both (Debian compiles the module in).

mod common;

use common::TempDir;
use std::io::{Read, Write};
use std::net::TcpStream;

const REQUESTS: &[&str] = &[
    "/on/a.txt",
    "/on/missing.txt",
    "/on/gone",
    "/on/moved",
    "/on/denied/a.txt",
    "/on/off/a.txt",
    "/on/htaccess-off/a.txt",
    "/unset/a.txt",
    "/unset/htaccess-on/a.txt",
];

fn request(port: u16, path: &str) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut sink = Vec::new();
    s.read_to_end(&mut sink).unwrap();
}

/// The access-log lines `program` writes for the requests.
fn lines_of(program: &str, extra: &[&str]) -> Vec<String> {
    let root = TempDir::new("logio-ttfb");
    for dir in [
        "on",
        "on/denied",
        "on/off",
        "on/htaccess-off",
        "unset",
        "unset/htaccess-on",
    ] {
        root.write(&format!("site/{dir}/a.txt"), "a\n");
    }
    root.write("site/on/htaccess-off/.htaccess", "LogIOTrackTTFB Off\n");
    root.write("site/unset/htaccess-on/.htaccess", "LogIOTrackTTFB On\n");
    let port = common::free_port();
    let r = root.path().display().to_string();
    let head = common::server_head(root.path(), port, "localhost", &["alias"]);
    root.write(
        "server.conf",
        &format!(
            "{head}ErrorLog {r}/error.log\n\
             <IfModule logio_module>\n  LogFormat \"%r|%>s|%^FB\" ttfb\n</IfModule>\n\
             CustomLog {r}/access.log ttfb\n\
             DocumentRoot {r}/site\n\
             <Directory {r}/site>\n  Require all granted\n  AllowOverride Limit\n</Directory>\n\
             <Directory {r}/site/on>\n  LogIOTrackTTFB On\n  ErrorDocument 410 /on/a.txt\n</Directory>\n\
             <Directory {r}/site/on/denied>\n  Require all denied\n</Directory>\n\
             <Directory {r}/site/on/off>\n  LogIOTrackTTFB Off\n</Directory>\n\
             Redirect gone /on/gone\nRedirect /on/moved http://elsewhere.example/\n"
        ),
    );
    let child = common::start_program(program, &root.path().join("server.conf"), extra, port);
    for path in REQUESTS {
        request(port, path);
    }
    common::stop_program(child);
    let text = std::fs::read_to_string(root.path().join("access.log")).unwrap_or_default();
    text.lines().map(common::mask_numbers).collect()
}

#[test]
fn time_to_first_byte_where_apache_gives_one() {
    let apache = lines_of("/usr/sbin/apache2", &["-DFOREGROUND"]);
    let ours = lines_of(env!("CARGO_BIN_EXE_htaccel"), &[]);
    assert_eq!(ours, apache);
    // Not vacuous: every request logged, with and without a time.
    assert_eq!(apache.len(), REQUESTS.len(), "{apache:#?}");
    assert!(apache[0].ends_with("|N|N"), "{apache:#?}");
    assert!(apache[1].ends_with("|N|-"), "{apache:#?}");
}
