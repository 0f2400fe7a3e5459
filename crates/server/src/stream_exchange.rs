//! One request stream of a multiplexed protocol (HTTP/2, HTTP/3) as the
//! HTTP/1.1 exchange (`crate::conn`) sees it: a [`Transport`] whose input
//! is the stream's request written as an HTTP/1.1 message (request line
//! naming the stream's protocol, `Host` from `:authority`, cookies
//! joined, a body without a declared length sent chunked, as mod_http2
//! hands such a body to Apache's HTTP/1.1 input), and whose output, the
//! HTTP/1.1 answer the exchange writes, is read back into the protocol's
//! response head and body: interim responses sent as such, hop-by-hop
//! fields dropped, `Date` and `Server` last, the body's chunking, length
//! or close turned into data and the stream's end, nothing after the head
//! of a HEAD, 204 or 304 answer. A head the exchange prepared once for
//! every copy of a kept answer is not read back: its fields were read
//! once ([`PreparedFields`]) and come beside its text
//! (`crate::write::Output::push_head`).
//!
//! The translation is the same for both protocols; what differs is how a
//! stream's body is received and its answer sent, which each protocol
//! gives through [`RequestBody`] and [`ResponseSink`] (`crate::h2::stream`,
//! `crate::h3::stream`).

pub(crate) use crate::stream_limits::Verdict;
use crate::transport::{StreamReset, Transport};
use crate::write::{Output, Piece};
use bytes::{Bytes, BytesMut};
use htaccel_engine::http::TlsInfo;
use std::cell::RefCell;
use std::future::Future;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};

/// Bytes of a file read at a time for the body.
const FILE_CHUNK: usize = 64 * 1024;

/// A header name as mod_http2 gives it to Apache: each letter that
/// starts the name or follows a `-` in capitals (`x-foo-bar` is `X-Foo-Bar`).
fn push_camel_case(out: &mut BytesMut, name: &[u8]) {
    let from = out.len();
    out.extend_from_slice(name);
    let mut start = true;
    for b in &mut out[from..] {
        if start {
            b.make_ascii_uppercase();
        }
        start = *b == b'-';
    }
}

/// What a stream's request body has next.
pub(crate) enum BodyEvent {
    Data(Bytes),
    /// The body's end, with the trailers if any.
    End(Option<http::HeaderMap>),
    Failed(io::Error),
}

/// The receiving side of a stream: its request body.
pub(crate) trait RequestBody {
    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<BodyEvent>;
}

/// The sending side of a stream: its response.
pub(crate) trait ResponseSink {
    /// Send an interim (1xx) response head.
    fn informational(&mut self, head: http::Response<()>) -> impl Future<Output = io::Result<()>>;

    /// Send the final response head; `end`: there is no body.
    fn response(
        &mut self,
        head: http::Response<()>,
        end: bool,
    ) -> impl Future<Output = io::Result<()>>;

    /// Send body bytes (`end`: the last), each wait for the peer's flow
    /// control at most `timeout`.
    fn data(
        &mut self,
        data: &[u8],
        end: bool,
        timeout: Duration,
    ) -> impl Future<Output = io::Result<()>>;

    /// End the body now (a body delimited by the connection's close).
    fn end(&mut self);

    /// Reset the stream, with no answer.
    fn reset(&mut self, why: StreamReset);
}

