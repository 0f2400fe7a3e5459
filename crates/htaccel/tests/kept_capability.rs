//! Started as root, `htaccel serve` switches to `www-data` and keeps one
//! capability, `CAP_LEASE` (so that it can ask the kernel whether a writer
//! holds an access file open, whoever owns the file), and nothing else:
//! not in the effective set, not in the permitted set, on every thread.
//! Apache keeps none; this is htaccel's own (docs/deviations.md).

mod common;

use common::{Server, TempDir};

/// A capability set from `/proc/PID/task/TID/status`.
fn capability(status: &str, name: &str) -> u64 {
    let line = status
        .lines()
        .find(|l| l.starts_with(name))
        .unwrap_or_else(|| panic!("no {name} in {status}"));
    u64::from_str_radix(line.split_whitespace().nth(1).unwrap(), 16).unwrap()
}

#[test]
fn only_cap_lease_survives_the_switch_to_user() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("not root: nothing to switch from, skipped");
        return;
    }
    let site = TempDir::new("caps");
    let logs = TempDir::new("caps-logs");
    site.write("a.txt", "a\n");
    let s = Server::serve(site.path(), logs.path());
    assert_eq!(s.get("/a.txt").0, 200);
    let name = std::ffi::CString::new("www-data").unwrap();
    // SAFETY: getpwnam returns static storage or null; read at once.
    let www_data = unsafe {
        let pw = libc::getpwnam(name.as_ptr());
        assert!(!pw.is_null(), "no www-data user");
        (*pw).pw_uid.to_string()
    };
    let lease = 1u64 << 28;
    let tasks = std::fs::read_dir(format!("/proc/{}/task", s.pid())).unwrap();
    let mut threads = 0;
    for task in tasks {
        let status = std::fs::read_to_string(task.unwrap().path().join("status")).unwrap();
        let uid = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
        assert!(
            uid.split_whitespace().skip(1).all(|u| u == www_data),
            "{uid}"
        );
        assert_eq!(capability(&status, "CapEff:"), lease, "{status}");
        assert_eq!(capability(&status, "CapPrm:"), lease, "{status}");
        assert_eq!(capability(&status, "CapInh:"), 0, "{status}");
        assert_eq!(capability(&status, "CapAmb:"), 0, "{status}");
        threads += 1;
    }
    assert!(threads >= 2, "worker threads seen: {threads}");
}
