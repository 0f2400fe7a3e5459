//! Apache's signals on a running htaccel: graceful reloads under load,
//! broken configurations on reload, logrotate's rename-and-signal, the pid
//! file, and the signals that must never end the server.
//!
//! Apache cannot be the oracle here: its answers during a reload depend on
//! which child process a connection reaches, it exits when the new
//! configuration is broken (htaccel keeps serving on purpose, see
//! docs/deviations.md), and the differential harness has no way to send
//! signals between requests. The expectations below are the ones Apache's
//! documentation states for `graceful` (no connection refused, a request
//! answered by the old or the new configuration, logs reopened).

mod common;

use common::TempDir;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

/// The configuration with `Header set X-Generation VALUE`.
fn conf(port: u16, site: &Path, logs: &Path, generation: &str) -> String {
    format!(
        "LoadModule authz_core_module modules/mod_authz_core.so\n\
         LoadModule headers_module modules/mod_headers.so\n\
         LoadModule mime_module modules/mod_mime.so\n\
         Listen 127.0.0.1:{port}\nServerName localhost\nTypesConfig /etc/mime.types\n\
         ErrorLog {logs}/error.log\nLogLevel warn\n\
         PidFile {logs}/htaccel.pid\n\
         LogFormat \"%h %l %u %t \\\"%r\\\" %>s %b\" common\n\
         CustomLog {logs}/access.log common\n\
         DocumentRoot \"{root}\"\n\
         <Directory \"{root}\">\n  Require all granted\n</Directory>\n\
         Header set X-Generation \"{generation}\"\n",
        root = site.display(),
        logs = logs.display(),
    )
}

struct Running {
    child: Child,
    port: u16,
    file: std::path::PathBuf,
    logs: std::path::PathBuf,
}

impl Running {
    fn start(site: &Path, logs: &Path, generation: &str) -> Running {
        let file = logs.join("htaccel.conf");
        let (child, port) = common::start_listening(
            &mut |port| {
                std::fs::write(&file, conf(port, site, logs, generation)).unwrap();
                vec!["-f".into(), file.to_string_lossy().into_owned()]
            },
            &mut |_| std::fs::File::create(logs.join("stderr")).unwrap(),
        );
        Running {
            child,
            port,
            file,
            logs: logs.to_path_buf(),
        }
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.logs.join(name)).unwrap_or_default()
    }

    fn signal(&self, sig: libc::c_int) {
        // SAFETY: signalling our own child process by its pid.
        assert_eq!(unsafe { libc::kill(self.child.id() as i32, sig) }, 0);
    }

    /// Rewrite the configuration file with another `X-Generation`.
    fn set_generation(&self, site: &Path, generation: &str) {
        let text = conf(self.port, site, &self.logs, generation);
        write_whole(&self.file, &text);
    }

    /// The `X-Generation` new connections get, once it is `want` (within 5 s).
    fn wait_for_generation(&self, want: &str) {
        let start = Instant::now();
        loop {
            let (status, head) = get(self.port, "/index.html").expect("request");
            if status == 200 && generation_of(&head) == want {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "never saw generation {want}: {head}\n{}",
                self.read("error.log")
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Replace a file by renaming a complete new one over it, so that a reload
/// never reads half a file.
fn write_whole(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// One `GET` on a fresh connection: (status, head), or why it failed.
fn get(port: u16, path: &str) -> Result<(u16, String), String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| format!("connect: {e}"))?;
    s.set_read_timeout(Some(Duration::from_secs(8))).unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes())
        .map_err(|e| format!("write: {e}"))?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).map_err(|e| format!("read: {e}"))?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| format!("no status line in {text:?}"))?;
    let head = text.split("\r\n\r\n").next().unwrap_or("").to_string();
    Ok((status, head))
}

/// A kept-alive connection and what was read past the last answer.
struct KeepAlive {
    stream: TcpStream,
    buf: Vec<u8>,
}

/// One `GET` on a kept-alive connection (opened when there is none);
/// the connection is dropped when the answer says `Connection: close`.
fn keep_alive_get(port: u16, kept: &mut Option<KeepAlive>) -> Result<(u16, String), String> {
    if kept.is_none() {
        let stream =
            TcpStream::connect(("127.0.0.1", port)).map_err(|e| format!("connect: {e}"))?;
        stream
            .set_read_timeout(Some(Duration::from_secs(8)))
            .unwrap();
        *kept = Some(KeepAlive {
            stream,
            buf: Vec::new(),
        });
    }
    let c = kept.as_mut().unwrap();
    c.stream
        .write_all(b"GET /index.html HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .map_err(|e| format!("write on a kept connection: {e}"))?;
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = c.buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = c
            .stream
            .read(&mut chunk)
            .map_err(|e| format!("read on a kept connection: {e}"))?;
        if n == 0 {
            return Err(format!(
                "kept connection closed without an answer after {:?}",
                String::from_utf8_lossy(&c.buf)
            ));
        }
        c.buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&c.buf[..head_end]).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("no length in {head}"))?;
    while c.buf.len() < head_end + length {
        let n = c
            .stream
            .read(&mut chunk)
            .map_err(|e| format!("read body: {e}"))?;
        if n == 0 {
            return Err("body cut short".into());
        }
        c.buf.extend_from_slice(&chunk[..n]);
    }
    c.buf.drain(..head_end + length);
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| format!("no status in {head}"))?;
    if head.contains("Connection: close") {
        *kept = None;
    }
    Ok((status, head))
}

