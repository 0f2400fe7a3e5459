//! mod_substitute: the `SUBSTITUTE` output filter, which edits a response
//! body line by line with `s/pattern/replacement/[infq]` rules
//! (`Substitute`), and its settings (`SubstituteMaxLineLength`,
//! `SubstituteInheritBefore`).
//!
//! The filter works as the module does, and its quirks are a client's
//! answer, so they are kept:
//!
//! * The body is cut into lines after each `\n`; a line is matched alone,
//!   so a pattern never spans two lines, and `$` (end-only, no `DOTALL`)
//!   matches after the newline, never before it.
//! * Each rule runs over the whole line in turn, repeatedly from just past
//!   its previous match, with `^` matching again at each new start (the
//!   module restarts the regex there).
//! * A rule flagged `q`, or the only rule of the directory, leaves the line
//!   in pieces: the text before a match, the replacement, the rest; later
//!   rules look at each piece alone, so they can neither match across a
//!   replacement's edges nor miss text inside it. Otherwise (`f`, the
//!   default when there are several rules) the line is made whole again
//!   after each rule.
//! * A line longer than `SubstituteMaxLineLength` (1 MiB) fails the answer
//!   (500, `AH01328`) when the module measures it: when a rule matches in
//!   it, or when it came in more than one bucket (the module measures a
//!   line it had to join).
//! * `Content-Length` goes. Lines are passed on at the end of each bucket,
//!   so a body with a newline leaves without a length (chunked), and one
//!   without any newline is held to the end and gets its length back.
//!
//! Rules of the directory come before inherited ones unless
//! `SubstituteInheritBefore On`.

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::http::{Body, Response};
use crate::modules::deflate::{for_each_bucket, set_filtered_body};
use crate::regex_engine::Regex;
use crate::registry::{flag, Args, Directive, Module, Run, OR_FILEINFO};
use crate::request::{Ctx, Status};
use std::sync::Arc;

/// `SubstituteMaxLineLength`'s default (`AP_SUBST_MAX_LINE_LENGTH`).
const MAX_LINE_LENGTH: u64 = 1 << 20;

/// The most a back-end's body gives Apache's filters at a time
/// (`ProxyIOBufferSize`'s default, `AP_IOBUFSIZE`).
const BACKEND_READ: usize = 8192;

/// Groups a replacement may name, `$0`…`$9` (`AP_MAX_REG_MATCH`).
const GROUPS: usize = 10;

/// What a rule looks for.
#[derive(Clone, Debug)]
enum Matcher {
    /// `n`: a fixed string (`i`: ASCII letters in any case).
    Fixed {
        needle: Vec<u8>,
        any_case: bool,
    },
    Regex(Regex),
}

/// One `Substitute` rule.
#[derive(Clone, Debug)]
pub struct Rule {
    matcher: Matcher,
    replacement: Vec<u8>,
    /// `f` (the default) or `q`.
    flatten: bool,
}

/// The module's per-directory configuration.
#[derive(Clone, Debug, Default)]
pub struct SubstituteDir {
    rules: Vec<Arc<Rule>>,
    max_line_length: Option<u64>,
    inherit_before: Option<bool>,
}

impl SubstituteDir {
    pub fn merge(base: &SubstituteDir, new: &SubstituteDir) -> SubstituteDir {
        let inherit_before = new.inherit_before.or(base.inherit_before);
        let (first, then) = if inherit_before == Some(true) {
            (&base.rules, &new.rules)
        } else {
            (&new.rules, &base.rules)
        };
        SubstituteDir {
            rules: first.iter().chain(then).cloned().collect(),
            max_line_length: new.max_line_length.or(base.max_line_length),
            inherit_before,
        }
    }
}

// ---------------------------------------------------------------------------
// Directives

