//! The file-metadata cache behind [`crate::fs::stat`] and
//! [`crate::fs::lstat`]: what the directory walk, the static sender and
//! (later) mod_rewrite's `-f`/`-d` tests ask of the disk, answered from
//! memory while the watcher vouches for it.
//!
//! An answer is kept without expiry only when every directory from `/` down
//! to the file's own is watched ([`Watch::ensure_ancestors`]): then any
//! change to the entry, to a directory on its path, or to the permissions
//! above it arrives as an event and drops the answer before the next
//! request looks. Elsewhere an answer lives for `AccessFileCheckInterval`
//! (not at all when that is 0, which is Apache's behaviour).
//!
//! Bounded by `StatCacheEntries`, with the clock algorithm (a second-chance
//! approximation of LRU whose hits only set a bit under a read lock).
//! Answers that end in a symlink are not kept for `stat`, since the target
//! lives in a directory nobody watches; "does not exist" answers are kept,
//! since most of a site's misses repeat.

use crate::fs::FileInfo;
use crate::watch::{Fill, Mode, Watch};
// Paths from requests are the keys: a seeded hash, much cheaper than
// SipHash on long paths, still unpredictable to clients.
use foldhash::HashMap;
use std::cell::Cell;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Instant;

/// A cached answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Answer {
    Info(FileInfo),
    /// `ENOENT` or `ENOTDIR`.
    Missing(i32),
}

impl Answer {
    fn result(self) -> io::Result<FileInfo> {
        match self {
            Answer::Info(i) => Ok(i),
            Answer::Missing(e) => Err(io::Error::from_raw_os_error(e)),
        }
    }
}

struct Slot {
    /// Shared with the index's key (and with the other answer for the same
    /// path): one allocation per path stored, none per eviction.
    path: Arc<str>,
    follow: bool,
    answer: Answer,
    expires: Option<Instant>,
    referenced: AtomicBool,
}

#[derive(Default)]
struct Clock {
    /// Index into `slots`, for `lstat` (0) and `stat` (1) answers.
    index: [HashMap<Arc<str>, usize>; 2],
    slots: Vec<Option<Slot>>,
    free: Vec<usize>,
    hand: usize,
}

/// What a change drops from the cache.
pub enum Forget<'a> {
    /// `entry` changed inside `dir`, which changed with it when the entry
    /// came, went or was renamed (`structural`).
    Entry {
        dir: &'a str,
        entry: &'a str,
        structural: bool,
    },
    /// Everything at or below the directory path (and the directory itself).
    Subtree(&'a str),
    All,
    Nothing,
}

/// The metadata cache.
pub struct StatCache {
    clock: RwLock<Clock>,
    capacity: AtomicUsize,
}

impl StatCache {
    pub fn new(capacity: usize) -> StatCache {
        StatCache {
            clock: RwLock::new(Clock::default()),
            capacity: AtomicUsize::new(capacity),
        }
    }

    fn read(&self) -> RwLockReadGuard<'_, Clock> {
        self.clock.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Clock> {
        self.clock.write().unwrap_or_else(|e| e.into_inner())
    }

