//! mod_setenvif: `SetEnvIf`, `SetEnvIfNoCase`, `BrowserMatch`,
//! `BrowserMatchNoCase`, `SetEnvIfExpr` — environment variables set from
//! what the request looks like.
//!
//! A condition tests one attribute of the request against a regex:
//! `Remote_Host`, `Remote_Addr`, `Server_Addr`, `Request_Method`,
//! `Request_Protocol`, `Request_URI`, a request header, the headers whose
//! *names* match a regex (when the attribute is not a plain header name),
//! or an environment variable set by an earlier condition. A pattern
//! without regex syntax is a plain substring search. `SetEnvIfExpr` tests
//! an ap_expr condition instead (its last regex match gives `$1`…, the
//! request headers it reads go to `Vary`). When a condition holds, the
//! listed variables are set (`var=value` with `$1`…`$9` from the match,
//! `var` as `1`) or removed (`!var`).
//!
//! Where a condition is written decides when it runs: at server or virtual
//! host level, right after the request was read (`post_read_request`),
//! before the URI is normalised — so `Request_URI` is the path as sent;
//! anywhere else (`<Directory>`, `<Location>`, `<Files>`, `.htaccess`),
//! in the header-parser phase, before access control, for the request and
//! its internal redirects but not for sub-requests. Lists merge by
//! appending the child's conditions to the parent's.
//!
//! Like Apache, consecutive conditions on the same attribute (spelled the
//! same way, up to case, in the same section) read the attribute once: a
//! variable set by the first is not seen by the next.

use crate::config::{Invocation, SectionKind, Walker};
use crate::dirconf::DirConf;
use crate::expr::{Captures, Expr, RequestExpr};
use crate::regex_engine::Regex;
use crate::registry::{Args, Directive, Module, Run, OR_FILEINFO};
use crate::regsub::pregsub;
use crate::request::Ctx;
use htaccel_conf::getword_conf;
use std::sync::Arc;

/// The module's per-directory slot.
#[derive(Clone, Debug, Default)]
pub struct SetEnvIfDir {
    pub conditions: Vec<Arc<Condition>>,
}

impl SetEnvIfDir {
    /// The parent's conditions, then the child's.
    pub fn merge(base: &SetEnvIfDir, add: &SetEnvIfDir) -> SetEnvIfDir {
        if add.conditions.is_empty() {
            return base.clone();
        }
        SetEnvIfDir {
            conditions: base
                .conditions
                .iter()
                .chain(&add.conditions)
                .cloned()
                .collect(),
        }
    }
}

/// What a condition looks at.
#[derive(Debug)]
enum Subject {
    RemoteAddr,
    RemoteHost,
    ServerAddr,
    RequestUri,
    RequestMethod,
    RequestProtocol,
    /// A request header, else an environment variable of that name.
    Header,
    /// The last request header whose name matches.
    HeaderNames(Regex),
}

#[derive(Debug)]
enum Matcher {
    /// A pattern without regex syntax: a substring search.
    Substring {
        needle: Vec<u8>,
        nocase: bool,
    },
    Regex(Regex),
}

/// What a line tests.
#[derive(Debug)]
enum Test {
    /// `SetEnvIf`, `BrowserMatch`: an attribute against a pattern.
    Attribute { subject: Subject, matcher: Matcher },
    /// `SetEnvIfExpr`.
    Expr(Expr),
}

/// One `SetEnvIf`-family line.
#[derive(Debug)]
pub struct Condition {
    /// The attribute as first written in its section; conditions sharing
    /// it (by pointer) read the attribute once when consecutive.
    name: Arc<str>,
    test: Test,
    /// Variables to set (`Some(template)`) or remove (`None`), in order.
    features: Vec<(String, Option<String>)>,
    /// Written at server or virtual-host level: runs in post_read_request.
    server: bool,
}

/// What the header-parser phase of a request tests conditions against.
struct Request<'a, 'c> {
    ctx: &'a Ctx<'c>,
    /// `r->uri` at the time the conditions run.
    uri: &'a str,
}

