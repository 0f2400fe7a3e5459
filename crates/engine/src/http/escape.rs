//! The escaping rules Apache applies when it writes names and URLs into HTML
//! it generates (error pages, directory listings, signatures).
//!
//! They are narrower than a browser would need: `ap_escape_html` only touches
//! `<`, `>`, `&` and `"` (a single quote passes through), and
//! `ap_os_escape_path` keeps a fixed set of punctuation unescaped and writes
//! lower-case hex. Reproducing them byte for byte is what makes generated pages
//! identical to Apache's.

/// `ap_escape_html`: `<` `>` `&` `"` become entities; all other bytes,
/// including `'` and non-ASCII, are copied.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

/// [`escape_html`] over raw bytes (file names need not be UTF-8).
pub fn escape_html_bytes(s: &[u8], out: &mut Vec<u8>) {
    for &c in s {
        match c {
            b'<' => out.extend_from_slice(b"&lt;"),
            b'>' => out.extend_from_slice(b"&gt;"),
            b'&' => out.extend_from_slice(b"&amp;"),
            b'"' => out.extend_from_slice(b"&quot;"),
            _ => out.push(c),
        }
    }
}

/// Bytes `ap_os_escape_path` copies as they are: ASCII letters and digits and
/// `$-_.+!*'(),:;@&=/~`.
fn path_safe(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"$-_.+!*'(),:;@&=/~".contains(&c)
}

/// `ap_os_escape_path`: every other byte becomes `%xx` (lower-case hex). With
/// `partial == false` a path whose first segment contains `:` gets a `./`
/// prefix, so that `a:b` is not read as a URL scheme.
pub fn os_escape_path(path: &[u8], partial: bool) -> String {
    let mut out = String::with_capacity(path.len() + 8);
    if !partial {
        let colon = path.iter().position(|&c| c == b':');
        let slash = path.iter().position(|&c| c == b'/');
        let prefix = match (colon, slash) {
            (Some(c), Some(s)) => c < s,
            (Some(_), None) => true,
            _ => false,
        };
        if prefix {
            out.push_str("./");
        }
    }
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for &c in path {
        if path_safe(c) {
            out.push(c as char);
        } else {
            out.push('%');
            out.push(HEX[(c >> 4) as usize] as char);
            out.push(HEX[(c & 15) as usize] as char);
        }
    }
    out
}

/// Why [`unescape_url`] refused a string (`ap_unescape_url`'s two errors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnescapeError {
    /// A `%` not followed by two hex digits (Apache: 400).
    BadEscape,
    /// The decoded string would contain `/` or NUL (Apache: 404).
    BadPath,
}

/// `ap_unescape_url`: decode `%xx`; `+` stays `+`. A malformed escape is
/// copied and reported; an encoded `/` or NUL is reported.
pub fn unescape_url(s: &[u8]) -> Result<Vec<u8>, UnescapeError> {
    let mut out = Vec::with_capacity(s.len());
    let mut bad_esc = false;
    let mut bad_path = false;
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%' {
            match (
                s.get(i + 1).and_then(|&c| hex(c)),
                s.get(i + 2).and_then(|&c| hex(c)),
            ) {
                (Some(h), Some(l)) => {
                    let c = h << 4 | l;
                    if c == b'/' || c == 0 {
                        bad_path = true;
                    }
                    out.push(c);
                    i += 3;
                    continue;
                }
                _ => bad_esc = true,
            }
        }
        out.push(s[i]);
        i += 1;
    }
    if bad_esc {
        Err(UnescapeError::BadEscape)
    } else if bad_path {
        Err(UnescapeError::BadPath)
    } else {
        Ok(out)
    }
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html() {
        // Observed with Apache 2.4.71: the 301 page for Location
        // `http://example.com/t?a=1&b=<x>` has
        // href="http://example.com/t?a=1&amp;b=&lt;x&gt;", and a listing shows
        // `quo"te` as quo&quot;te and `apo'st` unchanged.
        assert_eq!(
            escape_html("http://example.com/t?a=1&b=<x>"),
            "http://example.com/t?a=1&amp;b=&lt;x&gt;"
        );
        assert_eq!(escape_html("quo\"te apo'st é"), "quo&quot;te apo'st é");
        let mut v = Vec::new();
        escape_html_bytes(b"lt<x\xff", &mut v);
        assert_eq!(v, b"lt&lt;x\xff");
    }

    #[test]
    fn os_path() {
        // Observed with Apache 2.4.71 in a directory listing: hrefs of files
        // named `x y&<z>.txt`, `h#x`, `q?x`, `p%20x`, `bs\x`, `colon:x`,
        // `semi;c`, `~tilde`, `é.txt`, `nl<LF>x`, `a+b`.
        assert_eq!(os_escape_path(b"x y&<z>.txt", false), "x%20y&%3cz%3e.txt");
        assert_eq!(os_escape_path(b"h#x", false), "h%23x");
        assert_eq!(os_escape_path(b"q?x", false), "q%3fx");
        assert_eq!(os_escape_path(b"p%20x", false), "p%2520x");
        assert_eq!(os_escape_path(b"bs\\x", false), "bs%5cx");
        assert_eq!(os_escape_path(b"colon:x", false), "./colon:x");
        assert_eq!(os_escape_path(b"colon:x", true), "colon:x");
        assert_eq!(os_escape_path(b"a/b:c", false), "a/b:c");
        assert_eq!(os_escape_path(b"semi;c", false), "semi;c");
        assert_eq!(os_escape_path(b"~tilde", false), "~tilde");
        assert_eq!(os_escape_path("é.txt".as_bytes(), false), "%c3%a9.txt");
        assert_eq!(os_escape_path(b"nl\nx", false), "nl%0ax");
        assert_eq!(os_escape_path(b"a+b", false), "a+b");
        assert_eq!(os_escape_path(b"sp ace/", false), "sp%20ace/");
    }

    #[test]
    fn unescape() {
        assert_eq!(unescape_url(b"a%2Ab+c").unwrap(), b"a*b+c");
        assert_eq!(unescape_url(b"a%2fb"), Err(UnescapeError::BadPath));
        assert_eq!(unescape_url(b"a%00b"), Err(UnescapeError::BadPath));
        assert_eq!(unescape_url(b"a%zzb"), Err(UnescapeError::BadEscape));
        assert_eq!(unescape_url(b"a%2"), Err(UnescapeError::BadEscape));
    }
}
