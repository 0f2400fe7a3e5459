//! mod_expires: `ExpiresActive`, `ExpiresByType`, `ExpiresDefault` —
//! `Expires` and `Cache-Control: max-age` computed from the response's
//! content type. The directives belong to the `Indexes` override class.
//!
//! Nothing happens unless `ExpiresActive On` is in force. The rule for a
//! response is the `ExpiresByType` of its type without parameters, else
//! the `type/*` entry (only when the innermost section with any `Expires*`
//! line had a `type/*` one — Apache keeps that flag per section, it does
//! not inherit it), else `ExpiresDefault`. A rule is a base — the time of the
//! request (`access`, `now`) or the file's modification time — plus a
//! number of seconds. It applies to every response that is not a 4xx or
//! 5xx (redirects and 304 included), unless the response already has an
//! `Expires`; `max-age` is appended to any `Cache-Control` there is. This
//! output filter runs before mod_headers', so `Header` edits see and can
//! replace what it set.

use crate::dirconf::DirConf;
use crate::header_table::Output;
use crate::registry::{Args, Directive, Module, Run, OR_INDEXES};
use crate::request::Ctx;
use htaccel_conf::getword_conf;

/// What an expiry is counted from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Base {
    /// `access`, `now`, `A<secs>`: the time of the request.
    Access,
    /// `modification`, `M<secs>`: the file's modification time.
    Modification,
}

/// A compiled expiry code (Apache's `A<secs>`/`M<secs>` form).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Code {
    base: Base,
    secs: i32,
}

/// The module's per-directory slot.
#[derive(Clone, Debug, Default)]
pub struct ExpiresDir {
    active: Option<bool>,
    default: Option<Code>,
    /// `ExpiresByType`: inner sections first, so the first match wins.
    by_type: Vec<(String, Code)>,
    /// Whether this section's own `ExpiresByType` lines had a `type/*`.
    wildcards: bool,
}

impl ExpiresDir {
    /// Apache creates a section's slot only when the section has one of
    /// these directives, and merges only then: a section without any leaves
    /// everything, the wildcard flag included, as inherited.
    pub fn merge(base: &ExpiresDir, add: &ExpiresDir) -> ExpiresDir {
        if add.active.is_none() && add.default.is_none() && add.by_type.is_empty() {
            return base.clone();
        }
        let mut by_type = add.by_type.clone();
        for (t, c) in &base.by_type {
            if !by_type.iter().any(|(n, _)| n.eq_ignore_ascii_case(t)) {
                by_type.push((t.clone(), *c));
            }
        }
        ExpiresDir {
            active: add.active.or(base.active),
            default: add.default.or(base.default),
            by_type,
            wildcards: add.wildcards,
        }
    }

    /// Whether `ExpiresActive On` is in force with any rule.
    pub fn is_active(&self) -> bool {
        self.active == Some(true) && (!self.by_type.is_empty() || self.default.is_some())
    }

    fn by_type(&self, t: &str) -> Option<Code> {
        self.by_type
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(t))
            .map(|(_, c)| *c)
    }

    /// The rule for a response of `content_type` (`None`: no type).
    fn rule(&self, content_type: Option<&str>) -> Option<Code> {
        if let Some(code) = content_type.and_then(|t| self.by_type(without_params(t))) {
            return Some(code);
        }
        if self.wildcards {
            if let Some((major, _)) = content_type.and_then(|t| t.split_once('/')) {
                return self.by_type(&format!("{major}/*")).or(self.default);
            }
        }
        self.default
    }
}

/// `type/subtype` of a content type (Apache's `ap_field_noparam`).
fn without_params(t: &str) -> &str {
    match t.find(';') {
        Some(i) => t[..i].trim_end_matches(|c: char| c.is_ascii_whitespace()),
        None => t,
    }
}

/// C's `atoi` as glibc has it: optional blanks and sign, digits up to the
/// first other character, the `long` result cut to `int`.
fn atoi(s: &str) -> i32 {
    let s = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut v: i64 = 0;
    for b in digits.bytes().take_while(u8::is_ascii_digit) {
        v = v.saturating_mul(10).saturating_add(i64::from(b - b'0'));
    }
    (if neg { v.saturating_neg() } else { v }) as i32
}