fn generation_of(head: &str) -> String {
    head.lines()
        .find_map(|l| l.strip_prefix("X-Generation: "))
        .unwrap_or("(none)")
        .to_string()
}

#[test]
fn graceful_reloads_under_load_fail_no_request() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    let site = TempDir::new("reload-site");
    let logs = TempDir::new("reload-logs");
    site.write("index.html", "hello\n");
    let mut server = Running::start(site.path(), logs.path(), "g0");
    // Values any answer may carry: every configuration that loaded so far
    // (an answer given by the old configuration after the switch is right).
    let valid = Arc::new(Mutex::new(vec!["g0".to_string()]));
    let stop = Arc::new(AtomicBool::new(false));
    let port = server.port;
    // Four clients open a connection per request, two keep theirs alive
    // (reconnecting only when an answer says `Connection: close`).
    let clients: Vec<_> = (0..6)
        .map(|n| {
            let (stop, valid) = (stop.clone(), valid.clone());
            std::thread::spawn(move || {
                let mut answers = 0;
                let mut kept: Option<KeepAlive> = None;
                while !stop.load(Ordering::Relaxed) {
                    let answer = if n < 4 {
                        get(port, "/index.html")
                    } else {
                        keep_alive_get(port, &mut kept)
                    };
                    let (status, head) = answer.expect("a request failed");
                    assert_eq!(status, 200, "{head}");
                    let g = generation_of(&head);
                    assert!(
                        valid.lock().unwrap().contains(&g),
                        "an answer from no configuration that loaded: {g}"
                    );
                    answers += 1;
                }
                answers
            })
        })
        .collect();
    let mut broken = 0;
    for i in 1..=20 {
        if i % 6 == 0 {
            // A broken configuration: logged, ignored, the previous one
            // keeps serving.
            write_whole(&server.file, "Listen 127.0.0.1:1\nNoSuchDirective here\n");
            broken += 1;
        } else if i % 2 == 0 {
            let g = format!("g{i}");
            valid.lock().unwrap().push(g.clone());
            server.set_generation(site.path(), &g);
        } else {
            // Unchanged files: a reload all the same (logs reopened).
            server.set_generation(site.path(), valid.lock().unwrap().last().unwrap());
        }
        server.signal(libc::SIGUSR1);
        std::thread::sleep(Duration::from_millis(150));
    }
    let last = valid.lock().unwrap().last().unwrap().clone();
    server.set_generation(site.path(), &last);
    server.wait_for_generation(&last);
    stop.store(true, Ordering::Relaxed);
    let answers: usize = clients
        .into_iter()
        .map(|c| c.join().expect("a client saw a failure"))
        .sum();
    assert!(answers > 100, "too little load: {answers} answers");
    let log = server.read("error.log");
    assert_eq!(
        log.matches("NoSuchDirective").count(),
        broken,
        "each broken reload logged once:\n{log}"
    );
    assert_eq!(
        log.matches("the previous one keeps serving").count(),
        broken,
        "{log}"
    );
    assert_eq!(
        log.matches("AH00493: SIGUSR1 received").count(),
        20,
        "{log}"
    );
    assert!(server.child.try_wait().unwrap().is_none(), "server exited");
}

