//! What the logs say about connections that begin with a PROXY header
//! (`RemoteIPProxyProtocol`), compared with Debian's apache2 on the same
//! configuration: `%a`/`%h` are the header's client, `%{c}a`/`%{c}h` the
//! connection's peer, `%{remote}p` the header's port; a header that never
//! completes is a `408` logged for the peer; and mod_remoteip's error-log
//! lines (`AH…` and what follows) are Apache's. The differential harness
//! compares what a client sees, not log files, so this test runs both
//! servers itself and compares the files.

mod common;

use common::TempDir;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

fn conf(r: &Path, port: u16) -> String {
    let r = r.display();
    format!(
        "ServerRoot {r}\n\
         LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so\n\
         LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so\n\
         LoadModule authz_host_module /usr/lib/apache2/modules/mod_authz_host.so\n\
         LoadModule mime_module /usr/lib/apache2/modules/mod_mime.so\n\
         LoadModule remoteip_module /usr/lib/apache2/modules/mod_remoteip.so\n\
         LoadModule reqtimeout_module /usr/lib/apache2/modules/mod_reqtimeout.so\n\
         TypesConfig /etc/mime.types\nListen 127.0.0.1:{port}\nServerName localhost\n\
         PidFile {r}/server.pid\nErrorLog {r}/error.log\nLogLevel warn remoteip:debug\n\
         RequestReadTimeout header=1 body=20\n\
         RemoteIPProxyProtocol On\nRemoteIPProxyProtocolExceptions 127.0.0.2\n\
         LogFormat \"%a %{{c}}a %h %{{c}}h %{{remote}}p %>s %r\" pp\n\
         CustomLog {r}/access.log pp\n\
         DocumentRoot {r}/site\n<Directory {r}/site>\n  Require all granted\n  AllowOverride All\n</Directory>\n"
    )
}

const V2_SIGNATURE: &[u8] = b"\r\n\r\n\0\r\nQUIT\n";

/// The connections sent to each server, one after the other: the bytes,
/// and the loopback address to connect from.
fn connections() -> Vec<(Vec<u8>, &'static str)> {
    let get = b"GET /f.txt HTTP/1.0\r\n\r\n";
    let v2 = |ver_cmd: u8, family: u8, addr: &[u8]| {
        let mut h = V2_SIGNATURE.to_vec();
        h.extend_from_slice(&[ver_cmd, family]);
        h.extend_from_slice(&(addr.len() as u16).to_be_bytes());
        h.extend_from_slice(addr);
        h.extend_from_slice(get);
        h
    };
    let with = |header: &[u8]| [header, get].concat();
    vec![
        (
            with(b"PROXY TCP4 203.0.113.7 192.0.2.1 4321 80\r\n"),
            "127.0.0.1",
        ),
        (with(b"PROXY TCP6 2001:db8::7 ::1 4322 80\r\n"), "127.0.0.1"),
        (with(b"PROXY UNKNOWN\r\n"), "127.0.0.1"),
        (with(b"PROXY UNKNOWN x y z\r\n"), "127.0.0.1"),
        (
            with(b"PROXY TCP4 203.0.113.x 192.0.2.1 4321 80\r\n"),
            "127.0.0.1",
        ),
        (
            v2(
                0x21,
                0x11,
                &[198, 51, 100, 9, 192, 0, 2, 1, 0x10, 0x92, 0, 80],
            ),
            "127.0.0.1",
        ),
        (v2(0x20, 0x00, &[]), "127.0.0.1"),
        (v2(0x21, 0x31, &[0; 216]), "127.0.0.1"),
        (get.to_vec(), "127.0.0.1"),
        (get.to_vec(), "127.0.0.2"),
        // Never completed: the header stage's second, then a 408 line.
        (b"PROXY TCP4 203.0.113.7".to_vec(), "127.0.0.1"),
    ]
}

/// The access-log lines with each connection's own port written `PEER`,
/// and mod_remoteip's error-log messages from their `AH` number on.
fn logged(program: &str, extra: &[&str]) -> (Vec<String>, Vec<String>) {
    let root = TempDir::new("pplog");
    root.write("site/f.txt", "f\n");
    let port = common::free_port();
    root.write("server.conf", &conf(root.path(), port));
    let child = common::start_program(program, &root.path().join("server.conf"), extra, port);
    let mut peer_ports = Vec::new();
    for (bytes, from) in connections() {
        let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)
            .expect("socket");
        socket
            .bind(
                &std::net::SocketAddr::from((from.parse::<std::net::IpAddr>().unwrap(), 0)).into(),
            )
            .expect("bind");
        socket
            .connect(&std::net::SocketAddr::from(([127, 0, 0, 1], port)).into())
            .expect("connect");
        let mut s: TcpStream = socket.into();
        peer_ports.push(s.local_addr().unwrap().port().to_string());
        s.write_all(&bytes).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut answer = Vec::new();
        let _ = s.read_to_end(&mut answer);
    }
    common::stop_program(child);
    let access = std::fs::read_to_string(root.path().join("access.log")).unwrap_or_default();
    let access = access
        .lines()
        .map(|line| {
            line.split(' ')
                .map(|w| {
                    if peer_ports.iter().any(|p| p == w) {
                        "PEER"
                    } else {
                        w
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let errors = std::fs::read_to_string(root.path().join("error.log")).unwrap_or_default();
    let errors = errors
        .lines()
        .filter(|l| l.contains("[remoteip:") && !l.contains("AH03492"))
        .filter_map(|l| l.find("AH").map(|i| l[i..].to_string()))
        .map(|l| {
            peer_ports
                .iter()
                .fold(l, |l, p| l.replace(&format!(":{p}"), ":PEER"))
                .replace(&format!(":{port}"), ":PORT")
        })
        .collect();
    (access, errors)
}

#[test]
fn proxied_connections_are_logged_as_in_apache() {
    let apache = logged("/usr/sbin/apache2", &["-DFOREGROUND"]);
    let ours = logged(env!("CARGO_BIN_EXE_htaccel"), &[]);
    assert_eq!(ours.0, apache.0, "access log");
    assert_eq!(ours.1, apache.1, "mod_remoteip's error-log lines");
    // What Apache's log says, so that the comparison cannot pass empty.
    assert_eq!(
        apache.0,
        [
            "203.0.113.7 127.0.0.1 203.0.113.7 127.0.0.1 4321 200 GET /f.txt HTTP/1.0",
            "2001:db8::7 127.0.0.1 2001:db8::7 127.0.0.1 4322 200 GET /f.txt HTTP/1.0",
            "127.0.0.1 127.0.0.1 127.0.0.1 127.0.0.1 PEER 200 GET /f.txt HTTP/1.0",
            "198.51.100.9 127.0.0.1 198.51.100.9 127.0.0.1 4242 200 GET /f.txt HTTP/1.0",
            "127.0.0.1 127.0.0.1 127.0.0.1 127.0.0.1 PEER 200 GET /f.txt HTTP/1.0",
            "127.0.0.2 127.0.0.2 127.0.0.2 127.0.0.2 PEER 200 GET /f.txt HTTP/1.0",
            "127.0.0.1 127.0.0.1 127.0.0.1 127.0.0.1 PEER 408 -",
        ]
    );
    assert!(
        apache.1.iter().any(|l| l.starts_with("AH03513")),
        "{:?}",
        apache.1
    );
}
