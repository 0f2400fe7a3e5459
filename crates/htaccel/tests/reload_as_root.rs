//! A server started as root with `User` reloads as Apache's root parent
//! does: after logrotate's rename and a graceful signal, log files only
//! root may open are opened again; renewed certificates and keys only
//! root may read are served; piped loggers run as root; a broken
//! configuration keeps the running one. Meanwhile the process that serves
//! runs as `User`.
//!
//! Apache cannot be the oracle here (the differential harness sends no
//! signals and does not run as root); the expectations are those of
//! Apache's `graceful` with a root parent, as Debian's logrotate and
//! certbot's deploy hook rely on them.

mod common;

use common::TempDir;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// The unprivileged user the server switches to.
const USER: &str = "www-data";

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A file with `text`, owned by root and readable by root only, put in
/// place by rename as logrotate and certbot do.
fn root_only(path: &Path, text: &str) {
    let tmp = path.with_extension("new");
    std::fs::write(&tmp, text).unwrap();
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// A self-signed certificate and its key, in memory.
fn certificate(dir: &Path, tag: &str) -> (String, String) {
    let (key, cert) = (dir.join(format!("{tag}.k")), dir.join(format!("{tag}.c")));
    let out = Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
        .args(["ec_paramgen_curve:prime256v1", "-nodes", "-days", "30"])
        .args(["-subj", &format!("/CN={tag}")])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let pair = (
        std::fs::read_to_string(&cert).unwrap(),
        std::fs::read_to_string(&key).unwrap(),
    );
    let _ = (std::fs::remove_file(key), std::fs::remove_file(cert));
    pair
}

/// The subject of the certificate the server presents.
fn served_subject(port: u16) -> String {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "openssl s_client -connect 127.0.0.1:{port} -servername localhost </dev/null 2>/dev/null | openssl x509 -noout -subject"
        ))
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The status of `GET path` (over TLS with `tls`).
fn get(port: u16, tls: bool, path: &str) -> String {
    let scheme = if tls { "https" } else { "http" };
    let out = Command::new("curl")
        .args([
            "-sk",
            "--max-time",
            "5",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
        ])
        .arg(format!("{scheme}://127.0.0.1:{port}{path}"))
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The real, effective, saved and file-system uids of a process.
fn uids(pid: u32) -> Vec<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
    line.split_whitespace()
        .skip(1)
        .map(|n| n.parse().unwrap())
        .collect()
}

/// A process's command name.
fn comm(pid: u32) -> String {
    let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    name.trim_end().to_string()
}

/// The privileged broker processes among `pid`'s children.
fn brokers(pid: u32) -> Vec<u32> {
    children(pid)
        .into_iter()
        .filter(|&c| comm(c) == "htaccel-priv")
        .collect()
}

/// The processes whose parent is `pid`.
fn children(pid: u32) -> Vec<u32> {
    let list =
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    list.split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect()
}

struct Server {
    child: Child,
    port: u16,
    tls: bool,
    dir: std::path::PathBuf,
    conf: std::path::PathBuf,
}

