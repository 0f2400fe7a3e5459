//! The TLS session as tokio's `AsyncRead` and `AsyncWrite`, for the
//! HTTP/2 framing (`crate::h2`), which drives its connection through those
//! traits. The HTTP/1.1 loop uses the [`Transport`](crate::transport::Transport)
//! methods of the same stream instead.

use super::stream::{take_plaintext, SockIo, TlsStream};
use std::io::{self, Write};
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

impl TlsStream {
    /// Write the records rustls holds until it holds none, or the socket
    /// is full (then `Pending`, woken when it drains).
    fn poll_write_records(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.conn.wants_write() {
            match self.conn.write_tls(&mut SockIo(&self.tcp)) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    ready!(self.tcp.poll_write_ready(cx))?;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncRead for TlsStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            match take_plaintext(&mut this.conn, buf.remaining(), |b| buf.put_slice(b)) {
                Ok(_) => return Poll::Ready(Ok(())),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // The peer closed without close_notify: the end all the same.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Poll::Ready(Ok(())),
                Err(e) => return Poll::Ready(Err(e)),
            }
            match this.conn.read_tls(&mut SockIo(&this.tcp)) {
                Ok(0) => return Poll::Ready(Ok(())),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    ready!(this.tcp.poll_read_ready(cx))?;
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Poll::Ready(Err(e)),
            }
            if let Err(e) = this.conn.process_new_packets() {
                let _ = this.conn.write_tls(&mut SockIo(&this.tcp));
                return Poll::Ready(Err(io::Error::new(io::ErrorKind::InvalidData, e)));
            }
            if this.conn.wants_write() {
                // Post-handshake messages (key updates): best effort here,
                // the next flush writes what the socket does not take.
                let _ = this.conn.write_tls(&mut SockIo(&this.tcp));
            }
        }
    }
}

impl AsyncWrite for TlsStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        loop {
            let n = this.conn.writer().write(buf)?;
            if n > 0 || buf.is_empty() {
                // Records go out now if the socket takes them; what it
                // does not is written by the next write or flush.
                if let Poll::Ready(Err(e)) = this.poll_write_records(cx) {
                    return Poll::Ready(Err(e));
                }
                return Poll::Ready(Ok(n));
            }
            // rustls's buffer is full: the socket must take records first.
            ready!(this.poll_write_records(cx))?;
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_write_records(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.conn.send_close_notify();
        ready!(this.poll_write_records(cx))?;
        let _ = socket2::SockRef::from(&this.tcp).shutdown(std::net::Shutdown::Write);
        Poll::Ready(Ok(()))
    }
}
