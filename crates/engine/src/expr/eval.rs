//! The evaluator: a compiled expression against one request.
//!
//! It follows Apache's `util_expr_eval.c` where a client can tell the
//! difference: `&&`/`||` short-circuit; a regex with groups sets `$0`–`$9`
//! on success and clears them on failure, one without groups leaves them;
//! `-eq` and friends read numbers as `strtoll` does (leading blanks, a
//! sign, digits up to the first other byte, clamped); every header read
//! through `req()`/`http()`/`%{HTTP_*}` except `Host` is noted for `Vary`;
//! and evaluation nested more than 20 levels deep fails with "Recursion
//! limit reached" (Apache's guard), which `<If>` treats as false.

use super::ast::{BinaryOp, Cond, UnaryOp, Word};
use super::funcs;
use super::vars::{Func, Var};
use super::ExprContext;
use htaccel_conf::fnmatch::{fnmatch, Flags};
use std::borrow::Cow;

/// Apache's `AP_EXPR_MAX_RECURSION`.
const MAX_RECURSION: u32 = 20;

/// Apache's `AP_MAX_REG_MATCH`: `$0` … `$9`.
pub const MAX_REG_MATCH: usize = 10;

/// The groups of the last regex match with groups (`$0`–`$9`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Captures {
    /// The text matched against; `None` when there is no match to refer to.
    pub source: Option<Vec<u8>>,
    /// Spans of the whole match and of each group.
    pub spans: Vec<Option<(usize, usize)>>,
}

impl Captures {
    /// `$n`: empty when there is no such group or it did not take part.
    pub fn group(&self, n: usize) -> &[u8] {
        let Some(src) = self.source.as_deref() else {
            return b"";
        };
        match self.spans.get(n).copied().flatten() {
            Some((s, e)) if s < e && e <= src.len() => &src[s..e],
            _ => b"",
        }
    }
}

/// The state of one evaluation.
pub struct Eval<'c> {
    pub ctx: &'c dyn ExprContext,
    depth: u32,
    /// Apache's `*ctx->err`; once set the result is an error.
    pub error: Option<String>,
    /// Header names to add to `Vary`, in the order they were read.
    pub vary: Vec<String>,
    pub captures: Captures,
}

impl<'c> Eval<'c> {
    pub fn new(ctx: &'c dyn ExprContext, captures: Captures) -> Self {
        Eval {
            ctx,
            depth: 0,
            error: None,
            vary: Vec::new(),
            captures,
        }
    }

