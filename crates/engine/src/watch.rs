//! The file-system watcher that keeps the compiled-config tree and the
//! file-metadata cache true without asking the disk on every request.
//!
//! Apache learns whether a `.htaccess` changed by opening it again on every
//! request. htaccel asks the kernel to tell it instead: every directory that
//! a cache holds facts about gets an inotify watch (non-recursive), and an
//! event on an entry drops what was cached about that entry (and, for a
//! directory entry that appears, disappears or moves, about everything below
//! it). Caches then refill lazily from the disk on the next request.
//!
//! Three rules make this exact rather than approximately right:
//!
//! * **Read-your-writes.** The kernel queues an event inside the system call
//!   that changed the file, so a change completed before a request arrived
//!   is already in the queue when the request starts. [`Watch::sync`] reads
//!   the queue with one non-blocking `read` at the start of every request,
//!   before any cache is trusted, and applies what it finds under one lock,
//!   so a request that waits for that lock also waits for the invalidations.
//!   The read is skipped when the event loop running the request can vouch
//!   that the queue is empty ([`set_readiness_probe`]): the server keeps
//!   the inotify descriptor registered in each worker's epoll set, and the
//!   kernel marks it ready when the event is queued, before the request's
//!   bytes can arrive, so the readiness is known by the time the request is
//!   read. A read by another thread still being applied is waited for, and
//!   while an access file is being written the queue is always read.
//! * **No stale refill.** A cache that reads the disk while an event about
//!   the same file is being applied could store what it read after the
//!   invalidation passed. Fills therefore run inside a [`Fill`] guard: while
//!   any fill is in flight, applying events bumps a generation number first,
//!   and a fill only stores its result if the generation did not move.
//! * **Never half a file.** An access file being written (modified, not yet
//!   closed) keeps its previous compiled version until the writer closes it
//!   (`IN_CLOSE_WRITE`), or at most [`SETTLE`] after the write began, so a
//!   writer that never closes cannot freeze the old rules forever. Events
//!   about each directory's access files are counted, and a reader asks
//!   before and after reading them ([`Watch::begin_access_read`],
//!   [`Watch::access_read_verdict`]): the queue is read both times, so a
//!   write that began or ended meanwhile is known whichever thread's
//!   request would have read its events ([`crate::tree`] decides what to
//!   do with the answer).
//!
//! Where a directory cannot be watched (inotify unavailable, the watch limit
//! reached, or a network file system whose changes made on other hosts
//! inotify never reports), its facts are revalidated by `stat` once per
//! `AccessFileCheckInterval` instead ([`Mode::Polled`]); a polled ancestor
//! makes everything below it polled too, since a rename above a watched
//! directory is only reported to the ancestor's watch.

use crate::config::server::Global;
use crate::http::Log;
use crate::statcache::StatCache;
use inotify::{EventMask, Inotify, WatchMask};
use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

/// The longest a modified access file keeps its previous compiled version
/// while its writer has not closed it.
pub const SETTLE: Duration = Duration::from_secs(5);

/// Events a watched directory reports: everything that changes what an
/// entry is, holds, or may be used for.
const MASK: WatchMask = WatchMask::CREATE
    .union(WatchMask::DELETE)
    .union(WatchMask::MOVED_FROM)
    .union(WatchMask::MOVED_TO)
    .union(WatchMask::CLOSE_WRITE)
    .union(WatchMask::MODIFY)
    .union(WatchMask::ATTRIB)
    .union(WatchMask::DELETE_SELF)
    .union(WatchMask::MOVE_SELF)
    .union(WatchMask::ONLYDIR);

/// Bytes read from the inotify descriptor at once.
const READ_BUFFER: usize = 64 * 1024;
/// Reads per [`Watch::sync`] before the backlog is treated as an overflow.
const MAX_READS: usize = 64;

/// How the caches are kept true (server-level directives).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// `AccessFileWatch`: use inotify where it works.
    pub watch: bool,
    /// `AccessFileCheckInterval`: how long a fact about an unwatched
    /// directory is trusted before it is checked with `stat` again.
    pub check_interval: Duration,
    /// `StatCacheEntries`: bound of the file-metadata cache (0: no cache).
    pub stat_cache_entries: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            watch: true,
            check_interval: Duration::from_secs(2),
            stat_cache_entries: 16_384,
        }
    }
}

impl Settings {
    /// The settings a configuration asked for, defaults elsewhere.
    pub fn from_global(g: &Global) -> Settings {
        let d = Settings::default();
        Settings {
            watch: g.access_file_watch.unwrap_or(d.watch),
            check_interval: g.access_file_check_interval.unwrap_or(d.check_interval),
            stat_cache_entries: g.stat_cache_entries.unwrap_or(d.stat_cache_entries),
        }
    }
}

/// How the facts about one directory are kept true.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Changes are reported by the kernel: cached facts are trusted.
    Watched,
    /// Cached facts are rechecked with `stat` after the check interval.
    Polled,
    /// Not a directory (or not there): nothing below it may be cached,
    /// since its appearance is reported to no watch of ours.
    Absent,
}

/// What a change means for a cache of per-directory facts.
#[derive(Debug, PartialEq, Eq)]
pub enum Invalidation<'a> {
    /// An access file `name` in `dir` (a path with a trailing slash) was
    /// created, replaced, removed, or finished being written.
    AccessFile { dir: &'a str, name: &'a OsStr },
    /// Everything at or below `dir` (a path with a trailing slash).
    Subtree(&'a str),
    /// Everything.
    All,
}

