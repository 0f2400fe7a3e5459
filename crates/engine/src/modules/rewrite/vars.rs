//! What a substitution, a condition test string or a flag value expands
//! to: `%{VAR}` server variables, `$N`/`%N` back-references, `${map:key|
//! default}` map lookups and `\c` escapes (Apache's `do_expand` and
//! `lookup_variable`).
//!
//! The text is cut into pieces once, when the rule is compiled
//! ([`Template::parse`]); at request time [`expand`] only walks the pieces.
//! Expansion is single-pass, as Apache insists for safety: what a variable
//! or back-reference produces is never expanded again.
//!
//! Everything the request must answer (headers, environment, addresses,
//! sub-requests, maps) comes through the [`Host`] trait, so the loop can
//! run over a fake request in tests.

use super::parse::{flag, Rule};
use super::variable::Var;
use std::borrow::Cow;

/// A pre-parsed expansion source.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Template {
    pieces: Vec<Piece>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    /// Literal text; a `?` here is a "safe" query separator.
    Lit(String),
    /// A character written with a backslash: literal, but neither a safe
    /// nor an unsafe `?`.
    Esc(String),
    /// `%{NAME}`.
    Var(Var),
    /// `${map:key|default}`.
    Map {
        name: String,
        key: Template,
        default: Option<Template>,
    },
    /// `$N`.
    RuleRef(usize),
    /// `%N`.
    CondRef(usize),
}

/// The position of the `}` closing a `{` (whose content starts at `from`),
/// counting nested braces.
fn closing_curly(s: &[u8], from: usize) -> Option<usize> {
    let mut depth = 1u32;
    for (i, &c) in s.iter().enumerate().skip(from) {
        if c == b'}' {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        } else if c == b'{' {
            depth += 1;
        }
    }
    None
}

/// The first `c` at brace depth 1 in `s[from..end]`, stopping at a `}`
/// that closes depth 1.
fn char_in_curlies(s: &[u8], from: usize, end: usize, c: u8) -> Option<usize> {
    let mut depth = 1u32;
    for (i, &b) in s.iter().enumerate().take(end).skip(from) {
        if b == c && depth == 1 {
            return Some(i);
        } else if b == b'}' {
            depth -= 1;
            if depth == 0 {
                return None;
            }
        } else if b == b'{' {
            depth += 1;
        }
    }
    None
}

impl Template {
    /// Whether the text names a rule back-reference (`$N`), here or inside
    /// a map's key or default.
    pub fn uses_rule_refs(&self) -> bool {
        self.pieces.iter().any(|p| match p {
            Piece::RuleRef(_) => true,
            Piece::Map { key, default, .. } => {
                key.uses_rule_refs() || default.as_ref().is_some_and(Template::uses_rule_refs)
            }
            _ => false,
        })
    }

    /// Cut `text` into pieces, as Apache's `do_expand` scans it.
    pub fn parse(text: &str) -> Template {
        let s = text.as_bytes();
        let mut t = Template::default();
        let mut lit = String::new();
        let mut i = 0;
        let flush = |lit: &mut String, t: &mut Template| {
            if !lit.is_empty() {
                t.pieces.push(Piece::Lit(std::mem::take(lit)));
            }
        };
        while i < s.len() {
            let c = s[i];
            match c {
                b'\\' => {
                    flush(&mut lit, &mut t);
                    if i + 1 >= s.len() {
                        t.pieces.push(Piece::Esc("\\".into()));
                        i += 1;
                    } else {
                        let ch = text[i + 1..].chars().next().unwrap_or('\\');
                        t.pieces.push(Piece::Esc(ch.to_string()));
                        i += 1 + ch.len_utf8();
                    }
                }
                b'$' | b'%' if s.get(i + 1) == Some(&b'{') => {
                    let Some(end) = closing_curly(s, i + 2) else {
                        lit.push_str(&text[i..i + 2]);
                        i += 2;
                        continue;
                    };
                    if c == b'%' {
                        flush(&mut lit, &mut t);
                        t.pieces.push(Piece::Var(Var::parse(&text[i + 2..end])));
                        i = end + 1;
                        continue;
                    }
                    let Some(colon) = char_in_curlies(s, i + 2, end, b':') else {
                        lit.push_str("${");
                        i += 2;
                        continue;
                    };
                    flush(&mut lit, &mut t);
                    let name = text[i + 2..colon].to_string();
                    let (key, default) = match char_in_curlies(s, colon + 1, end, b'|') {
                        Some(bar) => (
                            &text[colon + 1..bar],
                            Some(Template::parse(&text[bar + 1..end])),
                        ),
                        None => (&text[colon + 1..end], None),
                    };
                    t.pieces.push(Piece::Map {
                        name,
                        key: Template::parse(key),
                        default,
                    });
                    i = end + 1;
                }
                b'$' | b'%' if s.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                    flush(&mut lit, &mut t);
                    let n = usize::from(s[i + 1] - b'0');
                    t.pieces.push(if c == b'$' {
                        Piece::RuleRef(n)
                    } else {
                        Piece::CondRef(n)
                    });
                    i += 2;
                }
                _ => {
                    let ch = text[i..].chars().next().unwrap_or('\u{fffd}');
                    lit.push(ch);
                    i += ch.len_utf8();
                }
            }
        }
        flush(&mut lit, &mut t);
        t
    }

    /// The variable, when the text is one `%{NAME}` and nothing else.
    pub fn single_var(&self) -> Option<&Var> {
        match self.pieces.as_slice() {
            [Piece::Var(v)] => Some(v),
            _ => None,
        }
    }

    /// Whether expanding needs anything beyond the text itself.
    pub fn is_literal(&self) -> bool {
        self.pieces
            .iter()
            .all(|p| matches!(p, Piece::Lit(_) | Piece::Esc(_)))
    }
}

