//! One HTTP/2 stream as the exchange sees it: a [`Transport`] whose input
//! is the stream's request written as an HTTP/1.1 message (request line
//! naming `HTTP/2.0`, `Host` from `:authority`, cookies joined, a body
//! without a declared length sent chunked, as mod_http2 hands such a
//! body to Apache's HTTP/1.1 input), and whose output, the HTTP/1.1
//! answer the exchange writes, is read back into HEADERS and DATA frames:
//! interim responses sent as such, hop-by-hop fields dropped, the body's
//! chunking or length turned into DATA and the stream's end.

use super::Session;
use crate::conn;
use crate::transport::Transport;
use crate::write::{Output, Piece};
use bytes::{Bytes, BytesMut};
use h2::server::SendResponse;
use h2::{RecvStream, SendStream};
use htaccel_engine::http::TlsInfo;
use std::cell::RefCell;
use std::future::poll_fn;
use std::io;
use std::os::unix::fs::FileExt;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

/// Bytes of a file read at a time for DATA frames.
const FILE_CHUNK: usize = 64 * 1024;

/// Serve one stream, then tell the session it ended.
pub(super) async fn serve(
    request: http::Request<RecvStream>,
    respond: SendResponse<Bytes>,
    session: Rc<Session>,
) {
    let transport = StreamTransport::new(request, respond, &session);
    conn::serve(
        transport,
        session.remote,
        session.local_addr,
        session.shared.clone(),
        session.local.clone(),
    )
    .await;
    session.open.set(session.open.get() - 1);
    session.ended.notify_one();
}

/// The request side: the HTTP/1.1 bytes not yet read by the exchange,
/// and the stream's body still to come.
struct Inbound {
    ready: BytesMut,
    body: Option<RecvStream>,
    /// The body is sent chunked (no `content-length` was given).
    chunked: bool,
    error: Option<io::Error>,
    /// The exchange ended: reads see the end of input.
    abandoned: bool,
}

impl Inbound {
    fn push_data(&mut self, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        if self.chunked {
            self.ready
                .extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
            self.ready.extend_from_slice(data);
            self.ready.extend_from_slice(b"\r\n");
        } else {
            self.ready.extend_from_slice(data);
        }
    }

    fn finish(&mut self, trailers: Option<http::HeaderMap>) {
        if self.chunked {
            self.ready.extend_from_slice(b"0\r\n");
            for (name, value) in trailers.iter().flatten() {
                self.ready.extend_from_slice(name.as_str().as_bytes());
                self.ready.extend_from_slice(b": ");
                self.ready.extend_from_slice(value.as_bytes());
                self.ready.extend_from_slice(b"\r\n");
            }
            self.ready.extend_from_slice(b"\r\n");
        }
        self.body = None;
    }

    /// Take what the stream has now into `ready`.
    fn poll_body(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(body) = self.body.as_mut() else {
            return Poll::Ready(());
        };
        if !body.is_end_stream() {
            match body.poll_data(cx) {
                Poll::Ready(Some(Ok(data))) => {
                    let _ = body.flow_control().release_capacity(data.len());
                    self.push_data(&data);
                    return Poll::Ready(());
                }
                Poll::Ready(Some(Err(e))) => {
                    self.error = Some(io::Error::other(e));
                    self.body = None;
                    return Poll::Ready(());
                }
                Poll::Ready(None) => {}
                Poll::Pending => return Poll::Pending,
            }
        }
        match body.poll_trailers(cx) {
            Poll::Ready(Ok(t)) => self.finish(t),
            Poll::Ready(Err(e)) => {
                self.error = Some(io::Error::other(e));
                self.body = None;
            }
            Poll::Pending => return Poll::Pending,
        }
        Poll::Ready(())
    }
}

/// Where the answer's HTTP/1.1 text is in its reading.
enum Outbound {
    /// Collecting a response head.
    Head(Vec<u8>),
    /// The body: its framing and the stream to send it on.
    Body(SendStream<Bytes>, BodyFraming),
    /// The stream's end was sent (or the stream is gone).
    Done,
}

/// How the HTTP/1.1 answer delimits its body.
enum BodyFraming {
    Length(u64),
    Chunked(Chunk),
    UntilClose,
}

/// Where a chunked body's reading is.
enum Chunk {
    /// The chunk-size line (its bytes so far).
    Size(Vec<u8>),
    /// Chunk data left.
    Data(u64),
    /// The CRLF after chunk data (bytes of it left).
    DataEnd(u8),
    /// Trailer lines after the last chunk, up to the empty line (the
    /// current line's bytes so far).
    Trailer(Vec<u8>),
}

