//! APR's and Apache's shell wildcards, once for the whole server:
//! `apr_fnmatch` with its flags ([`fnmatch`], [`Flags`]), `apr_fnmatch_test`
//! ([`has_wildcard`]) and Apache's simpler `ap_strcmp_match` /
//! `ap_strcasecmp_match` ([`strcmp_match`]). Every caller names the flags
//! Apache passes at the same place: `Include` file names (`period`),
//! `<Directory>` and `<Files>` wildcards (`pathname`), the expression
//! operators `-fnmatch`/`-strmatch`/`-strcmatch`, mod_autoindex's
//! patterns; `ServerAlias` and SNI names use `ap_strcasecmp_match`.
//!
//! `fnmatch` follows APR's algorithm step by step: `\` escapes (unless
//! `no_escape`), `[!…]` and `[^…]` negate, a `[` that does not open a
//! well-formed bracket is an ordinary character, ranges compare bytes as C's
//! signed `char`, with `pathname` a wildcard never matches `/` and the
//! slashes of pattern and text pair up one for one, with `period` a leading
//! `.` (of each segment, with `pathname`) must be matched by a literal one.
//! Its cost is linear in the text for each `*` of the pattern.

/// `apr_fnmatch`'s flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    /// `APR_FNM_PATHNAME`.
    pub pathname: bool,
    /// `APR_FNM_CASE_BLIND` (ASCII only).
    pub case_blind: bool,
    /// `APR_FNM_NOESCAPE`: `\` is an ordinary byte.
    pub no_escape: bool,
    /// `APR_FNM_PERIOD`.
    pub period: bool,
}

impl Flags {
    pub const PATHNAME: Flags = Flags {
        pathname: true,
        case_blind: false,
        no_escape: false,
        period: false,
    };
    pub const PERIOD: Flags = Flags {
        pathname: false,
        case_blind: false,
        no_escape: false,
        period: true,
    };
}

/// Byte at `i`, or NUL past the end (the C string terminator).
fn at(s: &[u8], i: usize) -> u8 {
    s.get(i).copied().unwrap_or(0)
}

fn lower(c: u8) -> u8 {
    c.to_ascii_lowercase()
}

fn chars_equal(a: u8, b: u8, nocase: bool) -> bool {
    a == b || (nocase && (a.is_ascii_uppercase() || b.is_ascii_uppercase()) && lower(a) == lower(b))
}

/// Compare one pattern element (a byte, an escape, `?` or a bracket) at
/// `*p` with the text byte at `*t`; advances both as APR does. Returns
/// whether they matched.
fn match_one(pat: &[u8], p: &mut usize, text: &[u8], t: &mut usize, f: Flags) -> bool {
    let start = *p;
    let slash = f.pathname;
    let escape = !f.no_escape;
    if at(pat, *p) == b'[' {
        *p += 1;
        let negate = matches!(at(pat, *p), b'!' | b'^');
        if negate {
            *p += 1;
        }
        let mut matched = false;
        let mut first = true;
        let c = at(text, *t);
        while at(pat, *p) != 0 {
            if !first || at(pat, *p) != b']' {
                if at(pat, *p) == b']' {
                    *p += 1;
                    *t += 1;
                    return matched != negate;
                }
                if escape && at(pat, *p) == b'\\' {
                    *p += 1;
                    if at(pat, *p) == 0 {
                        break;
                    }
                }
                if slash && at(pat, *p) == b'/' {
                    break;
                }
            }
            first = false;
            if at(pat, *p + 1) == b'-' && at(pat, *p + 2) != b']' {
                let lo = at(pat, *p);
                *p += if escape && at(pat, *p + 2) == b'\\' {
                    3
                } else {
                    2
                };
                let hi = at(pat, *p);
                if hi == 0 || (slash && hi == b'\\') {
                    break;
                }
                let (cs, ls, hs) = (c as i8, lo as i8, hi as i8);
                if (cs >= ls && cs <= hs)
                    || (f.case_blind
                        && (c.is_ascii_uppercase()
                            || lo.is_ascii_uppercase()
                            || hi.is_ascii_uppercase())
                        && (lower(c) as i8) >= (lower(lo) as i8)
                        && (lower(c) as i8) <= (lower(hi) as i8))
                {
                    matched = true;
                }
                *p += 1;
                continue;
            }
            if chars_equal(c, at(pat, *p), f.case_blind) {
                matched = true;
            }
            *p += 1;
        }
        // Not a well-formed bracket: the `[` is an ordinary character.
        *p = start;
    } else if at(pat, *p) == b'?' {
        let c = at(text, *t);
        if c == 0 || (slash && c == b'/') {
            return false;
        }
        *p += 1;
        *t += 1;
        return true;
    } else if escape && at(pat, *p) == b'\\' && at(pat, *p + 1) != 0 {
        *p += 1;
    }
    let (pc, tc) = (at(pat, *p), at(text, *t));
    let result = chars_equal(tc, pc, f.case_blind);
    if tc == 0 || pc == 0 || (slash && (tc == b'/' || pc == b'/')) {
        return result;
    }
    *p += 1;
    *t += 1;
    result
}

