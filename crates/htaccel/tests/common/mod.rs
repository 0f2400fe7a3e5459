//! Shared pieces of the integration tests: a temporary site, the real
//! `htaccel` binary serving it on 127.0.0.1, and a minimal HTTP client.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A temporary directory, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "htaccel-it-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(std::fs::canonicalize(p).unwrap())
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Write `rel` (creating its directories).
    pub fn write(&self, rel: &str, body: &str) {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A running `htaccel`, killed on drop.
pub struct Server {
    pub child: Child,
    pub port: u16,
    pub log: PathBuf,
}

/// The status code of a status line (`HTTP/1.1 200 OK`, `HTTP/2 103`).
pub fn status_code(line: &str) -> u16 {
    line.split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status code in {line:?}"))
}

/// The modules Debian enables by default (`a2query -m` on a fresh
/// install), and `cgid`, which `a2enmod cgi` enables under the event MPM.
pub const STOCK_MODULES: &[&str] = &[
    "cgid",
    "access_compat",
    "alias",
    "auth_basic",
    "authn_core",
    "authn_file",
    "authz_core",
    "authz_host",
    "authz_user",
    "autoindex",
    "deflate",
    "dir",
    "env",
    "filter",
    "mime",
    "mpm_event",
    "negotiation",
    "reqtimeout",
    "setenvif",
    "status",
];

/// The head of a configuration both Apache and htaccel read in the tests
/// that compare their log files: `ServerRoot`, the event MPM, mod_authz_core
/// and mod_mime with Debian's types, the `modules` named (`setenvif` for
/// `mod_setenvif.so`), `Listen` on `port`, the `ServerName` and the pid file.
pub fn server_head(root: &Path, port: u16, name: &str, modules: &[&str]) -> String {
    let r = root.display();
    let mut head = format!("ServerRoot {r}\n");
    for m in ["mpm_event", "authz_core", "mime"].iter().chain(modules) {
        head += &format!("LoadModule {m}_module /usr/lib/apache2/modules/mod_{m}.so\n");
    }
    head + &format!(
        "TypesConfig /etc/mime.types\nListen 127.0.0.1:{port}\nServerName {name}\nPidFile {r}/server.pid\n"
    )
}

/// `text` with every run of digits replaced by `N` (times, process and
/// thread ids, ports), for comparing log lines of two servers.
#[allow(dead_code)]
pub fn mask_numbers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_number = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('N');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Whether process `pid` has a socket listening on TCP `port` (read from
/// /proc): the only proof that a server answering on the port is the one
/// a test started, since a port picked free can be taken by another
/// program before the server binds it (htaccel then refuses to start).
pub fn listening(pid: u32, port: u16) -> bool {
    let mut inodes = Vec::new();
    for table in ["tcp", "tcp6"] {
        let text = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")).unwrap_or_default();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            let local_port = f
                .get(1)
                .and_then(|a| a.rsplit(':').next())
                .and_then(|p| u16::from_str_radix(p, 16).ok());
            if local_port == Some(port) && f.get(3) == Some(&"0A") {
                if let Some(inode) = f.get(9) {
                    inodes.push(format!("socket:[{inode}]"));
                }
            }
        }
    }
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        std::fs::read_link(fd.path())
            .map(|l| inodes.iter().any(|i| l.to_string_lossy() == *i))
            .unwrap_or(false)
    })
}

/// Start `program` (htaccel or Apache) on the configuration file `conf`,
/// which names `port`, and return once that process listens there (a
/// port taken meanwhile by another program fails the test loudly).
pub fn start_program(program: &str, conf: &Path, extra: &[&str], port: u16) -> Child {
    let mut command = Command::new(program);
    command.arg("-f").arg(conf).args(extra);
    start_command(command, port)
}

/// Start `command` (which becomes, by `exec`, a server listening on
/// `port`) and return once that process listens there.
#[allow(dead_code)]
pub fn start_command(mut command: Command, port: u16) -> Child {
    let program = format!("{:?}", command.get_program());
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("start {program}: {e}"));
    let start = Instant::now();
    while !listening(child.id(), port) {
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
    child
}

/// Stop a server [`start_program`] started, as `apachectl stop` would.
pub fn stop_program(mut child: Child) {
    // SAFETY: signalling a child process this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let _ = child.wait();
}

