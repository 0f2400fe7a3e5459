//! Apache's log lines: mod_log_config's `LogFormat` language and the
//! default shape of an error-log line.
//!
//! A `LogFormat` string is compiled once, when the configuration is read,
//! into a list of literal runs and fields, so that writing an access-log
//! line costs one pass over that list and no parsing. The language is
//! mod_log_config's (with mod_logio's `%I %O %S %^FB`): `%h %l %u %t "%r"
//! %>s %b`, `%{Referer}i`, `%{%d/%b/%Y}t`, status conditions such as
//! `%!200,304{Referer}i`, the same escaping of request data (`\"`, `\\`,
//! `\xhh`) and `-` where Apache has no value.
//!
//! [`error_log_line`] writes Apache's default error-log line (no
//! `ErrorLogFormat`): `[Sat Nov 21 05:25:47.245137 2026] [core:alert]
//! [pid 10781:tid 10781] [client 127.0.0.1:56126] message`, escaped and cut
//! at Apache's 8 KiB line limit the way Apache does.
//!
//! Times are local time, as Apache's are (`TZ` decides); the conversion
//! and `strftime` are the C library's, so `%{…}t` formats behave exactly
//! as Apache's do in the C locale.

use crate::http::{AccessEntry, Request};
use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt::Write as _;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Apache's built-in default format (nickname `CLF`), used when a
/// `CustomLog` names no format.
pub const CLF: &str = "%h %l %u %t \"%r\" %>s %b";

/// The `combined` format of Apache's sample configuration.
pub const COMBINED: &str = "%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-Agent}i\"";

/// Whether the connection stays open after this exchange (`%X`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ConnectionStatus {
    /// Closed after the response (`-`).
    #[default]
    Close,
    /// Kept alive for another request (`+`).
    KeepAlive,
    /// Aborted before the response was complete (`X`).
    Aborted,
}

/// What the access log may print beyond [`AccessEntry`]'s basic fields:
/// facts the engine and the connection learn while serving a request.
/// Every field may stay at its default; the field then prints as Apache
/// prints a missing value (`-`) or, where noted, is derived from the
/// request.
#[derive(Clone, Debug, Default)]
pub struct AccessDetails<'a> {
    /// `r->uri` (`%U`): the decoded path as normalised (and as changed by
    /// `DirectoryIndex`: `/` logs `/index.html`). Default: the normalised
    /// path of the request-target.
    pub uri: Option<&'a [u8]>,
    /// `r->args` (`%q`). Default: the query of the request-target.
    pub args: Option<&'a str>,
    /// `r->filename` (`%f`).
    pub filename: Option<&'a Path>,
    /// The virtual host's `ServerName` (`%v`).
    pub server_name: Option<&'a str>,
    /// The name per `UseCanonicalName` (`%V`): with the default `Off`, the
    /// host the client asked for. Default: the host of the `Host` header
    /// (lowercase, without port), else `server_name`.
    pub host_name: Option<&'a str>,
    /// The canonical port (`%p`): the `ServerName`'s port. Default: 443 on
    /// TLS, 80 otherwise, as Apache's when `ServerName` names no port.
    pub server_port: Option<u16>,
    /// The request's environment (`%{VAR}e`), e.g. from `SetEnvIf`.
    pub env: &'a [(String, String)],
    /// The request notes (`%{NAME}n`).
    pub notes: &'a [(String, String)],
    /// Bytes received including the request line and headers (`%I`).
    pub bytes_in: Option<u64>,
    /// Bytes sent including the status line and headers (`%O`).
    pub bytes_out: Option<u64>,
    /// Time from the request's arrival to the first byte sent (`%^FB`).
    pub ttfb: Option<Duration>,
    /// `%X`.
    pub connection: ConnectionStatus,
    /// Requests served on this connection before this one (`%k`).
    pub keepalives: u32,
    /// The status of the original request when an internal redirect (an
    /// `ErrorDocument`, say) answered with another (`%s`, `%<s`). Default:
    /// the final status.
    pub original_status: Option<u16>,
    /// The handler that produced the response (`%R`).
    pub handler: Option<&'a str>,
    /// The request's log id (`%L`).
    pub log_id: Option<&'a str>,
}

/// A compiled `LogFormat`.
#[derive(Clone, Debug)]
pub struct LogFormat {
    items: Vec<Item>,
}

impl Default for LogFormat {
    fn default() -> Self {
        LogFormat::compile(CLF).expect("the built-in format compiles")
    }
}

#[derive(Clone, Debug)]
enum Item {
    Literal(Vec<u8>),
    Field(Field),
}

#[derive(Clone, Debug)]
struct Field {
    kind: Kind,
    arg: String,
    /// Statuses of `%400,501x`; empty: always.
    statuses: Vec<u64>,
    /// `!`: print only when the status is not in the list.
    negate: bool,
    /// `<` (original request) rather than `>` (final); only `%s` differs.
    original: bool,
}

#[derive(Clone, Debug)]
enum Kind {
    /// `%{VAR}x`: a mod_ssl variable.
    SslVar,
    /// `%{version|cipher|subjectdn|issuerdn|errcode|errstr}c`.
    SslConn,
    RemoteHost,
    RemoteAddr,
    /// `%{c}a`, `%{c}h`: the connection's own peer (the proxy behind a
    /// PROXY header), where `%a` and `%h` are the client.
    PeerAddr,
    LocalAddr,
    Logname,
    User,
    Time(TimeSpec),
    Filename,
    BytesClf,
    Bytes,
    HeaderIn,
    HeaderOut,
    Note,
    LogId,
    Env,
    ServerName,
    VirtualHost,
    Port(PortOf),
    Pid(PidOf),
    Protocol,
    Method,
    Query,
    Connection,
    Cookie,
    Keepalives,
    RequestLine,
    DurationMicros,
    Duration(Unit),
    Uri,
    Status,
    Handler,
    Trailer,
    BytesIn,
    BytesOut,
    BytesInOut,
    Ttfb,
}

/// `%{canonical|local|remote}p`; anything else prints the argument.
#[derive(Clone, Copy, Debug)]
enum PortOf {
    Canonical,
    Local,
    Remote,
    Bogus,
}

/// `%{pid|tid|hextid}P`; anything else prints the argument.
#[derive(Clone, Copy, Debug)]
enum PidOf {
    Pid,
    Tid,
    HexTid,
    Bogus,
}

/// `%{s|ms|us}T`; anything else prints the argument.
#[derive(Clone, Copy, Debug)]
enum Unit {
    S,
    Ms,
    Us,
    Bogus,
}

#[derive(Clone, Debug)]
struct TimeSpec {
    /// `end:`: the time the request was logged rather than received.
    end: bool,
    form: TimeForm,
}

#[derive(Clone, Debug)]
enum TimeForm {
    Clf,
    Custom(std::ffi::CString),
    Sec,
    Msec,
    Usec,
    MsecFrac,
    UsecFrac,
}

fn kind_of(name: &str) -> Option<Kind> {
    Some(match name {
        "h" => Kind::RemoteHost,
        "a" => Kind::RemoteAddr,
        "A" => Kind::LocalAddr,
        "l" => Kind::Logname,
        "u" => Kind::User,
        "t" => Kind::Time(TimeSpec {
            end: false,
            form: TimeForm::Clf,
        }),
        "f" => Kind::Filename,
        "b" => Kind::BytesClf,
        "B" => Kind::Bytes,
        "i" => Kind::HeaderIn,
        "o" => Kind::HeaderOut,
        "n" => Kind::Note,
        "L" => Kind::LogId,
        "e" => Kind::Env,
        "V" => Kind::ServerName,
        "v" => Kind::VirtualHost,
        "p" => Kind::Port(PortOf::Bogus),
        "P" => Kind::Pid(PidOf::Bogus),
        "H" => Kind::Protocol,
        "m" => Kind::Method,
        "q" => Kind::Query,
        "X" => Kind::Connection,
        "C" => Kind::Cookie,
        "k" => Kind::Keepalives,
        "r" => Kind::RequestLine,
        "D" => Kind::DurationMicros,
        "T" => Kind::Duration(Unit::Bogus),
        "U" => Kind::Uri,
        "s" => Kind::Status,
        "R" => Kind::Handler,
        "^ti" | "^to" => Kind::Trailer,
        "I" => Kind::BytesIn,
        "O" => Kind::BytesOut,
        "S" => Kind::BytesInOut,
        "^FB" => Kind::Ttfb,
        // mod_ssl's: `%{VAR}x` a variable, `%{version}c` and the like.
        "x" => Kind::SslVar,
        "c" => Kind::SslConn,
        _ => return None,
    })
}