/// Parse an expiry code: `A<secs>`, `M<secs>`, or
/// `<base> [plus] {<num> <unit>}*` with units matched by prefix.
fn parse_code(code: &str) -> Result<Code, String> {
    match code.as_bytes().first() {
        Some(b'A') => {
            return Ok(Code {
                base: Base::Access,
                secs: atoi(&code[1..]),
            })
        }
        Some(b'M') => {
            return Ok(Code {
                base: Base::Modification,
                secs: atoi(&code[1..]),
            })
        }
        _ => {}
    }
    let starts = |w: &str, p: &str, n: usize| {
        let (w, p) = (w.as_bytes(), p.as_bytes());
        (0..n).all(|i| w.get(i).map(u8::to_ascii_lowercase) == p.get(i).copied())
    };
    let mut rest = code;
    let word = getword_conf(&mut rest);
    let base = if starts(&word, "now", 1) || starts(&word, "access", 1) {
        Base::Access
    } else if starts(&word, "modification", 1) {
        Base::Modification
    } else {
        return Err(format!("bad expires code, unrecognised <base> '{word}'"));
    };
    let mut word = getword_conf(&mut rest);
    if starts(&word, "plus", 1) {
        word = getword_conf(&mut rest);
    }
    let mut secs: i32 = 0;
    while !word.is_empty() {
        if !word.as_bytes()[0].is_ascii_digit() {
            return Err(format!(
                "bad expires code, numeric value expected <num> '{word}'"
            ));
        }
        let num = atoi(&word);
        let unit = getword_conf(&mut rest);
        if unit.is_empty() {
            return Err("bad expires code, missing <type>".into());
        }
        let factor: i32 = if starts(&unit, "years", 1) {
            60 * 60 * 24 * 365
        } else if starts(&unit, "months", 2) {
            60 * 60 * 24 * 30
        } else if starts(&unit, "weeks", 1) {
            60 * 60 * 24 * 7
        } else if starts(&unit, "days", 1) {
            60 * 60 * 24
        } else if starts(&unit, "hours", 1) {
            60 * 60
        } else if starts(&unit, "minutes", 2) {
            60
        } else if starts(&unit, "seconds", 1) {
            1
        } else {
            return Err(format!("bad expires code, unrecognised <type>'{unit}'"));
        };
        secs = secs.wrapping_add(factor.wrapping_mul(num));
        word = getword_conf(&mut rest);
    }
    Ok(Code { base, secs })
}

/// The output filter.
pub fn output(ctx: &mut Ctx<'_>, o: &mut Output) {
    if (400..600).contains(&o.status) || ctx.is_subreq {
        return;
    }
    let conf = &ctx.conf.expires;
    if !conf.is_active() {
        return;
    }
    if o.err.get("Expires").is_some() || o.out.get("Expires").is_some() {
        return;
    }
    let Some(code) = conf.rule(o.content_type.as_deref()) else {
        return;
    };
    let now = ctx.request_time_us();
    let base = match code.base {
        Base::Access => now,
        Base::Modification => match &ctx.finfo {
            Some(f) => f.mtime_us,
            // No file, no modification time: nothing is set.
            None => return,
        },
    };
    let expires = (base + i64::from(code.secs) * 1_000_000).max(now);
    let max_age = (expires - now) / 1_000_000;
    o.out
        .merge("Cache-Control", format!("max-age={max_age}").as_bytes());
    let date = crate::http::date::fmt_http_date(expires.div_euclid(1_000_000));
    o.out.set("Expires", date.into_bytes());
}

fn expires_active(c: &mut DirConf, on: bool) {
    c.expires.active = Some(on);
}

