//! What a connection's bytes travel over, below the HTTP/1.1 framing: plain
//! TCP, or TLS (`crate::tls`). The connection loop (`crate::conn`) is generic
//! over [`Transport`], so that each transport is compiled into its own copy
//! of the loop: plain TCP keeps its direct `read(2)`, `writev(2)` and
//! `sendfile(2)` with no dispatch per call, and TLS reads and writes through
//! rustls. A stream of HTTP/2 or HTTP/3 is one more transport
//! (`crate::stream_exchange`), so that each request is answered by the
//! same HTTP/1.1 exchange.

use crate::write::Output;
use bytes::BytesMut;
use htaccel_engine::http::TlsInfo;
use std::future::Future;
use std::io;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::Interest;
use tokio::net::TcpStream;

/// Why a stream of a multiplexed protocol is reset instead of answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StreamReset {
    /// A response head the protocol cannot carry (mod_http2 hands nghttp2
    /// a field with a line break and the stream is reset).
    Protocol,
    /// The request needs what only HTTP/1.1 has (mod_ssl's new client
    /// verification): the client should ask again over HTTP/1.1.
    Http11Required,
}

/// A connection's byte stream, as the HTTP/1.1 loop uses it.
pub(crate) trait Transport {
    /// Read what is available into `buf` (which has room): `Ok(0)` is the
    /// end of input, `WouldBlock` that nothing is available now.
    fn try_read(&mut self, buf: &mut BytesMut) -> io::Result<usize>;

    /// Ready when [`Transport::try_read`] may have something.
    fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;

    /// Write everything `out` holds; each wait for the peer is bounded by `timeout`.
    fn flush(
        &mut self,
        out: &mut Output,
        timeout: Duration,
    ) -> impl Future<Output = io::Result<()>>;

    /// Stop sending (the start of a lingering close).
    fn shutdown_write(&mut self);

    /// Stop sending without TLS's `close_notify` (mod_ssl's
    /// `ssl-unclean-shutdown`); elsewhere the same as [`Self::shutdown_write`].
    fn shutdown_write_unclean(&mut self) {
        self.shutdown_write()
    }

    /// What the request sees of the TLS session (`None`: plain HTTP).
    fn tls(&self) -> Option<&Arc<TlsInfo>>;

    /// Whether this is a stream of a multiplexed protocol, which carries
    /// one request (its exchange is the last, as on a closing connection).
    fn carries_one_request(&self) -> bool {
        false
    }

    /// Whether this transport sends a response head as fields (HTTP/2,
    /// HTTP/3) and takes them from [`Output::push_head`] where the
    /// exchange has them, rather than reading them back from the text.
    fn sends_fields(&self) -> bool {
        false
    }

    /// The status a multiplexed protocol's own limits answer this
    /// stream's request with (`crate::stream_limits`, which replace
    /// HTTP/1.1's limits for every stream).
    fn refusal(&self) -> Option<u16> {
        None
    }

    /// The status of the final answer whose head is being queued. A
    /// protocol without status lines sends it as a number, and the number
    /// is not always the one HTTP/1.1's line says: for a code Apache has no
    /// line for (306, 399), the line is a 500's (`ap_get_status_line`)
    /// while mod_http2 sends `r->status` itself.
    fn final_status(&mut self, _status: u16) {}

    /// Reset the stream this transport carries, with no answer (a
    /// connection has no such thing).
    fn reset_stream(&mut self, _why: StreamReset) {}

    /// The HTTP/2 stream this transport carries (`None`: a connection).
    fn h2_stream(&self) -> Option<htaccel_engine::http::http2::H2Stream> {
        None
    }

    /// The TCP connection under a plain HTTP/1.x connection, for the
    /// HTTP/2 session an `Upgrade: h2c` switches it to (`None`: this
    /// transport cannot switch).
    fn into_tcp(self) -> Option<TcpStream>
    where
        Self: Sized,
    {
        None
    }
}

/// Plain HTTP over TCP.
pub(crate) struct Plain(pub TcpStream);

impl Transport for Plain {
    #[inline]
    fn try_read(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        let room = buf.capacity() - buf.len();
        let n = self.0.try_read_buf(buf)?;
        if n > 0 && n < room {
            // A short read emptied the socket: forget its readiness now
            // rather than learn it from one more read that fails with
            // EAGAIN (one syscall per request saved). Readiness that
            // arrived meanwhile carries a newer tick and is kept.
            let _ = self.0.try_io(Interest::READABLE, || {
                Err::<(), _>(io::ErrorKind::WouldBlock.into())
            });
        }
        Ok(n)
    }

    #[inline]
    fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.poll_read_ready(cx)
    }

    #[inline]
    fn flush(
        &mut self,
        out: &mut Output,
        timeout: Duration,
    ) -> impl Future<Output = io::Result<()>> {
        out.flush(&self.0, timeout)
    }

    fn shutdown_write(&mut self) {
        let _ = socket2::SockRef::from(&self.0).shutdown(std::net::Shutdown::Write);
    }

    #[inline]
    fn tls(&self) -> Option<&Arc<TlsInfo>> {
        None
    }

    fn into_tcp(self) -> Option<TcpStream> {
        Some(self.0)
    }
}