impl Request<'_, '_> {
    fn value(&self, c: &Condition, subject: &Subject) -> Option<Vec<u8>> {
        let req = self.ctx.req;
        match subject {
            Subject::RemoteAddr => Some(self.ctx.useragent_ip().to_string().into_bytes()),
            Subject::RemoteHost => Some(self.ctx.remote_name().into_bytes()),
            Subject::ServerAddr => Some(req.local.ip().to_string().into_bytes()),
            Subject::RequestUri => Some(crate::path_text::bytes(self.uri).into_owned()),
            Subject::RequestMethod => Some(self.ctx.method.as_bytes().to_vec()),
            Subject::RequestProtocol => Some(req.version.as_str().as_bytes().to_vec()),
            Subject::Header => match self.ctx.headers_in.get(&c.name) {
                Some(v) => Some(v.to_vec()),
                None => self.ctx.env.get(&c.name).map(|v| v.as_bytes().to_vec()),
            },
            Subject::HeaderNames(re) => self
                .ctx
                .headers_in
                .iter()
                .filter(|(n, _)| re.is_match(n.as_bytes()))
                .map(|(_, v)| v.to_vec())
                .last(),
        }
    }
}

/// Test `conditions` against the request and set or remove variables
/// (Apache's `match_headers`).
fn apply(ctx: &mut Ctx<'_>, conditions: &[Arc<Condition>], uri: &str) {
    let mut last: Option<&Arc<str>> = None;
    let mut value: Vec<u8> = Vec::new();
    for c in conditions {
        let (subject, matcher) = match &c.test {
            Test::Attribute { subject, matcher } => (subject, matcher),
            Test::Expr(expr) => {
                if let Some(caps) = test_expr(ctx, expr) {
                    let source = caps.source.unwrap_or_default();
                    set_features(ctx, c, &source, Some(&caps.spans));
                }
                continue;
            }
        };
        if last.is_none_or(|l| !Arc::ptr_eq(l, &c.name)) {
            last = Some(&c.name);
            let r = Request { ctx, uri };
            value = r.value(c, subject).unwrap_or_default();
        }
        let caps = match matcher {
            Matcher::Substring { needle, nocase } => {
                if !contains(&value, needle, *nocase) {
                    continue;
                }
                None
            }
            Matcher::Regex(re) => match re.captures(&value) {
                Some(caps) => Some(caps),
                None => continue,
            },
        };
        set_features(ctx, c, &value, caps.as_deref());
    }
}

/// Set or remove the variables of a condition that matched `value`;
/// `caps`: the regex match, when there was one (`$N` are filled in).
fn set_features(
    ctx: &mut Ctx<'_>,
    c: &Condition,
    value: &[u8],
    caps: Option<&[Option<(usize, usize)>]>,
) {
    for (var, template) in &c.features {
        let Some(t) = template else {
            ctx.env.unset(var);
            continue;
        };
        let v = match caps {
            Some(caps) => match pregsub(t.as_bytes(), value, caps) {
                Some(v) => crate::path_text::from_bytes(v),
                None => {
                    ctx.log_error("crit", "setenvif", &format!(
                        "AH01505: Regular expression replacement failed for '{var}', value too long?"
                    ));
                    continue;
                }
            },
            None => t.clone(),
        };
        ctx.env.set(var, v);
    }
}

/// Evaluate a `SetEnvIfExpr` condition: when true, the text and spans of
/// its last regex match (for `$1`…). A failure is logged and counts as
/// false; the request headers it read go to `Vary`.
fn test_expr(ctx: &mut Ctx<'_>, expr: &Expr) -> Option<Captures> {
    let outcome = expr.eval(&RequestExpr::new(ctx));
    match outcome.value {
        Err(err) => {
            ctx.log_error(
                "error",
                "setenvif",
                &format!(
                    "Evaluation of expression \"{}\" failed: {err}",
                    expr.source()
                ),
            );
            None
        }
        Ok(yes) => {
            if let Some(v) = outcome.vary {
                crate::modules::core::if_section::merge_vary(&mut ctx.headers_out, &v);
            }
            yes.then_some(outcome.captures)
        }
    }
}

fn contains(hay: &[u8], needle: &[u8], nocase: bool) -> bool {
    if needle.is_empty() {
        return true;
    }
    if nocase {
        hay.windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle))
    } else {
        memchr::memmem::find(hay, needle).is_some()
    }
}

/// `post_read_request`: the server-level conditions, against the path as
/// sent (after `Header … early`).
pub fn post_read_request(ctx: &mut Ctx<'_>) {
    let base = ctx.site.base.clone();
    let server: Vec<Arc<Condition>> = base
        .setenvif
        .conditions
        .iter()
        .filter(|c| c.server)
        .cloned()
        .collect();
    if server.is_empty() {
        return;
    }
    let uri = raw_uri(ctx);
    apply(ctx, &server, &uri);
}

