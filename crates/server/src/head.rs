//! The request head: request line and header fields, read with the checks
//! and limits of Apache's `read_request_line`, `ap_parse_request_line` and
//! `ap_get_mime_headers_core` (server/protocol.c) under
//! `HttpProtocolOptions Strict` (Apache's default) or `Unsafe`, then the
//! checks of `ap_read_request` and `ap_check_request_header`:
//! `Content-Length`, `Transfer-Encoding`, `Host`, `Expect`.
//!
//! `Unsafe` is Apache's legacy reading, each difference where Apache makes
//! it: a line may end in a bare LF; the method may be any visible bytes;
//! runs of spaces may separate the request line's words and follow the
//! protocol; the protocol may be written in lower case; an HTTP/0.9
//! request may use any method; the target may hold a fragment or a user
//! name; a field name is whatever precedes the colon, if it holds no
//! whitespace, and a value may hold any control byte but LF, VT, FF and
//! CR; a host name is checked only for `/`, `\` and `..`; and an absolute
//! target's host does not replace the `Host` field the request sent
//! (`ap_update_vhost_from_headers`), though it still names the host.
//!
//! The parser is incremental: [`HeadParser::parse`] is called with the whole
//! unread buffer each time more bytes arrive and resumes where it stopped,
//! looking at every byte once. It records byte ranges, so that a complete
//! head is frozen once into `Bytes` and header values become slices of it,
//! without copies.
//!
//! # Line limits, exactly as Apache counts them
//!
//! Apache reads a line into a buffer of `limit + 2` bytes, CR LF included,
//! and tolerates an overrun by the LF alone; a line of up to `limit + 1`
//! bytes before CR LF is therefore accepted, `limit + 2` is too long
//! (observed: an 8191-byte request line is served, 8192 gets 414; the same
//! for header fields and 400). A line ending in a bare LF is a 400 in
//! strict mode, a NUL byte in a line is a 400 in both.
//!
//! The observed answers of Apache 2.4.71 to malformed heads are the table in
//! the tests at the bottom of this file.

use crate::chars::{
    close_and_keep_alive, find_token, has_ctrl, is_chunked, is_space, token_len, vchar_obs_len,
};
use crate::target::{check_target, fix_uri_host, host_header_ok, Host, TargetHost};
use crate::Limits;
use bytes::Bytes;
use htaccel_engine::http::{BodyFraming, Headers, Request, Version};
use std::borrow::Cow;
use std::net::SocketAddr;
use std::ops::Range;

/// Apache's `DEFAULT_LIMIT_BLANK_LINES`: empty lines skipped before a request line.
const BLANK_LINES: u32 = 10;

/// Hard ceiling on header fields when `LimitRequestFields 0` (unlimited) is
/// configured: the head must stay bounded whatever the configuration.
const FIELDS_CEILING: usize = 10_000;

pub(crate) const NOTE_FIELD_SIZE: &str = "Size of a request header field exceeds server limit.";
pub(crate) const NOTE_FIELD_COUNT: &str =
    "The number of request header fields exceeds this server's limit.";

/// Why a head was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HeadError {
    pub status: u16,
    /// Apache's `error-notes` for this error.
    pub note: Option<&'static str>,
    /// The method was `HEAD`: the error page has no body.
    pub head_only: bool,
    /// For 417: the client's `Expect` value, shown in the error page.
    pub expect: Option<Bytes>,
}

impl HeadError {
    pub(crate) fn new(status: u16) -> Self {
        HeadError {
            status,
            note: None,
            head_only: false,
            expect: None,
        }
    }
}

/// Progress of [`HeadParser::parse`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Parse {
    /// More bytes are needed.
    Partial,
    /// The head is complete and is this many bytes long.
    Done(usize),
    Error(HeadError),
}

#[derive(Clone, Debug)]
enum Field {
    /// Name and value as ranges of the buffer.
    Span {
        name: Range<usize>,
        value: Range<usize>,
    },
    /// A field that was folded (obs-fold) and so had to be copied.
    Owned { name: String, value: Bytes },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    RequestLine { blanks: u32 },
    Fields,
}

/// A header line held back until the next line shows whether it continues
/// (obs-fold).
#[derive(Clone, Debug)]
enum Pending {
    Span(Range<usize>),
    Owned(Vec<u8>),
}

/// Incremental request-head parser; one per connection, reset per request.
#[derive(Debug)]
pub(crate) struct HeadParser {
    phase: Phase,
    /// Start of the line being read.
    pos: usize,
    /// Where the search for the line's LF resumes.
    scan: usize,
    line: Range<usize>,
    method: Range<usize>,
    uri: Range<usize>,
    protocol: Range<usize>,
    /// `HTTP_VERSION(major, minor)`: major * 1000 + minor; 9 for HTTP/0.9.
    proto_num: u32,
    host: TargetHost,
    pending: Option<Pending>,
    fields_read: usize,
    fields: Vec<Field>,
    /// `HttpProtocolOptions Strict` for the head being read.
    strict: bool,
}

impl HeadParser {
    pub(crate) fn new() -> Self {
        HeadParser {
            phase: Phase::RequestLine { blanks: 0 },
            pos: 0,
            scan: 0,
            line: 0..0,
            method: 0..0,
            uri: 0..0,
            protocol: 0..0,
            proto_num: 0,
            host: TargetHost::default(),
            pending: None,
            fields_read: 0,
            fields: Vec::new(),
            strict: true,
        }
    }

    /// A parser for the trailer section of a chunked body: header fields
    /// only, with the same rules and limits.
    pub(crate) fn for_trailers() -> Self {
        HeadParser {
            phase: Phase::Fields,
            ..HeadParser::new()
        }
    }

    /// Forget the previous request (keeps the field vector's capacity).
    pub(crate) fn reset(&mut self) {
        self.phase = Phase::RequestLine { blanks: 0 };
        self.pos = 0;
        self.scan = 0;
        self.line = 0..0;
        self.method = 0..0;
        self.uri = 0..0;
        self.protocol = 0..0;
        self.proto_num = 0;
        self.pending = None;
        self.fields_read = 0;
        self.fields.clear();
        self.host = TargetHost::default();
    }

    /// Whether a request line has been read: a timeout after this point is
    /// answered 408, before it the connection is closed silently (Apache).
    pub(crate) fn line_complete(&self) -> bool {
        self.phase == Phase::Fields
    }

