//! Open files kept between requests, so that a file served again costs no
//! `open`, `fstat` and `close` (nginx's `open_file_cache`, h2o's file cache).
//!
//! An entry is used only while the file's metadata, as the walk just saw
//! it, is the metadata the file had when it was opened: same device and
//! inode, size, modification time and mode. That metadata comes from the
//! metadata cache ([`crate::statcache`]), which the file-system watcher keeps
//! true (or which stats again where nothing watches), so a file replaced,
//! rewritten, truncated or made unreadable is opened again on the next
//! request, exactly when Apache's own `open` would see the change. Content
//! written in place without any metadata change is still read fresh: the
//! descriptor reads the same inode the path names, and the cache holds no
//! bytes (small files excepted: see [`CONTENT_MAX`]). While a descriptor is held its inode cannot be reused, so an
//! equal inode number always means the same file.
//!
//! One cache per worker thread (the server runs one thread per core), so
//! lookups take no lock; each is bounded by [`ENTRIES_PER_THREAD`]
//! descriptors, and all of them together by a sixteenth of the process's
//! descriptor limit, so that connections never run short of descriptors.

use crate::clock::ClockMap;
use crate::fs::FileInfo;
use crate::http::default_handler::StaticFile;
use std::cell::RefCell;
use std::sync::{Arc, OnceLock};

/// Descriptors one worker thread keeps open at most. A site's visitors
/// ask for thousands of distinct files; the clock keeps the ones asked
/// for often.
pub const ENTRIES_PER_THREAD: usize = 1024;

/// Descriptors one thread may keep: [`ENTRIES_PER_THREAD`], or less when a
/// sixteenth of `RLIMIT_NOFILE` shared among the cores is less.
pub(crate) fn capacity() -> usize {
    static CAPACITY: OnceLock<usize> = OnceLock::new();
    *CAPACITY.get_or_init(|| {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the struct it is given.
        let soft = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
            usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX)
        } else {
            1024
        };
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        (soft / 16 / cores).clamp(1, ENTRIES_PER_THREAD)
    })
}

/// Files up to this size are also kept in memory, read once when opened,
/// and sent without a `pread`. The equal status-change time
/// ([`FileInfo::ctime_ns`]) is what vouches for the bytes: every write moves
/// it.
pub const CONTENT_MAX: u64 = 64 * 1024;

/// Bytes of content one worker thread keeps in memory at most; past it a
/// small file is kept as its descriptor only.
pub const CONTENT_PER_THREAD: usize = 16 << 20;

struct Entry {
    seen: FileInfo,
    file: StaticFile,
}

/// One thread's open files, by path, and the bytes of content they hold.
#[derive(Default)]
struct Open {
    clock: ClockMap<Entry>,
    content_bytes: usize,
}

impl Open {
    fn remove(&mut self, path: &str) {
        if let Some(old) = self.clock.remove(path) {
            self.content_bytes -= content_len(&old);
        }
    }

    fn insert(&mut self, path: &str, entry: Entry) {
        self.content_bytes += content_len(&entry);
        if let Some(old) = self.clock.insert(path, entry) {
            self.content_bytes -= content_len(&old);
        }
    }

    /// Room for one more entry: one goes by the clock when full.
    fn make_room(&mut self) {
        if self.clock.len() >= capacity() {
            if let Some(old) = self.clock.evict_one() {
                self.content_bytes -= content_len(&old);
            }
        }
    }
}

fn content_len(e: &Entry) -> usize {
    e.file.content.as_ref().map_or(0, |c| c.len())
}

thread_local! {
    // Paths from requests are the keys: the clock's seeded hash, much
    // cheaper than SipHash on long paths, still unpredictable to clients.
    static OPEN: RefCell<Open> = RefCell::new(Open::default());
}

/// The regular file at `path`, whose metadata the walk found to be `seen`:
/// a descriptor opened for an earlier request when the file is still the
/// one it names, else opened now (and kept when its metadata matches).
pub fn open(path: &str, seen: &FileInfo) -> std::io::Result<StaticFile> {
    let hit = OPEN.with(|c| {
        let mut cache = c.borrow_mut();
        match cache.clock.get_mut(path) {
            Some(e) if same_file(&e.seen, seen) => Some(e.file.clone()),
            Some(_) => {
                cache.remove(path);
                None
            }
            None => None,
        }
    });
    if let Some(f) = hit {
        crate::stats::bump(crate::stats::Counter::FileCacheHits);
        return Ok(f);
    }
    crate::stats::bump(crate::stats::Counter::FileCacheOpens);
    // The walk saw a regular file; if something else took its place since,
    // it is refused rather than opened in a way that could block.
    let (opened, meta) = crate::fs::open_regular(std::path::Path::new(path))?;
    let mut file = StaticFile::with_metadata(Arc::new(opened), &meta);
    // Kept only when the open file is the one the walk saw; otherwise it
    // changed in between and the next request looks again.
    if file.stamp.inode == seen.inode
        && file.stamp.size == seen.size
        && file.stamp.mtime_us == seen.mtime_us
    {
        OPEN.with(|c| {
            // No entry for `path` is left: the lookup above dropped a
            // stale one.
            let mut cache = c.borrow_mut();
            cache.make_room();
            if file.stamp.size <= CONTENT_MAX
                && cache.content_bytes + file.stamp.size as usize <= CONTENT_PER_THREAD
            {
                file.read_content();
            }
            cache.insert(
                path,
                Entry {
                    seen: *seen,
                    file: file.clone(),
                },
            );
        });
    }
    Ok(file)
}

