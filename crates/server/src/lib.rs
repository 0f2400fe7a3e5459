//! htaccel's HTTP/1.1 server: listeners, connections and every byte of I/O.
//!
//! The engine decides ([`Handler::handle`] turns a [`Request`] into a
//! [`Response`]); this crate reads requests off the wire with the checks and
//! limits of Apache httpd 2.4 and writes the engine's answers the way Apache
//! writes them, so that a client cannot tell the two apart:
//!
//! * the request head is parsed as Apache's `ap_read_request` parses it under
//!   `HttpProtocolOptions Strict` (its default), and refused with the same
//!   status for the same input — 400, 408, 414, 417, with Apache's
//!   `error-notes` passed to [`Handler::protocol_error`]
//!   (`src/head.rs` holds the table of observed answers);
//! * request bodies the engine leaves unread are read and discarded with
//!   `LimitRequestBody` (413), chunked decoding with Apache's rules, and
//!   `Expect: 100-continue` answered as Apache answers it;
//! * responses carry `Date`, `Server`, `Content-Length`, `Keep-Alive` and
//!   `Connection` in Apache's order, keep-alive follows `ap_set_keepalive`
//!   (`KeepAlive`, `MaxKeepAliveRequests`, `KeepAliveTimeout`), pipelined
//!   requests are answered in order with their responses batched into one
//!   write;
//! * timeouts follow `Timeout`, `KeepAliveTimeout` and mod_reqtimeout's
//!   `RequestReadTimeout` (408, or a silent close where Apache closes
//!   silently);
//! * HTTPS as mod_ssl configures it ([`tls`]): TLS on rustls under the same
//!   HTTP/1.1 loop, the virtual host chosen by SNI, plain HTTP on a TLS
//!   port answered with mod_ssl's 400;
//! * HTTP/2 (`h2`, mod_http2's settings) and HTTP/3 (`h3`, htaccel's own
//!   `H3Engine on`: QUIC on UDP beside the TLS port, quinn and h3), each
//!   stream answered by the same HTTP/1.1 exchange (`stream_exchange`).
//!
//! It is built for speed: one single-threaded tokio runtime per core, each
//! accepting on its own `SO_REUSEPORT` socket; per connection one read buffer
//! and one write buffer, reused; request header values are slices of the read
//! buffer; small bodies leave with the head in one `writev`, large files with
//! `sendfile(2)`.
//!
//! # Using it
//!
//! [`run`] binds, calls back (to drop privileges), serves until SIGTERM or
//! SIGINT, then drains and returns. For tests and embedding, [`Listeners`]
//! and [`Server`] do the same steps one at a time and tell which ports were
//! bound.
//!
//! # What the engine must know
//!
//! * The server adds `Content-Length` from the body length, except for
//!   `HEAD` requests and 204/304 responses (Apache's content-length filter
//!   does not invent one there): a handler that wants `Content-Length` on a
//!   `HEAD` response (the static file handler) sets it itself.
//! * Entity headers (`Content-Type`, `Content-Encoding`, `Content-Language`)
//!   go last in the engine's list, as Apache emits them; the server puts its
//!   own headers before them.
//! * An engine `Transfer-Encoding: chunked` header asks for a chunked body
//!   (Apache's answer for bodies of unknown length); for HTTP/1.0 the body
//!   is sent raw and the connection closed.
//! * [`Handler::protocol_error`] gets the error notes Apache shows: for 400
//!   from the header limits the notes listed in `src/head.rs`; for 417 the
//!   client's `Expect` value (Apache's page quotes it); for a head refused
//!   while being read, the request as far as it was read (at least the
//!   connection's addresses), so that the engine answers through its error
//!   path with the server's configuration, as Apache does.
//! * [`Response::disposal`] tells when an unread request body is discarded:
//!   before the response (content handlers) or after it (early errors).
//!
//! [`Request`]: htaccel_engine::http::Request
//! [`Response`]: htaccel_engine::http::Response
//! [`Response::disposal`]: htaccel_engine::http::Response::disposal
//! [`Handler::handle`]: htaccel_engine::http::Handler::handle
//! [`Handler::protocol_error`]: htaccel_engine::http::Handler::protocol_error

mod backend_body;
mod body;
mod cgi;
mod chars;
mod conn;
mod exchange;
mod fastcgi;
#[doc(hidden)]
pub mod fuzzing;
mod generation;
mod h2;
mod h3;

mod head;
mod listener;
pub mod md;
mod proxy_http;
mod proxy_protocol;
mod scoreboard;
mod shutdown;
mod spool;
mod stream_exchange;
mod stream_limits;
mod target;
pub mod tls;
mod transport;
mod watch_ready;
mod write;

pub use listener::{bind_check, wildcard, Listeners, Server};
pub use shutdown::Signalled;

use htaccel_engine::http::Handler;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// Apache's request limits and `HttpProtocolOptions`, and a server's
/// settings for the connection layer (the engine's types: the engine
/// resolves them per server, [`Handler::address_settings`](htaccel_engine::http::Handler::address_settings)).
pub use htaccel_engine::http::server_settings::{Limits, ServerSettings};

/// One stage of mod_reqtimeout's `RequestReadTimeout` (the engine's type:
/// the engine resolves the stages from the configuration,
/// [`Handler::read_timeouts`](htaccel_engine::http::Handler::read_timeouts)).
pub use htaccel_engine::http::read_timeout::ReadTimeout as ReqTimeout;