    /// Parse as far as `buf` allows. `buf` must start with the first byte of
    /// the request and hold at least the bytes given last time.
    pub(crate) fn parse(&mut self, buf: &[u8], limits: &Limits, secure: bool) -> Parse {
        self.strict = limits.strict;
        loop {
            match self.phase {
                Phase::RequestLine { blanks } => {
                    let line = match next_line(
                        buf,
                        self.pos,
                        &mut self.scan,
                        limits.request_line.saturating_add(2),
                        limits.strict,
                    ) {
                        Line::Partial => return Parse::Partial,
                        Line::TooLong => return Parse::Error(HeadError::new(414)),
                        Line::Invalid => return Parse::Error(HeadError::new(400)),
                        Line::Complete { content, next } => {
                            self.pos = next;
                            self.scan = next;
                            content
                        }
                    };
                    if line.is_empty() && blanks < BLANK_LINES {
                        self.phase = Phase::RequestLine { blanks: blanks + 1 };
                        continue;
                    }
                    if let Err(e) = self.request_line(buf, line, secure, limits) {
                        return Parse::Error(e);
                    }
                    if self.proto_num == 9 {
                        // HTTP/0.9: no header fields follow.
                        return Parse::Done(self.pos);
                    }
                    self.phase = Phase::Fields;
                }
                Phase::Fields => {
                    let line = match next_line(
                        buf,
                        self.pos,
                        &mut self.scan,
                        limits.field_size.saturating_add(2),
                        limits.strict,
                    ) {
                        Line::Partial => return Parse::Partial,
                        Line::TooLong => {
                            return Parse::Error(self.error(buf, 400, Some(NOTE_FIELD_SIZE)))
                        }
                        Line::Invalid => return Parse::Error(self.error(buf, 400, None)),
                        Line::Complete { content, next } => {
                            self.pos = next;
                            self.scan = next;
                            content
                        }
                    };
                    if let Some(done) = self.field_line(buf, line, limits) {
                        return match done {
                            Ok(()) => Parse::Done(self.pos),
                            Err(e) => Parse::Error(e),
                        };
                    }
                }
            }
        }
    }

    /// `HTTP_VERSION(major, minor)` of the request line read.
    pub(crate) fn proto_num(&self) -> u32 {
        self.proto_num
    }

    /// An error for the request being read (with the method seen so far).
    pub(crate) fn error(&self, buf: &[u8], status: u16, note: Option<&'static str>) -> HeadError {
        HeadError {
            status,
            note,
            head_only: buf.get(self.method.clone()) == Some(&b"HEAD"[..]),
            expect: None,
        }
    }

    /// Tokenise the request line as `ap_parse_request_line` does, then
    /// check the target (`ap_parse_uri`).
    fn request_line(
        &mut self,
        buf: &[u8],
        line: Range<usize>,
        secure: bool,
        limits: &Limits,
    ) -> Result<(), HeadError> {
        let base = line.start;
        let t = tokenize(&buf[line.clone()], limits.strict);
        let shift = |r: Range<usize>| r.start + base..r.end + base;
        self.line = line;
        self.method = shift(t.method);
        self.uri = shift(t.uri);
        self.protocol = shift(t.protocol);
        self.proto_num = t.proto_num;
        let method = &buf[self.method.clone()];
        let mut bad = t.bad;
        if !bad
            && self.proto_num == 9
            && (limits.require_http10 || (limits.strict && method != b"GET"))
        {
            // Only GET may be an HTTP/0.9 request in strict mode, and
            // none under `HttpProtocolOptions Require1.0`.
            bad = true;
        }
        if !bad && limits.registered_methods {
            let known =
                std::str::from_utf8(method).is_ok_and(htaccel_engine::http::method::is_registered);
            if !known {
                // `HttpProtocolOptions RegisteredMethods`: the request
                // line is what the error page and the log show.
                self.phase = Phase::Fields;
                return Err(self.error(buf, 501, None));
            }
        }
        if !bad {
            match check_target(method, &buf[self.uri.clone()], secure, limits.strict) {
                Ok(h) => {
                    self.host = TargetHost {
                        hostname: h
                            .hostname
                            .map(|r| r.start + self.uri.start..r.end + self.uri.start),
                        port_str: h
                            .port_str
                            .map(|r| r.start + self.uri.start..r.end + self.uri.start),
                        scheme_ok: h.scheme_ok,
                    };
                }
                Err(()) => bad = true,
            }
        }
        if bad {
            return Err(self.error(buf, 400, None));
        }
        Ok(())
    }

    /// One header line (`ap_get_mime_headers_core`). `Some` when the head is
    /// finished (the empty line) or refused.
    fn field_line(
        &mut self,
        buf: &[u8],
        line: Range<usize>,
        limits: &Limits,
    ) -> Option<Result<(), HeadError>> {
        let mut end = line.end;
        // Trailing whitespace is dropped, never the last byte.
        while end - line.start > 1 && matches!(buf[end - 1], b' ' | b'\t') {
            end -= 1;
        }
        let mut start = line.start;
        let len = end - start;
        if len > 0 && matches!(buf[start], b' ' | b'\t') {
            // obs-fold: append to the pending field with one space.
            let Some(pending) = self.pending.take() else {
                return Some(Err(self.error(buf, 400, None)));
            };
            if len == 1 {
                return Some(Err(self.error(buf, 400, None)));
            }
            while matches!(buf[start + 1], b' ' | b'\t') {
                start += 1;
            }
            let cont = &buf[start..end];
            let mut owned = match pending {
                Pending::Span(r) => buf[r].to_vec(),
                Pending::Owned(v) => v,
            };
            if owned.len() + cont.len() + 1 >= limits.field_size {
                return Some(Err(self.error(buf, 400, Some(NOTE_FIELD_SIZE))));
            }
            owned.push(b' ');
            owned.extend_from_slice(&cont[1..]);
            self.pending = Some(Pending::Owned(owned));
            return None;
        }
        if let Some(pending) = self.pending.take() {
            self.fields_read += 1;
            let max = if limits.fields == 0 {
                FIELDS_CEILING
            } else {
                limits.fields.min(FIELDS_CEILING)
            };
            if self.fields_read > max {
                return Some(Err(self.error(buf, 400, Some(NOTE_FIELD_COUNT))));
            }
            let field = match pending {
                Pending::Span(r) => {
                    split_field(&buf[r.clone()], limits.strict).map(|(n, v)| Field::Span {
                        name: r.start..r.start + n,
                        value: r.start + v.start..r.start + v.end,
                    })
                }
                Pending::Owned(v) => split_field(&v, limits.strict).map(|(n, val)| Field::Owned {
                    name: String::from_utf8_lossy(&v[..n]).into_owned(),
                    value: Bytes::copy_from_slice(&v[val]),
                }),
            };
            match field {
                Some(f) => self.fields.push(f),
                None => return Some(Err(self.error(buf, 400, None))),
            }
        }
        if len == 0 {
            return Some(self.merged_lengths(buf, limits));
        }
        self.pending = Some(Pending::Span(start..end));
        None
    }

