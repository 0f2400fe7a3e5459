//! The HTTP vocabulary shared by the engine (which decides) and the server
//! (which does the I/O): a parsed request head, and a response whose body is
//! described rather than produced, so that files can be sent zero-copy and so
//! that `htaccel explain` and the tests can look at a decision without a
//! socket.
//!
//! The submodules hold the parts of Apache's `modules/http` that are pure
//! functions of a request and some file metadata: status lines, the built-in
//! error pages, conditional requests, byte ranges.

pub mod autoindex;
pub mod backend;
pub mod conditional;
pub mod date;
pub mod default_handler;
pub mod digest;
pub mod error_page;
pub mod etag;
pub mod http2;
pub mod http3;
pub mod md;
pub mod method;
pub mod protocol_env;
pub mod range;
pub mod read_timeout;
pub mod server_settings;
pub mod status;
pub mod tls;
pub mod vary;

pub use tls::TlsInfo;

/// The content type of a directory (Apache's `DIR_MAGIC_TYPE`), which
/// mod_autoindex answers to.
pub const DIR_MAGIC_TYPE: &str = "httpd/unix-directory";

use bytes::Bytes;
use std::borrow::Cow;
use std::fs::File;
use std::net::SocketAddr;
use std::sync::Arc;

/// HTTP protocol version of a request, as Apache numbers it (`HTTP_VERSION(major, minor)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Version {
    Http10,
    Http11,
    /// A request on an HTTP/2 stream (or an HTTP/1.x request line naming
    /// `HTTP/2.0`), which Apache shows as `HTTP/2.0`.
    Http2,
    /// A request on an HTTP/3 stream (or a request line naming `HTTP/3.0`).
    Http3,
}

impl Version {
    pub fn as_str(self) -> &'static str {
        match self {
            Version::Http10 => "HTTP/1.0",
            Version::Http11 => "HTTP/1.1",
            Version::Http2 => "HTTP/2.0",
            Version::Http3 => "HTTP/3.0",
        }
    }
}

/// Request headers in arrival order. Names compare case-insensitively;
/// values are raw bytes (Apache does not require them to be UTF-8).
/// A name is borrowed when it is a `&'static str` (the server passes the
/// common names that way), so that reading and copying the usual request's
/// headers allocates no name.
#[derive(Clone, Debug, Default)]
pub struct Headers {
    entries: Vec<(Cow<'static, str>, Bytes)>,
}

impl Headers {
    pub fn new() -> Self {
        Self::default()
    }
    /// Room for `n` fields before the list grows.
    pub fn with_capacity(n: usize) -> Self {
        Headers {
            entries: Vec::with_capacity(n),
        }
    }
    pub fn push(&mut self, name: impl Into<Cow<'static, str>>, value: impl Into<Bytes>) {
        self.entries.push((name.into(), value.into()));
    }
    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&Bytes> {
        crate::answer_memo::note_header(name);
        self.entries
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }
    /// The first value of `name` as text, if it is valid UTF-8.
    pub fn get_str(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(|v| std::str::from_utf8(v).ok())
    }
    /// Every value of `name` joined with ", ", as Apache's table merges
    /// repeated request headers (`apr_table_mergen`).
    pub fn get_joined(&self, name: &str) -> Option<Bytes> {
        let mut it = self.get_all(name);
        let first = it.next()?.clone();
        let mut rest = it.peekable();
        if rest.peek().is_none() {
            return Some(first);
        }
        let mut out = first.to_vec();
        for v in rest {
            out.extend_from_slice(b", ");
            out.extend_from_slice(v);
        }
        Some(Bytes::from(out))
    }
    pub fn get_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Bytes> + 'a {
        crate::answer_memo::note_header(name);
        self.entries
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }
    pub fn remove(&mut self, name: &str) {
        self.entries.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    }
    /// Replace every value of `name` with one value.
    pub fn set(&mut self, name: &str, value: impl Into<Bytes>) {
        let value = value.into();
        if let Some(pos) = self
            .entries
            .iter()
            .position(|(n, _)| n.eq_ignore_ascii_case(name))
        {
            self.entries[pos].1 = value;
            let mut i = pos + 1;
            while i < self.entries.len() {
                if self.entries[i].0.eq_ignore_ascii_case(name) {
                    self.entries.remove(i);
                } else {
                    i += 1;
                }
            }
        } else {
            self.entries.push((Cow::Owned(name.to_string()), value));
        }
    }
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Bytes)> {
        crate::answer_memo::note_all_headers();
        self.iter_unrecorded()
    }
    /// The fields without telling the answer memo that they were read: for
    /// handling the list as a whole (copying, finding repeated names), not
    /// for deciding anything from its contents.
    pub(crate) fn iter_unrecorded(&self) -> impl Iterator<Item = (&str, &Bytes)> {
        self.entries.iter().map(|(n, v)| (n.as_ref(), v))
    }
    pub fn len(&self) -> usize {
        crate::answer_memo::note_all_headers();
        self.entries.len()
    }
    pub fn is_empty(&self) -> bool {
        crate::answer_memo::note_all_headers();
        self.entries.is_empty()
    }
    /// The same fields in the same order (names compared as names are).
    pub(crate) fn same_fields(&self, other: &Headers) -> bool {
        self.entries.len() == other.entries.len()
            && self
                .entries
                .iter()
                .zip(&other.entries)
                .all(|((a, x), (b, y))| a.eq_ignore_ascii_case(b) && x == y)
    }
}

