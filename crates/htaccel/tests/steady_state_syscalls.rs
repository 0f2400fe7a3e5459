//! Steady state costs no configuration syscalls: with a `.htaccess` at
//! every level of a 26-deep path, requests after a warm-up neither open nor
//! `stat` any of them — nor anything else: the file served is kept open
//! (and, being small, in memory) while the watcher vouches for it. The
//! evidence is strace attached to the running server (all threads) while
//! the measured requests are made, counting the requests it saw read.

mod common;

use common::{Server, TempDir};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const DEPTH: usize = 26;
const MEASURED: usize = 40;

fn deep_site(site: &TempDir) -> String {
    let mut rel = String::new();
    for i in 0..DEPTH {
        rel.push_str(&format!("l{i}/"));
        site.write(
            &format!("{rel}.htaccess"),
            &format!("AddType text/plain .t{i}\n"),
        );
    }
    site.write(&format!("{rel}file.txt"), "deep\n");
    format!("/{rel}file.txt")
}

#[test]
fn deep_tree_requests_touch_no_access_file() {
    assert!(
        Command::new("strace")
            .arg("-V")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success()),
        "strace is needed for this test (apt-get install -y strace; scripts/test.sh installs it)"
    );
    let site = TempDir::new("deep");
    let logs = TempDir::new("deep-logs");
    let url = deep_site(&site);
    let s = Server::serve(site.path(), logs.path());
    // Each worker thread keeps its own open files: enough connections that
    // every worker (one per core) has served the file once.
    for _ in 0..40 {
        assert_eq!(s.get(&url), (200, "deep\n".to_string()));
    }

    let trace = logs.path().join("trace");
    let mut strace = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=open,openat,stat,lstat,statx,newfstatat,access,faccessat,faccessat2,readlink,readlinkat,read,recvfrom", "-o"])
        .arg(&trace)
        .args(["-p", &s.pid().to_string()])
        .stderr(Stdio::null())
        .spawn()
        .expect("strace");
    // Attached once a marker request shows in the trace.
    let start = Instant::now();
    let mut n = 0;
    loop {
        n += 1;
        let marker = format!("/strace-marker-{n}");
        s.get(&marker);
        let text = std::fs::read_to_string(&trace).unwrap_or_default();
        if text.contains(&marker) {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "strace never saw a request"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // From the start of the line strace may be writing: a line cut in two
    // would be read as a syscall of its own.
    let before = std::fs::read_to_string(&trace)
        .unwrap_or_default()
        .rfind('\n')
        .map_or(0, |i| i + 1);
    for _ in 0..MEASURED {
        assert_eq!(s.get(&url), (200, "deep\n".to_string()));
    }
    // Let strace write out, then detach.
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: signalling our own child process by its pid.
    unsafe { libc::kill(strace.id() as i32, libc::SIGINT) };
    let _ = strace.wait();
    let text = std::fs::read_to_string(&trace).unwrap();
    let measured = &text[before..];
    // A request may arrive in two reads ("GET " then the rest): count the
    // reads that carry the request's path.
    let served = measured
        .lines()
        .filter(|l| {
            l.contains("recvfrom") && l.contains("\"/l0/l1/") || l.contains("\"GET /l0/l1/")
        })
        .count();
    assert!(
        served >= MEASURED,
        "the trace does not show the measured requests ({served} read):\n{measured}"
    );
    let config: Vec<&str> = measured
        .lines()
        .filter(|l| l.contains(".htaccess"))
        .collect();
    let file_system: Vec<&str> = measured
        .lines()
        .filter(|l| !l.contains(" read(") && !l.contains(" recvfrom(") && !l.contains("resumed>"))
        .collect();
    assert!(
        file_system.is_empty(),
        "{} file-system syscalls in steady state, e.g.:\n{}",
        file_system.len(),
        file_system
            .iter()
            .take(10)
            .copied()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        config.is_empty(),
        "{} syscalls on access files in steady state, e.g.:\n{}",
        config.len(),
        config
            .iter()
            .take(10)
            .copied()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
