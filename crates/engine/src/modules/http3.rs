//! `htaccel_http3`: HTTP/3 over QUIC, htaccel's own module (Apache httpd
//! has no HTTP/3). Its directives are htaccel's own names, so that a
//! configuration stays loadable by Apache when they are written inside
//! `<IfModule htaccel_http3_module>`: Apache does not know the module and
//! skips the section, htaccel always has it (it is built in, as the core
//! is) and reads it.
//!
//! `Protocols` is not used to turn HTTP/3 on: Apache accepts any word
//! there, so `Protocols h3` would be a configuration Apache loads and
//! quietly does not honour. HTTP/3 is turned on per TLS server instead:
//!
//! ```apache
//! <VirtualHost *:443>
//!     SSLEngine on
//!     ...
//!     <IfModule htaccel_http3_module>
//!         H3Engine on
//!     </IfModule>
//! </VirtualHost>
//! ```
//!
//! - `H3Engine on|off` (default off): answer HTTP/3 on UDP for this
//!   server. The server must have TLS on (its certificates serve the QUIC
//!   handshake, chosen by SNI among the address's servers with HTTP/3 on),
//!   with TLS 1.3 and `TLS_AES_128_GCM_SHA256` allowed (QUIC's own needs)
//!   and no `SSLVerifyClient`; otherwise the server refuses to start,
//!   saying why.
//! - `H3MaxStreams N` (default 100): request streams a client may open
//!   at once on one connection.
//! - `H3Port N` (default: the TLS address's port): the UDP port.
//! - `H3AltSvc on|off` (default on) and `H3AltSvcMaxAge SECONDS` (default
//!   86400): whether HTTPS answers (HTTP/1.1 and HTTP/2) of this server
//!   carry `Alt-Svc: h3=":PORT"; ma=SECONDS`, which browsers need to try
//!   HTTP/3; an answer that has its own `Alt-Svc` keeps it.
//!
//! A connection's idle limits are the core's: `Timeout` is QUIC's idle
//! timeout (no packet at all for that long ends the connection), and a
//! connection without open requests is closed with GOAWAY after
//! `KeepAliveTimeout`, as an HTTP/2 session is.

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::http::http3::H3Settings;
use crate::registry::{Args, Directive, Module, Run, RSRC_CONF};

/// Streams a client may open at once when `H3MaxStreams` is not set.
pub const DEFAULT_MAX_STREAMS: u32 = 100;
/// `ma` of `Alt-Svc` when `H3AltSvcMaxAge` is not set: one day.
pub const DEFAULT_ALT_SVC_MAX_AGE: u32 = 86_400;

/// The module's server settings (`None`: not set here).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Http3Server {
    pub engine: Option<bool>,
    pub max_streams: Option<u32>,
    pub port: Option<u16>,
    pub alt_svc: Option<bool>,
    pub alt_svc_max_age: Option<u32>,
}

impl Http3Server {
    /// A `<VirtualHost>` over the main server: what it does not set is the
    /// main server's.
    pub fn merge(main: &Http3Server, vhost: &Http3Server) -> Http3Server {
        Http3Server {
            engine: vhost.engine.or(main.engine),
            max_streams: vhost.max_streams.or(main.max_streams),
            port: vhost.port.or(main.port),
            alt_svc: vhost.alt_svc.or(main.alt_svc),
            alt_svc_max_age: vhost.alt_svc_max_age.or(main.alt_svc_max_age),
        }
    }

    /// The settings of a server with `H3Engine on` (`None`: HTTP/3 off).
    pub fn settings(&self) -> Option<H3Settings> {
        (self.engine == Some(true)).then(|| H3Settings {
            max_streams: self.max_streams.unwrap_or(DEFAULT_MAX_STREAMS),
            port: self.port,
            alt_svc_max_age: (self.alt_svc != Some(false))
                .then(|| self.alt_svc_max_age.unwrap_or(DEFAULT_ALT_SVC_MAX_AGE)),
            early_hints: false,
        })
    }
}

fn on_off(name: &str, value: &str) -> Result<bool, String> {
    if value.eq_ignore_ascii_case("on") {
        Ok(true)
    } else if value.eq_ignore_ascii_case("off") {
        Ok(false)
    } else {
        Err(format!("{name} must be On or Off"))
    }
}

fn number(name: &str, value: &str, min: u64, max: u64) -> Result<u64, String> {
    value
        .parse::<u64>()
        .ok()
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| format!("{name} takes a number from {min} to {max}, not '{value}'"))
}

