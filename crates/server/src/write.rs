//! Writing responses: the status line (Apache's table, kept in the engine's
//! `http::status`), the header block in Apache's order, and the body parts —
//! bytes through `writev(2)`, files through `sendfile(2)` on the non-blocking
//! socket.
//!
//! # Header order
//!
//! Apache's HTTP header filter emits `Date` and `Server` first, then the
//! response header table in insertion order. The content handler has filled
//! that table (`Last-Modified`, `ETag`, `Accept-Ranges`, then
//! `Content-Length` from the content-length filter); the header filter then
//! appends `Keep-Alive` and `Connection` (`ap_set_keepalive`),
//! `Transfer-Encoding`, and last the entity headers that live outside the
//! table: `Content-Type`, `Content-Encoding`, `Content-Language`. Observed on
//! the wire with Apache 2.4.71:
//!
//! ```text
//! HTTP/1.1 200 OK
//! Date: …
//! Server: Apache
//! Last-Modified: …
//! ETag: "264-…"
//! Accept-Ranges: bytes
//! Content-Length: 612
//! Keep-Alive: timeout=5, max=100
//! Connection: Keep-Alive
//! Content-Type: text/html
//! ```
//!
//! The engine gives its headers in Apache's order with the entity headers
//! last; the server inserts what it adds itself (`Content-Length` when the
//! engine did not set one, `Keep-Alive`, `Connection`, `Transfer-Encoding`)
//! before that trailing run of entity headers.
//!
//! # Bodies
//!
//! Small parts are copied into the connection's write buffer so that the
//! head and the body of a small response, and several pipelined responses,
//! leave in one `writev`. Larger byte parts are referenced, not copied;
//! larger file parts go through `sendfile(2)`, waiting for writability on
//! `EAGAIN`.

use crate::chars::{find_token, is_chunked, is_ctrl};
use crate::stream_exchange::{FieldHead, PreparedFields};
use bytes::Bytes;
use htaccel_engine::header_table;
use htaccel_engine::http::{status, Response};
use std::borrow::Cow;
use std::cell::Cell;
use std::fs::File;
use std::io::{self, IoSlice};
use std::ops::Range;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::io::Interest;
use tokio::net::TcpStream;

/// Byte parts up to this size are copied into the write buffer; larger
/// ones (a cached small file's bytes, shared) go to `writev(2)` as their
/// own slice. At 32 KiB the copy was 14 % of the user-space instructions
/// of a request on bench/realistic.py's mix (4.4k of 31.7k); the kernel
/// copies from the slice either way.
const COPY_BYTES_MAX: usize = 2 * 1024;
/// File parts up to this size are read into the write buffer rather than
/// sent with `sendfile(2)`: one `pread` plus the shared `writev` costs less
/// than a separate `sendfile` and lets pipelined responses share a write.
pub(crate) const COPY_FILE_MAX: u64 = 16 * 1024;
/// `IOV_MAX` is 1024 on Linux; far fewer are ever needed.
const MAX_IOV: usize = 64;

/// Statuses that never carry a body (`AP_STATUS_IS_HEADER_ONLY`, and 1xx).
pub(crate) fn status_has_no_body(status: u16) -> bool {
    status::is_header_only(status) || (100..200).contains(&status)
}

fn is_entity_header(name: &str) -> bool {
    name.eq_ignore_ascii_case("Content-Type")
        || name.eq_ignore_ascii_case("Content-Encoding")
        || name.eq_ignore_ascii_case("Content-Language")
}

thread_local! {
    static DATE: std::cell::RefCell<(u64, [u8; 29])> = const { std::cell::RefCell::new((u64::MAX, [0; 29])) };
}

/// `Date` value for `now`, formatted once per second per thread.
pub(crate) fn with_date<R>(now: SystemTime, f: impl FnOnce(&[u8]) -> R) -> R {
    let secs = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    DATE.with(|d| {
        let mut d = d.borrow_mut();
        if d.0 != secs {
            let s = htaccel_engine::http::date::fmt_http_date(secs as i64);
            let len = s.len().min(29);
            d.1[..len].copy_from_slice(&s.as_bytes()[..len]);
            d.0 = secs;
        }
        f(&d.1)
    })
}

/// What the connection layer decided about the framing and persistence of
/// one response.
#[derive(Clone, Debug)]
pub(crate) struct Framing {
    /// Add `Content-Length: n` (the engine did not set one).
    pub content_length: Option<u64>,
    /// Send the body chunked and say so.
    pub chunked: bool,
    /// Drop the engine's `Content-Length`/`Transfer-Encoding`/entity headers
    /// (204, 304) or an engine `Transfer-Encoding` that cannot apply.
    pub strip_length: bool,
    pub strip_entity: bool,
    pub strip_transfer_encoding: bool,
    /// `HEAD`: a `Content-Length: 0` from the engine is dropped (Apache).
    pub head: bool,
    /// The length of the body about to be sent: an engine `Content-Length`
    /// is written with this value, so that the framing always matches.
    pub body_length: Option<u64>,
    /// `Keep-Alive: timeout=…[, max=…]` value, when the client asked for it.
    pub keep_alive: Option<(u64, Option<u32>)>,
    /// Token merged into `Connection`: `Keep-Alive`, `close`, or nothing.
    pub connection: Option<&'static str>,
    /// A handler's own status line (`404 Gone fishing`), kept as Apache
    /// keeps `r->status_line`.
    pub status_line: Option<String>,
    /// Some header value holds an obs-fold (as [`check_headers`] found):
    /// values are scanned for folds to unfold only then.
    pub folded: bool,
    /// `Upgrade: …` with `Connection: Upgrade`, right after `Server` (the
    /// first answer of a connection whose server offers other protocols).
    pub upgrade: Option<Arc<str>>,
    /// `Alt-Svc: …`, HTTP/3's advertisement (htaccel_http3), when the
    /// answer has no `Alt-Svc` of its own.
    pub alt_svc: Option<String>,
    /// The status line says `HTTP/1.0` (`force-response-1.0` for an
    /// HTTP/1.0 request).
    pub http10: bool,
}

