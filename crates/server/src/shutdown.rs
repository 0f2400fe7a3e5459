//! Graceful stop, and the signals Apache's parent process answers.
//!
//! A stop (SIGTERM, SIGINT, SIGWINCH, or [`Server::shutdown`]) closes the
//! listening sockets, so new connections are refused; connections idle
//! between requests are closed at once; a request in flight is answered,
//! with `Connection: close` (Apache's `ap_set_keepalive` refuses keep-alive
//! once the process is stopping), and its connection closed. Whatever is
//! still running when the drain limit is over is dropped: the server's
//! shutdown timeout for SIGTERM/SIGINT, `GracefulShutdownTimeout` for
//! SIGWINCH (Apache's `graceful-stop`; none means no limit); a worker
//! thread that cannot even get there (stuck in a system call that does not
//! return) is left behind two seconds later, and the process exits.
//!
//! SIGUSR1 (graceful) and SIGHUP (restart) ask for a new configuration
//! generation (see `crate::generation`); SIGUSR2, which Apache's parent
//! ignores, is ignored too, so that no signal an administrator or
//! logrotate sends to Apache ends htaccel.
//!
//! [`Server::shutdown`]: crate::Server::shutdown

use crate::conn::Local;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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
    /// The drain limit this stop asked for, in milliseconds: 0 keeps the
    /// server's own, `u64::MAX` waits as long as requests run.
    drain_ms: Arc<AtomicU64>,
}

impl Stop {
    pub(crate) fn new() -> Self {
        let (tx, rx) = watch::channel(false);
        Stop {
            tx: Arc::new(tx),
            rx,
            flag: Arc::new(AtomicBool::new(false)),
            drain_ms: Arc::new(AtomicU64::new(0)),
        }
    }

    pub(crate) fn trigger(&self) {
        self.flag.store(true, Ordering::Relaxed);
        self.tx.send_replace(true);
    }

    /// Stop, letting requests in flight run for `limit` (`None`: no limit).
    pub(crate) fn trigger_draining(&self, limit: Option<Duration>) {
        let ms = limit.map_or(u64::MAX, |l| (l.as_millis() as u64).max(1));
        self.drain_ms.store(ms, Ordering::Relaxed);
        self.trigger();
    }

    /// How long requests in flight may still run: what the stop asked
    /// for, else `default`.
    pub(crate) fn drain_limit(&self, default: Duration) -> Duration {
        match self.drain_ms.load(Ordering::Relaxed) {
            0 => default,
            // "No limit": a year is as good, and stays clear of overflow.
            u64::MAX => Duration::from_secs(365 * 86_400),
            ms => Duration::from_millis(ms),
        }
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

/// What a signal asks of the server, as Apache's parent process reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signalled {
    /// SIGTERM (`-k stop`) or SIGINT.
    Stop(&'static str),
    /// SIGWINCH (`-k graceful-stop`).
    GracefulStop,
    /// SIGUSR1 (`-k graceful`).
    Graceful,
    /// SIGHUP (`-k restart`).
    Restart,
}

/// The signals, caught from the moment they are installed.
pub(crate) struct Signals {
    rt: tokio::runtime::Runtime,
    term: Signal,
    int: Signal,
    winch: Signal,
    usr1: Signal,
    hup: Signal,
    usr2: Signal,
}

impl Signals {
    pub(crate) fn install() -> io::Result<Signals> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()?;
        let kinds = [
            SignalKind::terminate(),
            SignalKind::interrupt(),
            SignalKind::window_change(),
            SignalKind::user_defined1(),
            SignalKind::hangup(),
            SignalKind::user_defined2(),
        ];
        let mut caught = rt.block_on(async {
            kinds
                .into_iter()
                .map(signal)
                .collect::<io::Result<Vec<Signal>>>()
        })?;
        let mut next = || caught.remove(0);
        Ok(Signals {
            term: next(),
            int: next(),
            winch: next(),
            usr1: next(),
            hup: next(),
            usr2: next(),
            rt,
        })
    }

    /// Block until a signal that asks for something arrives (SIGUSR2 is
    /// consumed and ignored, as Apache's parent ignores it).
    pub(crate) fn wait(&mut self) -> Signalled {
        let s = self;
        s.rt.block_on(async {
            loop {
                tokio::select! {
                    _ = s.term.recv() => return Signalled::Stop("SIGTERM"),
                    _ = s.int.recv() => return Signalled::Stop("SIGINT"),
                    _ = s.winch.recv() => return Signalled::GracefulStop,
                    _ = s.usr1.recv() => return Signalled::Graceful,
                    _ = s.hup.recv() => return Signalled::Restart,
                    _ = s.usr2.recv() => continue,
                }
            }
        })
    }
}
