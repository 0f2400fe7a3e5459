//! `CustomLog … env=NAME` / `env=!NAME` (Debian's `dontlog` idiom),
//! `expr=` conditions and `%{NAME}e` fields,
//! compared with Debian's apache2 on the same configuration: the
//! differential harness compares what a client sees, not log files, so
//! this test runs both servers itself and compares the files.

mod common;

use common::TempDir;
use std::path::Path;

fn conf(r: &Path, port: u16) -> String {
    let head = common::server_head(r, port, "localhost", &["setenvif", "rewrite"]);
    let r = r.display();
    format!(
        "{head}ErrorLog {r}/error.log\n\
         SetEnvIf Request_URI \"\\.ico$\" dontlog\n\
         LogFormat \"%U %>s\" short\n\
         CustomLog {r}/kept.log short env=!dontlog\n\
         CustomLog {r}/dropped.log short env=dontlog\n\
         CustomLog {r}/flagged.log short env=FLAG\n\
         CustomLog {r}/vars.log \"%U %{{FLAG}}e %{{dontlog}}e\"\n\
         CustomLog {r}/errors.log short \"expr=%{{REQUEST_STATUS}} -ge 400\"\n\
         CustomLog {r}/agent.log short \"Expr=%{{HTTP_USER_AGENT}} =~ /probe/ || reqenv('FLAG') == '1'\"\n\
         CustomLog {r}/typed.log short \"expr=resp('Content-Type') =~ m#^text/plain# && %{{REQUEST_METHOD}} == 'GET'\"\n\
         CustomLog {r}/query.log short \"expr=%{{QUERY_STRING}} =~ /debug/ && %{{REQUEST_URI}} =~ m#/index#\"\n\
         DocumentRoot {r}/site\n<Directory {r}/site>\n  Require all granted\n  AllowOverride All\n</Directory>\n"
    )
}

fn logged(program: &str, extra: &[&str]) -> Vec<String> {
    let root = TempDir::new("condlog");
    root.write("site/index.html", "hi\n");
    root.write("site/favicon.ico", "ico\n");
    root.write(
        "site/flag/.htaccess",
        "RewriteEngine On\nRewriteRule ^ - [E=FLAG:1]\n",
    );
    root.write("site/flag/x.txt", "x\n");
    let port = common::free_port();
    root.write("server.conf", &conf(root.path(), port));
    let child = common::start_program(program, &root.path().join("server.conf"), extra, port);
    for path in [
        "/index.html",
        "/favicon.ico",
        "/flag/x.txt",
        "/missing.ico",
        "/index.html?debug=1",
    ] {
        let _ = common::get(port, path);
    }
    probe(port);
    common::stop_program(child);
    [
        "kept.log",
        "dropped.log",
        "flagged.log",
        "vars.log",
        "errors.log",
        "agent.log",
        "typed.log",
        "query.log",
    ]
    .iter()
    .map(|n| std::fs::read_to_string(root.path().join(n)).unwrap_or_default())
    .collect()
}

/// `GET /index.html` with a `User-Agent` the `expr=` condition looks for.
fn probe(port: u16) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    s.write_all(
        b"GET /index.html HTTP/1.1\r\nHost: localhost\r\nUser-Agent: a probe\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let _ = s.read_to_end(&mut Vec::new());
}

#[test]
fn env_and_expr_conditions_choose_the_logs_as_in_apache() {
    let apache = logged("/usr/sbin/apache2", &["-DFOREGROUND"]);
    let ours = logged(env!("CARGO_BIN_EXE_htaccel"), &[]);
    assert_eq!(ours, apache);
    assert_eq!(apache[1], "/favicon.ico 200\n/missing.ico 404\n");
    assert_eq!(apache[2], "/flag/x.txt 200\n");
    assert!(apache[3].contains("/flag/x.txt 1 -\n"), "{}", apache[3]);
    assert_eq!(apache[4], "/missing.ico 404\n");
    assert_eq!(apache[5], "/flag/x.txt 200\n/index.html 200\n");
    assert_eq!(apache[6], "/flag/x.txt 200\n");
    assert_eq!(apache[7], "/index.html 200\n");
}
