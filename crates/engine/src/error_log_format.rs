//! `ErrorLogFormat`: the items of an error-log line, parsed and rendered as
//! Apache's core parses them (`parse_errorlog_string`) and its error log
//! writes them (`do_errorlog_format`).
//!
//! A format is a list of items: text, `%M` (the message), and `%X` or
//! `%{arg}X` with optional flags: `-` writes `-` for an empty item, `+`
//! (not in the main format) drops the whole line when the item is empty, a
//! number is the least log level the item is shown at. `% ` (percent and a
//! space) and a space before text start a field: an empty item, or one
//! below its level, removes its field up to the next field start.
//!
//! The items htaccel knows at the moment a line is written are rendered;
//! `%k` (keep-alive count), `%L` (log ids) and `%n` (notes) are refused
//! where the format is read, as are the once-per-connection and
//! once-per-request formats (`ErrorLogFormat connection|request …`).
//! `%F` (Apache's C source file and line) is always empty: htaccel has no
//! such files, so the item is left out (or `-`) as Apache leaves it out
//! of a line without one.

use crate::http::ErrorEvent;
use crate::log_format::{
    escape_error_item, split_os_error, status_text, time_text, TimeText, LEVELS,
};
use std::fmt::Write as _;
use std::time::SystemTime;

/// Apache's buffer for one error-log line.
const MAX_STRING_LEN: usize = 8192;

/// A level's number (0 `emerg` … 15 `trace8`).
fn level_number(level: &str) -> usize {
    LEVELS
        .iter()
        .position(|l| l.eq_ignore_ascii_case(level))
        .unwrap_or(7)
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind {
    Text(String),
    Message,
    /// `%a`: the client (`%{c}a`: the connection's peer, the same here).
    RemoteAddr,
    /// `%A`: the local address.
    LocalAddr,
    /// `%{NAME}e`.
    Env,
    /// `%E`: the OS error behind the message.
    Status,
    /// `%F`: Apache's source file and line; never known here.
    SourceFile,
    /// `%{NAME}i`.
    Header,
    Level,
    Module,
    Pid,
    Time,
    Tid,
    /// `%v`: the server's `ServerName`.
    VirtualHost,
    /// `%V`: the name the request used (`ap_get_server_name`).
    ServerName,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Item {
    kind: Kind,
    arg: Option<String>,
    field_start: bool,
    required: bool,
    hyphen: bool,
    min_level: usize,
}

/// A parsed main `ErrorLogFormat`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorLogFormat {
    items: Vec<Item>,
}

/// What a line shows beyond the event: the process, the thread, the
/// moment, and the server whose log it is.
pub struct LineFacts<'a> {
    pub time: SystemTime,
    pub pid: u32,
    /// `gettid()`, for `%{g}T`.
    pub tid: u64,
    /// The thread's `pthread_t`, for `%T` (Apache's `%pT`).
    pub thread: u64,
    /// `%v` when the event names no server.
    pub server_name: &'a str,
}

impl ErrorLogFormat {
    /// Parse the one-argument form of `ErrorLogFormat`.
    pub fn parse(text: &str) -> Result<ErrorLogFormat, String> {
        let mut items = Vec::new();
        let mut rest = text;
        let mut message = false;
        while !rest.is_empty() {
            let item = parse_item(&mut rest)?;
            if item.kind == Kind::Message {
                message = true;
            }
            if item.required {
                return Err("The '+' flag cannot be used in the main error log format".into());
            }
            if item.min_level >= LEVELS.len() {
                return Err("The specified loglevel modifier is out of range".into());
            }
            items.push(item);
        }
        if !message {
            return Err("main ErrorLogFormat must contain message format string '%M'".into());
        }
        Ok(ErrorLogFormat { items })
    }

    /// The line for `event`, without its newline; `None` when an item
    /// flagged `+` is empty (never in a main format).
    pub fn render(&self, event: &ErrorEvent<'_>, facts: &LineFacts<'_>) -> Option<String> {
        let level = level_number(event.level);
        let (errno, message) = split_os_error(event.message.as_bytes());
        let mut line = String::with_capacity(200 + message.len());
        let mut field_start = 0;
        let mut skipping = false;
        for item in &self.items {
            if item.field_start {
                if skipping {
                    skipping = false;
                } else {
                    field_start = line.len();
                }
            }
            if item.kind == Kind::Message {
                let message = std::str::from_utf8(message)
                    .map_or(std::borrow::Cow::Borrowed(message), crate::path_text::bytes);
                let room = MAX_STRING_LEN.saturating_sub(line.len());
                escape_error_item(
                    &message[..message.len().min(MAX_STRING_LEN - 1)],
                    room,
                    &mut line,
                );
                continue;
            }
            if skipping {
                continue;
            }
            if item.min_level > level {
                line.truncate(field_start);
                skipping = true;
                continue;
            }
            let before = line.len();
            render_item(item, event, errno, facts, &mut line);
            if line.len() == before {
                if item.required {
                    return None;
                } else if item.hyphen {
                    line.push('-');
                } else {
                    line.truncate(field_start);
                    skipping = true;
                }
            }
        }
        let mut end = line.len().min(MAX_STRING_LEN - 2);
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        line.truncate(end);
        Some(line)
    }
}

