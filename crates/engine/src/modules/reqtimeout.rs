//! mod_reqtimeout: how long a client may take to send a request head and
//! body (`RequestReadTimeout`), the slow-client protection Debian enables
//! by default.
//!
//! Only a configuration that loads the module gets it, with Apache's
//! defaults (`header=20-40,MinRate=500 body=20,MinRate=500`, `handshake`
//! off); without it every read waits up to `Timeout` and nothing bounds the
//! whole head. The directive is per server (`RSRC_CONF`): a virtual host's
//! stages override the main server's stage by stage. As in Apache, the
//! header stage is the connection's base server's (the server the
//! listening address selects, before `Host` is read), the body stage the
//! request's own server's, and a base server with every stage at 0 turns
//! the module off for its connections.
//!
//! `handshake=` bounds the TLS handshake (`server/src/tls/accept.rs`); when
//! it is off, the header stage does, as in Apache, where the handshake
//! happens within the first request's read.

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::http::read_timeout::{ConnReadTimeouts, ReadTimeout};
use crate::registry::{Args, Directive, Module, Run, RSRC_CONF};
use std::time::Duration;

/// The module's server configuration: each stage as configured (`None`:
/// not set here).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReqTimeoutServer {
    pub handshake: Option<ReadTimeout>,
    pub header: Option<ReadTimeout>,
    pub body: Option<ReadTimeout>,
}

impl ReqTimeoutServer {
    /// A `<VirtualHost>` over the main server, stage by stage.
    pub fn merge(main: &ReqTimeoutServer, vhost: &ReqTimeoutServer) -> ReqTimeoutServer {
        ReqTimeoutServer {
            handshake: vhost.handshake.or(main.handshake),
            header: vhost.header.or(main.header),
            body: vhost.body.or(main.body),
        }
    }

    /// The stages in force, defaults filled in (`reqtimeout_init`'s test
    /// for a disabled server included: an unset `handshake` is off).
    pub fn resolve(&self) -> ConnReadTimeouts {
        let header = self.header.unwrap_or(ReadTimeout::HEADER);
        let body = self.body.unwrap_or(ReadTimeout::BODY);
        let handshake = self.handshake.unwrap_or(ReadTimeout::OFF);
        ConnReadTimeouts {
            handshake,
            header,
            body,
            enabled: !(handshake.is_off() && header.is_off() && body.is_off()),
        }
    }
}

/// `strtol` on a whole value, with Apache's messages for what is left over.
fn parse_int(arg: &str) -> Result<u64, String> {
    let trimmed = arg.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (negative, unsigned) = match trimmed.as_bytes().first() {
        Some(b'-') => (true, &trimmed[1..]),
        Some(b'+') => (false, &trimmed[1..]),
        _ => (false, trimmed),
    };
    let digits = unsigned.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err(format!("Value '{arg}' not numerical"));
    }
    let rest = &unsigned[digits..];
    if !rest.is_empty() {
        return Err(format!("Cannot parse '{rest}'"));
    }
    let value: u64 = unsigned[..digits].parse().unwrap_or(u64::MAX);
    if negative && value != 0 {
        return Err("Value must be non-negative".into());
    }
    Ok(value)
}

/// One `stage=value` setting: `timeout`, or `timeout[-max],MinRate=rate`.
fn parse_stage(val: &str) -> Result<ReadTimeout, String> {
    let lower = val.to_ascii_lowercase();
    let (timeout, max, rate) = match lower.find(",minrate=") {
        Some(at) => {
            let rate = parse_int(&val[at + ",minrate=".len()..])?;
            if rate == 0 {
                return Err("Minimum data rate must be larger than 0".into());
            }
            let initial = &val[..at];
            let (initial, max) = match initial.split_once('-') {
                Some((i, m)) => (i, parse_int(m)?),
                None => (initial, 0),
            };
            (parse_int(initial)?, max, rate)
        }
        None if val.contains('-') => {
            return Err("Must set MinRate option if using timeout range".into())
        }
        None => (parse_int(val)?, 0, 0),
    };
    if max != 0 && timeout >= max {
        return Err("Maximum timeout must be larger than initial timeout".into());
    }
    Ok(ReadTimeout {
        timeout: Duration::from_secs(timeout),
        max_timeout: Duration::from_secs(max),
        min_rate: u32::try_from(rate).unwrap_or(u32::MAX),
    })
}