/// How the request body is framed, as the connection layer found it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BodyFraming {
    #[default]
    None,
    Length(u64),
    Chunked,
}

/// A request head as read off the wire, after the connection layer's own
/// checks (line lengths, field counts, framing). Everything the engine needs
/// to decide; the body stays with the connection.
#[derive(Clone, Debug)]
pub struct Request {
    /// The method token exactly as sent (`GET`, `PROPFIND`, …; case-sensitive as in Apache).
    pub method: String,
    /// The request-target exactly as sent (`/a%20b?x=1`, `*`, `http://host/p`).
    pub target: String,
    pub version: Version,
    /// The request line as sent, without CRLF (`THE_REQUEST`).
    pub request_line: String,
    pub headers: Headers,
    pub framing: BodyFraming,
    /// The client's address. Read it through [`Request::remote`] or
    /// [`Request::remote_ip`], which tell the answer memo that the answer
    /// depends on it.
    pub peer: SocketAddr,
    /// The connection's own peer when the connection began with a PROXY
    /// header (mod_remoteip): `peer` is then the client the header named
    /// (the connection's peer itself for `UNKNOWN` and `LOCAL`), and
    /// `RemoteIPHeader` is not consulted.
    pub proxied_by: Option<SocketAddr>,
    pub local: SocketAddr,
    /// Whether the connection is TLS (`HTTPS`).
    pub secure: bool,
    /// The TLS session, on a TLS connection (shared by its requests).
    pub tls: Option<Arc<TlsInfo>>,
    /// The HTTP/2 stream the request came on (`None`: HTTP/1.x).
    pub h2_stream: Option<http2::H2Stream>,
}

impl Request {
    /// Whether the request came on a stream of HTTP/2 or HTTP/3: Apache's
    /// mod_http2 serves it on a secondary connection that never keeps
    /// alive and has no HTTP/1.1 header filter.
    pub fn on_stream(&self) -> bool {
        self.h2_stream.is_some() || self.version == Version::Http3
    }

    /// The client's address and port (recorded as an input of the answer).
    pub fn remote(&self) -> SocketAddr {
        crate::answer_memo::note_remote();
        self.peer
    }
    /// The client's IP address (recorded as an input of the answer).
    pub fn remote_ip(&self) -> std::net::IpAddr {
        crate::answer_memo::note_remote_ip();
        self.peer.ip()
    }
    /// The connection's own peer's IP (`CONN_REMOTE_ADDR`): the proxy's
    /// when a PROXY header named the client. Recorded as the client's IP,
    /// which it is without a header; behind one, the answer memo keys on
    /// the client only, so an answer that read the proxy is not kept.
    pub fn conn_peer_ip(&self) -> std::net::IpAddr {
        match self.proxied_by {
            Some(peer) => {
                crate::answer_memo::note_volatile();
                peer.ip()
            }
            None => self.remote_ip(),
        }
    }
    /// The TLS session's facts (SNI, protocol, cipher): an answer that
    /// reads them is not kept, since they differ between connections.
    pub fn tls_info(&self) -> Option<&TlsInfo> {
        let tls = self.tls.as_deref()?;
        crate::answer_memo::note_volatile();
        Some(tls)
    }
}

