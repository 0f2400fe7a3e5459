//! The compiled-config tree: for every directory a request has walked
//! through, the merged configuration in force there (the `<Directory>`
//! sections and access files from `/` down, in Apache's order), shared
//! behind an `Arc`, so that a request pays one map lookup per level.
//!
//! A level stays in force while
//! * its parent is the same object (a parent recomputed means every level
//!   below merges again; their own compiled files are reused), and
//! * nothing reported a change: the watcher ([`crate::watch`]) drops a level
//!   when one of its access files is created, replaced, removed or finished
//!   being written, and drops whole subtrees when a directory on the path
//!   appears, disappears or moves. While a directory is watched, the
//!   request path never looks at its access files.
//!
//! Levels in directories that cannot be watched (nor any directory above
//! them) are revalidated instead: their candidates are `stat`ed again once
//! per `AccessFileCheckInterval` (on every request when it is 0, as Apache).
//!
//! Negative levels ("no access file here") are cached like the others; they
//! are most of the savings in deep trees, and they are trusted under the
//! same rules, so a new `.htaccess` never goes unnoticed.

use crate::dirconf::DirConf;
use crate::htaccess::{self, Found, Loaded, Overrides, Problem, Stamp};
use crate::site::Site;
use crate::watch::{Invalidation, Mode, Subscriber, Watch};
// Paths from requests are the keys: a seeded hash, much cheaper than
// SipHash on long paths, still unpredictable to clients.
use foldhash::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};
use std::time::Instant;

pub use crate::htaccess::HtaccessLimits;

/// Why a level stops every request below it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LevelError {
    /// An access file that failed to compile: 500.
    Config,
    /// An access file that exists but cannot be read: 403.
    Unreadable(String),
}

/// A directory's own access file, compiled under one set of overrides.
#[derive(Debug)]
struct Own {
    overrides: Overrides,
    found: Found,
    compiled: Option<Arc<DirConf>>,
    error: Option<LevelError>,
    problem: Option<Problem>,
    /// The candidates' stamps when read (unwatched directories only).
    stamps: Vec<Stamp>,
}

/// One directory level of the walk.
#[derive(Debug)]
pub struct Level {
    pub path: String,
    pub depth: usize,
    /// Configuration in force at this level, access file included.
    pub conf: Arc<DirConf>,
    pub error: Option<LevelError>,
    /// The parent this level was computed from.
    parent: Option<Arc<Level>>,
    /// `None` when the overrides in force forbid access files here.
    own: Option<Arc<Own>>,
    /// This directory and every one above it are watched.
    watched: bool,
    /// When the candidates were last checked (unwatched levels), in
    /// milliseconds since the tree's epoch.
    checked_ms: AtomicU64,
}

impl Level {
    /// Whether Apache would look for an access file in this directory.
    pub fn reads_access_files(&self) -> bool {
        self.own.is_some()
    }

    /// The access file in force here, as read.
    pub fn access_file(&self) -> Option<&Loaded> {
        match self.own.as_deref().map(|o| &o.found) {
            Some(Found::Loaded(l)) => Some(l),
            _ => None,
        }
    }

    /// What is wrong with this level's access file, if anything.
    pub fn problem(&self) -> Option<&Problem> {
        self.own.as_deref().and_then(|o| o.problem.as_ref())
    }

    /// Whether changes here are reported by the kernel (else revalidated by `stat`).
    pub fn is_watched(&self) -> bool {
        self.watched
    }
}

struct Inner {
    watch: Arc<Watch>,
    levels: RwLock<HashMap<String, Arc<Level>>>,
    epoch: Instant,
    /// Directories whose access files were read before, so that reading
    /// one again counts as a recompile (bounded: beyond it, as a compile).
    compiled: Mutex<HashSet<String>>,
}

/// How many directories [`Inner::compiled`] remembers.
const COMPILED_REMEMBERED: usize = 100_000;