/// `RequestReadTimeout key=value …`: each word sets one stage.
fn set_request_read_timeout(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _: &mut DirConf,
) -> Result<(), String> {
    let server = w.server()?;
    for word in &htaccel_conf::split_args(&inv.raw) {
        let Some((key, val)) = word.split_once('=') else {
            return Err(
                "Invalid RequestReadTimeout parameter. Parameter must be in the form 'key=value'"
                    .into(),
            );
        };
        let slot = match key.to_ascii_lowercase().as_str() {
            "handshake" => &mut server.modules.reqtimeout.handshake,
            "header" => &mut server.modules.reqtimeout.header,
            "body" => &mut server.modules.reqtimeout.body,
            _ => {
                return Err(format!(
                    "RequestReadTimeout: {key}={val}: Unknown RequestReadTimeout parameter"
                ))
            }
        };
        *slot =
            Some(parse_stage(val).map_err(|e| format!("RequestReadTimeout: {key}={val}: {e}"))?);
    }
    Ok(())
}

pub static DIRECTIVES: &[Directive] = &[Directive {
    name: "RequestReadTimeout",
    args: Args::Raw,
    req_override: RSRC_CONF,
    about:
        "Set various timeout parameters for TLS handshake and/or reading request headers and body",
    run: Run::Handler(set_request_read_timeout),
}];

pub static MODULE: Module = Module {
    source: "mod_reqtimeout.c",
    identifier: "reqtimeout_module",
    builtin: false,
    directives: DIRECTIVES,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_parse_as_apache_parses_them() {
        assert_eq!(parse_stage("20-40,MinRate=500"), Ok(ReadTimeout::HEADER));
        assert_eq!(parse_stage("20,minrate=500"), Ok(ReadTimeout::BODY));
        assert_eq!(parse_stage("0"), Ok(ReadTimeout::OFF));
        assert_eq!(
            parse_stage("5"),
            Ok(ReadTimeout {
                timeout: Duration::from_secs(5),
                max_timeout: Duration::ZERO,
                min_rate: 0
            })
        );
        assert_eq!(
            parse_stage("20-40").unwrap_err(),
            "Must set MinRate option if using timeout range"
        );
        assert_eq!(
            parse_stage("40-20,MinRate=1").unwrap_err(),
            "Maximum timeout must be larger than initial timeout"
        );
        assert_eq!(
            parse_stage("10,MinRate=0").unwrap_err(),
            "Minimum data rate must be larger than 0"
        );
        assert_eq!(parse_stage("x").unwrap_err(), "Value 'x' not numerical");
        assert_eq!(parse_stage("10s").unwrap_err(), "Cannot parse 's'");
        assert_eq!(
            parse_stage("5,MinRate=-3").unwrap_err(),
            "Value must be non-negative"
        );
        assert_eq!(
            parse_stage("-1").unwrap_err(),
            "Must set MinRate option if using timeout range"
        );
    }

    #[test]
    fn a_server_with_every_stage_at_zero_is_off() {
        let off = ReqTimeoutServer {
            header: Some(ReadTimeout::OFF),
            body: Some(ReadTimeout::OFF),
            handshake: None,
        };
        assert!(!off.resolve().enabled);
        let defaults = ReqTimeoutServer::default().resolve();
        assert!(defaults.enabled);
        assert_eq!(defaults.header, ReadTimeout::HEADER);
        assert_eq!(defaults.body, ReadTimeout::BODY);
    }
}