/// A part of a response body. Files are referenced, not read, so the server
/// can use `sendfile(2)`.
#[derive(Clone, Debug)]
pub enum BodyPart {
    Bytes(Bytes),
    File {
        file: Arc<File>,
        offset: u64,
        len: u64,
    },
}

impl BodyPart {
    pub fn len(&self) -> u64 {
        match self {
            BodyPart::Bytes(b) => b.len() as u64,
            BodyPart::File { len, .. } => *len,
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A response body: a sequence of parts whose total length is known up front.
#[derive(Clone, Debug, Default)]
pub struct Body {
    pub parts: Vec<BodyPart>,
}

impl Body {
    pub fn empty() -> Self {
        Self::default()
    }
    pub fn bytes(b: impl Into<Bytes>) -> Self {
        Body {
            parts: vec![BodyPart::Bytes(b.into())],
        }
    }
    pub fn file(file: Arc<File>, offset: u64, len: u64) -> Self {
        Body {
            parts: vec![BodyPart::File { file, offset, len }],
        }
    }
    pub fn len(&self) -> u64 {
        self.parts.iter().map(BodyPart::len).sum()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The body as one buffer (reads files). For tests, `explain` and filters
    /// that must see the bytes (compression); never for the plain static path.
    pub fn to_vec(&self) -> std::io::Result<Vec<u8>> {
        use std::os::unix::fs::FileExt;
        let mut out = Vec::with_capacity(self.len() as usize);
        for p in &self.parts {
            match p {
                BodyPart::Bytes(b) => out.extend_from_slice(b),
                BodyPart::File { file, offset, len } => {
                    let start = out.len();
                    out.resize(start + *len as usize, 0);
                    file.read_exact_at(&mut out[start..], *offset)?;
                }
            }
        }
        Ok(out)
    }
}

/// What the server must do with a request body it has not read yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BodyDisposal {
    /// Read and discard it, answering 413 instead if it exceeds the limit
    /// (`LimitRequestBody`; 0 means unlimited). Apache's `ap_discard_request_body`.
    /// The body is read before the response is sent, as Apache's content
    /// handlers do (the static file handler discards first): a client that
    /// sent `Expect: 100-continue` gets `100 Continue`, and a malformed or
    /// over-limit body replaces the response with 400 or 413.
    #[default]
    Discard,
    /// An answer made before the content handler runs (`ap_die`: access
    /// denied, authentication required, redirects, `.htaccess` errors). The
    /// body is read first as with `Discard` (a malformed or over-limit body
    /// becomes that request's 400 or 413), except for a client waiting for
    /// `100 Continue`: none is sent, the answer goes out with
    /// `Connection: close` and the body, if it comes, is read after it. A
    /// declared length over the limit is a 413 in every case.
    AfterResponse,
    /// Not read at all: the answer closes the connection, for a request
    /// whose body framing a handler refused before reading it (mod_proxy_http
    /// and a `Transfer-Encoding` other than `chunked`, AH01093), so that
    /// no byte of that body is ever taken for a request.
    Unread,
}

/// How a response's body reaches the output filters, as Apache's filters
/// see a brigade.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Arrival {
    /// In [`Response::body`], seen at once (a file, a page the engine made).
    #[default]
    Whole,
    /// In [`Response::body`], but it reached the filters in more than one
    /// piece (a backend's, collected): the filters' shortcuts for a small
    /// body seen whole do not apply.
    InPieces,
    /// A backend's body follows this head, streamed by the server: the
    /// filters that need the body's bytes leave it alone.
    Later,
}

/// How a body of unannounced length goes out, as Apache's
/// `ap_set_keepalive` decides: it sets `r->chunked` ahead of its
/// keep-alive tests, and marks the connection closing when they fail.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Unannounced {
    /// The body's length is known.
    #[default]
    No,
    /// A handler's body (mod_status, mod_md's pages): chunked over
    /// HTTP/1.1 unless the connection was closing before the answer, so
    /// also when the client asked to close.
    Chunked,
    /// A page made after a first header pass decided on keep-alive (the
    /// 416 from the byte-range filter): chunked only if the connection
    /// stays open, else ended by closing it.
    ChunkedIfKept,
}

/// A response as the engine decided it. The server adds `Date`, `Server`,
/// `Connection`/`Keep-Alive` and the framing (`Content-Length` from the body
/// length unless a header already says otherwise), suppresses the body for
/// HEAD and for 1xx/204/304, and writes the parts.
#[derive(Clone, Debug)]
pub struct Response {
    pub status: u16,
    /// Response headers in the order they are sent; the names the engine
    /// writes itself are static strings (no allocation per header).
    pub headers: Vec<(Cow<'static, str>, String)>,
    pub body: Body,
    /// Close the connection after this response (Apache does after errors
    /// that leave the request stream in an unknown state, e.g. 400, 408, 413).
    pub close: bool,
    /// `LimitRequestBody` in force for this request (0 = unlimited).
    pub body_limit: u64,
    /// When the server reads and discards a request body the engine did not consume.
    pub disposal: BodyDisposal,
    /// Apache streams this body without announcing its length: the server
    /// sends it chunked or, where Apache would not chunk, delimited by
    /// closing the connection.
    pub stream: Unannounced,
    /// How the body reaches the output filters.
    pub arrival: Arrival,
    /// A status line a handler gave (a script's `Status: 404 Gone`, an
    /// upstream's reason): sent when it starts with this status's code
    /// (`http::status::status_line_custom`).
    pub status_line: Option<String>,
    /// `Content-Type`, `-Encoding` and `-Language` are ordinary headers (a
    /// proxied answer's, in Apache's `headers_out`), not the response's
    /// type: a 204 or 304 keeps them.
    pub entity_in_headers: bool,
    /// Where the server keeps what it derives from this answer's header
    /// list alone (checked and serialised once), shared by every copy of an
    /// answer the answer memo hands out; `None` for an answer made once.
    pub head_cache: Option<HeadCache>,
    /// What the access log reads of the request once the answer is made
    /// (`None` when there is nothing: most answers).
    pub log_vars: Option<Box<LogVars>>,
    /// The client's name for the access log's `%h`, where
    /// `HostnameLookups` found one; else `%h` is the address.
    pub remote_host: Option<String>,
    /// The protocols the request's server offers by `Upgrade` (`h2,h2c`):
    /// set when the answer is a handler's own and the request named no
    /// `Upgrade` (Apache's core announces them from its first handler, in
    /// `headers_out`, which error pages drop; a local `ErrorDocument`'s
    /// request runs that handler too). The server sends them on the first
    /// answer of an HTTP/1.x connection only, as Apache does.
    pub upgrade_offer: Option<Arc<str>>,
    /// The request switches its connection to HTTP/2 (`Upgrade: h2c`
    /// accepted): the server sends `101 Switching Protocols` and answers
    /// the request again as stream 1 of an HTTP/2 session.
    pub h2c_upgrade: Option<Box<http2::H2cUpgrade>>,
    /// The HTTP/3 the request's server advertises in `Alt-Svc` on HTTPS
    /// answers (`H3Engine on`; the server adds the field unless the
    /// answer has its own).
    pub alt_svc: Option<http3::AltSvc>,
    /// A 403 mod_ssl gave because the request needs a new client
    /// verification on a stream of a multiplexed connection, where it
    /// cannot renegotiate: mod_http2 resets the stream with
    /// `HTTP_1_1_REQUIRED` instead of sending the answer, and the client
    /// asks again over HTTP/1.1 (HTTP/3: `H3_VERSION_FALLBACK`).
    pub renegotiation_forbidden: bool,
    /// The `103 Early Hints` answers that precede this one, each its
    /// fields in order (mod_http2's `H2EarlyHint`, on streams only).
    pub early_hints: Vec<Vec<(String, String)>>,
    /// What the request's environment asks of the answer's HTTP/1.x
    /// framing (`nokeepalive`, `downgrade-1.0`, `force-response-1.0`).
    pub protocol: protocol_env::ProtocolEnv,
}

/// A slot, shared between the copies of one kept answer, for the server's
/// own preparation of its head ([`Response::head_cache`]). The engine never
/// looks inside.
#[derive(Clone, Default)]
pub struct HeadCache(pub Arc<std::sync::OnceLock<Box<dyn std::any::Any + Send + Sync>>>);

impl std::fmt::Debug for HeadCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() {
            "HeadCache(filled)"
        } else {
            "HeadCache(empty)"
        })
    }
}

