//! The lingering close of an HTTP/2 session.
//!
//! When a session ends with a GOAWAY (a protocol error, a flood refused,
//! an idle timeout), the client may still be sending: a header block that
//! never ends, a bomb, DATA. Closing a socket whose receive queue holds
//! unread bytes makes the kernel answer with a reset, and a reset makes
//! the client's kernel drop what it had not yet handed to the client,
//! the GOAWAY among it: the client sees "connection reset" instead of the
//! reason. Apache closes every connection, HTTP/2 ones included, through
//! `ap_lingering_close`; so does this. The `h2` crate owns the connection
//! while the session runs and drops it at the end, so the session lends
//! it through [`Lent`] and takes it back for [`linger`].

use std::cell::RefCell;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::time::Instant;

/// A connection lent to the `h2` crate; the session keeps a second handle.
pub(super) struct Lent<IO>(pub Rc<RefCell<IO>>);

impl<IO: AsyncRead + Unpin> AsyncRead for Lent<IO> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0.borrow_mut()).poll_read(cx, buf)
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Lent<IO> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut *self.0.borrow_mut()).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut *self.0.borrow_mut()).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.0.borrow().is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0.borrow_mut()).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0.borrow_mut()).poll_shutdown(cx)
    }
}

/// Stop sending (after whatever the session queued), then read and drop
/// what the client still sends until it closes: each wait at most
/// `crate::conn::LINGER_READ`, all of it at most `crate::conn::LINGER_MAX`,
/// as for an HTTP/1.1 connection.
pub(super) async fn linger<IO: AsyncRead + AsyncWrite + Unpin>(io: &mut IO) {
    let end = Instant::now() + crate::conn::LINGER_MAX;
    let wait = || (Instant::now() + crate::conn::LINGER_READ).min(end);
    // Already shut by the session's own close, or the peer is gone: the
    // reads below find out which.
    if tokio::time::timeout_at(wait(), io.shutdown())
        .await
        .is_err()
    {
        return;
    }
    let mut sink = vec![0u8; 16 * 1024];
    while let Ok(Ok(n)) = tokio::time::timeout_at(wait(), io.read(&mut sink)).await {
        if n == 0 {
            return;
        }
    }
}