/// Whether the pattern is at a segment separator (`/` or `\/`).
fn at_separator(pat: &[u8], p: usize, f: Flags) -> bool {
    f.pathname
        && (at(pat, p) == b'/' || (!f.no_escape && at(pat, p) == b'\\' && at(pat, p + 1) == b'/'))
}

/// A C string ends at its first NUL.
fn until_nul(s: &[u8]) -> &[u8] {
    &s[..s.iter().position(|&b| b == 0).unwrap_or(s.len())]
}

/// Whether `text` matches `pattern` entirely.
pub fn fnmatch(pattern: &[u8], text: &[u8], f: Flags) -> bool {
    // C strings end at the first NUL.
    let (pat, text) = (until_nul(pattern), until_nul(text));
    let slash = f.pathname;
    let escape = !f.no_escape;
    let (mut p, mut t) = (0usize, 0usize);
    // A pattern starting with `*` enters its first segment even when the
    // text is empty; after that, segments are matched while both pattern
    // and text remain (APR's fix for PR 51219: a text with fewer segments
    // than the pattern no longer loops for ever).
    let mut first = at(pat, 0) == b'*';
    loop {
        if !std::mem::take(&mut first) {
            if at(pat, p) == 0 || at(text, t) == 0 {
                break;
            }
            if slash && escape && at(pat, p) == b'\\' && at(pat, p + 1) == b'/' {
                p += 1;
            }
            if slash && at(pat, p) == b'/' && at(text, t) == b'/' {
                p += 1;
                t += 1;
            }
        }
        // A segment's leading period must be matched by a literal one.
        if f.period && at(text, t) == b'.' {
            if at(pat, p) == b'.' {
                p += 1;
            } else if escape && at(pat, p) == b'\\' && at(pat, p + 1) == b'.' {
                p += 2;
            } else {
                return false;
            }
            t += 1;
        }
        let seg_end = if slash {
            text[t..]
                .iter()
                .position(|&b| b == b'/')
                .map_or(text.len(), |i| t + i)
        } else {
            text.len()
        };
        let mut wild_start = 0usize;
        let mut wild_pat = 0usize;
        let mut fixed_len = 0usize;
        while at(pat, p) != 0
            && !at_separator(pat, p, f)
            && (t < seg_end || (at(pat, p) == b'*' && t == seg_end))
        {
            let mut wild = false;
            while matches!(at(pat, p), b'*' | b'?') {
                if at(pat, p) == b'*' {
                    wild = true;
                } else if t < seg_end {
                    t += 1;
                } else {
                    return false;
                }
                p += 1;
            }
            if wild {
                wild_start = t;
                wild_pat = p;
                // Count the fixed elements up to the next `*` or the segment end.
                let mut m = p;
                fixed_len = 0;
                loop {
                    if at(pat, m) == 0 || at_separator(pat, m, f) {
                        if t + fixed_len > seg_end {
                            return false;
                        }
                        // Only a tail to compare: align it with the segment end.
                        t = seg_end - fixed_len;
                        wild = false;
                        break;
                    }
                    if at(pat, m) == b'*' {
                        if t + fixed_len > seg_end {
                            return false;
                        }
                        break;
                    }
                    if escape && at(pat, m) == b'\\' && at(pat, m + 1) != 0 {
                        m += 2;
                    } else if at(pat, m) == b'[' {
                        let dummy = b" ";
                        let mut dt = 0;
                        match_one(pat, &mut m, dummy, &mut dt, f);
                    } else {
                        m += 1;
                    }
                    fixed_len += 1;
                }
            }
            while at(pat, p) != 0 && t < seg_end {
                if at(pat, p) == b'*' {
                    break;
                }
                if slash && (at(text, t) == b'/' || at_separator(pat, p, f)) {
                    break;
                }
                if match_one(pat, &mut p, text, &mut t, f) {
                    continue;
                }
                if wild {
                    wild_start += 1;
                    t = wild_start;
                    if t + fixed_len > seg_end {
                        return false;
                    }
                    p = wild_pat;
                    continue;
                }
                return false;
            }
        }
        if at(text, t) != 0 && !(slash && at(text, t) == b'/') {
            return false;
        }
        if at(pat, p) != 0 && !at_separator(pat, p, f) {
            return false;
        }
    }
    // Both pattern and text must be at their ends.
    at(text, t) == 0 && at(pat, p) == 0
}