impl Server {
    /// The server, as root with `User`; with `tls`, its address speaks
    /// TLS with the certificate and key of `keys/`.
    fn start(dir: &TempDir, tls: bool) -> Server {
        let d = dir.path().to_path_buf();
        let ssl = if tls {
            format!(
                "SSLEngine on\n\
                 SSLCertificateFile {d}/keys/server.crt\n\
                 SSLCertificateKeyFile {d}/keys/server.key\n\
                 <VirtualHost 127.0.0.9:9>\n\
                 SSLEngine off\n\
                 SSLCertificateFile {d}/keys/spare.crt\n\
                 SSLCertificateKeyFile {d}/keys/spare.key\n\
                 </VirtualHost>\n",
                d = d.display()
            )
        } else {
            String::new()
        };
        let conf = d.join("httpd.conf");
        let (child, port) = common::start_listening(
            &mut |port| {
                let text = format!(
                    "ServerRoot /usr/lib/apache2\n\
                     LoadModule authz_core_module modules/mod_authz_core.so\n\
                     LoadModule mime_module modules/mod_mime.so\n\
                     LoadModule dir_module modules/mod_dir.so\n\
                     LoadModule ssl_module modules/mod_ssl.so\n\
                     TypesConfig /etc/mime.types\n\
                     Listen 127.0.0.1:{port}\nServerName localhost\n\
                     User {USER}\nGroup {USER}\nPidFile {d}/run/htaccel.pid\n\
                     ErrorLog {d}/logs/error.log\nLogLevel notice\n\
                     CustomLog {d}/logs/access.log \"%r %>s\"\n\
                     CustomLog \"|$id -u >> {d}/logs/logger-uids; exec cat >> {d}/logs/piped.log\" \"%r\"\n\
                     DocumentRoot {d}/site\n\
                     <Directory {d}/site>\n  Require all granted\n</Directory>\n{ssl}",
                    d = d.display()
                );
                std::fs::write(&conf, text).unwrap();
                vec!["-f".into(), conf.to_string_lossy().into_owned()]
            },
            &mut |_| std::fs::File::create(d.join("stderr")).unwrap(),
        );
        Server {
            child,
            port,
            tls,
            dir: d.clone(),
            conf: conf.clone(),
        }
    }

    fn get(&self, path: &str) -> String {
        get(self.port, self.tls, path)
    }

    fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.join("logs").join(name)).unwrap_or_default()
    }

    /// Send SIGUSR1 and wait until the error log says how it ended.
    fn graceful(&self, expect: &str) {
        let before = self.log("error.log").matches(expect).count();
        // SAFETY: signalling our own child process by its pid.
        assert_eq!(
            unsafe { libc::kill(self.child.id() as i32, libc::SIGUSR1) },
            0
        );
        let start = Instant::now();
        while self.log("error.log").matches(expect).count() == before {
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "no {expect:?}:\n{}",
                self.log("error.log")
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The layout of a stock Debian server: logs and keys root's alone.
fn layout(dir: &TempDir) {
    dir.write("site/index.html", "hello\n");
    std::fs::create_dir_all(dir.path().join("logs")).unwrap();
    std::fs::create_dir_all(dir.path().join("keys")).unwrap();
    // Root's, as /run/apache2 is: the server's user cannot write there.
    std::fs::create_dir_all(dir.path().join("run")).unwrap();
    for log in ["access.log", "error.log"] {
        root_only(&dir.path().join("logs").join(log), "");
    }
    let (cert, key) = certificate(dir.path(), "old.example");
    root_only(&dir.path().join("keys/server.crt"), &cert);
    root_only(&dir.path().join("keys/server.key"), &key);
    // A server with TLS off names certificate files too: mod_ssl checks
    // them all the same.
    root_only(&dir.path().join("keys/spare.crt"), &cert);
    root_only(&dir.path().join("keys/spare.key"), &key);
    std::fs::set_permissions(
        dir.path().join("keys"),
        std::fs::Permissions::from_mode(0o700),
    )
    .unwrap();
}

/// The uid of `USER`.
fn user_uid() -> u32 {
    let out = Command::new("id").args(["-u", USER]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// The server's process runs as `USER`, and its one privileged child,
/// the broker, as root.
fn check_processes(server: &Server) -> Vec<u32> {
    let pid = server.child.id();
    let uid = user_uid();
    // It listens just before it switches users.
    let start = Instant::now();
    while uids(pid).iter().any(|&u| u != uid) && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let serving = uids(pid);
    assert!(
        serving.iter().all(|&u| u == uid),
        "serving process uids {serving:?}"
    );
    let brokers = brokers(pid);
    assert_eq!(brokers.len(), 1, "children {:?}", children(pid));
    assert!(uids(brokers[0]).iter().all(|&u| u == 0));
    serving
}

#[test]
fn logrotate_with_root_only_logs_reopens_them_while_serving_as_user() {
    if !is_root() {
        eprintln!("skipped: needs root (to switch to {USER})");
        return;
    }
    let dir = TempDir::new("privsep-logs");
    layout(&dir);
    let server = Server::start(&dir, false);
    let serving = check_processes(&server);
    assert_eq!(server.get("/before"), "404");

    // logrotate: rename, create a new root-only file, then graceful.
    let logs = dir.path().join("logs");
    for log in ["access.log", "error.log"] {
        std::fs::rename(logs.join(log), logs.join(format!("{log}.1"))).unwrap();
        root_only(&logs.join(log), "");
    }
    server.graceful("AH00489");
    assert_eq!(server.get("/after"), "404");
    let (old, new) = (server.log("access.log.1"), server.log("access.log"));
    assert!(old.contains("/before") && !old.contains("/after"), "{old}");
    assert!(new.contains("/after") && !new.contains("/before"), "{new}");
    assert!(server
        .log("error.log.1")
        .contains("AH00493: SIGUSR1 received"));
    // The piped loggers of both generations run as root, as Apache's
    // parent runs them.
    let start = Instant::now();
    while server.log("logger-uids").lines().count() < 2 {
        assert!(start.elapsed() < Duration::from_secs(5), "one logger");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(server.log("logger-uids"), "0\n0\n");
    let start = Instant::now();
    while !server.log("piped.log").contains("GET /after") {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{}",
            server.log("piped.log")
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        check_processes(&server),
        serving,
        "still {USER} after the reload"
    );

    // A logger that dies is started again by the next line, as root.
    let broker = brokers(server.child.id())[0];
    for logger in children(broker) {
        if comm(logger) == "cat" {
            // SAFETY: killing a logger process this test's server started.
            unsafe { libc::kill(logger as i32, libc::SIGKILL) };
        }
    }
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(server.get("/respawned"), "404");
    let start = Instant::now();
    while !server.log("piped.log").contains("GET /respawned") {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{}",
            server.log("piped.log")
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(server.log("logger-uids"), "0\n0\n0\n");

    // A broken configuration: the running one keeps serving, into the
    // files it has.
    let text = std::fs::read_to_string(&server.conf).unwrap();
    std::fs::write(&server.conf, format!("{text}NoSuchDirective on\n")).unwrap();
    server.graceful("the previous one keeps serving");
    assert_eq!(server.get("/broken"), "404");
    assert!(server.log("access.log").contains("/broken"));
    assert!(server.log("error.log").contains("NoSuchDirective"));

    // Stopped, the server leaves no pid file in root's directory.
    let pid_file = dir.path().join("run/htaccel.pid");
    let pid = server.child.id();
    assert_eq!(
        std::fs::read_to_string(&pid_file).unwrap(),
        format!("{pid}\n")
    );
    let mut server = server;
    // SAFETY: signalling our own child process by its pid.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGTERM) }, 0);
    let start = Instant::now();
    while server.child.try_wait().unwrap().is_none() {
        assert!(start.elapsed() < Duration::from_secs(5), "did not stop");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!pid_file.exists(), "pid file left behind");
}

#[test]
fn a_renewed_root_only_key_is_served_after_a_reload() {
    if !is_root() {
        eprintln!("skipped: needs root (to switch to {USER})");
        return;
    }
    let dir = TempDir::new("privsep-tls");
    layout(&dir);
    let server = Server::start(&dir, true);
    check_processes(&server);
    assert_eq!(server.get("/"), "200");
    assert!(served_subject(server.port).contains("old.example"));

    // certbot: a renewed certificate and key, root's alone, then graceful.
    let (cert, key) = certificate(dir.path(), "new.example");
    root_only(&dir.path().join("keys/server.crt"), &cert);
    root_only(&dir.path().join("keys/server.key"), &key);
    server.graceful("AH00489");
    assert!(
        served_subject(server.port).contains("new.example"),
        "{}",
        server.log("error.log")
    );

    // A key that does not match its certificate: refused, the renewed
    // pair keeps serving.
    let (_, other) = certificate(dir.path(), "other.example");
    root_only(&dir.path().join("keys/server.key"), &other);
    server.graceful("the previous one keeps serving");
    assert!(served_subject(server.port).contains("new.example"));
    assert_eq!(server.get("/"), "200");
    check_processes(&server);
}
