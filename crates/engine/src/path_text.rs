//! Decoded request paths held as text without losing a byte.
//!
//! A decoded path is bytes: `%ff` and the overlong `%c0%ae` are legal
//! requests, Linux file names are bytes, and Apache maps, matches,
//! forwards and escapes them as bytes (`/app/%c0%ae` reaches a proxied
//! upstream as `/app/%C0%AE`). The request phases hold the path, the file
//! name and the path info as `String`s, which a static request uses
//! without conversion. So a path that is not UTF-8 is carried in its
//! `String` in the form the configuration parser already gives to bytes
//! of a configuration file that are not UTF-8 (`htaccel_conf::text`): each
//! such byte is one code point of U+10FE80..U+10FEFF, and those code
//! points, when a client sends them (`%F4%8F%BA%80`), are written byte by
//! byte, so the mapping is one to one: [`bytes`] gives back exactly the
//! bytes that were decoded, and two different requests never become the
//! same path. One form for both means a raw byte of a rule (`RewriteRule`
//! substitution, `Alias` target) and the same byte of a request are the
//! same text. A stand-in code point only ever stands for a byte of 0x80 or
//! more: turning text back into bytes never makes a `/`, `.` or NUL, so
//! the checks made on the decoded bytes (dot segments, `%2F`, `%00`) hold.
//!
//! Where the bytes leave the engine they are turned back: every file-system
//! call ([`os_path`], used by `fs`, `statcache`, `watch`, `htaccess` and the
//! listing), the escaping of a path into a URL (redirects, proxied
//! requests), the regexes and substitutions of mod_rewrite, `AliasMatch`,
//! `ProxyPassMatch` and the sections, expression variables, the CGI
//! environment sent to FastCGI backends and the error log. A UTF-8 path
//! never holds such a code point, and every conversion is then a check of
//! the bytes for `0xF4` that borrows its input.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The text form of decoded path bytes.
pub fn from_bytes(v: Vec<u8>) -> String {
    htaccel_conf::vec_to_string(v)
}

/// The text form of decoded path bytes (borrowed input).
pub fn from_slice(v: &[u8]) -> Cow<'_, str> {
    htaccel_conf::bytes_to_str(v)
}

/// The bytes a path's text form stands for.
pub fn bytes(s: &str) -> Cow<'_, [u8]> {
    htaccel_conf::string_to_bytes(s)
}

/// The file-system path a path's text form stands for: what every system
/// call on a request-derived path is given.
pub fn os_path(p: &Path) -> Cow<'_, Path> {
    let raw = p.as_os_str().as_bytes();
    if !raw.contains(&0xF4) {
        return Cow::Borrowed(p);
    }
    match std::str::from_utf8(raw) {
        Ok(s) => match bytes(s) {
            Cow::Borrowed(_) => Cow::Borrowed(p),
            Cow::Owned(b) => Cow::Owned(OsStr::from_bytes(&b).into()),
        },
        // Already bytes (not a text form): nothing to turn back.
        Err(_) => Cow::Borrowed(p),
    }
}

/// A file name as the file system gave it, in text form (directory
/// listings, the watcher's events).
pub fn from_os(name: &OsStr) -> Cow<'_, str> {
    from_slice(name.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(b: &[u8]) {
        let text = from_bytes(b.to_vec());
        assert_eq!(&*bytes(&text), b, "{text:?}");
        assert_eq!(from_slice(b), text);
        let p = Path::new(&text);
        assert_eq!(os_path(p).as_os_str().as_bytes(), b);
    }

    #[test]
    fn utf8_paths_are_borrowed_unchanged() {
        assert!(matches!(bytes("/a/été"), Cow::Borrowed(_)));
        assert!(matches!(from_slice(b"/a/x"), Cow::Borrowed(_)));
        assert_eq!(from_bytes(b"/a/\xc3\xa9".to_vec()), "/a/é");
        round_trip(b"/a/\xc3\xa9");
        // A code point just outside the stand-ins stays itself.
        round_trip("/\u{10FF80}/x".as_bytes());
        assert!(matches!(bytes("/\u{10FF80}"), Cow::Borrowed(_)));
    }

    #[test]
    fn other_bytes_round_trip() {
        round_trip(b"/\xc0\xae\xc0\xae/");
        round_trip(b"/\xff\xfe/\x80");
        round_trip(b"/\xe2\x82");
        round_trip(b"\xf4");
        round_trip(b"/\xf4\x8f\xba\x80/\xf4\x8f\xbb\xbf");
    }

    #[test]
    fn distinct_bytes_stay_distinct() {
        let a = from_bytes(b"/\xf4\x8f\xba\x80".to_vec());
        let b = from_bytes(b"/\x80".to_vec());
        assert_ne!(a, b);
        assert_ne!(from_bytes(b"/\xc0\xae".to_vec()), "/\u{FFFD}\u{FFFD}");
        assert_ne!(
            from_bytes(b"/\xc0\xae".to_vec()),
            from_bytes(b"/\xc0\xaf".to_vec())
        );
    }

    #[test]
    fn the_same_form_as_configuration_bytes() {
        let from_config = htaccel_conf::bytes_to_string(b"caf\xe9");
        assert_eq!(from_bytes(b"caf\xe9".to_vec()), from_config);
    }
}