/// `%{…}t`'s argument, read as mod_log_config reads it.
fn time_spec(arg: &str) -> TimeSpec {
    let mut end = false;
    let mut fmt = arg;
    let mut custom = arg;
    if arg.is_empty() {
        return TimeSpec {
            end,
            form: TimeForm::Clf,
        };
    }
    for (word, is_end) in [("begin", false), ("end", true)] {
        if let Some(rest) = fmt.strip_prefix(word) {
            if rest.is_empty() {
                return TimeSpec {
                    end: is_end,
                    form: TimeForm::Clf,
                };
            }
            if let Some(after) = rest.strip_prefix(':') {
                end = is_end;
                fmt = after;
                custom = after;
            } else {
                fmt = rest;
            }
            break;
        }
    }
    let form = match fmt {
        "msec" => TimeForm::Msec,
        "msec_frac" => TimeForm::MsecFrac,
        "usec" => TimeForm::Usec,
        "usec_frac" => TimeForm::UsecFrac,
        "sec" => TimeForm::Sec,
        "" => TimeForm::Clf,
        _ => TimeForm::Custom(
            // A NUL cannot come from a configuration line; cut there if it does.
            std::ffi::CString::new(custom.split('\0').next().unwrap_or("")).expect("no NUL left"),
        ),
    };
    TimeSpec { end, form }
}

/// Reads once, at compile time, the arguments that select a variant.
fn with_arg(kind: Kind, arg: &str) -> Kind {
    let a = arg.to_ascii_lowercase();
    match kind {
        Kind::Time(_) => Kind::Time(time_spec(arg)),
        Kind::Port(_) => Kind::Port(match a.as_str() {
            "" | "canonical" => PortOf::Canonical,
            "local" => PortOf::Local,
            "remote" => PortOf::Remote,
            _ => PortOf::Bogus,
        }),
        Kind::Pid(_) => Kind::Pid(match a.as_str() {
            "" | "pid" => PidOf::Pid,
            "tid" => PidOf::Tid,
            "hextid" => PidOf::HexTid,
            _ => PidOf::Bogus,
        }),
        Kind::RemoteHost | Kind::RemoteAddr if arg == "c" => Kind::PeerAddr,
        Kind::Duration(_) => Kind::Duration(match a.as_str() {
            "" | "s" => Unit::S,
            "ms" => Unit::Ms,
            "us" => Unit::Us,
            _ => Unit::Bogus,
        }),
        k => k,
    }
}

const RAN_OFF: &str = "Ran off end of LogFormat parsing args to some directive";

impl LogFormat {
    /// Compiles a `LogFormat` string as the configuration parser hands it
    /// over, i.e. with the configuration file's own quoting already undone
    /// (`%h "%r"`, not `%h \"%r\"`). mod_log_config's escapes `\n`, `\t`,
    /// `\r` and `\\` are decoded here; any other backslash stays. The
    /// error text is Apache's (`Unrecognized LogFormat directive %Z`).
    /// The request environment variables the format prints (`%{NAME}e`).
    pub fn env_names(&self) -> impl Iterator<Item = &str> {
        self.items.iter().filter_map(|i| match i {
            Item::Field(f) if matches!(f.kind, Kind::Env) => Some(f.arg.as_str()),
            _ => None,
        })
    }

    pub fn compile(spec: &str) -> Result<LogFormat, String> {
        Self::compile_for(spec, false)
    }

    /// [`LogFormat::compile`], with mod_ssl's `%{…}x` and `%{…}c` known
    /// when `ssl` (mod_ssl loaded registers them).
    pub fn compile_for(spec: &str, ssl: bool) -> Result<LogFormat, String> {
        let mut items = Vec::new();
        let b = spec.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i] != b'%' {
                let mut lit = Vec::new();
                while i < b.len() && b[i] != b'%' {
                    if b[i] == b'\\' {
                        let decoded = match b.get(i + 1) {
                            Some(b'\\') => Some(b'\\'),
                            Some(b'r') => Some(b'\r'),
                            Some(b'n') => Some(b'\n'),
                            Some(b't') => Some(b'\t'),
                            _ => None,
                        };
                        match decoded {
                            Some(c) => {
                                lit.push(c);
                                i += 2;
                            }
                            None => {
                                lit.push(b'\\');
                                i += 1;
                            }
                        }
                    } else {
                        lit.push(b[i]);
                        i += 1;
                    }
                }
                push_literal(&mut items, &lit);
                continue;
            }
            i += 1;
            if b.get(i) == Some(&b'%') {
                push_literal(&mut items, b"%");
                i += 1;
                continue;
            }
            let mut field = Field {
                kind: Kind::Status,
                arg: String::new(),
                statuses: Vec::new(),
                negate: false,
                original: false,
            };
            let mut explicit_side = None;
            loop {
                let Some(&c) = b.get(i) else {
                    return Err(RAN_OFF.to_string());
                };
                match c {
                    b'!' => {
                        field.negate = !field.negate;
                        i += 1;
                    }
                    b'<' => {
                        explicit_side = Some(true);
                        i += 1;
                    }
                    b'>' => {
                        explicit_side = Some(false);
                        i += 1;
                    }
                    b',' => i += 1,
                    b'{' => {
                        let rest = &spec[i + 1..];
                        match rest.find('}') {
                            Some(close) => {
                                field.arg = rest[..close].to_string();
                                i += close + 2;
                            }
                            None => return Err(RAN_OFF.to_string()),
                        }
                    }
                    b'0'..=b'9' => {
                        let mut n: u64 = 0;
                        while let Some(d @ b'0'..=b'9') = b.get(i).copied() {
                            n = n.saturating_mul(10).saturating_add(u64::from(d - b'0'));
                            i += 1;
                        }
                        field.statuses.push(n);
                    }
                    _ => {
                        let three = (c == b'^').then(|| spec.get(i..i + 3)).flatten();
                        let known = |name: &str| {
                            kind_of(name)
                                .filter(|k| ssl || !matches!(k, Kind::SslVar | Kind::SslConn))
                        };
                        let (kind, len) = match three.and_then(known) {
                            Some(k) => (k, 3),
                            None => match spec.get(i..i + 1).and_then(known) {
                                Some(k) => (k, 1),
                                None if c.is_ascii() => {
                                    return Err(format!(
                                        "Unrecognized LogFormat directive %{}",
                                        c as char
                                    ))
                                }
                                // Apache names the byte; its log shows it escaped.
                                None => {
                                    return Err(format!(
                                        "Unrecognized LogFormat directive %\\x{c:02x}"
                                    ))
                                }
                            },
                        };
                        i += len;
                        field.kind = with_arg(kind, &field.arg);
                        // %s, %r, %U, %D, %T and %L default to the original request.
                        field.original = explicit_side.unwrap_or(matches!(
                            field.kind,
                            Kind::Status
                                | Kind::RequestLine
                                | Kind::Uri
                                | Kind::DurationMicros
                                | Kind::Duration(_)
                                | Kind::LogId
                        ));
                        items.push(Item::Field(field));
                        break;
                    }
                }
            }
        }
        push_literal(&mut items, b"\n");
        Ok(LogFormat { items })
    }

    /// Appends one log line, newline included, for `entry`, with no
    /// [`AccessDetails`]: the fields that need them print `-` or their
    /// derived default.
    pub fn render(&self, entry: &AccessEntry<'_>, out: &mut Vec<u8>) {
        self.render_with(entry, &AccessDetails::default(), out);
    }

    /// Appends one log line, newline included, for `entry` and `details`.
    pub fn render_with(
        &self,
        entry: &AccessEntry<'_>,
        details: &AccessDetails<'_>,
        out: &mut Vec<u8>,
    ) {
        for item in &self.items {
            match item {
                Item::Literal(l) => out.extend_from_slice(l),
                Item::Field(f) => {
                    let wanted = f.statuses.is_empty()
                        || f.statuses.contains(&u64::from(entry.status)) != f.negate;
                    // Apache prints "-" where it has no value at all.
                    if !wanted || !render_field(f, entry, details, out) {
                        out.push(b'-');
                    }
                }
            }
        }
    }
}