    /// After merging repeated fields (`apr_table_compress`), no value may
    /// exceed `LimitRequestFieldSize`.
    fn merged_lengths(&self, buf: &[u8], limits: &Limits) -> Result<(), HeadError> {
        let fields = &self.fields;
        // A single field is within the limit by the line limit; only
        // repeated names can exceed it, and only if all values together do.
        let all: usize = fields
            .iter()
            .map(|f| self.field_value(buf, f).len() + 2)
            .sum();
        if all <= limits.field_size + 2 {
            return Ok(());
        }
        // Group equal names (case-insensitively) by sorting: O(n log n)
        // even for the 10,000 fields an unlimited LimitRequestFields allows.
        let mut order: Vec<usize> = (0..fields.len()).collect();
        order.sort_unstable_by(|&a, &b| {
            let (a, b) = (
                self.field_name(buf, &fields[a]),
                self.field_name(buf, &fields[b]),
            );
            a.iter()
                .map(u8::to_ascii_lowercase)
                .cmp(b.iter().map(u8::to_ascii_lowercase))
        });
        let mut i = 0;
        while i < order.len() {
            let name = self.field_name(buf, &fields[order[i]]);
            let mut total = 0usize;
            let mut j = i;
            while j < order.len()
                && self
                    .field_name(buf, &fields[order[j]])
                    .eq_ignore_ascii_case(name)
            {
                total += self.field_value(buf, &fields[order[j]]).len() + if j > i { 2 } else { 0 };
                j += 1;
            }
            if total > limits.field_size {
                return Err(self.error(buf, 400, Some(NOTE_FIELD_SIZE)));
            }
            i = j;
        }
        Ok(())
    }

    fn field_name<'a>(&'a self, buf: &'a [u8], f: &'a Field) -> &'a [u8] {
        match f {
            Field::Span { name, .. } => &buf[name.clone()],
            Field::Owned { name, .. } => name.as_bytes(),
        }
    }

    fn field_value<'a>(&'a self, buf: &'a [u8], f: &'a Field) -> &'a [u8] {
        match f {
            Field::Span { value, .. } => &buf[value.clone()],
            Field::Owned { value, .. } => value,
        }
    }

    /// Build the engine's [`Request`] from a complete head (the first
    /// `Done(n)` bytes of the buffer, frozen into `head`) and make the
    /// checks Apache makes once all fields are in.
    pub(crate) fn finish(
        &self,
        head: &Bytes,
        remote: SocketAddr,
        local: SocketAddr,
        tls: Option<&std::sync::Arc<htaccel_engine::http::TlsInfo>>,
        h2_stream: Option<htaccel_engine::http::http2::H2Stream>,
    ) -> Result<Checked, Box<(HeadError, Request)>> {
        let buf: &[u8] = head;
        // The request line is checked for UTF-8 once; its tokens are
        // slices of it (each is delimited by ASCII spaces).
        let line_text = std::str::from_utf8(&buf[self.line.clone()]).ok();
        let token = |r: &Range<usize>| {
            line_text
                .and_then(|l| {
                    let start = r.start.checked_sub(self.line.start)?;
                    l.get(start..start + r.len())
                })
                .map_or_else(|| text(&buf[r.clone()]), str::to_owned)
        };
        let method = token(&self.method);
        let target = token(&self.uri);
        let protocol = &buf[self.protocol.clone()];
        // The tokens joined by single spaces; usually the line itself.
        let exact = self.line.start == self.method.start
            && self.line.end == self.protocol.end
            && self.method.end + 1 == self.uri.start
            && self.uri.end + 1 == self.protocol.start
            && !target.is_empty()
            && !protocol.is_empty();
        let request_line = if exact {
            line_text.map_or_else(|| text(&buf[self.line.clone()]), str::to_owned)
        } else {
            let mut l = String::with_capacity(self.line.len());
            l.push_str(&method);
            if !target.is_empty() {
                l.push(' ');
                l.push_str(&target);
            }
            if !protocol.is_empty() {
                l.push(' ');
                l.push_str(&text(protocol));
            }
            l
        };
        let mut headers = Headers::with_capacity(self.fields.len());
        for f in &self.fields {
            match f {
                Field::Span { name, value } => {
                    // Token bytes only in strict mode: ASCII.
                    let n = &buf[name.clone()];
                    let n = match common_name(n) {
                        Some(n) => Cow::Borrowed(n),
                        None => Cow::Owned(String::from_utf8_lossy(n).into_owned()),
                    };
                    headers.push(n, head.slice(value.clone()));
                }
                Field::Owned { name, value } => headers.push(name.clone(), value.clone()),
            }
        }
        let version = version_of(self.proto_num);
        let mut req = Request {
            method,
            target,
            version,
            request_line,
            headers,
            framing: BodyFraming::None,
            peer: remote,
            proxied_by: None,
            local,
            secure: tls.is_some(),
            tls: tls.cloned(),
            h2_stream,
        };
        match self.check(buf, &mut req) {
            Ok((expect_100, close, conn)) => {
                let conn = conn.as_deref().unwrap_or_default();
                let (client_close, client_keep_alive) = close_and_keep_alive(conn);
                Ok(Checked {
                    client: ClientAsked::of(client_close, client_keep_alive),
                    proto_num: self.proto_num,
                    expect_100,
                    close,
                    req,
                })
            }
            Err(mut e) => {
                e.head_only = req.method == "HEAD";
                Err(Box::new((e, req)))
            }
        }
    }

    /// The request as far as its request line, for logging a request
    /// refused while its header fields were read.
    pub(crate) fn line_request(
        &self,
        buf: &[u8],
        remote: SocketAddr,
        local: SocketAddr,
    ) -> Option<Request> {
        if self.phase != Phase::Fields || self.line.end > buf.len() {
            return None;
        }
        Some(Request {
            method: text(&buf[self.method.clone()]),
            target: text(&buf[self.uri.clone()]),
            version: version_of(self.proto_num),
            request_line: text(&buf[self.line.clone()]),
            headers: Headers::new(),
            framing: BodyFraming::None,
            peer: remote,
            proxied_by: None,
            local,
            secure: false,
            tls: None,
            h2_stream: None,
        })
    }

    /// The checks of `ap_read_request` and `ap_check_request_header` once the
    /// fields are in: framing, host name, `Expect`, scheme. Returns whether
    /// `100-continue` is expected, whether the connection must close, and
    /// the client's `Connection` value.
    #[allow(clippy::type_complexity)]
    fn check(
        &self,
        buf: &[u8],
        req: &mut Request,
    ) -> Result<(bool, bool, Option<Bytes>), HeadError> {
        let fail = |status: u16| Err(HeadError::new(status));
        let known = Known::find(&req.headers);
        // Read before the edits below move fields around.
        let connection = known.get(&req.headers, Known::CONNECTION);
        let mut close = false;
        if self.proto_num != 9 {
            if let Some(cl) = known.get(&req.headers, Known::CONTENT_LENGTH) {
                match parse_length(&cl) {
                    Some(n) => req.framing = BodyFraming::Length(n),
                    None => return fail(400),
                }
            }
            if let Some(te) = known.get(&req.headers, Known::TRANSFER_ENCODING) {
                if !is_chunked(&te) {
                    return fail(400);
                }
                if req.framing != BodyFraming::None {
                    // Both: the coding wins, Content-Length is dropped and
                    // the connection closed after the response.
                    req.headers.remove("Content-Length");
                    close = true;
                }
                req.framing = BodyFraming::Chunked;
            }
        }
        // The host name (of the target, else of Host), then Host for HTTP/1.1.
        let have_hostname;
        if let Some(r) = &self.host.hostname {
            // A host named by the target counts even when empty.
            have_hostname = true;
            let hostname: Option<Host> = match fix_uri_host(&buf[r.clone()], self.strict) {
                Ok(h) => h,
                Err(()) => return fail(400),
            };
            if let (Some(h), true, true) = (&hostname, known.has(Known::HOST), self.strict) {
                // An absolute target overrides the Host header (in
                // strict mode; it names the host in both).
                let mut v = if h.v6 {
                    format!("[{}]", h.name)
                } else {
                    h.name.clone()
                };
                if let Some(p) = &self.host.port_str {
                    v.push(':');
                    v.push_str(&text(&buf[p.clone()]));
                }
                req.headers.set("Host", v);
            }
        } else if let Some(v) = known.get(&req.headers, Known::HOST) {
            match host_header_ok(&v, self.strict) {
                Ok(given) => have_hostname = given,
                Err(()) => return fail(400),
            }
        } else {
            have_hostname = false;
        }
        if (!have_hostname && self.proto_num >= 1001)
            || (self.proto_num == 1001 && !known.has(Known::HOST))
        {
            return fail(400);
        }
        let mut expect_100 = false;
        if let Some(e) = known.get(&req.headers, Known::EXPECT) {
            if !e.is_empty() {
                if e.eq_ignore_ascii_case(b"100-continue") {
                    expect_100 = true;
                } else {
                    return Err(HeadError {
                        expect: Some(e),
                        ..HeadError::new(417)
                    });
                }
            }
        }
        if !self.host.scheme_ok {
            return fail(400);
        }
        Ok((expect_100, close, connection))
    }
}