#[test]
fn a_keep_alive_connection_finishes_on_its_configuration() {
    let site = TempDir::new("ka-site");
    let logs = TempDir::new("ka-logs");
    site.write("index.html", "hello\n");
    let server = Running::start(site.path(), logs.path(), "old");
    let mut conn = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let req = b"GET /index.html HTTP/1.1\r\nHost: localhost\r\n\r\n";
    let read_answer = |conn: &mut TcpStream| {
        conn.write_all(req).unwrap();
        let mut buf = vec![0; 4096];
        let mut got = String::new();
        while !got.contains("hello\n") {
            let n = conn.read(&mut buf).unwrap();
            assert!(n > 0, "closed early: {got}");
            got.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        got
    };
    let first = read_answer(&mut conn);
    assert_eq!(generation_of(&first), "old");
    assert!(!first.contains("Connection: close"), "{first}");
    server.set_generation(site.path(), "new");
    server.signal(libc::SIGUSR1);
    server.wait_for_generation("new");
    // The connection opened before the reload is still answered by the
    // configuration it started with, and is then closed (said in the
    // answer, so no client sends a request into a closing connection).
    let second = read_answer(&mut conn);
    assert_eq!(generation_of(&second), "old", "{second}");
    assert!(second.contains("Connection: close"), "{second}");
}

#[test]
fn logrotate_moves_the_logs_and_signals_graceful() {
    let site = TempDir::new("rotate-site");
    let logs = TempDir::new("rotate-logs");
    site.write("index.html", "hello\n");
    let server = Running::start(site.path(), logs.path(), "g");
    assert_eq!(get(server.port, "/before-rotation").unwrap().0, 404);
    // What Debian's /etc/logrotate.d/apache2 does: rename, then graceful.
    for name in ["access.log", "error.log"] {
        std::fs::rename(
            logs.path().join(name),
            logs.path().join(format!("{name}.1")),
        )
        .unwrap();
    }
    server.signal(libc::SIGUSR1);
    let start = Instant::now();
    while !server
        .read("error.log")
        .contains("resuming normal operations")
    {
        assert!(start.elapsed() < Duration::from_secs(5), "no reload");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(get(server.port, "/after-rotation").unwrap().0, 404);
    let (old, new) = (server.read("access.log.1"), server.read("access.log"));
    assert!(
        old.contains("/before-rotation") && !old.contains("/after-rotation"),
        "{old}"
    );
    assert!(
        new.contains("/after-rotation") && !new.contains("/before-rotation"),
        "{new}"
    );
    // The graceful signal is noted in the log it found, the new start in
    // the new one.
    assert!(server
        .read("error.log.1")
        .contains("AH00493: SIGUSR1 received"));
    assert!(server.read("error.log").contains("AH00489:"));
}

#[test]
fn signals_apache_sends_never_kill_and_the_pid_file_follows_the_server() {
    let site = TempDir::new("sig-site");
    let logs = TempDir::new("sig-logs");
    site.write("index.html", "hello\n");
    let mut server = Running::start(site.path(), logs.path(), "a");
    let pid = server.child.id().to_string();
    assert_eq!(server.read("htaccel.pid").trim(), pid);
    // SIGUSR2: Apache's parent ignores it; so does htaccel.
    server.signal(libc::SIGUSR2);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(get(server.port, "/index.html").unwrap().0, 200);
    // SIGHUP (`-k restart`): the configuration is read again.
    server.set_generation(site.path(), "b");
    server.signal(libc::SIGHUP);
    server.wait_for_generation("b");
    assert!(server
        .read("error.log")
        .contains("AH00494: SIGHUP received.  Attempting to restart"));
    // SIGWINCH (`-k graceful-stop`): stops, exit status 0, pid file gone.
    server.signal(libc::SIGWINCH);
    let start = Instant::now();
    let status = loop {
        if let Some(s) = server.child.try_wait().unwrap() {
            break s;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
    assert!(!logs.path().join("htaccel.pid").exists());
    assert!(server
        .read("error.log")
        .contains("AH00492: caught SIGWINCH, shutting down gracefully"));
}

/// `graceful-stop` (SIGWINCH) lets a request in flight finish within
/// `GracefulShutdownTimeout`, and stops at that bound when it does not.
#[test]
fn graceful_stop_honours_graceful_shutdown_timeout() {
    let site = TempDir::new("gstop-site");
    site.write("index.html", "hello\n");
    for (bound, finish_after, expect_answer) in [(5, Some(300), true), (1, None, false)] {
        let logs = TempDir::new("gstop-logs");
        let mut server = Running::start(site.path(), logs.path(), "g");
        let text = std::fs::read_to_string(&server.file).unwrap();
        write_whole(
            &server.file,
            &format!("{text}GracefulShutdownTimeout {bound}\n"),
        );
        server.signal(libc::SIGUSR1);
        let start = Instant::now();
        while !server.read("error.log").contains("AH00489:") {
            assert!(start.elapsed() < Duration::from_secs(5), "no reload");
            std::thread::sleep(Duration::from_millis(10));
        }
        // A request in flight: its body is still arriving.
        let mut conn = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        conn.write_all(
            b"POST /index.html HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10\r\n\r\n12345",
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let stopping = Instant::now();
        server.signal(libc::SIGWINCH);
        if let Some(ms) = finish_after {
            std::thread::sleep(Duration::from_millis(ms));
            conn.write_all(b"67890").unwrap();
        }
        conn.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut answer = Vec::new();
        let _ = conn.read_to_end(&mut answer);
        let status = loop {
            if let Some(s) = server.child.try_wait().unwrap() {
                break s;
            }
            assert!(stopping.elapsed() < Duration::from_secs(10), "did not stop");
            std::thread::sleep(Duration::from_millis(20));
        };
        let took = stopping.elapsed();
        assert!(status.success(), "{status:?}");
        let answered = answer.starts_with(b"HTTP/1.1 ");
        assert_eq!(
            answered,
            expect_answer,
            "bound {bound}: {:?}",
            String::from_utf8_lossy(&answer)
        );
        if !expect_answer {
            // Dropped at the bound, not before, not long after.
            assert!(
                took >= Duration::from_millis(900) && took < Duration::from_secs(4),
                "{took:?}"
            );
        }
    }
}