/// Start a server with `args_for(port)` on a free port, once it listens
/// there; a port taken meanwhile by another program is given up for
/// another one.
pub fn start_listening(
    args_for: &mut dyn FnMut(u16) -> Vec<String>,
    stderr: &mut dyn FnMut(u16) -> std::fs::File,
) -> (Child, u16) {
    for _ in 0..5 {
        let port = free_port();
        let mut child = Command::new(env!("CARGO_BIN_EXE_htaccel"))
            .args(args_for(port))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr(port))
            .spawn()
            .expect("start htaccel");
        let start = Instant::now();
        loop {
            if listening(child.id(), port) {
                return (child, port);
            }
            if let Some(status) = child.try_wait().unwrap() {
                // Taken meanwhile (AH00072), or a real failure: another
                // port tells which.
                eprintln!("htaccel exited ({status}) before listening on {port}");
                break;
            }
            if start.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                panic!("htaccel did not start listening on {port}");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    panic!("htaccel did not start (five attempts)");
}

impl Server {
    /// `htaccel serve DOCROOT --listen 127.0.0.1:PORT`.
    pub fn serve(docroot: &Path, logs: &Path) -> Server {
        let root = docroot.to_string_lossy().into_owned();
        Server::spawn(
            &mut |port| {
                vec![
                    "serve".into(),
                    root.clone(),
                    "--listen".into(),
                    format!("127.0.0.1:{port}"),
                ]
            },
            logs,
        )
    }

    /// `htaccel -f FILE`, where `conf` is the file's text with `@PORT@`
    /// standing for the port to listen on.
    pub fn with_config(conf: &str, logs: &Path) -> Server {
        let file = logs.join("htaccel.conf");
        Server::spawn(
            &mut |port| {
                std::fs::write(&file, conf.replace("@PORT@", &port.to_string())).unwrap();
                vec!["-f".into(), file.to_string_lossy().into_owned()]
            },
            logs,
        )
    }

    /// `htaccel ARGS…`, where `@PORT@` in an argument stands for the port.
    pub fn spawn_with(args: &[&str], logs: &Path) -> Server {
        Server::spawn(
            &mut |port| {
                args.iter()
                    .map(|a| a.replace("@PORT@", &port.to_string()))
                    .collect()
            },
            logs,
        )
    }

    fn spawn(args_for: &mut dyn FnMut(u16) -> Vec<String>, logs: &Path) -> Server {
        let log_of = |port: u16| logs.join(format!("server-{port}.log"));
        let (child, port) = start_listening(args_for, &mut |port| {
            std::fs::File::create(log_of(port)).unwrap()
        });
        Server {
            child,
            port,
            log: log_of(port),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn error_log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// GET `path`: (status, body). A failure shows the server's error log.
    pub fn get(&self, path: &str) -> (u16, String) {
        match std::panic::catch_unwind(|| get(self.port, path)) {
            Ok(answer) => answer,
            Err(e) => panic!(
                "GET {path} on port {}: {}\nserver error log:\n{}",
                self.port,
                e.downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| e.downcast_ref::<&str>().copied())
                    .unwrap_or("?"),
                self.error_log()
            ),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One `GET` over a fresh connection.
pub fn get(port: u16, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    // One write: a request split over several segments may be read in
    // pieces, and the syscall tests find each request by its first read.
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    s.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read response");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

/// `GET path` on `port` from `clients` threads in a loop while `during`
/// runs; the statuses seen, in order of completion. Fails if any request
/// takes 8 s or more (a hang).
pub fn under_load(port: u16, path: &str, clients: usize, during: impl FnOnce()) -> Vec<u16> {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let load: Vec<_> = (0..clients)
        .map(|_| {
            let (stop, seen, path) = (stop.clone(), seen.clone(), path.to_string());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let started = Instant::now();
                    let (status, _) = get(port, &path);
                    assert!(started.elapsed() < Duration::from_secs(8), "a request hung");
                    seen.lock().unwrap().push(status);
                }
            })
        })
        .collect();
    during();
    stop.store(true, Ordering::Relaxed);
    for l in load {
        l.join().expect("load thread");
    }
    let seen = seen.lock().unwrap().clone();
    seen
}

/// For scripted upstreams: read one request head from `r`; its target, or
/// `None` when the connection ended first.
pub fn read_request_target(r: &mut impl std::io::BufRead) -> Option<String> {
    let mut target = String::new();
    let mut line = String::new();
    loop {
        line.clear();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return None;
        }
        if target.is_empty() {
            target = line.split(' ').nth(1).unwrap_or("").to_string();
        }
        if line == "\r\n" {
            return Some(target);
        }
    }
}

/// What a client sees of `path`: status, the headers that do not name
/// the server or the time, and the body.
#[allow(dead_code)]
pub fn seen(port: u16, path: &str, gzip: bool) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let accept = if gzip {
        "Accept-Encoding: gzip\r\n"
    } else {
        ""
    };
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\n{accept}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    // The signature of error pages names the server (a documented
    // difference, see docs/deviations.md): such a page is compared up to
    // that line, and without the length it changes.
    let signed = body.contains("\n<address>");
    // The fields are compared in their order too: mod_deflate's `Vary`,
    // `Content-Encoding` and `Content-Length` come before `Content-Type`.
    let kept: Vec<&str> = head
        .lines()
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            !(l.starts_with("date:")
                || l.starts_with("server:")
                || (signed && l.starts_with("content-length:")))
        })
        .collect();
    let body: String = body
        .lines()
        .map(|l| {
            if l.starts_with("<address>") {
                "<address>"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    format!("{}\n\n{}", kept.join("\n"), body)
}