/// The time limits of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// `Timeout`: the longest wait for any single read or write.
    pub timeout: Duration,
    /// `KeepAliveTimeout`: idle time allowed between requests (zero disables keep-alive).
    pub keepalive: Duration,
    /// mod_reqtimeout's header stage, for a handler that names none
    /// (the engine names its configuration's: off without mod_reqtimeout).
    pub header: ReqTimeout,
    /// mod_reqtimeout's body stage, likewise.
    pub body: ReqTimeout,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            timeout: Duration::from_secs(60),
            keepalive: Duration::from_secs(5),
            header: ReqTimeout::HEADER,
            body: ReqTimeout::BODY,
        }
    }
}

/// Everything the server needs to know.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// Addresses to listen on (`Listen`); port 0 picks a free port.
    pub listen: Vec<SocketAddr>,
    /// Worker threads, each with its own runtime and listening sockets; 0: one per available core.
    pub threads: usize,
    pub limits: Limits,
    pub timeouts: Timeouts,
    /// `KeepAlive`.
    pub keepalive: bool,
    /// `MaxKeepAliveRequests` (0: unlimited).
    pub max_keepalive_requests: u32,
    /// `Server` response header value (empty: none).
    pub server_header: String,
    /// On SIGTERM/SIGINT, how long requests in flight may take to finish
    /// before their connections are dropped.
    pub shutdown_timeout: Duration,
    /// The addresses that speak TLS, with their certificates (mod_ssl).
    pub tls: Option<tls::SharedTlsSetup>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            listen: Vec::new(),
            threads: 0,
            limits: Limits::default(),
            timeouts: Timeouts::default(),
            keepalive: true,
            max_keepalive_requests: 100,
            server_header: "htaccel".to_string(),
            shutdown_timeout: Duration::from_secs(10),
            tls: None,
        }
    }
}

/// Bind every listener, call `after_bind` (the binary drops privileges
/// there), serve until SIGTERM or SIGINT, then stop accepting, let requests
/// in flight finish (up to [`ServerOptions::shutdown_timeout`]), close idle
/// connections and return. Reload signals keep the configuration as it is.
pub fn run(
    handler: Arc<dyn Handler>,
    opts: ServerOptions,
    after_bind: Box<dyn FnOnce() -> io::Result<()> + Send>,
) -> io::Result<()> {
    run_controlled(handler, opts, after_bind, &mut KeepConfiguration)
}

/// The binary's side of the signals Apache's parent process answers.
pub trait Control {
    /// SIGUSR1 (`graceful`) or SIGHUP (`restart`): the next configuration
    /// generation, or `None` to keep serving the current one (a
    /// configuration that does not load; the implementation logs why).
    fn reload(&mut self, signal: Signalled) -> Option<(Arc<dyn Handler>, ServerOptions)>;

    /// SIGWINCH (`graceful-stop`): how long requests in flight may run
    /// (`GracefulShutdownTimeout`; `None`: no limit).
    fn graceful_stop_limit(&self) -> Option<Duration> {
        None
    }

    /// The generation [`Control::reload`] returned now serves new
    /// connections.
    fn reloaded(&mut self) {}
}

/// A [`Control`] that never changes the configuration.
struct KeepConfiguration;

impl Control for KeepConfiguration {
    fn reload(&mut self, _: Signalled) -> Option<(Arc<dyn Handler>, ServerOptions)> {
        None
    }
}

/// [`run`], with reloads and stops as `control` says: SIGUSR1 and SIGHUP
/// serve new connections with the configuration [`Control::reload`]
/// returns (see `generation.rs`), SIGWINCH stops gracefully within
/// [`Control::graceful_stop_limit`], SIGTERM and SIGINT stop within
/// [`ServerOptions::shutdown_timeout`], SIGUSR2 is ignored. Each is noted
/// in the error log with Apache's words.
pub fn run_controlled(
    handler: Arc<dyn Handler>,
    opts: ServerOptions,
    after_bind: Box<dyn FnOnce() -> io::Result<()> + Send>,
    control: &mut dyn Control,
) -> io::Result<()> {
    let listeners = Listeners::bind(&opts)?;
    let mut signals = shutdown::Signals::install()?;
    after_bind()?;
    let server = listeners.serve(handler, &opts)?;
    loop {
        let signal = signals.wait();
        let note = |message: &str| {
            server
                .handler()
                .log()
                .error("notice", "mpm_event", None, message)
        };
        match signal {
            Signalled::Stop(name) => {
                note(&format!("AH00491: caught {name}, shutting down"));
                server.shutdown();
                break;
            }
            Signalled::GracefulStop => {
                note("AH00492: caught SIGWINCH, shutting down gracefully");
                server.shutdown_draining(control.graceful_stop_limit());
                break;
            }
            Signalled::Graceful | Signalled::Restart => {
                note(if signal == Signalled::Graceful {
                    "AH00493: SIGUSR1 received.  Doing graceful restart"
                } else {
                    "AH00494: SIGHUP received.  Attempting to restart"
                });
                if let Some((handler, next)) = control.reload(signal) {
                    server.reload(handler, &next);
                    control.reloaded();
                }
            }
        }
    }
    server.wait()
}