/// A cache that wants to hear about changes.
pub trait Subscriber: Send + Sync {
    fn invalidate(&self, what: &Invalidation<'_>);
}

/// What one drained event means, before it is applied.
#[derive(Debug, PartialEq, Eq)]
enum Change {
    /// `entry` in `dir` changed: its metadata, and the directory's own
    /// when the entry came, went or was renamed (`structural`).
    Entry {
        dir: String,
        entry: String,
        structural: bool,
    },
    Access {
        dir: String,
        name: OsString,
    },
    Subtree(String),
    All,
}

enum DirState {
    /// Watched with the watch descriptor `id`. `ancestors_watched`: every
    /// directory above was watched too when a lookup last walked them; it
    /// stays true, since a directory loses its watch only with everything
    /// below it ([`State::forget_subtree`], or all at once).
    Watched { id: i32, ancestors_watched: bool },
    /// Not watched; `retry_at` says when adding a watch may succeed again
    /// (after the watch limit was hit), `None` if it never will.
    Polled { retry_at: Option<Instant> },
}

struct State {
    inotify: Option<Inotify>,
    init_tried: bool,
    /// Every directory a cache asked about, by path with a trailing slash.
    /// Keyed by paths requests name: a seeded hash, much cheaper than
    /// SipHash on long paths (one lookup per ancestor on each metadata
    /// cache miss), still unpredictable to clients.
    dirs: foldhash::HashMap<String, DirState>,
    /// Watch descriptor → the paths it stands for (one inode may be reached
    /// by several paths through symlinks).
    wds: HashMap<i32, (inotify::WatchDescriptor, Vec<String>)>,
    /// Access files being written: (directory, name) → when it began.
    pending: HashMap<(String, OsString), Instant>,
    /// Events about each directory's access files so far, by directory:
    /// a read of them that saw this number move may be torn.
    access_events: HashMap<String, u64>,
    /// Times what is known about writes was dropped (subtree gone, queue
    /// overflow): a read that saw it move cannot vouch for anything.
    forgotten: u64,
    access_names: HashSet<OsString>,
    subscribers: Vec<Weak<dyn Subscriber>>,
    buf: Vec<u8>,
    log: Option<Arc<dyn Log>>,
    warned_limit: bool,
}

/// Whether the inotify descriptor `fd` of the watcher numbered `watcher`
/// may hold events, as the event loop of the calling thread knows it:
/// `false` only when its epoll set has not reported the descriptor readable
/// since the probe last said `true`. `fd` is open for the call's duration.
pub type ReadinessProbe = fn(watcher: u64, fd: RawFd) -> bool;

thread_local! {
    static PROBE: Cell<Option<ReadinessProbe>> = const { Cell::new(None) };
}

/// Let this thread's event loop answer whether the event queue needs a
/// read ([`Watch::sync`]); without a probe every request reads it.
pub fn set_readiness_probe(probe: ReadinessProbe) {
    PROBE.with(|p| p.set(Some(probe)));
}

/// The watcher and the caches it keeps true.
pub struct Watch {
    state: Mutex<State>,
    /// This watcher's number among the process's watchers.
    id: u64,
    /// The inotify descriptor once it exists (-1 before).
    fd: AtomicI32,
    /// Threads inside [`Watch::sync`]'s read-and-apply.
    draining: AtomicUsize,
    /// An access file is being written: its settle time must be checked.
    writes_pending: AtomicBool,
    generation: AtomicU64,
    in_flight: AtomicUsize,
    watching: AtomicBool,
    interval_ms: AtomicU64,
    /// The file-metadata cache behind [`crate::fs::stat`].
    pub stats: StatCache,
    /// Files the server itself appends to (its logs), which it writes on
    /// every request: their metadata is never cached, so that the events
    /// of those writes change no answer ([`Watch::note_own_writes`]).
    own_writes: std::sync::RwLock<foldhash::HashSet<String>>,
    /// `own_writes` is not empty.
    has_own_writes: AtomicBool,
}

/// The writes to one directory's access files the watcher had heard of
/// when a read of them began ([`Watch::begin_access_read`]).
#[derive(Debug)]
pub struct AccessRead {
    events: u64,
    forgotten: u64,
}

/// What a read of a directory's access files may be taken for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadVerdict {
    /// No event about them arrived while they were read, and no writer
    /// had one modified and not yet closed.
    Complete,
    /// A writer has one modified (or was found holding one open) and has
    /// not closed it: its close (or [`SETTLE`]) will be reported as a change.
    Writing,
    /// They changed while they were read, and the change is over.
    Changed,
}

/// A cache fill in progress: see the module documentation.
pub struct Fill<'a> {
    watch: &'a Watch,
    generation: u64,
}

impl Fill<'_> {
    /// Whether no event was applied since the fill began, so that what it
    /// read may be stored. Check it under the lock that guards the store.
    pub fn still_valid(&self) -> bool {
        self.watch.generation.load(Ordering::SeqCst) == self.generation
    }
}

