//! `LogLevel level module:level`, compared with Debian's apache2 on the
//! same configuration (the differential harness compares what a client
//! sees, not the error log, so this test runs both servers itself): a
//! broken `.htaccess` is logged by the core at `alert`; whether the line
//! is written follows the core's own level, not the server's.

mod common;

use common::TempDir;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn alert_logged(program: &str, extra: &[&str], log_level: &str) -> bool {
    let root = TempDir::new("loglevel");
    let r = root.path().display().to_string();
    root.write("site/bad/.htaccess", "Bogus here\n");
    root.write("site/bad/x", "x\n");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    root.write(
        "server.conf",
        &format!(
            "ServerRoot {r}\n\
             LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so\n\
             LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so\n\
             LoadModule mime_module /usr/lib/apache2/modules/mod_mime.so\n\
             TypesConfig /etc/mime.types\nListen 127.0.0.1:{port}\nServerName localhost\n\
             PidFile {r}/server.pid\nErrorLog {r}/error.log\nLogLevel {log_level}\n\
             DocumentRoot {r}/site\n<Directory {r}/site>\n  Require all granted\n  AllowOverride All\n</Directory>\n"
        ),
    );
    let mut child = Command::new(program)
        .arg("-f")
        .arg(root.path().join("server.conf"))
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    // Our own server listening, not whatever else took the port meanwhile.
    while !common::listening(child.id(), port) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "{program} exited at start"
        );
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{program} did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(common::get(port, "/bad/x").0, 500);
    // SAFETY: stopping the server this function started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let _ = child.wait();
    std::fs::read_to_string(root.path().join("error.log"))
        .unwrap_or_default()
        .contains("Invalid command 'Bogus'")
}

#[test]
fn per_module_levels_as_in_apache() {
    for level in ["emerg core:alert", "alert core:emerg", "emerg", "warn"] {
        let apache = alert_logged("/usr/sbin/apache2", &["-DFOREGROUND"], level);
        let ours = alert_logged(env!("CARGO_BIN_EXE_htaccel"), &[], level);
        assert_eq!(ours, apache, "LogLevel {level}");
    }
}
