//! The name matching and ordering mod_autoindex relies on, each as the
//! Apache or APR function it reproduces: `ap_strcmp_match` (the
//! `IndexIgnore`, icon and alt patterns), `apr_fnmatch` (`AddDescription`
//! and the client's `P=` pattern), `apr_fnmatch_test`/`ap_is_matchexp`
//! (whether a word is a pattern at all) and `apr_strnatcmp` (`VersionSort`).

use std::cmp::Ordering;

/// Apache's `ap_strcmp_match` (`ap_strcasecmp_match` with `fold_case`):
/// `*` matches any run of bytes (`/` too), `?` any one byte, everything
/// else itself. Greedy with one back-track point, so the cost stays linear
/// in the text for each pattern.
pub fn strcmp_match(text: &[u8], pattern: &[u8], fold_case: bool) -> bool {
    let same = |a: u8, b: u8| {
        if fold_case {
            a.eq_ignore_ascii_case(&b)
        } else {
            a == b
        }
    };
    let (mut t, mut p) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(b'*') => {
                p += 1;
                star = Some((p, t));
            }
            Some(&c) if c == b'?' || same(c, text[t]) => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

/// `ap_is_matchexp`: whether a word holds `*` or `?`.
pub fn is_matchexp(s: &str) -> bool {
    s.contains(['*', '?'])
}

/// `apr_fnmatch_test`: whether a word holds `*`, `?`, or a `[` closed by
/// a later `]` (a `\` protects the next byte).
pub fn fnmatch_test(s: &str) -> bool {
    let b = s.as_bytes();
    let mut nesting = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'?' | b'*' => return true,
            b'\\' => {
                i += 1;
                if i >= b.len() {
                    return false;
                }
            }
            b'[' => nesting += 1,
            b']' if nesting > 0 => return true,
            _ => {}
        }
        i += 1;
    }
    false
}

/// `apr_fnmatch` flags.
#[derive(Clone, Copy, Debug, Default)]
pub struct FnmatchFlags {
    /// `APR_FNM_NOESCAPE`: `\` is an ordinary byte.
    pub no_escape: bool,
    /// `APR_FNM_PERIOD`: a leading `.` must be matched by a literal `.`.
    pub period: bool,
}

/// `apr_fnmatch` without `APR_FNM_PATHNAME`: `*`, `?`, `[…]` classes (`!`
/// or `^` negates, ranges, a leading `]` is literal, an unterminated `[`
/// is literal), `\` escapes unless `no_escape`.
#[allow(clippy::collapsible_match)] // see the escape arm
pub fn fnmatch(pattern: &[u8], name: &[u8], flags: FnmatchFlags) -> bool {
    let (mut p, mut n) = (0usize, 0usize);
    if flags.period && name.first() == Some(&b'.') {
        let literal_dot =
            pattern.first() == Some(&b'.') || (!flags.no_escape && pattern.starts_with(b"\\."));
        if !literal_dot {
            return false;
        }
        p = if pattern[0] == b'.' { 1 } else { 2 };
        n = 1;
    }
    // Classic backtracking on the last `*`: linear per star position.
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        if p < pattern.len() {
            match pattern[p] {
                b'*' => {
                    while p < pattern.len() && pattern[p] == b'*' {
                        p += 1;
                    }
                    star = Some((p, n));
                    continue;
                }
                b'?' => {
                    p += 1;
                    n += 1;
                    continue;
                }
                b'[' => {
                    if let Some((matched, next)) = class(&pattern[p..], name[n], flags) {
                        if matched {
                            p += next;
                            n += 1;
                            continue;
                        }
                    } else if name[n] == b'[' {
                        p += 1;
                        n += 1;
                        continue;
                    }
                }
                // An escaped byte matches itself only: an unmatched one
                // must not fall through to the literal arm below.
                b'\\' if !flags.no_escape && p + 1 < pattern.len() => {
                    if pattern[p + 1] == name[n] {
                        p += 2;
                        n += 1;
                        continue;
                    }
                }
                c if c == name[n] => {
                    p += 1;
                    n += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, sn)) => {
                p = sp;
                n = sn + 1;
                star = Some((sp, sn + 1));
            }
            None => return false,
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

/// A bracket expression at the start of `pat` tested against `c`:
/// `Some((matched, length))`, or `None` when it is not terminated (then
/// the `[` is an ordinary character). Range ends compare as signed chars,
/// as in APR.
fn class(pat: &[u8], c: u8, flags: FnmatchFlags) -> Option<(bool, usize)> {
    let mut i = 1;
    let negate = matches!(pat.get(i), Some(b'!') | Some(b'^'));
    if negate {
        i += 1;
    }
    let mut found = false;
    let mut first = true;
    let literal = |i: &mut usize| -> Option<u8> {
        if !flags.no_escape && pat.get(*i) == Some(&b'\\') && *i + 1 < pat.len() {
            *i += 1;
        }
        pat.get(*i).copied()
    };
    while i < pat.len() {
        if pat[i] == b']' && !first {
            return Some((found != negate, i + 1));
        }
        first = false;
        let lo = literal(&mut i)?;
        if pat.get(i + 1) == Some(&b'-') && pat.get(i + 2).is_some_and(|&e| e != b']') {
            let mut j = i + 2;
            let hi = literal(&mut j)?;
            if (c as i8) >= (lo as i8) && (c as i8) <= (hi as i8) {
                found = true;
            }
            i = j + 1;
            continue;
        }
        if lo == c {
            found = true;
        }
        i += 1;
    }
    None
}

/// `apr_strnatcmp` (`apr_strnatcasecmp` with `fold_case`): runs of digits
/// compare by value (with leading zeros compared digit by digit), white
/// space is skipped, other bytes compare as signed chars.
pub fn strnatcmp(a: &[u8], b: &[u8], fold_case: bool) -> Ordering {
    let at = |s: &[u8], i: usize| s.get(i).copied().unwrap_or(0);
    let is_space = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c);
    let (mut ai, mut bi) = (0usize, 0usize);
    loop {
        let (mut ca, mut cb) = (at(a, ai), at(b, bi));
        while is_space(ca) {
            ai += 1;
            ca = at(a, ai);
        }
        while is_space(cb) {
            bi += 1;
            cb = at(b, bi);
        }
        if ca.is_ascii_digit() && cb.is_ascii_digit() {
            let r = if ca == b'0' || cb == b'0' {
                compare_left(&a[ai..], &b[bi..])
            } else {
                compare_right(&a[ai..], &b[bi..])
            };
            if r != Ordering::Equal {
                return r;
            }
        }
        if ca == 0 && cb == 0 {
            return Ordering::Equal;
        }
        if fold_case {
            ca = ca.to_ascii_uppercase();
            cb = cb.to_ascii_uppercase();
        }
        match (ca as i8).cmp(&(cb as i8)) {
            Ordering::Equal => {}
            o => return o,
        }
        ai += 1;
        bi += 1;
    }
}

fn digit_at(s: &[u8], i: usize) -> Option<u8> {
    s.get(i).copied().filter(u8::is_ascii_digit)
}

/// Right-aligned numbers: the longer run wins, else the first difference.
fn compare_right(a: &[u8], b: &[u8]) -> Ordering {
    let mut bias = Ordering::Equal;
    let mut i = 0;
    loop {
        match (digit_at(a, i), digit_at(b, i)) {
            (None, None) => return bias,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                if bias == Ordering::Equal {
                    bias = x.cmp(&y);
                }
            }
        }
        i += 1;
    }
}