/// The request's head as HTTP/1.1 text (`version`: `HTTP/2.0`,
/// `HTTP/3.0`), and whether its body (`has_body`) is sent chunked. A
/// request mod_http2's limits refused (`crate::stream_limits`) is written
/// as its request line and `Host` alone, for the error path that answers
/// it (`/` for a `:path` that was not taken).
pub(crate) fn request_head(
    parts: &http::request::Parts,
    has_body: bool,
    version: &str,
    verdict: Verdict,
) -> (BytesMut, bool) {
    let mut head = BytesMut::with_capacity(512);
    head.extend_from_slice(parts.method.as_str().as_bytes());
    head.extend_from_slice(b" ");
    if let Verdict::Refuse { path_refused, .. } = verdict {
        let target = match parts.uri.path_and_query() {
            Some(p) if !path_refused => p.as_str(),
            _ => "/",
        };
        head.extend_from_slice(target.as_bytes());
        head.extend_from_slice(b" ");
        head.extend_from_slice(version.as_bytes());
        head.extend_from_slice(b"\r\n");
        if let Some(a) = parts.uri.authority() {
            head.extend_from_slice(b"Host: ");
            head.extend_from_slice(a.as_str().as_bytes());
            head.extend_from_slice(b"\r\n");
        }
        head.extend_from_slice(b"\r\n");
        return (head, false);
    }
    let target = if parts.method == http::Method::CONNECT {
        parts.uri.authority().map_or("", |a| a.as_str())
    } else {
        parts.uri.path_and_query().map_or("/", |p| p.as_str())
    };
    head.extend_from_slice(target.as_bytes());
    head.extend_from_slice(b" ");
    head.extend_from_slice(version.as_bytes());
    head.extend_from_slice(b"\r\n");
    // mod_http2's request table: names camel-cased (`h2_util_camel_case_header`),
    // cookies joined with `; ` where the first came, `Host` set from
    // `:authority` (in place of a `host` the client sent, else last).
    let authority = parts.uri.authority().map(|a| a.as_str().as_bytes());
    let mut cookies = false;
    let mut has_length = false;
    let mut host_written = false;
    for name in parts.headers.keys() {
        let values = parts.headers.get_all(name);
        if name == http::header::COOKIE {
            if !cookies {
                head.extend_from_slice(b"Cookie: ");
                let joined: Vec<&[u8]> = values.iter().map(|v| v.as_bytes()).collect();
                head.extend_from_slice(&joined.join(&b"; "[..]));
                head.extend_from_slice(b"\r\n");
                cookies = true;
            }
            continue;
        }
        if name == http::header::HOST {
            if host_written {
                continue;
            }
            host_written = true;
            let value = authority.or_else(|| values.iter().next().map(|v| v.as_bytes()));
            head.extend_from_slice(b"Host: ");
            head.extend_from_slice(value.unwrap_or_default());
            head.extend_from_slice(b"\r\n");
            continue;
        }
        has_length |= name == http::header::CONTENT_LENGTH;
        // Repeated names merged, `, ` between (`apr_table_mergen`).
        push_camel_case(&mut head, name.as_str().as_bytes());
        head.extend_from_slice(b": ");
        for (i, value) in values.iter().enumerate() {
            if i > 0 {
                head.extend_from_slice(b", ");
            }
            head.extend_from_slice(value.as_bytes());
        }
        head.extend_from_slice(b"\r\n");
    }
    if let (Some(a), false) = (authority, host_written) {
        head.extend_from_slice(b"Host: ");
        head.extend_from_slice(a);
        head.extend_from_slice(b"\r\n");
    }
    let chunked = has_body && !has_length;
    if chunked {
        head.extend_from_slice(b"Transfer-Encoding: chunked\r\n");
    }
    head.extend_from_slice(b"\r\n");
    (head, chunked)
}

/// The request side: the HTTP/1.1 bytes not yet read by the exchange,
/// and the stream's body still to come.
struct Inbound<B> {
    ready: BytesMut,
    body: Option<B>,
    /// The body is sent chunked (no `content-length` was given).
    chunked: bool,
    error: Option<io::Error>,
    /// The exchange ended: reads see the end of input.
    abandoned: bool,
}

impl<B: RequestBody> Inbound<B> {
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
        match body.poll_event(cx) {
            Poll::Ready(BodyEvent::Data(data)) => self.push_data(&data),
            Poll::Ready(BodyEvent::End(trailers)) => self.finish(trailers),
            Poll::Ready(BodyEvent::Failed(e)) => {
                self.error = Some(e);
                self.body = None;
            }
            Poll::Pending => return Poll::Pending,
        }
        Poll::Ready(())
    }
}

/// The end of an HTTP/1.1 head, searched with one searcher built once.
static HEAD_END: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\r\n\r\n"));

/// Room made for a response's fields at once (a static file's answer has
/// about ten), so that the field map does not grow step by step.
const FIELDS_EXPECTED: usize = 16;

