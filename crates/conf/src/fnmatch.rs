//! Shell-style wildcard matching with APR's rules, for `Include`.
//!
//! Apache selects included files with `apr_fnmatch(pattern, name,
//! APR_FNM_PERIOD)`, one path component at a time. The `glob` crate differs
//! in ways users would notice: no backslash escapes, `[^...]` is not a
//! negation, and its own traversal order and symlink handling. So the rules
//! are implemented here:
//!
//! * `*` matches any run of bytes, `?` any one byte;
//! * `[...]` is a set: `!` or `^` first negates, `]` first is literal,
//!   `a-z` is a range (bytes compared as C `char`, signed on Linux), a
//!   backslash escapes the next byte; a `[` with no closing `]` is literal;
//! * outside a set, `\x` is a literal `x` (a trailing `\` is literal);
//! * a name that starts with `.` matches only a pattern that starts with a
//!   literal `.` (or `\.`): `*` does not pick up dotfiles.

/// APR's `apr_fnmatch_test`: does `pattern` contain anything that makes it
/// a wildcard (`*`, `?`, or a `[` with a later `]`)?
pub(crate) fn has_wildcard(pattern: &[u8]) -> bool {
    let mut open_brackets = 0usize;
    let mut i = 0;
    while let Some(&c) = pattern.get(i) {
        match c {
            b'?' | b'*' => return true,
            b'\\' => {
                i += 1;
                if i >= pattern.len() {
                    return false;
                }
            }
            b'[' => open_brackets += 1,
            b']' if open_brackets > 0 => return true,
            _ => {}
        }
        i += 1;
    }
    false
}

/// Matches one file name against one pattern component, with the leading
/// period rule.
pub(crate) fn fnmatch(pattern: &[u8], name: &[u8]) -> bool {
    let (mut p, mut s) = (pattern, name);
    if let Some(rest) = s.strip_prefix(b".") {
        p = if let Some(r) = p.strip_prefix(b".") {
            r
        } else if let Some(r) = p.strip_prefix(b"\\.") {
            r
        } else {
            return false;
        };
        s = rest;
    }
    match_from(p, s)
}

/// Classic wildcard matching: on a mismatch, retry from the last `*` one
/// byte further along the name. This finds a match whenever one exists.
fn match_from(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    loop {
        if p.get(pi) == Some(&b'*') {
            pi += 1;
            star = Some((pi, si));
            continue;
        }
        if si == s.len() {
            return p[pi..].iter().all(|&c| c == b'*');
        }
        if let Some(next) = match_one(p, pi, s[si]) {
            pi = next;
            si += 1;
            continue;
        }
        match star {
            Some((after_star, from)) if from < s.len() => {
                star = Some((after_star, from + 1));
                pi = after_star;
                si = from + 1;
            }
            _ => return false,
        }
    }
}

/// If the pattern element at `pi` matches byte `c`, the index after it.
fn match_one(p: &[u8], pi: usize, c: u8) -> Option<usize> {
    match *p.get(pi)? {
        b'?' => Some(pi + 1),
        b'[' => match bracket(p, pi, c) {
            Some((matched, end)) => matched.then_some(end),
            None => (c == b'[').then_some(pi + 1),
        },
        b'\\' if pi + 1 < p.len() => (p[pi + 1] == c).then_some(pi + 2),
        lit => (lit == c).then_some(pi + 1),
    }
}

/// A bracket expression starting at `p[start] == '['`: whether it matches
/// `c` and the index after its `]`, or `None` when it is not well formed
/// (then the `[` is an ordinary byte).
fn bracket(p: &[u8], start: usize, c: u8) -> Option<(bool, usize)> {
    let signed = |b: u8| b as i8;
    let mut i = start + 1;
    let negate = matches!(p.get(i), Some(b'!' | b'^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    loop {
        let &here = p.get(i)?;
        if here == b']' && !first {
            return Some((matched != negate, i + 1));
        }
        if here == b'\\' {
            i += 1;
            p.get(i)?;
        }
        first = false;
        let lo = p[i];
        if p.get(i + 1) == Some(&b'-') && p.get(i + 2) != Some(&b']') {
            i += if p.get(i + 2) == Some(&b'\\') { 3 } else { 2 };
            let &hi = p.get(i)?;
            if signed(c) >= signed(lo) && signed(c) <= signed(hi) {
                matched = true;
            }
            i += 1;
            continue;
        }
        if c == lo {
            matched = true;
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, s: &str) -> bool {
        fnmatch(p.as_bytes(), s.as_bytes())
    }

    #[test]
    fn wildcard_test() {
        assert!(has_wildcard(b"*.conf"));
        assert!(has_wildcard(b"a?"));
        assert!(has_wildcard(b"[ab]"));
        assert!(!has_wildcard(b"[ab"));
        assert!(!has_wildcard(b"ab]"));
        assert!(!has_wildcard(b"a\\*"), "an escaped star is no wildcard");
        assert!(!has_wildcard(b"\\[a]"), "an escaped '[' opens no set");
        assert!(!has_wildcard(b"plain/path.conf"));
        assert!(!has_wildcard(b"trailing\\"));
    }

    #[test]
    fn stars_and_questions() {
        assert!(m("*.conf", "a.conf"));
        assert!(!m("*.conf", ".conf"));
        assert!(m("*", "x"));
        assert!(m("*", ""));
        assert!(m("a*b*c", "aXbYbZc"));
        assert!(!m("a*b*c", "aXbYbZ"));
        assert!(m("??.c", "ab.c"));
        assert!(!m("??.c", "a.c"));
        assert!(m("**x", "x"));
    }

    #[test]
    fn leading_period() {
        assert!(!m("*", ".dot"));
        assert!(!m("?dot", ".dot"));
        assert!(!m("[.]dot", ".dot"));
        assert!(m(".*", ".dot"));
        assert!(m("\\.d*", ".dot"));
        assert!(m("*.*", "a.b"));
    }

    #[test]
    fn brackets() {
        assert!(m("[ab].conf", "a.conf"));
        assert!(!m("[ab].conf", "c.conf"));
        assert!(m("[!b].conf", "a.conf"));
        assert!(!m("[!b].conf", "b.conf"));
        assert!(m("[^b].conf", "a.conf"));
        assert!(m("[a-c]", "b"));
        assert!(!m("[a-c]", "d"));
        assert!(m("[]x]", "]"));
        assert!(m("[!]x]", "a"));
        assert!(m("[a-]", "-"));
        assert!(m("[\\]]", "]"));
        assert!(m("[Z-\\]]", "]"));
        assert!(m("[Z-\\]]", "["));
        assert!(!m("[a-\\]]", "]"), "an empty range matches nothing");
        // Unterminated: '[' is literal.
        assert!(m("[ab", "[ab"));
        assert!(!m("[ab", "a"));
    }

    #[test]
    fn escapes() {
        assert!(m("\\*", "*"));
        assert!(!m("\\*", "x"));
        assert!(m("a\\", "a\\"));
    }

    #[test]
    fn bytes_above_ascii_compare_signed_in_ranges() {
        // As C `char` on Linux, 0xE9 is negative, so it is below 'a'.
        assert!(!fnmatch(b"[a-z]", &[0xE9]));
        assert!(fnmatch(b"[\x80-a]", &[0xE9]));
        assert!(fnmatch(b"\xE9", &[0xE9]));
    }
}
