//! Connections to FastCGI backends, bounded per backend.
//!
//! Every backend address has one semaphore shared by all worker threads:
//! at most [`MAX_CONNS`] exchanges with it run at once, and a request that
//! finds them all busy waits (back-pressure) up to the wait it was given,
//! then gets a 503 as from an unreachable backend. The bound keeps a
//! slow PHP-FPM from collecting an unbounded number of sockets and
//! requests in its listen queue.
//!
//! Connections are not reused between requests: a PHP-FPM worker holds a
//! kept-alive connection for as long as it is open, so idle pooled
//! connections would take workers away from the requests queued for them
//! (why Apache's mod_proxy_fcgi does not reuse by default either).

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
    _permit: OwnedSemaphorePermit,
}

enum Stream {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Lease {
    pub(crate) async fn write_all(&mut self, b: &[u8]) -> io::Result<()> {
        match &mut self.stream {
            Stream::Unix(s) => s.write_all(b).await,
            Stream::Tcp(s) => s.write_all(b).await,
        }
    }

    pub(crate) async fn read_buf(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        if buf.capacity() - buf.len() < 8192 {
            buf.reserve(16 * 1024);
        }
        match &mut self.stream {
            Stream::Unix(s) => s.read_buf(buf).await,
            Stream::Tcp(s) => s.read_buf(buf).await,
        }
    }
}

/// Connect to `addr`, waiting at most `wait` for a free place and for the
/// connection itself.
pub(crate) async fn connect(addr: &BackendAddr, wait: Duration) -> Result<Lease, BackendError> {
    let sem = semaphore(addr);
    let permit = match tokio::time::timeout(wait, sem.acquire_owned()).await {
        Ok(Ok(p)) => p,
        _ => {
            return Err(BackendError::Unavailable(format!(
                "AH00898: all {MAX_CONNS} connections to {addr} busy"
            )))
        }
    };
    let fail = |e: io::Error| {
        BackendError::Unavailable(format!(
            "({}){e}: AH01079: failed to make connection to backend: {addr}",
            e.raw_os_error().unwrap_or(0)
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
        }
    })
    .await
    {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return Err(fail(e)),
        Err(_) => return Err(fail(io::ErrorKind::TimedOut.into())),
    };
    Ok(Lease {
        stream,
        _permit: permit,
    })
}