fn push_literal(items: &mut Vec<Item>, lit: &[u8]) {
    if let Some(Item::Literal(prev)) = items.last_mut() {
        prev.extend_from_slice(lit);
    } else {
        items.push(Item::Literal(lit.to_vec()));
    }
}

/// Writes one field; `false` when Apache has no value for it (printed `-`).
fn render_field(f: &Field, e: &AccessEntry<'_>, d: &AccessDetails<'_>, out: &mut Vec<u8>) -> bool {
    let req = e.request;
    match &f.kind {
        Kind::RemoteHost => match e.remote_host {
            Some(name) => escaped(name.as_bytes(), out),
            None => display(e.remote.ip().to_canonical(), out),
        },
        Kind::RemoteAddr => display(e.remote.ip().to_canonical(), out),
        Kind::PeerAddr => display(e.conn_peer.ip().to_canonical(), out),
        Kind::LocalAddr => display(e.local.ip().to_canonical(), out),
        Kind::Logname | Kind::Trailer => false,
        Kind::User => match e.remote_user {
            None => false,
            Some("") => {
                out.extend_from_slice(b"\"\"");
                true
            }
            Some(u) => escaped(u.as_bytes(), out),
        },
        Kind::Time(spec) => {
            let t = if spec.end {
                e.received + e.duration
            } else {
                e.received
            };
            render_time(spec, t, out);
            true
        }
        Kind::Filename => d.filename.is_some_and(|p| {
            use std::os::unix::ffi::OsStrExt;
            escaped(p.as_os_str().as_bytes(), out)
        }),
        Kind::BytesClf => e.bytes_sent > 0 && display(e.bytes_sent, out),
        Kind::Bytes => display(e.bytes_sent, out),
        Kind::HeaderIn => match req.and_then(|r| r.headers.get_joined(&f.arg)) {
            Some(v) => escaped(&v, out),
            None => false,
        },
        Kind::HeaderOut => header_out(&f.arg, e.response_headers, &e.framing, out),
        Kind::Note => lookup(d.notes, &f.arg, out),
        Kind::Env => lookup(d.env, &f.arg, out),
        Kind::LogId => d.log_id.is_some_and(|id| {
            out.extend_from_slice(id.as_bytes());
            true
        }),
        Kind::ServerName => match d.host_name {
            Some(n) => escaped(n.as_bytes(), out),
            None => match req
                .and_then(|r| r.headers.get_str("Host"))
                .map(host_of_header)
            {
                Some(h) if !h.is_empty() => escaped(h.as_bytes(), out),
                _ => d.server_name.is_some_and(|n| escaped(n.as_bytes(), out)),
            },
        },
        Kind::VirtualHost => d.server_name.is_some_and(|n| escaped(n.as_bytes(), out)),
        Kind::Port(which) => match which {
            PortOf::Canonical => {
                let secure = req.is_some_and(|r| r.secure);
                display(d.server_port.unwrap_or(if secure { 443 } else { 80 }), out)
            }
            PortOf::Remote => display(e.remote.port(), out),
            PortOf::Local => display(e.local.port(), out),
            PortOf::Bogus => verbatim(&f.arg, out),
        },
        Kind::Pid(which) => match which {
            PidOf::Pid => display(std::process::id(), out),
            PidOf::Tid => display(current_tid(), out),
            PidOf::HexTid => display(format_args!("{:x}", current_tid()), out),
            PidOf::Bogus => verbatim(&f.arg, out),
        },
        Kind::Protocol => req.is_some_and(|r| escaped(r.version.as_str().as_bytes(), out)),
        Kind::Method => req.is_some_and(|r| escaped(r.method.as_bytes(), out)),
        Kind::Query => {
            // No query prints as nothing, not as "-".
            let args = d
                .args
                .or_else(|| req.and_then(|r| target_query_of(&r.target)));
            if let Some(a) = args {
                out.push(b'?');
                escape_log_item(a.as_bytes(), out);
            }
            true
        }
        Kind::Connection => {
            out.push(match d.connection {
                ConnectionStatus::Aborted => b'X',
                ConnectionStatus::KeepAlive => b'+',
                ConnectionStatus::Close => b'-',
            });
            true
        }
        Kind::SslVar => req
            .and_then(|r| crate::modules::hooks::ssl_var_lookup(r, &f.arg))
            .is_some_and(|v| escaped(v.as_bytes(), out)),
        Kind::SslConn => req
            .and_then(|r| crate::modules::hooks::ssl_log_connection_var(r, &f.arg))
            .is_some_and(|v| escaped(v.as_bytes(), out)),
        Kind::Cookie => {
            let header = req.and_then(|r| r.headers.get_joined("Cookie"));
            match header
                .as_deref()
                .and_then(|h| find_cookie(h, f.arg.as_bytes()))
            {
                Some(v) => escaped(v, out),
                None => false,
            }
        }
        Kind::Keepalives => display(d.keepalives, out),
        Kind::RequestLine => req.is_some_and(|r| match request_line_without_password(r) {
            Some(line) => escaped(line.as_bytes(), out),
            None => escaped(r.request_line.as_bytes(), out),
        }),
        Kind::DurationMicros => display(e.duration.as_micros(), out),
        Kind::Duration(unit) => match unit {
            Unit::S => display(e.duration.as_secs(), out),
            Unit::Ms => display(e.duration.as_millis(), out),
            Unit::Us => display(e.duration.as_micros(), out),
            Unit::Bogus => verbatim(&f.arg, out),
        },
        Kind::Uri => match d.uri {
            Some(u) => escaped(u, out),
            None => req.is_some_and(|r| escaped(&target_path_of(r), out)),
        },
        Kind::Status => {
            let s = if f.original {
                d.original_status.unwrap_or(e.status)
            } else {
                e.status
            };
            display(s, out)
        }
        Kind::Handler => d.handler.is_some_and(|h| escaped(h.as_bytes(), out)),
        Kind::BytesIn => d.bytes_in.is_some_and(|n| display(n, out)),
        Kind::BytesOut => d.bytes_out.is_some_and(|n| display(n, out)),
        Kind::BytesInOut => d
            .bytes_in
            .zip(d.bytes_out)
            .is_some_and(|(i, o)| display(i + o, out)),
        Kind::Ttfb => d.ttfb.is_some_and(|t| display(t.as_micros(), out)),
    }
}

fn display(v: impl std::fmt::Display, out: &mut Vec<u8>) -> bool {
    let _ = write!(out, "{v}");
    true
}

fn escaped(v: &[u8], out: &mut Vec<u8>) -> bool {
    escape_log_item(v, out);
    true
}

/// A bogus argument (`%{x}T`) prints itself.
fn verbatim(arg: &str, out: &mut Vec<u8>) -> bool {
    out.extend_from_slice(arg.as_bytes());
    true
}

fn lookup(table: &[(String, String)], name: &str, out: &mut Vec<u8>) -> bool {
    table
        .iter()
        .find(|(n, _)| n == name)
        .is_some_and(|(_, v)| escaped(v.as_bytes(), out))
}

