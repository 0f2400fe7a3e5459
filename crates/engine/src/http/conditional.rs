//! Conditional requests as Apache 2.4 evaluates them (`ap_meets_conditions`
//! and the `ap_condition_if_*` helpers in `http_protocol.c`).
//!
//! Apache follows RFC 7232 only loosely, and clients notice the differences
//! (a 200 where a 304 was expected, or the reverse), so the decisions are
//! reproduced rule for rule:
//!
//! * The checks run in the order If-Match, If-Unmodified-Since,
//!   If-None-Match, If-Modified-Since, and only for a 2xx response so far.
//! * A 304 needs every present validator to agree: If-Modified-Since is *not*
//!   ignored when If-None-Match is present, and an If-Unmodified-Since that
//!   passes, an If-Modified-Since older than the file, a future one or an
//!   unparsable one all veto a 304 that If-None-Match would have given.
//! * `If-None-Match` compares weakly for GET/HEAD without `Range`, strongly
//!   otherwise; a match on any other method is 412. `*` is tested on the first
//!   character only, for every method.
//! * `If-Match` is strong: a `W/` tag in the list ends the search there.
//! * Dates are compared in whole seconds; a date match on a file modified less
//!   than 60 s before the request is only "weak", which is enough for 304 and
//!   412 but not together with `Range`.
//! * `If-Range` (only with `Range`) compares its value byte for byte with the
//!   `ETag` when it starts with `"`, else as a date equal to `Last-Modified`;
//!   whenever both headers are present no 304 is produced.
//!
//! The inputs are the request headers and the response's own validators
//! (`ETag`, `Last-Modified`, `Date` as the handler set them), exactly what
//! Apache reads; header values are used merged, as Apache merges repeated
//! request headers with ", ".

use super::date::parse_http_date;
use super::{Headers, Response};

/// The answer of one `ap_condition_if_*` check, ordered as Apache orders it
/// (`>= Weak` means "the condition holds").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Cond {
    /// The header is absent.
    None,
    NoMatch,
    Weak,
    Strong,
}

/// What the handler must do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Proceed,
    /// 304 Not Modified.
    NotModified,
    /// 412 Precondition Failed.
    PreconditionFailed,
}

impl Verdict {
    /// The status to answer with instead of the normal one, if any.
    pub fn status(self) -> Option<u16> {
        match self {
            Verdict::Proceed => None,
            Verdict::NotModified => Some(304),
            Verdict::PreconditionFailed => Some(412),
        }
    }
}

/// The times the checks need, in whole seconds since the epoch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Clock {
    /// The resource's modification time (`r->mtime`), used when
    /// `Last-Modified` is absent or unparsable; `None` means "now".
    pub mtime: Option<i64>,
    /// When the request started (`r->request_time`).
    pub request_time: i64,
    /// The current time (`apr_time_now()`), used when `mtime` is `None`.
    pub now: i64,
}

/// The response's validators, as the checks read them from the response
/// headers, and the clock.
#[derive(Clone, Copy, Debug)]
pub struct Validators<'a> {
    /// The `ETag` the response carries.
    pub etag: Option<&'a str>,
    /// The `Last-Modified` the response carries.
    pub last_modified: Option<&'a str>,
    /// A `Date` the response carries (handlers normally set none).
    pub date: Option<&'a str>,
    pub clock: Clock,
}

impl<'a> Validators<'a> {
    /// The validators `resp` carries.
    pub fn from_response(resp: &'a Response, clock: Clock) -> Self {
        Validators {
            etag: resp.header("ETag"),
            last_modified: resp.header("Last-Modified"),
            date: resp.header("Date"),
            clock,
        }
    }

    fn mtime(&self) -> i64 {
        match self.last_modified.and_then(parse_http_date) {
            Some(t) => t,
            None => match self.clock.mtime {
                Some(m) if m != 0 => m,
                _ => self.clock.now,
            },
        }
    }

    fn reqtime(&self) -> i64 {
        self.date
            .and_then(parse_http_date)
            .unwrap_or(self.clock.request_time)
    }
}

/// GET and HEAD share Apache's method number `M_GET`; methods are case-sensitive.
pub fn is_get(method: &str) -> bool {
    method == "GET" || method == "HEAD"
}

fn header(req: &Headers, name: &str) -> Option<Vec<u8>> {
    req.get_joined(name).map(|b| b.to_vec())
}