/// Where the answer's HTTP/1.1 text is in its reading.
enum Outbound {
    /// Collecting a response head.
    Head(Vec<u8>),
    /// The body, and its framing.
    Body(BodyFraming),
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
pub(crate) struct StreamTransport<B: RequestBody + 'static, S> {
    inbound: RefCell<Inbound<B>>,
    /// How long a request body the answer did not need is drained after
    /// the exchange (zero: not at all).
    drain_limit: Duration,
    /// The HTTP/2 stream, for what mod_http2 shows of it.
    h2_stream: Option<htaccel_engine::http::http2::H2Stream>,
    /// The status mod_http2's limits answer the request with.
    refusal: Option<u16>,
    /// `H2EarlyHints` of the session's server: `103 Early Hints` answers
    /// reach the client (otherwise they are dropped, as mod_http2's
    /// stream drops them).
    early_hints: bool,
    sink: S,
    /// The final response head was sent.
    responded: bool,
    /// The final answer's status as the exchange knows it (its HTTP/1.1
    /// line may say another, see [`Transport::final_status`]).
    final_status: Option<u16>,
    outbound: Outbound,
    head_request: bool,
    tls: Option<Arc<TlsInfo>>,
    chunk: Vec<u8>,
}

/// The values of each name that repeats joined into one, with `, `, where
/// the name first came (`apr_table_merge`).
fn join_repeated(headers: &mut http::HeaderMap) -> io::Result<()> {
    let repeated: Vec<http::HeaderName> = headers
        .keys()
        .filter(|name| headers.get_all(*name).iter().nth(1).is_some())
        .cloned()
        .collect();
    for name in repeated {
        let joined = headers
            .get_all(&name)
            .iter()
            .map(http::HeaderValue::as_bytes)
            .collect::<Vec<_>>()
            .join(&b", "[..]);
        let value = http::HeaderValue::from_bytes(&joined).map_err(io::Error::other)?;
        headers.insert(name, value);
    }
    Ok(())
}

/// Response fields HTTP/2 and HTTP/3 forbid (connection-specific).
fn hop_by_hop(name: &http::HeaderName) -> bool {
    use http::header;
    name == header::CONNECTION
        || name == header::TRANSFER_ENCODING
        || name == header::UPGRADE
        || name == "keep-alive"
        || name == "proxy-connection"
}

/// The field name of the answer's head as `http` holds it: the names the
/// server and the engine write most, as they spell them, are taken as they
/// are; any other goes through `HeaderName`'s parser (which lower-cases).
fn field_name(name: &[u8]) -> Result<http::HeaderName, http::header::InvalidHeaderName> {
    use http::header;
    let known = match name {
        b"Date" => header::DATE,
        b"Server" => header::SERVER,
        b"Last-Modified" => header::LAST_MODIFIED,
        b"ETag" => header::ETAG,
        b"Accept-Ranges" => header::ACCEPT_RANGES,
        b"Content-Length" => header::CONTENT_LENGTH,
        b"Content-Type" => header::CONTENT_TYPE,
        b"Content-Encoding" => header::CONTENT_ENCODING,
        b"Content-Language" => header::CONTENT_LANGUAGE,
        b"Cache-Control" => header::CACHE_CONTROL,
        b"Expires" => header::EXPIRES,
        b"Vary" => header::VARY,
        b"Location" => header::LOCATION,
        b"Set-Cookie" => header::SET_COOKIE,
        b"Link" => header::LINK,
        // Written by the server for HTTP/1.1, and left out of the stream.
        b"Connection" => header::CONNECTION,
        b"Keep-Alive" => http::HeaderName::from_static("keep-alive"),
        b"Transfer-Encoding" => header::TRANSFER_ENCODING,
        _ => return http::HeaderName::from_bytes(name),
    };
    Ok(known)
}

/// The lines of a head's text (without its final empty line), found with
/// memchr: a byte-by-byte split was a tenth of a stream's cost.
fn lines_of(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut start = 0;
    std::iter::from_fn(move || {
        if start > text.len() {
            return None;
        }
        let end = memchr::memchr(b'\n', &text[start..]).map_or(text.len(), |i| start + i);
        let line = &text[start..end];
        start = end + 1;
        Some(line.strip_suffix(b"\r").unwrap_or(line))
    })
}

