//! The engine's side of dynamic content: a request the engine cannot
//! answer alone (PHP through PHP-FPM, mod_proxy_fcgi's job in Apache) is
//! handed to the server as a [`BackendCall`].
//!
//! Why a call and a continuation: the engine never touches a socket, but
//! Apache post-processes a backend's answer with the request's own state
//! (its per-directory configuration for `Header`, `Expires`, its `env`,
//! the conditional request headers). So the engine returns, with the
//! address and the CGI environment, a closure that still owns the
//! request's context; the server performs the exchange (connect, send the
//! environment, stream the request body) and calls the closure with the
//! backend's response head. The closure applies Apache's rules for a
//! script's header block and runs the output filters, and tells the server
//! whether the backend's body follows.
//!
//! Static files never take this path: [`Decision::Respond`] is the old
//! response, unchanged.

use super::Response;
use std::path::PathBuf;

/// What the engine decided for one request.
pub enum Decision<'a> {
    /// The answer is complete (static file, error, redirect …).
    Respond(Response),
    /// A complete answer kept by the answer memo, shared rather than copied
    /// ([`crate::answer_memo`]).
    Kept(std::sync::Arc<Response>),
    /// Ask a backend; the server performs the exchange.
    Backend(BackendCall<'a>),
}

/// Where a backend listens.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum BackendAddr {
    /// A Unix-domain socket (`unix:/run/php/php-fpm.sock`).
    Unix(PathBuf),
    /// `host:port` over TCP.
    Tcp(String),
    /// A CGI program the server runs itself (mod_cgi).
    Program(PathBuf),
    /// An HTTPS upstream (`ProxyPass … https://`, `SSLProxyEngine on`).
    Tls(Box<TlsUpstream>),
}

/// An HTTPS upstream as mod_ssl's proxy side reaches it: the address, the
/// name sent by SNI and checked against its certificate, and which checks
/// apply (the chain only with `SSLProxyVerify require`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TlsUpstream {
    /// `host:port` to connect to.
    pub addr: String,
    /// `proxy-request-hostname`: the URL's host, or the client's `Host`
    /// with `ProxyPreserveHost on` (no SNI when it is an IP address).
    pub hostname: String,
    /// `SSLProxyCheckPeerName` and `SSLProxyCheckPeerCN` as set (`None`:
    /// unset, which is not the same as on: see `checks_name`).
    pub check_peer_name: Option<bool>,
    pub check_peer_cn: Option<bool>,
    /// `SSLProxyCheckPeerExpire` (on unless set off).
    pub check_peer_expire: bool,
    /// `SSLProxyVerify require` (or `optional`): the chain verified.
    pub verify: Option<UpstreamVerify>,
    /// `SSLProxyProtocol`: TLS 1.2 and TLS 1.3 offered.
    pub tls12: bool,
    pub tls13: bool,
    /// `SSLProxyCipherSuite`: the suites offered, by their OpenSSL names.
    pub suites: Vec<&'static str>,
}

/// How an upstream's chain is verified: against the CAs of
/// `SSLProxyCACertificateFile`/`Path`, within `SSLProxyVerifyDepth`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct UpstreamVerify {
    pub ca_file: Option<PathBuf>,
    pub ca_path: Option<PathBuf>,
    pub depth: u32,
}

impl TlsUpstream {
    /// `ssl_io_filter_handshake`: the certificate's DNS and CN names are
    /// checked (`modssl_X509_match_name`) unless `SSLProxyCheckPeerName
    /// off`, or `SSLProxyCheckPeerCN off` with the other unset.
    pub fn checks_name(&self) -> bool {
        self.check_peer_name != Some(false)
            && (self.check_peer_cn != Some(false) || self.check_peer_name == Some(true))
    }

    /// Else, with `SSLProxyCheckPeerCN on`, the subject's CN alone.
    pub fn checks_cn_only(&self) -> bool {
        !self.checks_name() && self.check_peer_cn == Some(true)
    }
}

