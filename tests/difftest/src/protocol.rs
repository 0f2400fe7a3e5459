//! Which HTTP version the client speaks to both servers: HTTP/1.1 as each
//! case is written (the default), or HTTP/2 (`--http2`, or
//! `DIFFTEST_PROTOCOL=h2`).
//!
//! Over HTTP/2 every case's configuration gains the same lines for both
//! servers: mod_http2 loaded and `Protocols h2 h2c http/1.1`, so that the
//! plain port takes cleartext HTTP/2 with prior knowledge and the TLS port
//! offers `h2` by ALPN. htaccel then always runs with `-f` on that text
//! (a case without `server.conf` gets these lines as its `server.conf`).
//! Each request block is translated by `h2request.rs` and sent by
//! `h2client.rs`; a block HTTP/2 cannot express is counted, never sent.

use crate::cases::Case;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Http1,
    Http2,
}

/// What `--http2` adds to every case's configuration, for both servers.
pub const HTTP2_CONF: &str = "
# difftest --http2: HTTP/2 on every port (h2 by ALPN, h2c with prior knowledge)
LoadModule http2_module /usr/lib/apache2/modules/mod_http2.so
Protocols h2 h2c http/1.1
";

impl Protocol {
    /// `DIFFTEST_PROTOCOL`: `h2` (or `http2`) selects HTTP/2, `http/1.1`
    /// (or empty, or unset) HTTP/1.1.
    pub fn from_env() -> Result<Protocol, String> {
        match std::env::var("DIFFTEST_PROTOCOL").as_deref() {
            Err(_) | Ok("" | "http/1.1" | "h1" | "http1") => Ok(Protocol::Http1),
            Ok("h2" | "http2") => Ok(Protocol::Http2),
            Ok(other) => Err(format!(
                "DIFFTEST_PROTOCOL={other:?}: expected h2 or http/1.1"
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Protocol::Http1 => "HTTP/1.1",
            Protocol::Http2 => "HTTP/2",
        }
    }

    /// Prepares `case` for this protocol: its configuration for both
    /// servers.
    pub fn configure(self, case: &mut Case) {
        if self == Protocol::Http2 {
            let conf = case.server_conf.take().unwrap_or_default();
            case.server_conf = Some(format!("{conf}{HTTP2_CONF}"));
        }
    }

    /// Why `case` is not run over this protocol (its `HTTP1-ONLY` file).
    pub fn excludes(self, case: &Case) -> Option<&str> {
        match self {
            Protocol::Http1 => None,
            Protocol::Http2 => case.http1_only.as_deref(),
        }
    }
}