/// An answer's head read from its HTTP/1.1 text (`head`, up to its empty
/// line) as a stream sends it; `final_status`: the status the exchange
/// gave for a final answer ([`Transport::final_status`]).
fn read_head(head: &[u8], final_status: Option<u16>) -> io::Result<FieldHead> {
    let text = head.strip_suffix(b"\r\n\r\n").unwrap_or(head);
    let mut lines = lines_of(text);
    let status_line = lines.next().unwrap_or_default();
    let code = status_line
        .split(|b| *b == b' ')
        .nth(1)
        .and_then(|c| std::str::from_utf8(c).ok())
        .and_then(|c| c.parse::<u16>().ok())
        .ok_or_else(|| io::Error::other("unreadable status line"))?;
    let code = match final_status {
        // An invalid code (600 and up) is a 500 to mod_http2 too
        // (`ap_die`'s `ap_is_HTTP_VALID_RESPONSE`), as the line says.
        Some(status) if code >= 200 && (200..600).contains(&status) => status,
        _ => code,
    };
    let status = http::StatusCode::from_u16(code).map_err(io::Error::other)?;
    let mut response = http::Response::new(());
    *response.status_mut() = status;
    response.headers_mut().reserve(FIELDS_EXPECTED);
    let mut framing = FieldFraming::default();
    let mut last = Vec::with_capacity(2);
    for line in lines {
        let Some((name, value)) = framing.field(line)? else {
            continue;
        };
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
    Ok(FieldHead { response, framing })
}

/// How an answer's HTTP/1.1 fields delimit its body, as its lines are read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct FieldFraming {
    length: Option<u64>,
    chunked: bool,
}

impl FieldFraming {
    /// One header line as a stream sends it, noting the body's framing;
    /// `None`: not a field, or one the stream leaves out (hop-by-hop).
    fn field(&mut self, line: &[u8]) -> io::Result<Option<(http::HeaderName, http::HeaderValue)>> {
        let Some(colon) = memchr::memchr(b':', line) else {
            return Ok(None);
        };
        let name = field_name(&line[..colon]).map_err(io::Error::other)?;
        let value = line[colon + 1..].trim_ascii();
        if name == http::header::TRANSFER_ENCODING {
            self.chunked = true;
        }
        if name == http::header::CONTENT_LENGTH {
            self.length = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
        }
        if hop_by_hop(&name) {
            return Ok(None);
        }
        let value = http::HeaderValue::from_bytes(value).map_err(io::Error::other)?;
        Ok(Some((name, value)))
    }
}

/// A response head as a stream sends it: status and fields (hop-by-hop
/// ones left out, `Date` and `Server` last), and its body's framing.
#[derive(Debug)]
pub(crate) struct FieldHead {
    response: http::Response<()>,
    framing: FieldFraming,
}

/// An answer's prepared head (`crate::write::PreparedHead`) read once into
/// a stream's fields: each copy of the answer then sends them without its
/// HTTP/1.1 text being read again. The lines are split where the
/// connection's own fields go, as in the text.
#[derive(Debug)]
pub(crate) struct PreparedFields {
    status: http::StatusCode,
    before: http::HeaderMap,
    after: Vec<(http::HeaderName, http::HeaderValue)>,
    date: Option<http::HeaderValue>,
    server: Option<http::HeaderValue>,
    framing: FieldFraming,
}

impl PreparedFields {
    /// The fields of a head whose lines are `before` and `after` the
    /// connection's own; `None` for a head a stream must read as text
    /// (an interim or invalid status, a field it cannot carry).
    pub(crate) fn read(
        status: u16,
        before: &[u8],
        after: &[u8],
        date: Option<&[u8]>,
        server: &[u8],
    ) -> Option<PreparedFields> {
        if !(200..600).contains(&status) {
            return None;
        }
        let mut framing = FieldFraming::default();
        let mut fields = |text: &[u8]| -> Option<Vec<(http::HeaderName, http::HeaderValue)>> {
            let text = text.strip_suffix(b"\r\n").unwrap_or(text);
            lines_of(text)
                .filter(|line| !line.is_empty())
                .filter_map(|line| framing.field(line).transpose())
                .collect::<io::Result<_>>()
                .ok()
        };
        let mut before_map = http::HeaderMap::with_capacity(FIELDS_EXPECTED);
        for (name, value) in fields(before)? {
            before_map.append(name, value);
        }
        let after = fields(after)?;
        let value = |v: &[u8]| http::HeaderValue::from_bytes(v.trim_ascii()).ok();
        Some(PreparedFields {
            status: http::StatusCode::from_u16(status).ok()?,
            before: before_map,
            after,
            date: match date {
                Some(d) => Some(value(d)?),
                None => None,
            },
            server: match server {
                [] => None,
                s => Some(value(s)?),
            },
            framing,
        })
    }

