//! Splitting a line into words the way Apache's `ap_getword_conf` does.
//!
//! Every directive with ordinary arguments, and the directive name itself,
//! goes through this one function in Apache, so its quirks are part of the
//! configuration language users rely on:
//!
//! * words are separated by C `isspace` bytes (space, TAB, LF, VT, FF, CR);
//! * a word that *starts* with `"` or `'` runs to the next unescaped copy of
//!   that quote; the quotes are removed. Inside, `\"` (or `\'`) and `\\`
//!   stand for the quote and the backslash. A quote that is never closed
//!   runs to the end of the line (`"Gone fishing` is `Gone fishing`);
//! * in an unquoted word, `\\` also stands for one backslash; any other
//!   backslash is kept as written (`a\"b` stays `a\"b`);
//! * a closing quote ends the word even with no space after it (`"a"b` is
//!   the two words `a` and `b`); a quote in the middle of a word is an
//!   ordinary byte;
//! * an empty quoted word (`""`) is a word. Apache's callers differ on what
//!   they do with it (`TAKE1` and friends call it missing, `ITERATE` stops
//!   there), which is why [`split_args`] keeps it and leaves that to them.

/// C's `isspace` in the "C" locale, which Apache's `apr_isspace` is.
pub(crate) fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Removes C-`isspace` bytes from both ends.
pub(crate) fn trim(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if !is_space(*first) {
            break;
        }
        s = rest;
    }
    while let [rest @ .., last] = s {
        if !is_space(*last) {
            break;
        }
        s = rest;
    }
    s
}

/// One `ap_getword_conf` step on bytes: returns the next word and moves `pos`
/// past it and past the whitespace after it. At the end of the line it
/// returns an empty word and leaves `pos` at the end.
pub(crate) fn getword(line: &[u8], pos: &mut usize) -> Vec<u8> {
    let at = |i: usize| line.get(i).copied();
    let mut start = (*pos).min(line.len());
    while at(start).is_some_and(is_space) {
        start += 1;
    }
    let word;
    let mut end;
    match at(start) {
        None => {
            *pos = start;
            return Vec::new();
        }
        Some(quote @ (b'"' | b'\'')) => {
            end = start + 1;
            while let Some(c) = at(end) {
                if c == quote {
                    break;
                }
                if c == b'\\' && matches!(at(end + 1), Some(n) if n == quote || n == b'\\') {
                    end += 2;
                } else {
                    end += 1;
                }
            }
            word = unescape(&line[start + 1..end], Some(quote));
            if at(end) == Some(quote) {
                end += 1;
            }
        }
        Some(_) => {
            end = start;
            while at(end).is_some_and(|c| !is_space(c)) {
                end += 1;
            }
            word = unescape(&line[start..end], None);
        }
    }
    while at(end).is_some_and(is_space) {
        end += 1;
    }
    *pos = end;
    word
}

