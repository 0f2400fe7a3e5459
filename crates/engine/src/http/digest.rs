//! The two content digests Apache's static file path can put in headers:
//! SHA-1 for `FileETag Digest` (`ETag: "<base64 SHA-1>"`) and MD5 for
//! `ContentDigest On` (`Content-MD5: <base64 MD5>`), both over the whole file
//! and both base64-encoded with padding.
//!
//! The hashes are the `sha1` and `md-5` crates'; base64 is APR's, both
//! ways (the lenient decoder is `apr_base64_decode`'s reading).

use md5::{Digest, Md5};
use sha1::Sha1;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// Read `len` bytes of `file` from offset 0 in chunks and feed them to `f`.
fn for_each_chunk(file: &File, len: u64, mut f: impl FnMut(&[u8])) -> io::Result<()> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut off = 0u64;
    while off < len {
        let want = ((len - off) as usize).min(buf.len());
        let n = file.read_at(&mut buf[..want], off)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "file shrank while being digested",
            ));
        }
        f(&buf[..n]);
        off += n as u64;
    }
    Ok(())
}

/// SHA-1 of the first `len` bytes of `file`, base64-encoded.
pub fn sha1_base64_of_file(file: &File, len: u64) -> io::Result<String> {
    let mut h = Sha1::new();
    for_each_chunk(file, len, |c| h.update(c))?;
    Ok(base64(&h.finalize()))
}

/// MD5 of the first `len` bytes of `file`, base64-encoded.
pub fn md5_base64_of_file(file: &File, len: u64) -> io::Result<String> {
    let mut h = Md5::new();
    for_each_chunk(file, len, |c| h.update(c))?;
    Ok(base64(&h.finalize()))
}

/// SHA-1 of a byte string (the `sha1()` expression function).
pub fn sha1(data: &[u8]) -> [u8; 20] {
    Sha1::digest(data).into()
}

/// MD5 of a byte string (the `md5()` expression function).
pub fn md5(data: &[u8]) -> [u8; 16] {
    Md5::digest(data).into()
}

/// Standard base64 with `=` padding.
pub fn base64(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> shift & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// RFC 4648's URL-safe base64, padding optional.
pub fn base64url_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0u32);
    for b in text.trim_end_matches('=').bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

/// `apr_base64_decode`: decode up to the first byte outside the alphabet
/// (padding included), as Basic credentials and `unbase64()` are read.
pub fn base64_decode_lenient(text: &[u8]) -> Vec<u8> {
    decode_prefix(text, b'+', b'/')
}

/// `h2_util_base64url_decode`: the URL-safe base64 characters `text`
/// starts with, decoded (mod_http2's reading of `HTTP2-Settings`).
pub fn base64url_decode_prefix(text: &[u8]) -> Vec<u8> {
    decode_prefix(text, b'-', b'_')
}

/// The base64 characters (`c62` and `c63` the last two of the alphabet)
/// `text` starts with, decoded; a last group of one character gives
/// nothing.
fn decode_prefix(text: &[u8], c62: u8, c63: u8) -> Vec<u8> {
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            c if c == c62 => 62,
            c if c == c63 => 63,
            _ => return None,
        } as u32)
    };
    let n = text.iter().take_while(|&&c| val(c).is_some()).count();
    let valid = &text[..n];
    let mut out = Vec::with_capacity(n / 4 * 3 + 3);
    for chunk in valid.chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= val(c).unwrap_or(0) << (18 - 6 * i);
        }
        let bytes = [(acc >> 16) as u8, (acc >> 8) as u8, acc as u8];
        let keep = match chunk.len() {
            4 => 3,
            3 => 2,
            2 => 1,
            _ => 0,
        };
        out.extend_from_slice(&bytes[..keep]);
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn known_vectors() {
        assert_eq!(hex(&sha1(b"")), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(
            hex(&sha1(b"abc")),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        assert_eq!(
            hex(&sha1(
                b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
            )),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        );
        assert_eq!(hex(&md5(b"")), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(hex(&md5(b"abc")), "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(
            hex(&md5(
                b"12345678901234567890123456789012345678901234567890123456789012345678901234567890"
            )),
            "57edf4a22be3c955ac49da2e2107b67a"
        );
    }

    #[test]
    fn base64_padding() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foob"), "Zm9vYg==");
    }

    #[test]
    fn header_values_apache_sends() {
        // Observed with Apache 2.4.71 for a file containing "hello world\n":
        // `FileETag Digest` → ETag: "IlljY7PeQLBvmB+4XYIxLowO1RE=";
        // `ContentDigest On` → Content-MD5: b1kCrCNwJL3QwXbLkwY9xA==
        let mut f = tempfile();
        f.write_all(b"hello world\n").unwrap();
        assert_eq!(
            sha1_base64_of_file(&f, 12).unwrap(),
            "IlljY7PeQLBvmB+4XYIxLowO1RE="
        );
        assert_eq!(
            md5_base64_of_file(&f, 12).unwrap(),
            "b1kCrCNwJL3QwXbLkwY9xA=="
        );
        assert!(md5_base64_of_file(&f, 13).is_err());
    }

    pub(crate) fn tempfile() -> File {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let path = std::env::temp_dir().join(format!(
            "htaccel-digest-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .unwrap();
        std::fs::remove_file(&path).unwrap();
        f
    }
    #[test]
    fn base64url_decodes() {
        assert_eq!(super::base64url_decode("aGVsbG8").unwrap(), b"hello");
        assert_eq!(super::base64url_decode("_-8").unwrap(), [0xff, 0xef]);
        assert!(super::base64url_decode("a b").is_none());
    }
}