impl Response {
    pub fn new(status: u16) -> Self {
        Response {
            status,
            // A static answer carries about eight fields: no regrowth.
            headers: Vec::with_capacity(10),
            body: Body::empty(),
            close: false,
            body_limit: 0,
            disposal: BodyDisposal::Discard,
            stream: Unannounced::No,
            arrival: Arrival::Whole,
            status_line: None,
            entity_in_headers: false,
            head_cache: None,
            log_vars: None,
            remote_host: None,
            upgrade_offer: None,
            h2c_upgrade: None,
            alt_svc: None,
            renegotiation_forbidden: false,
            early_hints: Vec::new(),
            protocol: protocol_env::ProtocolEnv::default(),
        }
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub fn set_header(&mut self, name: impl Into<Cow<'static, str>>, value: impl Into<String>) {
        let name = name.into();
        let value = value.into();
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(&name));
        self.headers.push((name, value));
    }
    pub fn add_header(&mut self, name: impl Into<Cow<'static, str>>, value: impl Into<String>) {
        self.headers.push((name.into(), value.into()));
    }
    pub fn remove_header(&mut self, name: &str) {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    }
}

/// What the access log reads of a request, kept with its answer.
#[derive(Clone, Debug, Default)]
pub struct LogVars {
    /// The environment variables the access logs name (`%{VAR}e`, `env=`
    /// conditions), as they were when the answer was made.
    pub env: Vec<(String, String)>,
    /// The request notes once the output filters ran (`%{NAME}n`).
    pub notes: Vec<(String, String)>,
    /// `LogIOTrackTTFB On` applies: the connection layer sets [`ttfb`]
    /// for each exchange that sends the answer.
    ///
    /// [`ttfb`]: LogVars::ttfb
    pub track_ttfb: bool,
    /// Time from the request's start to its answer's first output (`%^FB`).
    pub ttfb: Option<std::time::Duration>,
}