pub static DIRECTIVES: &[Directive] = &[
    Directive {
        name: "ExpiresActive",
        args: Args::Flag,
        req_override: OR_INDEXES,
        about: "Limited to 'on' or 'off'",
        run: Run::Handler(|_w, inv, c| {
            expires_active(c, crate::registry::flag(&inv.words));
            Ok(())
        }),
    },
    Directive {
        name: "ExpiresByType",
        args: Args::Take2,
        req_override: OR_INDEXES,
        about: "a MIME type followed by an expiry date code",
        run: Run::Handler(|_w, inv, c| {
            let (mime, code) = (&inv.words[0], &inv.words[1]);
            let Some(slash) = mime.rfind('/') else {
                return Err("Invalid mimetype: should contain a slash".into());
            };
            if &mime[slash + 1..] == "*" {
                c.expires.wildcards = true;
            }
            let code =
                parse_code(code).map_err(|e| format!("'ExpiresByType {mime} {code}': {e}"))?;
            let list = &mut c.expires.by_type;
            match list.iter_mut().find(|(n, _)| n.eq_ignore_ascii_case(mime)) {
                Some(slot) => slot.1 = code,
                None => list.push((mime.clone(), code)),
            }
            Ok(())
        }),
    },
    Directive {
        name: "ExpiresDefault",
        args: Args::Take1,
        req_override: OR_INDEXES,
        about: "an expiry date code",
        run: Run::Handler(|_w, inv, c| {
            let code = &inv.words[0];
            c.expires.default =
                Some(parse_code(code).map_err(|e| format!("'ExpiresDefault {code}': {e}"))?);
            Ok(())
        }),
    },
];

pub static MODULE: Module = Module {
    source: "mod_expires.c",
    identifier: "expires_module",
    builtin: false,
    directives: DIRECTIVES,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn code(s: &str) -> Result<(Base, i32), String> {
        parse_code(s).map(|c| (c.base, c.secs))
    }

    #[test]
    fn codes() {
        assert_eq!(code("access plus 1 month"), Ok((Base::Access, 2_592_000)));
        assert_eq!(
            code("now plus 1 year 2 days"),
            Ok((Base::Access, 31_536_000 + 172_800))
        );
        assert_eq!(
            code("modification 2 hours 30 mins"),
            Ok((Base::Modification, 9_000))
        );
        assert_eq!(code("a 1 w"), Ok((Base::Access, 604_800)));
        assert_eq!(code("access"), Ok((Base::Access, 0)));
        assert_eq!(code("A60"), Ok((Base::Access, 60)));
        assert_eq!(code("M-5"), Ok((Base::Modification, -5)));
        // A leading capital A is the old form, whatever follows.
        assert_eq!(code("Access plus 1 day"), Ok((Base::Access, 0)));
        assert_eq!(
            code("later plus 1 day"),
            Err("bad expires code, unrecognised <base> 'later'".into())
        );
        assert_eq!(
            code("access plus x days"),
            Err("bad expires code, numeric value expected <num> 'x'".into())
        );
        assert_eq!(
            code("access plus 1"),
            Err("bad expires code, missing <type>".into())
        );
        assert_eq!(
            code("access plus 1 m"),
            Err("bad expires code, unrecognised <type>'m'".into())
        );
    }

    #[test]
    fn lookup_order() {
        let a = |s| parse_code(s).unwrap();
        let mut parent = ExpiresDir {
            active: Some(true),
            default: Some(a("A1")),
            by_type: vec![("image/*".into(), a("A2")), ("text/html".into(), a("A3"))],
            wildcards: true,
        };
        assert_eq!(parent.rule(Some("text/html; charset=utf-8")), Some(a("A3")));
        assert_eq!(parent.rule(Some("image/png")), Some(a("A2")));
        assert_eq!(parent.rule(Some("text/css")), Some(a("A1")));
        assert_eq!(parent.rule(None), Some(a("A1")));
        // A child section with ExpiresByType but no wildcard turns the
        // inherited wildcard off.
        let child = ExpiresDir {
            by_type: vec![("TEXT/HTML".into(), a("A4"))],
            ..Default::default()
        };
        let m = ExpiresDir::merge(&parent, &child);
        assert_eq!(m.rule(Some("text/html")), Some(a("A4")));
        assert_eq!(m.rule(Some("image/png")), Some(a("A1")));
        parent.wildcards = false;
        assert_eq!(parent.rule(Some("image/png")), Some(a("A1")));
    }

    #[test]
    fn c_atoi() {
        assert_eq!(atoi(" 42x"), 42);
        assert_eq!(atoi("-7"), -7);
        assert_eq!(atoi("x"), 0);
        assert_eq!(atoi("99999999999999999999"), -1);
    }
}
