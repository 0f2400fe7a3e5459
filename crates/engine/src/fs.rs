//! File metadata as the request phases need it, in one place, so that the
//! metadata cache (invalidated by the file-system watcher) sits behind
//! these functions without the phases knowing.

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

/// `stat(2)`, following symlinks; answered from the metadata cache while
/// the watcher vouches for it (see [`crate::statcache`]).
pub fn stat(path: &Path) -> std::io::Result<FileInfo> {
    crate::statcache::lookup(crate::watch::global(), path, true)
}

/// `lstat(2)`, through the same cache.
pub fn lstat(path: &Path) -> std::io::Result<FileInfo> {
    crate::statcache::lookup(crate::watch::global(), path, false)
}
