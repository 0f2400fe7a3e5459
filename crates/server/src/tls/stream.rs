//! HTTP over an established TLS session: the [`Transport`] that reads and
//! writes through rustls on the connection's non-blocking socket.
//!
//! Reading decrypts what the socket holds into the connection's read
//! buffer; writing hands the queued output to rustls in bounded amounts
//! (its buffer limit) and writes the records as they are made, so a large
//! file is read and encrypted 64 KiB at a time, never whole.

use crate::transport::Transport;
use crate::write::{Output, Piece};
use bytes::BytesMut;
use htaccel_engine::http::TlsInfo;
use rustls::ServerConnection;
use std::io::{self, BufRead, Read, Write};
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::TcpStream;

/// Bytes of a file read (and encrypted) at a time.
const FILE_CHUNK: usize = 64 * 1024;

/// The socket as rustls reads and writes it: non-blocking, `WouldBlock`
/// when it must wait (which also clears tokio's readiness).
pub(crate) struct SockIo<'a>(pub &'a TcpStream);

impl Read for SockIo<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.try_read(buf)
    }
}

impl Write for SockIo<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.try_write(buf)
    }
    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        self.0.try_write_vectored(bufs)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Copy up to `room` bytes of the plaintext rustls already holds into
/// `put`, chunk by chunk, without zeroing a buffer first (a read into a
/// zeroed slice would clear the whole free space of the caller's buffer on
/// every call). `Ok(0)`: the peer closed cleanly; `WouldBlock`: nothing is
/// held; `UnexpectedEof`: the peer closed without `close_notify`.
pub(crate) fn take_plaintext(
    conn: &mut ServerConnection,
    room: usize,
    mut put: impl FnMut(&[u8]),
) -> io::Result<usize> {
    let mut reader = conn.reader();
    let mut taken = 0;
    while taken < room {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(_) if taken > 0 => break,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            break;
        }
        let n = chunk.len().min(room - taken);
        put(&chunk[..n]);
        reader.consume(n);
        taken += n;
    }
    Ok(taken)
}

/// Write every TLS record rustls has ready, waiting for the socket as
/// needed (each wait at most `timeout`).
pub(crate) async fn write_records(
    tcp: &TcpStream,
    conn: &mut ServerConnection,
    timeout: Duration,
) -> io::Result<()> {
    while conn.wants_write() {
        match conn.write_tls(&mut SockIo(tcp)) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                match tokio::time::timeout(timeout, tcp.writable()).await {
                    Ok(r) => r?,
                    Err(_) => return Err(io::ErrorKind::TimedOut.into()),
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// An established TLS session on a connection.
pub(crate) struct TlsStream {
    pub(super) tcp: TcpStream,
    pub(super) conn: ServerConnection,
    info: Arc<TlsInfo>,
    /// Scratch for reading file ranges, allocated on the first large file.
    chunk: Vec<u8>,
}

impl TlsStream {
    pub(crate) fn new(tcp: TcpStream, conn: ServerConnection, info: Arc<TlsInfo>) -> TlsStream {
        TlsStream {
            tcp,
            conn,
            info,
            chunk: Vec::new(),
        }
    }

    /// Give `data` to rustls whole, writing records out whenever its
    /// buffer is full.
    async fn send(&mut self, mut data: &[u8], timeout: Duration) -> io::Result<()> {
        while !data.is_empty() {
            let n = self.conn.writer().write(data)?;
            data = &data[n..];
            if n == 0 || self.conn.wants_write() && !data.is_empty() {
                write_records(&self.tcp, &mut self.conn, timeout).await?;
            }
        }
        Ok(())
    }

    async fn send_file(
        &mut self,
        file: &std::fs::File,
        mut offset: u64,
        mut len: u64,
        timeout: Duration,
    ) -> io::Result<()> {
        let mut chunk = std::mem::take(&mut self.chunk);
        chunk.resize(FILE_CHUNK, 0);
        while len > 0 {
            let want = len.min(FILE_CHUNK as u64) as usize;
            let n = file.read_at(&mut chunk[..want], offset)?;
            if n == 0 {
                // The file is shorter than the engine said.
                self.chunk = chunk;
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "file truncated while sending",
                ));
            }
            if let Err(e) = self.send(&chunk[..n], timeout).await {
                self.chunk = chunk;
                return Err(e);
            }
            offset += n as u64;
            len -= n as u64;
        }
        self.chunk = chunk;
        Ok(())
    }
}

impl Transport for TlsStream {
    fn try_read(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        let start = buf.len();
        let room = buf.capacity() - start;
        loop {
            // Plaintext rustls already holds comes first.
            match take_plaintext(&mut self.conn, room, |b| buf.extend_from_slice(b)) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // The peer closed without close_notify: the end all the same.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                Err(e) => return Err(e),
            }
            match self.conn.read_tls(&mut SockIo(&self.tcp)) {
                Ok(_) => {}
                Err(e) => return Err(e),
            }
            if let Err(e) = self.conn.process_new_packets() {
                // The alert rustls queued, if the socket takes it now.
                let _ = self.conn.write_tls(&mut SockIo(&self.tcp));
                return Err(io::Error::new(io::ErrorKind::InvalidData, e));
            }
            // Post-handshake messages to answer (key updates): best effort,
            // the next flush writes what the socket does not take now.
            if self.conn.wants_write() {
                let _ = self.conn.write_tls(&mut SockIo(&self.tcp));
            }
        }
    }

    fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.tcp.poll_read_ready(cx)
    }

    async fn flush(&mut self, out: &mut Output, timeout: Duration) -> io::Result<()> {
        out.seal();
        for piece in out.pieces() {
            match piece {
                Piece::Bytes(b) | Piece::Head { text: b, .. } => self.send(b, timeout).await?,
                Piece::File { file, offset, len } => {
                    self.send_file(file, offset, len, timeout).await?
                }
            }
        }
        out.clear();
        write_records(&self.tcp, &mut self.conn, timeout).await
    }

    fn shutdown_write(&mut self) {
        self.conn.send_close_notify();
        self.shutdown_write_unclean();
    }

    fn shutdown_write_unclean(&mut self) {
        let _ = self.conn.write_tls(&mut SockIo(&self.tcp));
        let _ = socket2::SockRef::from(&self.tcp).shutdown(std::net::Shutdown::Write);
    }

    fn tls(&self) -> Option<&Arc<TlsInfo>> {
        Some(&self.info)
    }
}