/// The engine as the server sees it.
pub trait Handler: Send + Sync + 'static {
    /// Decide the response to one request.
    fn handle(&self, req: &Request) -> Response;
    /// Decide the response, or hand the request to a backend
    /// (`backend::Decision`); engines without backends answer at once.
    fn decide<'a>(&'a self, req: &'a Request) -> backend::Decision<'a> {
        backend::Decision::Respond(self.handle(req))
    }
    /// The response for an error the connection layer detected itself
    /// (400 malformed request, 408 timeout, 413, 414, 501 …), shaped as
    /// Apache's built-in error page for an error the connection layer
    /// found itself (malformed head, body over the limit, timeouts …).
    fn protocol_error(&self, error: &ProtocolError<'_>) -> Response;
    /// The answer when reading the body of `req`, which was decided
    /// already, failed with `status` (413 over `LimitRequestBody`, 400 for
    /// a malformed chunk): Apache answers it as an error of that request,
    /// with its own configuration. Without one, the built-in page.
    fn body_error(&self, req: &Request, status: u16) -> Response {
        self.protocol_error(&ProtocolError::of_request(status, req))
    }
    /// mod_remoteip: whether a connection from `peer` to `local` must
    /// begin with a PROXY protocol header.
    fn proxy_protocol(&self, local: SocketAddr, peer: SocketAddr) -> bool {
        let _ = (local, peer);
        false
    }
    /// mod_reqtimeout's stages for a connection accepted on `local`, from
    /// the server that address selects before any `Host` is known (Apache's
    /// base server). `None`: the server's own defaults.
    fn read_timeouts(&self, local: SocketAddr) -> Option<read_timeout::ConnReadTimeouts> {
        let _ = local;
        None
    }
    /// `StrictHostCheck` of the server the request's address selects:
    /// whether the host it names is one no `ServerName` or `ServerAlias`
    /// there names, so that the request is refused (400) while its head
    /// is checked, as a bad `Host` is.
    fn host_refused(&self, req: &Request) -> bool {
        let _ = req;
        false
    }
    /// The core's settings of the server a connection accepted on `local`
    /// reads its request heads under (Apache's base server: the address's
    /// first virtual host, else the main server). `None`: the server's own
    /// defaults.
    fn address_settings(&self, local: SocketAddr) -> Option<server_settings::ServerSettings> {
        let _ = local;
        None
    }
    /// The settings of `req`'s own server, for the rest of its exchange.
    /// `None`: the connection's base server's.
    fn request_settings(&self, req: &Request) -> Option<server_settings::ServerSettings> {
        let _ = req;
        None
    }
    /// The body stage for `req` on a connection mod_reqtimeout watches:
    /// from the request's own server (a name-based virtual host's
    /// `RequestReadTimeout body=`). `None`: the connection's.
    fn body_read_timeout(&self, req: &Request) -> Option<read_timeout::ReadTimeout> {
        let _ = req;
        None
    }
    /// The HTTP/2 settings for a cleartext connection accepted on `local`
    /// whose client may open with HTTP/2's preface (`h2c` in the
    /// `Protocols` of the address's base server, `H2Direct` not off,
    /// mod_http2 loaded). `None`: such a connection speaks HTTP/1.x only.
    fn h2c(&self, local: SocketAddr) -> Option<http2::H2Settings> {
        let _ = local;
        None
    }
    /// Where to write log lines.
    fn log(&self) -> &dyn Log;
}

