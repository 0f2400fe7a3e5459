//! `HostnameLookups` in the access log: `%h` is the client's name where the
//! request's directory turns lookups on (`On`: its PTR name; `Double`: the
//! same, checked back), its address elsewhere; `%a` stays the address.
//! Compared with Debian's apache2 on the same configuration: the
//! differential harness compares what a client sees, not log files.

mod common;

use common::TempDir;
use std::path::Path;

fn conf(r: &Path, port: u16) -> String {
    let head = common::server_head(r, port, "localhost", &[]);
    let r = r.display();
    format!(
        "{head}ErrorLog {r}/error.log\n\
         CustomLog {r}/access.log \"%U %h %a\"\n\
         DocumentRoot {r}/site\n<Directory {r}/site>\n  Require all granted\n</Directory>\n\
         <Directory {r}/site/on>\n  HostnameLookups On\n</Directory>\n\
         <Directory {r}/site/double>\n  HostnameLookups Double\n</Directory>\n"
    )
}

fn logged(program: &str, extra: &[&str]) -> String {
    let root = TempDir::new("lookups-log");
    for dir in ["", "on/", "double/"] {
        root.write(&format!("site/{dir}f.txt"), "f\n");
    }
    let port = common::free_port();
    root.write("server.conf", &conf(root.path(), port));
    let child = common::start_program(program, &root.path().join("server.conf"), extra, port);
    for path in ["/f.txt", "/on/f.txt", "/double/f.txt", "/on/missing"] {
        let _ = common::get(port, path);
    }
    common::stop_program(child);
    std::fs::read_to_string(root.path().join("access.log")).unwrap_or_default()
}

#[test]
fn h_is_the_name_where_lookups_are_on_as_in_apache() {
    let apache = logged("/usr/sbin/apache2", &["-DFOREGROUND"]);
    let ours = logged(env!("CARGO_BIN_EXE_htaccel"), &[]);
    assert_eq!(ours, apache);
    // 127.0.0.1 is `localhost` in /etc/hosts.
    assert_eq!(
        apache,
        "/f.txt 127.0.0.1 127.0.0.1\n/on/f.txt localhost 127.0.0.1\n\
         /double/f.txt localhost 127.0.0.1\n/on/missing localhost 127.0.0.1\n"
    );
}