/// A status line (`HTTP/1.1 200 OK`), in the version the answer goes in.
fn write_status_line(out: &mut Vec<u8>, line: &str, http10: bool) {
    match line.strip_prefix("HTTP/1.1") {
        Some(rest) if http10 => {
            out.extend_from_slice(b"HTTP/1.0");
            out.extend_from_slice(rest.as_bytes());
        }
        _ => out.extend_from_slice(line.as_bytes()),
    }
}

/// Append one piece of a streamed body, as a chunk when `chunked`.
pub(crate) fn push_body_piece(out: &mut Vec<u8>, data: &[u8], chunked: bool) {
    if data.is_empty() {
        return;
    }
    if chunked {
        out.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
    }
    out.extend_from_slice(data);
    if chunked {
        out.extend_from_slice(b"\r\n");
    }
}

/// Serialise a response head into `out`.
pub(crate) fn write_head(
    out: &mut Vec<u8>,
    status: u16,
    headers: &[(Cow<'static, str>, String)],
    server: &str,
    now: SystemTime,
    f: &Framing,
) {
    match &f.status_line {
        Some(custom) => {
            write_status_line(out, &status::status_line_custom(status, custom), f.http10)
        }
        None => write_status_line(out, status::status_line(status), f.http10),
    }
    let date = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("Date"))
        .map(|(_, v)| v.as_bytes());
    write_date(out, date, now);
    let server = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("Server"))
        .map_or(server, |(_, v)| v.as_str());
    write_server(out, server.as_bytes());
    let merged = write_upgrade(
        out,
        f,
        headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("Connection")),
    );
    write_fields(out, headers, f, |out, m| own_headers(out, f, m || merged));
    out.extend_from_slice(b"\r\n");
}