/// An error the connection layer answers by itself, with what Apache's
/// error page for it shows.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProtocolError<'a> {
    pub status: u16,
    /// Apache's error-notes text where it adds one, e.g. "Size of a request
    /// header field exceeds server limit."
    pub note: Option<&'a str>,
    /// The request's method, when the request line was read (the 413 and
    /// 405 pages name it).
    pub method: Option<&'a str>,
    /// The client's `Expect` value, quoted by the 417 page.
    pub expect: Option<&'a str>,
    /// The request was `HEAD`: headers only.
    pub head: bool,
    /// The request as far as it was read, when it failed while being read
    /// (malformed request line or header fields): at least the connection's
    /// addresses. With it the answer goes through the error path with the
    /// server's configuration, as Apache's `ap_read_request` dies with the
    /// connection's default server and its `lookup_defaults`.
    pub request: Option<&'a Request>,
    /// The status of the error whose answer was being made when this one
    /// was found (Apache's recursive error: a 417 whose discarded request
    /// body turned out malformed is answered 400 with "Additionally, a 417
    /// Expectation Failed error was encountered …"; a stream whose `:path`
    /// mod_http2 refused is answered 414 naming the 400 of its unparsable
    /// request line). Such an answer is the built-in page: Apache does not
    /// retry a custom one.
    pub additional: Option<u16>,
}