impl std::fmt::Display for BackendAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BackendAddr::Unix(p) => write!(f, "unix:{}", p.display()),
            BackendAddr::Tcp(a) => write!(f, "{a}"),
            BackendAddr::Program(p) => write!(f, "{}", p.display()),
            BackendAddr::Tls(t) => write!(f, "{} ({})", t.addr, t.hostname),
        }
    }
}

/// The continuation that turns the backend's answer into the client's.
pub type Finish<'a> = Box<dyn FnOnce(Result<BackendHead, BackendError>) -> BackendAnswer<'a> + 'a>;

/// One exchange to perform.
pub struct BackendCall<'a> {
    pub addr: BackendAddr,
    pub request: BackendRequest,
    /// `LimitRequestBody` for the body (0: none, as for any proxied
    /// request in Apache; set only for a body already read, `body_read`).
    pub body_limit: u64,
    /// The request body was already read and dropped (Apache's default
    /// handler discards it before refusing, and its error document then
    /// goes to the backend): the server discards it before the exchange,
    /// and the backend gets none.
    pub body_read: bool,
    /// The body must go with its length (`proxy-sendcl`): a chunked body
    /// longer than mod_proxy's prefetch is spooled (to a temporary file)
    /// before it is sent, instead of streamed without one.
    pub send_length: bool,
    /// The `103 Early Hints` answers the request sent before its handler
    /// (see [`crate::http::Response::early_hints`]): they go out before
    /// the exchange starts.
    pub early_hints: Vec<Vec<(String, String)>>,
    /// How long to wait on a proxied backend.
    pub timeouts: BackendTimeouts,
    pub finish: Finish<'a>,
}

/// How long the server waits on a proxied backend: mod_proxy's worker
/// `timeout=` and `connectiontimeout=`, else `ProxyTimeout`; `None`: the
/// server's `Timeout`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BackendTimeouts {
    /// Each read from and write to the backend.
    pub io: Option<std::time::Duration>,
    /// The connect.
    pub connect: Option<std::time::Duration>,
}

/// What to send, by protocol.
pub enum BackendRequest {
    /// FastCGI (PHP-FPM): the CGI environment, sent as parameters in this
    /// order; the request body follows as `FCGI_STDIN`. (For a chunked
    /// body the server sets `CONTENT_LENGTH` when mod_proxy's prefetch
    /// held all of it, and otherwise streams it without one.)
    /// `keep_conn`: ask PHP-FPM to keep the connection (`FCGI_KEEP_CONN`)
    /// and keep it for later requests (`ProxyPass … enablereuse=on`).
    FastCgi {
        params: Vec<(String, Vec<u8>)>,
        keep_conn: bool,
    },
    /// HTTP/1.1 (mod_proxy_http).
    Http(HttpRequest),
    /// A CGI script run as a child process (mod_cgi, mod_cgid).
    Cgi(Box<CgiRequest>),
}

/// A CGI script to run: the server starts `program` with `argv` and
/// exactly `env` as its environment in `dir`, writes the request body
/// (de-chunked, whatever its framing) to its standard input and reads its
/// standard output as a CGI response; its standard error goes to the
/// error log.
#[derive(Clone, Debug)]
pub struct CgiRequest {
    pub program: PathBuf,
    /// `argv[0]` is the script's path; then the ISINDEX words.
    pub argv: Vec<Vec<u8>>,
    pub env: Vec<(String, Vec<u8>)>,
    pub dir: PathBuf,
    /// An `nph-` script: its output goes to the client as it is, status
    /// line included, and the connection closes after it.
    pub nph: bool,
    /// `CGIDScriptTimeout`: the longest wait for the script's output;
    /// `None`: the server's `Timeout`.
    pub timeout: Option<std::time::Duration>,
    /// The script's file name, for the error log.
    pub script: String,
    /// `cgi` or `cgid`: the module the error-log lines name.
    pub module: &'static str,
    /// mod_cgi's `ScriptLog`, when one is configured.
    pub script_log: Option<ScriptLog>,
    /// Resource limits set in the child before it runs the script
    /// (`setrlimit`: resource, soft, hard).
    pub rlimits: Vec<(i32, u64, u64)>,
}