/// A stream, as the exchange's [`Transport`].
pub(super) struct StreamTransport {
    inbound: RefCell<Inbound>,
    respond: Option<SendResponse<Bytes>>,
    outbound: Outbound,
    head_request: bool,
    tls: Option<Arc<TlsInfo>>,
    /// How long a request body the answer did not need is drained.
    drain_limit: Duration,
    stream: htaccel_engine::http::http2::H2Stream,
    max_data_frame: usize,
    chunk: Vec<u8>,
}

/// Response fields HTTP/2 forbids (connection-specific).
fn hop_by_hop(name: &[u8]) -> bool {
    [
        &b"connection"[..],
        b"keep-alive",
        b"proxy-connection",
        b"transfer-encoding",
        b"upgrade",
    ]
    .iter()
    .any(|h| name.eq_ignore_ascii_case(h))
}

impl StreamTransport {
    fn new(
        request: http::Request<RecvStream>,
        respond: SendResponse<Bytes>,
        session: &Session,
    ) -> StreamTransport {
        let stream_id = u32::from(respond.stream_id());
        let (parts, body) = request.into_parts();
        let mut head = BytesMut::with_capacity(512);
        head.extend_from_slice(parts.method.as_str().as_bytes());
        head.extend_from_slice(b" ");
        let target = if parts.method == http::Method::CONNECT {
            parts.uri.authority().map_or("", |a| a.as_str())
        } else {
            parts.uri.path_and_query().map_or("/", |p| p.as_str())
        };
        head.extend_from_slice(target.as_bytes());
        head.extend_from_slice(b" HTTP/2.0\r\n");
        let authority = parts.uri.authority().map(|a| a.as_str());
        if let Some(a) = authority {
            head.extend_from_slice(b"host: ");
            head.extend_from_slice(a.as_bytes());
            head.extend_from_slice(b"\r\n");
        }
        let mut cookies: Vec<&[u8]> = Vec::new();
        let mut has_length = false;
        for (name, value) in &parts.headers {
            if name == http::header::COOKIE {
                cookies.push(value.as_bytes());
                continue;
            }
            if name == http::header::HOST && authority.is_some() {
                continue;
            }
            has_length |= name == http::header::CONTENT_LENGTH;
            head.extend_from_slice(name.as_str().as_bytes());
            head.extend_from_slice(b": ");
            head.extend_from_slice(value.as_bytes());
            head.extend_from_slice(b"\r\n");
        }
        if !cookies.is_empty() {
            head.extend_from_slice(b"cookie: ");
            head.extend_from_slice(&cookies.join(&b"; "[..]));
            head.extend_from_slice(b"\r\n");
        }
        let has_body = !body.is_end_stream();
        let chunked = has_body && !has_length;
        if chunked {
            head.extend_from_slice(b"transfer-encoding: chunked\r\n");
        }
        head.extend_from_slice(b"\r\n");
        StreamTransport {
            inbound: RefCell::new(Inbound {
                ready: head,
                body: has_body.then_some(body),
                chunked,
                error: None,
                abandoned: false,
            }),
            respond: Some(respond),
            outbound: Outbound::Head(Vec::new()),
            head_request: parts.method == http::Method::HEAD,
            tls: session.tls.clone(),
            drain_limit: session.shared.timeouts.timeout,
            stream: htaccel_engine::http::http2::H2Stream {
                session: session.number,
                id: stream_id,
            },
            max_data_frame: session.max_data_frame,
            chunk: Vec::new(),
        }
    }

    /// Read one answer's head (complete in `head`) and start the response.
    fn start_response(&mut self, head: &[u8]) -> io::Result<()> {
        let text = head.strip_suffix(b"\r\n\r\n").unwrap_or(head);
        let mut lines = text
            .split(|b| *b == b'\n')
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
        let status_line = lines.next().unwrap_or_default();
        let code = status_line
            .split(|b| *b == b' ')
            .nth(1)
            .and_then(|c| std::str::from_utf8(c).ok())
            .and_then(|c| c.parse::<u16>().ok())
            .ok_or_else(|| io::Error::other("unreadable status line"))?;
        let status = http::StatusCode::from_u16(code).map_err(io::Error::other)?;
        let mut response = http::Response::new(());
        *response.status_mut() = status;
        let mut length = None;
        let mut chunked = false;
        let mut last = Vec::with_capacity(2);
        for line in lines {
            let Some(colon) = line.iter().position(|b| *b == b':') else {
                continue;
            };
            let name = &line[..colon];
            let value = line[colon + 1..].trim_ascii();
            if name.eq_ignore_ascii_case(b"transfer-encoding") {
                chunked = true;
            }
            if name.eq_ignore_ascii_case(b"content-length") {
                length = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
            }
            if hop_by_hop(name) {
                continue;
            }
            let name = http::HeaderName::from_bytes(name).map_err(io::Error::other)?;
            let value = http::HeaderValue::from_bytes(value).map_err(io::Error::other)?;
            if name == http::header::DATE || name == http::header::SERVER {
                last.push((name, value));
            } else {
                response.headers_mut().append(name, value);
            }
        }
        // mod_http2 sends the fields the server adds itself after the
        // response's own, where HTTP/1.1 has them first.
        for (name, value) in last {
            response.headers_mut().append(name, value);
        }
        let Some(respond) = self.respond.as_mut() else {
            return Err(io::ErrorKind::BrokenPipe.into());
        };
        if status.is_informational() {
            respond
                .send_informational(response)
                .map_err(io::Error::other)?;
            self.outbound = Outbound::Head(Vec::new());
            return Ok(());
        }
        let no_body =
            self.head_request || code == 204 || code == 304 || (!chunked && length == Some(0));
        let mut respond = self.respond.take().expect("checked above");
        let send = respond
            .send_response(response, no_body)
            .map_err(io::Error::other)?;
        self.outbound = if no_body {
            Outbound::Done
        } else if chunked {
            Outbound::Body(send, BodyFraming::Chunked(Chunk::Size(Vec::new())))
        } else if let Some(n) = length {
            Outbound::Body(send, BodyFraming::Length(n))
        } else {
            Outbound::Body(send, BodyFraming::UntilClose)
        };
        Ok(())
    }