/// Request header names common enough to be kept as static strings when
/// sent with exactly this spelling (the usual one): the request's header
/// list then allocates no name.
const COMMON_NAMES: &[&str] = &[
    "Host",
    "User-Agent",
    "Accept",
    "Accept-Encoding",
    "Accept-Language",
    "Connection",
    "Cookie",
    "Referer",
    "Cache-Control",
    "Pragma",
    "If-Modified-Since",
    "If-None-Match",
    "Range",
    "If-Range",
    "Content-Length",
    "Content-Type",
    "Authorization",
    "Origin",
    "Upgrade-Insecure-Requests",
    "X-Forwarded-For",
    "host",
    "user-agent",
    "accept",
    "accept-encoding",
    "accept-language",
    "connection",
    "cookie",
    "referer",
];

fn common_name(name: &[u8]) -> Option<&'static str> {
    // Compared inline: only names of the same length, no `memcmp` call.
    COMMON_NAMES
        .iter()
        .find(|n| n.len() == name.len() && n.bytes().zip(name).all(|(a, &b)| a == b))
        .copied()
}

/// Where the fields the protocol layer reads itself are, found in one pass
/// over the request's fields.
struct Known {
    /// Per name: index of the first occurrence and number of occurrences.
    at: [(usize, usize); 5],
}

impl Known {
    const HOST: usize = 0;
    const EXPECT: usize = 1;
    const CONNECTION: usize = 2;
    const CONTENT_LENGTH: usize = 3;
    const TRANSFER_ENCODING: usize = 4;
    const NAMES: [&'static str; 5] = [
        "Host",
        "Expect",
        "Connection",
        "Content-Length",
        "Transfer-Encoding",
    ];

    fn find(headers: &Headers) -> Known {
        let mut at = [(0, 0); 5];
        for (i, (name, _)) in headers.iter().enumerate() {
            let k = match name.len() {
                4 => Known::HOST,
                6 => Known::EXPECT,
                10 => Known::CONNECTION,
                14 => Known::CONTENT_LENGTH,
                17 => Known::TRANSFER_ENCODING,
                _ => continue,
            };
            if name.eq_ignore_ascii_case(Known::NAMES[k]) {
                if at[k].1 == 0 {
                    at[k].0 = i;
                }
                at[k].1 += 1;
            }
        }
        Known { at }
    }

    fn has(&self, k: usize) -> bool {
        self.at[k].1 > 0
    }

    /// The value, repeated fields joined with ", " as Apache merges them.
    fn get(&self, headers: &Headers, k: usize) -> Option<Bytes> {
        match self.at[k] {
            (_, 0) => None,
            (i, 1) => headers.iter().nth(i).map(|(_, v)| v.clone()),
            _ => headers.get_joined(Known::NAMES[k]),
        }
    }
}

/// What the client's `Connection` field asked of the connection (`close`
/// wins over `keep-alive`, as in Apache's `ap_set_keepalive`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClientAsked {
    Close,
    KeepAlive,
    Nothing,
}

impl ClientAsked {
    /// From the tokens found in the request's `Connection`.
    pub(crate) fn of(close: bool, keep_alive: bool) -> ClientAsked {
        match (close, keep_alive) {
            (true, _) => ClientAsked::Close,
            (false, true) => ClientAsked::KeepAlive,
            (false, false) => ClientAsked::Nothing,
        }
    }

    pub(crate) fn of_field(connection: &[u8]) -> ClientAsked {
        ClientAsked::of(
            find_token(connection, b"close"),
            find_token(connection, b"keep-alive"),
        )
    }
}

/// A request that passed every protocol check.
#[derive(Debug)]
pub(crate) struct Checked {
    pub req: Request,
    /// `HTTP_VERSION(major, minor)` of the request.
    pub proto_num: u32,
    pub expect_100: bool,
    /// The connection must close after this request (`Transfer-Encoding`
    /// together with `Content-Length`).
    pub close: bool,
    /// What the client's `Connection` asked (Apache's token match).
    pub client: ClientAsked,
}

/// `ap_parse_strict_length`: digits only, no sign, no overflow of a signed 64-bit offset.
pub(crate) fn parse_length(v: &[u8]) -> Option<u64> {
    if v.is_empty() || !v.iter().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut n: u64 = 0;
    for &c in v {
        n = n.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    (n <= i64::MAX as u64).then_some(n)
}

/// Request text for the engine. The request line only holds visible ASCII
/// and obs-text; obs-text that is not UTF-8 is percent-encoded so that no
/// byte is lost (the engine's types are `String`).
fn text(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(s) => s.to_owned(),
        Err(_) => {
            let mut s = String::with_capacity(b.len() * 3);
            for &c in b {
                if c.is_ascii() {
                    s.push(c as char);
                } else {
                    s.push('%');
                    s.push(char::from(b"0123456789ABCDEF"[(c >> 4) as usize]));
                    s.push(char::from(b"0123456789ABCDEF"[(c & 15) as usize]));
                }
            }
            s
        }
    }
}

/// Split `name: value`. Strict mode: the name is one or more token bytes
/// directly followed by ':', and the value may hold no control byte other
/// than HT. `Unsafe` (Apache's legacy parser): the name is everything
/// before the first ':', not empty and without whitespace, and the value
/// may hold no LF, VT, FF or CR. Leading SP/HT of the value is skipped;
/// a NUL byte is refused in both (`ap_rgetline`). Returns the name length
/// and the value range.
fn split_field(line: &[u8], strict: bool) -> Option<(usize, Range<usize>)> {
    let n = if strict {
        token_len(line)
    } else {
        let colon = memchr::memchr(b':', line)?;
        let name = &line[..colon];
        if name.iter().any(|&c| is_space(c) || c == 0) {
            return None;
        }
        colon
    };
    if n == 0 || line.get(n) != Some(&b':') {
        return None;
    }
    let mut v = n + 1;
    while v < line.len() && matches!(line[v], b' ' | b'\t') {
        v += 1;
    }
    let value = &line[v..];
    let refused = if strict {
        has_ctrl(value)
    } else {
        value
            .iter()
            .any(|&c| matches!(c, b'\n' | b'\x0b' | b'\x0c' | b'\r' | 0))
    };
    if refused {
        return None;
    }
    Some((n, v..line.len()))
}