impl Subscriber for Inner {
    fn invalidate(&self, what: &Invalidation<'_>) {
        let mut levels = self.levels.write().unwrap_or_else(|e| e.into_inner());
        let before = levels.len();
        match what {
            Invalidation::AccessFile { dir, .. } => {
                levels.remove(*dir);
            }
            Invalidation::Subtree(prefix) => levels.retain(|k, _| !k.starts_with(prefix)),
            Invalidation::All => levels.clear(),
        }
        let dropped = before - levels.len();
        drop(levels);
        crate::stats::add(crate::stats::Counter::HtaccessInvalidations, dropped as u64);
        crate::watch::note_change();
    }
}

/// Merged configuration per directory, for one site.
pub struct ConfigTree {
    inner: Arc<Inner>,
    subscribed: OnceLock<()>,
    /// Unique in the process: names this tree in per-thread memos.
    id: u64,
}

impl Default for ConfigTree {
    fn default() -> Self {
        ConfigTree::with_watch(crate::watch::global().clone())
    }
}

impl std::fmt::Debug for ConfigTree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ConfigTree")
    }
}

impl ConfigTree {
    /// A tree kept true by `watch`.
    pub fn with_watch(watch: Arc<Watch>) -> ConfigTree {
        ConfigTree {
            inner: Arc::new(Inner {
                watch,
                levels: RwLock::new(HashMap::default()),
                compiled: Mutex::new(HashSet::default()),
                epoch: Instant::now(),
            }),
            subscribed: OnceLock::new(),
            id: {
                static NEXT: AtomicU64 = AtomicU64::new(0);
                NEXT.fetch_add(1, Ordering::Relaxed)
            },
        }
    }

    /// This tree's number, unique in the process (never reused).
    pub fn id(&self) -> u64 {
        self.id
    }

    pub fn root(&self, site: &Site) -> Arc<Level> {
        self.level(site, None, "/", 0)
    }

    pub fn child(&self, site: &Site, parent: &Arc<Level>, path: &str, depth: usize) -> Arc<Level> {
        self.level(site, Some(parent), path, depth)
    }

    /// The cached level of a directory, if any (tools and tests).
    pub fn get(&self, path: &str) -> Option<Arc<Level>> {
        self.read().get(path).cloned()
    }

    /// How many directory levels are cached.
    pub fn len(&self) -> usize {
        self.read().len()
    }

    pub fn is_empty(&self) -> bool {
        self.read().is_empty()
    }

