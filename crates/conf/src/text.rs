//! Turning configuration bytes into Rust strings without losing any.
//!
//! Apache treats a configuration file as bytes: a header value, a path or an
//! `ErrorDocument` text written in ISO-8859-1 goes to the client or the file
//! system byte for byte. Rust strings must be UTF-8, so a choice is needed.
//!
//! The choice made here: bytes that form valid UTF-8 are decoded as UTF-8
//! (so a UTF-8 file, the common case, reads exactly as `parse_str` would read
//! it, and a UTF-8 BOM becomes U+FEFF), and every byte that is *not* part of
//! valid UTF-8 becomes one character of Unicode's Supplementary Private Use
//! Area-B, U+10FE80 to U+10FEFF for bytes 0x80 to 0xFF. [`string_to_bytes`]
//! undoes this exactly, so a caller that needs Apache's bytes (to send a
//! header, open a file, print `\xNN` in a log line) gets them back.
//!
//! The syntax itself only looks at ASCII bytes (whitespace, quotes,
//! backslash, `<`, `>`, `/`, `#`), and splitting happens only at those, so
//! decoding each finished token is the same as decoding the file: a token
//! never ends in the middle of a UTF-8 sequence.
//!
//! A file that really contains a character of that range keeps it as its
//! four raw bytes, so `string_to_bytes(&bytes_to_string(b)) == b` for every
//! `b`.

use std::borrow::Cow;

/// The first code point of the range that stands for raw bytes: byte `b`
/// (always 0x80 or more) is `RAW_BASE + b`.
const RAW_BASE: u32 = 0x10FE00;

/// Decodes bytes as described in the module documentation.
pub fn bytes_to_string(bytes: &[u8]) -> String {
    bytes_to_str(bytes).into_owned()
}

/// [`bytes_to_string`], borrowing bytes that are UTF-8 already.
pub fn bytes_to_str(bytes: &[u8]) -> Cow<'_, str> {
    // Every character of the raw-byte range is encoded with a leading 0xF4.
    if memchr::memchr(0xF4, bytes).is_none() {
        if let Ok(s) = std::str::from_utf8(bytes) {
            return Cow::Borrowed(s);
        }
    }
    Cow::Owned(decode(bytes))
}

/// [`bytes_to_string`] of an owned buffer, kept without a copy when it is
/// UTF-8 already (a decoded request path, the usual case).
pub fn vec_to_string(bytes: Vec<u8>) -> String {
    if memchr::memchr(0xF4, &bytes).is_some() {
        return decode(&bytes);
    }
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => decode(e.as_bytes()),
    }
}

fn decode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 8);
    let mut utf8 = [0u8; 4];
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if raw_byte(c).is_some() {
                // A real U+10FE80..U+10FEFF in the input: keep its bytes as
                // raw bytes, so that decoding stays reversible.
                for &b in c.encode_utf8(&mut utf8).as_bytes() {
                    out.push(raw_char(b));
                }
            } else {
                out.push(c);
            }
        }
        for &b in chunk.invalid() {
            out.push(raw_char(b));
        }
    }
    out
}

/// The bytes Apache would have seen for a string produced by this crate.
pub fn string_to_bytes(s: &str) -> Cow<'_, [u8]> {
    // A byte scan first: every character of the range starts with 0xF4.
    if memchr::memchr(0xF4, s.as_bytes()).is_none() || !s.chars().any(|c| raw_byte(c).is_some()) {
        return Cow::Borrowed(s.as_bytes());
    }
    let mut out = Vec::with_capacity(s.len());
    let mut utf8 = [0u8; 4];
    for c in s.chars() {
        match raw_byte(c) {
            Some(b) => out.push(b),
            None => out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes()),
        }
    }
    Cow::Owned(out)
}

fn raw_char(b: u8) -> char {
    // Every code point in RAW_BASE + 0x80 ..= RAW_BASE + 0xFF is a valid
    // `char`; the fallback is never taken.
    char::from_u32(RAW_BASE + u32::from(b)).unwrap_or(char::REPLACEMENT_CHARACTER)
}

fn raw_byte(c: char) -> Option<u8> {
    let v = u32::from(c).checked_sub(RAW_BASE)?;
    if (0x80..=0xFF).contains(&v) {
        u8::try_from(v).ok()
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_is_kept() {
        assert_eq!(
            bytes_to_string("héllo \u{feff}".as_bytes()),
            "héllo \u{feff}"
        );
        assert_eq!(string_to_bytes("héllo").as_ref(), "héllo".as_bytes());
    }

    #[test]
    fn invalid_bytes_round_trip() {
        let raw = b"Seite f\xfcr \xc3\xa9 \xff\xfe \xc3";
        let s = bytes_to_string(raw);
        assert!(s.starts_with("Seite f"));
        assert!(s.contains('é'));
        assert_eq!(string_to_bytes(&s).as_ref(), &raw[..]);
    }

    #[test]
    fn private_use_characters_in_the_input_round_trip() {
        let raw = "a\u{10FE80}b\u{10FEFF}".as_bytes();
        let s = bytes_to_string(raw);
        assert_eq!(s.chars().count(), 10);
        assert_eq!(string_to_bytes(&s).as_ref(), raw);
    }

    #[test]
    fn owned_and_borrowed_forms_agree() {
        for raw in [
            &b"/a/\xc3\xa9"[..],
            b"/\xc0\xae",
            b"\xf4\x8f\xba\x80",
            b"plain",
        ] {
            assert_eq!(vec_to_string(raw.to_vec()), bytes_to_string(raw));
            assert_eq!(bytes_to_str(raw), bytes_to_string(raw));
        }
        assert!(matches!(bytes_to_str(b"/a/x"), Cow::Borrowed(_)));
    }

    #[test]
    fn every_byte_round_trips() {
        let all: Vec<u8> = (0..=255u8).collect();
        assert_eq!(string_to_bytes(&bytes_to_string(&all)).as_ref(), &all[..]);
    }
}