/// `If-Match`: strong comparison; `*` (first character) matches anything.
pub fn if_match(req: &Headers, v: &Validators<'_>) -> Cond {
    let Some(h) = header(req, "If-Match") else {
        return Cond::None;
    };
    if h.first() == Some(&b'*') || v.etag.is_some_and(|e| find_etag_strong(&h, e.as_bytes())) {
        Cond::Strong
    } else {
        Cond::NoMatch
    }
}

/// Shared tail of the date checks: a match on a file changed within the last
/// minute is weak, and weak is refused together with `Range`.
fn date_match(req: &Headers, mtime: i64, reqtime: i64) -> Cond {
    if reqtime < mtime + 60 {
        if req.contains("Range") {
            Cond::NoMatch
        } else {
            Cond::Weak
        }
    } else {
        Cond::Strong
    }
}

/// `If-Unmodified-Since`: holds (→ 412) when the resource *was* modified
/// after the given date.
pub fn if_unmodified_since(req: &Headers, v: &Validators<'_>) -> Cond {
    let Some(h) = header(req, "If-Unmodified-Since") else {
        return Cond::None;
    };
    let mtime = v.mtime();
    match parse_http_date(&h) {
        Some(ius) if mtime > ius => date_match(req, mtime, v.reqtime()),
        _ => Cond::NoMatch,
    }
}

/// `If-None-Match`.
pub fn if_none_match(req: &Headers, method: &str, v: &Validators<'_>) -> Cond {
    let Some(h) = header(req, "If-None-Match") else {
        return Cond::None;
    };
    if h.first() == Some(&b'*') {
        return Cond::Strong;
    }
    let Some(etag) = v.etag else {
        return Cond::NoMatch;
    };
    if is_get(method) {
        if req.contains("Range") {
            if find_etag_strong(&h, etag.as_bytes()) {
                return Cond::Strong;
            }
        } else if find_etag_weak(&h, etag.as_bytes()) {
            return Cond::Weak;
        }
    } else if find_etag_strong(&h, etag.as_bytes()) {
        return Cond::Strong;
    }
    Cond::NoMatch
}

/// `If-Modified-Since`: holds (→ 304 for GET/HEAD) when the date is not
/// before the modification time and not after the request time.
pub fn if_modified_since(req: &Headers, v: &Validators<'_>) -> Cond {
    let Some(h) = header(req, "If-Modified-Since") else {
        return Cond::None;
    };
    let mtime = v.mtime();
    let reqtime = v.reqtime();
    // An unparsable date counts as the epoch.
    let ims = parse_http_date(&h).unwrap_or(0);
    if ims >= mtime && ims <= reqtime {
        date_match(req, mtime, reqtime)
    } else {
        Cond::NoMatch
    }
}

/// `If-Range`, considered only together with `Range`.
pub fn if_range(req: &Headers, v: &Validators<'_>) -> Cond {
    let Some(h) = header(req, "If-Range") else {
        return Cond::None;
    };
    if !req.contains("Range") {
        return Cond::None;
    }
    if h.first() == Some(&b'"') {
        return if v.etag.is_some_and(|e| e.as_bytes() == h.as_slice()) {
            Cond::Strong
        } else {
            Cond::NoMatch
        };
    }
    let mtime = v.mtime();
    let reqtime = v.reqtime();
    if parse_http_date(&h).unwrap_or(0) == mtime && reqtime >= mtime + 60 {
        Cond::Strong
    } else {
        Cond::NoMatch
    }
}

/// Whether the request carries any of the `If-*` fields that
/// [`meets_conditions`] reads; without one every check answers "none" and
/// the verdict is `Proceed`. One pass over the names, where the checks
/// would look each field up in turn (most requests have none).
pub fn has_preconditions(req: &Headers) -> bool {
    let found = any_precondition(req);
    if found {
        // Compared with the clock, too: such an answer is not kept.
        crate::answer_memo::note_volatile();
    } else {
        crate::answer_memo::note_no_preconditions();
    }
    found
}

/// Whether any header name starts with `If-` (read without recording).
pub(crate) fn any_precondition(req: &Headers) -> bool {
    req.iter_unrecorded()
        .any(|(n, _)| n.len() > 3 && n.as_bytes()[..3].eq_ignore_ascii_case(b"if-"))
}

