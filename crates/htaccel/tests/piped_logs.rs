//! Piped logs (`CustomLog "|program"`, `"|$shell command"`, `ErrorLog
//! "|$…"`), compared with Debian's apache2 on the same configuration: the
//! differential harness compares what a client sees, not log files, so
//! this test runs both servers itself and compares what the loggers wrote.

mod common;

use common::TempDir;
use std::path::Path;
use std::time::{Duration, Instant};

fn conf(r: &Path, port: u16) -> String {
    let head = common::server_head(r, port, "localhost", &[]);
    let r = r.display();
    format!(
        "{head}ErrorLog \"|$cat >> {r}/error.log\"\n\
         LogFormat \"%U %>s\" short\n\
         CustomLog \"|/usr/bin/tee -a {r}/direct.log\" short\n\
         CustomLog \"|$cat >> {r}/shell.log\" short\n\
         DocumentRoot {r}/site\n<Directory {r}/site>\n  Require all granted\n  AllowOverride All\n</Directory>\n"
    )
}

fn logged(program: &str, extra: &[&str]) -> Vec<String> {
    let root = TempDir::new("piped");
    root.write("site/index.html", "hi\n");
    root.write("site/bad/.htaccess", "Bogus here\n");
    let port = common::free_port();
    root.write("server.conf", &conf(root.path(), port));
    let child = common::start_program(program, &root.path().join("server.conf"), extra, port);
    for path in ["/index.html", "/bad/x"] {
        let _ = common::get(port, path);
    }
    // The loggers have the lines once they arrive; wait for both files.
    let read = |name: &str| std::fs::read_to_string(root.path().join(name)).unwrap_or_default();
    let start = Instant::now();
    while read("direct.log").lines().count() < 2 || read("shell.log").lines().count() < 2 {
        if start.elapsed() > Duration::from_secs(5) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    common::stop_program(child);
    vec![
        read("direct.log"),
        read("shell.log"),
        read("error.log")
            .contains("Invalid command 'Bogus'")
            .to_string(),
    ]
}

#[test]
fn piped_logs_receive_the_lines_as_in_apache() {
    let apache = logged("/usr/sbin/apache2", &["-DFOREGROUND"]);
    let ours = logged(env!("CARGO_BIN_EXE_htaccel"), &[]);
    assert_eq!(ours, apache);
    assert_eq!(apache[0], "/index.html 200\n/bad/x 500\n");
    assert_eq!(apache[2], "true");
}

/// A logger that dies is started again: every line written after it died
/// reaches the new one. (Apache restarts its loggers from a maintenance
/// loop on its own schedule, so it is not the oracle for the timing.)
#[test]
fn a_logger_that_exits_is_started_again() {
    let root = TempDir::new("piped-restart");
    root.write("site/index.html", "hi\n");
    let r = root.path().display().to_string();
    let conf = format!(
        "LoadModule authz_core_module x\nLoadModule mime_module x\nTypesConfig /etc/mime.types\n\
         Listen 127.0.0.1:@PORT@\nServerName localhost\nErrorLog /dev/stderr\n\
         LogFormat \"%U\" path\n\
         CustomLog \"|$/usr/bin/head -n 1 >> {r}/one.log\" path\n\
         DocumentRoot {r}/site\n<Directory {r}/site>\n  Require all granted\n</Directory>\n"
    );
    let s = common::Server::with_config(&conf, root.path());
    let lines = || {
        std::fs::read_to_string(root.path().join("one.log"))
            .unwrap_or_default()
            .lines()
            .count()
    };
    for n in 1..=3 {
        assert_eq!(s.get(&format!("/index.html?{n}")).0, 200);
        let start = Instant::now();
        while lines() < n {
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "line {n} lost: {:?}",
                std::fs::read_to_string(root.path().join("one.log"))
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // Let this logger finish exiting before the next line.
        std::thread::sleep(Duration::from_millis(200));
    }
}