/// mod_cgi's `ScriptLog` for one request: the file, the size past which
/// nothing more is written (`ScriptLogLength`), and how the entries name
/// the request and the script.
#[derive(Clone, Debug)]
pub struct ScriptLog {
    pub path: PathBuf,
    pub max_bytes: u64,
    /// `METHOD URI[?ARGS] PROTOCOL`.
    pub request: String,
    pub filename: String,
}

impl ScriptLog {
    /// One `%error` entry, as mod_cgi's `log_scripterror` writes it: the
    /// time and the request, the status and the script, the text. Nothing
    /// is written once the file is larger than `max_bytes`, or when it
    /// cannot be opened, or is not a regular file (it is opened without
    /// blocking, so a FIFO cannot hold the server).
    pub fn error(&self, status: u16, text: &str) {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        if std::fs::metadata(&self.path).is_ok_and(|m| m.len() > self.max_bytes) {
            return;
        }
        let Ok(mut file) = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(&self.path)
        else {
            return;
        };
        if !file.metadata().is_ok_and(|m| m.is_file()) {
            return;
        }
        let entry = format!(
            "%% [{}] {}\n%% {status} {}\n%error\n{text}\n",
            crate::log_format::ctime(std::time::SystemTime::now()),
            self.request,
            self.filename
        );
        let _ = file.write_all(entry.as_bytes());
    }
}

/// An HTTP/1.1 request head for an upstream. The server adds the body's
/// framing (`Content-Length`, or `Transfer-Encoding: chunked` for a chunked
/// body longer than mod_proxy's prefetch) and `Connection`.
#[derive(Clone, Debug)]
pub struct HttpRequest {
    pub method: String,
    /// The request-target (`/path?query`), already escaped.
    pub target: String,
    /// In order, `Host` first; no `Content-Length`, `Transfer-Encoding`
    /// or `Connection`.
    pub headers: Vec<(String, Vec<u8>)>,
    /// Do not keep the upstream connection (`proxy-nokeepalive`).
    pub close: bool,
    /// The protocol the client asked to switch to (its `Upgrade` field),
    /// offered upstream because the worker allows it: the head then says
    /// `Connection: Upgrade` and `Upgrade: <this>`, and a `101` answer
    /// turns the exchange into a tunnel (`BackendAnswer::Switch`).
    pub upgrade: Option<String>,
    /// An HTTP/1.0 request (`force-proxy-request-1.0`): no `Connection`
    /// field, the connection closed after it.
    pub http10: bool,
    /// How the upstream's interim answers (`102`, `103`) reach the client;
    /// `None`: they do not.
    pub interim: Option<Interim>,
    /// A tunnel after a `101` ends as soon as one side ends its output,
    /// instead of passing the half-close on (`proxy-nohalfclose`).
    pub no_half_close: bool,
    /// The first request of a client connection goes on a new upstream
    /// connection (`proxy-initial-not-pooled`): a kept one the upstream
    /// closed meanwhile would fail a request the client cannot expect to
    /// retry.
    pub initial_not_pooled: bool,
    /// A CRLF follows the request's body, or its head when it has none
    /// (`proxy-sendextracrlf`, for upstreams that read one more line).
    pub extra_crlf: bool,
}

/// The fields of an answer, in order, as the server writes them.
pub type Fields = Vec<(std::borrow::Cow<'static, str>, String)>;

/// The fields an upstream's interim answer has for the client (the
/// upstream's own, as its final answer's would be taken).
#[derive(Clone)]
pub struct Interim(pub std::sync::Arc<dyn Fn(&BackendHead) -> Fields + Send + Sync>);

impl std::fmt::Debug for Interim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Interim")
    }
}

