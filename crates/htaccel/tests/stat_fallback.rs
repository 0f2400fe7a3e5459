//! Where inotify does not reach, access files are revalidated by `stat`
//! every `AccessFileCheckInterval`. `AccessFileWatch Off` forces that mode:
//! with an interval of 0 every request checks (Apache's behaviour); with 1s
//! a change is trusted-stale for at most about a second.

mod common;

use common::{Server, TempDir};
use std::time::{Duration, Instant};

fn config(root: &std::path::Path, interval: &str) -> String {
    format!(
        "LoadModule authz_core_module modules/mod_authz_core.so\nLoadModule mime_module modules/mod_mime.so\nLoadModule dir_module modules/mod_dir.so\nListen 127.0.0.1:@PORT@\nServerName localhost\nErrorLog /dev/stderr\nTypesConfig /etc/mime.types\n\
         DocumentRoot \"{root}\"\nAccessFileWatch Off\nAccessFileCheckInterval {interval}\n\
         <Directory \"{root}\">\n  AllowOverride All\n  Require all granted\n</Directory>\n",
        root = root.display()
    )
}

#[test]
fn interval_zero_checks_on_every_request() {
    let site = TempDir::new("poll0");
    let logs = TempDir::new("poll0-logs");
    site.write("sub/a.txt", "A\n");
    let s = Server::with_config(&config(site.path(), "0"), logs.path());
    assert_eq!(s.get("/sub/a.txt").0, 200);
    for _ in 0..3 {
        site.write("sub/.htaccess", "Require all denied\n");
        assert_eq!(s.get("/sub/a.txt").0, 403);
        std::fs::remove_file(site.path().join("sub/.htaccess")).unwrap();
        assert_eq!(s.get("/sub/a.txt").0, 200);
        site.write("sub/a.txt", "changed body\n");
        assert_eq!(s.get("/sub/a.txt").1, "changed body\n");
        site.write("sub/a.txt", "A\n");
        assert_eq!(s.get("/sub/a.txt").1, "A\n");
    }
}

#[test]
fn interval_one_second_bounds_staleness() {
    let site = TempDir::new("poll1");
    let logs = TempDir::new("poll1-logs");
    site.write("sub/a.txt", "A\n");
    let s = Server::with_config(&config(site.path(), "1"), logs.path());
    for round in 0..2 {
        // Let the level's last check age past the interval, so the next
        // request revalidates it (and starts a new interval).
        std::thread::sleep(Duration::from_millis(1100));
        assert_eq!(s.get("/sub/a.txt").0, 200);
        site.write("sub/.htaccess", "Require all denied\n");
        let changed = Instant::now();
        assert_eq!(
            s.get("/sub/a.txt").0,
            200,
            "round {round}: within the interval the previous check is trusted"
        );
        let seen = loop {
            let (status, _) = s.get("/sub/a.txt");
            if status == 403 {
                break changed.elapsed();
            }
            assert_eq!(status, 200);
            assert!(
                changed.elapsed() < Duration::from_secs(5),
                "change never seen"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(
            seen <= Duration::from_millis(2000),
            "round {round}: seen after {seen:?}"
        );
        std::fs::remove_file(site.path().join("sub/.htaccess")).unwrap();
    }
}

/// An access file that turns into a symlink loop is not "no access file":
/// its stamp must differ from an absent file's, so that the `stat`
/// revalidation notices it and the directory fails closed (403), as Apache
/// answers it on every request. (The harness cannot ask Apache about
/// `AccessFileWatch Off`; `security/access-file-errors` compares the
/// answers themselves.)
#[test]
fn a_symlink_loop_appearing_is_noticed_and_fails_closed() {
    let site = TempDir::new("poll-loop");
    let logs = TempDir::new("poll-loop-logs");
    site.write("sub/a.txt", "A\n");
    let s = Server::with_config(&config(site.path(), "0"), logs.path());
    let ht = site.path().join("sub/.htaccess");
    for _ in 0..2 {
        assert_eq!(s.get("/sub/a.txt").0, 200);
        std::os::unix::fs::symlink(".htaccess", &ht).unwrap();
        assert_eq!(s.get("/sub/a.txt").0, 403, "{}", s.error_log());
        std::fs::remove_file(&ht).unwrap();
    }
    let log = s.error_log();
    assert!(
        log.lines().any(
            |l| l.contains("(40)Too many levels of symbolic links: [client ")
                && l.contains("AH00529: ")
        ),
        "{log}"
    );
}