impl Drop for Fill<'_> {
    fn drop(&mut self) {
        self.watch.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Bumped after every invalidation of any cached fact (metadata answers,
/// config-tree levels), once the invalidation is complete. A result
/// derived from watched caches while this number stayed the same is as
/// true as the caches: see [`crate::walk_memo`].
static CHANGES: AtomicU64 = AtomicU64::new(0);

/// The current value of the change counter.
pub fn changes() -> u64 {
    CHANGES.load(Ordering::SeqCst)
}

/// Record that a cached fact was just dropped (call after dropping it).
pub fn note_change() {
    CHANGES.fetch_add(1, Ordering::SeqCst);
}

/// The process's watcher (the metadata cache behind `fs::stat` is one per
/// process, so the watcher that keeps it true is too).
pub fn global() -> &'static Arc<Watch> {
    static GLOBAL: OnceLock<Arc<Watch>> = OnceLock::new();
    GLOBAL.get_or_init(|| Arc::new(Watch::new(Settings::default())))
}

impl Watch {
    pub fn new(settings: Settings) -> Watch {
        let w = Watch {
            state: Mutex::new(State {
                inotify: None,
                init_tried: false,
                dirs: foldhash::HashMap::default(),
                wds: HashMap::new(),
                pending: HashMap::new(),
                access_events: HashMap::new(),
                forgotten: 0,
                access_names: HashSet::new(),
                subscribers: Vec::new(),
                buf: vec![0; READ_BUFFER],
                log: None,
                warned_limit: false,
            }),
            id: {
                static NEXT: AtomicU64 = AtomicU64::new(0);
                NEXT.fetch_add(1, Ordering::Relaxed)
            },
            fd: AtomicI32::new(-1),
            draining: AtomicUsize::new(0),
            writes_pending: AtomicBool::new(false),
            generation: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
            watching: AtomicBool::new(true),
            interval_ms: AtomicU64::new(0),
            stats: StatCache::new(0),
            own_writes: std::sync::RwLock::new(foldhash::HashSet::default()),
            has_own_writes: AtomicBool::new(false),
        };
        w.apply_settings(settings);
        w
    }

    /// Take a configuration's settings and the log for watch problems.
    /// Cached facts are dropped, since the rules that made them may differ.
    pub fn configure(&self, settings: Settings, log: Arc<dyn Log>) {
        self.lock().log = Some(log);
        self.apply_settings(settings);
        self.stats.clear();
    }

    fn apply_settings(&self, s: Settings) {
        self.watching.store(s.watch, Ordering::SeqCst);
        self.interval_ms
            .store(s.check_interval.as_millis() as u64, Ordering::SeqCst);
        self.stats.set_capacity(s.stat_cache_entries);
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `AccessFileWatch`.
    pub fn is_watching(&self) -> bool {
        self.watching.load(Ordering::Relaxed)
    }

    /// `AccessFileCheckInterval`.
    pub fn check_interval(&self) -> Duration {
        Duration::from_millis(self.interval_ms.load(Ordering::Relaxed))
    }

    /// The files the server appends to from now on (its log files, as
    /// absolute paths). A log written beside the document root would
    /// otherwise report a change after every request, and every kept
    /// answer would go with it.
    pub fn note_own_writes(&self, paths: impl IntoIterator<Item = String>) {
        let mut set = foldhash::HashSet::default();
        for path in paths {
            // The path as the walk meets it too, through a symlinked
            // directory.
            let real = std::path::Path::new(&path);
            if let (Some(dir), Some(name)) = (real.parent(), real.file_name()) {
                if let Ok(dir) = std::fs::canonicalize(dir) {
                    set.insert(crate::path_text::from_os(dir.join(name).as_os_str()).into_owned());
                }
            }
            set.insert(path);
        }
        self.has_own_writes.store(!set.is_empty(), Ordering::SeqCst);
        *self.own_writes.write().unwrap_or_else(|e| e.into_inner()) = set;
    }

    /// Whether the server itself appends to `path` (see
    /// [`Watch::note_own_writes`]).
    pub fn is_own_write(&self, path: &str) -> bool {
        self.has_own_writes.load(Ordering::Relaxed)
            && self
                .own_writes
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .contains(path)
    }

    /// Hear about changes from now on (held weakly: a dropped cache leaves).
    pub fn subscribe(&self, s: Weak<dyn Subscriber>) {
        let mut st = self.lock();
        st.subscribers.retain(|w| w.strong_count() > 0);
        st.subscribers.push(s);
    }

    /// Names whose writes are held back until complete (`AccessFileName`).
    pub fn note_access_names(&self, names: &[String]) {
        let mut st = self.lock();
        for n in names {
            if !st.access_names.contains(OsStr::new(n)) {
                st.access_names.insert(OsString::from(n));
            }
        }
    }

    /// Start a cache fill; see [`Fill::still_valid`].
    pub fn begin_fill(&self) -> Fill<'_> {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        Fill {
            watch: self,
            generation: self.generation.load(Ordering::SeqCst),
        }
    }

    /// Make sure `dir` (absolute, trailing slash) is watched if it can be.
    pub fn ensure(&self, dir: &str) -> Mode {
        if !self.watching.load(Ordering::Relaxed) {
            return Mode::Polled;
        }
        let interval = self.check_interval();
        self.lock().ensure(dir, interval)
    }

    /// How `path`'s directory and every one above it are kept true (adding
    /// the watches that are missing): `Watched` only if all of them are.
    pub fn ensure_ancestors(&self, path: &str) -> Mode {
        if !path.starts_with('/') {
            return Mode::Absent;
        }
        let watching = self.watching.load(Ordering::Relaxed);
        let interval = self.check_interval();
        let mut st = self.lock();
        // The path's own directory, known watched with all above it: one
        // lookup instead of one per ancestor.
        let parent = &path[..path.rfind('/').map_or(0, |i| i + 1)];
        if watching {
            if let Some(DirState::Watched {
                ancestors_watched: true,
                ..
            }) = st.dirs.get(parent)
            {
                return Mode::Watched;
            }
        }
        let mut end = 0;
        let mut mode = Mode::Watched;
        while let Some(i) = memchr::memchr(b'/', &path.as_bytes()[end..]) {
            end += i + 1;
            if end == path.len() {
                break;
            }
            let dir = &path[..end];
            let m = if watching {
                st.ensure(dir, interval)
            } else if crate::path_text::os_path(std::path::Path::new(dir)).is_dir() {
                Mode::Polled
            } else {
                Mode::Absent
            };
            match m {
                Mode::Absent => return Mode::Absent,
                Mode::Polled => mode = Mode::Polled,
                Mode::Watched => {}
            }
        }
        if mode == Mode::Watched && watching {
            if let Some(DirState::Watched {
                ancestors_watched, ..
            }) = st.dirs.get_mut(parent)
            {
                *ancestors_watched = true;
            }
        }
        mode
    }

    /// Apply every change the kernel has reported so far: one non-blocking
    /// read in the usual case of an empty queue. Call it at the start of a
    /// request, before any cache is consulted.
    pub fn sync(&self) {
        if !self.watching.load(Ordering::Relaxed) || self.queue_known_empty() {
            return;
        }
        self.drain(|_| ());
    }

    /// Read and apply the queue whatever the event loop says, then look at
    /// the state under the same lock.
    fn drain<R>(&self, then: impl FnOnce(&State) -> R) -> R {
        self.drain_then(|st| then(st))
    }

    /// [`Watch::drain`], with the state open to changes.
    fn drain_then<R>(&self, then: impl FnOnce(&mut State) -> R) -> R {
        // Announced before the read, so that a thread whose event loop saw
        // the queue already emptied by this read waits for the apply.
        self.draining.fetch_add(1, Ordering::SeqCst);
        let result = {
            let mut st = self.lock();
            self.read_and_apply(&mut st);
            let result = then(&mut st);
            self.writes_pending
                .store(!st.pending.is_empty(), Ordering::SeqCst);
            result
        };
        self.draining.fetch_sub(1, Ordering::SeqCst);
        result
    }

    /// Note where the writes to `dir`'s access files stand before reading
    /// them; [`Watch::access_read_verdict`] says afterwards what was read.
    pub fn begin_access_read(&self, dir: &str) -> AccessRead {
        if !self.watching.load(Ordering::Relaxed) {
            return AccessRead {
                events: 0,
                forgotten: 0,
            };
        }
        self.drain(|st| AccessRead {
            events: st.access_events.get(dir).copied().unwrap_or(0),
            forgotten: st.forgotten,
        })
    }

    /// What the watcher says of the access files of `dir` read since
    /// `before`. The queue is read first, so every event the kernel queued
    /// before this call is known here, whichever thread's request would
    /// have read it. `open_writer` names a file the reader found open for
    /// writing by someone ([`crate::open_writers`]): it is taken as being
    /// written from now on, as if its `IN_MODIFY` had been seen, so that
    /// its close supersedes what is decided meanwhile (or [`SETTLE`] ends
    /// the wait). [`ReadVerdict::Complete`] for a directory the kernel does
    /// not watch: `stat` stamps judge those.
    pub fn access_read_verdict(
        &self,
        dir: &str,
        before: &AccessRead,
        open_writer: Option<&OsStr>,
    ) -> ReadVerdict {
        if !self.watching.load(Ordering::Relaxed) {
            return ReadVerdict::Complete;
        }
        self.drain_then(|st| {
            if st.access_events.get(dir).copied().unwrap_or(0) != before.events
                || st.forgotten != before.forgotten
            {
                return if st.pending.keys().any(|(d, _)| d == dir) {
                    ReadVerdict::Writing
                } else {
                    ReadVerdict::Changed
                };
            }
            if let Some(name) = open_writer {
                let watched = matches!(st.dirs.get(dir), Some(DirState::Watched { .. }));
                if !watched {
                    return ReadVerdict::Changed;
                }
                st.pending
                    .entry((dir.to_string(), name.to_os_string()))
                    .or_insert_with(Instant::now);
            }
            if st.pending.keys().any(|(d, _)| d == dir) {
                ReadVerdict::Writing
            } else {
                ReadVerdict::Complete
            }
        })
    }

    /// Whether this thread's event loop vouches that no event is queued and
    /// no other thread is applying events it read.
    fn queue_known_empty(&self) -> bool {
        let fd = self.fd.load(Ordering::SeqCst);
        if fd < 0
            || self.writes_pending.load(Ordering::SeqCst)
            || self.draining.load(Ordering::SeqCst) > 0
        {
            return false;
        }
        match PROBE.with(Cell::get) {
            Some(probe) => !probe(self.id, fd),
            None => false,
        }
    }

    fn read_and_apply(&self, st: &mut State) {
        let Some(ino) = st.inotify.as_ref() else {
            return;
        };
        self.fd.store(ino.as_raw_fd(), Ordering::SeqCst);
        let (events, overflow) = st.read_events();
        if events.is_empty() && !overflow && st.pending.is_empty() {
            return;
        }
        let mut changes = Vec::new();
        if overflow {
            st.pending.clear();
            st.forgotten += 1;
            changes.push(Change::All);
        }
        for ev in &events {
            st.interpret(ev, &mut changes);
        }
        st.expire_pending(Instant::now(), &mut changes);
        if changes.is_empty() {
            return;
        }
        if self.in_flight.load(Ordering::SeqCst) > 0 {
            self.generation.fetch_add(1, Ordering::SeqCst);
        }
        st.subscribers.retain(|w| w.strong_count() > 0);
        let subs: Vec<Arc<dyn Subscriber>> =
            st.subscribers.iter().filter_map(Weak::upgrade).collect();
        for c in &changes {
            let dropped = self.stats.apply(c_stat(c));
            // Anything else may have been asked about and evicted since:
            // what was derived from it goes too. Only the server's own
            // logs, never cached, change nothing.
            if let Change::Entry { entry, .. } = c {
                if !dropped && !self.is_own_write(entry) {
                    note_change();
                }
            }
            let public = match c {
                Change::Entry { .. } => continue,
                Change::Access { dir, name } => Invalidation::AccessFile { dir, name },
                Change::Subtree(p) => Invalidation::Subtree(p),
                Change::All => Invalidation::All,
            };
            for s in &subs {
                s.invalidate(&public);
            }
        }
    }

    /// Forget every watch and cached fact (tests, reconfiguration).
    pub fn reset(&self) {
        let mut st = self.lock();
        let wds: Vec<_> = st.wds.drain().map(|(_, (wd, _))| wd).collect();
        if let Some(ino) = st.inotify.as_mut() {
            for wd in wds {
                let _ = ino.watches().remove(wd);
            }
        }
        st.dirs.clear();
        st.pending.clear();
        st.access_events.clear();
        st.forgotten += 1;
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.stats.clear();
        let subs: Vec<_> = st.subscribers.iter().filter_map(Weak::upgrade).collect();
        for s in subs {
            s.invalidate(&Invalidation::All);
        }
    }

    /// How many directories are revalidated by `stat` instead (inotify
    /// cannot watch them, or watching is off).
    pub fn polled_dirs(&self) -> usize {
        self.lock()
            .dirs
            .values()
            .filter(|d| matches!(d, DirState::Polled { .. }))
            .count()
    }

    /// How many directories are watched now.
    pub fn watched_dirs(&self) -> usize {
        self.lock()
            .dirs
            .values()
            .filter(|d| matches!(d, DirState::Watched { .. }))
            .count()
    }
}