/// The head a backend answered with: for HTTP its status line's code and
/// reason, for FastCGI none (a CGI `Status:` field is among the lines);
/// then its header fields (`Name: value`), in order, as text.
#[derive(Clone, Debug, Default)]
pub struct BackendHead {
    pub status: Option<(u16, String)>,
    pub lines: Vec<String>,
    /// The backend ended the request with nothing after the block.
    pub body_empty: bool,
}

/// Why no usable answer came from a backend.
#[derive(Clone, Debug)]
pub enum BackendError {
    /// Could not connect, or every connection is busy past the wait
    /// (Apache: 503, "AH01079: failed to make connection to backend").
    Unavailable(String),
    /// The backend broke the exchange before its header block ended (502).
    Failed(String),
    /// The backend did not answer within `Timeout` (504).
    Timeout(String),
    /// mod_proxy_http could not reach or read the upstream (its status
    /// line did not come, the TLS handshake failed): `ap_proxyerror`'s
    /// page for `status`, with `reason` ("Error reading from remote
    /// server"); `message` is the error log's line.
    Proxy {
        status: u16,
        message: String,
        reason: &'static str,
    },
}

impl BackendError {
    pub fn status(&self) -> u16 {
        match self {
            BackendError::Unavailable(_) => 503,
            BackendError::Failed(_) => 502,
            BackendError::Proxy { status, .. } => *status,
            BackendError::Timeout(_) => 504,
        }
    }
    pub fn message(&self) -> &str {
        match self {
            BackendError::Unavailable(m)
            | BackendError::Failed(m)
            | BackendError::Timeout(m)
            | BackendError::Proxy { message: m, .. } => m,
        }
    }
}

/// What the server does with a backend's answer once its header block
/// was read.
pub enum BackendAnswer<'a> {
    /// Send `response`; with `pass_body`, what remains of the backend's
    /// output follows it (streamed, chunked or delimited by close;
    /// `response.body` is then empty).
    Send { response: Response, pass_body: bool },
    /// A content filter (`DEFLATE`) needs the whole body: the server reads
    /// all of it (up to [`COLLECT_MAX`]) and sends the response this makes
    /// of it.
    Collect(Collect<'a>),
    /// Another exchange answers instead (a CGI script's local redirect to
    /// a script): the server drops what remains of this backend's output
    /// and performs this one, for a request without a body.
    Then(Box<BackendCall<'a>>),
    /// The upstream switched protocols (`101`, to the protocol the client
    /// asked for): `response` is the interim answer the client gets (its
    /// status line and fields only; nothing of it is logged but the
    /// status, nor filtered), then bytes go both ways unchanged until
    /// both sides have closed (mod_proxy's tunnel).
    Switch(Response),
}

impl BackendAnswer<'_> {
    /// `response`, complete: nothing of the backend's output follows it.
    pub fn respond(response: Response) -> Self {
        BackendAnswer::Send {
            response,
            pass_body: false,
        }
    }

    /// The response an answer sends, when it sends one of its own.
    pub fn response_mut(&mut self) -> Option<&mut Response> {
        match self {
            BackendAnswer::Send { response, .. } => Some(response),
            BackendAnswer::Collect(_) | BackendAnswer::Then(_) | BackendAnswer::Switch(_) => None,
        }
    }

    /// The page for a failed exchange: what `finish` answers for an
    /// `Err`, which is always a complete response (the modules' error
    /// paths make nothing else; a bare 500 stands in should one not).
    pub fn into_error_page(self) -> Response {
        match self {
            BackendAnswer::Send { response, .. } => response,
            BackendAnswer::Collect(_) | BackendAnswer::Then(_) | BackendAnswer::Switch(_) => {
                debug_assert!(false, "a failed exchange answered with a continuation");
                Response::new(500)
            }
        }
    }
}

/// The continuation for a body collected whole.
pub type Collect<'a> = Box<dyn FnOnce(bytes::Bytes) -> Response + 'a>;

/// The largest backend body collected for a content filter (as mod_deflate
/// in htaccel compresses in memory up to 64 MiB).
pub const COLLECT_MAX: usize = 64 << 20;