/// A pattern prepared once and matched against many texts with the same
/// flags (a `<Files>` wildcard against every request's file name). The
/// commonest shape, `*` and a literal tail (`*.php`), is answered as
/// [`fnmatch`] answers it by comparing the tail, without walking the
/// pattern; every other pattern goes through [`fnmatch`].
#[derive(Clone, Debug)]
pub struct Glob {
    pattern: String,
    flags: Flags,
    /// The pattern is `*` and this literal tail.
    tail: Option<Box<[u8]>>,
}

impl Glob {
    pub fn new(pattern: String, flags: Flags) -> Glob {
        let special =
            |b: &u8| matches!(b, b'*' | b'?' | b'[' | b'\\' | 0) || (flags.pathname && *b == b'/');
        let tail = match pattern.as_bytes().split_first() {
            Some((b'*', rest)) if !flags.period && !rest.iter().any(special) => Some(rest.into()),
            _ => None,
        };
        Glob {
            pattern,
            flags,
            tail,
        }
    }

    /// Whether `text` matches, as [`fnmatch`] with the flags given.
    pub fn matches(&self, text: &[u8]) -> bool {
        let Some(tail) = &self.tail else {
            return fnmatch(self.pattern.as_bytes(), text, self.flags);
        };
        // C strings end at the first NUL.
        let text = &text[..memchr::memchr(0, text).unwrap_or(text.len())];
        let Some(head_len) = text.len().checked_sub(tail.len()) else {
            return false;
        };
        let (head, end) = text.split_at(head_len);
        let tail_matches = if self.flags.case_blind {
            end.eq_ignore_ascii_case(tail)
        } else {
            end == &tail[..]
        };
        // The `*` matches the head, which may not cross a `/` with `pathname`.
        tail_matches && !(self.flags.pathname && memchr::memchr(b'/', head).is_some())
    }
}