/// `ap_meets_conditions` for a response whose status so far is `status`.
pub fn meets_conditions(method: &str, status: u16, req: &Headers, v: &Validators<'_>) -> Verdict {
    if !(200..300).contains(&status) || !has_preconditions(req) {
        return Verdict::Proceed;
    }
    if if_match(req, v) == Cond::NoMatch {
        return Verdict::PreconditionFailed;
    }
    // -1 unset, 0 vetoed, 1 not modified
    let mut not_modified: i8 = -1;
    match if_unmodified_since(req, v) {
        Cond::NoMatch => not_modified = 0,
        c if c >= Cond::Weak => return Verdict::PreconditionFailed,
        _ => {}
    }
    match if_none_match(req, method, v) {
        Cond::NoMatch => not_modified = 0,
        c if c >= Cond::Weak => {
            if !is_get(method) {
                return Verdict::PreconditionFailed;
            }
            if not_modified != 0 {
                not_modified = 1;
            }
        }
        _ => {}
    }
    match if_modified_since(req, v) {
        Cond::NoMatch => not_modified = 0,
        c if c >= Cond::Weak && is_get(method) && not_modified != 0 => not_modified = 1,
        _ => {}
    }
    if if_range(req, v) > Cond::None {
        return Verdict::Proceed;
    }
    if not_modified == 1 {
        Verdict::NotModified
    } else {
        Verdict::Proceed
    }
}