/// The announcement of other protocols (Apache's core sets `Upgrade` and
/// `Connection: Upgrade` first in `headers_out`; the keep-alive token is
/// merged into that `Connection`). Whether it wrote the `Connection`.
fn write_upgrade(out: &mut Vec<u8>, f: &Framing, own_connection: bool) -> bool {
    let Some(offer) = &f.upgrade else {
        return false;
    };
    header(out, "Upgrade", offer.as_bytes(), false);
    if own_connection {
        return false;
    }
    out.extend_from_slice(b"Connection: Upgrade");
    if let Some(tok) = f.connection {
        out.extend_from_slice(b", ");
        out.extend_from_slice(tok.as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    true
}

/// `Date`: the response's own value, else `now`.
fn write_date(out: &mut Vec<u8>, own: Option<&[u8]>, now: SystemTime) {
    out.extend_from_slice(b"\r\nDate: ");
    match own {
        Some(v) => out.extend_from_slice(v),
        None => with_date(now, |d| out.extend_from_slice(d)),
    }
    out.extend_from_slice(b"\r\n");
}

fn write_server(out: &mut Vec<u8>, server: &[u8]) {
    if !server.is_empty() {
        out.extend_from_slice(b"Server: ");
        out.extend_from_slice(server);
        out.extend_from_slice(b"\r\n");
    }
}

/// The response's header lines in order, with `own` called once where the
/// server's own headers go (before the trailing entity headers), told
/// whether a `Connection` of the response already took the server's token.
fn write_fields(
    out: &mut Vec<u8>,
    headers: &[(Cow<'static, str>, String)],
    f: &Framing,
    mut own: impl FnMut(&mut Vec<u8>, bool),
) {
    // The server's own headers go before the trailing entity headers.
    let mut tail = headers.len();
    while tail > 0 && is_entity_header(&headers[tail - 1].0) {
        tail -= 1;
    }
    let mut merged_connection = false;
    for (i, (name, value)) in headers.iter().enumerate() {
        if i == tail {
            own(out, merged_connection);
        }
        if name.eq_ignore_ascii_case("Date")
            || name.eq_ignore_ascii_case("Server")
            || name.eq_ignore_ascii_case("Keep-Alive")
        {
            continue;
        }
        if name.eq_ignore_ascii_case("Content-Length")
            && (f.strip_length || (f.head && value == "0"))
        {
            continue;
        }
        if name.eq_ignore_ascii_case("Transfer-Encoding")
            && (f.strip_length || f.strip_transfer_encoding)
        {
            continue;
        }
        if f.strip_entity && is_entity_header(name) {
            continue;
        }
        if let (Some(n), true) = (f.body_length, name.eq_ignore_ascii_case("Content-Length")) {
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(itoa(n, &mut [0; 20]));
            out.extend_from_slice(b"\r\n");
            continue;
        }
        header(out, name, value.as_bytes(), f.folded);
        if name.eq_ignore_ascii_case("Connection") && !merged_connection {
            // `apr_table_mergen` appends to the existing value in place.
            if let Some(tok) = f.connection {
                out.truncate(out.len() - 2);
                out.extend_from_slice(b", ");
                out.extend_from_slice(tok.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            merged_connection = true;
        }
    }
    if tail == headers.len() {
        own(out, merged_connection);
    }
}

/// What the connection layer reads from a response's header list before it
/// frames it: the same for every copy of one answer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HeadFacts {
    /// The values hold obs-folds to unfold ([`check_headers`]).
    pub folded: bool,
    /// The engine set `Content-Length`.
    pub engine_cl: bool,
    /// The engine asked for chunking (`Transfer-Encoding: chunked`).
    pub engine_chunked: bool,
    /// The response's `Connection` says `close`.
    pub wimpy: bool,
}

impl HeadFacts {
    /// The facts of a response whose headers passed [`check_headers`].
    pub(crate) fn of(resp: &Response, folded: bool) -> HeadFacts {
        HeadFacts {
            folded,
            engine_cl: resp.header("Content-Length").is_some(),
            engine_chunked: resp
                .header("Transfer-Encoding")
                .is_some_and(|v| is_chunked(v.as_bytes())),
            wimpy: resp
                .header("Connection")
                .is_some_and(|v| find_token(v.as_bytes(), b"close")),
        }
    }
}

/// A response head serialised once for every copy of an answer the answer
/// memo hands out (`Response::head_cache`): the checks, the facts and the
/// header lines depend only on the answer and on whether the request was a
/// `HEAD`, so only the status line's neighbours that change (`Date`) and
/// the server's own headers (`Keep-Alive`, `Connection`, a synthesised
/// `Content-Length`) are written per exchange.
#[derive(Debug)]
pub(crate) struct PreparedHead {
    /// Prepared for a `HEAD` request (else for any other method).
    pub head: bool,
    pub facts: HeadFacts,
    status: u16,
    status_line: &'static str,
    date: Option<Vec<u8>>,
    server: Vec<u8>,
    /// The header lines, with the server's own headers to go at `split`.
    lines: Vec<u8>,
    split: usize,
    /// The same head as a stream of HTTP/2 or HTTP/3 sends it, read from
    /// the lines on the first stream that needs it.
    fields: OnceLock<Option<PreparedFields>>,
}

impl PreparedHead {
    /// The prepared head of `resp` for a request that was (`head`) or was
    /// not a `HEAD`; `None` for an answer that must take the full path: a
    /// header that fails the checks (answered 500 there), a `Connection`
    /// the server's token would merge into, or a custom status line.
    pub(crate) fn new(resp: &Response, head: bool, server: &str) -> Option<PreparedHead> {
        // Token names only: a name `Unsafe` lets through takes the full
        // path, where a stream refuses it.
        let folded = check_headers(&resp.headers, true)?;
        if resp.header("Connection").is_some() || resp.status_line.is_some() {
            return None;
        }
        let facts = HeadFacts::of(resp, folded);
        let framing = Framing::fixed(
            resp.status,
            resp.entity_in_headers,
            resp.body.len(),
            head,
            false,
            &facts,
        );
        let mut lines = Vec::with_capacity(256);
        let mut split = None;
        write_fields(&mut lines, &resp.headers, &framing, |out, _| {
            split = Some(out.len())
        });
        let own = |name: &str| resp.header(name).map(|v| v.as_bytes().to_vec());
        Some(PreparedHead {
            head,
            facts,
            status: resp.status,
            status_line: status::status_line(resp.status),
            date: own("Date"),
            server: own("Server").unwrap_or_else(|| server.as_bytes().to_vec()),
            lines,
            split: split?,
            fields: OnceLock::new(),
        })
    }

    /// The head as a stream sends it, for one exchange framed by `f`: the
    /// fields [`PreparedHead::write`] writes, less those a stream leaves
    /// out (hop-by-hop); `None` where a stream must read the written text.
    pub(crate) fn stream_fields(&self, now: SystemTime, f: &Framing) -> Option<FieldHead> {
        let fields = self
            .fields
            .get_or_init(|| {
                PreparedFields::read(
                    self.status,
                    &self.lines[..self.split],
                    &self.lines[self.split..],
                    self.date.as_deref(),
                    &self.server,
                )
            })
            .as_ref()?;
        Some(fields.head(now, f))
    }

    /// Write the head for one exchange framed by `f` (whose own headers are
    /// the only part not prepared).
    pub(crate) fn write(&self, out: &mut Vec<u8>, now: SystemTime, f: &Framing) {
        write_status_line(out, self.status_line, f.http10);
        write_date(out, self.date.as_deref(), now);
        write_server(out, &self.server);
        let merged = write_upgrade(out, f, false);
        out.extend_from_slice(&self.lines[..self.split]);
        own_headers(out, f, merged);
        out.extend_from_slice(&self.lines[self.split..]);
        out.extend_from_slice(b"\r\n");
    }
}

impl Framing {
    /// The framing decided by the answer and the request's method alone;
    /// the exchange fills in the rest (`content_length`, `chunked`,
    /// `keep_alive`, `connection`).
    pub(crate) fn fixed(
        status: u16,
        entity_in_headers: bool,
        body_len: u64,
        head: bool,
        open_body: bool,
        facts: &HeadFacts,
    ) -> Framing {
        let header_only = head || status_has_no_body(status);
        Framing {
            // A backend's body follows: its own length stands.
            body_length: (facts.engine_cl && !header_only && !open_body).then_some(body_len),
            content_length: None,
            chunked: false,
            strip_length: status == 204 || status == 304,
            strip_entity: (status == 204 || status == 304) && !entity_in_headers,
            // The engine's `Transfer-Encoding` only asks for chunking; the
            // server writes its own header when it chunks.
            strip_transfer_encoding: facts.engine_chunked,
            head,
            keep_alive: None,
            connection: None,
            status_line: None,
            folded: facts.folded,
            upgrade: None,
            alt_svc: None,
            http10: false,
        }
    }
}

fn own_headers(out: &mut Vec<u8>, f: &Framing, merged_connection: bool) {
    if let Some(n) = f.content_length {
        out.extend_from_slice(b"Content-Length: ");
        out.extend_from_slice(itoa(n, &mut [0; 20]));
        out.extend_from_slice(b"\r\n");
    }
    if let Some((timeout, max)) = f.keep_alive {
        out.extend_from_slice(b"Keep-Alive: timeout=");
        out.extend_from_slice(itoa(timeout, &mut [0; 20]));
        if let Some(max) = max {
            out.extend_from_slice(b", max=");
            out.extend_from_slice(itoa(max as u64, &mut [0; 20]));
        }
        out.extend_from_slice(b"\r\n");
    }
    if let (Some(tok), false) = (f.connection, merged_connection) {
        header(out, "Connection", tok.as_bytes(), false);
    }
    if f.chunked {
        out.extend_from_slice(b"Transfer-Encoding: chunked\r\n");
    }
    if let Some(alt) = &f.alt_svc {
        header(out, "Alt-Svc", alt.as_bytes(), false);
    }
}

fn header(out: &mut Vec<u8>, name: &str, value: &[u8], folded: bool) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    if folded && header_table::has_ctl(value) {
        // Only obs-folds pass `headers_valid`: each CR LF and the blanks
        // after it become one space, as Apache's header filter writes them.
        let mut i = 0;
        while i < value.len() {
            if value[i] == b'\r' {
                i += 2;
                while i < value.len() && matches!(value[i], b' ' | b'\t') {
                    i += 1;
                }
                out.push(b' ');
            } else {
                out.push(value[i]);
                i += 1;
            }
        }
    } else {
        out.extend_from_slice(value);
    }
    out.extend_from_slice(b"\r\n");
}

/// An interim answer as Apache's `ap_send_interim_response` writes one:
/// its status line and `fields`, nothing of the server's own.
pub(crate) fn write_interim(
    out: &mut Vec<u8>,
    status_line: &str,
    fields: &[(Cow<'static, str>, String)],
) {
    out.extend_from_slice(b"HTTP/1.1 ");
    out.extend_from_slice(status_line.as_bytes());
    out.extend_from_slice(b"\r\n");
    for (name, value) in fields {
        header(out, name, value.as_bytes(), false);
    }
    out.extend_from_slice(b"\r\n");
}

/// `103 Early Hints` answers as Apache's `ap_send_interim_response`
/// writes them, ahead of the answer. Only streams carry them (the stream's
/// framing turns each into an interim HEADERS frame); a field no client
/// could take (a name that is no token, a value with control bytes) is
/// left out and returned, for the error log.
pub(crate) fn write_early_hints<'h>(
    out: &mut Vec<u8>,
    hints: &'h [Vec<(String, String)>],
) -> Vec<&'h str> {
    let mut refused = Vec::new();
    for fields in hints {
        out.extend_from_slice(b"HTTP/1.1 103 Early Hints\r\n");
        for (name, value) in fields {
            if !header_table::is_token(name.as_bytes()) || header_table::has_ctl(value.as_bytes()) {
                refused.push(name.as_str());
                continue;
            }
            header(out, name, value.as_bytes(), false);
        }
        out.extend_from_slice(b"\r\n");
    }
    refused
}

/// Apache's check of response headers before they are sent
/// (`check_headers` in the HTTP header filter): names are tokens (under
/// `HttpProtocolOptions Unsafe`, not `strict`: visible bytes), values
/// hold no control bytes except HT and obs-folds (CR LF followed by a
/// blank). A response that fails is replaced by a 500.
pub(crate) fn headers_valid(headers: &[(Cow<'static, str>, String)], strict: bool) -> bool {
    check_headers(headers, strict).is_some()
}

/// [`headers_valid`], telling also whether a value holds an obs-fold
/// (`Some(true)`): only then must the writer look for folds to unfold.
pub(crate) fn check_headers(headers: &[(Cow<'static, str>, String)], strict: bool) -> Option<bool> {
    let mut folded = false;
    for (n, v) in headers {
        let v = v.as_bytes();
        if !header_table::is_field_name(n.as_bytes(), strict) {
            return None;
        }
        if header_table::has_ctl(v) {
            if !folds_only(v) {
                return None;
            }
            folded = true;
        }
    }
    Some(folded)
}

/// A value whose only control bytes are obs-folds (CR LF and a blank).
fn folds_only(v: &[u8]) -> bool {
    v.iter().enumerate().all(|(i, &c)| {
        !is_ctrl(c)
            || (c == b'\r'
                && v.get(i + 1) == Some(&b'\n')
                && matches!(v.get(i + 2), Some(b' ' | b'\t')))
            || (c == b'\n'
                && i > 0
                && v[i - 1] == b'\r'
                && matches!(v.get(i + 1), Some(b' ' | b'\t')))
    })
}

pub(crate) fn itoa(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buf[i..]
}

enum Seg {
    Buf(Range<usize>),
    /// A response head's text in `buf`, with its fields for a stream,
    /// which sends those instead (taken by the first that reads them).
    Head {
        text: Range<usize>,
        fields: Cell<Option<Box<FieldHead>>>,
    },
    Bytes(Bytes),
    File {
        file: Arc<File>,
        offset: u64,
        len: u64,
    },
}

impl std::fmt::Debug for Seg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Seg::Buf(r) => f.debug_tuple("Buf").field(r).finish(),
            Seg::Head { text, .. } => f.debug_struct("Head").field("text", text).finish(),
            Seg::Bytes(b) => f.debug_tuple("Bytes").field(&b.len()).finish(),
            Seg::File { offset, len, .. } => f
                .debug_struct("File")
                .field("offset", offset)
                .field("len", len)
                .finish(),
        }
    }
}

impl Seg {
    fn len(&self) -> u64 {
        match self {
            Seg::Buf(r) | Seg::Head { text: r, .. } => r.len() as u64,
            Seg::Bytes(b) => b.len() as u64,
            Seg::File { len, .. } => *len,
        }
    }
}

/// One queued piece of output, as [`Output::pieces`] lends it.
pub(crate) enum Piece<'a> {
    Bytes(&'a [u8]),
    /// A response head: its text, and its fields for a stream (see
    /// [`Output::push_head`]).
    Head {
        text: &'a [u8],
        fields: &'a Cell<Option<Box<FieldHead>>>,
    },
    File {
        file: &'a File,
        offset: u64,
        len: u64,
    },
}

/// The bytes queued on a connection and not yet written.
#[derive(Debug, Default)]
pub(crate) struct Output {
    pub buf: Vec<u8>,
    segs: Vec<Seg>,
    /// First segment not completely written, and how much of it was.
    head: usize,
    done: u64,
    /// Bytes written to the socket so far.
    written: u64,
}

impl Output {
    pub(crate) fn is_empty(&self) -> bool {
        self.head >= self.segs.len() && self.unsealed() == 0
    }

    /// Bytes queued in total (for batching decisions).
    pub(crate) fn queued(&self) -> u64 {
        self.segs[self.head.min(self.segs.len())..]
            .iter()
            .map(Seg::len)
            .sum::<u64>()
            + self.unsealed() as u64
            - self.done
    }

    /// Bytes ever queued on this connection (written or not): the
    /// difference between two readings is what was queued in between
    /// (mod_logio's `%O`).
    pub(crate) fn position(&self) -> u64 {
        self.written + self.queued()
    }

    /// Bytes at the end of `buf` not yet covered by a segment.
    #[inline]
    fn unsealed(&self) -> usize {
        let covered = self
            .segs
            .iter()
            .rev()
            .find_map(|s| match s {
                Seg::Buf(r) | Seg::Head { text: r, .. } => Some(r.end),
                _ => None,
            })
            .unwrap_or(0);
        self.buf.len() - covered
    }

    /// Cover the bytes appended to `buf` since the last segment.
    #[inline]
    pub(crate) fn seal(&mut self) {
        let start = self.buf.len() - self.unsealed();
        if start == self.buf.len() {
            return;
        }
        if let Some(Seg::Buf(r)) = self.segs.last_mut() {
            if r.end == start {
                r.end = self.buf.len();
                return;
            }
        }
        self.segs.push(Seg::Buf(start..self.buf.len()));
    }

    /// Queue a response head written by `write`, with the same head as
    /// `fields` for a transport that sends fields rather than text (a
    /// stream of HTTP/2 or HTTP/3, which would otherwise read the fields
    /// back from the text). The text stays queued, and counted, either way.
    pub(crate) fn push_head(&mut self, write: impl FnOnce(&mut Vec<u8>), fields: FieldHead) {
        self.seal();
        let start = self.buf.len();
        write(&mut self.buf);
        self.segs.push(Seg::Head {
            text: start..self.buf.len(),
            fields: Cell::new(Some(Box::new(fields))),
        });
    }

    pub(crate) fn push_bytes(&mut self, b: &Bytes) {
        if b.len() <= COPY_BYTES_MAX {
            self.buf.extend_from_slice(b);
        } else {
            self.seal();
            self.segs.push(Seg::Bytes(b.clone()));
        }
    }

    /// Queue a file range; small ranges are read now.
    pub(crate) fn push_file(&mut self, file: &Arc<File>, offset: u64, len: u64) -> io::Result<()> {
        if len <= COPY_FILE_MAX {
            let start = self.buf.len();
            self.buf.resize(start + len as usize, 0);
            if let Err(e) = file.read_exact_at(&mut self.buf[start..], offset) {
                self.buf.truncate(start);
                return Err(e);
            }
            return Ok(());
        }
        self.seal();
        self.segs.push(Seg::File {
            file: file.clone(),
            offset,
            len,
        });
        Ok(())
    }

    /// Whether a file segment is queued (it must be sent before anything else is read).
    pub(crate) fn has_file(&self) -> bool {
        self.segs[self.head.min(self.segs.len())..]
            .iter()
            .any(|s| matches!(s, Seg::File { .. }))
    }

    /// What is queued and not yet written, in order (after [`Output::seal`]):
    /// for a transport that must copy the bytes (TLS).
    pub(crate) fn pieces(&self) -> impl Iterator<Item = Piece<'_>> {
        let from = self.head.min(self.segs.len());
        self.segs[from..].iter().enumerate().map(move |(k, seg)| {
            let skip = if k == 0 { self.done } else { 0 };
            match seg {
                Seg::Buf(r) => Piece::Bytes(&self.buf[r.start + skip as usize..r.end]),
                Seg::Head { text, .. } if skip > 0 => {
                    Piece::Bytes(&self.buf[text.start + skip as usize..text.end])
                }
                Seg::Head { text, fields } => Piece::Head {
                    text: &self.buf[text.clone()],
                    fields,
                },
                Seg::Bytes(b) => Piece::Bytes(&b[skip as usize..]),
                Seg::File { file, offset, len } => Piece::File {
                    file,
                    offset: offset + skip,
                    len: len - skip,
                },
            }
        })
    }

    /// Forget everything queued (written by the caller: it counts as
    /// written for [`Output::position`]).
    pub(crate) fn clear(&mut self) {
        self.seal();
        self.written += self.queued();
        self.buf.clear();
        self.segs.clear();
        self.head = 0;
        self.done = 0;
    }

    /// Write everything queued. Each wait for writability is bounded by `timeout`.
    pub(crate) async fn flush(&mut self, stream: &TcpStream, timeout: Duration) -> io::Result<()> {
        self.seal();
        while self.head < self.segs.len() {
            let r = if let Seg::File { file, offset, len } = &self.segs[self.head] {
                let (fd, off, left) = (file.as_raw_fd(), offset + self.done, len - self.done);
                stream.try_io(Interest::WRITABLE, || {
                    sendfile(stream.as_raw_fd(), fd, off, left)
                })
            } else {
                let mut iov: [IoSlice<'_>; MAX_IOV] = [IoSlice::new(&[]); MAX_IOV];
                let mut n = 0;
                for (k, seg) in self.segs[self.head..].iter().enumerate() {
                    let skip = if k == 0 { self.done as usize } else { 0 };
                    let s: &[u8] = match seg {
                        Seg::Buf(r) | Seg::Head { text: r, .. } => &self.buf[r.clone()],
                        Seg::Bytes(b) => b,
                        Seg::File { .. } => break,
                    };
                    iov[n] = IoSlice::new(&s[skip..]);
                    n += 1;
                    if n == MAX_IOV {
                        break;
                    }
                }
                stream.try_write_vectored(&iov[..n])
            };
            match r {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(mut n) => {
                    self.written += n as u64;
                    // Advance over what was written.
                    while n > 0 {
                        let left = self.segs[self.head].len() - self.done;
                        if (n as u64) < left {
                            self.done += n as u64;
                            n = 0;
                        } else {
                            n -= left as usize;
                            self.head += 1;
                            self.done = 0;
                        }
                    }
                    // Skip empty segments.
                    while self.head < self.segs.len() && self.segs[self.head].len() == 0 {
                        self.head += 1;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    match tokio::time::timeout(timeout, stream.writable()).await {
                        Ok(r) => r?,
                        Err(_) => return Err(io::ErrorKind::TimedOut.into()),
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.clear();
        Ok(())
    }
}

/// One `sendfile(2)` call on the non-blocking socket.
fn sendfile(sock: i32, fd: i32, offset: u64, len: u64) -> io::Result<usize> {
    let mut off = offset as libc::off_t;
    let count = len.min(0x7fff_f000) as usize;
    // SAFETY: `sock` and `fd` are open descriptors owned by the caller for
    // the duration of the call (the stream and the `Arc<File>` are
    // borrowed), and `off` is a valid, exclusively borrowed off_t.
    let n = unsafe { libc::sendfile(sock, fd, &mut off, count) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    if n == 0 && count > 0 {
        // The file is shorter than the engine said: the response cannot be completed.
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "file truncated while sending",
        ));
    }
    Ok(n as usize)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Answers whose heads the server prepares, for the tests that hold a
    /// prepared head to what the general writer and the streams make.
    pub(crate) const PREPARED_ANSWERS: &[(u16, &[(&str, &str)])] = &[
        (
            200,
            &[
                ("Last-Modified", "Tue, 14 Nov 2023 22:13:20 GMT"),
                ("ETag", "\"5-abc\""),
                ("Accept-Ranges", "bytes"),
                ("Content-Length", "5"),
                ("Content-Type", "text/html"),
            ],
        ),
        (
            200,
            &[
                ("X-A", "1"),
                ("Content-Type", "text/plain"),
                ("Content-Language", "en"),
            ],
        ),
        (
            404,
            &[
                ("X-A", "1"),
                ("x-a", "2"),
                ("Set-Cookie", "a=1"),
                ("Set-Cookie", "b=2"),
                ("Content-Type", "text/plain"),
                ("Content-Language", "en"),
            ],
        ),
        (
            200,
            &[
                ("Date", "Mon, 01 Jan 2024 00:00:00 GMT"),
                ("Server", "own"),
                ("X", "y"),
            ],
        ),
        (
            200,
            &[("Content-Length", "0"), ("Transfer-Encoding", "chunked")],
        ),
        (
            200,
            &[("Transfer-Encoding", "chunked"), ("Keep-Alive", "x")],
        ),
        (
            200,
            &[("X-Fold", "a\r\n b"), ("Content-Type", "text/plain")],
        ),
        (
            204,
            &[("Content-Length", "3"), ("Content-Type", "text/plain")],
        ),
        (304, &[("ETag", "\"x\""), ("Content-Length", "0")]),
        (306, &[("Location", "/x")]),
    ];

    fn head(status: u16, headers: &[(&str, &str)], f: &Framing) -> String {
        let headers: Vec<(Cow<'static, str>, String)> = headers
            .iter()
            .map(|(a, b)| (a.to_string().into(), b.to_string()))
            .collect();
        let mut out = Vec::new();
        let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        write_head(&mut out, status, &headers, "Apache", now, f);
        String::from_utf8(out).unwrap()
    }

    fn framing() -> Framing {
        Framing {
            content_length: None,
            chunked: false,
            strip_length: false,
            strip_entity: false,
            strip_transfer_encoding: false,
            head: false,
            body_length: None,
            keep_alive: None,
            connection: None,
            status_line: None,
            folded: true,
            upgrade: None,
            alt_svc: None,
            http10: false,
        }
    }

    /// `force-response-1.0`: the status line's version is HTTP/1.0, a
    /// handler's own reason kept, on the full path and the prepared one.
    #[test]
    fn an_http10_answer_says_so_in_its_status_line() {
        let f = Framing {
            http10: true,
            ..framing()
        };
        assert!(head(200, &[], &f).starts_with("HTTP/1.0 200 OK\r\nDate: "));
        let custom = Framing {
            status_line: Some("404 Gone fishing".into()),
            ..f.clone()
        };
        assert!(head(404, &[], &custom).starts_with("HTTP/1.0 404 Gone fishing\r\n"));
        let mut resp = Response::new(200);
        resp.headers.push(("Content-Length".into(), "0".into()));
        let prepared = PreparedHead::new(&resp, false, "Apache").expect("prepared");
        let mut out = Vec::new();
        prepared.write(&mut out, UNIX_EPOCH, &f);
        assert!(out.starts_with(b"HTTP/1.0 200 OK\r\n"));
        out.clear();
        prepared.write(&mut out, UNIX_EPOCH, &framing());
        assert!(out.starts_with(b"HTTP/1.1 200 OK\r\n"));
    }

    /// A prepared head writes exactly what the full writer writes for the
    /// same answer and exchange.
    #[test]
    fn prepared_heads_write_what_the_writer_writes() {
        let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let answers = PREPARED_ANSWERS;
        for (status, fields) in answers {
            let mut resp = Response::new(*status);
            for (a, b) in fields.iter() {
                resp.add_header(a.to_string(), b.to_string());
            }
            resp.body = htaccel_engine::http::Body::bytes(b"12345".to_vec());
            let headers = &resp.headers;
            for head in [false, true] {
                for (keep_alive, connection, content_length) in [
                    (Some((5, Some(99))), Some("Keep-Alive"), None),
                    (None, Some("close"), Some(7)),
                    (None, None, None),
                ] {
                    let p = PreparedHead::new(&resp, head, "Apache").expect("prepared");
                    let folded = check_headers(headers, true).unwrap();
                    let facts = HeadFacts::of(&resp, folded);
                    let f = Framing {
                        keep_alive,
                        connection,
                        content_length,
                        ..Framing::fixed(*status, false, 5, head, false, &facts)
                    };
                    let mut full = Vec::new();
                    write_head(&mut full, *status, headers, "Apache", now, &f);
                    let mut fast = Vec::new();
                    p.write(&mut fast, now, &f);
                    assert_eq!(
                        String::from_utf8(fast).unwrap(),
                        String::from_utf8(full).unwrap(),
                        "{status} {fields:?} head={head}"
                    );
                }
            }
        }
        // Answers that take the full path every time.
        for (name, value) in [("X", "a\nb"), ("Connection", "close")] {
            let mut resp = Response::new(200);
            resp.add_header(name.to_string(), value.to_string());
            assert!(PreparedHead::new(&resp, false, "A").is_none(), "{name}");
        }
    }

    /// The order Apache 2.4.71 sent for a static file requested with
    /// `Connection: keep-alive` (see the module docs).
    #[test]
    fn apache_order() {
        let f = Framing {
            content_length: Some(612),
            keep_alive: Some((5, Some(100))),
            connection: Some("Keep-Alive"),
            ..framing()
        };
        let h = head(
            200,
            &[
                ("Last-Modified", "x"),
                ("ETag", "\"e\""),
                ("Accept-Ranges", "bytes"),
                ("Content-Type", "text/html"),
            ],
            &f,
        );
        assert_eq!(
            h,
            "HTTP/1.1 200 OK\r\nDate: Tue, 14 Nov 2023 22:13:20 GMT\r\nServer: Apache\r\nLast-Modified: x\r\nETag: \"e\"\r\n\
             Accept-Ranges: bytes\r\nContent-Length: 612\r\nKeep-Alive: timeout=5, max=100\r\nConnection: Keep-Alive\r\n\
             Content-Type: text/html\r\n\r\n"
        );
        // Error page closing the connection: Content-Length, Connection, Content-Type.
        let f = Framing {
            content_length: Some(226),
            connection: Some("close"),
            ..framing()
        };
        let h = head(
            400,
            &[("Content-Type", "text/html; charset=iso-8859-1")],
            &f,
        );
        assert!(h.ends_with("Content-Length: 226\r\nConnection: close\r\nContent-Type: text/html; charset=iso-8859-1\r\n\r\n"), "{h}");
        // No entity header: the server's headers come last.
        let f = Framing {
            connection: Some("close"),
            ..framing()
        };
        let h = head(304, &[("ETag", "\"e\"")], &f);
        assert!(
            h.ends_with("ETag: \"e\"\r\nConnection: close\r\n\r\n"),
            "{h}"
        );
    }

    #[test]
    fn connection_merges_and_strips() {
        let f = Framing {
            connection: Some("close"),
            ..framing()
        };
        let h = head(101, &[("Connection", "Upgrade"), ("Upgrade", "x")], &f);
        assert!(
            h.contains("\r\nConnection: Upgrade, close\r\nUpgrade: x\r\n"),
            "{h}"
        );
        let f = Framing {
            strip_length: true,
            strip_entity: true,
            ..framing()
        };
        let h = head(
            304,
            &[
                ("Content-Length", "5"),
                ("ETag", "e"),
                ("Content-Type", "text/plain"),
            ],
            &f,
        );
        assert!(!h.contains("Content-") && h.contains("ETag: e"), "{h}");
        let f = Framing {
            head: true,
            ..framing()
        };
        assert!(!head(200, &[("Content-Length", "0")], &f).contains("Content-Length"));
        assert!(head(200, &[("Content-Length", "7")], &f).contains("Content-Length: 7"));
        // The engine's Date and Server win (proxied responses).
        let h = head(200, &[("Server", "up"), ("Date", "d")], &framing());
        assert!(
            h.starts_with("HTTP/1.1 200 OK\r\nDate: d\r\nServer: up\r\n\r\n"),
            "{h}"
        );
    }

    #[test]
    fn header_checks() {
        let h = |n: &str, v: &str| vec![(Cow::Owned(n.to_string()), v.to_string())];
        let headers_valid = |h: &[(Cow<'static, str>, String)]| headers_valid(h, true);
        let headers_valid_unsafe =
            |h: &[(Cow<'static, str>, String)]| super::headers_valid(h, false);
        assert!(headers_valid(&h("X-A", "b\tc \u{e9}")));
        assert!(headers_valid(&h("X-A", "b\r\n  c")));
        assert!(!headers_valid(&h("X-A", "b\r\nSet-Cookie: x")));
        assert!(!headers_valid(&h("X-A", "b\nc")));
        assert!(!headers_valid(&h("X A", "b")));
        assert!(!headers_valid(&h("", "b")));
        // `HttpProtocolOptions Unsafe`: visible bytes in names, values as strict.
        assert!(headers_valid_unsafe(&h("X(A)", "b")));
        assert!(!headers_valid_unsafe(&h("X A", "b")));
        assert!(!headers_valid_unsafe(&h("", "b")));
        assert!(!headers_valid_unsafe(&h("X", "b\nc")));
        let out = head(200, &[("X-A", "b\r\n \t c")], &framing());
        assert!(out.contains("\r\nX-A: b c\r\n"), "{out}");
        // An engine Content-Length is written with the real body length.
        let f = Framing {
            body_length: Some(3),
            ..framing()
        };
        assert!(head(200, &[("Content-Length", "99")], &f).contains("\r\nContent-Length: 3\r\n"));
    }

    #[test]
    fn itoa_works() {
        assert_eq!(itoa(0, &mut [0; 20]), b"0");
        assert_eq!(itoa(u64::MAX, &mut [0; 20]), b"18446744073709551615");
    }
}