    /// The head for one exchange framed by `f`: the fields a stream keeps
    /// of the connection's own (a length the server adds, `Alt-Svc`) where
    /// the text has them, `Date` (`now`'s unless the answer has its own)
    /// and `Server` last.
    pub(crate) fn head(&self, now: SystemTime, f: &crate::write::Framing) -> FieldHead {
        let mut response = http::Response::new(());
        *response.status_mut() = self.status;
        let headers = response.headers_mut();
        *headers = self.before.clone();
        let mut framing = self.framing;
        if let Some(n) = f.content_length {
            headers.append(http::header::CONTENT_LENGTH, http::HeaderValue::from(n));
            framing.length = Some(n);
        }
        framing.chunked |= f.chunked;
        if let Some(alt) = f
            .alt_svc
            .as_deref()
            .and_then(|a| http::HeaderValue::from_str(a).ok())
        {
            headers.append(http::header::ALT_SVC, alt);
        }
        for (name, value) in &self.after {
            headers.append(name.clone(), value.clone());
        }
        let date = match &self.date {
            Some(own) => own.clone(),
            None => crate::write::with_date(now, |d| {
                http::HeaderValue::from_bytes(d).unwrap_or(http::HeaderValue::from_static(""))
            }),
        };
        headers.append(http::header::DATE, date);
        if let Some(server) = &self.server {
            headers.append(http::header::SERVER, server.clone());
        }
        FieldHead { response, framing }
    }
}

