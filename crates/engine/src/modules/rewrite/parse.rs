//! `RewriteRule` and `RewriteCond` lines turned into compiled rules, once,
//! when the file that holds them is read.
//!
//! mod_rewrite splits its own argument lines (quotes, `\ ` keeping a space
//! in an unquoted word, a third word that must be `[…]`), reads the flags
//! with its own lexer, and compiles every regex at configuration time; a
//! mistake is a configuration error (500 for a `.htaccess`). This file does
//! the same, with Apache's error wording, and also pre-parses every
//! substitution, condition test string and flag value into a
//! [`Template`], so that nothing on the request path re-reads the text.

use super::vars::{EnvSpec, Template};
use crate::regex_engine::Regex;
use htaccel_conf::Origin;

/// Rule flags (Apache's `RULEFLAG_*`).
pub mod flag {
    pub const FORCEREDIRECT: u32 = 1 << 1;
    pub const LASTRULE: u32 = 1 << 2;
    pub const NEWROUND: u32 = 1 << 3;
    pub const CHAIN: u32 = 1 << 4;
    pub const IGNOREONSUBREQ: u32 = 1 << 5;
    pub const NOTMATCH: u32 = 1 << 6;
    pub const PROXY: u32 = 1 << 7;
    pub const PASSTHROUGH: u32 = 1 << 8;
    pub const QSAPPEND: u32 = 1 << 9;
    pub const NOCASE: u32 = 1 << 10;
    pub const NOESCAPE: u32 = 1 << 11;
    pub const NOSUB: u32 = 1 << 12;
    pub const STATUS: u32 = 1 << 13;
    pub const ESCAPEBACKREF: u32 = 1 << 14;
    pub const DISCARDPATHINFO: u32 = 1 << 15;
    pub const QSDISCARD: u32 = 1 << 16;
    pub const END: u32 = 1 << 17;
    pub const ESCAPENOPLUS: u32 = 1 << 18;
    pub const QSLAST: u32 = 1 << 19;
    /// Set by the parser only: the substitution ended in `?`, so the
    /// query string is dropped whatever a back-reference brings.
    pub const QSNONE: u32 = 1 << 20;
    pub const ESCAPECTLS: u32 = 1 << 21;
    pub const UNSAFE_PREFIX_STAT: u32 = 1 << 22;
    pub const UNSAFE_ALLOW3F: u32 = 1 << 23;
    pub const UNC: u32 = 1 << 24;
}

/// Condition flags (Apache's `CONDFLAG_*`).
pub mod cflag {
    pub const NOCASE: u32 = 1 << 1;
    pub const NOTMATCH: u32 = 1 << 2;
    pub const ORNEXT: u32 = 1 << 3;
    pub const NOVARY: u32 = 1 << 4;
}

/// Apache 2.4's bound on `[N]` rounds (`REWRITE_MAX_ROUNDS`; 10000 in trunk).
pub const DEFAULT_MAX_ROUNDS: i32 = 32_000;

/// What a condition tests its (expanded) test string with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CondKind {
    Regex,
    /// `-f`: a regular file (stat).
    FileExists,
    /// `-s`: a regular file that is not empty.
    FileSize,
    /// `-l`, `-L`, `-h`: a symbolic link (lstat).
    FileLink,
    /// `-d`: a directory.
    FileDir,
    /// `-x`: any execute bit.
    FileXbit,
    /// `-U`: a URL sub-request answers below 400.
    LookupUrl,
    /// `-F`: a file sub-request is allowed and the file exists.
    LookupFile,
    StrLt,
    StrLe,
    StrEq,
    StrGt,
    StrGe,
    IntLt,
    IntLe,
    IntEq,
    IntGt,
    IntGe,
    /// `RewriteCond expr "…"`: an ap_expr condition.
    Expr,
}

/// One `RewriteCond`.
#[derive(Clone, Debug)]
pub struct Cond {
    pub origin: Origin,
    /// The test string as written.
    pub input_text: String,
    pub input: Template,
    /// The pattern as written (with `!` and operator), for traces.
    pub pattern_text: String,
    pub kind: CondKind,
    /// The pattern after `!` and the operator: the comparison operand.
    pub operand: String,
    pub regex: Option<Regex>,
    /// The compiled expression of an `expr` condition.
    pub expr: Option<std::sync::Arc<crate::expr::Expr>>,
    pub flags: u32,
}

