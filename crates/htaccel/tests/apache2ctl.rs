//! Debian's own `apache2ctl` driving htaccel (`APACHE_HTTPD` names the
//! binary, `APACHE_CONFDIR` the configuration directory, whose `envvars`
//! it sources): `configtest`, `start`, `graceful`, `stop` as an
//! administrator or logrotate's `postrotate` runs them. Apache cannot be
//! the oracle for a running htaccel; the expectations are apache2ctl's
//! documented behaviour (exit status 0, the server found through
//! `${APACHE_PID_FILE}`, logs under `${APACHE_LOG_DIR}`).

mod common;

use common::TempDir;
use std::process::Command;
use std::time::{Duration, Instant};

const APACHE2CTL: &str = "/usr/sbin/apache2ctl";

#[test]
fn apache2ctl_runs_htaccel() {
    let dir = TempDir::new("apache2ctl");
    let d = dir.path().display().to_string();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    dir.write("www/index.html", "hello\n");
    dir.write(
        "envvars",
        &format!(
            "export APACHE_RUN_DIR={d}/run\nexport APACHE_PID_FILE={d}/run/apache2.pid\n\
             export APACHE_LOG_DIR={d}/log\nexport APACHE_LOCK_DIR={d}/lock\n\
             mkdir -p {d}/run {d}/log\n"
        ),
    );
    dir.write(
        "apache2.conf",
        &format!(
            "PidFile ${{APACHE_PID_FILE}}\nErrorLog ${{APACHE_LOG_DIR}}/error.log\n\
             LoadModule authz_core_module x\nLoadModule mime_module x\nTypesConfig /etc/mime.types\n\
             Listen 127.0.0.1:{port}\nServerName localhost\n\
             LogFormat \"%h %l %u %t \\\"%r\\\" %>s %O\" combined\n\
             CustomLog ${{APACHE_LOG_DIR}}/access.log combined\n\
             DocumentRoot {d}/www\n<Directory {d}/www>\n  Require all granted\n</Directory>\n"
        ),
    );
    let ctl = |action: &str| {
        Command::new(APACHE2CTL)
            .arg(action)
            .env("APACHE_HTTPD", env!("CARGO_BIN_EXE_htaccel"))
            .env("APACHE_CONFDIR", dir.path())
            .env("APACHE_ULIMIT_MAX_FILES", "true")
            // Not under systemd: apache2ctl starts the binary itself.
            .env_remove("INVOCATION_ID")
            .output()
            .expect("apache2ctl (Debian's apache2 package)")
    };
    let shown = |o: &std::process::Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    let test = ctl("configtest");
    assert!(
        test.status.success() && shown(&test).contains("Syntax OK"),
        "{}",
        shown(&test)
    );
    let start = ctl("start");
    assert!(start.status.success(), "{}", shown(&start));
    let pid_file = dir.path().join("run/apache2.pid");
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .expect("pid file")
        .trim()
        .parse()
        .unwrap();
    let guard = Guard(pid, pid_file.clone());
    assert_eq!(common::get(port, "/index.html").0, 200);
    let graceful = ctl("graceful");
    assert!(graceful.status.success(), "{}", shown(&graceful));
    let log = || std::fs::read_to_string(dir.path().join("log/error.log")).unwrap_or_default();
    wait_for(|| log().contains("AH00489:"));
    assert_eq!(common::get(port, "/index.html").0, 200);
    let stop = ctl("stop");
    assert!(stop.status.success(), "{}", shown(&stop));
    wait_for(|| !pid_file.exists());
    let access = std::fs::read_to_string(dir.path().join("log/access.log")).unwrap();
    assert_eq!(
        access.matches("GET /index.html HTTP/1.1\" 200 ").count(),
        2,
        "{access}"
    );
    drop(guard);
}

fn wait_for(mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < Duration::from_secs(10), "timed out");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Kills the server if the test fails while it runs.
struct Guard(i32, std::path::PathBuf);

impl Drop for Guard {
    fn drop(&mut self) {
        if self.1.exists() {
            // SAFETY: signalling the server this test started.
            unsafe { libc::kill(self.0, libc::SIGKILL) };
        }
    }
}
