//! Whether an access log writes a request's line: a `CustomLog`'s
//! `env=[!]NAME` or `expr=EXPRESSION` clause, decided when the request
//! is logged, as mod_log_config decides it (`config_log_transaction`).
//!
//! An expression sees what the access log sees of the request: its line,
//! method, target, headers, protocol, the client's address, the final
//! status, the response's headers and the environment as it stood when
//! the answer was made (every variable is kept for the logs once any
//! `expr=` clause exists, since an expression may name any of them).

use crate::expr::{ExprContext, Var};
use crate::http::AccessEntry;
use std::borrow::Cow;
use std::net::IpAddr;
use std::sync::Arc;

/// A `CustomLog`'s condition clause.
#[derive(Clone, Debug)]
pub enum LogCondition {
    /// `env=NAME`, or `env=!NAME` (`negate`).
    Env { name: String, negate: bool },
    /// `expr=EXPRESSION`.
    Expr(Arc<crate::expr::Expr>),
}

impl LogCondition {
    /// Parse a clause (`env=` and `expr=` in any case), with Apache's messages.
    pub fn parse(clause: &str) -> Result<LogCondition, String> {
        let lower = clause.get(..5).map(str::to_ascii_lowercase);
        if lower.as_deref().is_some_and(|l| l.starts_with("env=")) {
            let name = &clause[4..];
            let (negate, name) = match name.strip_prefix('!') {
                Some(n) => (true, n),
                None => (false, name),
            };
            if name.is_empty() {
                return Err("missing environment variable name".into());
            }
            return Ok(LogCondition::Env {
                name: name.to_string(),
                negate,
            });
        }
        if lower.as_deref() == Some("expr=") {
            let text = &clause[5..];
            if text.is_empty() {
                return Err("missing condition".into());
            }
            return Ok(LogCondition::Expr(Arc::new(crate::expr::Expr::parse(
                text,
            )?)));
        }
        Err("error in condition clause".into())
    }

    /// Whether `entry` is logged; an expression that fails to evaluate
    /// is `Err` with Apache's reason (and the line is not written).
    pub fn holds(&self, entry: &AccessEntry<'_>) -> Result<bool, String> {
        match self {
            LogCondition::Env { name, negate } => {
                let set = entry.env.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
                Ok(set != *negate)
            }
            LogCondition::Expr(expr) => expr.eval(&LoggedRequest(entry)).value,
        }
    }

    /// The environment variable an `env=` clause names.
    pub fn env_name(&self) -> Option<&str> {
        match self {
            LogCondition::Env { name, .. } => Some(name),
            LogCondition::Expr(_) => None,
        }
    }
}

/// A logged request, as an expression reads it.
struct LoggedRequest<'a, 'b>(&'a AccessEntry<'b>);

fn text(s: &str) -> Option<Cow<'_, [u8]>> {
    Some(Cow::Borrowed(s.as_bytes()))
}

impl ExprContext for LoggedRequest<'_, '_> {
    fn var(&self, var: Var) -> Option<Cow<'_, [u8]>> {
        let e = self.0;
        let req = e.request;
        match var {
            Var::RequestStatus => Some(Cow::Owned(e.status.to_string().into_bytes())),
            Var::RemoteAddr => Some(Cow::Owned(e.remote.ip().to_string().into_bytes())),
            Var::RemotePort => Some(Cow::Owned(e.remote.port().to_string().into_bytes())),
            Var::ServerPort => Some(Cow::Owned(e.local.port().to_string().into_bytes())),
            Var::RemoteUser => e.remote_user.and_then(text),
            Var::RequestMethod => req.and_then(|r| text(&r.method)),
            Var::TheRequest => req.and_then(|r| text(&r.request_line)),
            Var::ServerProtocol => req.and_then(|r| text(r.version.as_str())),
            Var::RequestUri => req.map(|r| {
                let path = r.target.split('?').next().unwrap_or_default();
                match crate::uri::unescape(path.as_bytes()) {
                    Ok(p) => Cow::Owned(p.into_owned()),
                    Err(_) => Cow::Owned(path.as_bytes().to_vec()),
                }
            }),
            Var::QueryString => req
                .and_then(|r| r.target.split_once('?').map(|(_, q)| q))
                .and_then(text),
            Var::RequestScheme => req.and_then(|r| text(if r.secure { "https" } else { "http" })),
            Var::Https => text(if req.is_some_and(|r| r.secure) {
                "on"
            } else {
                "off"
            }),
            Var::Http2 => text(if req.is_some_and(|r| r.h2_stream.is_some()) {
                "on"
            } else {
                "off"
            }),
            Var::Ipv6 => text(match e.remote.ip() {
                IpAddr::V6(v6) if v6.to_ipv4_mapped().is_none() => "on",
                _ => "off",
            }),
            _ => None,
        }
    }

    fn request_header(&self, name: &str) -> Option<Cow<'_, [u8]>> {
        self.0
            .request?
            .headers
            .get_joined(name)
            .map(|b| Cow::Owned(b.to_vec()))
    }

    fn response_header(&self, name: &str) -> Option<Cow<'_, [u8]>> {
        self.0
            .response_headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| Cow::Borrowed(v.as_bytes()))
    }

    fn env(&self, name: &str) -> Option<Cow<'_, [u8]>> {
        self.0
            .env
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| Cow::Borrowed(v.as_bytes()))
    }

    fn note(&self, _name: &str) -> Option<Cow<'_, [u8]>> {
        None
    }

    fn remote_ip(&self) -> Option<IpAddr> {
        Some(self.0.remote.ip())
    }

    fn url_accessible(&self, _url: &str) -> bool {
        false
    }

    fn file_accessible(&self, _path: &str) -> bool {
        false
    }
}
