//! `htaccel serve --php=unix:SOCKET` with a real, private PHP-FPM pool:
//! scripts run; killing PHP-FPM under load gives 502 or 503 (never a hang
//! or a crash); service resumes as soon as PHP-FPM is back.
//!
//! Needs Debian's `php-fpm` (scripts/test.sh installs it); without it the
//! test says so and passes.

mod common;

use common::{Server, TempDir};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn php_fpm_binary() -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/sbin")
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("php-fpm"))
        })
        .collect();
    found.sort();
    found.pop()
}

/// A private PHP-FPM pool, killed (whole process group) on drop.
struct Fpm {
    child: Child,
}

impl Fpm {
    fn start(bin: &Path, dir: &Path) -> Fpm {
        let sock = dir.join("fpm.sock");
        let root = is_root();
        let conf = dir.join("fpm.conf");
        let user = if root {
            "user = www-data\ngroup = www-data\n"
        } else {
            ""
        };
        std::fs::write(
            &conf,
            format!(
                "[global]\nerror_log = {}/fpm.log\ndaemonize = no\n[t]\n{user}listen = {}\nlisten.mode = 0666\npm = static\npm.max_children = 3\n",
                dir.display(),
                sock.display()
            ),
        )
        .unwrap();
        let mut cmd = Command::new(bin);
        cmd.args(["-n", "-F", "-y"]).arg(&conf);
        if root {
            cmd.arg("-R");
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        let child = cmd.spawn().expect("start php-fpm");
        let start = Instant::now();
        while std::os::unix::net::UnixStream::connect(&sock).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "php-fpm did not listen on {}",
                sock.display()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Fpm { child }
    }

    fn kill(&mut self) {
        // SAFETY: kill(2) has no memory-safety preconditions.
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

impl Drop for Fpm {
    fn drop(&mut self) {
        self.kill();
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn killing_php_fpm_under_load_gives_502_or_503_and_service_resumes() {
    let Some(bin) = php_fpm_binary() else {
        eprintln!("php-fpm is not installed: skipped (scripts/test.sh installs it)");
        return;
    };
    let site = TempDir::new("php");
    let run = TempDir::new("php-run");
    let logs = TempDir::new("php-logs");
    for d in [site.path(), run.path()] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    site.write("fast.php", "<?php echo 'fast ', $_SERVER['SCRIPT_NAME'];");
    site.write("slow.php", "<?php usleep(200000); echo 'slow';");
    site.write("index.php", "<?php echo 'index';");
    for f in ["fast.php", "slow.php", "index.php"] {
        let p = site.path().join(f);
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let mut fpm = Fpm::start(&bin, run.path());
    let php = format!("--php=unix:{}", run.path().join("fpm.sock").display());
    let mut server = Server::spawn_with(
        &[
            "serve",
            &site.path().to_string_lossy(),
            &php,
            "--listen",
            "127.0.0.1:@PORT@",
        ],
        logs.path(),
    );
    let (status, body) = server.get("/fast.php");
    assert_eq!(status, 200);
    // Chunked, as Apache sends a script's output.
    assert_eq!(body, "e\r\nfast /fast.php\r\n0\r\n\r\n");
    let (status, body) = server.get("/");
    assert!(
        status == 200 && body.contains("index"),
        "index.php as index"
    );

    // Load, then kill PHP-FPM in the middle of it.
    let seen = common::under_load(server.port, "/slow.php", 6, || {
        std::thread::sleep(Duration::from_millis(700));
        fpm.kill();
        std::thread::sleep(Duration::from_millis(700));
    });
    assert!(seen.contains(&200), "{seen:?}");
    assert!(
        seen.iter().any(|s| *s == 502 || *s == 503),
        "no failure seen: {seen:?}"
    );
    assert!(seen.iter().all(|s| [200, 502, 503].contains(s)), "{seen:?}");
    assert_eq!(server.get("/fast.php").0, 503, "PHP-FPM is gone");

    // Back: the very next request is served.
    let _fpm = Fpm::start(&bin, run.path());
    let (status, body) = server.get("/fast.php");
    assert!(status == 200 && body.contains("fast /fast.php"), "{body}");
    assert!(server.child.try_wait().unwrap().is_none(), "htaccel exited");
    assert!(
        server.error_log().contains("AH01079"),
        "the refused connections are logged:\n{}",
        server.error_log()
    );
}
