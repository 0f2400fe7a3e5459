//! `%{NAME}` resolved once, when the rule is compiled.
//!
//! Apache's `lookup_variable` compares the name against its table on every
//! expansion. The name is fixed text in the configuration, so htaccel
//! decides what it names (a request fact, a header, the environment, a
//! time field, a look-ahead) when the template is parsed, and expansion
//! only fetches the value. [`Var::parse`] follows `lookup_variable`'s
//! order: the `ENV:`/`SSL:` prefixes, then `HTTP:`/`LA-U:`/`LA-F:`, then
//! the names without case; anything else is the empty string.

use super::vars::{local_time, Current, Fact, Host, VaryNote, API_VERSION};
use std::borrow::Cow;

/// A `%{NAME}` reference: the name as written and what it names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Var {
    pub text: String,
    kind: Kind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind {
    /// Names nothing htaccel knows: always empty.
    Empty,
    /// `ENV:name`: request environment, then the process environment.
    Env(String),
    /// `SSL:name`: mod_ssl's variable.
    Ssl(String),
    /// `HTTP:name` and the `HTTP_*` names: a request header (noted for
    /// `Vary`).
    Header(String),
    /// `LA-U:var` / `LA-F:var`: `var` as a sub-request would see it.
    LookAhead {
        file: bool,
        var: String,
    },
    Fact(Fact),
    Time(TimePart),
    PathInfo,
    QueryString,
    Filename,
    ApiVersion,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TimePart {
    Full,
    Day,
    Sec,
    Min,
    Mon,
    Wday,
    Year,
    Hour,
}

impl Var {
    pub fn parse(text: &str) -> Var {
        Var {
            text: text.to_string(),
            kind: kind_of(text),
        }
    }
}

fn kind_of(var: &str) -> Kind {
    let b = var.as_bytes();
    if b.len() < 4 {
        return Kind::Empty;
    }
    if b[3] == b':' {
        let rest = &var[4..];
        if !rest.is_empty() && var[..3].eq_ignore_ascii_case("ENV") {
            return Kind::Env(rest.to_string());
        }
        if !rest.is_empty() && var[..3].eq_ignore_ascii_case("SSL") {
            return Kind::Ssl(rest.to_string());
        }
        return Kind::Empty;
    }
    if b.len() > 4 && b[4] == b':' {
        let rest = &var[5..];
        let prefix = &var[..4];
        if rest.is_empty() {
            return Kind::Empty;
        }
        if prefix.eq_ignore_ascii_case("HTTP") {
            return Kind::Header(rest.to_string());
        }
        let la_u = prefix.eq_ignore_ascii_case("LA-U");
        if la_u || prefix.eq_ignore_ascii_case("LA-F") {
            return Kind::LookAhead {
                file: !la_u,
                var: rest.to_string(),
            };
        }
        return Kind::Empty;
    }
    let header = |name: &str| Kind::Header(name.to_string());
    match var.to_ascii_uppercase().as_str() {
        "TIME" => Kind::Time(TimePart::Full),
        "IPV6" => Kind::Fact(Fact::Ipv6),
        "HTTPS" => Kind::Fact(Fact::Https),
        "TIME_DAY" => Kind::Time(TimePart::Day),
        "TIME_SEC" => Kind::Time(TimePart::Sec),
        "TIME_MIN" => Kind::Time(TimePart::Min),
        "TIME_MON" => Kind::Time(TimePart::Mon),
        "TIME_WDAY" => Kind::Time(TimePart::Wday),
        "TIME_YEAR" => Kind::Time(TimePart::Year),
        "TIME_HOUR" => Kind::Time(TimePart::Hour),
        "IS_SUBREQ" => Kind::Fact(Fact::IsSubreq),
        "PATH_INFO" => Kind::PathInfo,
        "AUTH_TYPE" => Kind::Fact(Fact::AuthType),
        "HTTP_HOST" => header("Host"),
        "SERVER_NAME" => Kind::Fact(Fact::ServerName),
        "REMOTE_ADDR" => Kind::Fact(Fact::RemoteAddr),
        "SERVER_ADDR" => Kind::Fact(Fact::ServerAddr),
        "HTTP_ACCEPT" => header("Accept"),
        "THE_REQUEST" => Kind::Fact(Fact::TheRequest),
        "API_VERSION" => Kind::ApiVersion,
        "HTTP_COOKIE" => header("Cookie"),
        "SERVER_PORT" => Kind::Fact(Fact::ServerPort),
        "REMOTE_HOST" => Kind::Fact(Fact::RemoteHost),
        "REMOTE_PORT" => Kind::Fact(Fact::RemotePort),
        "REMOTE_USER" => Kind::Fact(Fact::RemoteUser),
        "SCRIPT_USER" => Kind::Fact(Fact::ScriptUser),
        "REQUEST_URI" => Kind::Fact(Fact::RequestUri),
        "SCRIPT_GROUP" => Kind::Fact(Fact::ScriptGroup),
        "REMOTE_IDENT" => Kind::Fact(Fact::RemoteIdent),
        "HTTP_REFERER" => header("Referer"),
        "QUERY_STRING" => Kind::QueryString,
        "SERVER_ADMIN" => Kind::Fact(Fact::ServerAdmin),
        "DOCUMENT_ROOT" => Kind::Fact(Fact::DocumentRoot),
        "HTTP_FORWARDED" => header("Forwarded"),
        "CONTEXT_PREFIX" => Kind::Fact(Fact::ContextPrefix),
        "REQUEST_METHOD" => Kind::Fact(Fact::RequestMethod),
        "REQUEST_SCHEME" => Kind::Fact(Fact::RequestScheme),
        "HTTP_USER_AGENT" => header("User-Agent"),
        "SCRIPT_FILENAME" | "REQUEST_FILENAME" => Kind::Filename,
        "SERVER_PROTOCOL" => Kind::Fact(Fact::ServerProtocol),
        "SERVER_SOFTWARE" => Kind::Fact(Fact::ServerSoftware),
        "CONN_REMOTE_ADDR" => Kind::Fact(Fact::ConnRemoteAddr),
        "HTTP_PROXY_CONNECTION" => header("Proxy-Connection"),
        "CONTEXT_DOCUMENT_ROOT" => Kind::Fact(Fact::ContextDocumentRoot),
        _ => Kind::Empty,
    }
}

/// The value of `var` when it is one the rule loop holds or a constant:
/// no request lookup, nothing to note for `Vary`.
pub fn lent<'a>(var: &Var, cur: &Current<'a>) -> Option<&'a str> {
    match var.kind {
        Kind::Empty => Some(""),
        Kind::PathInfo => Some(cur.path_info),
        Kind::QueryString => Some(cur.args.unwrap_or("")),
        Kind::Filename => Some(cur.filename),
        Kind::ApiVersion => Some(API_VERSION),
        _ => None,
    }
}

