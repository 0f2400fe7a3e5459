//! A connection's place on the scoreboard mod_status shows: which state it
//! is in (reading a request, answering one, idle between requests,
//! closing), kept in the engine's per-thread counters
//! (`htaccel_engine::stats`) so that a status page sums them without any
//! request paying for a shared counter.

use htaccel_engine::stats::{self, Counter};

/// The connection's current state; leaving it (drop) takes the
/// connection off the board.
pub(crate) struct Slot(Counter);

impl Slot {
    /// A connection just accepted: it is reading its first request.
    pub(crate) fn accepted() -> Slot {
        stats::bump(Counter::ConnsAccepted);
        stats::bump(Counter::ConnsOpen);
        stats::bump(Counter::ConnsReading);
        Slot(Counter::ConnsReading)
    }

    #[inline]
    pub(crate) fn set(&mut self, to: Counter) {
        if self.0 != to {
            stats::moved(self.0, to);
            self.0 = to;
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        stats::drop_one(self.0);
        stats::drop_one(Counter::ConnsOpen);
    }
}
