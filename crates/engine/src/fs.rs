//! File metadata as the request phases need it, in one place, so that the
//! metadata cache (invalidated by the file-system watcher) sits behind
//! these functions without the phases knowing; and the one way the request
//! path opens a file to read it ([`open_nonblocking`]), so that a FIFO or a
//! device put where a file was expected never blocks a worker thread (each
//! serves every connection of its core).

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::SystemTime;

/// What kind of object a path names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Symlink,
    Other,
}

/// The facts about a file that responses depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileInfo {
    pub kind: Kind,
    pub size: u64,
    pub mtime: SystemTime,
    /// Modification time in microseconds since the epoch (Apache's `apr_time_t`).
    pub mtime_us: i64,
    pub inode: u64,
    pub dev: u64,
    pub uid: u32,
    pub mode: u32,
    /// Status-change time in nanoseconds: moves on every write and cannot be
    /// set back, so an equal value means the content is the one seen before.
    pub ctime_ns: i64,
}

impl FileInfo {
    pub(crate) fn from_meta(m: &std::fs::Metadata) -> FileInfo {
        let ft = m.file_type();
        let kind = if ft.is_symlink() {
            Kind::Symlink
        } else if ft.is_dir() {
            Kind::Dir
        } else if ft.is_file() {
            Kind::File
        } else {
            Kind::Other
        };
        FileInfo {
            kind,
            size: m.len(),
            mtime: m.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            mtime_us: m.mtime() * 1_000_000 + m.mtime_nsec() / 1000,
            inode: m.ino(),
            dev: m.dev(),
            uid: m.uid(),
            mode: m.mode(),
            ctime_ns: m.ctime() * 1_000_000_000 + m.ctime_nsec(),
        }
    }
}

/// `stat(2)`, following symlinks, of a file name in the text form the
/// request phases hold (`crate::path_text`); answered from the metadata
/// cache while the watcher vouches for it (see [`crate::statcache`]).
pub fn stat(path: &str) -> std::io::Result<FileInfo> {
    crate::statcache::lookup(crate::watch::global(), path, true)
}

/// `lstat(2)`, through the same cache.
pub fn lstat(path: &str) -> std::io::Result<FileInfo> {
    crate::statcache::lookup(crate::watch::global(), path, false)
}

/// Open `path` for reading the way every file on the request path is
/// opened: `O_NONBLOCK`, so that opening a FIFO without a writer (or a
/// device that waits) returns at once instead of holding the worker
/// thread, and `O_CLOEXEC`. Returns the file and its `fstat` metadata: the
/// caller decides what a file that is not regular means (Apache's answer
/// for it), and must not read from one, since a read could block too
/// (`O_NONBLOCK` has no effect on a regular file's reads).
pub fn open_nonblocking(path: &Path) -> std::io::Result<(std::fs::File, std::fs::Metadata)> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(crate::path_text::os_path(path))?;
    let meta = file.metadata()?;
    Ok((file, meta))
}

/// [`open_nonblocking`] for a file the caller will read whole: anything
/// but a regular file is refused with `EBADF`, as Apache's
/// `ap_pcfg_openfile` refuses it ("not a regular file").
pub fn open_regular(path: &Path) -> std::io::Result<(std::fs::File, std::fs::Metadata)> {
    let (file, meta) = open_nonblocking(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::from_raw_os_error(libc::EBADF));
    }
    Ok((file, meta))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_without_writer_opens_at_once_and_is_not_regular() {
        let dir = std::env::temp_dir().join(format!("htaccel-fs-fifo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("f");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path that lives for the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let (_, meta) = open_nonblocking(&fifo).unwrap();
        use std::os::unix::fs::FileTypeExt;
        assert!(meta.file_type().is_fifo());
        let e = open_regular(&fifo).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EBADF));
        assert_eq!(
            open_regular(Path::new("/dev/null"))
                .unwrap_err()
                .raw_os_error(),
            Some(libc::EBADF)
        );
        assert_eq!(
            open_regular(&dir).unwrap_err().raw_os_error(),
            Some(libc::EBADF)
        );
        std::fs::write(dir.join("r"), "x").unwrap();
        assert!(open_regular(&dir.join("r")).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
