//! mod_reqtimeout's stages as the server applies them: how long reading a
//! request head or body may take. The engine resolves them from the
//! configuration (`modules::reqtimeout`); the server measures them.

use std::time::Duration;

/// One stage of `RequestReadTimeout`: `timeout` to read the stage,
/// extended by one second per `min_rate` bytes received, up to
/// `max_timeout` (zero: no cap). A zero `timeout` disables the stage: each
/// read then waits up to `Timeout`, as without mod_reqtimeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadTimeout {
    pub timeout: Duration,
    pub max_timeout: Duration,
    pub min_rate: u32,
}

impl ReadTimeout {
    /// mod_reqtimeout's default for the request head: `header=20-40,MinRate=500`.
    pub const HEADER: ReadTimeout = ReadTimeout {
        timeout: Duration::from_secs(20),
        max_timeout: Duration::from_secs(40),
        min_rate: 500,
    };
    /// mod_reqtimeout's default for the body: `body=20,MinRate=500`.
    pub const BODY: ReadTimeout = ReadTimeout {
        timeout: Duration::from_secs(20),
        max_timeout: Duration::ZERO,
        min_rate: 500,
    };
    /// The stage disabled (`header=0`), or mod_reqtimeout not loaded.
    pub const OFF: ReadTimeout = ReadTimeout {
        timeout: Duration::ZERO,
        max_timeout: Duration::ZERO,
        min_rate: 0,
    };

    pub fn is_off(&self) -> bool {
        self.timeout.is_zero()
    }
}

/// The stages of one connection, from the server its address selects
/// (Apache's `c->base_server`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnReadTimeouts {
    /// The TLS handshake (`handshake=`; off unless configured).
    pub handshake: ReadTimeout,
    pub header: ReadTimeout,
    pub body: ReadTimeout,
    /// mod_reqtimeout watches this connection (loaded, and not every stage
    /// of the base server set to 0): a request's body stage then comes
    /// from the request's own server (`Handler::body_read_timeout`).
    pub enabled: bool,
}