/// An `[E=…]` value. Apache expands the whole text and then splits it at
/// the first `:` (a leading `!` unsets instead). When the text starts with
/// a literal name and colon, as almost every real `[E=NAME:…]` does,
/// expansion cannot move that colon, so the split is made once here and
/// only the value is expanded per request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EnvSpec {
    /// `NAME:value` with a literal name.
    Set { name: String, value: Template },
    /// Anything else: expanded, then split.
    Expanded(Template),
}

impl EnvSpec {
    pub fn parse(text: &str) -> EnvSpec {
        let t = Template::parse(text);
        if let Some(Piece::Lit(first)) = t.pieces.first() {
            if let (false, Some(colon)) = (first.starts_with('!'), first.find(':')) {
                let name = first[..colon].to_string();
                let rest = &first[colon + 1..];
                let mut pieces = Vec::with_capacity(t.pieces.len());
                if !rest.is_empty() {
                    pieces.push(Piece::Lit(rest.to_string()));
                }
                pieces.extend(t.pieces[1..].iter().cloned());
                return EnvSpec::Set {
                    name,
                    value: Template { pieces },
                };
            }
        }
        EnvSpec::Expanded(t)
    }

    pub fn uses_rule_refs(&self) -> bool {
        match self {
            EnvSpec::Set { value, .. } => value.uses_rule_refs(),
            EnvSpec::Expanded(t) => t.uses_rule_refs(),
        }
    }
}

/// Which `?` of an expansion came from where (Apache's `unsafe_qmark`):
/// a `?` produced by a back-reference or variable before the first literal
/// one (or, with `[QSL]`, as the last one) would start a query string the
/// author did not write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Qmark {
    /// -1 none seen, 0 the deciding `?` is literal, 1 it came from an
    /// expansion.
    pub state: i8,
    tracking: bool,
    last: bool,
}

impl Qmark {
    pub fn new(qslast: bool) -> Self {
        Qmark {
            state: -1,
            tracking: true,
            last: qslast,
        }
    }
    fn see(&mut self, unsafe_: bool) {
        if self.tracking {
            self.state = i8::from(unsafe_);
            if !self.last {
                self.tracking = false;
            }
        }
    }
    pub fn is_unsafe(&self) -> bool {
        self.state > 0
    }
}

/// What expansion can see of the rule being applied.
pub trait Scope {
    /// The value of `%{NAME}`.
    fn variable(&mut self, var: &Var) -> Cow<'_, str>;
    /// Capture `n` of the rule pattern (`rule`) or of the last matched
    /// condition; `None` when unset or empty.
    fn backref(&self, rule: bool, n: usize) -> Option<&[u8]>;
    /// A map lookup; `None` when the map or key is unknown.
    fn map(&mut self, name: &str, key: &str) -> Option<String>;
}

