//! The values of `Header`/`RequestHeader`: format strings with `%`
//! specifiers (mod_headers' own small language, not `LogFormat`'s), or
//! `expr=` string expressions, expanded when the edit runs.

use super::edit::{View, Work};
use crate::expr::{RequestExpr, StrExpr};
use crate::request::Ctx;

/// One piece of a format string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Tag {
    Text(String),
    /// `%D`: `D=` and the microseconds since the request arrived.
    Duration,
    /// `%t`: `t=` and the request time in microseconds since the epoch.
    Time,
    /// `%{VAR}e`.
    Env(String),
    /// `%{VAR}s`: an SSL variable.
    Ssl(String),
    /// `%l`: the load averages.
    LoadAvg,
}

/// A value, a replacement (`edit`) or a note name.
#[derive(Debug)]
pub(super) enum Value {
    None,
    Format(Vec<Tag>),
    /// `expr=…`: a string expression.
    Expr(StrExpr),
}

impl Value {
    /// Parse a value as written; `restricted` for a `.htaccess`.
    pub(super) fn parse(s: &str, restricted: bool) -> Result<Value, String> {
        match s.strip_prefix("expr=") {
            Some(e) => StrExpr::parse_restricted(e, restricted)
                .map(Value::Expr)
                .map_err(|err| format!("Can't parse value expression : {err}")),
            None => parse_format(s).map(Value::Format),
        }
    }
}

/// Split a value into literal text and `%` specifiers (Apache's
/// `parse_format_string`). In text, `\\`, `\r`, `\n` and `\t` are escapes;
/// any other backslash stays.
pub(super) fn parse_format(s: &str) -> Result<Vec<Tag>, String> {
    let b = s.as_bytes();
    let mut tags = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            let mut text = Vec::new();
            while i < b.len() && b[i] != b'%' {
                if b[i] != b'\\' {
                    text.push(b[i]);
                    i += 1;
                    continue;
                }
                i += 1;
                match b.get(i) {
                    Some(b'\\') => text.push(b'\\'),
                    Some(b'r') => text.push(b'\r'),
                    Some(b'n') => text.push(b'\n'),
                    Some(b't') => text.push(b'\t'),
                    _ => {
                        text.push(b'\\');
                        continue;
                    }
                }
                i += 1;
            }
            tags.push(Tag::Text(String::from_utf8_lossy(&text).into_owned()));
            continue;
        }
        i += 1;
        if i >= b.len() || b[i] == b'%' {
            tags.push(Tag::Text("%".into()));
            i += 1;
            continue;
        }
        let mut arg = String::new();
        if b[i] == b'{' {
            i += 1;
            let start = i;
            while i < b.len() && b[i] != b'}' {
                i += 1;
            }
            arg = String::from_utf8_lossy(&b[start..i]).into_owned();
            // `ap_getword` skips every stop character that follows.
            while i < b.len() && b[i] == b'}' {
                i += 1;
            }
        }
        let letter = b.get(i).copied();
        i += 1;
        tags.push(match letter {
            Some(b'D') => Tag::Duration,
            Some(b't') => Tag::Time,
            Some(b'e') => Tag::Env(arg),
            Some(b's') => Tag::Ssl(arg),
            Some(b'l') => Tag::LoadAvg,
            Some(c @ (b'i' | b'b')) => {
                return Err(format!(
                "Header format %{} (worker counts of the scoreboard) is not supported by htaccel",
                char::from(c)
            ))
            }
            Some(c) => {
                let shown = s[i - 1..].chars().next().unwrap_or(char::from(c));
                return Err(format!("Unrecognized header format %{shown}"));
            }
            None => return Err("Unrecognized header format %".into()),
        });
    }
    Ok(tags)
}

/// What values read: the request, and the response status for `expr=`.
pub(super) struct Vars<'r, 'c> {
    pub ctx: &'r Ctx<'c>,
    /// `REQUEST_STATUS` for expressions (`None`: before the handler).
    pub status: Option<u16>,
    pub now_us: i64,
}

impl<'r, 'c> Vars<'r, 'c> {
    pub fn new(ctx: &'r Ctx<'c>, status: Option<u16>) -> Self {
        Vars {
            ctx,
            status,
            now_us: ctx.engine.request_time_us(),
        }
    }

