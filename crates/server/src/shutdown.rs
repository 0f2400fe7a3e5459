//! Graceful stop. SIGTERM or SIGINT (or [`Server::shutdown`]) closes the
//! listening sockets, so new connections are refused; connections idle
//! between requests are closed at once; a request in flight is answered,
//! with `Connection: close` (Apache's `ap_set_keepalive` refuses keep-alive
//! once the process is stopping), and its connection closed. Whatever is
//! still running when the shutdown timeout is over is dropped; a worker
//! thread that cannot even get there (stuck in a system call that does not
//! return) is left behind two seconds later, and the process exits.
//!
//! [`Server::shutdown`]: crate::Server::shutdown

use crate::conn::Local;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::sync::watch;

/// The stop request, seen by every worker thread.
#[derive(Clone)]
pub(crate) struct Stop {
    tx: Arc<watch::Sender<bool>>,
    rx: watch::Receiver<bool>,
    flag: Arc<AtomicBool>,
}

impl Stop {
    pub(crate) fn new() -> Self {
        let (tx, rx) = watch::channel(false);
        Stop {
            tx: Arc::new(tx),
            rx,
            flag: Arc::new(AtomicBool::new(false)),
        }
    }

    pub(crate) fn trigger(&self) {
        self.flag.store(true, Ordering::Relaxed);
        self.tx.send_replace(true);
    }

    /// Whether a stop was requested; read when a response decides on
    /// keep-alive, even while the worker thread is busy in the engine.
    pub(crate) fn requested(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    /// Resolves once a stop was requested.
    pub(crate) async fn wait(&self) {
        let mut rx = self.rx.clone();
        let _ = rx.wait_for(|&stop| stop).await;
    }
}

/// Wait until the thread's connections are gone, at most `limit`.
pub(crate) async fn drain(local: &Local, limit: Duration) {
    let end = tokio::time::Instant::now() + limit;
    while local.active() > 0 && tokio::time::Instant::now() < end {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// SIGTERM and SIGINT, caught from the moment they are installed.
pub(crate) struct Signals {
    rt: tokio::runtime::Runtime,
    term: Signal,
    int: Signal,
}

impl Signals {
    pub(crate) fn install() -> io::Result<Signals> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()?;
        let (term, int) = rt.block_on(async {
            Ok::<_, io::Error>((
                signal(SignalKind::terminate())?,
                signal(SignalKind::interrupt())?,
            ))
        })?;
        Ok(Signals { rt, term, int })
    }

    /// Block until one of the signals arrives.
    pub(crate) fn wait(mut self) {
        let (term, int) = (&mut self.term, &mut self.int);
        self.rt.block_on(async {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        });
    }
}