/// `%{Name}o`: the first value; `Set-Cookie` joined with ", ";
/// `Content-Type` without its parameters.
fn header_out(
    name: &str,
    headers: &[(Cow<'static, str>, String)],
    framing: &crate::http::FramingFields,
    out: &mut Vec<u8>,
) -> bool {
    let mut values = headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v);
    let Some(first) = values.next() else {
        return framing_field(name, framing, out);
    };
    if let (Some(token), true) = (framing.connection, name.eq_ignore_ascii_case("Connection")) {
        // `apr_table_mergen` into the answer's own field.
        escape_log_item(format!("{first}, {token}").as_bytes(), out);
        return true;
    }
    if name.eq_ignore_ascii_case("Set-Cookie") {
        escape_log_item(first.as_bytes(), out);
        for v in values {
            out.extend_from_slice(b", ");
            escape_log_item(v.as_bytes(), out);
        }
    } else if name.eq_ignore_ascii_case("Content-Type") {
        escape_log_item(
            first.split(';').next().unwrap_or("").trim_end().as_bytes(),
            out,
        );
    } else {
        escape_log_item(first.as_bytes(), out);
    }
    true
}

/// A field the connection layer wrote and the answer did not have.
fn framing_field(name: &str, framing: &crate::http::FramingFields, out: &mut Vec<u8>) -> bool {
    if name.eq_ignore_ascii_case("Connection") {
        return framing.connection.is_some_and(|token| {
            out.extend_from_slice(token.as_bytes());
            true
        });
    }
    if name.eq_ignore_ascii_case("Keep-Alive") {
        return framing.keep_alive.is_some_and(|(timeout, max)| {
            out.extend_from_slice(format!("timeout={timeout}").as_bytes());
            if let Some(max) = max {
                out.extend_from_slice(format!(", max={max}").as_bytes());
            }
            true
        });
    }
    if name.eq_ignore_ascii_case("Content-Length") {
        return framing.content_length.is_some_and(|n| display(n, out));
    }
    if name.eq_ignore_ascii_case("Transfer-Encoding") {
        return framing.chunked && {
            out.extend_from_slice(b"chunked");
            true
        };
    }
    false
}

/// The value of cookie `name` in a `Cookie` header, as mod_log_config
/// finds it: pairs split at `;`, the name matched without case, both
/// sides trimmed of blanks.
fn find_cookie<'h>(header: &'h [u8], name: &[u8]) -> Option<&'h [u8]> {
    for pair in header.split(|&c| c == b';').filter(|p| !p.is_empty()) {
        // Leading '=' are skipped as delimiters, as strtok does.
        let Some(start) = pair.iter().position(|&c| c != b'=') else {
            continue;
        };
        let pair = &pair[start..];
        let Some(eq) = pair.iter().position(|&c| c == b'=') else {
            continue;
        };
        let (n, v) = (&pair[..eq], &pair[eq + 1..]);
        if v.is_empty() {
            continue;
        }
        if trim(n).eq_ignore_ascii_case(name) {
            return Some(trim(v));
        }
    }
    None
}

/// Leading blanks and tabs off, trailing white space off.
fn trim(s: &[u8]) -> &[u8] {
    let start = s
        .iter()
        .position(|&c| c != b' ' && c != b'\t')
        .unwrap_or(s.len());
    let s = &s[start..];
    let end = s
        .iter()
        .rposition(|c| !c.is_ascii_whitespace() && *c != 0x0b)
        .map_or(0, |p| p + 1);
    &s[..end]
}

/// The host of a `Host` header as Apache keeps it: no port, no brackets,
/// lowercase, no trailing dot.
fn host_of_header(h: &str) -> String {
    let host = match h.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(v6),
        None => h.split(':').next().unwrap_or(h),
    };
    let host = host.strip_suffix('.').unwrap_or(host);
    host.to_ascii_lowercase()
}

fn target_query_of(target: &str) -> Option<&str> {
    let q = &target[target.find('?')? + 1..];
    Some(q.split('#').next().unwrap_or(q))
}

fn target_path_of(r: &Request) -> Vec<u8> {
    match crate::uri::request_uri(&r.method, &r.target, r.secure) {
        Ok(u) => u.path,
        Err(_) => r
            .target
            .split(['?', '#'])
            .next()
            .unwrap_or("")
            .as_bytes()
            .to_vec(),
    }
}

/// `%r` of a target with a password: Apache logs the request line rebuilt
/// with the password replaced by `XXXXXXXX`.
fn request_line_without_password(r: &Request) -> Option<String> {
    if !r.target.contains('@') {
        return None;
    }
    let lax = crate::uri::ParseOptions {
        strict: false,
        secure: r.secure,
    };
    let p = crate::uri::parse_target(&r.method, &r.target, &lax).ok()?;
    let a = p.authority.as_ref()?;
    a.password.as_ref()?;
    let mut s = format!("{} ", r.method);
    if let Some(scheme) = &p.scheme {
        s.push_str(scheme);
        s.push(':');
    }
    s.push_str("//");
    if let Some(u) = &a.user {
        s.push_str(u);
    }
    s.push_str(":XXXXXXXX@");
    if a.host.contains(':') {
        let _ = write!(s, "[{}]", a.host);
    } else {
        s.push_str(&a.host);
    }
    let default = match p.scheme.as_deref().map(str::to_ascii_lowercase).as_deref() {
        Some("http") => 80,
        Some("https") => 443,
        _ => 0,
    };
    if let Some(ps) = a
        .port_str
        .as_deref()
        .filter(|_| a.port != 0 && a.port != default)
    {
        let _ = write!(s, ":{ps}");
    }
    s.push_str(p.path.as_deref().unwrap_or(""));
    if let Some(q) = &p.query {
        let _ = write!(s, "?{q}");
    }
    if let Some(f) = &p.fragment {
        let _ = write!(s, "#{f}");
    }
    let _ = write!(s, " {}", r.version.as_str());
    Some(s)
}

/// Apache's `ap_escape_logitem`: control bytes as `\n`, `\t`… or `\xhh`,
/// bytes above 0x7e as `\xhh`, and `"` and `\` behind a backslash.
pub fn escape_log_item(s: &[u8], out: &mut Vec<u8>) {
    for &c in s {
        if is_log_escaped(c) {
            out.push(b'\\');
            match c {
                0x08 => out.push(b'b'),
                b'\n' => out.push(b'n'),
                b'\r' => out.push(b'r'),
                b'\t' => out.push(b't'),
                0x0b => out.push(b'v'),
                b'\\' | b'"' => out.push(c),
                _ => {
                    let _ = write!(out, "x{c:02x}");
                }
            }
        } else {
            out.push(c);
        }
    }
}

fn is_log_escaped(c: u8) -> bool {
    !(0x20..0x7f).contains(&c) || c == b'"' || c == b'\\'
}

/// The thread id `%{tid}P` prints: the pthread id, as APR's
/// `apr_os_thread_current` (not the kernel's thread id, which the error
/// log shows).
pub fn current_tid() -> u64 {
    // SAFETY: pthread_self has no preconditions and cannot fail.
    unsafe { libc::pthread_self() as u64 }
}

/// Microseconds since the epoch (negative before it), as APR counts time.
fn apr_time(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_micros()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_micros()).unwrap_or(i64::MAX),
    }
}

/// Apache's log levels, most severe first (`priorities` in log.c).
pub const LEVELS: [&str; 16] = [
    "emerg", "alert", "crit", "error", "warn", "notice", "info", "debug", "trace1", "trace2",
    "trace3", "trace4", "trace5", "trace6", "trace7", "trace8",
];

const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

fn month(tm: &libc::tm) -> &'static str {
    MONTHS[tm.tm_mon.clamp(0, 11) as usize]
}

thread_local! {
    /// The `%t` text of the last second rendered on this thread.
    static CLF_CACHE: RefCell<(i64, String)> = const { RefCell::new((i64::MIN, String::new())) };
}