/// `r->uri` before normalisation: the request's path as sent; for an
/// internal redirect, the URI redirected to.
fn raw_uri(ctx: &Ctx<'_>) -> String {
    if ctx.redirects > 0 {
        return ctx.uri.clone();
    }
    let opts = crate::uri::ParseOptions {
        strict: true,
        secure: ctx.req.secure,
    };
    crate::uri::parse_target(&ctx.req.method, &ctx.req.target, &opts)
        .map(|t| t.uri)
        .unwrap_or_else(|_| ctx.uri.clone())
}

/// `header_parser`: the per-directory conditions.
pub fn header_parser(ctx: &mut Ctx<'_>) {
    let conf = ctx.conf.clone();
    let list: Vec<Arc<Condition>> = conf
        .setenvif
        .conditions
        .iter()
        .filter(|c| !c.server)
        .cloned()
        .collect();
    if list.is_empty() {
        return;
    }
    let uri = ctx.uri.clone();
    apply(ctx, &list, &uri);
}

/// Whether the directive is read at server or virtual-host level (Apache:
/// `cmd->path == NULL`), where it goes to the server's list.
fn at_server_level(w: &Walker<'_>) -> bool {
    !w.ctx.htaccess
        && w.server.is_some()
        && w.ctx
            .sections
            .iter()
            .all(|s| matches!(s, SectionKind::VirtualHost | SectionKind::Limit))
}

/// A pattern without regex syntax, unescaped (Apache's
/// `non_regex_pattern`); `None` when it needs the regex engine.
fn plain_pattern(s: &str) -> Option<String> {
    let mut out = String::new();
    let mut escaped = false;
    for ch in s.chars() {
        match ch {
            '^' | '.' | '$' | '|' | '(' | ')' | '[' | ']' | '*' | '+' | '?' | '{' | '}' => {
                if !escaped {
                    return None;
                }
                escaped = false;
                out.push(ch);
            }
            '\\' => {
                if escaped {
                    out.push('\\');
                }
                escaped = !escaped;
            }
            _ => {
                if escaped {
                    return None;
                }
                out.push(ch);
            }
        }
    }
    // A lone trailing backslash is dropped, as in Apache's copy.
    Some(out)
}

fn add_condition(
    w: &mut Walker<'_>,
    c: &mut DirConf,
    cmd: &str,
    nocase: bool,
    fname: String,
    mut args: &str,
) -> Result<(), String> {
    let server = at_server_level(w);
    let regex = getword_conf(&mut args);
    if regex.is_empty() {
        return Err(format!("Missing regular expression for {cmd}"));
    }
    let list = &mut c.setenvif.conditions;
    // The attribute as first spelled in this section's list.
    let name: Arc<str> = list
        .iter()
        .find(|e| e.server == server && e.name.eq_ignore_ascii_case(&fname))
        .map(|e| e.name.clone())
        .unwrap_or_else(|| Arc::from(fname.as_str()));
    let matcher = match plain_pattern(&regex) {
        Some(needle) => Matcher::Substring {
            needle: needle.into_bytes(),
            nocase,
        },
        None => Matcher::Regex(
            Regex::new(&regex, nocase)
                .map_err(|_| format!("{cmd} regex could not be compiled."))?,
        ),
    };
    let special = |s: &str| fname.eq_ignore_ascii_case(s);
    let subject = if special("remote_addr") {
        Subject::RemoteAddr
    } else if special("remote_host") {
        Subject::RemoteHost
    } else if special("request_uri") {
        Subject::RequestUri
    } else if special("request_method") {
        Subject::RequestMethod
    } else if special("request_protocol") {
        Subject::RequestProtocol
    } else if special("server_addr") {
        Subject::ServerAddr
    } else if fname
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        Subject::Header
    } else {
        Subject::HeaderNames(
            Regex::new(&fname, nocase)
                .map_err(|_| format!("{cmd}Header name regex could not be compiled."))?,
        )
    };
    let features = parse_features(cmd, args)?;
    list.push(Arc::new(Condition {
        name,
        test: Test::Attribute { subject, matcher },
        features,
        server,
    }));
    Ok(())
}

/// The variable list: `var=value`, `!var`, `var` (set to `1`; `var=` too).
/// A value starting with `!` removes the variable, as in Apache.
fn parse_features(cmd: &str, mut args: &str) -> Result<Vec<(String, Option<String>)>, String> {
    let mut features: Vec<(String, Option<String>)> = Vec::new();
    let mut any = false;
    loop {
        let word = getword_conf(&mut args);
        if word.is_empty() {
            break;
        }
        any = true;
        let (var, value) = match word.find('=') {
            Some(i) => (&word[..i], &word[i + 1..]),
            None => (word.as_str(), ""),
        };
        let (var, value) = if !value.is_empty() {
            (
                var,
                value.strip_prefix('!').is_none().then(|| value.to_string()),
            )
        } else if let Some(v) = var.strip_prefix('!') {
            (v, None)
        } else {
            (var, Some("1".to_string()))
        };
        // Later mentions of a variable replace earlier ones, in place.
        match features
            .iter_mut()
            .find(|(n, _)| n.eq_ignore_ascii_case(var))
        {
            Some(slot) => slot.1 = value,
            None => features.push((var.to_string(), value)),
        }
    }
    if !any {
        return Err(format!("Missing envariable expression for {cmd}"));
    }
    Ok(features)
}