/// One `RewriteRule` with the conditions written before it.
#[derive(Debug)]
pub struct Rule {
    pub origin: Origin,
    /// The pattern as written, without a leading `!`.
    pub pattern: String,
    pub regex: Regex,
    /// The substitution as written (minus a final `?` that only drops the
    /// query), `-` for none.
    pub output: String,
    pub subst: Template,
    pub flags: u32,
    /// `[R=…]`, `[F]`, `[G]`: the status the rule answers with. 302 by
    /// default; 0 for an `R=` word Apache does not know (then 302 too).
    pub status: u16,
    pub forced_type: Option<Template>,
    pub forced_handler: Option<Template>,
    pub env: Vec<EnvSpec>,
    pub cookies: Vec<Template>,
    pub skip: i32,
    pub max_rounds: i32,
    /// `[B=chars]`: escape only these in back-references.
    pub escapes: Option<Vec<u8>>,
    /// `[BNE=chars]`: never escape these.
    pub noescapes: Option<Vec<u8>>,
    pub conds: Vec<Cond>,
    /// Something expands `$N`: the pattern's groups must be captured, not
    /// only matched (most rules are a match test, and capturing costs more).
    pub needs_captures: bool,
}

/// The three words of a rule or condition line (Apache's `parseargline`):
/// quotes (`"` or `'`) group a word and are removed, a backslash before a
/// space keeps the space (the backslash stays), a missing second word is an
/// error, a third word must be `[…]` and anything after it is ignored.
pub fn split_line(line: &str) -> Result<(String, String, Option<String>), LineError> {
    let b = line.as_bytes();
    let mut i = 0;
    let word = |i: &mut usize| -> (usize, usize, bool) {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
        let quote = match b.get(*i) {
            Some(&q @ (b'"' | b'\'')) => {
                *i += 1;
                Some(q)
            }
            _ => None,
        };
        let start = *i;
        while *i < b.len() {
            let c = b[*i];
            if (quote.is_none() && c.is_ascii_whitespace()) || Some(c) == quote {
                break;
            }
            if c == b'\\' && b.get(*i + 1).is_some_and(|n| n.is_ascii_whitespace()) {
                *i += 2;
                continue;
            }
            *i += 1;
        }
        let end = (*i).min(b.len());
        let terminated = *i < b.len();
        if terminated {
            *i += 1;
        }
        (start, end, terminated)
    };
    let (s1, e1, t1) = word(&mut i);
    let a1 = line[s1..e1].to_string();
    if !t1 {
        return Err(LineError {
            message: "bad argument line: at least two arguments required".into(),
            a1: Some(a1),
            a2: None,
            a3: None,
        });
    }
    let (s2, e2, t2) = word(&mut i);
    let a2 = line[s2..e2].to_string();
    if !t2 {
        return Ok((a1, a2, None));
    }
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    if i >= b.len() {
        return Ok((a1, a2, None));
    }
    let (s3, e3, _) = word(&mut i);
    let a3 = line[s3..e3].to_string();
    let first = a3.chars().next();
    if first != Some('[') {
        let c = first.map(String::from).unwrap_or_default();
        return Err(LineError {
            message: format!("bad flag delimiters: third argument must begin with '[' but found '{c}' - too many arguments or rogue whitespace?"),
            a1: Some(a1),
            a2: Some(a2),
            a3: Some(a3),
        });
    }
    if !a3.ends_with(']') {
        let c = a3.chars().last().map(String::from).unwrap_or_default();
        return Err(LineError {
            message: format!("bad flag delimiters: third argument must end with ']' but found '{c}' - unintended whitespace within the flags definition?"),
            a1: Some(a1),
            a2: Some(a2),
            a3: Some(a3),
        });
    }
    Ok((a1, a2, Some(a3)))
}

/// A line that [`split_line`] refused, with the words found so far (Apache
/// prints them, `(null)` for the missing ones).
#[derive(Debug)]
pub struct LineError {
    pub message: String,
    pub a1: Option<String>,
    pub a2: Option<String>,
    pub a3: Option<String>,
}

fn or_null(s: &Option<String>) -> &str {
    s.as_deref().unwrap_or("(null)")
}

