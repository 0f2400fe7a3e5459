//! mod_ssl's `ssl-unclean-shutdown`: a connection whose first request had
//! the variable set by mod_setenvif before mod_ssl looked (Red Hat's stock
//! `ssl.conf` names old Internet Explorers with `BrowserMatch`) ends
//! without TLS's `close_notify`; any other ends with one. Compared with
//! Debian's apache2 on the same configuration: the differential harness
//! compares answers, not how the TLS session ended. A Python client tells
//! the two ends apart (`suppress_ragged_eofs=False`).

mod common;

use common::TempDir;
use std::path::Path;
use std::process::Command;

const CLIENT: &str = r#"
import socket, ssl, sys
port, agents = int(sys.argv[1]), sys.argv[2:]
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)),
                    server_hostname="localhost", suppress_ragged_eofs=False)
requests = ""
for i, agent in enumerate(agents):
    path, _, agent = agent.partition(" ")
    last = "Connection: close\r\n" if i == len(agents) - 1 else ""
    requests += f"GET {path} HTTP/1.1\r\nHost: localhost\r\nUser-Agent: {agent}\r\n{last}\r\n"
s.sendall(requests.encode())
s.settimeout(10)
try:
    while s.recv(65536):
        pass
    print("close_notify")
except ssl.SSLEOFError:
    print("no close_notify")
"#;

fn conf(r: &Path, port: u16) -> String {
    let head = common::server_head(r, port, "localhost", &["ssl", "setenvif", "env"]);
    let r = r.display();
    format!(
        "{head}ErrorLog {r}/error.log\n\
         SSLEngine on\nSSLCertificateFile {r}/localhost.crt\nSSLCertificateKeyFile {r}/localhost.key\n\
         DocumentRoot {r}/site\n<Directory {r}/site>\n  Require all granted\n</Directory>\n\
         BrowserMatch \"MSIE [2-5]\" nokeepalive ssl-unclean-shutdown downgrade-1.0 force-response-1.0\n\
         SetEnvIf User-Agent ^accurate ssl-accurate-shutdown\n\
         <Location /late>\n  SetEnv ssl-unclean-shutdown 1\n</Location>\n"
    )
}

/// How each connection ended, one line per connection; a connection's
/// requests are `PATH AGENT` words.
fn ends(program: &str, extra: &[&str]) -> Vec<String> {
    let root = TempDir::new("tlsshutdown");
    root.write("site/index.html", "hi\n");
    root.write("site/late/index.html", "late\n");
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-days", "30", "-nodes",
        ])
        .args(["-subj", "/CN=localhost"])
        .arg("-keyout")
        .arg(root.path().join("localhost.key"))
        .arg("-out")
        .arg(root.path().join("localhost.crt"))
        .output()
        .expect("openssl");
    assert!(made.status.success());
    let port = common::free_port();
    root.write("server.conf", &conf(root.path(), port));
    let child = common::start_program(program, &root.path().join("server.conf"), extra, port);
    let connections: &[&[&str]] = &[
        &["/ Mozilla/4.0 (compatible; MSIE 5.5; Windows 98)"],
        &["/ curl/8.0"],
        &["/ accurate"],
        // Set after mod_ssl looked: no effect.
        &["/late/ curl/8.0"],
        // The first request decides for the connection.
        &[
            "/ curl/8.0",
            "/ Mozilla/4.0 (compatible; MSIE 4.01; Windows 95)",
        ],
        &["/ Mozilla/4.0 (compatible; MSIE 5.0)", "/ curl/8.0"],
    ];
    let seen = connections
        .iter()
        .map(|requests| {
            let out = Command::new("python3")
                .arg("-c")
                .arg(CLIENT)
                .arg(port.to_string())
                .args(*requests)
                .output()
                .expect("python3");
            format!(
                "{requests:?}: {}",
                String::from_utf8_lossy(&out.stdout).trim()
            )
        })
        .collect();
    common::stop_program(child);
    seen
}

#[test]
fn unclean_shutdown_is_chosen_as_mod_ssl_chooses_it() {
    let apache = ends("/usr/sbin/apache2", &["-DFOREGROUND"]);
    let ours = ends(env!("CARGO_BIN_EXE_htaccel"), &[]);
    assert_eq!(ours, apache);
    assert!(apache[0].ends_with(": no close_notify"), "{apache:?}");
    assert!(apache[1].ends_with(": close_notify"), "{apache:?}");
}