fn set_env_if(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
    cmd: &str,
    nocase: bool,
) -> Result<(), String> {
    let mut args = inv.raw.as_str();
    let fname = getword_conf(&mut args);
    if fname.is_empty() {
        return Err(format!("Missing header-field name for {cmd}"));
    }
    add_condition(w, c, cmd, nocase, fname, args)
}

fn browser_match(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
    cmd: &str,
    nocase: bool,
) -> Result<(), String> {
    add_condition(w, c, cmd, nocase, "User-Agent".to_string(), &inv.raw)
}

fn set_env_if_expr(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
) -> Result<(), String> {
    let server = at_server_level(w);
    let mut args = inv.raw.as_str();
    let text = getword_conf(&mut args);
    if text.is_empty() {
        return Err("Missing expression for SetEnvIfExpr".into());
    }
    let expr = Expr::parse_restricted(&text, w.ctx.htaccess)
        .map_err(|err| format!("Could not parse expression \"{text}\": {err}"))?;
    let features = parse_features("SetEnvIfExpr", args)?;
    c.setenvif.conditions.push(Arc::new(Condition {
        // Never shared: an expression reads no single attribute.
        name: Arc::from(""),
        test: Test::Expr(expr),
        features,
        server,
    }));
    Ok(())
}

pub static DIRECTIVES: &[Directive] = &[
    Directive {
        name: "SetEnvIf",
        args: Args::Raw,
        req_override: OR_FILEINFO,
        about: "A header-name, regex and a list of variables.",
        run: Run::Handler(|w, inv, c| set_env_if(w, inv, c, "SetEnvIf", false)),
    },
    Directive {
        name: "SetEnvIfNoCase",
        args: Args::Raw,
        req_override: OR_FILEINFO,
        about: "a header-name, regex and a list of variables.",
        run: Run::Handler(|w, inv, c| set_env_if(w, inv, c, "SetEnvIfNoCase", true)),
    },
    Directive {
        name: "SetEnvIfExpr",
        args: Args::Raw,
        req_override: OR_FILEINFO,
        about: "an expression and a list of variables.",
        run: Run::Handler(set_env_if_expr),
    },
    Directive {
        name: "BrowserMatch",
        args: Args::Raw,
        req_override: OR_FILEINFO,
        about: "A browser regex and a list of variables.",
        run: Run::Handler(|w, inv, c| browser_match(w, inv, c, "BrowserMatch", false)),
    },
    Directive {
        name: "BrowserMatchNoCase",
        args: Args::Raw,
        req_override: OR_FILEINFO,
        about: "A browser regex and a list of variables.",
        run: Run::Handler(|w, inv, c| browser_match(w, inv, c, "BrowserMatchNoCase", true)),
    },
];

pub static MODULE: Module = Module {
    source: "mod_setenvif.c",
    identifier: "setenvif_module",
    builtin: false,
    directives: DIRECTIVES,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_patterns_are_substrings() {
        assert_eq!(plain_pattern("Mozilla"), Some("Mozilla".into()));
        assert_eq!(plain_pattern(r"a\.b\\c"), Some(r"a.b\c".into()));
        assert_eq!(plain_pattern("trailing\\"), Some("trailing".into()));
        assert_eq!(plain_pattern("^Mozilla"), None);
        assert_eq!(plain_pattern(r"\d"), None);
        assert!(contains(b"Hello World", b"o w", true));
        assert!(!contains(b"Hello World", b"o w", false));
        assert!(contains(b"", b"", false));
    }

    #[test]
    fn variable_lists() {
        let f = |s: &str| parse_features("SetEnvIf", s).unwrap();
        assert_eq!(
            f("A B=2 !C D= E=!x a=3"),
            vec![
                ("A".into(), Some("3".into())),
                ("B".into(), Some("2".into())),
                ("C".into(), None),
                ("D".into(), Some("1".into())),
                ("E".into(), None),
            ]
        );
        assert_eq!(
            parse_features("BrowserMatch", " "),
            Err("Missing envariable expression for BrowserMatch".into())
        );
    }
}
