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
//! Everything else is passed through unchanged; the engines then accept
//! it or fail.

use std::borrow::Cow;

/// Characters escaped when they stand for themselves.
const META: &[u8] = b"\\.+*?()|[]{}^$#&-~ ";

fn push_literal(out: &mut String, c: char) {
    if c.is_ascii() && META.contains(&(c as u8)) {
        out.push('\\');
    }
    out.push(c);
}

/// Whether `rest` (just after a `{`) is a valid PCRE quantifier body.
fn is_quantifier(rest: &str) -> bool {
    let b = rest.as_bytes();
    let digits = |from: usize| b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let n = digits(0);
    if n == 0 {
        return false;
    }
    match b.get(n) {
        Some(b'}') => true,
        Some(b',') => {
            let m = digits(n + 1);
            b.get(n + 1 + m) == Some(&b'}')
        }
        _ => false,
    }
}

/// The pattern with PCRE-only spellings rewritten.
pub fn translate(pattern: &str) -> Cow<'_, str> {
    if !pattern.contains(['\\', '{', '[']) {
        return Cow::Borrowed(pattern);
    }
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some((_, 'Q')) => {
                    // Literal up to `\E` or the end.
                    let rest = &pattern[i + 2..];
                    let end = rest.find("\\E").unwrap_or(rest.len());
                    for q in rest[..end].chars() {
                        push_literal(&mut out, q);
                    }
                    let skip = if end < rest.len() { end + 2 } else { end };
                    let stop = i + 2 + skip;
                    while chars.peek().is_some_and(|(j, _)| *j < stop) {
                        chars.next();
                    }
                }
                Some((_, e)) => {
                    out.push('\\');
                    out.push(e);
                }
                None => out.push('\\'),
            },
            '{' if !is_quantifier(&pattern[i + 1..]) => out.push_str("\\{"),
            '[' => {
                out.push('[');
                class(pattern, &mut chars, &mut out);
            }
            _ => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Copy a bracket class (after its `[`) up to and including its `]`.
fn class(
    pattern: &str,
    chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
    out: &mut String,
) {
    if chars.peek().is_some_and(|(_, c)| *c == '^') {
        chars.next();
        out.push('^');
    }
    // A `]` first is a member, not the end.
    if chars.peek().is_some_and(|(_, c)| *c == ']') {
        chars.next();
        out.push_str("\\]");
    }
    while let Some((i, c)) = chars.next() {
        match c {
            ']' => {
                out.push(']');
                return;
            }
            '\\' => {
                out.push('\\');
                if let Some((_, e)) = chars.next() {
                    out.push(e);
                }
            }
            '[' => {
                let rest = &pattern[i + 1..];
                let posix = rest
                    .strip_prefix(':')
                    .and_then(|r| r.find(":]").map(|e| (e, r)))
                    .filter(|(e, r)| {
                        r[..*e]
                            .bytes()
                            .all(|b| b.is_ascii_alphabetic() || b == b'^')
                    });
                match posix {
                    Some((e, _)) => {
                        // `[:name:]` as it is.
                        let stop = i + 1 + 1 + e + 2;
                        out.push_str(&pattern[i..stop]);
                        while chars.peek().is_some_and(|(j, _)| *j < stop) {
                            chars.next();
                        }
                    }
                    None => out.push_str("\\["),
                }
            }
            '&' | '~' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(translate(r"^\Qa.b\E$"), r"^a\.b$");
        assert_eq!(translate(r"\Qa+"), r"a\+");
    }

    #[test]
    fn braces() {
        assert_eq!(translate("a{2}"), "a{2}");
        assert_eq!(translate("a{2,}"), "a{2,}");
        assert_eq!(translate("a{2,5}"), "a{2,5}");
        assert_eq!(translate("a{,2}"), r"a\{,2}");
        assert_eq!(translate("a{"), r"a\{");
        assert_eq!(translate("{x}"), r"\{x}");
        assert_eq!(translate(r"\{"), r"\{");
    }

    #[test]
    fn classes() {
        assert_eq!(translate("[a[]"), r"[a\[]");
        assert_eq!(translate("[]a]"), r"[\]a]");
        assert_eq!(translate("[^]a]"), r"[^\]a]");
        assert_eq!(translate("[[:alpha:]_]"), "[[:alpha:]_]");
        assert_eq!(translate("[a&&b]"), r"[a\&\&b]");
        assert_eq!(translate("[{]"), "[{]");
        assert_eq!(translate("plain"), "plain");
    }
}