/// The `key[=value]` items of a `[…]` flag field, as Apache's lexer cuts
/// them: comma-separated, blanks around items dropped, a missing value is
/// the empty string, an empty item is an item with an empty key.
pub fn flag_items(field: &str) -> Vec<(String, String)> {
    // Apache replaces the closing ']' with ',' and reads items up to each
    // comma, so `[L,]` and `[]` hold an empty item.
    let text = format!("{},", &field[1..field.len() - 1]);
    let ws = |c: char| c.is_ascii_whitespace();
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while !rest.is_empty() {
        let trimmed = rest.trim_start_matches(ws);
        let Some(comma) = trimmed.find(',') else {
            break;
        };
        let item = trimmed[..comma].trim_end_matches(ws);
        let (k, v) = item.split_once('=').unwrap_or((item, ""));
        out.push((k.to_string(), v.to_string()));
        rest = &trimmed[comma + 1..];
    }
    out
}

/// Parse a `RewriteCond` line. `warn` receives Apache's warnings
/// (`[NC]` on a pattern that is not a regex or string comparison).
/// `restricted`: read from a `.htaccess`, where an `expr` condition may
/// not use `file()`/`filesize()`.
pub fn parse_cond(
    line: &str,
    origin: &Origin,
    restricted: bool,
    warn: &mut dyn FnMut(String),
) -> Result<Cond, String> {
    let (a1, a2, a3) = split_line(line).map_err(|e| {
        format!(
            "RewriteCond: {} (TestString={}, CondPattern={}, flags={})",
            e.message,
            or_null(&e.a1),
            or_null(&e.a2),
            or_null(&e.a3)
        )
    })?;
    let mut flags = 0;
    if let Some(f) = &a3 {
        for (key, _val) in flag_items(f) {
            let k = key.to_ascii_lowercase();
            flags |= match k.as_str() {
                "nocase" | "nc" => cflag::NOCASE,
                "ornext" | "or" => cflag::ORNEXT,
                "novary" | "nv" => cflag::NOVARY,
                _ => return Err(format!("RewriteCond: unknown flag '{key}'")),
            };
        }
    }
    let pattern_text = a2.clone();
    let mut p: &str = &a2;
    if let Some(rest) = p.strip_prefix('!') {
        flags |= cflag::NOTMATCH;
        p = rest;
    }
    let mut kind = CondKind::Regex;
    let pb = p.as_bytes();
    if a1.eq_ignore_ascii_case("expr") {
        kind = CondKind::Expr;
    } else if pb.len() >= 2 {
        if pb[0] == b'-' {
            if pb.len() == 2 {
                kind = match pb[1] {
                    b'f' => CondKind::FileExists,
                    b's' => CondKind::FileSize,
                    b'd' => CondKind::FileDir,
                    b'x' => CondKind::FileXbit,
                    b'h' | b'L' | b'l' => CondKind::FileLink,
                    b'U' => CondKind::LookupUrl,
                    b'F' => CondKind::LookupFile,
                    _ => CondKind::Regex,
                };
            } else if pb.len() > 3 {
                let op = match (pb[1], pb[2]) {
                    (b'l', b't') => Some(CondKind::IntLt),
                    (b'l', b'e') => Some(CondKind::IntLe),
                    (b'g', b't') => Some(CondKind::IntGt),
                    (b'g', b'e') => Some(CondKind::IntGe),
                    (b'e', b'q') => Some(CondKind::IntEq),
                    (b'n', b'e') => {
                        // `-ne` is `-eq` inverted, so that `!-ne` is `-eq`.
                        flags ^= cflag::NOTMATCH;
                        Some(CondKind::IntEq)
                    }
                    _ => None,
                };
                if let Some(k) = op {
                    kind = k;
                    p = &p[3..];
                }
            }
        } else {
            match pb[0] {
                b'>' => {
                    if pb[1] == b'=' {
                        kind = CondKind::StrGe;
                        p = &p[2..];
                    } else {
                        kind = CondKind::StrGt;
                        p = &p[1..];
                    }
                }
                b'<' => {
                    if pb[1] == b'=' {
                        kind = CondKind::StrLe;
                        p = &p[2..];
                    } else {
                        kind = CondKind::StrLt;
                        p = &p[1..];
                    }
                }
                b'=' => {
                    kind = CondKind::StrEq;
                    p = &p[1..];
                    if p == "\"\"" {
                        p = "";
                    }
                }
                _ => {}
            }
        }
    }
    let string_cmp = matches!(
        kind,
        CondKind::StrLt | CondKind::StrLe | CondKind::StrEq | CondKind::StrGt | CondKind::StrGe
    );
    if kind != CondKind::Regex && !string_cmp && flags & cflag::NOCASE != 0 {
        warn(format!(
            "AH00665: RewriteCond: NoCase option for non-regex pattern '{p}' is not supported and will be ignored. ({}:{})",
            origin.file, origin.line
        ));
        flags &= !cflag::NOCASE;
    }
    let regex = if kind == CondKind::Regex {
        Some(
            Regex::new(p, flags & cflag::NOCASE != 0)
                .map_err(|_| format!("RewriteCond: cannot compile regular expression '{p}'"))?,
        )
    } else {
        None
    };
    let expr = if kind == CondKind::Expr {
        let e = crate::expr::Expr::parse_restricted(p, restricted)
            .map_err(|e| format!("RewriteCond: cannot compile expression \"{p}\": {e}"))?;
        Some(std::sync::Arc::new(e))
    } else {
        None
    };
    Ok(Cond {
        origin: origin.clone(),
        input: Template::parse(&a1),
        input_text: a1,
        pattern_text,
        kind,
        operand: p.to_string(),
        regex,
        expr,
        flags,
    })
}