impl<'a> ProtocolError<'a> {
    /// The error `status` of a request whose head was read: its method
    /// named, headers only for a `HEAD`.
    pub fn of_request(status: u16, req: &'a Request) -> ProtocolError<'a> {
        ProtocolError {
            status,
            method: Some(&req.method),
            head: req.method == "HEAD",
            ..Default::default()
        }
    }
}

/// Sink for the access log and the error log.
pub trait Log: Send + Sync {
    /// One access-log record, after the response was sent.
    fn access(&self, entry: &AccessEntry<'_>);
    /// One access-log record with what the engine knows beyond the
    /// connection (the site that answered: `%v`, `%p`). Default: `access`.
    fn access_with(&self, entry: &AccessEntry<'_>, details: &crate::log_format::AccessDetails<'_>) {
        let _ = details;
        self.access(entry);
    }
    /// One error-log line: Apache level name (`error`, `warn`, …), module (`core`), message.
    fn error(&self, level: &str, module: &str, client: Option<SocketAddr>, message: &str);
    /// One error-log line written while a request is answered, with the
    /// request (the default format appends its `Referer`; `ErrorLogFormat`
    /// may show its fields, address and names). Default: `error`.
    fn error_event(&self, event: &ErrorEvent<'_>) {
        self.error(event.level, event.module, event.client, event.message);
    }
}

impl<'a> ErrorEvent<'a> {
    /// A line about no request (the server's, or a connection's).
    pub fn without_request(
        level: &'a str,
        module: &'a str,
        client: Option<SocketAddr>,
        message: &'a str,
    ) -> ErrorEvent<'a> {
        ErrorEvent {
            level,
            module,
            client,
            message,
            request: None,
            env: None,
            server_name: None,
            canonical_name: false,
        }
    }
}

/// An error-log line and the request it was written for.
#[derive(Clone, Copy, Debug)]
pub struct ErrorEvent<'a> {
    pub level: &'a str,
    pub module: &'a str,
    pub client: Option<SocketAddr>,
    pub message: &'a str,
    /// The request (`None` for a line about no request): its header
    /// fields (`Referer`, `%{Name}i`), local address (`%A`) and host (`%V`).
    pub request: Option<&'a Request>,
    /// The request's environment (`%{NAME}e`).
    pub env: Option<&'a crate::env::Env>,
    /// The `ServerName` of the server answering (`%v`).
    pub server_name: Option<&'a str>,
    /// `UseCanonicalName On` where the request is (`%V` is then `ServerName`).
    pub canonical_name: bool,
}

/// What the access log may print about one exchange (`LogFormat` inputs).
pub struct AccessEntry<'a> {
    pub request: Option<&'a Request>,
    /// The client (`%a`, `%h`).
    pub remote: SocketAddr,
    /// The connection's own peer (`%{c}a`, `%{c}h`): the proxy when a
    /// PROXY header named the client, else `remote`.
    pub conn_peer: SocketAddr,
    pub local: SocketAddr,
    pub status: u16,
    /// Body bytes sent (`%b`/`%B`).
    pub bytes_sent: u64,
    pub response_headers: &'a [(Cow<'static, str>, String)],
    /// When the request's first byte arrived.
    pub received: std::time::SystemTime,
    pub duration: std::time::Duration,
    pub remote_user: Option<&'a str>,
    /// Bytes sent, status line and headers included (`%O`), when known.
    pub bytes_out: Option<u64>,
    /// [`LogVars::env`] of the answer.
    pub env: &'a [(String, String)],
    /// [`LogVars::notes`] of the answer.
    pub notes: &'a [(String, String)],
    /// [`Response::remote_host`] of the answer (`%h`).
    pub remote_host: Option<&'a str>,
    /// Bytes received for the request, request line, headers and body
    /// included (`%I`), when known.
    pub bytes_in: Option<u64>,
    /// [`LogVars::ttfb`] of the answer (`%^FB`).
    pub ttfb: Option<std::time::Duration>,
    /// What the connection layer wrote beside the answer's fields.
    pub framing: FramingFields,
}

/// Fields the connection layer writes beside an answer's own, which Apache
/// keeps in `r->headers_out` (`ap_set_keepalive`, the HTTP header filter)
/// where the access log's `%{NAME}o` finds them.
#[derive(Clone, Copy, Debug, Default)]
pub struct FramingFields {
    /// The token merged into `Connection` (`close`, `Keep-Alive`).
    pub connection: Option<&'static str>,
    /// `Keep-Alive: timeout=…[, max=…]`.
    pub keep_alive: Option<(u64, Option<u32>)>,
    /// A `Content-Length` the answer did not carry itself.
    pub content_length: Option<u64>,
    /// `Transfer-Encoding: chunked`.
    pub chunked: bool,
}