    fn enter(&mut self) -> bool {
        if self.depth < MAX_RECURSION {
            self.depth += 1;
            true
        } else {
            self.error = Some("Recursion limit reached".into());
            // Nothing evaluates any more: Apache pins its counter at INT_MAX.
            self.depth = u32::MAX;
            false
        }
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// A condition's value.
    pub fn cond(&mut self, node: &Cond) -> bool {
        if !self.enter() {
            return false;
        }
        let mut negated = false;
        let mut node = node;
        let value = loop {
            match node {
                Cond::True => break true,
                Cond::False => break false,
                Cond::Not(inner) => {
                    negated = !negated;
                    node = inner;
                }
                Cond::Or(first, rest) => {
                    let (mut first, mut rest) = (&**first, &**rest);
                    let hit = loop {
                        if self.cond_negatable(first) {
                            break true;
                        }
                        match rest {
                            Cond::Or(a, b) => {
                                first = a;
                                rest = b;
                            }
                            _ => break false,
                        }
                    };
                    if hit {
                        break true;
                    }
                    node = rest;
                }
                Cond::And(first, rest) => {
                    let (mut first, mut rest) = (&**first, &**rest);
                    let miss = loop {
                        if !self.cond_negatable(first) {
                            break true;
                        }
                        match rest {
                            Cond::And(a, b) => {
                                first = a;
                                rest = b;
                            }
                            _ => break false,
                        }
                    };
                    if miss {
                        break false;
                    }
                    node = rest;
                }
                other => break self.leaf(other),
            }
        };
        self.leave();
        value != negated
    }

    /// An operand of `&&`/`||`: a `!` is applied here without a level of
    /// recursion, as Apache does.
    fn cond_negatable(&mut self, c: &Cond) -> bool {
        match c {
            Cond::Not(inner) => !self.cond(inner),
            other => self.cond(other),
        }
    }

    fn leaf(&mut self, node: &Cond) -> bool {
        match node {
            Cond::IntCmp(op, a, b) => {
                let a = atoi64(&self.word(a));
                let b = atoi64(&self.word(b));
                op.holds(a.cmp(&b))
            }
            Cond::StrCmp(op, a, b) => {
                let a = self.word(a).into_owned();
                let b = self.word(b);
                op.holds(a.as_slice().cmp(&*b))
            }
            Cond::In(needle, items) => {
                let needle = self.word(needle).into_owned();
                items.iter().any(|w| *self.word(w) == *needle)
            }
            Cond::Match {
                word,
                regex,
                negate,
            } => {
                let text = self.word(word).into_owned();
                let matched = if regex.captures_len() > 1 {
                    match regex.captures(&text) {
                        Some(mut spans) => {
                            spans.resize(MAX_REG_MATCH, None);
                            spans.truncate(MAX_REG_MATCH);
                            self.captures = Captures {
                                source: Some(text),
                                spans,
                            };
                            true
                        }
                        None => {
                            self.captures.source = None;
                            false
                        }
                    }
                } else {
                    regex.is_match(&text)
                };
                matched != *negate
            }
            Cond::Unary(op, arg) => {
                let arg = self.word(arg).into_owned();
                self.unary(op, &arg)
            }
            Cond::Binary(op, a, b) => {
                let a = self.word(a).into_owned();
                let b = self.word(b).into_owned();
                match op {
                    BinaryOp::IpMatch(subnet) => parse_ip(&a).is_some_and(|ip| subnet.contains(ip)),
                    BinaryOp::FnMatch => fnmatch(&b, &a, Flags::PATHNAME),
                    BinaryOp::StrMatch => fnmatch(&b, &a, Flags::default()),
                    BinaryOp::StrCMatch => fnmatch(
                        &b,
                        &a,
                        Flags {
                            case_blind: true,
                            ..Flags::default()
                        },
                    ),
                }
            }
            Cond::True | Cond::False | Cond::Not(_) | Cond::And(..) | Cond::Or(..) => {
                self.error = Some("Internal evaluation error: Unknown expression node".into());
                false
            }
        }
    }

    fn unary(&mut self, op: &UnaryOp, arg: &[u8]) -> bool {
        match op {
            UnaryOp::NotEmpty => !arg.is_empty(),
            UnaryOp::Empty => arg.is_empty(),
            UnaryOp::RemoteIn(subnet) => self.ctx.remote_ip().is_some_and(|ip| subnet.contains(ip)),
            UnaryOp::Truth => truth(arg),
            UnaryOp::IsDir
            | UnaryOp::Exists
            | UnaryOp::IsFile
            | UnaryOp::NonEmptyFile
            | UnaryOp::IsSymlink
            | UnaryOp::Executable => funcs::file_test(op, arg),
            UnaryOp::FileAccessible => self.ctx.file_accessible(&crate::path_text::from_slice(arg)),
            UnaryOp::UrlAccessible => self.ctx.url_accessible(&crate::path_text::from_slice(arg)),
        }
    }

    /// A word's value.
    pub fn word<'w>(&mut self, node: &'w Word) -> Cow<'w, [u8]>
    where
        'c: 'w,
    {
        if !self.enter() {
            return Cow::Borrowed(b"");
        }
        let value: Cow<'w, [u8]> = match node {
            Word::Digit(s) | Word::Str(s) => Cow::Borrowed(s.as_slice()),
            Word::Var(v) => self.var(*v),
            Word::Ssl(name) => Cow::Owned(self.ctx.ssl_var(name).unwrap_or_default().into_bytes()),
            Word::Concat(a, b) => self.concat(a, b),
            Word::Func(f, arg) => {
                let arg = self.word(arg).into_owned();
                self.func(*f, &arg)
            }
            Word::Backref(n) => Cow::Owned(self.captures.group(usize::from(*n)).to_vec()),
            Word::Missing => Cow::Borrowed(b""),
        };
        self.leave();
        value
    }

    /// Concatenation, flattened along a chain the way Apache walks it (a
    /// left-leaning chain is evaluated right to left).
    fn concat<'w>(&mut self, a: &'w Word, b: &'w Word) -> Cow<'w, [u8]>
    where
        'c: 'w,
    {
        let mut parts: Vec<Vec<u8>> = Vec::new();
        if let Word::Concat(..) = a {
            // Walk down the left spine, evaluating right operands first.
            let mut right_parts = vec![self.word(b).into_owned()];
            let mut node = a;
            while let Word::Concat(l, r) = node {
                right_parts.push(self.word(r).into_owned());
                node = l;
            }
            right_parts.push(self.word(node).into_owned());
            right_parts.reverse();
            parts = right_parts;
        } else if let Word::Concat(..) = b {
            parts.push(self.word(a).into_owned());
            let mut node = b;
            while let Word::Concat(l, r) = node {
                parts.push(self.word(l).into_owned());
                node = r;
            }
            parts.push(self.word(node).into_owned());
        } else {
            let x = self.word(a);
            let y = self.word(b);
            if x.is_empty() {
                return y;
            }
            if y.is_empty() {
                return x;
            }
            let mut out = x.into_owned();
            out.extend_from_slice(&y);
            return Cow::Owned(out);
        }
        Cow::Owned(parts.concat())
    }

    fn note_vary(&mut self, header: &str) {
        if !header.eq_ignore_ascii_case("Host") {
            self.vary.push(header.to_string());
        }
    }

    fn var<'w>(&mut self, v: Var) -> Cow<'w, [u8]>
    where
        'c: 'w,
    {
        if let Some(h) = v.header() {
            self.note_vary(h);
            return self.ctx.request_header(h).unwrap_or(Cow::Borrowed(b""));
        }
        match v {
            Var::TimeYear
            | Var::TimeMon
            | Var::TimeDay
            | Var::TimeHour
            | Var::TimeMin
            | Var::TimeSec
            | Var::TimeWday
            | Var::Time => Cow::Owned(funcs::time_var(v).into_bytes()),
            Var::ApiVersion => Cow::Borrowed(b"20120211"),
            other => self.ctx.var(other).unwrap_or(Cow::Borrowed(b"")),
        }
    }

    fn func<'w>(&mut self, f: Func, arg: &[u8]) -> Cow<'w, [u8]>
    where
        'c: 'w,
    {
        let name = || String::from_utf8_lossy(arg).into_owned();
        let empty = || Cow::Borrowed(&b""[..]);
        match f {
            Func::Req => {
                let n = name();
                self.note_vary(&n);
                self.ctx.request_header(&n).unwrap_or_else(empty)
            }
            Func::ReqNovary => self.ctx.request_header(&name()).unwrap_or_else(empty),
            Func::Resp => self.ctx.response_header(&name()).unwrap_or_else(empty),
            Func::Note => self.ctx.note(&name()).unwrap_or_else(empty),
            Func::Reqenv => self.ctx.env(&name()).unwrap_or_else(empty),
            Func::Env => {
                let n = name();
                self.ctx
                    .note(&n)
                    .or_else(|| self.ctx.env(&n))
                    .or_else(|| funcs::os_env(&n).map(Cow::Owned))
                    .unwrap_or_else(empty)
            }
            Func::Osenv => Cow::Owned(funcs::os_env(&name()).unwrap_or_default()),
            Func::Tolower => Cow::Owned(arg.to_ascii_lowercase()),
            Func::Toupper => Cow::Owned(arg.to_ascii_uppercase()),
            Func::Escape => Cow::Owned(crate::uri::escape_path(arg).into_owned().into_bytes()),
            Func::Unescape => Cow::Owned(funcs::unescape(arg)),
            Func::Base64 => Cow::Owned(crate::http::digest::base64(arg).into_bytes()),
            Func::Unbase64 => Cow::Owned(funcs::unbase64(arg)),
            Func::Md5 => Cow::Owned(funcs::md5_hex(arg).into_bytes()),
            Func::Sha1 => Cow::Owned(funcs::sha1_hex(arg).into_bytes()),
            Func::Ldap => Cow::Owned(funcs::ldap_escape(arg)),
            Func::File => match funcs::read_file(arg) {
                Ok(data) => Cow::Owned(data),
                Err(e) => {
                    self.error = Some(e);
                    empty()
                }
            },
            Func::Filesize => Cow::Owned(funcs::file_size(arg).into_bytes()),
        }
    }
}

