//! The counters behind mod_status (`server-status`) and htaccel's own
//! Prometheus page (`htaccel-metrics`): one set per thread, each written
//! only by its own thread, summed when a status page is read.
//!
//! A request must not pay for being counted with contention: a shared
//! atomic incremented by every worker thread bounces its cache line between
//! cores on every request. Here each thread owns a cache-line-aligned block
//! and updates it with a relaxed load and store (a plain memory write on
//! the usual targets: nobody else writes it, so no read-modify-write is
//! needed); a reader adds up every thread's block. A reader may see a
//! block mid-update of another field, never a torn value.
//!
//! Gauges (connections by state) go up and down on the thread that owns
//! the connection; a block's gauge may be negative for a moment only in the
//! sum of many blocks, never in one, and the sum is what a page shows.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// What is counted. Counters only grow; gauges (`Conns*` but
/// `ConnsAccepted`) are current values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Counter {
    /// Requests answered (Apache's `access_count`).
    Accesses,
    /// Body bytes sent (Apache's `bytes_served`).
    BytesSent,
    /// Time spent on requests, head read to answer queued, µs.
    DurationUs,
    /// Event loops (worker threads) serving connections (gauge).
    EventLoops,
    /// Connections accepted.
    ConnsAccepted,
    /// Open connections (gauge).
    ConnsOpen,
    /// Connections reading a request head, from its first byte (gauge).
    ConnsReading,
    /// Connections with a request being decided or answered (gauge).
    ConnsWriting,
    /// Connections idle between requests (gauge).
    ConnsKeepAlive,
    /// Connections in lingering close (gauge).
    ConnsClosing,
    /// Directory levels of the compiled-config tree reused.
    HtaccessHits,
    /// Directory levels computed (merged, access files compiled or reused).
    HtaccessMisses,
    /// Access files compiled for the first time in a level.
    HtaccessCompiles,
    /// Access files compiled again because they changed.
    HtaccessRecompiles,
    /// Levels dropped by change notifications.
    HtaccessInvalidations,
    /// Static files served from an open descriptor kept by the file cache.
    FileCacheHits,
    /// Static files opened.
    FileCacheOpens,
    /// Answers served whole from the answer memo.
    AnswerMemoHits,
    /// Requests decided with their inputs recorded for the memo.
    AnswerMemoRecorded,
    /// Backend exchanges (PHP-FPM, HTTP upstreams) started.
    BackendRequests,
    /// Backend connections opened.
    BackendConnects,
    /// Backend exchanges on a connection kept from an earlier one.
    BackendReuses,
    /// Backend connections that could not be made (503).
    BackendFailures,
}

const COUNT: usize = Counter::BackendFailures as usize + 1;

/// One thread's counters, on cache lines of their own.
#[repr(align(128))]
struct Block([AtomicU64; COUNT]);

static BLOCKS: Mutex<Vec<&'static Block>> = Mutex::new(Vec::new());

thread_local! {
    // Const-initialised: reading it is one thread-pointer-relative load,
    // with no lazy-initialisation state to check (a counter costs a few
    // instructions, measured with callgrind).
    static MINE: Cell<Option<&'static Block>> = const { Cell::new(None) };
}

/// This thread's block, made on its first count. One block per thread for
/// the life of the process: threads are the server's workers, created once.
#[inline]
fn mine() -> &'static Block {
    MINE.with(|m| match m.get() {
        Some(b) => b,
        None => {
            let b = register();
            m.set(Some(b));
            b
        }
    })
}

#[cold]
fn register() -> &'static Block {
    let block: &'static Block =
        Box::leak(Box::new(Block(std::array::from_fn(|_| AtomicU64::new(0)))));
    BLOCKS.lock().unwrap_or_else(|e| e.into_inner()).push(block);
    block
}

/// Add `n` to this thread's `c`.
#[inline]
pub fn add(c: Counter, n: u64) {
    let cell = &mine().0[c as usize];
    cell.store(
        cell.load(Ordering::Relaxed).wrapping_add(n),
        Ordering::Relaxed,
    );
}

/// Add one to this thread's `c`.
#[inline]
pub fn bump(c: Counter) {
    add(c, 1);
}

/// Take one from this thread's gauge `c`.
#[inline]
pub fn drop_one(c: Counter) {
    add(c, u64::MAX);
}

/// Move one connection from gauge `from` to gauge `to`.
#[inline]
pub fn moved(from: Counter, to: Counter) {
    let b = mine();
    let f = &b.0[from as usize];
    f.store(f.load(Ordering::Relaxed).wrapping_sub(1), Ordering::Relaxed);
    let t = &b.0[to as usize];
    t.store(t.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
}

/// One request answered: `bytes` of body sent in `duration_us`.
#[inline]
pub fn request_done(bytes: u64, duration_us: u64) {
    let b = mine();
    for (c, n) in [
        (Counter::Accesses, 1),
        (Counter::BytesSent, bytes),
        (Counter::DurationUs, duration_us),
    ] {
        let cell = &b.0[c as usize];
        cell.store(
            cell.load(Ordering::Relaxed).wrapping_add(n),
            Ordering::Relaxed,
        );
    }
}

/// Every thread's counters added up.
#[derive(Clone, Copy, Debug, Default)]
pub struct Totals([u64; COUNT]);

impl Totals {
    pub fn get(&self, c: Counter) -> u64 {
        self.0[c as usize]
    }

    /// A gauge, which may read below zero while a connection moves.
    pub fn gauge(&self, c: Counter) -> u64 {
        let v = self.0[c as usize] as i64;
        v.max(0) as u64
    }
}

/// Each thread's counters, in the order the threads first counted.
pub fn per_thread() -> Vec<Totals> {
    BLOCKS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .map(|block| {
            let mut t = Totals::default();
            for (v, cell) in t.0.iter_mut().zip(block.0.iter()) {
                *v = cell.load(Ordering::Relaxed);
            }
            t
        })
        .collect()
}

/// Sum every thread's block.
pub fn totals() -> Totals {
    let mut t = Totals::default();
    for block in BLOCKS.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        for (sum, cell) in t.0.iter_mut().zip(block.0.iter()) {
            *sum = sum.wrapping_add(cell.load(Ordering::Relaxed));
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_add_up() {
        let before = totals().get(Counter::BackendReuses);
        let handles: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(|| {
                    for _ in 0..1000 {
                        bump(Counter::BackendReuses);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        bump(Counter::BackendReuses);
        assert_eq!(totals().get(Counter::BackendReuses) - before, 4001);
    }

    #[test]
    fn gauges_move() {
        bump(Counter::ConnsClosing);
        moved(Counter::ConnsClosing, Counter::ConnsKeepAlive);
        drop_one(Counter::ConnsKeepAlive);
        // Other tests may hold connections: only this thread's share is known.
        let b = mine();
        assert_eq!(
            b.0[Counter::ConnsClosing as usize].load(Ordering::Relaxed),
            0
        );
        assert_eq!(
            b.0[Counter::ConnsKeepAlive as usize].load(Ordering::Relaxed),
            0
        );
    }
}