/// What the metadata cache does with a change.
fn c_stat(c: &Change) -> crate::statcache::Forget<'_> {
    use crate::statcache::Forget as D;
    match c {
        Change::Entry {
            dir,
            entry,
            structural,
        } => D::Entry {
            dir,
            entry,
            structural: *structural,
        },
        Change::Access { .. } => D::Nothing,
        Change::Subtree(p) => D::Subtree(p),
        Change::All => D::All,
    }
}

struct RawEvent {
    wd: i32,
    mask: EventMask,
    name: Option<OsString>,
}

impl State {
    fn inotify(&mut self) -> Option<&mut Inotify> {
        if !self.init_tried {
            self.init_tried = true;
            match Inotify::init() {
                Ok(i) => self.inotify = Some(i),
                Err(e) => self.warn(&format!(
                    "inotify unavailable ({e}); .htaccess files and file metadata are revalidated by stat every AccessFileCheckInterval"
                )),
            }
        }
        self.inotify.as_mut()
    }

    fn warn(&self, message: &str) {
        match &self.log {
            Some(l) => l.error("warn", "core", None, message),
            None => eprintln!("htaccel: {message}"),
        }
    }

    fn ensure(&mut self, dir: &str, interval: Duration) -> Mode {
        // The clock is read only where a retry time is compared or set:
        // a directory already watched (every ancestor of every path the
        // metadata cache looks up) needs one map lookup and nothing else.
        match self.dirs.get(dir) {
            Some(DirState::Watched { .. }) => return Mode::Watched,
            Some(DirState::Polled { retry_at: None }) => return Mode::Polled,
            Some(DirState::Polled { retry_at: Some(t) }) if Instant::now() < *t => {
                return Mode::Polled
            }
            _ => {}
        }
        if self.inotify().is_none() {
            self.dirs
                .insert(dir.to_string(), DirState::Polled { retry_at: None });
            return Mode::Polled;
        }
        if let Some(kind) = remote_fs(dir) {
            self.warn(&format!(
                "{dir} is on a network file system ({kind}): its .htaccess files and metadata are revalidated by stat every AccessFileCheckInterval"
            ));
            self.dirs
                .insert(dir.to_string(), DirState::Polled { retry_at: None });
            return Mode::Polled;
        }
        let added = self
            .inotify
            .as_mut()
            .map(|i| {
                i.watches()
                    .add(crate::path_text::os_path(std::path::Path::new(dir)), MASK)
            })
            .expect("initialised above");
        match added {
            Ok(wd) => {
                let id = wd.get_watch_descriptor_id();
                let entry = self.wds.entry(id).or_insert_with(|| (wd, Vec::new()));
                if !entry.1.iter().any(|p| p == dir) {
                    entry.1.push(dir.to_string());
                }
                self.dirs.insert(
                    dir.to_string(),
                    DirState::Watched {
                        id,
                        ancestors_watched: false,
                    },
                );
                Mode::Watched
            }
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(0);
                // A path that is not (or no longer) a directory is not
                // remembered: requests for made-up paths must not grow it.
                if matches!(
                    errno,
                    libc::ENOENT | libc::ENOTDIR | libc::ELOOP | libc::ENAMETOOLONG
                ) {
                    return Mode::Absent;
                }
                if errno == libc::ENOSPC && !self.warned_limit {
                    self.warned_limit = true;
                    self.warn(&format!(
                        "inotify watch limit reached at {dir} (fs.inotify.max_user_watches): directories without a watch are revalidated by stat every AccessFileCheckInterval"
                    ));
                }
                let retry = Instant::now() + interval.max(Duration::from_secs(1));
                self.dirs.insert(
                    dir.to_string(),
                    DirState::Polled {
                        retry_at: Some(retry),
                    },
                );
                Mode::Polled
            }
        }
    }

    /// Everything queued now; `true` when the queue overflowed (in the
    /// kernel, or beyond what one sync reads).
    fn read_events(&mut self) -> (Vec<RawEvent>, bool) {
        let mut out = Vec::new();
        let State { inotify, buf, .. } = self;
        let Some(ino) = inotify.as_mut() else {
            return (out, false);
        };
        let mut overflow = false;
        let mut drained = false;
        for _ in 0..MAX_READS {
            match ino.read_events(buf) {
                Ok(events) => {
                    for e in events {
                        if e.mask.contains(EventMask::Q_OVERFLOW) {
                            overflow = true;
                            continue;
                        }
                        out.push(RawEvent {
                            wd: e.wd.get_watch_descriptor_id(),
                            mask: e.mask,
                            name: e.name.map(OsStr::to_os_string),
                        });
                    }
                }
                Err(_) => {
                    drained = true;
                    break;
                }
            }
        }
        (out, overflow || !drained)
    }

    fn interpret(&mut self, ev: &RawEvent, out: &mut Vec<Change>) {
        let Some((_, paths)) = self.wds.get(&ev.wd) else {
            return;
        };
        let paths = paths.clone();
        let m = ev.mask;
        let Some(name) = &ev.name else {
            // An event about the watched directory itself.
            if m.intersects(
                EventMask::DELETE_SELF
                    | EventMask::MOVE_SELF
                    | EventMask::IGNORED
                    | EventMask::UNMOUNT,
            ) {
                for p in &paths {
                    self.forget_subtree(p, out);
                }
                if let Some((wd, _)) = self.wds.remove(&ev.wd) {
                    if !m.contains(EventMask::IGNORED) {
                        if let Some(i) = self.inotify.as_mut() {
                            let _ = i.watches().remove(wd);
                        }
                    }
                }
            } else if m.contains(EventMask::ATTRIB) {
                // Permissions of a directory decide what is reachable below it.
                for p in paths {
                    out.push(Change::Subtree(p));
                }
            }
            return;
        };
        // In the text form the walk's paths use, so that the keys match.
        let name_str = crate::path_text::from_os(name);
        let structural = m.intersects(
            EventMask::CREATE | EventMask::DELETE | EventMask::MOVED_FROM | EventMask::MOVED_TO,
        );
        for dir in &paths {
            let entry = format!("{dir}{name_str}");
            out.push(Change::Entry {
                dir: dir.clone(),
                entry: entry.clone(),
                structural,
            });
            // A directory (or a symlink to one) appearing, leaving or
            // changing permissions changes what every path below it is.
            let below = format!("{entry}/");
            if self.dirs.contains_key(&below) {
                if structural {
                    self.forget_subtree(&below, out);
                } else if m.contains(EventMask::ATTRIB) {
                    out.push(Change::Subtree(below));
                }
            }
            if self.access_names.contains(name.as_os_str()) {
                self.access_event(dir, name, m, out);
            }
        }
    }

    fn access_event(&mut self, dir: &str, name: &OsStr, m: EventMask, out: &mut Vec<Change>) {
        let key = (dir.to_string(), name.to_os_string());
        let now = Instant::now();
        let done = || Change::Access {
            dir: dir.to_string(),
            name: name.to_os_string(),
        };
        *self.access_events.entry(dir.to_string()).or_insert(0) += 1;
        if m.intersects(
            EventMask::CLOSE_WRITE
                | EventMask::DELETE
                | EventMask::MOVED_FROM
                | EventMask::MOVED_TO,
        ) {
            self.pending.remove(&key);
            out.push(done());
        } else if m.contains(EventMask::MODIFY) {
            self.pending.entry(key).or_insert(now);
        } else if m.contains(EventMask::CREATE) {
            // A new regular file is being written by whoever created it:
            // wait for its close. Links of every kind are complete already.
            let path = crate::path_text::os_path(std::path::Path::new(dir)).join(name);
            let fresh = std::fs::symlink_metadata(&path).is_ok_and(|md| {
                use std::os::unix::fs::MetadataExt;
                md.file_type().is_file() && md.nlink() == 1
            });
            if fresh {
                self.pending.entry(key).or_insert(now);
            } else {
                out.push(done());
            }
        } else if m.contains(EventMask::ATTRIB) && !self.pending.contains_key(&key) {
            out.push(done());
        }
    }

    fn expire_pending(&mut self, now: Instant, out: &mut Vec<Change>) {
        if self.pending.is_empty() {
            return;
        }
        let expired: Vec<_> = self
            .pending
            .iter()
            .filter(|(_, t)| now.duration_since(**t) >= SETTLE)
            .map(|(k, _)| k.clone())
            .collect();
        for k in expired {
            self.pending.remove(&k);
            out.push(Change::Access {
                dir: k.0,
                name: k.1,
            });
        }
    }

    /// `prefix` (a directory path) no longer names what it named: drop its
    /// watches and everything cached at or below it.
    fn forget_subtree(&mut self, prefix: &str, out: &mut Vec<Change>) {
        let gone: Vec<String> = self
            .dirs
            .keys()
            .filter(|k| k.starts_with(prefix))
            .cloned()
            .collect();
        for d in gone {
            if let Some(DirState::Watched { id, .. }) = self.dirs.remove(&d) {
                let empty = match self.wds.get_mut(&id) {
                    Some((_, paths)) => {
                        paths.retain(|p| *p != d);
                        paths.is_empty()
                    }
                    None => false,
                };
                if empty {
                    if let Some((wd, _)) = self.wds.remove(&id) {
                        if let Some(i) = self.inotify.as_mut() {
                            let _ = i.watches().remove(wd);
                        }
                    }
                }
            }
        }
        self.pending.retain(|(d, _), _| !d.starts_with(prefix));
        self.access_events.retain(|d, _| !d.starts_with(prefix));
        self.forgotten += 1;
        out.push(Change::Subtree(prefix.to_string()));
    }
}