#[derive(Debug, PartialEq, Eq)]
enum Line {
    Partial,
    TooLong,
    Invalid,
    Complete { content: Range<usize>, next: usize },
}

/// Read one line starting at `start`, with a buffer of `n` bytes as
/// Apache's `ap_rgetline` has (see the module docs): CRLF-terminated in
/// strict mode, LF-terminated (a CR before the LF dropped) otherwise.
#[inline]
fn next_line(buf: &[u8], start: usize, scan: &mut usize, n: usize, strict: bool) -> Line {
    let from = (*scan).max(start);
    match memchr::memchr(b'\n', &buf[from..]) {
        None => {
            *scan = buf.len();
            // More than `n` bytes and still no LF: the line cannot fit.
            if buf.len() - start > n {
                Line::TooLong
            } else {
                Line::Partial
            }
        }
        Some(i) => {
            let lf = from + i;
            let total = lf + 1 - start;
            let cr = lf > start && buf[lf - 1] == b'\r';
            if total > n && !(total == n + 1 && cr) {
                return Line::TooLong;
            }
            if !cr && strict {
                return Line::Invalid;
            }
            // A NUL byte is refused by the checks of each kind of line
            // (method, target, protocol, field name and value all exclude it).
            let content = start..lf - cr as usize;
            Line::Complete {
                content,
                next: lf + 1,
            }
        }
    }
}

/// The request line split as Apache's strict tokenizer splits it, with
/// ranges relative to the line.
#[derive(Debug, PartialEq, Eq)]
struct Tokens {
    method: Range<usize>,
    uri: Range<usize>,
    protocol: Range<usize>,
    proto_num: u32,
    bad: bool,
}

/// A port of the decisions of `ap_parse_request_line`. Strict mode: every
/// deviation from `METHOD SP target SP HTTP/d.d` is an error, except a
/// missing protocol, which makes an HTTP/0.9 request. `Unsafe`: the method
/// may be any visible bytes, runs of spaces may separate the words and
/// follow the protocol, and `http/1.1` is read as `HTTP/1.1`; other
/// whitespace than SP is still an error. The method range is kept even on
/// errors: a refused `HEAD` request gets no error body.
fn tokenize(l: &[u8], strict: bool) -> Tokens {
    let n = l.len();
    let sp = |p: usize| p < n && is_space(l[p]);
    let mut bad = false;
    let mut m = 0;
    if sp(0) {
        bad = true;
        while sp(m) {
            m += 1;
        }
    }
    let mut ll = m + if strict {
        token_len(&l[m..])
    } else {
        vchar_obs_len(&l[m..])
    };
    let mut have_ll = true;
    if (ll == m || (ll < n && !is_space(l[ll]))) && !bad {
        bad = true;
        match l[ll..].iter().position(|&c| is_space(c)) {
            Some(p) => ll += p,
            None => have_ll = false,
        }
    }
    if !have_ll {
        return Tokens {
            method: m..n,
            uri: n..n,
            protocol: n..n,
            proto_num: 9,
            bad,
        };
    }
    let method = m..ll;
    if strict && ll < n && sp(ll + 1) {
        bad = true; // more than one SP
    }
    let mut u = ll;
    while sp(u) {
        if l[u] != b' ' {
            bad = true;
        }
        u += 1;
    }
    // The method is cut at `ll`: a target that starts there is empty.
    let u_end_limit = if u == ll { ll } else { n };
    let uri_empty = u >= u_end_limit;
    if uri_empty {
        bad = true;
    }
    let mut ue = u;
    if ue < u_end_limit {
        ue += vchar_obs_len(&l[ue..u_end_limit]);
    }
    let mut have_ue = true;
    if ue == u || (ue < u_end_limit && !is_space(l[ue])) {
        bad = true;
        match l[ue.min(u_end_limit)..u_end_limit]
            .iter()
            .position(|&c| is_space(c))
        {
            Some(p) => ue = ue.min(u_end_limit) + p,
            None => have_ue = false,
        }
    }
    if !have_ue {
        let uri = u.min(u_end_limit)..u_end_limit;
        return Tokens {
            method,
            uri,
            protocol: n..n,
            proto_num: 9,
            bad,
        };
    }
    let uri = u..ue;
    if strict && ue < n && sp(ue + 1) {
        bad = true;
    }
    let mut p = ue;
    while sp(p) {
        if l[p] != b' ' {
            bad = true;
        }
        p += 1;
    }
    let p_end_limit = if p == ue { ue } else { n };
    let mut pe = p.min(p_end_limit);
    if pe < p_end_limit {
        pe += vchar_obs_len(&l[pe..p_end_limit]);
    }
    if pe < p_end_limit {
        // Something after the protocol: a control byte or whitespace
        // (strict), or anything but spaces (`Unsafe`).
        if strict || l[pe..p_end_limit].iter().any(|&c| c != b' ') {
            bad = true;
        }
    }
    let protocol = p.min(p_end_limit)..pe;
    let proto = &l[protocol.clone()];
    let proto_num = if proto.len() == 8
        && proto[4] == b'/'
        && proto[5].is_ascii_digit()
        && proto[6] == b'.'
        && proto[7].is_ascii_digit()
        && proto[5] != b'0'
        && proto[..4].eq_ignore_ascii_case(b"HTTP")
    {
        if strict && &proto[..4] != b"HTTP" {
            bad = true; // lowercase "http/1.1" is refused in strict mode
        }
        (proto[5] - b'0') as u32 * 1000 + (proto[7] - b'0') as u32
    } else {
        if !proto.is_empty() {
            bad = true;
        }
        9
    };
    Tokens {
        method,
        uri,
        protocol,
        proto_num,
        bad,
    }
}