/// `[21/Nov/2026:06:37:02 +0000]`.
fn clf_time(tm: &libc::tm, out: &mut String) {
    let off = tm.tm_gmtoff;
    let sign = if off < 0 { '-' } else { '+' };
    let off = off.abs();
    let _ = write!(
        out,
        "[{:02}/{}/{}:{:02}:{:02}:{:02} {}{:02}{:02}]",
        tm.tm_mday,
        month(tm),
        i64::from(tm.tm_year) + 1900,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        sign,
        off / 3600,
        off % 3600 / 60
    );
}

fn render_time(spec: &TimeSpec, t: SystemTime, out: &mut Vec<u8>) {
    let at = apr_time(t);
    let secs = at.div_euclid(1_000_000);
    let _ = match &spec.form {
        TimeForm::Sec => write!(out, "{secs}"),
        TimeForm::Msec => write!(out, "{}", at.div_euclid(1000)),
        TimeForm::Usec => write!(out, "{at}"),
        TimeForm::MsecFrac => write!(out, "{:03}", at.div_euclid(1000).rem_euclid(1000)),
        TimeForm::UsecFrac => write!(out, "{:06}", at.rem_euclid(1_000_000)),
        TimeForm::Clf => {
            CLF_CACHE.with(|c| {
                let mut c = c.borrow_mut();
                if c.0 != secs {
                    c.1.clear();
                    clf_time(&crate::os::local_tm(secs), &mut c.1);
                    c.0 = secs;
                }
                out.extend_from_slice(c.1.as_bytes());
            });
            Ok(())
        }
        TimeForm::Custom(fmt) => {
            out.extend_from_slice(&strftime(fmt, &crate::os::local_tm(secs)));
            Ok(())
        }
    };
}

/// `strftime` into Apache's 8 KiB buffer (a longer result is empty).
fn strftime(fmt: &std::ffi::CStr, tm: &libc::tm) -> Vec<u8> {
    let mut buf = [0u8; 8192];
    // SAFETY: buf is writable for its length, fmt is NUL-terminated and
    // tm is initialised.
    let n = unsafe { libc::strftime(buf.as_mut_ptr().cast(), buf.len(), fmt.as_ptr(), tm) };
    buf[..n].to_vec()
}

/// A `strftime` format applied to `t` in local time (a format holding a
/// NUL byte gives nothing).
pub(crate) fn strftime_local(fmt: &str, t: SystemTime) -> String {
    let Ok(fmt) = std::ffi::CString::new(fmt) else {
        return String::new();
    };
    let tm = crate::os::local_tm(apr_time(t).div_euclid(1_000_000));
    String::from_utf8_lossy(&strftime(&fmt, &tm)).into_owned()
}

/// The options of `ap_recent_ctime_ex`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TimeText {
    /// `.123456` after the seconds.
    pub usec: bool,
    /// `2026-11-21 05:25:47` instead of `Sat Nov 21 05:25:47 2026`.
    pub compact: bool,
    /// ` +0100` at the end.
    pub gmtoff: bool,
}

/// `ap_recent_ctime_ex`: `t` in local time as the error log writes it.
pub(crate) fn time_text(t: SystemTime, o: &TimeText) -> String {
    let at = apr_time(t);
    let tm = crate::os::local_tm(at.div_euclid(1_000_000));
    let year = i64::from(tm.tm_year) + 1900;
    let mut out = String::with_capacity(40);
    if o.compact {
        let _ = write!(out, "{year:04}-{:02}-", tm.tm_mon + 1);
    } else {
        let _ = write!(
            out,
            "{} {} ",
            DAYS[tm.tm_wday.clamp(0, 6) as usize],
            month(&tm)
        );
    }
    let _ = write!(
        out,
        "{:02} {:02}:{:02}:{:02}",
        tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec
    );
    if o.usec {
        let _ = write!(out, ".{:06}", at.rem_euclid(1_000_000));
    }
    if !o.compact {
        let _ = write!(out, " {year:04}");
    }
    if o.gmtoff {
        let off = tm.tm_gmtoff;
        let sign = if off < 0 { '-' } else { '+' };
        let off = off.abs();
        let _ = write!(out, " {sign}{:02}{:02}", off / 3600, off % 3600 / 60);
    }
    out
}

/// One line of Apache's error log in its default format (no
/// `ErrorLogFormat`), without the trailing newline:
/// `[Sat Nov 21 05:25:47.245137 2026] [core:alert] [pid 10781:tid 10781]
/// [client 127.0.0.1:56126] message`. The message is escaped as Apache
/// escapes it (control and non-ASCII bytes as `\xhh`, `\` doubled, `"`
/// left alone). `tid` is left out when `None`, as under a non-threaded MPM.
/// A message that begins with an OS error as Apache prints it
/// (`(13)Permission denied: `) has it put where Apache puts a request's OS
/// error: before the client.
pub fn error_log_line(
    now: SystemTime,
    level: &str,
    module: &str,
    pid: u32,
    tid: Option<u64>,
    client: Option<SocketAddr>,
    message: impl AsRef<[u8]>,
) -> String {
    let (errno, message) = split_os_error(message.as_ref());
    let record = ErrorRecord {
        time: Some(now),
        level,
        module,
        pid,
        tid,
        errno,
        client,
        message,
        referer: None,
    };
    record.render()
}

/// [`error_log_line`] for an event: with the request's `Referer`
/// appended, as Apache's default format does; without the time for
/// syslog (`now` `None`).
pub fn error_event_line(
    now: Option<SystemTime>,
    pid: u32,
    tid: Option<u64>,
    event: &crate::http::ErrorEvent<'_>,
) -> String {
    let (errno, message) = split_os_error(event.message.as_bytes());
    let referer = event.request.and_then(|r| r.headers.get_joined("Referer"));
    ErrorRecord {
        time: now,
        level: event.level,
        module: event.module,
        pid,
        tid,
        errno,
        client: event.client,
        message,
        referer: referer.as_deref(),
    }
    .render()
}

/// An OS error as Apache's log shows it before a message: `(13)Permission
/// denied` (the log line puts it before the client, see [`error_log_line`]).
pub fn os_error(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(code) => format!("({code}){}", status_text(code)),
        None => format!("(0){e}"),
    }
}

/// `apr_strerror`: the system's text for an errno, APR's own for the
/// APR statuses a log line may carry (`APR_TIMEUP`, `APR_EOF`).
pub(crate) fn status_text(code: i32) -> String {
    match code {
        70007 => "The timeout specified has expired".into(),
        70014 => "End of file found".into(),
        _ => {
            let text = std::io::Error::from_raw_os_error(code).to_string();
            let suffix = format!(" (os error {code})");
            text.strip_suffix(&suffix).unwrap_or(&text).to_string()
        }
    }
}

/// `(errno)text: rest` → (`errno`, `rest`) when `text` is that error's own
/// text; else the message whole.
pub(crate) fn split_os_error(message: &[u8]) -> (Option<i32>, &[u8]) {
    let whole = (None, message);
    let Some(rest) = message.strip_prefix(b"(") else {
        return whole;
    };
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let Some(errno) = std::str::from_utf8(&rest[..digits])
        .ok()
        .and_then(|d| d.parse::<i32>().ok())
    else {
        return whole;
    };
    let Some(after) = rest[digits..].strip_prefix(b")") else {
        return whole;
    };
    let text = status_text(errno);
    match after
        .strip_prefix(text.as_bytes())
        .and_then(|r| r.strip_prefix(b": "))
    {
        Some(rest) => (Some(errno), rest),
        None => whole,
    }
}