/// `Substitute s/from/to/[infq]`, read as the module reads it: the
/// delimiter is the character after `s`, and nothing escapes it.
fn parse_rule(line: &str) -> Result<Rule, String> {
    let bytes = htaccel_conf::string_to_bytes(line);
    if !bytes.first().is_some_and(|c| c.eq_ignore_ascii_case(&b's')) {
        return Err("Bad Substitute format, must be an s/// pattern".into());
    }
    let incomplete = || "Bad Substitute format, must be a complete s/// pattern".to_string();
    let delim = *bytes.get(1).filter(|d| **d != 0).ok_or_else(incomplete)?;
    let rest = &bytes[2..];
    let Some(end_from) = rest.iter().position(|c| *c == delim) else {
        return Err(incomplete());
    };
    let from = &rest[..end_from];
    let rest = &rest[end_from + 1..];
    let (to, flags) = match rest.iter().position(|c| *c == delim) {
        Some(end_to) => (&rest[..end_to], &rest[end_to + 1..]),
        None => (rest, &[][..]),
    };
    if from.is_empty() {
        return Err(incomplete());
    }
    let (mut any_case, mut fixed, mut flatten) = (false, false, true);
    for flag in flags {
        match flag.to_ascii_lowercase() {
            b'i' => any_case = true,
            b'n' => fixed = true,
            b'f' => flatten = true,
            b'q' => flatten = false,
            _ => return Err("Bad Substitute flag, only s///[infq] are supported".into()),
        }
    }
    let matcher = if fixed {
        Matcher::Fixed {
            needle: from.to_vec(),
            any_case,
        }
    } else {
        let text = htaccel_conf::bytes_to_string(from);
        Matcher::Regex(
            Regex::new_without_dotall(&text, any_case)
                .map_err(|_| "Substitute could not compile regex".to_string())?,
        )
    };
    Ok(Rule {
        matcher,
        replacement: to.to_vec(),
        flatten,
    })
}

fn run_substitute(
    _w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
) -> Result<(), String> {
    let rule = parse_rule(&inv.words[0])?;
    c.substitute.rules.push(Arc::new(rule));
    Ok(())
}

/// `SubstituteMaxLineLength N[bkmg]` (`apr_strtoff`, then one suffix).
fn run_max_line_length(
    _w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
) -> Result<(), String> {
    let refused = || {
        "SubstituteMaxLineLength must be a non-negative integer optionally suffixed with 'b', 'k', 'm' or 'g'."
            .to_string()
    };
    let text = inv.words[0].trim_start();
    let digits_from = usize::from(text.starts_with(['+', '-']));
    let digits_end = text[digits_from..]
        .find(|c: char| !c.is_ascii_digit())
        .map_or(text.len(), |i| digits_from + i);
    let number = &text[..digits_end];
    let value: i64 = if text[digits_from..digits_end].is_empty() {
        0
    } else {
        number.parse().map_err(|_| refused())?
    };
    let scale: i64 = match &text[digits_end..] {
        "" | "b" | "B" => 1,
        "k" | "K" => 1 << 10,
        "m" | "M" => 1 << 20,
        "g" | "G" => 1 << 30,
        _ => return Err(refused()),
    };
    let max = value.checked_mul(scale).ok_or_else(refused)?;
    if max < 0 {
        return Err(refused());
    }
    c.substitute.max_line_length = Some(max as u64);
    Ok(())
}

pub static DIRECTIVES: &[Directive] = &[
    Directive {
        name: "Substitute",
        args: Args::Take1,
        req_override: OR_FILEINFO,
        about: "Pattern to filter the response content (s/foo/bar/[inf])",
        run: Run::Handler(run_substitute),
    },
    Directive {
        name: "SubstituteMaxLineLength",
        args: Args::Take1,
        req_override: OR_FILEINFO,
        about: "Maximum line length",
        run: Run::Handler(run_max_line_length),
    },
    Directive {
        name: "SubstituteInheritBefore",
        args: Args::Flag,
        req_override: OR_FILEINFO,
        about: "Apply inherited patterns before those of the current context",
        run: Run::Handler(|_w, inv, c| {
            c.substitute.inherit_before = Some(flag(&inv.words));
            Ok(())
        }),
    },
];

pub static MODULE: Module = Module {
    source: "mod_substitute.c",
    identifier: "substitute_module",
    builtin: false,
    directives: DIRECTIVES,
};

// ---------------------------------------------------------------------------
// The filter

/// A line the module refuses (`APR_ENOMEM`).
struct LineTooLong;

/// The first occurrence of `needle` in `hay` (`apr_strmatch`).
fn find_fixed(hay: &[u8], needle: &[u8], any_case: bool) -> Option<usize> {
    if needle.len() > hay.len() {
        return None;
    }
    if !any_case {
        return memchr::memmem::find(hay, needle);
    }
    hay.windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
}