fn same_file(a: &FileInfo, b: &FileInfo) -> bool {
    a.dev == b.dev
        && a.inode == b.inode
        && a.size == b.size
        && a.mtime_us == b.mtime_us
        && a.mode == b.mode
        && a.uid == b.uid
        && a.ctime_ns == b.ctime_ns
}

/// Forget every descriptor this thread holds (tests).
#[cfg(test)]
pub fn clear() {
    OPEN.with(|c| *c.borrow_mut() = Open::default());
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A fresh directory of this test's own.
    fn scratch(tag: &str) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("htaccel-ofc-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        p
    }

    fn info(path: &std::path::Path) -> FileInfo {
        FileInfo::from_meta(&std::fs::metadata(path).unwrap())
    }

    fn body(f: &StaticFile) -> Vec<u8> {
        use std::os::unix::fs::FileExt;
        let mut v = vec![0; f.stamp.size as usize];
        f.file.read_exact_at(&mut v, 0).unwrap();
        v
    }

    #[test]
    fn reuses_the_descriptor_while_the_file_is_unchanged() {
        clear();
        let dir = scratch("reuse");
        let p = dir.join("a.txt");
        std::fs::write(&p, b"one").unwrap();
        let path = p.to_str().unwrap();
        let first = open(path, &info(&p)).unwrap();
        let second = open(path, &info(&p)).unwrap();
        assert!(Arc::ptr_eq(&first.file, &second.file));
        assert_eq!(body(&second), b"one");
    }

    #[test]
    fn a_replaced_file_is_opened_again() {
        clear();
        let dir = scratch("replaced");
        let p = dir.join("a.txt");
        std::fs::write(&p, b"one").unwrap();
        let path = p.to_str().unwrap();
        let first = open(path, &info(&p)).unwrap();
        // Replaced by rename: another inode (the old one is still held).
        let tmp = dir.join("a.tmp");
        std::fs::write(&tmp, b"two!").unwrap();
        std::fs::rename(&tmp, &p).unwrap();
        let second = open(path, &info(&p)).unwrap();
        assert!(!Arc::ptr_eq(&first.file, &second.file));
        assert_eq!(body(&second), b"two!");
    }

    #[test]
    fn a_file_grown_in_place_is_opened_again() {
        clear();
        let dir = scratch("grown");
        let p = dir.join("a.txt");
        std::fs::write(&p, b"one").unwrap();
        let path = p.to_str().unwrap();
        let first = open(path, &info(&p)).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .unwrap()
            .write_all(b" two")
            .unwrap();
        let second = open(path, &info(&p)).unwrap();
        assert!(!Arc::ptr_eq(&first.file, &second.file));
        assert_eq!(second.stamp.size, 7);
        assert_eq!(body(&second), b"one two");
    }

    #[test]
    fn small_content_is_kept_and_a_rewrite_with_the_old_mtime_still_seen() {
        clear();
        let dir = scratch("content");
        let p = dir.join("a.txt");
        std::fs::write(&p, b"one").unwrap();
        let mtime = std::fs::metadata(&p).unwrap().modified().unwrap();
        let path = p.to_str().unwrap();
        let first = open(path, &info(&p)).unwrap();
        assert_eq!(first.content.as_deref(), Some(&b"one"[..]));
        // Same size, and the modification time put back: only the
        // status-change time tells.
        std::thread::sleep(std::time::Duration::from_millis(10));
        std::fs::write(&p, b"two").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        let second = open(path, &info(&p)).unwrap();
        assert_eq!(second.content.as_deref(), Some(&b"two"[..]));
    }

    #[test]
    fn stays_bounded() {
        clear();
        let dir = scratch("bounded");
        for i in 0..capacity() + 10 {
            let p = dir.join(format!("f{i}"));
            std::fs::write(&p, b"x").unwrap();
            open(p.to_str().unwrap(), &info(&p)).unwrap();
        }
        OPEN.with(|c| assert_eq!(c.borrow().clock.len(), capacity()));
    }
}