fn render_item(
    item: &Item,
    event: &ErrorEvent<'_>,
    errno: Option<i32>,
    facts: &LineFacts<'_>,
    out: &mut String,
) {
    let arg = item.arg.as_deref();
    match &item.kind {
        Kind::Text(t) => out.push_str(t),
        Kind::Message => {}
        Kind::RemoteAddr => {
            if let Some(c) = event.client {
                let _ = write!(out, "{}:{}", c.ip().to_canonical(), c.port());
            }
        }
        Kind::LocalAddr => {
            if let Some(l) = event.request.map(|r| r.local) {
                let _ = write!(out, "{}:{}", l.ip().to_canonical(), l.port());
            }
        }
        Kind::Env => {
            let value = event.env.and_then(|e| e.get_unrecorded(arg.unwrap_or("")));
            if let Some(v) = value {
                escape_error_item(v.as_bytes(), MAX_STRING_LEN, out);
            }
        }
        Kind::Status => {
            if let Some(code) = errno {
                let _ = write!(out, "({code}){}", status_text(code));
            }
        }
        Kind::SourceFile => {}
        Kind::Header => {
            let value = event
                .request
                .and_then(|r| r.headers.get_joined(arg.unwrap_or("")));
            if let Some(v) = value {
                escape_error_item(&v, MAX_STRING_LEN, out);
            }
        }
        Kind::Level => out.push_str(event.level),
        Kind::Module => out.push_str(event.module),
        Kind::Pid => {
            let _ = write!(out, "{}", facts.pid);
        }
        Kind::Time => out.push_str(&time_item(arg, facts.time)),
        Kind::Tid => {
            let _ = match arg {
                Some(a) if a.starts_with('g') => write!(out, "{}", facts.tid),
                _ => write!(out, "{}", facts.thread),
            };
        }
        Kind::VirtualHost => out.push_str(event.server_name.unwrap_or(facts.server_name)),
        Kind::ServerName => {
            if let Some(req) = event.request {
                let name = event.server_name.unwrap_or(facts.server_name);
                out.push_str(&crate::engine::server_name_for(
                    req,
                    name,
                    event.canonical_name,
                ));
            }
        }
    }
}

/// `%t`, `%{u}t`, `%{cuz}t` (compact, microseconds, offset from UTC) or
/// `%{strftime format}t`.
fn time_item(arg: Option<&str>, t: SystemTime) -> String {
    let mut text = TimeText::default();
    match arg {
        Some(a) if a.contains('%') => return crate::log_format::strftime_local(a, t),
        Some(a) => {
            text.usec = a.contains('u');
            text.compact = a.contains('c');
            text.gmtoff = a.contains('z');
        }
        None => {}
    }
    time_text(t, &text)
}

/// One item from the front of `rest` (`parse_errorlog_item`).
fn parse_item(rest: &mut &str) -> Result<Item, String> {
    let mut item = Item {
        kind: Kind::Text(String::new()),
        arg: None,
        field_start: false,
        required: false,
        hyphen: false,
        min_level: 0,
    };
    let s = *rest;
    if !s.starts_with('%') {
        item.field_start = s.starts_with(' ');
        item.kind = Kind::Text(parse_text(rest));
        return Ok(item);
    }
    let mut s = &s[1..];
    if let Some(after) = s.strip_prefix(' ') {
        // `% `: a field starts with the next item.
        *rest = after;
        if after.is_empty() {
            return Ok(Item {
                field_start: true,
                ..item
            });
        }
        let mut next = parse_item(rest)?;
        next.field_start = true;
        return Ok(next);
    }
    if let Some(after) = s.strip_prefix('%') {
        item.kind = Kind::Text("%".into());
        *rest = after;
        return Ok(item);
    }
    loop {
        let Some(c) = s.chars().next() else {
            return Err("Ran off end of error log format parsing args to some directive".into());
        };
        match c {
            '{' => {
                let inner = &s[1..];
                let (arg, after) = match inner.find('}') {
                    Some(i) => (&inner[..i], &inner[i + 1..]),
                    None => (inner, ""),
                };
                item.arg = Some(arg.to_string());
                s = after;
            }
            '+' => {
                item.required = true;
                s = &s[1..];
            }
            '-' => {
                item.hyphen = true;
                s = &s[1..];
            }
            '0'..='9' => {
                let digits = s.bytes().take_while(u8::is_ascii_digit).count();
                item.min_level = s[..digits].parse().unwrap_or(usize::MAX);
                s = &s[digits..];
            }
            _ => {
                item.kind = match c {
                    'M' => Kind::Message,
                    'a' => Kind::RemoteAddr,
                    'A' => Kind::LocalAddr,
                    'e' => Kind::Env,
                    'E' => Kind::Status,
                    'F' => Kind::SourceFile,
                    'i' => Kind::Header,
                    'l' => Kind::Level,
                    'm' => Kind::Module,
                    'P' => Kind::Pid,
                    't' => Kind::Time,
                    'T' => Kind::Tid,
                    'v' => Kind::VirtualHost,
                    'V' => Kind::ServerName,
                    'k' | 'L' | 'n' => {
                        return Err(format!(
                            "ErrorLogFormat %{c} is not supported by htaccel yet (keep-alive counts, log ids and request notes are not known where htaccel writes an error-log line)"
                        ))
                    }
                    other => {
                        return Err(format!("Unrecognized error log format directive %{other}"))
                    }
                };
                *rest = &s[c.len_utf8()..];
                return Ok(item);
            }
        }
    }
}