/// The protocol a request shows (`%H`, `SERVER_PROTOCOL`) for the
/// version number of its request line.
fn version_of(proto_num: u32) -> Version {
    match proto_num {
        3000.. => Version::Http3,
        2000.. => Version::Http2,
        1001.. => Version::Http11,
        _ => Version::Http10,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            request_line: 8190,
            field_size: 8190,
            fields: 100,
            registered_methods: false,
            require_http10: false,
            strict: true,
        }
    }

    fn addr() -> SocketAddr {
        "127.0.0.1:1".parse().unwrap()
    }

    /// Parse one complete head; `Ok(request)` or the error status and note.
    fn run(raw: &[u8]) -> Result<Checked, (u16, Option<&'static str>, bool)> {
        run_with(raw, &limits())
    }

    fn run_with(raw: &[u8], limits: &Limits) -> Result<Checked, (u16, Option<&'static str>, bool)> {
        let mut p = HeadParser::new();
        match p.parse(raw, limits, false) {
            Parse::Done(n) => {
                let head = Bytes::copy_from_slice(&raw[..n]);
                p.finish(&head, addr(), addr(), None, None)
                    .map_err(|b| (b.0.status, b.0.note, b.0.head_only))
            }
            Parse::Error(e) => Err((e.status, e.note, e.head_only)),
            Parse::Partial => panic!("partial: {:?}", String::from_utf8_lossy(raw)),
        }
    }

    fn status(raw: &[u8]) -> u16 {
        match run(raw) {
            Ok(_) => 200,
            Err((s, _, _)) => s,
        }
    }

    /// Each row: a raw request and the status Apache 2.4.71 answered
    /// (Debian apache2, the configuration in tests/oracle, requests sent
    /// raw through a Python socket). 200 stands for "accepted by the
    /// protocol layer" (Apache then served the file, or 404/405/501 from its
    /// handlers). The 400s and 414s closed the connection.
    #[test]
    fn request_heads_as_apache() {
        let rows: &[(&str, &[u8], u16)] = &[
            ("basic", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 200),
            ("no host 1.1", b"GET / HTTP/1.1\r\n\r\n", 400),
            ("no host 1.0", b"GET / HTTP/1.0\r\n\r\n", 200),
            ("two hosts", b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
            ("host with space", b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400),
            ("empty host 1.1", b"GET / HTTP/1.1\r\nHost: \r\n\r\n", 400),
            ("empty host 1.0", b"GET / HTTP/1.0\r\nHost: \r\n\r\n", 200),
            ("bad host 1.0", b"GET / HTTP/1.0\r\nHost: a b\r\n\r\n", 400),
            ("lowercase http", b"GET / http/1.1\r\nHost: x\r\n\r\n", 400),
            ("HTTP/1.2", b"GET / HTTP/1.2\r\nHost: x\r\n\r\n", 200),
            ("HTTP/2.0", b"GET / HTTP/2.0\r\nHost: x\r\n\r\n", 200),
            ("HTTP/3.0", b"GET / HTTP/3.0\r\nHost: x\r\n\r\n", 200),
            ("HTTP/0.9 named", b"GET / HTTP/0.9\r\nHost: x\r\n\r\n", 400),
            ("HTTP/1.10", b"GET / HTTP/1.10\r\nHost: x\r\n\r\n", 400),
            ("0.9 GET", b"GET /\r\n", 200),
            ("0.9 GET trailing SP", b"GET / \r\n", 200),
            ("0.9 HEAD", b"HEAD /\r\n", 400),
            ("0.9 POST", b"POST /\r\n", 400),
            ("method only", b"GET\r\n\r\n", 400),
            ("method SP", b"GET \r\n\r\n", 400),
            ("trailing text", b"GET / HTTP/1.1 x\r\nHost: x\r\n\r\n", 400),
            ("trailing SP", b"GET / HTTP/1.1 \r\nHost: x\r\n\r\n", 400),
            ("double SP", b"GET  / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("tab separator", b"GET\t/ HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("leading SP", b" GET / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("bad method byte", b"G(T / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("unknown method", b"FOO / HTTP/1.1\r\nHost: x\r\n\r\n", 200), // 501 from the handler
            ("lowercase method", b"get / HTTP/1.1\r\nHost: x\r\n\r\n", 200), // 501 from the handler
            ("lowercase method no host", b"get / HTTP/1.1\r\n\r\n", 400),
            ("control byte in target", b"GET /a\x01b HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("bare CR in line", b"GET /\r HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("target without slash", b"GET a HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("fragment", b"GET /#a HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("userinfo", b"GET http://u:p@x/ HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("absolute", b"GET http://x/ HTTP/1.1\r\nHost: x\r\n\r\n", 200),
            ("absolute, no Host", b"GET http://x/ HTTP/1.1\r\n\r\n", 400),
            ("absolute, bad host", b"GET http://a..b/ HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("ftp scheme", b"GET ftp://x/ HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("bad port in target", b"GET http://x:ab/ HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("8-bit target", b"GET /\xe9 HTTP/1.1\r\nHost: x\r\n\r\n", 200),
            ("LF line ends", b"GET / HTTP/1.1\nHost: x\n\n", 400),
            ("LF in a field", b"GET / HTTP/1.1\r\nHost: x\n\r\n", 400),
            ("10 blank lines", b"\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n", 200),
            ("11 blank lines", b"\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("LF blank line", b"\nGET / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("NUL in line", b"GET /\x00 HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("field without colon", b"GET / HTTP/1.1\r\nHost: x\r\nFoo\r\n\r\n", 400),
            ("SP before colon", b"GET / HTTP/1.1\r\nHost: x\r\nFoo : bar\r\n\r\n", 400),
            ("empty name", b"GET / HTTP/1.1\r\nHost: x\r\n: bar\r\n\r\n", 400),
            ("bad name byte", b"GET / HTTP/1.1\r\nHost: x\r\nF(o: bar\r\n\r\n", 400),
            ("control in value", b"GET / HTTP/1.1\r\nHost: x\r\nFoo: b\x01r\r\n\r\n", 400),
            ("DEL in value", b"GET / HTTP/1.1\r\nHost: x\r\nFoo: b\x7fr\r\n\r\n", 400),
            ("8-bit value", b"GET / HTTP/1.1\r\nHost: x\r\nFoo: b\xe9r\r\n\r\n", 200),
            ("NUL in value", b"GET / HTTP/1.1\r\nHost: x\r\nFoo: b\x00r\r\n\r\n", 400),
            ("obs-fold", b"GET / HTTP/1.1\r\nHost: x\r\nFoo: a\r\n  b\r\n\r\n", 200),
            ("fold first", b"GET / HTTP/1.1\r\n Foo: a\r\nHost: x\r\n\r\n", 400),
            ("empty fold", b"GET / HTTP/1.1\r\nHost: x\r\nFoo: a\r\n \r\n\r\n", 400),
            ("C-L letters", b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400),
            ("C-L negative", b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400),
            ("C-L plus", b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: +1\r\n\r\n", 400),
            ("C-L trailing SP", b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1 \r\n\r\n", 200),
            ("C-L twice, same", b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n", 400),
            ("C-L twice, differing", b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400),
            ("C-L list", b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1, 1\r\n\r\n", 400),
            ("C-L overflow", b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n", 400),
            ("C-L leading zeros", b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 0001\r\n\r\n", 200),
            ("C-L empty", b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: \r\n\r\n", 400),
            ("T-E gzip", b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 400),
            ("T-E gzip, chunked", b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 200),
            ("T-E chunked, gzip", b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400),
            ("T-E two fields", b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n", 200),
            ("T-E identity", b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\n\r\n", 400),
            ("T-E empty", b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: \r\n\r\n", 400),
            ("Expect other", b"GET / HTTP/1.1\r\nHost: x\r\nExpect: foo\r\n\r\n", 417),
            ("Expect 100", b"GET / HTTP/1.1\r\nHost: x\r\nExpect: 100-Continue\r\n\r\n", 200),
            ("Host 1.2.3.4", b"GET / HTTP/1.1\r\nHost: 1.2.3.4\r\n\r\n", 200),
            ("Host 123", b"GET / HTTP/1.1\r\nHost: 123\r\n\r\n", 400),
            ("OPTIONS *", b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", 200),
            ("GET *", b"GET * HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("CONNECT host:port", b"CONNECT x:443 HTTP/1.1\r\nHost: x\r\n\r\n", 200), // 405 from the handler
            ("CONNECT host", b"CONNECT x HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ];
        for (name, raw, want) in rows {
            assert_eq!(status(raw), *want, "{name}");
        }
    }

    /// Limits, observed with Apache 2.4.71 at its defaults (8190/8190/100).
    #[test]
    fn limits_as_apache() {
        let line = |n: usize| {
            let mut l = b"GET /?".to_vec();
            l.resize(n - 9, b'a');
            l.extend_from_slice(b" HTTP/1.1\r\nHost: x\r\n\r\n");
            l
        };
        // A request line of 8191 bytes is served, 8192 is 414.
        assert_eq!(status(&line(8190)), 200);
        assert_eq!(status(&line(8191)), 200);
        assert_eq!(status(&line(8192)), 414);
        assert_eq!(status(&line(20000)), 414);
        // …also when it ends in a bare LF: 8191 bytes are a 400, 8192 a 414.
        let mut lf = line(8191);
        lf.remove(8191); // drop the CR
        assert_eq!(status(&lf), 400);
        let mut lf = line(8192);
        lf.remove(8192);
        assert_eq!(status(&lf), 414);

        let field = |n: usize| {
            let mut l = b"GET / HTTP/1.1\r\nHost: x\r\nX-Long: ".to_vec();
            l.resize(l.len() + n - 8, b'a');
            l.extend_from_slice(b"\r\n\r\n");
            l
        };
        // A field of 8191 bytes passes, 8192 is 400 with the note.
        assert_eq!(status(&field(8191)), 200);
        assert_eq!(
            run(&field(8192)).unwrap_err(),
            (400, Some(NOTE_FIELD_SIZE), false)
        );
        let mut name = b"GET / HTTP/1.1\r\nHost: x\r\n".to_vec();
        name.resize(name.len() + 20000, b'N');
        name.extend_from_slice(b": v\r\n\r\n");
        assert_eq!(run(&name).unwrap_err().1, Some(NOTE_FIELD_SIZE));
        // Trailing blanks count before they are stripped.
        let mut ws = field(8191);
        let at = ws.len() - 4;
        ws.splice(at..at, b"       ".iter().copied());
        assert_eq!(run(&ws).unwrap_err().1, Some(NOTE_FIELD_SIZE));

        // Repeated fields: the merged value ("a, b") may be 8190 bytes, not 8191.
        let merged = |total: usize| {
            let mut l = b"GET / HTTP/1.1\r\nHost: x\r\nX-A: ".to_vec();
            l.resize(l.len() + total - 2000, b'a');
            l.extend_from_slice(b"\r\nX-A: ");
            l.resize(l.len() + 1998, b'b');
            l.extend_from_slice(b"\r\n\r\n");
            l
        };
        assert_eq!(status(&merged(8190)), 200);
        assert_eq!(run(&merged(8191)).unwrap_err().1, Some(NOTE_FIELD_SIZE));

        // 100 fields pass (Host + 99), 101 are 400 with the note.
        let fields = |n: usize| {
            let mut l = b"GET / HTTP/1.1\r\nHost: x\r\n".to_vec();
            for i in 0..n {
                l.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
            }
            l.extend_from_slice(b"\r\n");
            l
        };
        assert_eq!(status(&fields(99)), 200);
        assert_eq!(
            run(&fields(100)).unwrap_err(),
            (400, Some(NOTE_FIELD_COUNT), false)
        );

        // Folding past the limit: 400 with the note.
        let mut fold = b"GET / HTTP/1.1\r\nHost: x\r\nX-F: ".to_vec();
        fold.resize(fold.len() + 5000, b'a');
        fold.extend_from_slice(b"\r\n ");
        fold.resize(fold.len() + 5000, b'b');
        fold.extend_from_slice(b"\r\n\r\n");
        assert_eq!(run(&fold).unwrap_err().1, Some(NOTE_FIELD_SIZE));
    }

    #[test]
    fn unlimited_fields_stay_cheap() {
        // LimitRequestFields 0: 10,000 fields are read (and no more) without
        // quadratic work.
        let l = Limits {
            request_line: 8190,
            field_size: 8190,
            fields: 0,
            registered_methods: false,
            require_http10: false,
            strict: true,
        };
        let mut raw = b"GET / HTTP/1.1\r\nHost: x\r\n".to_vec();
        for i in 0..9_999 {
            raw.extend_from_slice(format!("X-{}: {}\r\n", i % 50, "v".repeat(10)).as_bytes());
        }
        raw.extend_from_slice(b"\r\n");
        let t = std::time::Instant::now();
        assert!(matches!(
            HeadParser::new().parse(&raw, &l, false),
            Parse::Done(_)
        ));
        assert!(t.elapsed() < std::time::Duration::from_secs(2));
        let at = raw.len() - 2;
        raw.splice(at..at, b"Y: 1\r\n".iter().copied());
        assert!(matches!(
            HeadParser::new().parse(&raw, &l, false),
            Parse::Error(HeadError { status: 400, .. })
        ));
        // One name repeated past the field size: the merged value is too long.
        let mut raw = b"GET / HTTP/1.1\r\nHost: x\r\n".to_vec();
        for _ in 0..1000 {
            raw.extend_from_slice(b"X-A: vvvvvvvvvv\r\n");
        }
        raw.extend_from_slice(b"\r\n");
        assert!(matches!(
            HeadParser::new().parse(&raw, &l, false),
            Parse::Error(HeadError {
                status: 400,
                note: Some(NOTE_FIELD_SIZE),
                ..
            })
        ));
    }

    /// `HttpProtocolOptions Unsafe`: what it lets through and what stays
    /// refused (the same rows pass against Apache 2.4.71 in the case
    /// `protocol/unsafe`), and the rows' answers in strict mode.
    #[test]
    fn unsafe_heads() {
        let lax = Limits {
            strict: false,
            ..limits()
        };
        let rows: &[(&[u8], u16, u16)] = &[
            (b"GET / HTTP/1.1\nHost: a\n\n", 200, 400),
            (b"GET / HTTP/1.1\r\nHost: a\n\r\n", 200, 400),
            (b"GET   /   HTTP/1.1   \r\nHost: a\r\n\r\n", 200, 400),
            (b"GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n", 400, 400),
            (b"GET / HTTP/1.1\t\r\nHost: a\r\n\r\n", 400, 400),
            (b"GET / HTTP/1.1 x\r\nHost: a\r\n\r\n", 400, 400),
            (b"GET / http/1.1\r\nHost: a\r\n\r\n", 200, 400),
            (b"GE(T / HTTP/1.1\r\nHost: a\r\n\r\n", 200, 400),
            (b"POST /\r\n", 200, 400),
            (b"GET /a#f HTTP/1.1\r\nHost: a\r\n\r\n", 200, 400),
            (b"GET http://u:p@h/ HTTP/1.1\r\nHost: a\r\n\r\n", 200, 400),
            (b"GET / HTTP/1.1\r\nHost: 123\r\n\r\n", 200, 400),
            (b"GET / HTTP/1.1\r\nHost: a!b\r\n\r\n", 200, 400),
            (b"GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400, 400),
            (b"GET / HTTP/1.1\r\nHost: a\r\nX(Y): 1\r\n\r\n", 200, 400),
            (b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x01b\r\n\r\n", 200, 400),
            (b"GET / HTTP/1.1\r\nHost: a\r\nX Y: 1\r\n\r\n", 400, 400),
            (b"GET / HTTP/1.1\r\nHost: a\r\n: 1\r\n\r\n", 400, 400),
            (b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x0bb\r\n\r\n", 400, 400),
            (b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\n\r\n", 400, 400),
            (b"GET / HTTP/1.1\r\nHost: a\r\nX\x00: b\r\n\r\n", 400, 400),
        ];
        for &(raw, unsafe_status, strict_status) in rows {
            let shown = String::from_utf8_lossy(raw);
            let got = run_with(raw, &lax).map_or_else(|e| e.0, |_| 200);
            assert_eq!(got, unsafe_status, "Unsafe: {shown:?}");
            assert_eq!(status(raw), strict_status, "Strict: {shown:?}");
        }
        // The absolute target names the host; `Host` stays as sent.
        let c = run_with(b"GET http://other/ HTTP/1.1\r\nHost: a\r\n\r\n", &lax).unwrap();
        assert_eq!(c.req.headers.get_str("Host"), Some("a"));
        let c = run(b"GET http://other/ HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
        assert_eq!(c.req.headers.get_str("Host"), Some("other"));
        // The request line as logged: single spaces, the protocol as sent.
        let c = run_with(b"GET  /x  http/1.0 \r\n\r\n", &lax).unwrap();
        assert_eq!(c.req.request_line, "GET /x http/1.0");
        assert_eq!(c.proto_num, 1000);
    }

    #[test]
    fn head_requests_get_no_error_body() {
        // Observed: `HEAD / http/1.1` and `HEAD /` (0.9) get a 400 without a body.
        assert_eq!(
            run(b"HEAD / http/1.1\r\nHost: x\r\n\r\n").unwrap_err(),
            (400, None, true)
        );
        assert_eq!(run(b"HEAD /\r\n").unwrap_err(), (400, None, true));
        assert_eq!(
            run(b" HEAD / HTTP/1.1\r\n\r\n").unwrap_err(),
            (400, None, true)
        );
        assert_eq!(
            run(b"HEAD / HTTP/1.1\r\n\r\n").unwrap_err(),
            (400, None, true)
        );
        assert_eq!(
            run(b"head / HTTP/1.1\r\n\r\n").unwrap_err(),
            (400, None, false)
        );
    }

    #[test]
    fn request_fields() {
        let c = run(b"GET /a?b HTTP/1.1\r\nHost: Example.COM:80\r\nFoo: a\r\n \t b  \r\nfoo:  c\r\nX: \r\n\r\n").unwrap();
        let r = &c.req;
        assert_eq!(r.method, "GET");
        assert_eq!(r.target, "/a?b");
        assert_eq!(r.request_line, "GET /a?b HTTP/1.1");
        assert_eq!(r.version, Version::Http11);
        assert_eq!(r.headers.get_str("host"), Some("Example.COM:80"));
        assert_eq!(r.headers.get_joined("FOO").as_deref(), Some(&b"a b, c"[..]));
        assert_eq!(r.headers.get_str("x"), Some(""));
        assert_eq!(r.framing, BodyFraming::None);

        let c = run(b"GET http://Ex.COM.:8080/p HTTP/1.1\r\nHost: other\r\n\r\n").unwrap();
        assert_eq!(c.req.headers.get_str("Host"), Some("ex.com:8080"));
        assert_eq!(c.req.target, "http://Ex.COM.:8080/p");

        let c = run(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n").unwrap();
        assert_eq!(c.req.framing, BodyFraming::Chunked);
        assert!(c.close);
        assert!(!c.req.headers.contains("Content-Length"));

        let c = run(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").unwrap();
        assert_eq!(c.client, ClientAsked::KeepAlive);
        assert_eq!(c.req.version, Version::Http10);

        let c = run(b"GET /\xe9\xff HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        assert_eq!(c.req.target, "/%E9%FF");

        let c = run(b"GET /\r\n").unwrap();
        assert_eq!(c.proto_num, 9);
        assert_eq!(c.req.request_line, "GET /");
    }

    #[test]
    fn incremental_parse_matches_whole() {
        let raw = b"\r\nGET /x HTTP/1.1\r\nHost: x\r\nA: 1\r\n  2\r\nB: 3\r\n\r\nNEXT";
        let mut p = HeadParser::new();
        let mut done = None;
        for i in 1..=raw.len() {
            match p.parse(&raw[..i], &limits(), false) {
                Parse::Partial => {}
                Parse::Done(n) => {
                    done = Some((i, n));
                    break;
                }
                Parse::Error(e) => panic!("{e:?} at {i}"),
            }
        }
        let (i, n) = done.unwrap();
        assert_eq!(n, raw.len() - 4);
        assert_eq!(i, n);
        let c = p
            .finish(
                &Bytes::copy_from_slice(&raw[..n]),
                addr(),
                addr(),
                None,
                None,
            )
            .unwrap();
        assert_eq!(c.req.headers.get_str("a"), Some("1 2"));
        p.reset();
        assert!(!p.line_complete());
    }

    #[test]
    fn overlong_line_is_refused_before_its_end() {
        // LimitRequestLine 19: Apache's buffer holds 21 bytes, the LF may
        // overrun it, so a 20-byte line passes and a 21-byte line is a 414,
        // known as soon as byte 22 arrives without an LF.
        let l = Limits {
            request_line: 19,
            field_size: 100,
            fields: 100,
            registered_methods: false,
            require_http10: false,
            strict: true,
        };
        let ok = b"GET /aaaaaa HTTP/1.1\r\nHost: x\r\n\r\n";
        assert!(matches!(
            HeadParser::new().parse(ok, &l, false),
            Parse::Done(_)
        ));
        let long = b"GET /aaaaaaa HTTP/1.1\r\nHost: x\r\n\r\n";
        assert!(matches!(
            HeadParser::new().parse(long, &l, false),
            Parse::Error(HeadError { status: 414, .. })
        ));
        let mut p = HeadParser::new();
        assert_eq!(p.parse(&long[..21], &l, false), Parse::Partial);
        assert!(matches!(
            p.parse(&long[..22], &l, false),
            Parse::Error(HeadError { status: 414, .. })
        ));
        let mut p = HeadParser::new();
        assert_eq!(p.parse(&ok[..21], &l, false), Parse::Partial); // ends in CR: the LF may still come
    }
}