/// Apache's `substring_conf`: `\\` and (inside quotes) `\<quote>` lose their
/// backslash; every other byte is copied.
fn unescape(s: &[u8], quote: Option<u8>) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while let Some(&c) = s.get(i) {
        match s.get(i + 1) {
            Some(&n) if c == b'\\' && (n == b'\\' || Some(n) == quote) => {
                out.push(n);
                i += 2;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// All the words of `raw`, as repeated `ap_getword_conf` calls see them,
/// until nothing but whitespace is left. Empty quoted words are kept.
pub(crate) fn split_bytes(raw: &[u8]) -> Vec<Vec<u8>> {
    let mut pos = 0;
    while raw.get(pos).copied().is_some_and(is_space) {
        pos += 1;
    }
    let mut words = Vec::new();
    while pos < raw.len() {
        words.push(getword(raw, &mut pos));
    }
    words
}

/// Splits directive arguments into words exactly as Apache's
/// `ap_getword_conf`, applied until the text is used up, would.
///
/// ```
/// use htaccel_conf::split_args;
/// assert_eq!(split_args(r#"set X-A "a b" 'c\'d'"#), ["set", "X-A", "a b", "c'd"]);
/// assert_eq!(split_args(r#"404 "Gone fishing"#), ["404", "Gone fishing"]);
/// ```
pub fn split_args(raw: &str) -> Vec<String> {
    split_bytes(raw.as_bytes())
        .iter()
        .map(|w| crate::text::bytes_to_string(w))
        .collect()
}

/// One `ap_getword_conf` step: the next word of `*rest`, with `*rest`
/// advanced past it and the whitespace after it. Returns `""` when nothing
/// is left, which is how Apache's callers notice a missing argument (an
/// empty quoted word looks the same to them, as it does here).
///
/// ```
/// use htaccel_conf::getword_conf;
/// let mut rest = r#"  "a b"c  d"#;
/// assert_eq!(getword_conf(&mut rest), "a b");
/// assert_eq!(rest, "c  d");
/// ```
pub fn getword_conf(rest: &mut &str) -> String {
    let bytes = rest.as_bytes();
    let mut pos = 0;
    let word = getword(bytes, &mut pos);
    // `pos` is at the end or just after an ASCII byte, so it is a char
    // boundary; `get` keeps that an assumption checked rather than trusted.
    *rest = rest.get(pos..).unwrap_or("");
    crate::text::bytes_to_string(&word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(s: &str) -> Vec<String> {
        split_args(s)
    }

    #[test]
    fn plain_words() {
        assert_eq!(split("a b\tc"), ["a", "b", "c"]);
        assert_eq!(split("  a   b  "), ["a", "b"]);
        assert!(split("").is_empty());
        assert!(split(" \t\r\n").is_empty());
        assert_eq!(split("a\x0bb\x0cc\rd"), ["a", "b", "c", "d"]);
    }

    #[test]
    fn no_trailing_comments() {
        assert_eq!(
            split("index.html # home.html"),
            ["index.html", "#", "home.html"]
        );
    }

    #[test]
    fn double_and_single_quotes() {
        assert_eq!(split(r#""a b" 'c d'"#), ["a b", "c d"]);
        assert_eq!(split(r#""it's" 'say "hi"'"#), ["it's", r#"say "hi""#]);
    }

    #[test]
    fn escaped_quote_inside_quotes() {
        assert_eq!(split(r#""a \" b""#), [r#"a " b"#]);
        assert_eq!(split(r"'it\'s'"), ["it's"]);
        // The other quote character is not escapable: the backslash stays.
        assert_eq!(split(r#"'a\"b'"#), [r#"a\"b"#]);
    }

    #[test]
    fn backslashes() {
        // Observed on Apache 2.4 with SetEnv: four backslashes give two,
        // quoted or not; `\\` before a closing quote is a backslash and the
        // quote still closes.
        assert_eq!(split(r#""a \\\\ b""#), [r"a \\ b"]);
        assert_eq!(split(r"a\\\\b"), [r"a\\b"]);
        assert_eq!(split(r"a\\\\\\b"), [r"a\\\b"]);
        assert_eq!(split(r#""a \\" b""#), [r"a \", r#"b""#]);
        assert_eq!(split(r#"a\"b"#), [r#"a\"b"#]);
        assert_eq!(split(r"a\nb \ c"), [r"a\nb", r"\", "c"]);
        assert_eq!(split(r"trailing\"), [r"trailing\"]);
        assert_eq!(split(r#""trailing\"#), [r"trailing\"]);
    }

    #[test]
    fn unbalanced_quote_runs_to_end() {
        assert_eq!(split(r#"404 "Gone fishing"#), ["404", "Gone fishing"]);
        assert_eq!(split(r#"'open"#), ["open"]);
        assert_eq!(split(r#"""#), [""]);
    }

    #[test]
    fn quote_ends_word_without_space() {
        assert_eq!(split(r#""a"b"#), ["a", "b"]);
        assert_eq!(split(r#"a"b c"d"#), [r#"a"b"#, r#"c"d"#]);
    }

    #[test]
    fn empty_quoted_words_are_kept() {
        assert_eq!(split(r#"a "" b ''"#), ["a", "", "b", ""]);
    }

    #[test]
    fn getword_steps() {
        let mut rest = "one 'two three'   four";
        assert_eq!(getword_conf(&mut rest), "one");
        assert_eq!(getword_conf(&mut rest), "two three");
        assert_eq!(rest, "four");
        assert_eq!(getword_conf(&mut rest), "four");
        assert_eq!(rest, "");
        assert_eq!(getword_conf(&mut rest), "");
    }

    #[test]
    fn non_ascii_is_ordinary() {
        assert_eq!(split("café \u{a0}x"), ["café", "\u{a0}x"]);
    }

    #[test]
    fn trim_uses_c_isspace() {
        assert_eq!(trim(b"\x0b\x0c a \r\n"), b"a");
        assert_eq!(trim(b"   "), b"");
    }
}
