//! Which HTTP version the client speaks to both servers: HTTP/1.1 as each
//! case is written (the default), HTTP/2 (`--http2`, or
//! `DIFFTEST_PROTOCOL=h2`), or HTTP/1.1 asking to switch to HTTP/2 by
//! `Upgrade: h2c` (`--h2c-upgrade`, or `DIFFTEST_PROTOCOL=h2c-upgrade`):
//! each request sent by `curl --http2` in clear text (`h2c_upgrade.rs`).
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
    /// `curl --http2` on the plain port: HTTP/1.1 with `Upgrade: h2c`.
    H2cUpgrade,
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
            Ok("h2c-upgrade") => Ok(Protocol::H2cUpgrade),
            Ok(other) => Err(format!(
                "DIFFTEST_PROTOCOL={other:?}: expected h2 or http/1.1"
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Protocol::Http1 => "HTTP/1.1",
            Protocol::Http2 => "HTTP/2",
            Protocol::H2cUpgrade => "Upgrade: h2c",
        }
    }

    /// Prepares `case` for this protocol: its configuration for both
    /// servers. With `Upgrade: h2c`, a case that chooses its own
    /// `Protocols` (to test the upgrade refused) keeps its configuration.
    pub fn configure(self, case: &mut Case) {
        let own = |case: &Case| {
            case.server_conf.as_deref().is_some_and(|c| {
                c.lines().any(|l| {
                    l.trim_start()
                        .to_ascii_lowercase()
                        .starts_with("protocols ")
                })
            })
        };
        if self == Protocol::Http2 || self == Protocol::H2cUpgrade && !own(case) {
            let conf = case.server_conf.take().unwrap_or_default();
            case.server_conf = Some(format!("{conf}{HTTP2_CONF}"));
        }
    }

    /// Why `case` is not run over this protocol (its `HTTP1-ONLY` file).
    pub fn excludes(self, case: &Case) -> Option<&str> {
        match self {
            Protocol::Http1 => None,
            Protocol::Http2 | Protocol::H2cUpgrade => case.http1_only.as_deref(),
        }
    }
}