    /// Drop every cached level (configuration reload, watch overflow).
    pub fn clear(&self) {
        self.inner.invalidate(&Invalidation::All);
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<String, Arc<Level>>> {
        self.inner.levels.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Count the access files of `path` being read and compiled.
    fn count_compile(&self, path: &str) {
        let mut seen = self
            .inner
            .compiled
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let again = seen.contains(path);
        if !again && seen.len() < COMPILED_REMEMBERED {
            seen.insert(path.to_string());
        }
        crate::stats::bump(if again {
            crate::stats::Counter::HtaccessRecompiles
        } else {
            crate::stats::Counter::HtaccessCompiles
        });
    }

    fn now_ms(&self) -> u64 {
        self.inner.epoch.elapsed().as_millis() as u64
    }

    fn level(
        &self,
        site: &Site,
        parent: Option<&Arc<Level>>,
        path: &str,
        depth: usize,
    ) -> Arc<Level> {
        let cached = self.read().get(path).cloned();
        if let Some(c) = &cached {
            let same_parent = match (&c.parent, parent) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                (None, None) => true,
                _ => false,
            };
            if same_parent && (c.watched || self.still_current(site, c)) {
                crate::stats::bump(crate::stats::Counter::HtaccessHits);
                return c.clone();
            }
        }
        crate::stats::bump(crate::stats::Counter::HtaccessMisses);
        self.compute(site, parent, path, depth, cached)
    }

    /// An unwatched level: trusted within the check interval, then
    /// revalidated by `stat` (and watched from now on if that became possible).
    fn still_current(&self, site: &Site, c: &Level) -> bool {
        let interval = self.inner.watch.check_interval().as_millis() as u64;
        let now = self.now_ms();
        if now.saturating_sub(c.checked_ms.load(Ordering::Relaxed)) < interval {
            return true;
        }
        if self.inner.watch.ensure(&c.path) == Mode::Watched
            && c.parent.as_ref().is_none_or(|p| p.watched)
        {
            return false;
        }
        let same = match &c.own {
            Some(o) => htaccess::stamps(&c.path, &site.access_file_names) == o.stamps,
            None => true,
        };
        if same {
            c.checked_ms.store(now, Ordering::Relaxed);
        }
        same
    }

    fn compute(
        &self,
        site: &Site,
        parent: Option<&Arc<Level>>,
        path: &str,
        depth: usize,
        cached: Option<Arc<Level>>,
    ) -> Arc<Level> {
        let watch = &self.inner.watch;
        self.subscribed.get_or_init(|| {
            let weak: Weak<dyn Subscriber> =
                Arc::downgrade(&(self.inner.clone() as Arc<dyn Subscriber>));
            watch.subscribe(weak);
        });
        watch.note_access_names(&site.access_file_names);
        let fill = watch.begin_fill();
        let base = parent
            .map(|p| p.conf.clone())
            .unwrap_or_else(|| site.base.clone());
        let sections_conf = apply_sections(site, &base, path, depth);
        let overrides = Overrides::of(&sections_conf);
        let watched = watch.ensure(path) == Mode::Watched && parent.is_none_or(|p| p.watched);
        let own = if overrides.reads() {
            let previous = cached
                .as_ref()
                .filter(|c| c.watched == watched)
                .and_then(|c| c.own.clone())
                .filter(|o| watched || htaccess::stamps(path, &site.access_file_names) == o.stamps);
            Some(match previous {
                Some(o) if o.overrides == overrides => o,
                Some(o) => Arc::new(compile_own(
                    site,
                    overrides,
                    o.found.clone(),
                    o.stamps.clone(),
                )),
                None => {
                    self.count_compile(path);
                    let stamps = if watched {
                        Vec::new()
                    } else {
                        htaccess::stamps(path, &site.access_file_names)
                    };
                    let found = htaccess::read_first(path, &site.access_file_names, site.limits);
                    Arc::new(compile_own(site, overrides, found, stamps))
                }
            })
        } else {
            None
        };
        let conf = match own.as_ref().and_then(|o| o.compiled.as_ref()) {
            Some(ht) => Arc::new(DirConf::merge(&sections_conf, ht)),
            None => sections_conf,
        };
        let level = Arc::new(Level {
            path: path.to_string(),
            depth,
            conf,
            error: own.as_ref().and_then(|o| o.error.clone()),
            parent: parent.cloned(),
            own,
            watched,
            checked_ms: AtomicU64::new(self.now_ms()),
        });
        let mut levels = self.inner.levels.write().unwrap_or_else(|e| e.into_inner());
        if fill.still_valid() {
            levels.insert(path.to_string(), level.clone());
        }
        level
    }
}

/// Compile what was found under `overrides`, logging failures as Apache does.
fn compile_own(site: &Site, overrides: Overrides, found: Found, stamps: Vec<Stamp>) -> Own {
    let (compiled, error, problem) = match &found {
        Found::Absent => (None, None, None),
        Found::Unreadable(msg) => {
            site.log.error("crit", "core", None, msg);
            (None, Some(LevelError::Unreadable(msg.clone())), None)
        }
        Found::Loaded(l) => match htaccess::compile(&site.env, l, &overrides, &*site.log) {
            Ok(c) => (Some(Arc::new(c)), None, None),
            Err(p) => (None, Some(LevelError::Config), Some(p)),
        },
    };
    Own {
        overrides,
        found,
        compiled,
        error,
        problem,
        stamps,
    }
}

/// Merge the non-regex `<Directory>` sections of this level onto `base`.
fn apply_sections(site: &Site, base: &Arc<DirConf>, path: &str, depth: usize) -> Arc<DirConf> {
    let mut conf = base.clone();
    for sec in &site.dir_sections {
        if let crate::config::server::DirSectionMatcher::Path {
            path: p,
            components,
            fnmatch,
        } = &sec.matcher
        {
            if *components != depth {
                continue;
            }
            let hit = if *fnmatch {
                crate::modules::core::sections::fnmatch(p.as_bytes(), path.as_bytes())
            } else {
                p == path
            };
            if hit {
                conf = Arc::new(DirConf::merge(&conf, &sec.conf));
            }
        }
    }
    conf
}