impl<B: RequestBody + 'static, S: ResponseSink> StreamTransport<B, S> {
    /// A stream whose request `head` was made by [`request_head`]
    /// (`chunked` as it said), its body still to come from `body`
    /// (`None`: none).
    pub(crate) fn new(
        head: BytesMut,
        chunked: bool,
        body: Option<B>,
        head_request: bool,
        sink: S,
        tls: Option<Arc<TlsInfo>>,
    ) -> Self {
        StreamTransport {
            inbound: RefCell::new(Inbound {
                ready: head,
                body,
                chunked,
                error: None,
                abandoned: false,
            }),
            drain_limit: Duration::ZERO,
            h2_stream: None,
            refusal: None,
            early_hints: false,
            sink,
            responded: false,
            final_status: None,
            outbound: Outbound::Head(Vec::new()),
            head_request,
            tls,
            chunk: Vec::new(),
        }
    }

    /// Drain, for at most `limit` after the exchange, a request body it
    /// did not read, so that the answer already queued reaches the client
    /// instead of being cut by a reset of the stream.
    pub(crate) fn draining_for(mut self, limit: Duration) -> Self {
        self.drain_limit = limit;
        self
    }

    /// `103 Early Hints` answers are sent (`H2EarlyHints on`).
    pub(crate) fn sending_early_hints(mut self, on: bool) -> Self {
        self.early_hints = on;
        self
    }

    /// The HTTP/2 stream this is (mod_http2's variables for its request).
    pub(crate) fn on_h2_stream(mut self, stream: htaccel_engine::http::http2::H2Stream) -> Self {
        self.h2_stream = Some(stream);
        self
    }

    /// The request was refused by mod_http2's limits
    /// (`crate::stream_limits`): the exchange answers it with that status.
    pub(crate) fn refused_by(mut self, verdict: Verdict) -> Self {
        if let Verdict::Refuse { status, .. } = verdict {
            self.refusal = Some(status);
        }
        self
    }

    /// Body bytes already received (read before the transport was made).
    pub(crate) fn push_body(&mut self, data: &[u8]) {
        self.inbound.get_mut().push_data(data);
    }

    /// The body ended before the transport was made.
    pub(crate) fn end_body(&mut self, trailers: Option<http::HeaderMap>) {
        self.inbound.get_mut().finish(trailers);
    }

    /// Read one answer's head (complete in `head`) and start the response.
    async fn start_response(&mut self, head: &[u8]) -> io::Result<()> {
        let head = read_head(head, self.final_status)?;
        self.begin(head).await
    }

    /// Start the response whose head is `head`: an interim answer sent as
    /// such, a final one with its body's framing taken on.
    async fn begin(&mut self, head: FieldHead) -> io::Result<()> {
        let FieldHead {
            mut response,
            framing,
        } = head;
        if self.responded {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        let code = response.status().as_u16();
        if response.status().is_informational() {
            if code == 103 && !self.early_hints {
                self.outbound = Outbound::Head(Vec::new());
                return Ok(());
            }
            // mod_http2 reads an interim answer back from its HTTP/1.1
            // text, joining the values of a name that repeats.
            join_repeated(response.headers_mut())?;
            self.sink.informational(response).await?;
            self.outbound = Outbound::Head(Vec::new());
            return Ok(());
        }
        let FieldFraming { length, chunked } = framing;
        let no_body =
            self.head_request || code == 204 || code == 304 || (!chunked && length == Some(0));
        self.responded = true;
        self.sink.response(response, no_body).await?;
        self.outbound = if no_body {
            Outbound::Done
        } else if chunked {
            Outbound::Body(BodyFraming::Chunked(Chunk::Size(Vec::new())))
        } else if let Some(n) = length {
            Outbound::Body(BodyFraming::Length(n))
        } else {
            Outbound::Body(BodyFraming::UntilClose)
        };
        Ok(())
    }

    /// Take answer bytes: head, framing and body data, in any pieces.
    async fn take_bytes(&mut self, mut data: &[u8], timeout: Duration) -> io::Result<()> {
        while !data.is_empty() {
            match &mut self.outbound {
                Outbound::Head(buf) if buf.is_empty() => {
                    // The usual case: the whole head in one piece, read
                    // where it lies.
                    let Some(end) = HEAD_END.find(data) else {
                        buf.extend_from_slice(data);
                        return Ok(());
                    };
                    self.start_response(&data[..end + 4]).await?;
                    data = &data[end + 4..];
                }
                Outbound::Head(buf) => {
                    buf.extend_from_slice(data);
                    let Some(end) = HEAD_END.find(buf) else {
                        return Ok(());
                    };
                    let mut head = std::mem::take(buf);
                    let rest = head.split_off(end + 4);
                    self.start_response(&head).await?;
                    if rest.is_empty() {
                        return Ok(());
                    }
                    // What followed the head (a body queued with it).
                    return Box::pin(self.take_bytes(&rest, timeout)).await;
                }
                // Bytes after the end (a HEAD answer's nothing, a reset stream).
                Outbound::Done => return Ok(()),
                Outbound::Body(BodyFraming::Length(left)) => {
                    let n = (*left).min(data.len() as u64) as usize;
                    *left -= n as u64;
                    let end = *left == 0;
                    self.sink.data(&data[..n], end, timeout).await?;
                    data = &data[n..];
                    if end {
                        self.outbound = Outbound::Done;
                    }
                }
                Outbound::Body(BodyFraming::UntilClose) => {
                    self.sink.data(data, false, timeout).await?;
                    return Ok(());
                }
                Outbound::Body(BodyFraming::Chunked(chunk)) => match chunk {
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
                        self.sink.data(&data[..n], false, timeout).await?;
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
                            self.sink.data(&[], true, timeout).await?;
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
}

impl<B: RequestBody + 'static, S> Drop for StreamTransport<B, S> {
    /// A request body the exchange did not read is read and dropped in
    /// the background (see [`StreamTransport::draining_for`]); a client
    /// that sends nothing more has its stream reset at the limit.
    fn drop(&mut self) {
        if self.drain_limit.is_zero() {
            return;
        }
        let Some(mut body) = self.inbound.get_mut().body.take() else {
            return;
        };
        let limit = self.drain_limit;
        tokio::task::spawn_local(async move {
            let drain = std::future::poll_fn(|cx| loop {
                match body.poll_event(cx) {
                    Poll::Ready(BodyEvent::Data(_)) => continue,
                    Poll::Ready(_) => return Poll::Ready(()),
                    Poll::Pending => return Poll::Pending,
                }
            });
            let _ = tokio::time::timeout(limit, drain).await;
        });
    }
}

impl<B: RequestBody + 'static, S: ResponseSink> Transport for StreamTransport<B, S> {
    fn try_read(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        let inbound = self.inbound.get_mut();
        if inbound.ready.is_empty() && !inbound.abandoned {
            // What the stream has received already, without waiting: a
            // read that does not block sees the DATA frames (and the end)
            // that came with the request, as mod_http2's input gives them
            // to a non-blocking read (mod_proxy_fcgi's prefetch). The
            // stream's window bounds how much that can be.
            let mut cx = Context::from_waker(std::task::Waker::noop());
            while inbound.body.is_some() && inbound.poll_body(&mut cx).is_ready() {}
        }
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
                // A head the exchange also gave as fields is sent as they
                // are, unless text of another head came before it.
                Piece::Head { text, fields } => match (&self.outbound, fields.take()) {
                    (Outbound::Head(partial), Some(head)) if partial.is_empty() => {
                        self.begin(*head).await
                    }
                    _ => self.take_bytes(text, timeout).await,
                },
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
        if let Outbound::Body(_) = &self.outbound {
            // A body delimited by the close ends with the stream.
            self.sink.end();
        }
        self.outbound = Outbound::Done;
        // The exchange is over: it reads no more.
        let inbound = self.inbound.get_mut();
        inbound.abandoned = true;
        inbound.ready.clear();
    }

    fn tls(&self) -> Option<&Arc<TlsInfo>> {
        self.tls.as_ref()
    }

    fn h2_stream(&self) -> Option<htaccel_engine::http::http2::H2Stream> {
        self.h2_stream
    }

    fn carries_one_request(&self) -> bool {
        true
    }

    fn sends_fields(&self) -> bool {
        true
    }

    fn refusal(&self) -> Option<u16> {
        self.refusal
    }

    fn final_status(&mut self, status: u16) {
        self.final_status = Some(status);
    }

    fn reset_stream(&mut self, why: StreamReset) {
        self.responded = true;
        self.outbound = Outbound::Done;
        self.sink.reset(why);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(method: &str, uri: &str, headers: &[(&str, &str)]) -> http::request::Parts {
        let mut b = http::Request::builder().method(method).uri(uri);
        for (n, v) in headers {
            b = b.header(*n, *v);
        }
        b.body(()).unwrap().into_parts().0
    }

    /// The names taken as they are and the connection-specific ones are
    /// those the parser would make and refuse.
    #[test]
    fn response_field_names() {
        for name in [
            "Date",
            "Server",
            "Last-Modified",
            "ETag",
            "Accept-Ranges",
            "Content-Length",
            "Content-Type",
            "Content-Encoding",
            "Content-Language",
            "Cache-Control",
            "Expires",
            "Vary",
            "Location",
            "Set-Cookie",
            "Link",
            "Connection",
            "Keep-Alive",
            "Transfer-Encoding",
            "X-Other",
            "etag",
        ] {
            assert_eq!(
                field_name(name.as_bytes()).unwrap(),
                http::HeaderName::from_bytes(name.as_bytes()).unwrap()
            );
        }
        assert!(field_name(b"Bad Name").is_err());
        for name in [
            "Connection",
            "Keep-Alive",
            "keep-alive",
            "Proxy-Connection",
            "Transfer-Encoding",
            "UPGRADE",
        ] {
            assert!(hop_by_hop(&field_name(name.as_bytes()).unwrap()), "{name}");
        }
        for name in [
            "Upgrades",
            "Connectio",
            "Content-Length",
            "Keep-Alivee",
            "Date",
        ] {
            assert!(!hop_by_hop(&field_name(name.as_bytes()).unwrap()), "{name}");
        }
    }

    #[test]
    fn the_request_reads_as_http11() {
        let p = parts(
            "POST",
            "https://example.com:8443/a?b=c",
            &[("cookie", "a=1"), ("cookie", "b=2"), ("x-one", "1")],
        );
        let (head, chunked) = request_head(&p, true, "HTTP/3.0", Verdict::Accept);
        assert!(chunked);
        assert_eq!(
            &head[..],
            &b"POST /a?b=c HTTP/3.0\r\nCookie: a=1; b=2\r\nX-One: 1\r\nHost: example.com:8443\r\nTransfer-Encoding: chunked\r\n\r\n"[..]
        );
        let p = parts("PUT", "https://h/x", &[("content-length", "3")]);
        let (head, chunked) = request_head(&p, true, "HTTP/2.0", Verdict::Accept);
        assert!(!chunked);
        assert!(head.ends_with(b"Content-Length: 3\r\nHost: h\r\n\r\n"));
        let p = parts("GET", "https://h/", &[]);
        let (head, chunked) = request_head(&p, false, "HTTP/2.0", Verdict::Accept);
        assert!(!chunked);
        assert_eq!(&head[..], &b"GET / HTTP/2.0\r\nHost: h\r\n\r\n"[..]);
        // A `host` the client sent takes `:authority`'s value where it stands.
        let p = parts(
            "GET",
            "https://a.test/",
            &[("x-a", "1"), ("host", "b.test"), ("x-b", "2")],
        );
        let (head, _) = request_head(&p, false, "HTTP/2.0", Verdict::Accept);
        assert_eq!(
            &head[..],
            &b"GET / HTTP/2.0\r\nX-A: 1\r\nHost: a.test\r\nX-B: 2\r\n\r\n"[..]
        );
    }

    /// A prepared answer's fields, as streams take them, are what reading
    /// its written text gives, for every framing the exchange decides.
    #[test]
    fn prepared_fields_are_the_texts_fields() {
        use crate::write::{check_headers, Framing, HeadFacts, PreparedHead};
        use htaccel_engine::http::{Body, Response};
        let now = std::time::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let answers = crate::write::tests::PREPARED_ANSWERS;
        for (status, fields) in answers {
            let mut resp = Response::new(*status);
            for (a, b) in fields.iter() {
                resp.add_header(a.to_string(), b.to_string());
            }
            resp.body = Body::bytes(b"12345".to_vec());
            for head in [false, true] {
                for (content_length, chunked, alt_svc, upgrade) in [
                    (None, false, None, None),
                    (Some(7), false, Some("h3=\":443\"; ma=86400"), None),
                    (None, true, None, Some("h2c")),
                ] {
                    let p = PreparedHead::new(&resp, head, "Apache").expect("prepared");
                    let facts = HeadFacts::of(&resp, check_headers(&resp.headers, true).unwrap());
                    let f = Framing {
                        content_length,
                        chunked,
                        alt_svc: alt_svc.map(String::from),
                        upgrade: upgrade.map(Arc::from),
                        keep_alive: Some((5, Some(99))),
                        connection: Some("Keep-Alive"),
                        ..Framing::fixed(*status, false, 5, head, false, &facts)
                    };
                    let mut text = Vec::new();
                    p.write(&mut text, now, &f);
                    let read = read_head(&text, Some(*status)).unwrap();
                    let prepared = p.stream_fields(now, &f).expect("fields");
                    let list = |h: &FieldHead| -> Vec<(String, Vec<u8>)> {
                        h.response
                            .headers()
                            .iter()
                            .map(|(n, v)| (n.to_string(), v.as_bytes().to_vec()))
                            .collect()
                    };
                    let case = format!("{status} {fields:?} head={head} {f:?}");
                    assert_eq!(prepared.response.status(), read.response.status(), "{case}");
                    assert_eq!(list(&prepared), list(&read), "{case}");
                    assert_eq!(prepared.framing, read.framing, "{case}");
                }
            }
        }
        // A status no stream can send as it is takes the text's path.
        let p = PreparedHead::new(&Response::new(600), false, "A").expect("prepared");
        let f = Framing::fixed(600, false, 0, false, false, &p.facts);
        assert!(p.stream_fields(now, &f).is_none());
    }
}