/// Left-aligned (fractional) numbers: the first difference wins.
fn compare_left(a: &[u8], b: &[u8]) -> Ordering {
    let mut i = 0;
    loop {
        match (digit_at(a, i), digit_at(b, i)) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x != y => return x.cmp(&y),
            _ => {}
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PERIOD: FnmatchFlags = FnmatchFlags {
        no_escape: true,
        period: true,
    };

    #[test]
    fn strcmp_match_as_apache() {
        let m = |t: &[u8], p: &[u8]| strcmp_match(t, p, false);
        assert!(m(b"abc", b"*"));
        assert!(m(b"", b"*"));
        assert!(m(b"/a/b/c", b"/a/*"));
        assert!(m(b"x.txt", b"*.txt"));
        assert!(!m(b"x.txt", b"*.tx"));
        assert!(m(b"a.b", b"a?b"));
        assert!(!m(b"ab", b"a?b"));
        assert!(m(b"aXbXc", b"a*b*c"));
        assert!(!m(b"README", b"readme"));
        assert!(strcmp_match(b"README", b"readme", true));
        assert!(m(&[b'a'; 10_000], b"*a*a*a*a*a*a*a*"));
    }

    #[test]
    fn glob_for_the_client_pattern() {
        let m = |p: &str, n: &str| fnmatch(p.as_bytes(), n.as_bytes(), PERIOD);
        assert!(m("a*", "abc"));
        assert!(m("*", "abc"));
        assert!(!m("*", ".dot"));
        assert!(m(".*", ".dot"));
        assert!(m(".*", "..dd"));
        assert!(!m("?dot", ".dot"));
        assert!(m("*.txt", "a.b.txt"));
        assert!(!m("*.txt", "a.txt.bak"));
        assert!(m("a?c", "abc"));
        assert!(m("[ab]*", "b1"));
        assert!(!m("[!ab]*", "b1"));
        assert!(m("[^ab]*", "c1"));
        assert!(m("[a-c]x", "bx"));
        assert!(m("[]]x", "]x"));
        assert!(m("[x", "[x"));
        assert!(m("a\\b", "a\\b"));
        assert!(m("*a*b*c*", "xxaxxbxxcxx"));
        assert!(!m("*a*b*c*d", "xxaxxbxxcxx"));
        assert!(!m("abc", "ab"));
        assert!(m("ab**", "ab"));
    }

    #[test]
    fn glob_for_descriptions() {
        let m = |p: &str, n: &str| fnmatch(p.as_bytes(), n.as_bytes(), FnmatchFlags::default());
        assert!(m("*.txt*", ".hidden.txt"));
        assert!(m("*/sub/*", "/srv/www/sub/a"));
        assert!(m("a\\*b", "a*b"));
        assert!(!m("a\\*b", "axb"));
        assert!(fnmatch_test("*.txt"));
        assert!(fnmatch_test("[ab]"));
        assert!(!fnmatch_test("[ab"));
        assert!(!fnmatch_test("\\*"));
        assert!(!fnmatch_test("README"));
    }

    #[test]
    fn natural_order() {
        use Ordering::*;
        let c = |a: &str, b: &str| strnatcmp(a.as_bytes(), b.as_bytes(), false);
        assert_eq!(c("9.txt", "10.txt"), Less);
        assert_eq!(c("a2", "a10"), Less);
        assert_eq!(c("a010", "a02"), Less);
        assert_eq!(c("x 1", "x1"), Equal);
        assert_eq!(c("abc", "abd"), Less);
        assert_eq!(c("é", "a"), Less);
        assert_eq!(c("B", "a"), Less);
        assert_eq!(strnatcmp(b"B", b"a", true), Greater);
    }
}