/// One rule over one piece of a line: the pieces it leaves in `out`.
fn apply_to_piece(
    rule: &Rule,
    piece: Vec<u8>,
    flatten: bool,
    max: usize,
    out: &mut Vec<Vec<u8>>,
) -> Result<(), LineTooLong> {
    let mut pos = 0;
    let mut matched = false;
    // `flatten`: the piece rebuilt whole; else the pieces it splits into,
    // with the space the module still allows.
    let mut whole = Vec::new();
    let mut space_left = max;
    loop {
        let rest = &piece[pos..];
        let found = match &rule.matcher {
            Matcher::Fixed { needle, any_case } => find_fixed(rest, needle, *any_case)
                .map(|at| (at, at + needle.len(), rule.replacement.clone())),
            Matcher::Regex(re) => match re.captures(rest) {
                None => None,
                Some(caps) => {
                    let (start, end) = caps[0].unwrap_or((0, 0));
                    // What room the replacement has: the module bounds it
                    // by the line's length limit.
                    let room = if flatten {
                        if whole.len() + start >= max {
                            return Err(LineTooLong);
                        }
                        max - whole.len() - start
                    } else {
                        if space_left <= start {
                            return Err(LineTooLong);
                        }
                        space_left - start
                    };
                    let caps = &caps[..caps.len().min(GROUPS)];
                    let repl = crate::regsub::pregsub_within(&rule.replacement, rest, caps, room)
                        .ok_or(LineTooLong)?;
                    Some((start, end, repl))
                }
            },
        };
        let Some((start, end, repl)) = found else {
            break;
        };
        if end == 0 {
            // An empty match where the last one ended: the module matches
            // it again forever, until the line limit stops it (or never,
            // with an empty replacement).
            return Err(LineTooLong);
        }
        matched = true;
        let fixed = matches!(rule.matcher, Matcher::Fixed { .. });
        if flatten {
            if fixed && whole.len() + start + repl.len() > max {
                return Err(LineTooLong);
            }
            whole.extend_from_slice(&rest[..start]);
            whole.extend_from_slice(&repl);
        } else {
            if fixed && space_left < start + repl.len() {
                return Err(LineTooLong);
            }
            space_left -= start + repl.len();
            out.push(rest[..start].to_vec());
            out.push(repl);
        }
        pos += end;
    }
    if !matched {
        out.push(piece);
        return Ok(());
    }
    let tail = &piece[pos..];
    if flatten {
        whole.extend_from_slice(tail);
        out.push(whole);
    } else {
        // A fixed-string rule checks what is left of the line too.
        if matches!(rule.matcher, Matcher::Fixed { .. }) && space_left < tail.len() {
            return Err(LineTooLong);
        }
        out.push(tail.to_vec());
    }
    Ok(())
}

/// Every rule over one line (`do_pattmatch`), the result appended to `out`.
/// Returns how many pieces (buckets) the line left.
fn substitute_line(
    rules: &[Arc<Rule>],
    line: Vec<u8>,
    max: usize,
    out: &mut Vec<u8>,
) -> Result<usize, LineTooLong> {
    // One rule alone never rebuilds the line (the module's shortcut).
    let alone = rules.len() == 1;
    let mut pieces = vec![line];
    for rule in rules {
        let mut next = Vec::with_capacity(pieces.len() + 2);
        for piece in pieces {
            apply_to_piece(rule, piece, rule.flatten && !alone, max, &mut next)?;
        }
        pieces = next;
    }
    for piece in &pieces {
        out.extend_from_slice(piece);
    }
    Ok(pieces.len())
}

/// Pieces passed on since the last flush beyond which the module sends a
/// `FLUSH` bucket (`AP_MAX_BUCKETS`).
const MAX_PIECES: usize = 1000;

/// What the filter made of a body: the new body, whether lines went on
/// before its end, and where it sent `FLUSH` buckets.
struct Filtered {
    body: Vec<u8>,
    early: bool,
    flushes: Vec<u64>,
}

