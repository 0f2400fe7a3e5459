//! `Upgrade: h2c`: an HTTP/1.1 connection that becomes an HTTP/2 session
//! after its request, answered `101 Switching Protocols`, whose stream 1 is
//! that request (RFC 7540, section 3.2; mod_http2's `h2_protocol_switch`).
//!
//! The `h2` crate has no way to open a session with a stream already
//! there, so the session is given the stream as the client would have
//! sent it: [`Upgraded`] lets the handshake read the client's preface and
//! its first frame (its SETTINGS) from the connection, then hands it a
//! HEADERS frame for stream 1 made from the request ([`headers_frame`]),
//! then the connection's bytes again. The frame's header block uses only
//! literal representations that the decoder does not index, so the
//! decoder's dynamic table, which the client's encoder drives, stays as
//! the client expects it; the stream is half-closed by the client, as the
//! upgraded request has no body. The client, for its part, takes stream 1
//! as opened by its request (and its next stream is 3).

use bytes::{Buf, Bytes};
use htaccel_engine::http::http2::H2cUpgrade;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The HEADERS frame (and CONTINUATION frames, past `max_frame` bytes of
/// header block) of stream 1 for the upgraded request, ending the stream.
pub(crate) fn headers_frame(up: &H2cUpgrade, max_frame: usize) -> Vec<u8> {
    let mut block = Vec::new();
    let pseudo: [(&str, &[u8]); 4] = [
        (":method", up.method.as_bytes()),
        (":scheme", up.scheme.as_bytes()),
        (":authority", up.authority.as_bytes()),
        (":path", &up.path),
    ];
    for (name, value) in pseudo {
        literal(&mut block, name.as_bytes(), value);
    }
    for (name, value) in &up.headers {
        // `te` other than `trailers` makes the stream malformed in HTTP/2
        // (the `h2` crate resets it); mod_http2 passes it to the request.
        if name == "te" && !value.eq_ignore_ascii_case(b"trailers") {
            continue;
        }
        literal(&mut block, name.as_bytes(), value);
    }
    let mut out = Vec::with_capacity(block.len() + 9 * (1 + block.len() / max_frame));
    let mut chunks = block.chunks(max_frame.max(1)).peekable();
    let mut first = true;
    // An empty block cannot happen (the pseudo-headers are there).
    while let Some(chunk) = chunks.next() {
        let last = chunks.peek().is_none();
        let (kind, mut flags) = if first { (0x1u8, 0x1u8) } else { (0x9, 0) };
        if last {
            flags |= 0x4;
        }
        let len = chunk.len() as u32;
        out.extend_from_slice(&len.to_be_bytes()[1..]);
        out.push(kind);
        out.push(flags);
        out.extend_from_slice(&1u32.to_be_bytes());
        out.extend_from_slice(chunk);
        first = false;
    }
    out
}

/// A field as "literal never indexed, new name" (RFC 7541, 6.2.3), without
/// Huffman coding: the decoder's dynamic table is left alone.
fn literal(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.push(0x10);
    string(out, name);
    string(out, value);
}

fn string(out: &mut Vec<u8>, s: &[u8]) {
    integer(out, s.len(), 7, 0);
    out.extend_from_slice(s);
}

/// An HPACK integer of `prefix` bits, the byte's other bits `flags`.
fn integer(out: &mut Vec<u8>, mut n: usize, prefix: u32, flags: u8) {
    let max = (1usize << prefix) - 1;
    if n < max {
        out.push(flags | n as u8);
        return;
    }
    out.push(flags | max as u8);
    n -= max;
    while n >= 128 {
        out.push((n % 128) as u8 | 0x80);
        n /= 128;
    }
    out.push(n as u8);
}

/// Where the client's bytes stand until stream 1 is handed over.
enum Phase {
    /// Within the connection preface (bytes of it still to pass).
    Preface(usize),
    /// Within the first frame's 9-byte header (the bytes seen so far).
    FrameHeader([u8; 9], usize),
    /// Within the first frame's payload (bytes still to pass).
    Payload(usize),
    /// Stream 1's frames, then the connection as it is.
    Inject(Bytes),
    Through,
}

/// The connection of an upgraded session, as the `h2` crate reads it:
/// what the HTTP/1.1 loop had read past the request first, then the
/// socket, with stream 1's HEADERS put after the client's first frame.
pub(crate) struct Upgraded<IO> {
    io: IO,
    /// Read from the connection after the request, before the switch.
    early: Bytes,
    phase: Phase,
    stream1: Option<Bytes>,
}

impl<IO> Upgraded<IO> {
    pub(crate) fn new(io: IO, early: Bytes, stream1: Vec<u8>) -> Self {
        Upgraded {
            io,
            early,
            phase: Phase::Preface(super::PREFACE.len()),
            stream1: Some(stream1.into()),
        }
    }
}

impl<IO: AsyncRead + Unpin> Upgraded<IO> {
    /// Read at most `max` bytes of the client's into `buf` (the early bytes
    /// first); the number read, 0 at the end of input.
    fn read_client(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
        max: usize,
    ) -> Poll<io::Result<usize>> {
        let max = max.min(buf.remaining());
        if !self.early.is_empty() {
            let n = max.min(self.early.len());
            buf.put_slice(&self.early[..n]);
            self.early.advance(n);
            return Poll::Ready(Ok(n));
        }
        // Never past what is asked: stream 1 goes in right there.
        let mut dst = vec![0u8; max];
        let mut limited = ReadBuf::new(&mut dst);
        std::task::ready!(Pin::new(&mut self.io).poll_read(cx, &mut limited))?;
        let n = limited.filled().len();
        buf.put_slice(limited.filled());
        Poll::Ready(Ok(n))
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for Upgraded<IO> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            match &mut this.phase {
                Phase::Through => {
                    if !this.early.is_empty() {
                        let n = buf.remaining().min(this.early.len());
                        buf.put_slice(&this.early[..n]);
                        this.early.advance(n);
                        return Poll::Ready(Ok(()));
                    }
                    return Pin::new(&mut this.io).poll_read(cx, buf);
                }
                Phase::Inject(bytes) => {
                    if bytes.is_empty() {
                        this.phase = Phase::Through;
                        continue;
                    }
                    let n = buf.remaining().min(bytes.len());
                    buf.put_slice(&bytes[..n]);
                    bytes.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Phase::Preface(left) => {
                    let left = *left;
                    let start = buf.filled().len();
                    let n = std::task::ready!(this.read_client(cx, buf, left))?;
                    if n == 0 {
                        return Poll::Ready(Ok(()));
                    }
                    let got = &buf.filled()[start..start + n];
                    let at = super::PREFACE.len() - left;
                    if got != &super::PREFACE[at..at + n] {
                        // Not HTTP/2: the handshake refuses it.
                        this.phase = Phase::Through;
                    } else if n == left {
                        this.phase = Phase::FrameHeader([0; 9], 0);
                    } else {
                        this.phase = Phase::Preface(left - n);
                    }
                    return Poll::Ready(Ok(()));
                }
                Phase::FrameHeader(head, have) => {
                    let (mut head, have) = (*head, *have);
                    let start = buf.filled().len();
                    let n = std::task::ready!(this.read_client(cx, buf, 9 - have))?;
                    if n == 0 {
                        return Poll::Ready(Ok(()));
                    }
                    head[have..have + n].copy_from_slice(&buf.filled()[start..start + n]);
                    this.phase = if have + n < 9 {
                        Phase::FrameHeader(head, have + n)
                    } else {
                        let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
                        if len == 0 {
                            Phase::Inject(this.stream1.take().unwrap_or_default())
                        } else {
                            Phase::Payload(len)
                        }
                    };
                    return Poll::Ready(Ok(()));
                }
                Phase::Payload(left) => {
                    let left = *left;
                    let n = std::task::ready!(this.read_client(cx, buf, left))?;
                    if n == 0 {
                        return Poll::Ready(Ok(()));
                    }
                    this.phase = if n == left {
                        Phase::Inject(this.stream1.take().unwrap_or_default())
                    } else {
                        Phase::Payload(left - n)
                    };
                    return Poll::Ready(Ok(()));
                }
            }
        }
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Upgraded<IO> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    fn upgrade() -> H2cUpgrade {
        H2cUpgrade {
            settings: Default::default(),
            client_settings_valid: true,
            interim: true,
            method: "GET".into(),
            scheme: "http",
            authority: "localhost".into(),
            path: bytes::Bytes::from_static(b"/a"),
            headers: vec![("accept".into(), bytes::Bytes::from_static(b"*/*"))],
        }
    }

    #[test]
    fn the_header_block_is_literal_and_ends_the_stream() {
        let f = headers_frame(&upgrade(), 16_384);
        let len = u32::from_be_bytes([0, f[0], f[1], f[2]]) as usize;
        assert_eq!(len, f.len() - 9);
        assert_eq!(&f[3..9], &[0x1, 0x5, 0, 0, 0, 1]);
        // ":method" "GET", never indexed, no Huffman.
        assert_eq!(&f[9..22], b"\x10\x07:method\x03GET");
        // Split in CONTINUATION frames past the frame size.
        let f = headers_frame(&upgrade(), 10);
        assert_eq!(&f[3..5], &[0x1, 0x1]);
        assert_eq!(f[10 + 3 + 9..10 + 5 + 9], [0x9, 0]);
    }

    #[test]
    fn long_strings_take_a_multibyte_length() {
        let mut out = Vec::new();
        integer(&mut out, 1337, 5, 0);
        assert_eq!(out, [31, 154, 10]);
    }

    #[tokio::test]
    async fn stream_one_follows_the_client_s_first_frame() {
        let mut client = Vec::new();
        client.extend_from_slice(super::super::PREFACE);
        client.extend_from_slice(&[0, 0, 6, 0x4, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 100]);
        client.extend_from_slice(b"AFTER");
        // Part of the preface arrived before the switch.
        let early = Bytes::copy_from_slice(&client[..5]);
        let rest = client[5..].to_vec();
        let mut up = Upgraded::new(&rest[..], early, b"STREAM1".to_vec());
        let mut seen = Vec::new();
        up.read_to_end(&mut seen).await.unwrap();
        let mut expected = client[..24 + 15].to_vec();
        expected.extend_from_slice(b"STREAM1AFTER");
        assert_eq!(seen, expected);
    }
}