/// `apr_atoi64`: `strtoll` in base 10, clamped on overflow.
pub fn atoi64(s: &[u8]) -> i64 {
    let mut i = 0;
    while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
        i += 1;
    }
    let negative = match s.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let mut v: i128 = 0;
    while let Some(d) = s.get(i).filter(|d| d.is_ascii_digit()) {
        v = (v * 10 + i128::from(d - b'0')).min(i128::from(i64::MAX) + 1);
        i += 1;
    }
    let v = if negative { -v } else { v };
    v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// `-T`: false for empty, `0`, and (ignoring case) `off`, `no`, `false`.
fn truth(arg: &[u8]) -> bool {
    !(arg.is_empty()
        || arg == b"0"
        || arg.eq_ignore_ascii_case(b"off")
        || arg.eq_ignore_ascii_case(b"no")
        || arg.eq_ignore_ascii_case(b"false"))
}

/// The left side of `-ipmatch`: a numeric address (Apache would also
/// resolve a host name; htaccel does no DNS on the request path).
fn parse_ip(s: &[u8]) -> Option<std::net::IpAddr> {
    std::str::from_utf8(s).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atoi64_as_strtoll() {
        assert_eq!(atoi64(b" 42abc"), 42);
        assert_eq!(atoi64(b"-7"), -7);
        assert_eq!(atoi64(b"+3"), 3);
        assert_eq!(atoi64(b"abc"), 0);
        assert_eq!(atoi64(b""), 0);
        assert_eq!(atoi64(b"99999999999999999999"), i64::MAX);
        assert_eq!(atoi64(b"-99999999999999999999"), i64::MIN);
    }

    #[test]
    fn truth_values() {
        assert!(!truth(b""));
        assert!(!truth(b"Off"));
        assert!(!truth(b"0"));
        assert!(truth(b"00"));
        assert!(truth(b"on"));
    }
}