/// Everything Apache's default error-log line can show.
#[derive(Clone, Debug)]
pub struct ErrorRecord<'a> {
    /// `None` for a line sent to syslog, which stamps it itself.
    pub time: Option<SystemTime>,
    /// `emerg` … `debug`, `trace1` … `trace8`.
    pub level: &'a str,
    /// The module without `mod_` (`core`, `rewrite`, `authz_core`).
    pub module: &'a str,
    pub pid: u32,
    pub tid: Option<u64>,
    /// An OS error behind the message, shown as `(13)Permission denied: `.
    pub errno: Option<i32>,
    pub client: Option<SocketAddr>,
    pub message: &'a [u8],
    /// The request's `Referer`, appended as `, referer: …` when non-empty.
    pub referer: Option<&'a [u8]>,
}

/// Apache composes an error-log line in a buffer of this size.
const MAX_STRING_LEN: usize = 8192;

impl ErrorRecord<'_> {
    /// The line without its newline, cut where Apache cuts it.
    pub fn render(&self) -> String {
        let mut line = String::with_capacity(160 + self.message.len());
        if let Some(time) = self.time {
            line.push('[');
            push_ctime(&mut line, time);
            line.push_str("] ");
        }
        let _ = write!(line, "[{}:{}] [pid {}", self.module, self.level, self.pid);
        if let Some(tid) = self.tid {
            let _ = write!(line, ":tid {tid}");
        }
        line.push_str("] ");
        if let Some(errno) = self.errno {
            let _ = write!(line, "({errno}){}: ", status_text(errno));
        }
        if let Some(c) = self.client {
            let _ = write!(line, "[client {}:{}] ", c.ip().to_canonical(), c.port());
        }
        // The message is formatted into its own buffer first, then escaped
        // into what is left of the line's.
        // Paths in the message are in the text form that keeps bytes which
        // are not UTF-8 (`path_text`): logged as those bytes (`\xe9`).
        let message = std::str::from_utf8(self.message).map_or(
            std::borrow::Cow::Borrowed(self.message),
            crate::path_text::bytes,
        );
        let msg = &message[..message.len().min(MAX_STRING_LEN - 1)];
        let room = MAX_STRING_LEN.saturating_sub(line.len());
        escape_error_item(msg, room, &mut line);
        if let Some(referer) = self.referer.filter(|r| !r.is_empty()) {
            let mark = line.len();
            let label = ", referer: ";
            let room = MAX_STRING_LEN - line.len();
            line.push_str(&label[..label.len().min(room.saturating_sub(1))]);
            let mut escaped = String::new();
            escape_error_item(referer, MAX_STRING_LEN, &mut escaped);
            let room = MAX_STRING_LEN - line.len();
            let take = escaped.len().min(room.saturating_sub(1));
            if take == 0 {
                line.truncate(mark);
            } else {
                line.push_str(&escaped[..take]);
            }
        }
        // Room is kept for the newline.
        let mut end = line.len().min(MAX_STRING_LEN - 2);
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        line.truncate(end);
        line
    }
}

/// Apache's `ap_escape_errorlog_item` writing into a buffer of `room`
/// bytes (one kept for the terminator): an escape that does not fit whole
/// ends the text.
pub(crate) fn escape_error_item(s: &[u8], room: usize, out: &mut String) {
    let limit = out.len() + room.saturating_sub(1);
    for &c in s {
        if out.len() >= limit {
            break;
        }
        if !is_log_escaped(c) {
            out.push(c as char);
            continue;
        }
        if c == b'"' {
            // Not escaped, but Apache reserves room for the backslash it
            // does not write.
            if out.len() + 2 > limit {
                break;
            }
            out.push('"');
            continue;
        }
        let short = match c {
            0x08 => Some('b'),
            b'\n' => Some('n'),
            b'\r' => Some('r'),
            b'\t' => Some('t'),
            0x0b => Some('v'),
            b'\\' => Some('\\'),
            _ => None,
        };
        match short {
            Some(s) if out.len() + 2 <= limit => {
                out.push('\\');
                out.push(s);
            }
            None if out.len() + 4 <= limit => {
                let _ = write!(out, "\\x{c:02x}");
            }
            _ => break,
        }
    }
}

/// `Sat Nov 21 05:25:47 2026` in local time (`apr_ctime`).
pub fn ctime(t: SystemTime) -> String {
    let tm = crate::os::local_tm(apr_time(t).div_euclid(1_000_000));
    format!(
        "{} {} {:02} {:02}:{:02}:{:02} {}",
        DAYS[tm.tm_wday.clamp(0, 6) as usize],
        month(&tm),
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        i64::from(tm.tm_year) + 1900
    )
}

/// `Sat Nov 21 05:25:47.245137 2026` in local time.
fn push_ctime(line: &mut String, t: SystemTime) {
    let at = apr_time(t);
    ctime_usec(
        &crate::os::local_tm(at.div_euclid(1_000_000)),
        at.rem_euclid(1_000_000),
        line,
    );
}