/// Text up to the next `%` or the next space after something else
/// (`parse_errorlog_misc_string`), with `\r`, `\n`, `\t` and `\X`
/// escapes.
fn parse_text(rest: &mut &str) -> String {
    let mut out = String::new();
    let mut at_start = true;
    let mut chars = rest.char_indices().peekable();
    let mut end = rest.len();
    while let Some(&(i, c)) = chars.peek() {
        if c == '%' || (c == ' ' && !at_start) || out.len() >= MAX_STRING_LEN {
            end = i;
            break;
        }
        chars.next();
        if c != '\\' {
            if c != ' ' {
                at_start = false;
            }
            out.push(c);
            continue;
        }
        match chars.next() {
            None => out.push('\\'),
            Some((_, 'r')) => out.push('\r'),
            Some((_, 'n')) => out.push('\n'),
            Some((_, 't')) => out.push('\t'),
            Some((_, other)) => out.push(other),
        }
    }
    *rest = &rest[end..];
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::Request;

    fn event<'a>(message: &'a str, request: Option<&'a Request>) -> ErrorEvent<'a> {
        ErrorEvent {
            level: "error",
            module: "authz_core",
            client: Some("127.0.0.1:4242".parse().unwrap()),
            message,
            request,
            env: None,
            server_name: Some("a.example"),
            canonical_name: false,
        }
    }

    fn facts() -> LineFacts<'static> {
        LineFacts {
            time: SystemTime::UNIX_EPOCH,
            pid: 7,
            tid: 8,
            thread: 9,
            server_name: "main.example",
        }
    }

    fn render(format: &str, e: &ErrorEvent<'_>) -> String {
        ErrorLogFormat::parse(format)
            .unwrap()
            .render(e, &facts())
            .unwrap()
    }

    #[test]
    fn debians_commented_format() {
        let f =
            r"[%{u}t] [%-m:%l] [pid %P:tid %T] %7F: %E: [client\ %a] %M% ,\ referer\ %{Referer}i";
        let mut req = crate::test_support::request("GET", "/", "www.a.example");
        let line = render(f, &event("AH01630: client denied", Some(&req)));
        // `%7F` is below the line's level and `%E` empty: both fields go;
        // no Referer: its field goes.
        assert!(
            line.ends_with(
                "] [authz_core:error] [pid 7:tid 9] [client 127.0.0.1:4242] AH01630: client denied"
            ),
            "{line}"
        );
        req.headers.push("Referer", "http://r/\"x\"");
        let line = render(f, &event("(13)Permission denied: AH00132: no", Some(&req)));
        assert!(
            line.ends_with("[pid 7:tid 9] (13)Permission denied: [client 127.0.0.1:4242] AH00132: no, referer http://r/\"x\""),
            "{line}"
        );
    }

    #[test]
    fn flags_and_items() {
        let e = event("m", None);
        assert_eq!(render("%-{X}e %M", &e), "- m");
        // `%V` and `%A` of a line about no request are empty: their
        // fields go.
        assert_eq!(render("%{g}T %P %v %V %A %M%%", &e), "8 7 a.example m%");
        let req = crate::test_support::request("GET", "/", "www.a.example:8080");
        let e = event("m", Some(&req));
        assert_eq!(render("%V %A %M", &e), "www.a.example 127.0.0.1:80 m");
        let e = ErrorEvent {
            canonical_name: true,
            ..e
        };
        assert_eq!(render("%V %M", &e), "a.example m");
        assert_eq!(render(r"a\tb\\ %M", &e), "a\tb\\ m");
    }

    #[test]
    fn refusals_as_apache_words_them() {
        let err = |f| ErrorLogFormat::parse(f).unwrap_err();
        assert_eq!(
            err("%t"),
            "main ErrorLogFormat must contain message format string '%M'"
        );
        assert_eq!(
            err("%+t %M"),
            "The '+' flag cannot be used in the main error log format"
        );
        assert_eq!(
            err("%16t %M"),
            "The specified loglevel modifier is out of range"
        );
        assert_eq!(err("%q %M"), "Unrecognized error log format directive %q");
        assert_eq!(
            err("%M %{x}"),
            "Ran off end of error log format parsing args to some directive"
        );
        assert!(err("%L %M").contains("not supported by htaccel yet"));
    }
}