fn run(w: &mut Walker<'_>, inv: &Invocation<'_>, _: &mut DirConf) -> Result<(), String> {
    let v = inv.words.first().map(String::as_str).unwrap_or_default();
    let name = inv.name;
    let h3 = &mut w.server()?.modules.http3;
    match name.to_ascii_lowercase().as_str() {
        "h3engine" => h3.engine = Some(on_off(name, v)?),
        "h3maxstreams" => h3.max_streams = Some(number(name, v, 1, 1 << 20)? as u32),
        "h3port" => h3.port = Some(number(name, v, 1, 65_535)? as u16),
        "h3altsvc" => h3.alt_svc = Some(on_off(name, v)?),
        "h3altsvcmaxage" => h3.alt_svc_max_age = Some(number(name, v, 0, u32::MAX as u64)? as u32),
        _ => return Err(format!("{name} is not a directive of htaccel_http3")),
    }
    Ok(())
}

pub static DIRECTIVES: &[Directive] = &[
    Directive {
        name: "H3Engine",
        args: Args::Take1,
        req_override: RSRC_CONF,
        about: "On to answer HTTP/3 (QUIC) on UDP for this TLS server (htaccel's own)",
        run: Run::Handler(run),
    },
    Directive {
        name: "H3MaxStreams",
        args: Args::Take1,
        req_override: RSRC_CONF,
        about: "request streams a client may open at once on one HTTP/3 connection",
        run: Run::Handler(run),
    },
    Directive {
        name: "H3Port",
        args: Args::Take1,
        req_override: RSRC_CONF,
        about: "the UDP port of HTTP/3 (default: the TLS port)",
        run: Run::Handler(run),
    },
    Directive {
        name: "H3AltSvc",
        args: Args::Take1,
        req_override: RSRC_CONF,
        about: "On (default) to advertise HTTP/3 in Alt-Svc on HTTPS answers",
        run: Run::Handler(run),
    },
    Directive {
        name: "H3AltSvcMaxAge",
        args: Args::Take1,
        req_override: RSRC_CONF,
        about: "seconds a client may remember the Alt-Svc advertisement",
        run: Run::Handler(run),
    },
];

/// Built in: `<IfModule htaccel_http3_module>` holds in htaccel whatever
/// `LoadModule` says, and never in Apache.
pub static MODULE: Module = Module {
    source: "htaccel_http3.c",
    identifier: "htaccel_http3_module",
    builtin: true,
    directives: DIRECTIVES,
};

/// The TLS cipher suite QUIC's handshake cannot do without (RFC 9001,
/// section 5: Initial packets are protected with it).
const QUIC_INITIAL_SUITE: &str = "TLS_AES_128_GCM_SHA256";

/// Refuse, with the reason, a server with `H3Engine on` that cannot speak
/// HTTP/3: one without TLS, or whose TLS settings QUIC cannot use.
pub fn check(engine: &crate::engine::Engine) -> Result<(), String> {
    let ports = engine.tls_ports();
    let sites = std::iter::once((None, &*engine.main)).chain(
        engine
            .vhosts
            .iter()
            .enumerate()
            .map(|(i, v)| (Some(i), &**v)),
    );
    for (index, site) in sites {
        if site.http3.is_none() {
            continue;
        }
        let name = match index {
            Some(_) => format!("virtual host {}", site.server_name),
            None => "the main server".to_string(),
        };
        let spec = ports
            .iter()
            .flat_map(|p| &p.sites)
            .find(|s| s.site == index);
        let Some(spec) = spec else {
            return Err(format!("H3Engine on in {name}: HTTP/3 needs TLS, and this server has none (SSLEngine on and its certificates)"));
        };
        if !spec.tls13 {
            return Err(format!(
                "H3Engine on in {name}: HTTP/3 needs TLS 1.3, which SSLProtocol leaves out"
            ));
        }
        if !spec.suites13.contains(&QUIC_INITIAL_SUITE) {
            return Err(format!("H3Engine on in {name}: QUIC needs the TLS 1.3 suite {QUIC_INITIAL_SUITE}, which SSLCipherSuite TLSv1.3 leaves out"));
        }
        if spec.client_auth.is_some() {
            return Err(format!("H3Engine on in {name}: client certificates (SSLVerifyClient) are not supported over HTTP/3 by htaccel"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_follow_the_directives_and_defaults() {
        let off = Http3Server::default();
        assert_eq!(off.settings(), None);
        let on = Http3Server {
            engine: Some(true),
            ..Default::default()
        };
        assert_eq!(
            on.settings(),
            Some(H3Settings {
                max_streams: DEFAULT_MAX_STREAMS,
                port: None,
                alt_svc_max_age: Some(DEFAULT_ALT_SVC_MAX_AGE),
                early_hints: false,
            })
        );
        let vhost = Http3Server {
            alt_svc: Some(false),
            port: Some(8444),
            ..Default::default()
        };
        let merged = Http3Server::merge(&on, &vhost).settings().unwrap();
        assert_eq!(merged.port, Some(8444));
        assert_eq!(merged.alt_svc(), None);
        assert!(number("H3Port", "0", 1, 65_535).is_err());
        assert!(on_off("H3Engine", "yes").is_err());
    }
}
