//! Each `<VirtualHost>`'s own `CustomLog` and `ErrorLog`, and the main
//! server's `GlobalLog` that every one writes to, compared with
//! Debian's apache2 on the same configuration: the differential harness
//! compares what a client sees, not log files, so this test runs both
//! servers itself, sends the same requests and compares the files.

mod common;

use common::TempDir;
use std::net::TcpStream;
use std::path::Path;

fn conf(root: &Path, port: u16) -> String {
    let head = common::server_head(root, port, "main.example", &[]);
    let r = root.display();
    format!(
        "{head}ErrorLog {r}/main-error.log\n\
         LogFormat \"%v %U %>s\" short\nCustomLog {r}/main-access.log short\n\
         GlobalLog {r}/global-access.log \"G %v %U\"\n\
         DocumentRoot {r}/site\n<Directory {r}/site>\n  Require all granted\n  AllowOverride All\n</Directory>\n\
         <VirtualHost *:{port}>\n  ServerName a.example\n  LogFormat \"A %v %U %>s\" short\n  \
         CustomLog {r}/a-access.log short\n  ErrorLog {r}/a-error.log\n</VirtualHost>\n\
         <VirtualHost *:{port}>\n  ServerName b.example\n</VirtualHost>\n\
         <VirtualHost *:{port}>\n  ServerName c.example\n  ErrorLog {r}/c-error.log\n</VirtualHost>\n"
    )
}

fn request(port: u16, host: &str, path: &str) {
    use std::io::{Read, Write};
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut sink = Vec::new();
    s.read_to_end(&mut sink).unwrap();
}

/// Run `program` on the configuration, send the requests, stop it; the
/// log files it wrote, by name.
fn logs_of(program: &str, extra: &[&str]) -> Vec<(String, String)> {
    let root = TempDir::new("vhost-logs");
    root.write("site/index.html", "hi\n");
    root.write("site/bad/.htaccess", "Bogus here\n");
    let port = common::free_port();
    root.write("server.conf", &conf(root.path(), port));
    let conf_path = root.path().join("server.conf");
    let child = common::start_program(program, &conf_path, extra, port);
    for host in ["a.example", "b.example", "c.example"] {
        request(port, host, "/index.html");
        request(port, host, "/bad/x");
    }
    common::stop_program(child);
    let mut files = Vec::new();
    for name in [
        "main-access.log",
        "a-access.log",
        "global-access.log",
        "main-error.log",
        "a-error.log",
        "c-error.log",
    ] {
        let text = std::fs::read_to_string(root.path().join(name)).unwrap_or_default();
        let kept: String = if name.ends_with("access.log") {
            text
        } else {
            // Error logs: which requests' errors landed here (the text of
            // the lines differs in pid, time and start-up notices).
            text.lines()
                .filter(|l| l.contains("Bogus"))
                .map(|l| format!("{}\n", l.contains("Invalid command 'Bogus'")))
                .collect()
        };
        files.push((name.to_string(), kept));
    }
    files
}

#[test]
fn each_virtual_host_writes_its_own_logs_as_apache() {
    let apache = logs_of("/usr/sbin/apache2", &["-DFOREGROUND"]);
    let ours = logs_of(env!("CARGO_BIN_EXE_htaccel"), &[]);
    assert_eq!(ours, apache);
    // Not vacuous: the files differ from one another.
    assert!(
        apache[0].1.contains("b.example /index.html 200"),
        "{apache:?}"
    );
    assert!(
        apache[1].1.contains("A a.example /index.html 200"),
        "{apache:?}"
    );
    // `GlobalLog`: a virtual host with its own logs writes there too.
    assert!(
        apache[2].1.contains("G a.example /index.html"),
        "{apache:?}"
    );
    assert!(
        !apache[4].1.is_empty() && !apache[5].1.is_empty(),
        "{apache:?}"
    );
}
