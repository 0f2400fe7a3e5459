//! The core's settings a server (the main one or a `<VirtualHost>`) gives
//! the connection layer: the limits a request head is read under, and the
//! connection's timeouts and keep-alive.
//!
//! Apache reads a request's head under the server the connection's
//! address selects before any `Host` is known (its base server, the
//! address's first virtual host): `LimitRequestLine`,
//! `LimitRequestFieldSize`, `LimitRequestFields`, `HttpProtocolOptions`
//! and `Timeout` are that server's. Once the request's own server is
//! chosen, the rest of the exchange is that server's (`apply_server_config`,
//! `ap_set_keepalive`): `Timeout` for the body and the answer, the chunked
//! body's rules, `KeepAlive` and `MaxKeepAliveRequests`, and the wait for
//! the next request, `KeepAliveTimeout`, where that server states one
//! (else the base server's, as mpm_event keeps it).

use std::time::Duration;

/// Apache's request limits (`LimitRequestLine`, `LimitRequestFieldSize`,
/// `LimitRequestFields`) and `HttpProtocolOptions`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `LimitRequestLine`: longest request line (Apache accepts one byte more).
    pub request_line: usize,
    /// `LimitRequestFieldSize`: longest header field line and merged value; also the chunk-size line limit.
    pub field_size: usize,
    /// `LimitRequestFields`: most header fields (0: unlimited, still capped at 10,000).
    pub fields: usize,
    /// `HttpProtocolOptions RegisteredMethods`: a method nobody registered is a 501.
    pub registered_methods: bool,
    /// `HttpProtocolOptions Require1.0`: an HTTP/0.9 request is a 400.
    pub require_http10: bool,
    /// `HttpProtocolOptions Strict` (the default); false under `Unsafe`:
    /// lines may end in a bare LF, the request line may hold runs of
    /// spaces, any visible method and a lower-case protocol, the target a
    /// fragment or user name, field names anything up to the colon, host
    /// names anything without `/`, `\` or `..`, response field names any
    /// visible bytes.
    pub strict: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            request_line: 8190,
            field_size: 8190,
            fields: 100,
            registered_methods: false,
            require_http10: false,
            strict: true,
        }
    }
}

/// One server's settings for the connection layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerSettings {
    pub limits: Limits,
    /// `Timeout`: the longest wait for any single read or write.
    pub timeout: Duration,
    /// `KeepAlive`.
    pub keepalive: bool,
    /// `KeepAliveTimeout`: the wait for the next request (zero: no keep-alive).
    pub keepalive_timeout: Duration,
    /// Whether this server states `KeepAliveTimeout` itself (a virtual
    /// host that does not waits as its address's base server does).
    pub keepalive_timeout_stated: bool,
    /// `MaxKeepAliveRequests` (0: unlimited).
    pub max_keepalive_requests: u32,
}

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings {
            limits: Limits::default(),
            timeout: Duration::from_secs(60),
            keepalive: true,
            keepalive_timeout: Duration::from_secs(5),
            keepalive_timeout_stated: false,
            max_keepalive_requests: 100,
        }
    }
}

impl ServerSettings {
    /// The wait for the next request after an answer under `self` on a
    /// connection whose base server is `base`: this server's
    /// `KeepAliveTimeout` where it states one, else the base server's.
    pub fn keepalive_wait(&self, base: &ServerSettings) -> Duration {
        if self.keepalive_timeout_stated {
            self.keepalive_timeout
        } else {
            base.keepalive_timeout
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_is_the_servers_own_only_where_it_states_one() {
        let base = ServerSettings {
            keepalive_timeout: Duration::from_secs(7),
            keepalive_timeout_stated: true,
            ..Default::default()
        };
        let inherits = ServerSettings {
            keepalive_timeout: Duration::from_secs(5),
            ..Default::default()
        };
        let states = ServerSettings {
            keepalive_timeout: Duration::from_secs(2),
            keepalive_timeout_stated: true,
            ..Default::default()
        };
        assert_eq!(inherits.keepalive_wait(&base), Duration::from_secs(7));
        assert_eq!(states.keepalive_wait(&base), Duration::from_secs(2));
        assert_eq!(base.keepalive_wait(&base), Duration::from_secs(7));
    }
}
