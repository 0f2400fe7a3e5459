//! `ErrorLog syslog:FACILITY:TAG`, compared with Debian's apache2 on the
//! same configuration: each server runs in a mount namespace of its own
//! whose `/dev/log` is a datagram socket this test reads, and what the
//! system logger would receive (priority with the facility, tag, line
//! without its time; `LogLevel` applying to notices too) must match,
//! numbers masked. Needs root (a mount namespace); skipped otherwise.

mod common;

use common::TempDir;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixDatagram;
use std::path::Path;
use std::time::Duration;

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn request(port: u16, path: &str, referer: &str) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nReferer: {referer}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut sink = Vec::new();
    s.read_to_end(&mut sink).unwrap();
}

/// A shell line that gives the command after it a `/dev/log` of its own:
/// a directory with the device nodes a server opens and the socket, bound
/// over `/dev` in a private mount namespace.
fn private_dev_log(dir: &Path, socket: &Path) -> String {
    let dev = dir.join("dev");
    std::fs::create_dir_all(&dev).unwrap();
    let mut script = String::new();
    for node in ["null", "zero", "urandom", "random", "full"] {
        std::fs::write(dev.join(node), "").unwrap();
        script += &format!("mount --bind /dev/{node} {}/{node} && ", dev.display());
    }
    std::fs::write(dev.join("log"), "").unwrap();
    script
        + &format!(
            "mount --bind {} {}/log && mount --rbind {} /dev && exec \"$@\"",
            socket.display(),
            dev.display(),
            dev.display()
        )
}

/// What `program` sends to the system logger for the requests.
fn messages_of(program: &str, extra: &[&str]) -> Vec<String> {
    let root = TempDir::new("syslog");
    root.write("site/deny/x.txt", "x\n");
    root.write("site/broken/.htaccess", "Bogus here\n");
    root.write("site/broken/x.txt", "x\n");
    let socket = root.path().join("log.sock");
    let receiver = UnixDatagram::bind(&socket).unwrap();
    receiver
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let port = common::free_port();
    let r = root.path().display().to_string();
    let head = common::server_head(root.path(), port, "localhost", &[]);
    root.write(
        "server.conf",
        &format!(
            "{head}ErrorLog syslog:local1:web\nLogLevel warn\n\
             DocumentRoot {r}/site\n<Directory {r}/site>\n  Require all granted\n  AllowOverride All\n</Directory>\n\
             <Directory {r}/site/deny>\n  Require all denied\n</Directory>\n"
        ),
    );
    let wrapper = root.path().join("in-namespace.sh");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nset -e\n{}\n",
            private_dev_log(root.path(), &socket)
        ),
    )
    .unwrap();
    // `unshare` and the script end in `exec`: the process started is the
    // server's.
    let mut command = std::process::Command::new("unshare");
    command
        .args(["--mount", "--propagation", "private", "sh"])
        .arg(&wrapper)
        .arg(program)
        .arg("-f")
        .arg(root.path().join("server.conf"))
        .args(extra);
    let child = common::start_command(command, port);
    request(port, "/deny/x.txt", "http://ref.example/a");
    request(port, "/broken/x.txt", "http://ref.example/b");
    common::stop_program(child);
    let mut out = Vec::new();
    let mut buf = [0u8; 65536];
    while let Ok(n) = receiver.recv(&mut buf) {
        out.push(String::from_utf8_lossy(&buf[..n]).into_owned());
    }
    out.into_iter()
        .map(|m| mask(&m.replace(&r, "ROOT")))
        .collect()
}

/// The message with its priority kept, its time (`Nov 30 17:46:27 `)
/// dropped and every other number masked.
fn mask(message: &str) -> String {
    let Some((pri, rest)) = message.split_once('>') else {
        return message.to_string();
    };
    let rest = rest.get(16..).unwrap_or(rest);
    format!("{pri}>{}", common::mask_numbers(rest))
}

#[test]
fn syslog_receives_what_apache_sends() {
    if !is_root() {
        eprintln!("skipped: needs root (a mount namespace with its own /dev/log)");
        return;
    }
    let apache = messages_of("/usr/sbin/apache2", &["-DFOREGROUND"]);
    let ours = messages_of(env!("CARGO_BIN_EXE_htaccel"), &[]);
    let requests = |all: &[String]| -> Vec<String> {
        all.iter()
            .filter(|m| m.contains("[client "))
            .cloned()
            .collect()
    };
    assert_eq!(requests(&ours), requests(&apache), "{ours:#?}\n{apache:#?}");
    // Not vacuous: both requests' lines, at local1 (17 × 8) plus their
    // level, with the tag and without a time.
    let lines = requests(&apache);
    assert_eq!(lines.len(), 2, "{apache:#?}");
    assert!(
        lines[0].starts_with("<139>web[N]: [authz_core:error]"),
        "{lines:#?}"
    );
    // Under `LogLevel warn` no notice reaches syslog (Apache's start and
    // stop notices go to a file whatever the level).
    for all in [&apache, &ours] {
        assert!(!all.iter().any(|m| m.contains(":notice]")), "{all:#?}");
    }
}