/// Expand `t`. `escape` is the rule whose `[B…]` flags apply to
/// back-references (none for `[E=]` and `[CO=]` values, as in Apache).
pub fn expand(
    t: &Template,
    scope: &mut dyn Scope,
    escape: Option<&Rule>,
    mut qmark: Option<&mut Qmark>,
) -> String {
    if let [Piece::Lit(s)] = t.pieces.as_slice() {
        if let Some(q) = qmark {
            if s.contains('?') {
                q.see(false);
            }
        }
        return s.clone();
    }
    if let [Piece::Var(var)] = t.pieces.as_slice() {
        let v = scope.variable(var);
        if let Some(q) = qmark {
            if v.contains('?') {
                q.see(true);
            }
        }
        return v.into_owned();
    }
    let mut out: Vec<u8> = Vec::new();
    for piece in &t.pieces {
        let produced: Vec<u8> = match piece {
            Piece::Lit(s) => {
                if let Some(q) = qmark.as_deref_mut() {
                    if s.contains('?') {
                        q.see(false);
                    }
                }
                out.extend_from_slice(s.as_bytes());
                continue;
            }
            Piece::Esc(s) => {
                out.extend_from_slice(s.as_bytes());
                continue;
            }
            Piece::Var(var) => {
                let v = scope.variable(var);
                if let Some(q) = qmark.as_deref_mut() {
                    if v.contains('?') {
                        q.see(true);
                    }
                }
                // Values are text; a path's text form stands for bytes.
                out.extend_from_slice(&crate::path_text::bytes(&v));
                continue;
            }
            Piece::Map { name, key, default } => {
                let k = expand(key, scope, escape, None);
                match scope.map(name, &k) {
                    Some(v) => crate::path_text::bytes(&v).into_owned(),
                    None => match default {
                        Some(d) if !d.pieces.is_empty() => {
                            crate::path_text::bytes(&expand(d, scope, escape, None)).into_owned()
                        }
                        _ => Vec::new(),
                    },
                }
            }
            Piece::RuleRef(n) | Piece::CondRef(n) => {
                let rule = matches!(piece, Piece::RuleRef(_));
                match scope.backref(rule, *n) {
                    Some(v) => match escape.filter(|r| r.flags & flag::ESCAPEBACKREF != 0) {
                        Some(r) => escape_backref(v, r),
                        None => v.to_vec(),
                    },
                    None => Vec::new(),
                }
            }
        };
        if let Some(q) = qmark.as_deref_mut() {
            if produced.contains(&b'?') {
                q.see(true);
            }
        }
        out.extend_from_slice(&produced);
    }
    // Bytes that are not UTF-8 (a capture of a decoded `%ff`) are kept.
    crate::path_text::from_bytes(out)
}

