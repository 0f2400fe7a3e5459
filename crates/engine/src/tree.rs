//! The compiled-config tree: for every directory a request has walked
//! through, the merged configuration in force there (the `<Directory>`
//! sections and access files from `/` down, in Apache's order), shared
//! behind an `Arc`, so that a request pays one map lookup per level.
//!
//! A level stays in force while
//! * its parent is the same object (a parent recomputed means every level
//!   below merges again; their own compiled files are reused), and
//! * nothing reported a change: the watcher ([`crate::watch`]) marks a level
//!   superseded when one of its access files is created, replaced, removed
//!   or finished being written, and drops whole subtrees when a directory on
//!   the path appears, disappears or moves. While a directory is watched,
//!   the request path never looks at its access files.
//!
//! A superseded level is recomputed by the next request that reaches it,
//! and its own file stays at hand as the previous complete version: if the
//! new read catches a writer mid-write (`read_access_files`), that
//! version answers instead, so a file is never compiled half written.
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
use crate::open_writers::Writers;
use crate::site::Site;
use crate::watch::{Invalidation, Mode, ReadVerdict, Subscriber, Watch, SETTLE};
// Paths from requests are the keys: a seeded hash, much cheaper than
// SipHash on long paths, still unpredictable to clients.
use foldhash::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};
use std::time::{Duration, Instant, SystemTime};

pub use crate::htaccess::HtaccessLimits;

/// Why a level stops every request below it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LevelError {
    /// An access file that failed to compile: 500, and this error-log
    /// line (`FILE: reason`) for every request it stops, as Apache writes
    /// it on each reading.
    Config(Arc<str>),
    /// An access file that exists but cannot be read: 403.
    Unreadable(htaccess::Unreadable),
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
    /// An access file here was finished, replaced or removed since this
    /// level was made: it is recomputed, and its own file is only the
    /// fallback while the new one is caught mid-write.
    superseded: AtomicBool,
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
        // Levels dropped, or (an access file) marked as superseded.
        let mut invalidated = 0;
        match what {
            // Kept, marked: its file is the previous complete version, in
            // force again if the next read catches a writer mid-write.
            Invalidation::AccessFile { dir, .. } => {
                if let Some(level) = levels.get(*dir) {
                    if !level.superseded.swap(true, Ordering::SeqCst) {
                        invalidated = 1;
                    }
                }
            }
            Invalidation::Subtree(prefix) => levels.retain(|k, _| !k.starts_with(prefix)),
            Invalidation::All => levels.clear(),
        }
        invalidated += before - levels.len();
        drop(levels);
        crate::stats::add(
            crate::stats::Counter::HtaccessInvalidations,
            invalidated as u64,
        );
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
        self.read()
            .get(path)
            .filter(|l| !l.superseded.load(Ordering::SeqCst))
            .cloned()
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
            if same_parent
                && !c.superseded.load(Ordering::SeqCst)
                && (c.watched || self.still_current(site, c))
            {
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
        // Whether the level may be kept: not when it was made from a read
        // whose doubt no future event will clear.
        let mut keep = true;
        let own = if overrides.reads() {
            let unchanged = cached
                .as_ref()
                .filter(|c| c.watched == watched && !c.superseded.load(Ordering::SeqCst))
                .and_then(|c| c.own.clone())
                .filter(|o| watched || htaccess::stamps(path, &site.access_file_names) == o.stamps);
            let recompile = |o: Arc<Own>| {
                if o.overrides == overrides {
                    o
                } else {
                    Arc::new(compile_own(
                        site,
                        overrides.clone(),
                        o.found.clone(),
                        o.stamps.clone(),
                    ))
                }
            };
            Some(match unchanged {
                Some(o) => recompile(o),
                None => {
                    self.count_compile(path);
                    let previous = cached.as_ref().and_then(|c| c.own.clone());
                    let (found, stamps, verdict) =
                        read_access_files(site, watch, path, watched, previous.as_deref());
                    match (verdict, previous) {
                        (Verdict::Complete, _) => {
                            Arc::new(compile_own(site, overrides.clone(), found, stamps))
                        }
                        // The previous complete version stays in force; the
                        // writer's close will be reported and supersede it.
                        (Verdict::Writing, Some(previous)) => recompile(previous),
                        // In force for this request only: nothing will
                        // report when the doubt is over.
                        (Verdict::Unsure, Some(previous)) => {
                            keep = false;
                            recompile(previous)
                        }
                        // Nothing earlier to fall back on (first read, or
                        // the directory was renamed): what is there, for
                        // this request only.
                        (_, None) => {
                            keep = false;
                            Arc::new(compile_own(site, overrides.clone(), found, stamps))
                        }
                    }
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
            // A level not kept is not vouched for by the watcher either, so
            // that no memo keeps what was decided with it.
            watched: watched && keep,
            checked_ms: AtomicU64::new(self.now_ms()),
            superseded: AtomicBool::new(false),
        });
        let mut levels = self.inner.levels.write().unwrap_or_else(|e| e.into_inner());
        if keep && fill.still_valid() {
            levels.insert(path.to_string(), level.clone());
        }
        level
    }
}

/// What a read of a directory's access files may be taken for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// A complete version: compile it.
    Complete,
    /// A writer has a file open and modified: the previous version stays
    /// until the watcher reports the close.
    Writing,
    /// Maybe caught mid-write, and no event is sure to say when that is
    /// over: the previous version answers, and the next request reads again.
    Unsure,
}