/// The value of `var` for the request (Apache's `lookup_variable`).
/// What the rule loop itself holds (file name, path info, query string)
/// is lent, not copied.
pub fn lookup<'a>(
    var: &Var,
    cur: &Current<'a>,
    host: &mut dyn Host,
    vary: &mut VaryNote,
) -> Cow<'a, str> {
    let owned = |s: String| Cow::Owned(s);
    let fact = |host: &mut dyn Host, f: Fact| owned(host.fact(f).unwrap_or_default());
    match &var.kind {
        Kind::Env(name) => owned(
            host.env(name)
                .or_else(|| std::env::var(name).ok())
                .unwrap_or_default(),
        ),
        Kind::Ssl(name) => owned(host.ssl(name).unwrap_or_default()),
        Kind::Header(name) => match host.header(name) {
            Some(v) => {
                vary.note(name);
                owned(v)
            }
            None => Cow::Borrowed(""),
        },
        Kind::LookAhead { file, var } => {
            let Some(subject) = cur.subject.filter(|_| host.subreq_ok()) else {
                return Cow::Borrowed("");
            };
            let (path, file) = match cur.perdir {
                Some(_) if subject.starts_with('/') => (subject.to_string(), false),
                Some((dir, base)) if !file => (format!("{}{subject}", base.unwrap_or(dir)), false),
                Some((dir, _)) => (format!("{dir}{subject}"), true),
                None => (subject.to_string(), *file),
            };
            owned(host.lookahead(&path, file, var))
        }
        Kind::Fact(f) => fact(host, *f),
        Kind::Time(part) => {
            let t = local_time(host.now());
            owned(match part {
                TimePart::Full => format!(
                    "{:04}{:02}{:02}{:02}{:02}{:02}",
                    t.year, t.mon, t.mday, t.hour, t.min, t.sec
                ),
                TimePart::Day => format!("{:02}", t.mday),
                TimePart::Sec => format!("{:02}", t.sec),
                TimePart::Min => format!("{:02}", t.min),
                TimePart::Mon => format!("{:02}", t.mon),
                TimePart::Wday => format!("{}", t.wday),
                TimePart::Year => format!("{:04}", t.year),
                TimePart::Hour => format!("{:02}", t.hour),
            })
        }
        Kind::Empty | Kind::PathInfo | Kind::QueryString | Kind::Filename | Kind::ApiVersion => {
            Cow::Borrowed(lent(var, cur).unwrap_or_default())
        }
    }
}