/// `[B]` escaping of a back-reference (Apache's `escape_backref`): form
/// encoding with lower-case hex, letters, digits and `_` kept, space as
/// `+` (`%20` with `[BNP]`); `[B=chars]` escapes only those, `[BNE=chars]`
/// never escapes those, `[BCTLS]` only controls and space.
pub fn escape_backref(v: &[u8], rule: &Rule) -> Vec<u8> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let noplus = rule.flags & flag::ESCAPENOPLUS != 0;
    let ctls = rule.flags & flag::ESCAPECTLS != 0;
    let mut out = Vec::with_capacity(v.len() * 3);
    for &c in v {
        let selected = if ctls {
            // TEST_CHAR(c, T_VCHAR_OBSTEXT): visible ASCII or obs-text.
            !(c > 0x20 && c != 0x7f)
        } else {
            rule.escapes.is_none()
        } || rule.escapes.as_deref().is_some_and(|e| e.contains(&c));
        let excluded = rule.noescapes.as_deref().is_some_and(|n| n.contains(&c));
        if selected && !excluded {
            if c.is_ascii_alphanumeric() || c == b'_' {
                out.push(c);
            } else if c == b' ' && !noplus {
                out.push(b'+');
            } else {
                out.extend_from_slice(&[b'%', HEX[usize::from(c >> 4)], HEX[usize::from(c & 15)]]);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Request facts the variables name (besides the ones the rule loop itself
/// changes: file name, path info, query string).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fact {
    RequestUri,
    ServerName,
    ServerPort,
    ServerAddr,
    RemoteAddr,
    RemoteHost,
    RemotePort,
    RemoteUser,
    RemoteIdent,
    AuthType,
    TheRequest,
    RequestMethod,
    RequestScheme,
    ServerProtocol,
    ServerSoftware,
    ServerAdmin,
    DocumentRoot,
    ContextPrefix,
    ContextDocumentRoot,
    ConnRemoteAddr,
    IsSubreq,
    Ipv6,
    Https,
    ScriptUser,
    ScriptGroup,
}

/// What the request answers to the rule loop. Implemented over the real
/// request in `hooks.rs`; tests use a fake.
pub trait Host {
    /// A request header (repeated headers joined with ", ").
    fn header(&self, name: &str) -> Option<String>;
    /// `%{SSL:name}`: mod_ssl's variable (none without TLS).
    fn ssl(&self, _name: &str) -> Option<String> {
        None
    }
    /// `%{ENV:x}`: request notes and environment, names without case.
    fn env(&self, name: &str) -> Option<String>;
    fn set_env(&mut self, name: &str, value: String);
    fn unset_env(&mut self, name: &str);
    fn fact(&mut self, f: Fact) -> Option<String>;
    fn stat(&mut self, path: &str) -> Option<crate::fs::FileInfo>;
    fn lstat(&mut self, path: &str) -> Option<crate::fs::FileInfo>;
    /// Whether a sub-request may be made now (Apache's `subreq_ok`: not in
    /// a sub-request for the same URI as its parent).
    fn subreq_ok(&self) -> bool;
    /// Whether `host:port` names this virtual host (`ap_matches_request_vhost`).
    fn matches_vhost(&self, host: &str, port: u16) -> bool;
    fn is_subreq(&self) -> bool;
    /// `-U`: the status of a URL sub-request (200 when every phase passed).
    fn subreq_uri_status(&mut self, uri: &str) -> u16;
    /// `-F`: the status of a file sub-request and whether its file exists.
    fn subreq_file(&mut self, path: &str) -> (u16, bool);
    /// `%{LA-U:var}` / `%{LA-F:var}`: `var` as a sub-request sees it.
    fn lookahead(&mut self, path: &str, file: bool, var: &str) -> String;
    /// A `RewriteMap` lookup.
    fn map(&mut self, name: &str, key: &str) -> Option<String>;
    /// `[CO=…]`, expanded.
    fn add_cookie(&mut self, spec: &str);
    /// The time (seconds since the epoch) variables and cookies use.
    fn now(&self) -> i64;
    /// Evaluate an `expr` condition against the request as the rules
    /// left it (`cur`), with no back-references coming in (Apache's
    /// `ap_expr_exec_re`). A request without expression support answers
    /// false.
    fn expr(&mut self, e: &crate::expr::Expr, cur: &Current<'_>) -> crate::expr::Outcome<bool> {
        let _ = (e, cur);
        crate::expr::Outcome {
            value: Ok(false),
            vary: None,
            captures: crate::expr::Captures::default(),
        }
    }
    /// Whether trace lines are wanted (`htaccel explain`).
    fn tracing(&self) -> bool {
        false
    }
    fn trace(&mut self, _line: String) {}
}

/// Apache's module magic number for 2.4 (`API_VERSION`).
pub const API_VERSION: &str = "20120211:142";

/// The local broken-down time (`apr_time_exp_lt`).
pub struct LocalTime {
    pub year: i32,
    pub mon: i32,
    pub mday: i32,
    pub hour: i32,
    pub min: i32,
    pub sec: i32,
    pub wday: i32,
}

pub fn local_time(t: i64) -> LocalTime {
    let tm = crate::os::local_tm(t);
    LocalTime {
        year: tm.tm_year + 1900,
        mon: tm.tm_mon + 1,
        mday: tm.tm_mday,
        hour: tm.tm_hour,
        min: tm.tm_min,
        sec: tm.tm_sec,
        wday: tm.tm_wday,
    }
}

/// Header names whose lookup made a condition depend on the request
/// (`Vary`). `Host` never counts.
#[derive(Debug, Default)]
pub struct VaryNote {
    pub names: Vec<String>,
}

impl VaryNote {
    pub fn note(&mut self, name: &str) {
        if !name.eq_ignore_ascii_case("Host") {
            self.names.push(name.to_string());
        }
    }
}

/// The parts of the request the rule loop changes, as variables see them.
pub struct Current<'a> {
    pub filename: &'a str,
    pub path_info: &'a str,
    pub args: Option<&'a str>,
    /// The subject of the rule being applied (`LA-U`/`LA-F`).
    pub subject: Option<&'a str>,
    /// Per-directory context: the directory and `RewriteBase` (`LA-U`).
    pub perdir: Option<(&'a str, Option<&'a str>)>,
}

/// Apache's `lookup_variable`: `%{NAME}` for the request, the name given
/// as text (look-ahead sub-requests and tests; rules resolve their names
/// when compiled, see [`Var`]). Unknown names are the empty string.
pub fn lookup(var: &str, cur: &Current<'_>, host: &mut dyn Host, vary: &mut VaryNote) -> String {
    super::variable::lookup(&Var::parse(var), cur, host, vary).into_owned()
}