/// The filter over a whole body, bucket by bucket.
/// `piece`: the size of the buckets a back-end's body came in (it is
/// collected whole), `None` for a body the handler gave at once.
fn filter_body(
    rules: &[Arc<Rule>],
    body: &Body,
    max: u64,
    piece: Option<usize>,
) -> Result<Result<Filtered, LineTooLong>, String> {
    let max_len = usize::try_from(max).unwrap_or(usize::MAX);
    let mut out = Vec::new();
    let mut early = false;
    let mut flushes = Vec::new();
    // A line begun in an earlier bucket (`linebb`).
    let mut pending: Vec<u8> = Vec::new();
    let mut failed = false;
    for_each_bucket(body, |whole| {
        for bucket in whole.chunks(piece.unwrap_or(whole.len()).max(1)) {
            let mut rest = bucket;
            let mut passed = false;
            // Pieces passed on from this bucket since the last flush.
            let mut pieces = 0;
            while let Some(nl) = memchr::memchr(b'\n', rest) {
                let (part, after) = rest.split_at(nl + 1);
                rest = after;
                let line = if pending.is_empty() {
                    part.to_vec()
                } else {
                    pending.extend_from_slice(part);
                    if pending.len() as u64 > max {
                        failed = true;
                        return Ok(true);
                    }
                    std::mem::take(&mut pending)
                };
                match substitute_line(rules, line, max_len, &mut out) {
                    Ok(n) => pieces += n,
                    Err(LineTooLong) => {
                        failed = true;
                        return Ok(true);
                    }
                }
                if pieces > MAX_PIECES {
                    flushes.push(out.len() as u64);
                    pieces = 0;
                }
                passed = true;
            }
            pending.extend_from_slice(rest);
            early |= passed;
        }
        Ok(false)
    })?;
    if !failed && !pending.is_empty() {
        failed = pending.len() as u64 > max
            || substitute_line(rules, std::mem::take(&mut pending), max_len, &mut out).is_err();
    }
    Ok(if failed {
        Err(LineTooLong)
    } else {
        Ok(Filtered {
            body: out,
            early,
            flushes,
        })
    })
}