/// Parse a `RewriteRule` line; `conds` are the conditions written before it.
pub fn parse_rule(line: &str, origin: &Origin, conds: Vec<Cond>) -> Result<Rule, String> {
    let (a1, a2, a3) = split_line(line).map_err(|e| {
        format!(
            "RewriteRule: {} (pattern='{}', substitution='{}', flags='{}')",
            e.message,
            or_null(&e.a1),
            or_null(&e.a2),
            or_null(&e.a3)
        )
    })?;
    let mut rule = Rule {
        origin: origin.clone(),
        pattern: String::new(),
        // Replaced below once the flags (NC) are known.
        regex: Regex::new("", false).map_err(|e| e.to_string())?,
        output: String::new(),
        subst: Template::default(),
        flags: 0,
        status: 302,
        forced_type: None,
        forced_handler: None,
        env: Vec::new(),
        cookies: Vec::new(),
        skip: 0,
        max_rounds: DEFAULT_MAX_ROUNDS,
        escapes: None,
        noescapes: None,
        conds,
        needs_captures: true,
    };
    if let Some(f) = &a3 {
        for (key, val) in flag_items(f) {
            rule_flag(&mut rule, &key, &val).map_err(|e| format!("RewriteRule: {e}"))?;
        }
    }
    let mut pattern: &str = &a1;
    if let Some(rest) = pattern.strip_prefix('!') {
        rule.flags |= flag::NOTMATCH;
        pattern = rest;
    }
    rule.regex = Regex::new(pattern, rule.flags & flag::NOCASE != 0)
        .map_err(|_| format!("RewriteRule: cannot compile regular expression '{pattern}'"))?;
    rule.pattern = pattern.to_string();
    let mut output = a2;
    if output == "-" {
        rule.flags |= flag::NOSUB;
    }
    if output.ends_with('?') {
        if rule.flags & flag::QSAPPEND != 0 {
            rule.flags |= flag::QSLAST;
        } else {
            rule.flags |= flag::QSNONE;
            output.pop();
        }
    } else if rule.flags & flag::QSDISCARD != 0 && !output.contains('?') {
        rule.flags |= flag::QSNONE;
    }
    rule.subst = Template::parse(&output);
    rule.output = output;
    rule.needs_captures = rule.subst.uses_rule_refs()
        || rule.forced_type.as_ref().is_some_and(Template::uses_rule_refs)
        || rule.forced_handler.as_ref().is_some_and(Template::uses_rule_refs)
        || rule.env.iter().any(EnvSpec::uses_rule_refs)
        || rule.cookies.iter().any(Template::uses_rule_refs)
        // An expression condition is conservatively assumed to look.
        || rule
            .conds
            .iter()
            .any(|c| c.expr.is_some() || c.input.uses_rule_refs());
    Ok(rule)
}

/// Apache's C `atoi`: blanks, a sign, digits; anything else ends it.
pub fn atoi(s: &str) -> i32 {
    let s = s.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == '\x0b');
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut v: i64 = 0;
    for c in digits.bytes() {
        if !c.is_ascii_digit() {
            break;
        }
        v = v.saturating_mul(10).saturating_add(i64::from(c - b'0'));
    }
    let v = if neg { -v } else { v };
    // glibc: (int) strtol(…), which saturates at the `long` range.
    v as i32
}

