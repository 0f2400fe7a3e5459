//! Configuration generations: how a reload reaches the connections.
//!
//! Everything a connection reads from the configuration (the handler with
//! its engine and logs, the limits, the timeouts, keep-alive) is one
//! [`Shared`] value. A connection takes the current one when it is accepted
//! and keeps it to its end, so a request in flight, and the keep-alive
//! connection it came on, finish with the configuration they started with,
//! as in Apache's graceful restart, where old children finish their work.
//! A reload publishes a new value: connections accepted afterwards get it,
//! and the previous one is marked retired, so that its connections close
//! after their next answer (`Connection: close`, said in the answer, so a
//! client never sends a request on a connection the server is closing).
//! The old value, and the log files it holds open, are freed when its last
//! connection ends. The listening sockets are not touched: no connection
//! is refused while a reload happens.
//!
//! The accept loops read the current value only when the channel says it
//! changed (one atomic load per accepted connection).

use crate::conn::Shared;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::sync::watch;

/// The sending side: the server's handle to publish new generations.
pub(crate) struct Generations {
    tx: watch::Sender<Arc<Shared>>,
}

impl Generations {
    pub(crate) fn new(first: Arc<Shared>) -> Generations {
        Generations {
            tx: watch::Sender::new(first),
        }
    }

    /// A worker thread's view of the current generation.
    pub(crate) fn current(&self) -> Current {
        let mut rx = self.tx.subscribe();
        let shared = rx.borrow_and_update().clone();
        Current { rx, shared }
    }

    /// Serve new connections with `next`; the previous generation's
    /// connections close after their next answer.
    pub(crate) fn publish(&self, next: Arc<Shared>) {
        let old = self.tx.send_replace(next);
        old.retired.store(true, Ordering::Relaxed);
    }

    /// The generation serving new connections now.
    pub(crate) fn latest(&self) -> Arc<Shared> {
        self.tx.borrow().clone()
    }
}

/// The generation an accept loop hands to the connections it accepts.
#[derive(Clone)]
pub(crate) struct Current {
    rx: watch::Receiver<Arc<Shared>>,
    shared: Arc<Shared>,
}

impl Current {
    /// The generation to serve a connection accepted now with.
    pub(crate) fn get(&mut self) -> &Arc<Shared> {
        if self.rx.has_changed().unwrap_or(false) {
            self.shared = self.rx.borrow_and_update().clone();
        }
        &self.shared
    }
}
