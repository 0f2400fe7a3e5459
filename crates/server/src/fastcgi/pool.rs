//! Connections to FastCGI backends, bounded per backend.
//!
//! Every backend address has one semaphore shared by all worker threads:
//! at most [`MAX_CONNS`] exchanges with it run at once, and a request that
//! finds them all busy waits (back-pressure) up to the wait it was given,
//! then gets a 503 as from an unreachable backend. The bound keeps a
//! slow PHP-FPM from collecting an unbounded number of sockets and
//! requests in its listen queue.
//!
//! A lease carries mod_proxy's timeouts ([`Waits`]): the connect's
//! (`connectiontimeout=`), and each read's and write's (`timeout=`, else
//! `ProxyTimeout`, else `Timeout`), as Apache sets them on the backend's
//! socket; the exchanges read [`Lease::timeout`] for every backend I/O.
//!
//! FastCGI connections are not reused between requests unless the
//! configuration asks (`ProxyPass … enablereuse=on`): a PHP-FPM worker
//! holds a kept-alive connection for as long as it is open, so idle pooled
//! connections take workers away from the requests queued for them (why
//! Apache's mod_proxy_fcgi does not reuse by default either). HTTP
//! upstream connections are kept alive: each worker thread keeps up to
//! 16 idle ones per upstream for 15 seconds, outside the bound, and checks
//! that one is still open before it reuses it.

use bytes::BytesMut;
use htaccel_engine::http::backend::{BackendAddr, BackendError};
use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Exchanges in flight per backend, over all threads.
pub const MAX_CONNS: usize = 64;

fn limits() -> &'static Mutex<HashMap<BackendAddr, Arc<Semaphore>>> {
    static LIMITS: OnceLock<Mutex<HashMap<BackendAddr, Arc<Semaphore>>>> = OnceLock::new();
    LIMITS.get_or_init(Default::default)
}

fn semaphore(addr: &BackendAddr) -> Arc<Semaphore> {
    let mut map = limits().lock().unwrap_or_else(|e| e.into_inner());
    map.entry(addr.clone())
        .or_insert_with(|| Arc::new(Semaphore::new(MAX_CONNS)))
        .clone()
}

/// A connection to a backend, with its place in the bound.
pub(crate) struct Lease {
    stream: Stream,
    /// Its place in the bound (none once it carries a tunnel).
    permit: Option<OwnedSemaphorePermit>,
    /// How long each read and write may wait (mod_proxy sets it on the
    /// backend's socket: the worker's `timeout=`, `ProxyTimeout`, else
    /// `Timeout`).
    timeout: Duration,
}

impl Lease {
    /// How long each read from and write to the backend may wait.
    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }
}

/// How long a lease waits: for the connect (and a free connection), and
/// then for each read and write.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Waits {
    pub connect: Duration,
    pub io: Duration,
}

impl Waits {
    /// mod_proxy's timeouts for a call, the server's `Timeout` where none is set.
    pub(crate) fn of(
        timeouts: htaccel_engine::http::backend::BackendTimeouts,
        server: Duration,
    ) -> Waits {
        let io = timeouts.io.unwrap_or(server);
        Waits {
            connect: timeouts.connect.unwrap_or(io),
            io,
        }
    }
}

enum Stream {
    Unix(UnixStream),
    Tcp(TcpStream),
    /// An HTTPS upstream (`crate::proxy_http::tls`).
    Tls(Box<crate::proxy_http::tls::Stream>),
}

impl Stream {
    /// Open and quiet: nothing to read, no end of stream.
    fn is_open(&self) -> bool {
        let mut b = [0u8; 1];
        let r = match self {
            Stream::Unix(s) => s.try_read(&mut b),
            Stream::Tcp(s) => s.try_read(&mut b),
            // Looked at without taking the bytes: they are TLS records.
            Stream::Tls(s) => {
                let mut peek = [std::mem::MaybeUninit::<u8>::uninit(); 1];
                socket2::SockRef::from(s.get_ref().0).peek(&mut peek)
            }
        };
        matches!(r, Err(e) if e.kind() == io::ErrorKind::WouldBlock)
    }
}

impl Lease {
    /// Keep the connection for a later request to `addr` (its place in
    /// the bound is given back).
    pub(crate) fn park(self, addr: &BackendAddr) {
        let stream = self.stream;
        IDLE.with(|idle| {
            let mut idle = idle.borrow_mut();
            let list = idle.entry(addr.clone()).or_default();
            if list.len() < IDLE_MAX {
                list.push((stream, std::time::Instant::now()));
            }
        });
    }

    pub(crate) async fn write_all(&mut self, b: &[u8]) -> io::Result<()> {
        match &mut self.stream {
            Stream::Unix(s) => s.write_all(b).await,
            Stream::Tcp(s) => s.write_all(b).await,
            Stream::Tls(s) => {
                s.write_all(b).await?;
                s.flush().await
            }
        }
    }

    /// Give the connection's place in the bound back: it now carries a
    /// tunnel (a WebSocket), which may last for hours and must not keep
    /// ordinary requests from reaching the same upstream.
    pub(crate) fn leave_bound(&mut self) {
        self.permit = None;
    }