/// The `SUBSTITUTE` filter on a response (`substitute_filter`). A `HEAD`
/// response carries its body here, as Apache's brigade does.
pub fn substitute(ctx: &mut Ctx<'_>, resp: &mut Response) -> Result<(), Status> {
    let conf = ctx.conf.substitute.clone();
    // The module's first call drops the length, whatever follows.
    resp.remove_header("Content-Length");
    if matches!(resp.status, 204 | 304) {
        return Ok(());
    }
    let max = conf.max_line_length.unwrap_or(MAX_LINE_LENGTH);
    // A back-end's body reached Apache's filters in reads of the proxy's
    // buffer size.
    let piece = (resp.arrival == crate::http::Arrival::InPieces).then_some(BACKEND_READ);
    let filtered = match filter_body(&conf.rules, &resp.body, max, piece) {
        Ok(f) => f,
        Err(e) => {
            ctx.site
                .log
                .error("error", "substitute", Some(ctx.req.remote()), &e);
            return Err(500);
        }
    };
    let Ok(Filtered {
        body,
        early,
        flushes,
    }) = filtered
    else {
        ctx.log_error(
            "error",
            "substitute",
            &format!("AH01328: Line too long, URI {}", ctx.uri),
        );
        return Err(500);
    };
    if early {
        // Lines went down the chain before the end: the next filter sees
        // the body in pieces, and one that holds its output to the end
        // makes the length known again.
        resp.arrival = crate::http::Arrival::InPieces;
        ctx.body_passed_unflushed = flushes.is_empty();
        ctx.flushes = flushes;
    } else {
        // Held to the end: the next filter sees all of it at once.
        resp.arrival = crate::http::Arrival::Whole;
    }
    if ctx.method == "HEAD" && early {
        // A HEAD whose length Apache could not learn: no length at all.
        // The body stays for the filters after this one (a compressor
        // may learn a length again); the answer to a HEAD drops it.
        resp.body = Body::bytes(body);
        resp.set_header("Transfer-Encoding", "chunked");
        return Ok(());
    }
    set_filtered_body(ctx, resp, body, early);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(rules: &[&str], body: &str) -> Result<(String, bool), ()> {
        let rules: Vec<Arc<Rule>> = rules
            .iter()
            .map(|r| Arc::new(parse_rule(r).expect("a rule")))
            .collect();
        match filter_body(
            &rules,
            &Body::bytes(body.as_bytes().to_vec()),
            MAX_LINE_LENGTH,
            None,
        ) {
            Ok(Ok(f)) => Ok((String::from_utf8(f.body).unwrap(), f.early)),
            _ => Err(()),
        }
    }

    #[test]
    fn rules_are_read_as_the_module_reads_them() {
        assert!(parse_rule("s/a/b/").is_ok());
        assert!(parse_rule("S|a|b|inq").is_ok());
        assert!(parse_rule("s/a/b").is_ok(), "no closing delimiter needed");
        assert!(parse_rule("s/a/").is_ok(), "an empty replacement");
        assert!(parse_rule("x/a/b/").is_err());
        assert!(parse_rule("s//b/").is_err());
        assert!(parse_rule("s/a").is_err());
        assert!(parse_rule("s").is_err());
        assert!(parse_rule("s/a/b/z").is_err());
        assert!(parse_rule("s/(/b/").is_err());
        // Nothing escapes the delimiter: `a\` is the pattern, `b` the
        // replacement, `c/` the flags.
        assert!(parse_rule("s/a\\/b/c/").is_err());
    }

    #[test]
    fn lines_and_anchors_as_the_module_has_them() {
        assert_eq!(
            run(&["s/foo/BAR/"], "foo x foo\nfoo\n"),
            Ok(("BAR x BAR\nBAR\n".into(), true))
        );
        // `^` matches again after each match; `$` only after the newline.
        assert_eq!(run(&["s/^a/b/"], "aaa\n"), Ok(("bbb\n".into(), true)));
        assert_eq!(run(&["s/a$/b/"], "aa\n"), Ok(("aa\n".into(), true)));
        assert_eq!(run(&["s/a$/b/"], "aa"), Ok(("ab".into(), false)));
        // `.` stops at the newline.
        assert_eq!(
            run(&["s/a.*/X/"], "abc\ndef\n"),
            Ok(("X\ndef\n".into(), true))
        );
        assert_eq!(
            run(&["s/(\\w+)@(\\w+)/$2 at $1/"], "me@host\n"),
            Ok(("host at me\n".into(), true))
        );
        assert_eq!(run(&["s/A/b/in"], "aAa\n"), Ok(("bbb\n".into(), true)));
        assert_eq!(
            run(&["s/a.b/X/n"], "a.b axb\n"),
            Ok(("X axb\n".into(), true))
        );
    }

    #[test]
    fn pieces_and_flattening() {
        // Flattened (the default with several rules): the second rule sees
        // the first one's result whole.
        assert_eq!(
            run(&["s/a/b/", "s/bc/X/"], "ac\n"),
            Ok(("X\n".into(), true))
        );
        // `q`: the replacement is a piece of its own.
        assert_eq!(
            run(&["s/a/b/q", "s/bc/X/"], "ac\n"),
            Ok(("bc\n".into(), true))
        );
        // Each piece starts anew: `^` matches at the start of each.
        assert_eq!(
            run(&["s/-/+/q", "s/^x/Y/"], "x-x\n"),
            Ok(("Y+Y\n".into(), true))
        );
    }

    #[test]
    fn limits() {
        let long = format!("{}foo\n", "x".repeat(300));
        let rules = vec![Arc::new(parse_rule("s/foo/bar/").unwrap())];
        let body = Body::bytes(long.clone().into_bytes());
        assert!(matches!(
            filter_body(&rules, &body, 100, None),
            Ok(Err(LineTooLong))
        ));
        // Without a match the module never measures the line.
        let body = Body::bytes(long.replace("foo", "baz").into_bytes());
        assert!(matches!(filter_body(&rules, &body, 100, None), Ok(Ok(_))));
        // A last line without a newline is always measured.
        let body = Body::bytes("y".repeat(300).into_bytes());
        assert!(matches!(
            filter_body(&rules, &body, 100, None),
            Ok(Err(LineTooLong))
        ));
        // An empty match would repeat forever.
        assert_eq!(run(&["s/x*/-/"], "abc\n"), Err(()));
    }

    #[test]
    fn merge_order() {
        let with = |r: &[&str], before: Option<bool>| SubstituteDir {
            rules: r.iter().map(|s| Arc::new(parse_rule(s).unwrap())).collect(),
            max_line_length: None,
            inherit_before: before,
        };
        let replacement = |d: &SubstituteDir| -> Vec<Vec<u8>> {
            d.rules.iter().map(|r| r.replacement.clone()).collect()
        };
        let base = with(&["s/a/1/"], None);
        let child = with(&["s/a/2/"], None);
        assert_eq!(
            replacement(&SubstituteDir::merge(&base, &child)),
            [b"2".to_vec(), b"1".to_vec()]
        );
        let child = with(&["s/a/2/"], Some(true));
        assert_eq!(
            replacement(&SubstituteDir::merge(&base, &child)),
            [b"1".to_vec(), b"2".to_vec()]
        );
    }
}