/// APR's `apr_fnmatch_test`: does `pattern` contain anything that makes it
/// a wildcard (`*`, `?`, or a `[` with a later `]`)?
pub fn has_wildcard(pattern: &[u8]) -> bool {
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

/// Apache's `ap_is_matchexp`: whether a word holds `*` or `?` (the
/// wildcards of [`strcmp_match`]).
pub fn is_matchexp(s: &str) -> bool {
    s.contains(['*', '?'])
}

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

#[cfg(test)]
mod tests {
    use super::*;

    const PATH: Flags = Flags::PATHNAME;
    const PERIOD: Flags = Flags::PERIOD;
    const PLAIN: Flags = Flags {
        pathname: false,
        case_blind: false,
        no_escape: false,
        period: false,
    };
    const BLIND: Flags = Flags {
        case_blind: true,
        ..PLAIN
    };

    /// A text with fewer segments than the pattern: APR 1.7 answers "no"
    /// (its fix for PR 51219); the loop before that fix never ended, so a
    /// request could hold a worker for ever. Answers of libapr 1.7.2.
    #[test]
    fn fewer_segments_than_the_pattern_end() {
        for (pattern, text, apr) in [
            ("*/a", "", false),
            ("a/b", "a", false),
            ("/wp-content/*/x.php", "/wp-content/foo", false),
            ("*/a", "x", false),
            ("a/*", "a", false),
            ("a/*", "a/", true),
            ("/a/*/c", "/a/b/c", true),
            ("*", "", true),
            ("a", "a/b", false),
        ] {
            assert_eq!(
                fnmatch(pattern.as_bytes(), text.as_bytes(), PATH),
                apr,
                "{pattern} {text}"
            );
        }
    }

    /// Every text of up to four bytes over a small alphabet, against
    /// patterns of each shape: the prepared pattern answers as `fnmatch`.
    #[test]
    fn prepared_glob_answers_as_fnmatch() {
        let alphabet = [b'a', b'A', b'.', b'/', b'p', 0u8];
        let mut texts: Vec<Vec<u8>> = vec![Vec::new()];
        for len in 1..=4u32 {
            for n in 0..alphabet.len().pow(len) {
                let mut k = n;
                let text = (0..len)
                    .map(|_| {
                        let c = alphabet[k % alphabet.len()];
                        k /= alphabet.len();
                        c
                    })
                    .collect();
                texts.push(text);
            }
        }
        let patterns = [
            "*", "*.p", "*a", "*A.", "*/a", "*.", "*p*", "a*", "*?", "*[a]", "*\\.", "*.p/",
        ];
        let flag_sets = [
            PLAIN,
            PATH,
            PERIOD,
            BLIND,
            Flags {
                pathname: true,
                case_blind: true,
                ..PLAIN
            },
        ];
        for pattern in patterns {
            for flags in flag_sets {
                let glob = Glob::new(pattern.to_string(), flags);
                for text in &texts {
                    assert_eq!(
                        glob.matches(text),
                        fnmatch(pattern.as_bytes(), text, flags),
                        "{pattern:?} {flags:?} {text:?}"
                    );
                }
            }
        }
        assert!(Glob::new("*.php".into(), PATH).tail.is_some());
        assert!(Glob::new("*.p?p".into(), PATH).tail.is_none());
    }

    #[test]
    fn wildcards() {
        assert!(fnmatch(b"*.txt", b"a.txt", PLAIN));
        assert!(fnmatch(b"*.txt", b"a/b.txt", PLAIN));
        assert!(!fnmatch(b"*.txt", b"a/b.txt", PATH));
        assert!(fnmatch(b"/a/*/c", b"/a/b/c", PATH));
        assert!(!fnmatch(b"/a/*", b"/a/b/c", PATH));
        assert!(fnmatch(b"a?c", b"abc", PLAIN));
        assert!(!fnmatch(b"a?c", b"ac", PLAIN));
        assert!(fnmatch(b"*", b"", PLAIN));
        assert!(fnmatch(b"", b"", PLAIN));
        assert!(!fnmatch(b"", b"x", PLAIN));
        assert!(fnmatch(b"a*b*c", b"aXXbYYc", PLAIN));
        assert!(!fnmatch(b"a*b*c", b"aXXbYY", PLAIN));
        assert!(fnmatch(b"*ab", b"aab", PLAIN));
    }

    #[test]
    fn brackets_and_escapes() {
        assert!(fnmatch(b"[a-c]x", b"bx", PLAIN));
        assert!(!fnmatch(b"[!a-c]x", b"bx", PLAIN));
        assert!(fnmatch(b"[^a-c]x", b"dx", PLAIN));
        assert!(fnmatch(b"[]]", b"]", PLAIN));
        assert!(fnmatch(b"[abc", b"[abc", PLAIN));
        assert!(fnmatch(b"\\*", b"*", PLAIN));
        assert!(!fnmatch(b"\\*", b"a", PLAIN));
    }

    #[test]
    fn case_blind() {
        assert!(fnmatch(b"*.TXT", b"a.txt", BLIND));
        assert!(!fnmatch(b"*.TXT", b"a.txt", PLAIN));
        assert!(fnmatch(b"[A-C]", b"b", BLIND));
    }
    /// As `Include` matches a file name.
    fn m(p: &str, s: &str) -> bool {
        fnmatch(p.as_bytes(), s.as_bytes(), PERIOD)
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
        assert!(!fnmatch(b"[a-z]", &[0xE9], PERIOD));
        assert!(fnmatch(b"[\x80-a]", &[0xE9], PERIOD));
        assert!(fnmatch(b"\xE9", &[0xE9], PERIOD));
    }
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
        // mod_autoindex's `P=`: APR_FNM_NOESCAPE | APR_FNM_PERIOD.
        let f = Flags {
            no_escape: true,
            period: true,
            ..PLAIN
        };
        let m = |p: &str, n: &str| fnmatch(p.as_bytes(), n.as_bytes(), f);
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
        let m = |p: &str, n: &str| fnmatch(p.as_bytes(), n.as_bytes(), Flags::default());
        assert!(m("*.txt*", ".hidden.txt"));
        assert!(m("*/sub/*", "/srv/www/sub/a"));
        assert!(m("a\\*b", "a*b"));
        assert!(!m("a\\*b", "axb"));
    }

    #[test]
    fn directory_wildcards_never_cross_a_slash() {
        assert!(fnmatch(b"*.txt", b"a.txt", PATH));
        assert!(!fnmatch(b"*.txt", b"a/b.txt", PATH));
        assert!(fnmatch(b"/srv/w*/", b"/srv/www/", PATH));
        assert!(!fnmatch(b"/srv/w*/", b"/srv/www/x/", PATH));
        assert!(fnmatch(b"[a-c]?", b"bz", PATH));
        assert!(!fnmatch(b"[!a-c]?", b"bz", PATH));
        assert!(fnmatch(b"*", b"", PATH));
    }

    #[test]
    fn no_escape_and_period_together() {
        let f = Flags {
            no_escape: true,
            period: true,
            ..PLAIN
        };
        assert!(fnmatch(b"a\\b", b"a\\b", f));
        assert!(!fnmatch(b"\\.x", b".x", f));
        assert!(fnmatch(b".x*", b".xy", f));
    }

    #[test]
    fn period_is_per_segment_with_pathname() {
        let f = Flags {
            pathname: true,
            period: true,
            ..PLAIN
        };
        assert!(!fnmatch(b"/a/*", b"/a/.b", f));
        assert!(fnmatch(b"/a/.*", b"/a/.b", f));
        assert!(fnmatch(b"/a/*", b"/a/.b", PATH));
    }
}
