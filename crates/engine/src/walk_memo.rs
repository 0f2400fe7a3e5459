//! Recent directory-walk results, kept per worker thread, so that a path
//! requested again while nothing changed costs one map lookup instead of a
//! walk (a config-tree and a metadata-cache lookup per level).
//!
//! A walk is a pure function of the site and the caches it reads: the
//! metadata cache ([`crate::statcache`]) and the compiled-config tree
//! ([`crate::tree`]). Both are kept true by the watcher, and every time
//! anything is dropped from either, the process-wide change counter
//! ([`crate::watch::changes`]) moves, after the drop is complete. A result
//! is stamped with the counter as read before its walk began, and is used
//! only while the counter still has that value. So:
//!
//! * an event applied (by this request's `Watch::sync` or by any other
//!   thread) after the stamp was read moves the counter, and the result is
//!   not used again;
//! * an event applied before the stamp was read had already dropped what
//!   it made untrue, so the walk read fresh facts.
//!
//! Facts that no watch vouches for (directories that cannot be watched,
//! `AccessFileCheckInterval` polling, symlink targets, no watching at all)
//! are true only for a while, and the counter does not move when their time
//! runs out: a walk that used any of them is not kept. Failed walks are not
//! kept either (they are rare and their answers log).
//!
//! A whole walk is kept from its second sighting on ([`Sightings`]), as
//! the answer memo keeps answers: a walk asked for once costs the keeping
//! and is never used.
//!
//! Besides whole walks, the level a walk reached at a file's directory is
//! kept, for the other names of that directory: a site's visitors ask for
//! thousands of files in a few hundred directories. It is kept only when
//! no level on the way needed an lstat (the whole path existed and every
//! level follows symlinks freely), so that, like a whole walk, it depends
//! on nothing the stamp does not vouch for.

use crate::clock::ClockMap;
use crate::sightings::Sightings;
use crate::tree::Level;
use crate::walk::Walked;
use std::cell::RefCell;
use std::sync::Arc;

/// Results one worker thread keeps at most, of each kind (a few hundred
/// bytes each): a site's visitors ask for thousands of distinct files.
pub const ENTRIES_PER_THREAD: usize = 4096;

struct Entry {
    tree: u64,
    stamp: u64,
    walked: Walked,
}

/// The level a walk reached at a directory, for the walks of the other
/// names in it (kept under the same rule as a whole walk).
struct DirEntry {
    tree: u64,
    stamp: u64,
    level: Arc<Level>,
}

/// Kept values by path, bounded (dropped by the clock when full), and the
/// stamp they were last swept for.
struct Bounded<V> {
    clock: ClockMap<V>,
    /// After a sweep for this stamp every entry had it, and entries put
    /// since under the same stamp keep it so: sweeping again for it would
    /// find nothing to drop, only cost a pass over every entry.
    swept_for: Option<u64>,
}

impl<V> Default for Bounded<V> {
    fn default() -> Self {
        Bounded {
            clock: ClockMap::default(),
            swept_for: None,
        }
    }
}

impl<V> Bounded<V> {
    /// Insert `value`, kept under `stamp`, making room first: entries of an
    /// older stamp are of no use; else the clock decides.
    fn put(&mut self, key: &str, stamp: u64, value: V, stamp_of: impl Fn(&V) -> u64) {
        if self.clock.len() >= ENTRIES_PER_THREAD && !self.clock.contains(key) {
            if self.swept_for != Some(stamp) {
                self.clock.retain(|e| stamp_of(e) == stamp);
                self.swept_for = Some(stamp);
            }
            if self.clock.len() >= ENTRIES_PER_THREAD {
                self.clock.evict_one();
            }
        }
        self.clock.insert(key, value);
        if self.swept_for != Some(stamp) {
            // An entry of another stamp: the next sweep has work again.
            self.swept_for = None;
        }
    }
}

/// One thread's kept walks, whole and up to a directory.
#[derive(Default)]
struct Memo {
    entries: Bounded<Entry>,
    dirs: Bounded<DirEntry>,
    /// File names walked lately and not kept.
    seen: Sightings,
}

thread_local! {
    static MEMO: RefCell<Memo> = RefCell::new(Memo::default());
}

/// The walk of `filename` in the site whose tree is `tree`, if one was
/// kept and the change counter still reads `stamp`.
pub fn get(tree: u64, filename: &str, stamp: u64) -> Option<Walked> {
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        let e = m.entries.clock.get_mut(filename)?;
        (e.tree == tree && e.stamp == stamp).then(|| e.walked.clone())
    })
}

/// Keep a walk computed from caches that stayed true since `stamp`.
pub fn put(tree: u64, filename: &str, stamp: u64, walked: &Walked) {
    MEMO.with(|m| {
        let m = &mut *m.borrow_mut();
        let hash = m.entries.clock.hash(filename);
        if !m.seen.replace(hash) && !m.entries.clock.contains(filename) {
            return;
        }
        let entry = Entry {
            tree,
            stamp,
            walked: walked.clone(),
        };
        m.entries.put(filename, stamp, entry, |e| e.stamp)
    });
}

/// The level of directory `dir` (with its trailing slash) that a walk in
/// the site whose tree is `tree` reached, if kept under `stamp`.
pub fn get_dir(tree: u64, dir: &str, stamp: u64) -> Option<Arc<Level>> {
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        let e = m.dirs.clock.get_mut(dir)?;
        (e.tree == tree && e.stamp == stamp).then(|| Arc::clone(&e.level))
    })
}

/// Keep the level a walk reached at `dir` without any lstat, every level
/// on the way watched, since `stamp`.
pub fn put_dir(tree: u64, dir: &str, stamp: u64, level: &Arc<Level>) {
    let entry = DirEntry {
        tree,
        stamp,
        level: Arc::clone(level),
    };
    MEMO.with(|m| m.borrow_mut().dirs.put(dir, stamp, entry, |e| e.stamp));
}

/// Forget every kept walk of this thread (tests).
#[cfg(test)]
pub fn clear() {
    MEMO.with(|m| *m.borrow_mut() = Memo::default());
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn walked(name: &str) -> Walked {
        Walked {
            filename: name.to_string(),
            path_info: String::new(),
            finfo: None,
            conf: Arc::new(crate::dirconf::DirConf::default()),
        }
    }

    #[test]
    fn a_kept_walk_is_used_only_under_its_stamp_and_tree() {
        clear();
        put(1, "/a", 7, &walked("/a"));
        assert!(get(1, "/a", 7).is_none(), "kept from its first walk");
        put(1, "/a", 7, &walked("/a"));
        assert_eq!(get(1, "/a", 7).map(|w| w.filename), Some("/a".into()));
        assert!(get(1, "/a", 8).is_none(), "used after a change");
        assert!(get(2, "/a", 7).is_none(), "used for another site");
        assert!(get(1, "/b", 7).is_none());
    }

    #[test]
    fn stays_bounded() {
        clear();
        for i in 0..ENTRIES_PER_THREAD + 10 {
            put(1, &format!("/f{i}"), 3, &walked("/f"));
            put(1, &format!("/f{i}"), 3, &walked("/f"));
        }
        MEMO.with(|m| assert_eq!(m.borrow().entries.clock.len(), ENTRIES_PER_THREAD));
        // A new stamp sweeps the old entries out first.
        put(1, "/new", 4, &walked("/new"));
        put(1, "/new", 4, &walked("/new"));
        MEMO.with(|m| assert_eq!(m.borrow().entries.clock.len(), 1));
    }
}