    /// Take answer bytes: head, framing and body data, in any pieces.
    async fn take_bytes(&mut self, mut data: &[u8], timeout: Duration) -> io::Result<()> {
        while !data.is_empty() {
            match &mut self.outbound {
                Outbound::Head(buf) => {
                    buf.extend_from_slice(data);
                    let Some(end) = memchr::memmem::find(buf, b"\r\n\r\n") else {
                        return Ok(());
                    };
                    let mut head = std::mem::take(buf);
                    let rest = head.split_off(end + 4);
                    self.start_response(&head)?;
                    if rest.is_empty() {
                        return Ok(());
                    }
                    // What followed the head (a body queued with it).
                    return Box::pin(self.take_bytes(&rest, timeout)).await;
                }
                // Bytes after the end (a HEAD answer's nothing, a reset stream).
                Outbound::Done => return Ok(()),
                Outbound::Body(_, BodyFraming::Length(left)) => {
                    let n = (*left).min(data.len() as u64) as usize;
                    *left -= n as u64;
                    let end = *left == 0;
                    self.send_data(&data[..n], end, timeout).await?;
                    data = &data[n..];
                    if end {
                        self.outbound = Outbound::Done;
                    }
                }
                Outbound::Body(_, BodyFraming::UntilClose) => {
                    self.send_data(data, false, timeout).await?;
                    return Ok(());
                }
                Outbound::Body(_, BodyFraming::Chunked(chunk)) => match chunk {
                    Chunk::Size(line) => {
                        let Some(nl) = data.iter().position(|b| *b == b'\n') else {
                            line.extend_from_slice(data);
                            return Ok(());
                        };
                        line.extend_from_slice(&data[..nl]);
                        data = &data[nl + 1..];
                        let text = std::str::from_utf8(line).unwrap_or("").trim();
                        let hex = text.split(';').next().unwrap_or("");
                        let size = u64::from_str_radix(hex, 16)
                            .map_err(|_| io::Error::other("unreadable chunk size"))?;
                        *chunk = if size == 0 {
                            Chunk::Trailer(Vec::new())
                        } else {
                            Chunk::Data(size)
                        };
                    }
                    Chunk::Data(left) => {
                        let n = (*left).min(data.len() as u64) as usize;
                        *left -= n as u64;
                        if *left == 0 {
                            *chunk = Chunk::DataEnd(2);
                        }
                        self.send_data(&data[..n], false, timeout).await?;
                        data = &data[n..];
                    }
                    Chunk::DataEnd(left) => {
                        let n = (*left as usize).min(data.len());
                        *left -= n as u8;
                        data = &data[n..];
                        if *left == 0 {
                            *chunk = Chunk::Size(Vec::new());
                        }
                    }
                    Chunk::Trailer(line) => {
                        let Some(nl) = data.iter().position(|b| *b == b'\n') else {
                            line.extend_from_slice(data);
                            return Ok(());
                        };
                        let empty = line.is_empty() && nl <= 1;
                        line.clear();
                        data = &data[nl + 1..];
                        if empty {
                            self.send_data(&[], true, timeout).await?;
                            self.outbound = Outbound::Done;
                        }
                    }
                },
            }
        }
        Ok(())
    }

