//! Starting and, above all, stopping the servers under test.
//!
//! Apache forks workers that switch to `www-data`, so killing the process we
//! started is not enough. Each server gets its own process group, is asked to
//! stop with SIGTERM (Apache then stops its workers), and the whole group is
//! killed if anything of it is left. Servers also get SIGTERM from the kernel
//! if the harness dies (`PR_SET_PDEATHSIG`), and a global list lets the
//! time-limit watchdog kill everything before it exits.
//!
//! Two libc calls are declared here rather than pulling in a crate: `kill`
//! (signal a process group) and `prctl` (parent-death signal).

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::sync::Mutex;
use std::thread::sleep;
use std::time::{Duration, Instant};

const SIGKILL: i32 = 9;
const SIGTERM: i32 = 15;
const PR_SET_PDEATHSIG: i32 = 1;

extern "C" {
    fn kill(pid: i32, sig: i32) -> i32;
    fn prctl(option: i32, ...) -> i32;
}

/// Process groups of the servers currently running.
static LIVE: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// A server process (and its process group), stopped when dropped.
pub struct Process {
    child: Child,
    pgid: i32,
    stopped: bool,
}

impl Process {
    /// Starts `cmd` in a new process group that dies with the harness.
    pub fn spawn(mut cmd: Command) -> io::Result<Process> {
        cmd.process_group(0);
        // SAFETY: the closure runs between fork and exec and only makes one
        // async-signal-safe system call.
        unsafe {
            cmd.pre_exec(|| {
                prctl(PR_SET_PDEATHSIG, SIGTERM as std::ffi::c_ulong);
                Ok(())
            });
        }
        let child = cmd.spawn()?;
        let pgid = child.id() as i32;
        LIVE.lock().unwrap_or_else(|e| e.into_inner()).push(pgid);
        Ok(Process {
            child,
            pgid,
            stopped: false,
        })
    }

    /// The exit status if the process has already ended.
    /// Whether this process has a socket listening on TCP `port` (from
    /// /proc): a connection that succeeds may reach another program that
    /// took the port first, before this one failed to bind it.
    pub fn listens_on(&self, port: u16) -> bool {
        let pid = self.child.id();
        let mut inodes = Vec::new();
        for table in ["tcp", "tcp6"] {
            let text =
                std::fs::read_to_string(format!("/proc/{pid}/net/{table}")).unwrap_or_default();
            for line in text.lines().skip(1) {
                let f: Vec<&str> = line.split_whitespace().collect();
                let local = f
                    .get(1)
                    .and_then(|a| a.rsplit(':').next())
                    .and_then(|p| u16::from_str_radix(p, 16).ok());
                if local == Some(port) && f.get(3) == Some(&"0A") {
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
                .is_ok_and(|l| inodes.iter().any(|i| l.to_string_lossy() == *i))
        })
    }

    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// SIGTERM, a grace period, then SIGKILL for whatever is left of the group.
    pub fn stop(&mut self) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        if self.exited().is_none() {
            signal(self.pgid, SIGTERM);
            let until = Instant::now() + Duration::from_secs(10);
            while self.exited().is_none() && Instant::now() < until {
                sleep(Duration::from_millis(20));
            }
            if self.exited().is_none() {
                signal(-self.pgid, SIGKILL);
                let _ = self.child.wait();
            }
        }
        // Workers outlive their parent only briefly, but do not leave them.
        for _ in 0..100 {
            if !group_alive(self.pgid) {
                break;
            }
            signal(-self.pgid, SIGKILL);
            sleep(Duration::from_millis(20));
        }
        LIVE.lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|&p| p != self.pgid);
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Kills every running server group at once (the watchdog's last act).
pub fn kill_all() {
    let groups = LIVE.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for pgid in groups {
        signal(-pgid, SIGKILL);
    }
}

fn signal(pid: i32, sig: i32) {
    // SAFETY: kill(2) has no memory-safety preconditions.
    unsafe {
        kill(pid, sig);
    }
}

/// Whether any process still belongs to group `pgid` (from /proc).
fn group_alive(pgid: i32) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return false;
    };
    dir.flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .any(|stat| {
            // "pid (comm) state ppid pgrp ...": comm may hold spaces and parens
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(2))
                .and_then(|g| g.parse::<i32>().ok())
                == Some(pgid)
        })
}

/// A port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> io::Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}
