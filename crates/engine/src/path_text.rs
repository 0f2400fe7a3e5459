//! Decoded request paths held as text without losing a byte.
//!
//! A decoded path is bytes: `%ff` and the overlong `%c0%ae` are legal
//! requests, Linux file names are bytes, and Apache maps, matches,
//! forwards and escapes them as bytes (`/app/%c0%ae` reaches a proxied
//! upstream as `/app/%C0%AE`). The request phases hold the path, the file
//! name and the path info as `String`s, which a static request uses
//! without conversion. So a path that is not UTF-8 is carried in its
//! `String` with each byte that is not part of a valid sequence written as
//! one code point of a range no real path uses (U+10FF80 + byte − 0x80,
//! the end of plane 16's private use area). Those code points, when a
//! client sends them (`%F4%8F%BE%80`), are written the same way, byte by
//! byte, so the mapping is one to one: [`bytes`] gives back exactly the
//! bytes that were decoded, and two different requests never become the
//! same path. A stand-in code point only ever stands for a byte of 0x80 or
//! more: turning text back into bytes never makes a `/`, `.` or NUL, so
//! the checks made on the decoded bytes (dot segments, `%2F`, `%00`) hold.
//!
//! Where the bytes leave the engine they are turned back: every file-system
//! call ([`os_path`], used by `fs`, `statcache`, `watch`, `htaccess` and the
//! listing), the escaping of a path into a URL (`uri::escape_path`, which
//! proxied requests and redirects use), mod_rewrite's matching and
//! substitution, and the CGI environment sent to FastCGI backends. A UTF-8
//! path never holds such a code point, and every conversion is then a
//! check of the bytes for `0xF4` that borrows its input.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The first code point standing for a byte (0x80 stands for itself + this).
const FIRST: u32 = 0x10FF80;

/// The lead byte of every code point in the reserved range in UTF-8.
const LEAD: u8 = 0xF4;

fn reserved(c: char) -> bool {
    c as u32 >= FIRST
}

fn push_byte(out: &mut String, b: u8) {
    debug_assert!(b >= 0x80, "ASCII is always valid UTF-8");
    out.push(char::from_u32(FIRST + u32::from(b - 0x80)).expect("a code point below U+110000"));
}

/// The text form of decoded path bytes.
pub fn from_bytes(v: Vec<u8>) -> String {
    if v.contains(&LEAD) {
        return from_bytes_slow(&v);
    }
    match String::from_utf8(v) {
        Ok(s) => s,
        Err(e) => from_bytes_slow(e.as_bytes()),
    }
}

/// The text form of decoded path bytes (borrowed input).
pub fn from_slice(v: &[u8]) -> Cow<'_, str> {
    if !v.contains(&LEAD) {
        if let Ok(s) = std::str::from_utf8(v) {
            return Cow::Borrowed(s);
        }
    }
    Cow::Owned(from_bytes_slow(v))
}

fn from_bytes_slow(v: &[u8]) -> String {
    let mut out = String::with_capacity(v.len() + 8);
    for chunk in v.utf8_chunks() {
        for c in chunk.valid().chars() {
            if reserved(c) {
                let mut buf = [0; 4];
                for &b in c.encode_utf8(&mut buf).as_bytes() {
                    push_byte(&mut out, b);
                }
            } else {
                out.push(c);
            }
        }
        for &b in chunk.invalid() {
            push_byte(&mut out, b);
        }
    }
    out
}

/// The bytes a path's text form stands for.
pub fn bytes(s: &str) -> Cow<'_, [u8]> {
    if !s.as_bytes().contains(&LEAD) {
        return Cow::Borrowed(s.as_bytes());
    }
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        if reserved(c) {
            out.push((c as u32 - FIRST) as u8 + 0x80);
        } else {
            let mut buf = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    Cow::Owned(out)
}

/// The file-system path a path's text form stands for: what every system
/// call on a request-derived path is given.
pub fn os_path(p: &Path) -> Cow<'_, Path> {
    let raw = p.as_os_str().as_bytes();
    if !raw.contains(&LEAD) {
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
    }

    #[test]
    fn other_bytes_round_trip() {
        round_trip(b"/\xc0\xae\xc0\xae/");
        round_trip(b"/\xff\xfe/\x80");
        round_trip(b"/\xe2\x82");
        round_trip(b"\xf4");
        round_trip(b"/\xf4\x8f\xbe\x80/\xf4\x8f\xbf\xbf");
        round_trip("/\u{10FF7F}/x".as_bytes());
    }

    #[test]
    fn distinct_bytes_stay_distinct() {
        let a = from_bytes(b"/\xf4\x8f\xbe\x80".to_vec());
        let b = from_bytes(b"/\x80".to_vec());
        assert_ne!(a, b);
        assert_ne!(from_bytes(b"/\xc0\xae".to_vec()), "/\u{FFFD}\u{FFFD}");
        assert_ne!(
            from_bytes(b"/\xc0\xae".to_vec()),
            from_bytes(b"/\xc0\xaf".to_vec())
        );
    }
}