    /// Stop sending (the tunnel's half-close); a TLS upstream is told
    /// with `close_notify` first.
    pub(crate) async fn shutdown_write(&mut self) {
        let _ = match &mut self.stream {
            Stream::Unix(s) => s.shutdown().await,
            Stream::Tcp(s) => s.shutdown().await,
            Stream::Tls(s) => s.shutdown().await,
        };
    }

    pub(crate) async fn read_buf(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        if buf.capacity() - buf.len() < 8192 {
            buf.reserve(16 * 1024);
        }
        match &mut self.stream {
            Stream::Unix(s) => s.read_buf(buf).await,
            Stream::Tcp(s) => s.read_buf(buf).await,
            Stream::Tls(s) => s.read_buf(buf).await,
        }
    }
}

/// Idle connections kept per backend and worker thread (HTTP upstreams).
const IDLE_MAX: usize = 16;
/// How long an idle connection is kept.
const IDLE_TTL: Duration = Duration::from_secs(15);

thread_local! {
    /// Kept-alive HTTP upstream connections of this worker thread (its
    /// runtime owns their sockets). They hold no place in the bound.
    static IDLE: std::cell::RefCell<HashMap<BackendAddr, Vec<(Stream, std::time::Instant)>>> =
        Default::default();
}

/// A kept-alive connection to `addr` that is still open, if any.
fn take_idle(addr: &BackendAddr) -> Option<Stream> {
    IDLE.with(|idle| {
        let mut idle = idle.borrow_mut();
        let list = idle.get_mut(addr)?;
        while let Some((s, since)) = list.pop() {
            if since.elapsed() < IDLE_TTL && s.is_open() {
                return Some(s);
            }
        }
        None
    })
}

/// Connect to `addr`, waiting at most `wait` for a free place and for the
/// connection itself, or (`reuse`) take a kept-alive connection when there
/// is one; also tells whether the connection was reused.
pub(crate) async fn connect_or_reuse(
    addr: &BackendAddr,
    waits: Waits,
    reuse: bool,
) -> Result<(Lease, bool), BackendError> {
    let wait = waits.connect;
    use htaccel_engine::stats::{bump, Counter};
    bump(Counter::BackendRequests);
    let sem = semaphore(addr);
    let permit = match tokio::time::timeout(wait, sem.acquire_owned()).await {
        Ok(Ok(p)) => p,
        _ => {
            bump(Counter::BackendFailures);
            return Err(BackendError::Unavailable(format!(
                "AH00898: all {MAX_CONNS} connections to {addr} busy"
            )));
        }
    };
    if reuse {
        if let Some(stream) = take_idle(addr) {
            bump(Counter::BackendReuses);
            return Ok((
                Lease {
                    stream,
                    permit: Some(permit),
                    timeout: waits.io,
                },
                true,
            ));
        }
    }
    match new_connection(addr, waits, permit).await {
        Ok(l) => {
            bump(Counter::BackendConnects);
            Ok((l, false))
        }
        Err(e) => {
            bump(Counter::BackendFailures);
            Err(e)
        }
    }
}

async fn new_connection(
    addr: &BackendAddr,
    waits: Waits,
    permit: OwnedSemaphorePermit,
) -> Result<Lease, BackendError> {
    let wait = waits.connect;
    let fail = |e: io::Error| {
        BackendError::Unavailable(format!(
            "{}: AH01079: failed to make connection to backend: {addr}",
            htaccel_engine::log_format::os_error(&e)
        ))
    };
    let stream = match tokio::time::timeout(wait, async {
        match addr {
            BackendAddr::Unix(p) => UnixStream::connect(p).await.map(Stream::Unix),
            BackendAddr::Tcp(a) => {
                let s = TcpStream::connect(a.as_str()).await?;
                let _ = s.set_nodelay(true);
                Ok(Stream::Tcp(s))
            }
            // A program is run, never connected to (`crate::cgi`).
            BackendAddr::Program(_) => Err(io::ErrorKind::Unsupported.into()),
            BackendAddr::Tls(t) => {
                let s = TcpStream::connect(t.addr.as_str()).await?;
                let _ = s.set_nodelay(true);
                Ok(Stream::Tcp(s))
            }
        }
    })
    .await
    {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return Err(fail(e)),
        Err(_) => return Err(fail(io::ErrorKind::TimedOut.into())),
    };
    // An HTTPS upstream: the handshake within the connect's time too.
    let stream = match (addr, stream) {
        (BackendAddr::Tls(upstream), Stream::Tcp(tcp)) => {
            let secured = crate::proxy_http::tls::handshake(tcp, upstream);
            match tokio::time::timeout(wait, secured).await {
                Ok(Ok(s)) => Stream::Tls(Box::new(s)),
                Ok(Err(e)) => return Err(e),
                Err(_) => return Err(fail(io::ErrorKind::TimedOut.into())),
            }
        }
        (_, stream) => stream,
    };
    Ok(Lease {
        stream,
        permit: Some(permit),
        timeout: waits.io,
    })
}
