//! Whether anyone holds a file open for writing, asked of the kernel.
//!
//! The watcher hears of a write from its first `IN_MODIFY` on, but a
//! writer's truncating system call (`open` with `O_TRUNC`, `ftruncate`)
//! empties the file before that event is queued, and on a journalling file
//! system under load it can sit there for hundreds of milliseconds. The
//! writer's open file is visible all along, though: the kernel refuses a
//! read lease (`F_SETLEASE`, `F_RDLCK`) with `EAGAIN` while any process has
//! the file open for writing. Taking one right after a read and releasing
//! it at once therefore tells whether a writer could have changed what was
//! read; a writer that had already closed has queued its `IN_CLOSE_WRITE`
//! before its open count dropped, so the watcher reports it.
//!
//! Leases are allowed to the file's owner and to holders of `CAP_LEASE`;
//! elsewhere (htaccel running as another user than the site's) the answer
//! is [`Writers::Unknown`]. A writer opening the file in the microseconds
//! the lease is held waits for its release (one opening it with
//! `O_NONBLOCK` is told `EWOULDBLOCK` instead); the lease-break signal is
//! set to `SIGURG`, which a process ignores unless it asks for it.

use std::os::fd::AsRawFd;

/// `fcntl`'s `F_SETSIG` (Linux, every architecture); the libc crate does
/// not name it.
const F_SETSIG: libc::c_int = 10;

/// What the kernel says about writers of an open file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writers {
    /// Nobody has the file open for writing.
    None,
    /// Somebody does.
    Open,
    /// Not allowed to ask (not the owner, no `CAP_LEASE`, or a file system
    /// without leases).
    Unknown,
}

/// Ask about `file`, which this process has open read-only.
pub fn of(file: &std::fs::File) -> Writers {
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is open for the call's duration; these fcntl operations
    // take integer arguments only.
    unsafe {
        if libc::fcntl(fd, F_SETSIG, libc::SIGURG) != 0 {
            return Writers::Unknown;
        }
        if libc::fcntl(fd, libc::F_SETLEASE, libc::F_RDLCK) == 0 {
            libc::fcntl(fd, libc::F_SETLEASE, libc::F_UNLCK);
            return Writers::None;
        }
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EAGAIN) => Writers::Open,
        _ => Writers::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_writer_is_seen_until_it_closes() {
        let path = std::env::temp_dir().join(format!("htaccel-writers-{}", std::process::id()));
        std::fs::write(&path, "x").unwrap();
        let read = || of(&std::fs::File::open(&path).unwrap());
        // Tests run as the file's owner: the answer is known.
        assert_eq!(read(), Writers::None);
        let writer = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        assert_eq!(read(), Writers::Open);
        let reader = std::fs::File::open(&path).unwrap();
        assert_eq!(read(), Writers::Open, "other readers do not hide it");
        drop(writer);
        assert_eq!(read(), Writers::None, "readers are no writers");
        drop(reader);
        std::fs::remove_file(&path).unwrap();
    }
}