fn rule_flag(rule: &mut Rule, key: &str, val: &str) -> Result<(), String> {
    let Some(first) = key.chars().next() else {
        return Err(format!("unknown flag '{key}'"));
    };
    let rest = &key[first.len_utf8()..];
    let is = |s: &str| rest.eq_ignore_ascii_case(s);
    let bare = rest.is_empty();
    match first.to_ascii_lowercase() {
        'b' if bare || is("ackrefescaping") => {
            rule.flags |= flag::ESCAPEBACKREF;
            if !val.is_empty() {
                rule.escapes = Some(val.as_bytes().to_vec());
            }
        }
        'b' if is("NE") => {
            if val.is_empty() {
                return Err("flag 'BNE' wants a list of characters (i.e. [BNE=...])".into());
            }
            rule.noescapes = Some(val.as_bytes().to_vec());
        }
        'b' if is("NP") || is("ackrefernoplus") => rule.flags |= flag::ESCAPENOPLUS,
        'b' if is("CTLS") => rule.flags |= flag::ESCAPECTLS | flag::ESCAPEBACKREF,
        'c' if bare || is("hain") => rule.flags |= flag::CHAIN,
        'c' if is("O") || is("ookie") => rule.cookies.push(Template::parse(val)),
        // Any other word starting with D is accepted and ignored, as
        // Apache's lexer does.
        'd' => {
            if bare || is("PI") || is("iscardpath") {
                rule.flags |= flag::DISCARDPATHINFO;
            }
        }
        'e' if bare || is("nv") => rule.env.push(EnvSpec::parse(val)),
        'e' if is("nd") => rule.flags |= flag::END,
        'f' if bare || is("orbidden") => {
            rule.flags |= flag::STATUS | flag::NOSUB;
            rule.status = 403;
        }
        'g' if bare || is("one") => {
            rule.flags |= flag::STATUS | flag::NOSUB;
            rule.status = 410;
        }
        'h' if bare || is("andler") => rule.forced_handler = Some(Template::parse(val)),
        'l' if bare || is("ast") => rule.flags |= flag::LASTRULE,
        'n' if is("E") || is("oescape") => rule.flags |= flag::NOESCAPE,
        'n' if bare || is("ext") => {
            rule.flags |= flag::NEWROUND;
            if !val.is_empty() {
                rule.max_rounds = atoi(val);
            }
        }
        'n' if is("S") || is("osubreq") => rule.flags |= flag::IGNOREONSUBREQ,
        'n' if is("C") || is("ocase") => rule.flags |= flag::NOCASE,
        'p' if bare || is("roxy") => rule.flags |= flag::PROXY,
        'p' if is("T") || is("assthrough") => rule.flags |= flag::PASSTHROUGH,
        'q' if is("SA") || is("sappend") => rule.flags |= flag::QSAPPEND,
        'q' if is("SD") || is("sdiscard") => rule.flags |= flag::QSDISCARD,
        'q' if is("SL") || is("slast") => rule.flags |= flag::QSLAST,
        'r' if bare || is("edirect") => {
            rule.flags |= flag::FORCEREDIRECT;
            if !val.is_empty() {
                rule.status = redirect_status(rule, val)?;
            }
        }
        's' if bare || is("kip") => rule.skip = atoi(val),
        't' if bare || is("ype") => rule.forced_type = Some(Template::parse(val)),
        'u' if is("nsafePrefixStat") => rule.flags |= flag::UNSAFE_PREFIX_STAT,
        'u' if is("nsafeAllow3F") => rule.flags |= flag::UNSAFE_ALLOW3F,
        'u' if is("NC") => rule.flags |= flag::UNC,
        _ => return Err(format!("unknown flag '{key}'")),
    }
    Ok(())
}

/// The status of `[R=val]`: a keyword, a number Apache knows (a non-3xx
/// one makes the rule answer with it), or 0 for an unknown word (302).
fn redirect_status(rule: &mut Rule, val: &str) -> Result<u16, String> {
    if val.eq_ignore_ascii_case("permanent") {
        return Ok(301);
    }
    if val.eq_ignore_ascii_case("temp") {
        return Ok(302);
    }
    if val.eq_ignore_ascii_case("seeother") {
        return Ok(303);
    }
    if !val.as_bytes()[0].is_ascii_digit() {
        return Ok(0);
    }
    let n = atoi(val);
    if n != 500 && !crate::http::status::is_known(clamp_status(n)) {
        return Err(format!("invalid HTTP response code '{val}' for flag 'R'"));
    }
    if !(300..400).contains(&n) {
        rule.flags |= flag::STATUS | flag::NOSUB;
    }
    Ok(clamp_status(n))
}

/// A status number as Apache keeps it; out-of-range numbers are unknown.
fn clamp_status(n: i32) -> u16 {
    u16::try_from(n).unwrap_or(0)
}
