//! Shell wildcard matching as APR's `apr_fnmatch` does it, for the
//! `-fnmatch`, `-strmatch` and `-strcmatch` operators.
//!
//! POSIX rules with APR's choices: `\` escapes, `[!…]` and `[^…]` negate,
//! a `[` that does not open a well-formed bracket is an ordinary
//! character, ranges compare bytes as C's signed `char`, and with
//! `pathname` a wildcard never matches `/` and the slashes of pattern and
//! text must pair up one for one.

#[derive(Clone, Copy, Debug, Default)]
pub struct Flags {
    /// `APR_FNM_PATHNAME`.
    pub pathname: bool,
    /// `APR_FNM_CASE_BLIND` (ASCII only).
    pub case_blind: bool,
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
                if at(pat, *p) == b'\\' {
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
                *p += if at(pat, *p + 2) == b'\\' { 3 } else { 2 };
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
    } else if at(pat, *p) == b'\\' && at(pat, *p + 1) != 0 {
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
    f.pathname && (at(pat, p) == b'/' || (at(pat, p) == b'\\' && at(pat, p + 1) == b'/'))
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
    let (mut p, mut t) = (0usize, 0usize);
    while at(pat, p) != 0 {
        if slash && at(pat, p) == b'\\' && at(pat, p + 1) == b'/' {
            p += 1;
        }
        if slash && at(pat, p) == b'/' && at(text, t) == b'/' {
            p += 1;
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
                    if at(pat, m) == b'\\' && at(pat, m + 1) != 0 {
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
    at(text, t) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATH: Flags = Flags {
        pathname: true,
        case_blind: false,
    };
    const PLAIN: Flags = Flags {
        pathname: false,
        case_blind: false,
    };
    const BLIND: Flags = Flags {
        pathname: false,
        case_blind: true,
    };

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
}