    /// The request as expressions see it, with the tables of `work`.
    pub fn view<'w>(&self, work: &'w Work) -> View<'w, 'r, 'c> {
        let base = match self.status {
            Some(s) => RequestExpr::with_status(self.ctx, s),
            None => RequestExpr::new(self.ctx),
        };
        View { base, work }
    }

    /// The value of `value` now.
    pub fn expand(&self, value: &Value, work: &Work) -> Vec<u8> {
        let tags = match value {
            Value::None => return Vec::new(),
            Value::Expr(e) => {
                if let Some(c) = e.constant() {
                    return c.to_vec();
                }
                return match e.eval(&self.view(work)).value {
                    Ok(v) => v,
                    Err(err) => {
                        self.log(&format!("AH02557: Can't evaluate value expression: {err}"));
                        Vec::new()
                    }
                };
            }
            Value::Format(tags) => tags,
        };
        let ctx = self.ctx;
        let mut out = Vec::new();
        for tag in tags {
            match tag {
                Tag::Text(t) => out.extend_from_slice(t.as_bytes()),
                Tag::Duration => out.extend_from_slice(
                    format!("D={}", self.now_us - ctx.request_time_us()).as_bytes(),
                ),
                Tag::Time => {
                    out.extend_from_slice(format!("t={}", ctx.request_time_us()).as_bytes())
                }
                Tag::Env(name) => match ctx.env.get(name) {
                    Some(v) => out.extend(unwrap_header(v.as_bytes())),
                    None => out.extend_from_slice(b"(null)"),
                },
                // mod_ssl's variables (`ap_ssl_var_lookup`): none
                // without mod_ssl loaded; an unset or empty one is `(null)`.
                Tag::Ssl(name) => {
                    let value = ctx
                        .site
                        .env
                        .is_loaded("ssl_module")
                        .then(|| crate::modules::ssl::vars::lookup(ctx.req, name))
                        .flatten()
                        .filter(|v| !v.is_empty());
                    match value {
                        Some(v) => out.extend(unwrap_header(v.as_bytes())),
                        None => out.extend_from_slice(b"(null)"),
                    }
                }
                Tag::LoadAvg => out.extend_from_slice(load_average().as_bytes()),
            }
        }
        out
    }

    /// An error-log line about this request.
    pub fn log(&self, message: &str) {
        let ctx = self.ctx;
        ctx.site
            .log
            .error("error", "headers", Some(ctx.req.remote()), message);
    }
}

/// Line breaks in a variable become spaces, so a value cannot split a header.
fn unwrap_header(v: &[u8]) -> impl Iterator<Item = u8> + '_ {
    v.iter()
        .map(|&c| if c == b'\r' || c == b'\n' { b' ' } else { c })
}

fn load_average() -> String {
    let mut l = [0f64; 3];
    // SAFETY: getloadavg writes at most the 3 elements it is given.
    let n = unsafe { libc::getloadavg(l.as_mut_ptr(), 3) };
    if n < 3 {
        l = [-1.0; 3];
    }
    format!("l={:.2}/{:.2}/{:.2}", l[0], l[1], l[2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_strings() {
        let t = |s: &str| parse_format(s).unwrap();
        assert_eq!(
            t("a%{X}eb"),
            vec![
                Tag::Text("a".into()),
                Tag::Env("X".into()),
                Tag::Text("b".into())
            ]
        );
        assert_eq!(
            t("100%%"),
            vec![Tag::Text("100".into()), Tag::Text("%".into())]
        );
        assert_eq!(t("x%"), vec![Tag::Text("x".into()), Tag::Text("%".into())]);
        assert_eq!(t(r"a\tb\q"), vec![Tag::Text("a\tb\\q".into())]);
        assert_eq!(t("%{A}}e"), vec![Tag::Env("A".into())]);
        assert_eq!(
            t("%D %t"),
            vec![Tag::Duration, Tag::Text(" ".into()), Tag::Time]
        );
        assert_eq!(
            parse_format("%z"),
            Err("Unrecognized header format %z".into())
        );
        assert_eq!(
            parse_format("%{x}"),
            Err("Unrecognized header format %".into())
        );
        assert!(parse_format("%i").is_err());
    }
}