fn ctime_usec(tm: &libc::tm, usec: i64, out: &mut String) {
    let _ = write!(
        out,
        "{} {} {:02} {:02}:{:02}:{:02}.{:06} {}",
        DAYS[tm.tm_wday.clamp(0, 6) as usize],
        month(tm),
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        usec,
        i64::from(tm.tm_year) + 1900
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::Headers;

    fn request(method: &str, target: &str, headers: &[(&str, &[u8])]) -> Request {
        let mut h = Headers::new();
        for (n, v) in headers {
            h.push(n.to_string(), v.to_vec());
        }
        Request {
            headers: h,
            peer: "127.0.0.1:43232".parse().unwrap(),
            local: "127.0.0.1:18082".parse().unwrap(),
            ..crate::test_support::request(method, target, "")
        }
    }

    fn entry<'a>(
        req: Option<&'a Request>,
        status: u16,
        bytes_sent: u64,
        response_headers: &'a [(Cow<'static, str>, String)],
    ) -> AccessEntry<'a> {
        AccessEntry {
            request: req,
            remote: "127.0.0.1:43232".parse().unwrap(),
            conn_peer: "127.0.0.1:43232".parse().unwrap(),
            local: "127.0.0.1:18082".parse().unwrap(),
            status,
            bytes_sent,
            response_headers,
            received: UNIX_EPOCH + Duration::from_micros(1_795_243_022_412_345),
            duration: Duration::from_micros(288),
            remote_user: None,
            bytes_out: None,
            env: &[],
            notes: &[],
            remote_host: None,
            bytes_in: None,
            ttfb: None,
            framing: Default::default(),
        }
    }

    fn render(fmt: &str, e: &AccessEntry<'_>, d: &AccessDetails<'_>) -> String {
        let mut out = Vec::new();
        LogFormat::compile(fmt).unwrap().render_with(e, d, &mut out);
        String::from_utf8(out).unwrap()
    }

    /// The line with its first `[…]` (the local time) replaced by `[T]`.
    fn mask_time(line: &str) -> String {
        let (a, b) = (line.find('[').unwrap(), line.find(']').unwrap());
        format!("{}[T]{}", &line[..a], &line[b + 1..])
    }

    fn curl_request() -> Request {
        request(
            "GET",
            "/sub/a.txt?x=1",
            &[
                ("Host", b"127.0.0.1:18082"),
                ("X-A", b"v1"),
                ("X-A", "v\"2\\ \u{e9}".as_bytes()),
                ("Cookie", b"foo = bar baz ; x=y"),
                ("User-Agent", "UA \"q\" \\ \u{fc}\ttab".as_bytes()),
                ("Referer", b"http://r/?a\"b"),
            ],
        )
    }

    fn response_headers() -> Vec<(Cow<'static, str>, String)> {
        [
            ("Content-Type", "text/plain"),
            ("Set-Cookie", "a=1"),
            ("Set-Cookie", "b=2"),
        ]
        .iter()
        .map(|(n, v)| (Cow::Borrowed(*n), v.to_string()))
        .collect()
    }

    // The expected lines below were observed with Apache 2.4.71 (Debian's
    // apache2) for the same requests; parts that depend on the clock or
    // the process are masked or given as details.

    #[test]
    fn combined() {
        let req = curl_request();
        let e = entry(Some(&req), 200, 2, &[]);
        let line = render(COMBINED, &e, &AccessDetails::default());
        assert_eq!(
            mask_time(&line),
            "127.0.0.1 - - [T] \"GET /sub/a.txt?x=1 HTTP/1.1\" 200 2 \"http://r/?a\\\"b\" \
             \"UA \\\"q\\\" \\\\ \\xc3\\xbc\\ttab\"\n"
        );
        let head = request("HEAD", "/sub/a.txt", &[]);
        let line = render(
            CLF,
            &entry(Some(&head), 200, 0, &[]),
            &AccessDetails::default(),
        );
        assert_eq!(
            mask_time(&line),
            "127.0.0.1 - - [T] \"HEAD /sub/a.txt HTTP/1.1\" 200 -\n"
        );
    }

    #[test]
    fn mod_ssl_fields() {
        let fmt = "%{SSL_PROTOCOL}x %{SSL_CIPHER}x %{HTTPS}x %{version}c %{cipher}c %{subjectdn}c";
        let render = |fmt: &str, e: &AccessEntry<'_>, d: &AccessDetails<'_>| {
            let mut out = Vec::new();
            LogFormat::compile_for(fmt, true)
                .unwrap()
                .render_with(e, d, &mut out);
            String::from_utf8(out).unwrap()
        };
        let mut req = request("GET", "/", &[]);
        let plain = render(
            fmt,
            &entry(Some(&req), 200, 2, &[]),
            &AccessDetails::default(),
        );
        assert_eq!(plain, "- - off - - -\n");
        req.secure = true;
        req.tls = Some(std::sync::Arc::new(crate::http::TlsInfo {
            protocol: "TLSv1.3",
            cipher: "TLS_AES_256_GCM_SHA384",
            ..Default::default()
        }));
        let tls = render(
            fmt,
            &entry(Some(&req), 200, 2, &[]),
            &AccessDetails::default(),
        );
        assert_eq!(
            tls,
            "TLSv1.3 TLS_AES_256_GCM_SHA384 on TLSv1.3 TLS_AES_256_GCM_SHA384 -\n"
        );
    }

    #[test]
    fn every_field() {
        let fmt = "%a|%{c}a|%A|%h|%l|%u|%{sec}t|%{msec_frac}t|%r|%s|%>s|%<s|%b|%B|%I|%O|%S|%D|\
                   %T|%{ms}T|%{bogus}T|%v|%V|%p|%{local}p|%{bogus}p|%m|%H|%q|%U|%f|%X|%k|%L|%R|\
                   %{X-A}i|%{Content-Type}o|%{Set-Cookie}o|%{foo}C|%{UNIQUE}e|%{n}n|%200{X-A}i|\
                   %!200{X-A}i|%^FB|%%|a\\tb\\qc\\\\d\"e\\n";
        let req = curl_request();
        let headers = response_headers();
        let e = entry(Some(&req), 200, 2, &headers);
        let d = AccessDetails {
            uri: Some(b"/sub/a.txt"),
            filename: Some(Path::new("/tmp/ora/htdocs/sub/a.txt")),
            server_name: Some("localhost"),
            host_name: Some("127.0.0.1"),
            bytes_in: Some(172),
            bytes_out: Some(259),
            connection: ConnectionStatus::KeepAlive,
            log_id: Some("cemilqsVPhQ"),
            ..AccessDetails::default()
        };
        assert_eq!(
            render(fmt, &e, &d),
            "127.0.0.1|127.0.0.1|127.0.0.1|127.0.0.1|-|-|1795243022|412|\
             GET /sub/a.txt?x=1 HTTP/1.1|200|200|200|2|2|172|259|431|288|0|0|bogus|localhost|\
             127.0.0.1|80|18082|bogus|GET|HTTP/1.1|?x=1|/sub/a.txt|/tmp/ora/htdocs/sub/a.txt|+|0|\
             cemilqsVPhQ|-|v1, v\\\"2\\\\ \\xc3\\xa9|text/plain|a=1, b=2|bar baz|-|-|\
             v1, v\\\"2\\\\ \\xc3\\xa9|-|-|%|a\tb\\qc\\d\"e\n\n"
        );
    }

    #[test]
    fn missing_values_and_conditions() {
        let req = request("GET", "/nonexist", &[("X-A", b"v")]);
        let headers = vec![(
            "Content-Type".into(),
            "text/html; charset=iso-8859-1".into(),
        )];
        let e = entry(Some(&req), 404, 236, &headers);
        let fmt = "%q|%U|%f|%X|%{Content-Type}o|%200{X-A}i|%!200{X-A}i|%!404,500{X-A}i|%R|%^FB";
        // Without details %U comes from the target; %f, %R, %^FB have no value.
        assert_eq!(
            render(fmt, &e, &AccessDetails::default()),
            "|/nonexist|-|-|text/html|-|v|-|-|-\n"
        );
        // No request at all: only the connection is known (%q is empty, not "-").
        let e = entry(None, 400, 266, &[]);
        assert_eq!(
            render("%h %r %m %U %q %>s %b", &e, &AccessDetails::default()),
            "127.0.0.1 - - -  400 266\n"
        );
        // Internal redirect: %s is the original status, %>s the final one.
        let d = AccessDetails {
            original_status: Some(404),
            ..Default::default()
        };
        let e = entry(Some(&req), 200, 5, &[]);
        assert_eq!(render("%s %<s %>s", &e, &d), "404 404 200\n");
    }

    #[test]
    fn derived_defaults() {
        let mut req = request("GET", "/a?b", &[("Host", b"EXAMPLE.com.:8080")]);
        req.peer = "[::ffff:10.1.2.3]:999".parse().unwrap();
        let mut e = entry(Some(&req), 200, 1, &[]);
        e.remote = req.remote();
        let d = AccessDetails {
            server_name: Some("localhost"),
            ..Default::default()
        };
        assert_eq!(
            render("%a %h %V %v %p %U %q", &e, &d),
            "10.1.2.3 10.1.2.3 example.com localhost 80 /a ?b\n"
        );
        let req = request("GET", "/", &[]);
        let e = entry(Some(&req), 200, 1, &[]);
        assert_eq!(
            render("%V|%{REMOTE}p|%{x}P|%{X}T|%{US}T", &e, &d),
            "localhost|43232|x|X|288\n"
        );
    }

    #[test]
    fn user() {
        let req = request("GET", "/", &[]);
        let mut e = entry(Some(&req), 200, 1, &[]);
        assert_eq!(render("%u", &e, &AccessDetails::default()), "-\n");
        e.remote_user = Some("");
        assert_eq!(render("%u", &e, &AccessDetails::default()), "\"\"\n");
        e.remote_user = Some("j\"o");
        assert_eq!(render("%u", &e, &AccessDetails::default()), "j\\\"o\n");
    }

    #[test]
    fn request_line_hides_password() {
        let req = request("GET", "http://u:p@h:8080/sub/a.txt?q=1#f", &[]);
        let e = entry(Some(&req), 400, 266, &[]);
        assert_eq!(
            render("%r", &e, &AccessDetails::default()),
            "GET http://u:XXXXXXXX@h:8080/sub/a.txt?q=1#f HTTP/1.1\n"
        );
        let req = request("GET", "http://u:p@h:80/", &[]);
        let e = entry(Some(&req), 400, 266, &[]);
        assert_eq!(
            render("%r", &e, &AccessDetails::default()),
            "GET http://u:XXXXXXXX@h/ HTTP/1.1\n"
        );
        let req = request("GET", "/a@b", &[]);
        let e = entry(Some(&req), 404, 1, &[]);
        assert_eq!(
            render("%r", &e, &AccessDetails::default()),
            "GET /a@b HTTP/1.1\n"
        );
    }

    #[test]
    fn compile_errors_are_apaches() {
        let err = |f: &str| LogFormat::compile(f).unwrap_err();
        assert_eq!(err("%Z"), "Unrecognized LogFormat directive %Z");
        assert_eq!(err("%x"), "Unrecognized LogFormat directive %x");
        assert_eq!(err("%^FZ"), "Unrecognized LogFormat directive %^");
        assert_eq!(err("%^t"), "Unrecognized LogFormat directive %^");
        assert_eq!(err("%\u{e9}"), "Unrecognized LogFormat directive %\\xc3");
        for f in ["%{abc", "abc %", "%>", "%{x}", "%!"] {
            assert_eq!(err(f), RAN_OFF, "{f}");
        }
        assert!(LogFormat::compile("%^ti %^to %^FB %{x}P %>s %<U %400,501!{Referer}i").is_ok());
    }

    #[test]
    fn time_formats() {
        let req = request("GET", "/", &[]);
        let e = entry(Some(&req), 200, 1, &[]);
        let d = AccessDetails::default();
        assert_eq!(
            render("%{msec}t %{usec}t %{usec_frac}t", &e, &d),
            "1795243022412 1795243022412345 412345\n"
        );
        // end: is the time of logging (arrival + 288 µs).
        assert_eq!(
            render("%{end:usec_frac}t %{begin:msec_frac}t", &e, &d),
            "412633 412\n"
        );
        // strftime, seconds being the same in every time zone.
        assert_eq!(render("%{x%Sy}t %{begin:%S}t", &e, &d), "x02y 02\n");
        // Not a keyword after begin/end: a strftime format of its own.
        assert_eq!(render("%{beginx}t %{msecx}t", &e, &d), "beginx msecx\n");
        let mut tm: libc::tm = unsafe { std::mem::zeroed() };
        let t: libc::time_t = 1_795_243_022;
        unsafe { libc::gmtime_r(&t, &mut tm) };
        let mut s = String::new();
        clf_time(&tm, &mut s);
        assert_eq!(s, "[21/Nov/2026:06:37:02 +0000]");
        tm.tm_gmtoff = -(3 * 3600 + 30 * 60);
        s.clear();
        clf_time(&tm, &mut s);
        assert_eq!(s, "[21/Nov/2026:06:37:02 -0330]");
        s.clear();
        ctime_usec(&tm, 245_137, &mut s);
        assert_eq!(s, "Sat Nov 21 06:37:02.245137 2026");
    }

    #[test]
    fn cookies() {
        let find = |h: &str, n: &str| {
            find_cookie(h.as_bytes(), n.as_bytes()).map(|v| String::from_utf8(v.to_vec()).unwrap())
        };
        assert_eq!(
            find("foo = bar baz ; x=y", "foo").as_deref(),
            Some("bar baz")
        );
        assert_eq!(find("foo = bar baz ; x=y", "X").as_deref(), Some("y"));
        assert_eq!(find("a=b=c", "a").as_deref(), Some("b=c"));
        assert_eq!(find("a=; a=2", "a").as_deref(), Some("2"));
        assert_eq!(find(";;=a=1", "a").as_deref(), Some("1"));
        assert_eq!(find("==; a=4", "a").as_deref(), Some("4"));
        assert_eq!(find("ab=1", "a"), None);
        assert_eq!(find(" A = x y ;foo=", "a").as_deref(), Some("x y"));
        assert_eq!(find(" A = x y ;foo=", "foo"), None);
    }

    #[test]
    fn log_item_escaping() {
        let mut out = Vec::new();
        escape_log_item(b"a\"b\\c\x08\n\r\t\x0b\x01\x7f\xff ~", &mut out);
        assert_eq!(out, b"a\\\"b\\\\c\\b\\n\\r\\t\\v\\x01\\x7f\\xff ~");
    }

    const PREFIX_TIME: &str = "Sat Nov 21 06:37:06.331008 2026";

    fn masked_error(r: &ErrorRecord<'_>) -> String {
        let line = r.render();
        assert_eq!(line.as_bytes()[0], b'[');
        format!("[{PREFIX_TIME}]{}", &line[PREFIX_TIME.len() + 2..])
    }

    #[test]
    fn error_lines() {
        let r = ErrorRecord {
            time: Some(SystemTime::now()),
            level: "error",
            module: "core",
            pid: 32355,
            tid: Some(32387),
            errno: None,
            client: Some("127.0.0.1:43232".parse().unwrap()),
            message: b"AH10244: invalid URI path (/../\"x\\y)",
            referer: Some(b"http://ref/\"q\""),
        };
        assert_eq!(
            masked_error(&r),
            "[Sat Nov 21 06:37:06.331008 2026] [core:error] [pid 32355:tid 32387] \
             [client 127.0.0.1:43232] AH10244: invalid URI path (/../\"x\\\\y), referer: http://ref/\"q\""
        );
        let r = ErrorRecord {
            level: "crit",
            errno: Some(13),
            tid: None,
            client: Some("[::1]:5555".parse().unwrap()),
            message: b"AH00529: /x/.htaccess pcfg_openfile: unable to check htaccess file",
            referer: Some(b""),
            ..r
        };
        assert_eq!(
            masked_error(&r),
            "[Sat Nov 21 06:37:06.331008 2026] [core:crit] [pid 32355] (13)Permission denied: \
             [client ::1:5555] AH00529: /x/.htaccess pcfg_openfile: unable to check htaccess file"
        );
        // An OS error leading the message goes before the client.
        let line = error_log_line(
            SystemTime::now(),
            "crit",
            "core",
            7,
            Some(8),
            Some("127.0.0.1:9".parse().unwrap()),
            "(40)Too many levels of symbolic links: AH00529: /x/.htaccess pcfg_openfile",
        );
        assert!(
            line.ends_with(
                "[pid 7:tid 8] (40)Too many levels of symbolic links: [client 127.0.0.1:9] AH00529: /x/.htaccess pcfg_openfile"
            ),
            "{line}"
        );
        // Not an OS error's own text: left in the message.
        let line = error_log_line(
            SystemTime::now(),
            "crit",
            "core",
            7,
            Some(8),
            None,
            "(40)x: m",
        );
        assert!(line.ends_with("[pid 7:tid 8] (40)x: m"), "{line}");
        let line = error_log_line(SystemTime::now(), "alert", "core", 7, Some(8), None, "m\n");
        assert!(
            line.ends_with("] [core:alert] [pid 7:tid 8] m\\n"),
            "{line}"
        );
    }

    #[test]
    fn paths_that_are_not_utf8_are_logged_as_their_bytes() {
        let path = crate::path_text::from_bytes(b"/srv/caf\xe9/x".to_vec());
        let line = error_log_line(
            SystemTime::now(),
            "info",
            "core",
            7,
            None,
            None,
            format!("AH00128: File does not exist: {path}"),
        );
        assert!(
            line.ends_with("AH00128: File does not exist: /srv/caf\\xe9/x"),
            "{line}"
        );
    }

    #[test]
    fn long_error_lines_are_cut_like_apaches() {
        // A 7.5 KB target refused with AH10244: Apache wrote 8189 bytes
        // (plus the newline), stopping before an escape that did not fit,
        // and dropped the referer.
        let mut target = b"/..".to_vec();
        for _ in 0..2000 {
            target.extend_from_slice(b"/\xc3\xa9");
        }
        target.extend_from_slice(&[b'Z'; 1500]);
        let mut message = b"AH10244: invalid URI path (".to_vec();
        message.extend_from_slice(&target);
        message.push(b')');
        let r = ErrorRecord {
            time: Some(SystemTime::now()),
            level: "error",
            module: "core",
            pid: 32356,
            tid: Some(32363),
            errno: None,
            client: Some("127.0.0.1:43234".parse().unwrap()),
            message: &message,
            referer: Some(b"http://x/"),
        };
        let line = r.render();
        assert_eq!(line.len(), 8189);
        assert!(
            line.ends_with("/\\xc3\\xa9/\\xc3\\xa9/"),
            "{}",
            &line[line.len() - 40..]
        );
    }
}