    /// A file range of the body (the exchange queues files whole).
    async fn take_file(
        &mut self,
        file: &std::fs::File,
        mut offset: u64,
        mut len: u64,
        timeout: Duration,
    ) -> io::Result<()> {
        let mut chunk = std::mem::take(&mut self.chunk);
        chunk.resize(FILE_CHUNK, 0);
        let result = async {
            while len > 0 {
                let want = len.min(FILE_CHUNK as u64) as usize;
                let n = file.read_at(&mut chunk[..want], offset)?;
                if n == 0 {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "file truncated while sending",
                    ));
                }
                self.take_bytes(&chunk[..n], timeout).await?;
                offset += n as u64;
                len -= n as u64;
            }
            Ok(())
        }
        .await;
        self.chunk = chunk;
        result
    }

    /// Send body bytes as DATA within the client's window, each wait for
    /// window at most `timeout`.
    async fn send_data(&mut self, mut data: &[u8], end: bool, timeout: Duration) -> io::Result<()> {
        let Outbound::Body(send, _) = &mut self.outbound else {
            return Ok(());
        };
        let frame = if self.max_data_frame == 0 {
            usize::MAX
        } else {
            self.max_data_frame
        };
        let mut ended = false;
        while !data.is_empty() {
            let want = data.len().min(frame);
            send.reserve_capacity(want);
            let granted = tokio::time::timeout(
                timeout,
                poll_fn(|cx| loop {
                    if send.capacity() > 0 {
                        return Poll::Ready(Ok(send.capacity()));
                    }
                    match send.poll_capacity(cx) {
                        Poll::Ready(Some(Ok(_))) => continue,
                        Poll::Ready(Some(Err(e))) => return Poll::Ready(Err(io::Error::other(e))),
                        Poll::Ready(None) => {
                            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()))
                        }
                        Poll::Pending => return Poll::Pending,
                    }
                }),
            )
            .await
            .map_err(|_| io::Error::from(io::ErrorKind::TimedOut))??;
            let n = granted.min(want);
            ended = end && n == data.len();
            send.send_data(Bytes::copy_from_slice(&data[..n]), ended)
                .map_err(io::Error::other)?;
            data = &data[n..];
        }
        if end && !ended {
            send.send_data(Bytes::new(), true)
                .map_err(io::Error::other)?;
        }
        Ok(())
    }
}

impl Drop for StreamTransport {
    /// A request body the exchange did not read is read and dropped in
    /// the background, so that the answer already queued reaches the
    /// client instead of being cut by a reset of the stream; a client
    /// that sends nothing more is reset after `Timeout`.
    fn drop(&mut self) {
        let Some(mut body) = self.inbound.get_mut().body.take() else {
            return;
        };
        let limit = self.drain_limit;
        tokio::task::spawn_local(async move {
            let drain = async {
                while let Some(Ok(data)) = body.data().await {
                    let _ = body.flow_control().release_capacity(data.len());
                }
            };
            let _ = tokio::time::timeout(limit, drain).await;
        });
    }
}

impl Transport for StreamTransport {
    fn try_read(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        let inbound = self.inbound.get_mut();
        if !inbound.ready.is_empty() {
            let room = buf.capacity() - buf.len();
            let n = room.min(inbound.ready.len());
            buf.extend_from_slice(&inbound.ready.split_to(n));
            return Ok(n);
        }
        if let Some(e) = inbound.error.take() {
            return Err(e);
        }
        if inbound.body.is_none() || inbound.abandoned {
            return Ok(0);
        }
        Err(io::ErrorKind::WouldBlock.into())
    }

    fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut inbound = self.inbound.borrow_mut();
        if !inbound.ready.is_empty()
            || inbound.error.is_some()
            || inbound.body.is_none()
            || inbound.abandoned
        {
            return Poll::Ready(Ok(()));
        }
        inbound.poll_body(cx).map(Ok)
    }

    async fn flush(&mut self, out: &mut Output, timeout: Duration) -> io::Result<()> {
        out.seal();
        let mut result = Ok(());
        for piece in out.pieces() {
            result = match piece {
                Piece::Bytes(b) => self.take_bytes(b, timeout).await,
                Piece::File { file, offset, len } => {
                    self.take_file(file, offset, len, timeout).await
                }
            };
            if result.is_err() {
                break;
            }
        }
        out.clear();
        result
    }

    fn shutdown_write(&mut self) {
        if let Outbound::Body(send, _) = &mut self.outbound {
            // A body delimited by the close ends with the stream.
            let _ = send.send_data(Bytes::new(), true);
        }
        self.outbound = Outbound::Done;
        // The exchange is over: it reads no more (what the client still
        // sends is drained when the transport is dropped).
        let inbound = self.inbound.get_mut();
        inbound.abandoned = true;
        inbound.ready.clear();
    }

    fn tls(&self) -> Option<&Arc<TlsInfo>> {
        self.tls.as_ref()
    }

    fn h2_stream(&self) -> Option<htaccel_engine::http::http2::H2Stream> {
        Some(self.stream)
    }
}
