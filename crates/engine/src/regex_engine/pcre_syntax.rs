//! PCRE spellings that the `regex` crate reads differently or refuses,
//! rewritten to mean what PCRE (as Apache links it) means:
//!
//! * `\Q…\E` quotes literally;
//! * a `{` that does not start `{n}`, `{n,}` or `{n,m}` is a literal
//!   (so `a{,2}` and `x{` match those characters);
//! * inside a bracket class, `[` (other than a POSIX `[:name:]`), `&&`
//!   and `~~` are ordinary characters, not the `regex` crate's nested
//!   classes and set operators.
//!
//! * `\<` and `\>` are the characters `<` and `>` (PCRE has no word-start
//!   or word-end escape; the `regex` crate reads them as such);
//! * every byte of 0x80 and above becomes a `\xHH` escape, so that it is
//!   one character (PCRE without UTF), also in classes and before `+`.
//!
//! Everything else is passed through unchanged; the engines then accept
//! it or fail.

use std::borrow::Cow;
use std::fmt::Write;

/// Characters escaped when they stand for themselves.
const META: &[u8] = b"\\.+*?()|[]{}^$#&-~ ";

/// One byte as the engines should read it literally.
fn push_literal(out: &mut String, c: u8) {
    if !c.is_ascii() {
        let _ = write!(out, "\\x{c:02X}");
        return;
    }
    if META.contains(&c) {
        out.push('\\');
    }
    out.push(c as char);
}

/// One byte copied as pattern syntax (non-ASCII as an escape).
fn push_byte(out: &mut String, c: u8) {
    if c.is_ascii() {
        out.push(c as char);
    } else {
        let _ = write!(out, "\\x{c:02X}");
    }
}

/// Whether `rest` (just after a `{`) is a valid PCRE quantifier body.
fn is_quantifier(rest: &[u8]) -> bool {
    let digits = |from: usize| {
        rest[from..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count()
    };
    let n = digits(0);
    if n == 0 {
        return false;
    }
    match rest.get(n) {
        Some(b'}') => true,
        Some(b',') => {
            let m = digits(n + 1);
            rest.get(n + 1 + m) == Some(&b'}')
        }
        _ => false,
    }
}

/// Whether the pattern calls a group or itself (`\g…`, `(?R)`, `(?1)`,
/// `(?-1)`, `(?+1)`, `(?&name)`, `(?P>name)`): PCRE's recursion and
/// subroutine calls, and its `\g` back-references, which the fallback
/// engine would read as calls.
pub fn calls_a_group(pattern: &[u8]) -> bool {
    let mut i = 0;
    while i < pattern.len() {
        match pattern[i] {
            b'\\' => {
                if pattern.get(i + 1) == Some(&b'g') {
                    return true;
                }
                i += 2;
            }
            b'(' if pattern.get(i + 1) == Some(&b'?') => {
                let rest = &pattern[i + 2..];
                let call = match rest.first() {
                    Some(b'R' | b'&') => true,
                    Some(b'+' | b'-') => rest.get(1).is_some_and(u8::is_ascii_digit),
                    Some(c) => c.is_ascii_digit() || rest.starts_with(b"P>"),
                    None => false,
                };
                if call {
                    return true;
                }
                i += 2;
            }
            _ => i += 1,
        }
    }
    false
}

/// The pattern with PCRE-only spellings rewritten.
pub fn translate(pattern: &[u8]) -> Cow<'_, str> {
    if pattern.is_ascii() && !pattern.iter().any(|c| matches!(c, b'\\' | b'{' | b'[')) {
        if let Ok(s) = std::str::from_utf8(pattern) {
            return Cow::Borrowed(s);
        }
    }
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut i = 0;
    while i < pattern.len() {
        let c = pattern[i];
        match c {
            b'\\' => match pattern.get(i + 1) {
                Some(b'Q') => {
                    // Literal up to `\E` or the end.
                    let rest = &pattern[i + 2..];
                    let end = rest
                        .windows(2)
                        .position(|w| w == b"\\E")
                        .unwrap_or(rest.len());
                    for &q in &rest[..end] {
                        push_literal(&mut out, q);
                    }
                    i += 2 + end + if end < rest.len() { 2 } else { 0 };
                    continue;
                }
                // PCRE reads `\<` and `\>` as the characters; the `regex`
                // crate as word boundaries.
                Some(&e) if !e.is_ascii() || e == b'<' || e == b'>' => {
                    push_literal(&mut out, e);
                    i += 2;
                    continue;
                }
                Some(&e) => {
                    out.push('\\');
                    out.push(e as char);
                    i += 2;
                    continue;
                }
                None => out.push('\\'),
            },
            b'{' if !is_quantifier(&pattern[i + 1..]) => out.push_str("\\{"),
            b'[' => {
                out.push('[');
                i = class(pattern, i + 1, &mut out);
                continue;
            }
            _ => push_byte(&mut out, c),
        }
        i += 1;
    }
    Cow::Owned(out)
}

