//! `Listen` as Apache on Linux: a bare port takes IPv6 and IPv4 on one
//! dual-stack socket; a port another process listens on stops the start
//! with Apache's messages, even though htaccel's worker threads share
//! their ports through `SO_REUSEPORT`.
//!
//! Apache cannot be asked through the differential harness, which chooses
//! the `Listen` lines and ports itself; the expected messages are the ones
//! Debian's apache2 2.4 prints for the same configuration (run by hand:
//! `(98)Address already in use: AH00072: make_sock: could not bind to
//! address 127.0.0.1:PORT`, `no listening sockets available, shutting
//! down`, `AH00015: Unable to open logs`, exit status 1).

mod common;

use common::{Server, TempDir};
use std::net::TcpStream;
use std::process::Command;

fn conf(site: &std::path::Path, listen: &str) -> String {
    format!(
        "LoadModule authz_core_module modules/mod_authz_core.so\n\
         LoadModule mime_module modules/mod_mime.so\n\
         TypesConfig /etc/mime.types\nServerName localhost\nErrorLog /dev/stderr\n\
         Listen {listen}\nDocumentRoot \"{root}\"\n\
         <Directory \"{root}\">\n  Require all granted\n</Directory>\n",
        root = site.display()
    )
}

fn ipv6_loopback() -> bool {
    std::net::TcpListener::bind("[::1]:0").is_ok()
}

#[test]
fn a_bare_port_listens_on_ipv6_and_ipv4() {
    let site = TempDir::new("listen-site");
    let logs = TempDir::new("listen-logs");
    site.write("index.html", "hello\n");
    // `with_config` waits for 127.0.0.1:PORT: the IPv4 side answers.
    let s = Server::with_config(&conf(site.path(), "@PORT@"), logs.path());
    assert_eq!(s.get("/index.html").0, 200);
    if ipv6_loopback() {
        TcpStream::connect(("::1", s.port)).expect("IPv6 connection to a bare Listen port");
    }
}

#[test]
fn a_port_another_process_listens_on_stops_the_start() {
    let site = TempDir::new("taken-site");
    let logs = TempDir::new("taken-logs");
    for (other, listen) in [("127.0.0.1:0", None), ("127.0.0.1:0", Some("127.0.0.1"))] {
        let taken = std::net::TcpListener::bind(other).unwrap();
        let port = taken.local_addr().unwrap().port();
        let listen = match listen {
            Some(ip) => format!("{ip}:{port}"),
            None => port.to_string(),
        };
        let file = logs.path().join("taken.conf");
        std::fs::write(&file, conf(site.path(), &listen)).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_htaccel"))
            .arg("-f")
            .arg(&file)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains(
                "(98)Address already in use: AH00072: make_sock: could not bind to address"
            ),
            "{err}"
        );
        assert!(
            err.contains("no listening sockets available, shutting down"),
            "{err}"
        );
    }
}

#[test]
fn a_second_htaccel_on_the_same_port_is_refused() {
    // Both would bind with SO_REUSEPORT; without the check the second one
    // would start and the kernel would split the connections between them.
    let site = TempDir::new("second-site");
    let logs = TempDir::new("second-logs");
    site.write("index.html", "hello\n");
    let first = Server::with_config(&conf(site.path(), "127.0.0.1:@PORT@"), logs.path());
    let file = logs.path().join("second.conf");
    std::fs::write(
        &file,
        conf(site.path(), &format!("127.0.0.1:{}", first.port)),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_htaccel"))
        .arg("-f")
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("AH00072"), "{err}");
    assert_eq!(first.get("/index.html").0, 200);
}