    pub fn set_capacity(&self, n: usize) {
        self.capacity.store(n, Ordering::SeqCst);
        let mut c = self.write();
        if c.slots.len() > n {
            *c = Clock::default();
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity.load(Ordering::Relaxed)
    }

    pub fn len(&self) -> usize {
        let c = self.read();
        c.index[0].len() + c.index[1].len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn clear(&self) {
        *self.write() = Clock::default();
        crate::watch::note_change();
    }

    fn get(&self, path: &str, follow: bool) -> Option<Answer> {
        let c = self.read();
        let slot = c.slots[*c.index[follow as usize].get(path)?].as_ref()?;
        // Only a polled entry expires: the clock is read for it alone.
        if let Some(e) = slot.expires {
            if Instant::now() >= e {
                return None;
            }
            note_unwatched();
        }
        slot.referenced.store(true, Ordering::Relaxed);
        Some(slot.answer)
    }

    /// Store answers read under `fill`, unless a change came in meanwhile.
    fn store(
        &self,
        fill: &Fill<'_>,
        answers: &[(bool, Answer)],
        path: &str,
        expires: Option<Instant>,
    ) {
        let cap = self.capacity();
        if cap == 0 {
            return;
        }
        let key: Arc<str> = Arc::from(path);
        let mut c = self.write();
        if !fill.still_valid() {
            return;
        }
        for &(follow, answer) in answers {
            c.insert(cap, &key, follow, answer, expires);
        }
    }

    /// Drop what a change made untrue.
    ///
    /// Whether anything was dropped (and the counter moved); the watcher
    /// moves it for a change to an entry that was not cached too, since an
    /// answer about it may have been evicted while something derived from
    /// it is still kept.
    pub fn apply(&self, what: Forget<'_>) -> bool {
        match what {
            Forget::Nothing => return false,
            Forget::All => self.clear(),
            Forget::Entry {
                dir,
                entry,
                structural,
            } => {
                let mut c = self.write();
                let mut dropped = c.remove(entry);
                if structural {
                    dropped |= c.remove(dir_itself(dir));
                }
                if !dropped {
                    return false;
                }
            }
            Forget::Subtree(prefix) => {
                let mut c = self.write();
                c.remove(dir_itself(prefix));
                for f in 0..2 {
                    let gone: Vec<Arc<str>> = c.index[f]
                        .keys()
                        .filter(|k| k.starts_with(prefix))
                        .cloned()
                        .collect();
                    for k in gone {
                        c.remove_one(&k, f);
                    }
                }
            }
        }
        crate::watch::note_change();
        true
    }
}

/// `/a/b/` → `/a/b`, `/` → `/`.
fn dir_itself(dir: &str) -> &str {
    match dir.trim_end_matches('/') {
        "" => "/",
        d => d,
    }
}

impl Clock {
    fn insert(
        &mut self,
        cap: usize,
        path: &Arc<str>,
        follow: bool,
        answer: Answer,
        expires: Option<Instant>,
    ) {
        let f = follow as usize;
        let slot = Slot {
            path: Arc::clone(path),
            follow,
            answer,
            expires,
            referenced: AtomicBool::new(false),
        };
        if let Some(&i) = self.index[f].get(&**path) {
            self.slots[i] = Some(slot);
            return;
        }
        let i = if let Some(i) = self.free.pop() {
            i
        } else if self.slots.len() < cap {
            self.slots.push(None);
            self.slots.len() - 1
        } else {
            self.evict()
        };
        self.slots[i] = Some(slot);
        self.index[f].insert(Arc::clone(path), i);
    }

    /// The clock hand: the first slot not used since the hand last passed.
    fn evict(&mut self) -> usize {
        let n = self.slots.len();
        for _ in 0..2 * n + 1 {
            self.hand = (self.hand + 1) % n;
            let i = self.hand;
            match &self.slots[i] {
                Some(s) if s.referenced.swap(false, Ordering::Relaxed) => continue,
                Some(s) => {
                    let (path, f) = (Arc::clone(&s.path), s.follow as usize);
                    self.index[f].remove(&*path);
                    self.slots[i] = None;
                    return i;
                }
                None => return i,
            }
        }
        self.hand
    }

    /// Drop both answers for `path`; whether there was one.
    fn remove(&mut self, path: &str) -> bool {
        let lstat = self.remove_one(path, 0);
        self.remove_one(path, 1) || lstat
    }

    fn remove_one(&mut self, path: &str, f: usize) -> bool {
        let Some(i) = self.index[f].remove(path) else {
            return false;
        };
        self.slots[i] = None;
        self.free.push(i);
        true
    }
}

thread_local! {
    /// Set when this thread was given an answer that no watch vouches for
    /// (read from the disk uncached, or a polled entry).
    static UNWATCHED: Cell<bool> = const { Cell::new(false) };
}

fn note_unwatched() {
    UNWATCHED.with(|u| u.set(true));
    // Nor is an answer built from it kept.
    crate::answer_memo::note_volatile();
}

/// Whether any answer given to this thread since the last call came
/// without a watch vouching for it; clears the mark. Results built from
/// such answers hold only as long as their time allows.
pub fn take_unwatched() -> bool {
    UNWATCHED.with(|u| u.replace(false))
}

fn uncached(path: &str, follow: bool) -> io::Result<FileInfo> {
    note_unwatched();
    let path = crate::path_text::os_path(Path::new(path));
    let m = if follow {
        std::fs::metadata(&path)
    } else {
        std::fs::symlink_metadata(&path)
    };
    m.map(|m| FileInfo::from_meta(&m))
}

/// Whether an absolute path has no `//`, `/./` or `/../` (the cache keys
/// only paths in this form), found in one plain pass over its bytes.
fn is_clean(s: &str) -> bool {
    let b = s.as_bytes();
    // The bytes after each `/` decide: another `/`, or `.` and `..`
    // followed by `/`.
    b.iter().enumerate().all(|(i, &c)| {
        c != b'/'
            || !matches!(
                &b[i + 1..],
                [b'/', ..] | [b'.', b'/', ..] | [b'.', b'.', b'/', ..]
            )
    })
}

/// `stat` (`follow`) or `lstat` of `path` (in the text form of
/// `crate::path_text`, as the request phases hold file names), from the
/// cache when it can vouch for the answer.
pub fn lookup(watch: &Watch, path: &str, follow: bool) -> io::Result<FileInfo> {
    let cache = &watch.stats;
    if !path.starts_with('/')
        || cache.capacity() == 0
        || (!watch.is_watching() && watch.check_interval().is_zero())
        || !is_clean(path)
    {
        return uncached(path, follow);
    }
    // A trailing slash asks for a directory, following a final symlink.
    if path.len() > 1 && path.ends_with('/') {
        let trimmed = dir_itself(path);
        return lookup(watch, trimmed, true).and_then(|i| {
            if i.kind == crate::fs::Kind::Dir {
                Ok(i)
            } else {
                Err(io::Error::from_raw_os_error(libc::ENOTDIR))
            }
        });
    }
    if let Some(a) = cache.get(path, follow) {
        return a.result();
    }
    if watch.is_own_write(path) {
        // A log the server writes after every request: its events must
        // not count as changes, so nothing may be derived from a cached
        // answer about it.
        return uncached(path, follow);
    }
    let fill = watch.begin_fill();
    let expires = match watch.ensure_ancestors(path) {
        Mode::Watched => None,
        // A directory above is missing: whatever appears there first shows
        // in a directory nobody watches under this path.
        Mode::Absent => return uncached(path, follow),
        Mode::Polled => {
            let interval = watch.check_interval();
            if interval.is_zero() {
                return uncached(path, follow);
            }
            note_unwatched();
            Some(Instant::now() + interval)
        }
    };
    // One lstat answers both questions unless the path ends in a symlink.
    match std::fs::symlink_metadata(crate::path_text::os_path(Path::new(path))) {
        Ok(m) if m.file_type().is_symlink() => {
            let info = FileInfo::from_meta(&m);
            cache.store(&fill, &[(false, Answer::Info(info))], path, expires);
            if follow {
                uncached(path, true)
            } else {
                Ok(info)
            }
        }
        Ok(m) => {
            let a = Answer::Info(FileInfo::from_meta(&m));
            cache.store(&fill, &[(false, a), (true, a)], path, expires);
            a.result()
        }
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT) | Some(libc::ENOTDIR)) => {
            let a = Answer::Missing(e.raw_os_error().unwrap_or(libc::ENOENT));
            cache.store(&fill, &[(false, a), (true, a)], path, expires);
            Err(e)
        }
        Err(e) => {
            note_unwatched();
            if follow {
                uncached(path, true)
            } else {
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_paths_as_the_substring_tests_found_them() {
        for p in [
            "/", "/a", "/a/b", "/a/b/", "/a/.b", "/a/..b", "/a/b.", "/a/.", "/a/..", "/a/b..",
            "//", "/a//b", "/./a", "/a/./b", "/a/../b", "/../", "/a/b//",
        ] {
            let old = !(p.contains("/./") || p.contains("//") || p.contains("/../"));
            assert_eq!(is_clean(p), old, "{p}");
        }
    }
    use crate::watch::Settings;
    use std::time::Duration;

    fn tmp(tag: &str) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("htaccel-sc-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        std::fs::canonicalize(p).unwrap()
    }

    #[test]
    fn cached_until_changed() {
        let d = tmp("changed");
        let w = Watch::new(Settings::default());
        let f = d.join("f.txt");
        std::fs::write(&f, "abc").unwrap();
        assert_eq!(lookup(&w, f.to_str().unwrap(), true).unwrap().size, 3);
        assert!(w.stats.len() >= 2);
        std::fs::write(&f, "abcdef").unwrap();
        w.sync();
        assert_eq!(lookup(&w, f.to_str().unwrap(), true).unwrap().size, 6);
        std::fs::remove_file(&f).unwrap();
        w.sync();
        assert_eq!(
            lookup(&w, f.to_str().unwrap(), false).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        std::fs::write(&f, "x").unwrap();
        w.sync();
        assert_eq!(lookup(&w, f.to_str().unwrap(), false).unwrap().size, 1);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_change_drops_what_was_cached_and_says_so() {
        let d = tmp("asked");
        let w = Watch::new(Settings::default());
        let f = d.join("f.txt");
        let log = d.join("access.log");
        std::fs::write(&f, "abc").unwrap();
        std::fs::write(&log, "").unwrap();
        assert!(lookup(&w, f.to_str().unwrap(), true).is_ok());
        let dir = format!("{}/", d.display());
        let text = |p: &Path| p.to_str().unwrap().to_string();
        let entry = |p: &Path, structural| Forget::Entry {
            dir: &dir,
            entry: Box::leak(text(p).into_boxed_str()),
            structural,
        };
        // A file beside it that nothing asked about: nothing to drop.
        assert!(!w.stats.apply(entry(&log, false)));
        // The file itself, written to.
        assert!(w.stats.apply(entry(&f, false)));
        assert!(lookup(&w, f.to_str().unwrap(), true).is_ok());
        // The log created or removed: the directory's own answer goes.
        assert!(lookup(&w, d.to_str().unwrap(), true).is_ok());
        assert!(w.stats.apply(entry(&log, true)));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn directory_rename_drops_answers_below() {
        let d = tmp("rename");
        let w = Watch::new(Settings::default());
        std::fs::create_dir_all(d.join("a/b")).unwrap();
        std::fs::write(d.join("a/b/f"), "1").unwrap();
        let f = d.join("a/b/f");
        assert!(lookup(&w, f.to_str().unwrap(), true).is_ok());
        std::fs::rename(d.join("a"), d.join("z")).unwrap();
        w.sync();
        assert!(lookup(&w, f.to_str().unwrap(), true).is_err());
        std::fs::create_dir_all(d.join("a/b")).unwrap();
        std::fs::write(d.join("a/b/f"), "22").unwrap();
        w.sync();
        assert_eq!(lookup(&w, f.to_str().unwrap(), true).unwrap().size, 2);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn trailing_slash_needs_a_directory() {
        let d = tmp("slash");
        let w = Watch::new(Settings::default());
        std::fs::write(d.join("f"), "1").unwrap();
        let e = lookup(&w, &format!("{}/f/", d.display()), true).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOTDIR));
        assert!(lookup(&w, &format!("{}/", d.display()), true).is_ok());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn symlink_targets_are_not_cached() {
        let d = tmp("link");
        let w = Watch::new(Settings::default());
        std::fs::write(d.join("t"), "1").unwrap();
        std::os::unix::fs::symlink(d.join("t"), d.join("l")).unwrap();
        let l = d.join("l");
        assert_eq!(
            lookup(&w, l.to_str().unwrap(), false).unwrap().kind,
            crate::fs::Kind::Symlink
        );
        assert_eq!(lookup(&w, l.to_str().unwrap(), true).unwrap().size, 1);
        std::fs::write(d.join("t"), "22").unwrap();
        // No sync: an uncached target is read from the disk every time.
        assert_eq!(lookup(&w, l.to_str().unwrap(), true).unwrap().size, 2);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn unwatched_answers_expire_and_zero_means_no_cache() {
        let d = tmp("poll");
        let f = d.join("f");
        std::fs::write(&f, "1").unwrap();
        let w = Watch::new(Settings {
            watch: false,
            check_interval: Duration::ZERO,
            ..Settings::default()
        });
        assert!(lookup(&w, f.to_str().unwrap(), true).is_ok());
        assert!(w.stats.is_empty());
        let w = Watch::new(Settings {
            watch: false,
            check_interval: Duration::from_millis(50),
            ..Settings::default()
        });
        assert_eq!(lookup(&w, f.to_str().unwrap(), true).unwrap().size, 1);
        std::fs::write(&f, "22").unwrap();
        assert_eq!(
            lookup(&w, f.to_str().unwrap(), true).unwrap().size,
            1,
            "trusted within the interval"
        );
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(lookup(&w, f.to_str().unwrap(), true).unwrap().size, 2);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn bounded_by_clock() {
        let d = tmp("clock");
        let w = Watch::new(Settings {
            stat_cache_entries: 8,
            ..Settings::default()
        });
        for i in 0..40 {
            let _ = lookup(&w, d.join(format!("n{i}")).to_str().unwrap(), false);
        }
        assert!(w.stats.len() <= 8, "{}", w.stats.len());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