/// Copy a bracket class starting at `i` (just after its `[`) up to and
/// including its `]`; returns the position after it.
fn class(pattern: &[u8], mut i: usize, out: &mut String) -> usize {
    if pattern.get(i) == Some(&b'^') {
        out.push('^');
        i += 1;
    }
    // A `]` first is a member, not the end.
    if pattern.get(i) == Some(&b']') {
        out.push_str("\\]");
        i += 1;
    }
    while i < pattern.len() {
        let c = pattern[i];
        match c {
            b']' => {
                out.push(']');
                return i + 1;
            }
            b'\\' => {
                match pattern.get(i + 1) {
                    Some(&e) if !e.is_ascii() || e == b'<' || e == b'>' => push_literal(out, e),
                    Some(&e) => {
                        out.push('\\');
                        out.push(e as char);
                    }
                    None => out.push('\\'),
                }
                i += 2;
                continue;
            }
            b'[' => {
                let rest = &pattern[i + 1..];
                let posix = rest.strip_prefix(b":").and_then(|r| {
                    let e = r.windows(2).position(|w| w == b":]")?;
                    r[..e]
                        .iter()
                        .all(|b| b.is_ascii_alphabetic() || *b == b'^')
                        .then_some(e)
                });
                match posix {
                    Some(e) => {
                        // `[:name:]` as it is (ASCII by construction).
                        let stop = i + 2 + e + 2;
                        out.push_str(std::str::from_utf8(&pattern[i..stop]).unwrap_or(""));
                        i = stop;
                        continue;
                    }
                    None => out.push_str("\\["),
                }
            }
            b'&' | b'~' => {
                out.push('\\');
                out.push(c as char);
            }
            _ => push_byte(out, c),
        }
        i += 1;
    }
    pattern.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_calls_are_found() {
        for p in [
            &br"a\g000"[..],
            br"(a)\g1",
            br"(a)\g{1}",
            br"\g<0>",
            br"(?R)",
            br"(a)(?1)",
            br"(a)(?-1)",
            br"(?<n>a)(?&n)",
            br"(?P<n>a)(?P>n)",
        ] {
            assert!(calls_a_group(p), "{}", String::from_utf8_lossy(p));
        }
        for p in [
            &br"a\\g"[..],
            br"(?i)a",
            br"(?:a)(?=b)(?!c)(?<=d)",
            br"(?P<n>a)(?P=n)",
            br"(a)\1",
        ] {
            assert!(!calls_a_group(p), "{}", String::from_utf8_lossy(p));
        }
    }

    #[test]
    fn quoting() {
        assert_eq!(translate(br"^\Qa.b\E$"), r"^a\.b$");
        assert_eq!(translate(br"\Qa+"), r"a\+");
    }

    #[test]
    fn angle_escapes_are_literal() {
        assert_eq!(translate(br"\<a\>"), "<a>");
        assert_eq!(translate(br"[\<\>]"), "[<>]");
    }

    #[test]
    fn braces() {
        assert_eq!(translate(b"a{2}"), "a{2}");
        assert_eq!(translate(b"a{2,}"), "a{2,}");
        assert_eq!(translate(b"a{2,5}"), "a{2,5}");
        assert_eq!(translate(b"a{,2}"), r"a\{,2}");
        assert_eq!(translate(b"a{"), r"a\{");
        assert_eq!(translate(b"{x}"), r"\{x}");
        assert_eq!(translate(br"\{"), r"\{");
    }

    #[test]
    fn classes() {
        assert_eq!(translate(b"[a[]"), r"[a\[]");
        assert_eq!(translate(b"[]a]"), r"[\]a]");
        assert_eq!(translate(b"[^]a]"), r"[^\]a]");
        assert_eq!(translate(b"[[:alpha:]_]"), "[[:alpha:]_]");
        assert_eq!(translate(b"[a&&b]"), r"[a\&\&b]");
        assert_eq!(translate(b"[{]"), "[{]");
        assert_eq!(translate(b"plain"), "plain");
    }

    #[test]
    fn raw_bytes_are_single_characters() {
        assert_eq!(translate("é+".as_bytes()), r"\xC3\xA9+");
        assert_eq!(translate("[é]".as_bytes()), r"[\xC3\xA9]");
        assert_eq!(translate(b"\\\xff"), r"\xFF");
    }
}