/// The name of a network (or user-space) file system, whose changes made
/// elsewhere inotify cannot report.
fn remote_fs(dir: &str) -> Option<&'static str> {
    use std::os::unix::ffi::OsStrExt;
    let dir = crate::path_text::os_path(std::path::Path::new(dir));
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut buf: libc::statfs = unsafe {
        // SAFETY: statfs is a plain C struct; all-zero is a valid value.
        std::mem::zeroed()
    };
    // SAFETY: `c` is a valid NUL-terminated path and `buf` a valid out-pointer.
    if unsafe { libc::statfs(c.as_ptr(), &mut buf) } != 0 {
        return None;
    }
    #[allow(clippy::unnecessary_cast)]
    let t = (buf.f_type as u64) & 0xffff_ffff;
    Some(match t {
        0x6969 => "nfs",
        0x517B => "smb",
        0xFE53_4D42 => "smb2",
        0xFF53_4D42 => "cifs",
        0x6573_5546 => "fuse",
        0x00C3_6400 => "ceph",
        0x7375_7245 => "coda",
        0x5346_414F => "afs",
        0x0102_1997 => "9p",
        0x564C => "ncp",
        0x7461_636F => "ocfs2",
        0x0116_1970 => "gfs2",
        0x0BD0_0BD0 => "lustre",
        0x4750_4653 => "gpfs",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex as StdMutex;

    #[derive(Default)]
    struct Recorder(StdMutex<Vec<String>>);

    impl Subscriber for Recorder {
        fn invalidate(&self, what: &Invalidation<'_>) {
            let s = match what {
                Invalidation::AccessFile { dir, name } => {
                    format!("access {dir}{}", name.to_string_lossy())
                }
                Invalidation::Subtree(p) => format!("subtree {p}"),
                Invalidation::All => "all".into(),
            };
            self.0.lock().unwrap().push(s);
        }
    }

    fn setup() -> (tempdir::Dir, Watch, Arc<Recorder>) {
        let dir = tempdir::Dir::new("watch");
        let w = Watch::new(Settings::default());
        let r = Arc::new(Recorder::default());
        let weak: Weak<dyn Subscriber> = Arc::downgrade(&(r.clone() as Arc<dyn Subscriber>));
        w.subscribe(weak);
        w.note_access_names(&[".htaccess".to_string()]);
        (dir, w, r)
    }

    fn take(r: &Recorder) -> Vec<String> {
        std::mem::take(&mut *r.0.lock().unwrap())
    }

    #[test]
    fn close_write_invalidates_and_modify_waits() {
        let (d, w, r) = setup();
        let dir = d.slash();
        assert_eq!(w.ensure(&dir), Mode::Watched);
        let path = format!("{dir}.htaccess");
        std::fs::write(&path, "x").unwrap();
        w.sync();
        assert_eq!(take(&r), vec![format!("access {path}")]);
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(b"more").unwrap();
        w.sync();
        assert!(
            take(&r).is_empty(),
            "a write in progress changes nothing yet"
        );
        drop(f);
        w.sync();
        assert_eq!(take(&r), vec![format!("access {path}")]);
        std::fs::remove_file(&path).unwrap();
        w.sync();
        assert_eq!(take(&r), vec![format!("access {path}")]);
    }

    #[test]
    fn created_file_waits_for_close_but_a_link_does_not() {
        let (d, w, r) = setup();
        let dir = d.slash();
        w.ensure(&dir);
        let path = format!("{dir}.htaccess");
        let f = std::fs::File::create(&path).unwrap();
        w.sync();
        assert!(take(&r).is_empty());
        drop(f);
        w.sync();
        assert_eq!(take(&r), vec![format!("access {path}")]);
        std::fs::remove_file(&path).unwrap();
        w.sync();
        take(&r);
        std::os::unix::fs::symlink("/dev/null", &path).unwrap();
        w.sync();
        assert_eq!(take(&r), vec![format!("access {path}")]);
    }

    #[test]
    fn renamed_directory_drops_its_subtree_and_watches() {
        let (d, w, r) = setup();
        let dir = d.slash();
        std::fs::create_dir_all(format!("{dir}a/b")).unwrap();
        w.ensure(&dir);
        w.ensure(&format!("{dir}a/"));
        w.ensure(&format!("{dir}a/b/"));
        assert_eq!(w.watched_dirs(), 3);
        std::fs::rename(format!("{dir}a"), format!("{dir}z")).unwrap();
        w.sync();
        let got = take(&r);
        assert!(got.contains(&format!("subtree {dir}a/")), "{got:?}");
        assert_eq!(w.watched_dirs(), 1);
        // The moved directory is no longer reported under its old name.
        std::fs::write(format!("{dir}z/.htaccess"), "x").unwrap();
        w.sync();
        let got = take(&r);
        assert!(!got.iter().any(|g| g.contains("/a/")), "{got:?}");
    }

    #[test]
    fn unwatched_when_disabled() {
        let d = tempdir::Dir::new("watch-off");
        let w = Watch::new(Settings {
            watch: false,
            ..Settings::default()
        });
        assert_eq!(w.ensure(&d.slash()), Mode::Polled);
        assert_eq!(w.ensure_ancestors(&format!("{}x", d.slash())), Mode::Polled);
        assert_eq!(
            w.ensure_ancestors(&format!("{}no/x", d.slash())),
            Mode::Absent
        );
    }

    #[test]
    fn missing_directories_are_not_remembered() {
        let d = tempdir::Dir::new("watch-missing");
        let w = Watch::new(Settings::default());
        for i in 0..50 {
            assert_eq!(w.ensure(&format!("{}nope{i}/", d.slash())), Mode::Absent);
        }
        assert_eq!(w.lock().dirs.len(), 0);
    }

    #[test]
    fn a_read_knows_of_writes_begun_during_it_and_of_open_writers() {
        let (d, w, _r) = setup();
        let dir = d.slash();
        w.ensure(&dir);
        let path = format!("{dir}.htaccess");
        let name = OsStr::new(".htaccess");
        std::fs::write(&path, "x").unwrap();
        let before = w.begin_access_read(&dir);
        assert_eq!(
            w.access_read_verdict(&dir, &before, None),
            ReadVerdict::Complete
        );
        // A rewrite in place begins while the file is read.
        use std::io::Write;
        let before = w.begin_access_read(&dir);
        let mut f = std::fs::File::create(&path).unwrap();
        assert_eq!(
            w.access_read_verdict(&dir, &before, None),
            ReadVerdict::Writing
        );
        f.write_all(b"y").unwrap();
        drop(f);
        // It ended after the read began: the read may be torn.
        assert_eq!(
            w.access_read_verdict(&dir, &before, None),
            ReadVerdict::Changed
        );
        let before = w.begin_access_read(&dir);
        assert_eq!(
            w.access_read_verdict(&dir, &before, None),
            ReadVerdict::Complete
        );
        // A writer the reader found holding the file open is waited for
        // until its close is reported.
        assert_eq!(
            w.access_read_verdict(&dir, &before, Some(name)),
            ReadVerdict::Writing
        );
        let before = w.begin_access_read(&dir);
        assert_eq!(
            w.access_read_verdict(&dir, &before, None),
            ReadVerdict::Writing
        );
        drop(std::fs::OpenOptions::new().write(true).open(&path).unwrap());
        assert_eq!(
            w.access_read_verdict(&dir, &before, None),
            ReadVerdict::Changed
        );
        let before = w.begin_access_read(&dir);
        assert_eq!(
            w.access_read_verdict(&dir, &before, None),
            ReadVerdict::Complete
        );
    }

    #[test]
    fn pending_write_settles() {
        let (d, w, r) = setup();
        let dir = d.slash();
        w.ensure(&dir);
        let key = (dir.clone(), OsString::from(".htaccess"));
        w.lock()
            .pending
            .insert(key, Instant::now() - SETTLE - Duration::from_millis(1));
        w.sync();
        assert_eq!(take(&r), vec![format!("access {dir}.htaccess")]);
    }

    /// A temporary directory for tests, removed on drop.
    pub(crate) mod tempdir {
        pub struct Dir(pub std::path::PathBuf);
        impl Dir {
            pub fn new(tag: &str) -> Dir {
                use std::sync::atomic::{AtomicUsize, Ordering};
                static N: AtomicUsize = AtomicUsize::new(0);
                let p = std::env::temp_dir().join(format!(
                    "htaccel-{tag}-{}-{}",
                    std::process::id(),
                    N.fetch_add(1, Ordering::SeqCst)
                ));
                std::fs::create_dir_all(&p).unwrap();
                Dir(std::fs::canonicalize(p).unwrap())
            }
            pub fn slash(&self) -> String {
                format!("{}/", self.0.display())
            }
        }
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }
}