/// Turn a response into the 304 (or 204) Apache sends: no body and none of
/// the content headers (`Content-Length`, `Transfer-Encoding`, `Content-Type`,
/// `Content-Encoding`, `Content-Language`); everything else stays, validators
/// (`ETag`, `Last-Modified`), `Accept-Ranges`, `Content-MD5`, `Expires`,
/// `Cache-Control`, `Vary`, `Location` and headers set by directives included.
/// Observed with Apache 2.4.71: a 304 for a static file carries
/// Last-Modified, ETag and Accept-Ranges, no Content-Length or Content-Type.
pub fn strip_for_304(resp: &mut Response) {
    for h in [
        "Content-Length",
        "Transfer-Encoding",
        "Content-Type",
        "Content-Encoding",
        "Content-Language",
    ] {
        resp.remove_header(h);
    }
    resp.body = super::Body::empty();
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum TagKind {
    Weak,
    Strong,
}

/// Whether the list `line` (a request header value) contains `tag` under
/// strong comparison: both must be strong (start with `"`), and the search
/// stops at the first list item that is not.
pub fn find_etag_strong(line: &[u8], tag: &[u8]) -> bool {
    find_list_item(line, tag, TagKind::Strong)
}

/// Whether the list `line` contains `tag` under weak comparison: `W/` is
/// ignored on both sides; the search stops at the first item that is neither
/// `W/"…` nor `"…`.
pub fn find_etag_weak(line: &[u8], tag: &[u8]) -> bool {
    find_list_item(line, tag, TagKind::Weak)
}

fn is_c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Apache's list-item matcher (`find_list_item` in `util.c`) for entity tags:
/// items are separated by commas outside quotes, comments and quoted pairs;
/// outside quotes, letters compare case-insensitively and white space is
/// normalised. Its quote and comment state deliberately carries over from one
/// item to the next, as Apache's does. A NUL byte ends both strings.
fn find_list_item(line: &[u8], tag: &[u8], kind: TagKind) -> bool {
    let at = |s: &[u8], i: usize| s.get(i).copied().unwrap_or(0);
    let mut tok0 = 0;
    match kind {
        TagKind::Strong if at(tag, 0) != b'"' => return false,
        TagKind::Weak => {
            if at(tag, 0) == b'W' && at(tag, 1) == b'/' && at(tag, 2) == b'"' {
                tok0 = 2;
            } else if at(tag, 0) != b'"' {
                return false;
            }
        }
        _ => {}
    }
    let mut p = 0usize;
    let mut good = false;
    let mut addspace: i8 = 0;
    let (mut in_qpair, mut in_qstr, mut in_com) = (false, false, 0u32);
    loop {
        while at(line, p) == b',' || is_c_space(at(line, p)) {
            p += 1;
        }
        match kind {
            TagKind::Strong if at(line, p) != b'"' => break,
            TagKind::Weak => {
                if at(line, p) == b'W' && at(line, p + 1) == b'/' && at(line, p + 2) == b'"' {
                    p += 2;
                } else if at(line, p) != b'"' {
                    break;
                }
            }
            _ => {}
        }
        if at(line, p) == 0 {
            break;
        }
        good = true;
        let mut pos = tok0;
        // Compare the next tag byte with `want`, advancing in the tag.
        let eat = |pos: &mut usize, want: u8, fold: bool| {
            let t = at(tag, *pos);
            *pos += 1;
            if fold {
                t.eq_ignore_ascii_case(&want)
            } else {
                t == want
            }
        };
        while at(line, p) != 0 && (in_qpair || in_qstr || in_com > 0 || at(line, p) != b',') {
            let c = at(line, p);
            if in_qpair {
                in_qpair = false;
                if good {
                    good = eat(&mut pos, c, false);
                }
            } else {
                match c {
                    b'\\' | b'"' | b'(' => {
                        match c {
                            b'\\' => in_qpair = true,
                            b'"' if in_com == 0 => in_qstr = !in_qstr,
                            b'(' if !in_qstr => in_com += 1,
                            _ => {}
                        }
                        if addspace == 1 {
                            good = good && eat(&mut pos, b' ', false);
                        }
                        good = good && eat(&mut pos, c, false);
                        addspace = 0;
                    }
                    b')' => {
                        in_com = in_com.saturating_sub(1);
                        good = good && eat(&mut pos, c, false);
                        addspace = 0;
                    }
                    b' ' | b'\t' => {
                        if addspace == 0 && good {
                            if in_com > 0 || in_qstr {
                                good = eat(&mut pos, c, false);
                            } else {
                                addspace = 1;
                            }
                        }
                    }
                    b'=' | b'/' | b';' => {
                        if !(in_com > 0 || in_qstr) {
                            addspace = -1;
                        }
                        good = good && eat(&mut pos, c, false);
                    }
                    _ => {
                        if good {
                            if addspace == 1 {
                                good = eat(&mut pos, b' ', false);
                            }
                            let quoted = in_com > 0 || in_qstr;
                            good = good && eat(&mut pos, c, !quoted);
                            addspace = 0;
                        }
                    }
                }
            }
            p += 1;
        }
        if good && at(tag, pos) != 0 {
            good = false;
        }
        if at(line, p) == 0 || good {
            break;
        }
    }
    good
}

#[cfg(test)]
mod tests {
    use super::*;

    // The file of these observations: Last-Modified "Sat, 21 Nov 2026 06:32:50 GMT",
    // ETag "c-660c387a61207", requests made minutes later.
    const LM: &str = "Sat, 21 Nov 2026 06:32:50 GMT";
    const E: &str = "\"c-660c387a61207\"";
    const MTIME: i64 = 1_795_242_770;
    const LATER: i64 = MTIME + 300;

    fn v() -> Validators<'static> {
        Validators {
            etag: Some(E),
            last_modified: Some(LM),
            date: None,
            clock: Clock {
                mtime: Some(MTIME),
                request_time: LATER,
                now: LATER,
            },
        }
    }

    fn check(method: &str, hs: &[(&str, &str)]) -> Option<u16> {
        check_with(method, hs, &v())
    }

    fn check_with(method: &str, hs: &[(&str, &str)], v: &Validators<'_>) -> Option<u16> {
        let mut h = Headers::new();
        for (n, val) in hs {
            h.push(n.to_string(), val.to_string());
        }
        meets_conditions(method, 200, &h, v).status()
    }

    #[test]
    fn observed_basic() {
        // Observed with Apache 2.4.71 (curl -H … GET /a.html):
        assert_eq!(check("GET", &[("If-None-Match", E)]), Some(304));
        assert_eq!(check("GET", &[("If-Modified-Since", LM)]), Some(304));
        assert_eq!(
            check("GET", &[("If-None-Match", "W/\"c-660c387a61207\"")]),
            Some(304)
        );
        assert_eq!(check("GET", &[("If-Match", E)]), None);
        assert_eq!(
            check("GET", &[("If-Match", "W/\"c-660c387a61207\"")]),
            Some(412)
        );
        assert_eq!(check("GET", &[("If-Match", "\"x\"")]), Some(412));
        assert_eq!(check("GET", &[("If-None-Match", "*")]), Some(304));
        assert_eq!(check("GET", &[("If-Match", "*")]), None);
        assert_eq!(
            check(
                "GET",
                &[("If-Unmodified-Since", "Sat, 21 Nov 2026 06:32:49 GMT")]
            ),
            Some(412)
        );
        assert_eq!(check("GET", &[("If-Unmodified-Since", LM)]), None);
        assert_eq!(check("HEAD", &[("If-None-Match", E)]), Some(304));
    }

    #[test]
    fn observed_combinations() {
        // Observed with Apache 2.4.71: If-Modified-Since is not ignored next to
        // If-None-Match, and every disagreeing validator vetoes the 304.
        assert_eq!(
            check(
                "GET",
                &[
                    ("If-None-Match", E),
                    ("If-Modified-Since", "Sat, 21 Nov 2026 06:32:49 GMT")
                ]
            ),
            None
        );
        assert_eq!(
            check(
                "GET",
                &[("If-None-Match", E), ("If-Modified-Since", "garbage")]
            ),
            None
        );
        assert_eq!(
            check(
                "GET",
                &[("If-None-Match", "\"zz\""), ("If-Modified-Since", LM)]
            ),
            None
        );
        assert_eq!(
            check("GET", &[("If-None-Match", E), ("If-Unmodified-Since", LM)]),
            None
        );
        // Future and malformed dates.
        assert_eq!(
            check(
                "GET",
                &[("If-Modified-Since", "Sat, 21 Nov 2030 06:32:50 GMT")]
            ),
            None
        );
        assert_eq!(
            check(
                "GET",
                &[("If-Modified-Since", "Sat, 21 Nov 2026 06:32:50 GMT junk")]
            ),
            Some(304)
        );
        assert_eq!(
            check("GET", &[("If-Modified-Since", "21 Nov 2026 06:32:50 GMT")]),
            None
        );
        // Other methods: a matching If-None-Match is 412, If-Modified-Since is ignored.
        assert_eq!(check("POST", &[("If-None-Match", E)]), Some(412));
        assert_eq!(check("POST", &[("If-None-Match", "*")]), Some(412));
        assert_eq!(check("POST", &[("If-Modified-Since", LM)]), None);
    }

    #[test]
    fn observed_lists() {
        // Observed with Apache 2.4.71.
        assert_eq!(
            check("GET", &[("If-Match", "W/\"x\", \"c-660c387a61207\"")]),
            Some(412)
        );
        assert_eq!(
            check("GET", &[("If-Match", "\"x\",   \"c-660c387a61207\"")]),
            None
        );
        assert_eq!(
            check("GET", &[("If-Match", "\"x\" , \"c-660c387a61207\"")]),
            None
        );
        assert_eq!(
            check("GET", &[("If-Match", "\"C-660C387A61207\"")]),
            Some(412)
        );
        assert_eq!(
            check("GET", &[("If-None-Match", "\"x\", W/\"c-660c387a61207\"")]),
            Some(304)
        );
        assert_eq!(
            check("GET", &[("If-None-Match", "\"c-660c387a61207\", \"x\"")]),
            Some(304)
        );
        assert_eq!(
            check("GET", &[("If-None-Match", "xyz, \"c-660c387a61207\"")]),
            None
        );
        // Repeated headers are merged with ", ".
        assert_eq!(
            check("GET", &[("If-None-Match", E), ("If-None-Match", "\"q\"")]),
            Some(304)
        );
        assert_eq!(
            check("GET", &[("If-None-Match", "\"q\""), ("If-None-Match", E)]),
            Some(304)
        );
    }

    #[test]
    fn observed_with_range() {
        // Observed with Apache 2.4.71 (curl -r 1-2 …) on a file modified
        // minutes before.
        let r = ("Range", "bytes=1-2");
        assert_eq!(check("GET", &[r, ("If-None-Match", E)]), Some(304));
        assert_eq!(
            check("GET", &[r, ("If-None-Match", "W/\"c-660c387a61207\"")]),
            None
        );
        assert_eq!(check("GET", &[r, ("If-Modified-Since", LM)]), Some(304));
        // If-Range present: never 304.
        assert_eq!(
            check("GET", &[r, ("If-Range", E), ("If-None-Match", E)]),
            None
        );
        assert_eq!(
            check("GET", &[r, ("If-Range", "\"x\""), ("If-None-Match", E)]),
            None
        );
    }

    #[test]
    fn observed_fresh_file() {
        // Observed with Apache 2.4.71 on a file modified ~1 s before: date
        // matches are weak, enough for 304/412 alone but not with Range.
        let fresh = Validators {
            clock: Clock {
                mtime: Some(MTIME),
                request_time: MTIME + 2,
                now: MTIME + 2,
            },
            ..v()
        };
        let r = ("Range", "bytes=0-1");
        assert_eq!(
            check_with("GET", &[("If-Modified-Since", LM)], &fresh),
            Some(304)
        );
        assert_eq!(
            check_with("GET", &[r, ("If-Modified-Since", LM)], &fresh),
            None
        );
        assert_eq!(
            check_with(
                "GET",
                &[("If-Unmodified-Since", "Sat, 21 Nov 2020 06:32:50 GMT")],
                &fresh
            ),
            Some(412)
        );
        assert_eq!(
            check_with(
                "GET",
                &[r, ("If-Unmodified-Since", "Sat, 21 Nov 2020 06:32:50 GMT")],
                &fresh
            ),
            None
        );
        let mut h = Headers::new();
        h.push("Range", "bytes=0-1");
        h.push("If-Range", LM);
        assert_eq!(if_range(&h, &fresh), Cond::NoMatch);
        assert_eq!(if_range(&h, &v()), Cond::Strong);
    }

    #[test]
    fn if_range_forms() {
        // Observed with Apache 2.4.71: with Range 1-2, If-Range equal to the
        // ETag or to Last-Modified gives 206; W/ tag, other tag, other date,
        // garbage give 200. The tag is compared byte for byte.
        let mut h = Headers::new();
        h.push("Range", "bytes=1-2");
        for (val, want) in [
            (E, Cond::Strong),
            ("W/\"c-660c387a61207\"", Cond::NoMatch),
            ("\"x\"", Cond::NoMatch),
            (LM, Cond::Strong),
            ("Sat, 21 Nov 2026 06:32:51 GMT", Cond::NoMatch),
            ("garbage", Cond::NoMatch),
        ] {
            let mut h = h.clone();
            h.push("If-Range", val);
            assert_eq!(if_range(&h, &v()), want, "{val}");
        }
        let mut no_range = Headers::new();
        no_range.push("If-Range", E);
        assert_eq!(if_range(&no_range, &v()), Cond::None);
    }

    #[test]
    fn only_for_success() {
        let mut h = Headers::new();
        h.push("If-Match", "\"nope\"");
        assert_eq!(meets_conditions("GET", 404, &h, &v()), Verdict::Proceed);
        assert_eq!(
            meets_conditions("GET", 204, &h, &v()),
            Verdict::PreconditionFailed
        );
    }

    #[test]
    fn no_last_modified_uses_mtime_then_now() {
        let no_lm = Validators {
            last_modified: None,
            ..v()
        };
        assert_eq!(
            check_with("GET", &[("If-Modified-Since", LM)], &no_lm),
            Some(304)
        );
        let nothing = Validators {
            last_modified: None,
            clock: Clock {
                mtime: None,
                ..v().clock
            },
            ..v()
        };
        assert_eq!(
            check_with("GET", &[("If-Modified-Since", LM)], &nothing),
            None
        );
    }

    #[test]
    fn list_matcher_details() {
        let s = |l: &str, t: &str| find_etag_strong(l.as_bytes(), t.as_bytes());
        let w = |l: &str, t: &str| find_etag_weak(l.as_bytes(), t.as_bytes());
        assert!(s("\"a\"", "\"a\""));
        assert!(!s("\"a\"", "W/\"a\""));
        assert!(!s("\"ab\"", "\"a\""));
        assert!(!s("\"a\"", "\"ab\""));
        assert!(s(" , ,\"a\"", "\"a\""));
        assert!(s("\"b\", \"a\"", "\"a\""));
        assert!(w("W/\"a\"", "\"a\""));
        assert!(w("\"a\"", "W/\"a\""));
        assert!(!w("x, \"a\"", "\"a\""));
        // A comma inside quotes does not separate items.
        assert!(s("\"a,b\"", "\"a,b\""));
        assert!(!s("\"a,b\"", "\"b\""));
        // Trailing white space after an item is tolerated.
        assert!(s("\"a\" ", "\"a\""));
        assert!(!s("\"a\"x", "\"a\""));
        assert!(!s("", "\"a\""));
        assert!(!s("\"a\"", ""));
    }

    #[test]
    fn strip() {
        let mut r = Response::new(304);
        for (n, val) in [
            ("Last-Modified", LM),
            ("ETag", E),
            ("Accept-Ranges", "bytes"),
            ("Content-Length", "12"),
            ("Content-Type", "text/html"),
            ("Content-Language", "en"),
        ] {
            r.add_header(n, val);
        }
        r.body = crate::http::Body::bytes(&b"hello"[..]);
        strip_for_304(&mut r);
        let names: Vec<&str> = r.headers.iter().map(|(n, _)| n.as_ref()).collect();
        assert_eq!(names, ["Last-Modified", "ETag", "Accept-Ranges"]);
        assert!(r.body.is_empty());
    }
}