/// Read `dir`'s access-file candidates (with their stamps, for an unwatched
/// directory) and judge whether what was read is a complete version.
///
/// The watcher knows of a write from its first `IN_MODIFY` to its
/// `IN_CLOSE_WRITE`, and is asked before and after the read, so a write
/// that began or ended meanwhile is known. What no event shows is the
/// stretch inside the writer's truncating system call (`open` with
/// `O_TRUNC`, `ftruncate`) after the file became empty and before its
/// `IN_MODIFY` is queued; the writer's open file shows it instead
/// ([`crate::open_writers`]). Where the kernel will not say (no lease
/// allowed), a file found empty that replaces one with content is believed
/// only once it has been empty for [`SETTLE`]. A writer found holding the
/// file open is waited for at most [`SETTLE`] after the file last changed.
/// An unwatched directory has no events: a stamp that moved while reading,
/// or a writer holding the file open, makes the read unsure.
fn read_access_files(
    site: &Site,
    watch: &Watch,
    dir: &str,
    watched: bool,
    previous: Option<&Own>,
) -> (Found, Vec<Stamp>, Verdict) {
    let names = &site.access_file_names;
    let before = watch.begin_access_read(dir);
    let stamps = if watched {
        Vec::new()
    } else {
        htaccess::stamps(dir, names)
    };
    let found = htaccess::read_first(dir, names, site.limits);
    let loaded = match &found {
        Found::Loaded(l) => Some(&**l),
        _ => None,
    };
    let recent = loaded.is_some_and(|l| changed_within(l, SETTLE));
    let open_writer = loaded
        .filter(|l| l.writers == Writers::Open && recent)
        .and_then(|l| l.path.file_name());
    let verdict = match watch.access_read_verdict(dir, &before, open_writer) {
        ReadVerdict::Writing if watched => Verdict::Writing,
        ReadVerdict::Writing | ReadVerdict::Changed => Verdict::Unsure,
        ReadVerdict::Complete if !watched && htaccess::stamps(dir, names) != stamps => {
            Verdict::Unsure
        }
        ReadVerdict::Complete if !watched && open_writer.is_some() => Verdict::Unsure,
        ReadVerdict::Complete => {
            let emptied = loaded.is_some_and(|l| l.bytes == 0 && l.writers == Writers::Unknown)
                && matches!(previous.map(|o| &o.found), Some(Found::Loaded(p)) if p.bytes > 0);
            if emptied && recent {
                Verdict::Unsure
            } else {
                Verdict::Complete
            }
        }
    };
    (found, stamps, verdict)
}

/// Whether `file` changed (by its status-change time) less than `window`
/// ago. A time in the future (the clock was set back) cannot be judged: no.
fn changed_within(file: &Loaded, window: Duration) -> bool {
    file.changed
        .and_then(|c| SystemTime::now().duration_since(c).ok())
        .is_some_and(|age| age < window)
}

/// Compile what was found under `overrides`, logging failures as Apache does.
fn compile_own(site: &Site, overrides: Overrides, found: Found, stamps: Vec<Stamp>) -> Own {
    let (compiled, error, problem) = match &found {
        Found::Absent => (None, None, None),
        // Logged by every request it stops, as Apache logs it.
        Found::Unreadable(u) => (None, Some(LevelError::Unreadable(u.clone())), None),
        Found::Loaded(l) => match htaccess::compile(&site.env, l, &overrides, &*site.log) {
            Ok(c) => (Some(Arc::new(c)), None, None),
            Err(p) => {
                let line = format!("{}: {}", l.path.display(), p.message);
                (None, Some(LevelError::Config(line.into())), Some(p))
            }
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
                htaccel_conf::fnmatch::fnmatch(
                    p.as_bytes(),
                    path.as_bytes(),
                    htaccel_conf::fnmatch::Flags::PATHNAME,
                )
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
