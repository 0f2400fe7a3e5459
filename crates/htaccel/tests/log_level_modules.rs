//! `LogLevel level module:level`, compared with Debian's apache2 on the
//! same configuration (the differential harness compares what a client
//! sees, not the error log, so this test runs both servers itself): a
//! broken `.htaccess` is logged by the core at `alert`; whether the line
//! is written follows the core's own level, not the server's.

mod common;

use common::TempDir;

fn alert_logged(program: &str, extra: &[&str], log_level: &str) -> bool {
    let root = TempDir::new("loglevel");
    let r = root.path().display().to_string();
    root.write("site/bad/.htaccess", "Bogus here\n");
    root.write("site/bad/x", "x\n");
    let port = common::free_port();
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
    let child = common::start_program(program, &root.path().join("server.conf"), extra, port);
    assert_eq!(common::get(port, "/bad/x").0, 500);
    common::stop_program(child);
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
