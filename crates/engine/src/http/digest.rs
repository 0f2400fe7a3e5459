//! The two content digests Apache's static file path can put in headers:
//! SHA-1 for `FileETag Digest` (`ETag: "<base64 SHA-1>"`) and MD5 for
//! `ContentDigest On` (`Content-MD5: <base64 MD5>`), both over the whole file
//! and both base64-encoded with padding.
//!
//! Neither is used for security, only to reproduce those header values, so a
//! small self-contained implementation is preferred to a new dependency.

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
    Ok(base64(&h.finish()))
}

/// MD5 of the first `len` bytes of `file`, base64-encoded.
pub fn md5_base64_of_file(file: &File, len: u64) -> io::Result<String> {
    let mut h = Md5::new();
    for_each_chunk(file, len, |c| h.update(c))?;
    Ok(base64(&h.finish()))
}

/// SHA-1 of a byte string (the `sha1()` expression function).
pub fn sha1(data: &[u8]) -> [u8; 20] {
    let mut h = Sha1::new();
    h.update(data);
    h.finish()
}

/// MD5 of a byte string (the `md5()` expression function).
pub fn md5(data: &[u8]) -> [u8; 16] {
    let mut h = Md5::new();
    h.update(data);
    h.finish()
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

/// Shared 64-byte block buffering of the Merkle–Damgård hashes below.
struct Blocks {
    buf: [u8; 64],
    fill: usize,
    total: u64,
}

impl Blocks {
    fn new() -> Self {
        Blocks {
            buf: [0; 64],
            fill: 0,
            total: 0,
        }
    }

    fn update(&mut self, mut data: &[u8], mut compress: impl FnMut(&[u8; 64])) {
        self.total = self.total.wrapping_add(data.len() as u64);
        if self.fill > 0 {
            let take = (64 - self.fill).min(data.len());
            self.buf[self.fill..self.fill + take].copy_from_slice(&data[..take]);
            self.fill += take;
            data = &data[take..];
            if self.fill < 64 {
                return;
            }
            let block = self.buf;
            compress(&block);
            self.fill = 0;
        }
        let mut chunks = data.chunks_exact(64);
        for block in &mut chunks {
            compress(block.try_into().expect("64-byte chunk"));
        }
        let rest = chunks.remainder();
        self.buf[..rest.len()].copy_from_slice(rest);
        self.fill = rest.len();
    }

    /// Append the padding and the bit length (big- or little-endian).
    fn finish(&mut self, big_endian: bool, mut compress: impl FnMut(&[u8; 64])) {
        let bits = self.total.wrapping_mul(8);
        let mut pad = [0u8; 72];
        pad[0] = 0x80;
        let pad_len = if self.fill < 56 {
            56 - self.fill
        } else {
            120 - self.fill
        };
        let len_bytes = if big_endian {
            bits.to_be_bytes()
        } else {
            bits.to_le_bytes()
        };
        pad[pad_len..pad_len + 8].copy_from_slice(&len_bytes);
        let total = self.total;
        self.update(&pad[..pad_len + 8], &mut compress);
        self.total = total;
        debug_assert_eq!(self.fill, 0);
    }
}

struct Sha1 {
    h: [u32; 5],
    blocks: Blocks,
}

impl Sha1 {
    fn new() -> Self {
        Sha1 {
            h: [
                0x6745_2301,
                0xEFCD_AB89,
                0x98BA_DCFE,
                0x1032_5476,
                0xC3D2_E1F0,
            ],
            blocks: Blocks::new(),
        }
    }

    fn compress(h: &mut [u32; 5], block: &[u8; 64]) {
        let mut w = [0u32; 80];
        for (i, word) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes(word.try_into().expect("4 bytes"));
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = *h;
        for (i, &wi) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5A82_7999),
                20..=39 => (b ^ c ^ d, 0x6ED9_EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC),
                _ => (b ^ c ^ d, 0xCA62_C1D6),
            };
            let t = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(wi);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = t;
        }
        for (x, v) in h.iter_mut().zip([a, b, c, d, e]) {
            *x = x.wrapping_add(v);
        }
    }

    fn update(&mut self, data: &[u8]) {
        let h = &mut self.h;
        self.blocks.update(data, |b| Self::compress(h, b));
    }

    fn finish(mut self) -> [u8; 20] {
        let h = &mut self.h;
        self.blocks.finish(true, |b| Self::compress(h, b));
        let mut out = [0u8; 20];
        for (o, v) in out.chunks_exact_mut(4).zip(self.h) {
            o.copy_from_slice(&v.to_be_bytes());
        }
        out
    }
}

struct Md5 {
    h: [u32; 4],
    blocks: Blocks,
}

impl Md5 {
    fn new() -> Self {
        Md5 {
            h: [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476],
            blocks: Blocks::new(),
        }
    }

    fn compress(h: &mut [u32; 4], block: &[u8; 64]) {
        const S: [u32; 64] = [
            7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20,
            5, 9, 14, 20, 5, 9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
            6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
        ];
        // K[i] = floor(2^32 * |sin(i + 1)|)
        const K: [u32; 64] = [
            0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613,
            0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193,
            0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d,
            0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
            0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122,
            0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
            0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244,
            0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
            0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
            0xeb86d391,
        ];
        let mut m = [0u32; 16];
        for (i, word) in block.chunks_exact(4).enumerate() {
            m[i] = u32::from_le_bytes(word.try_into().expect("4 bytes"));
        }
        let [mut a, mut b, mut c, mut d] = *h;
        for i in 0..64 {
            let (f, g) = match i {
                0..=15 => ((b & c) | (!b & d), i),
                16..=31 => ((d & b) | (!d & c), (5 * i + 1) % 16),
                32..=47 => (b ^ c ^ d, (3 * i + 5) % 16),
                _ => (c ^ (b | !d), (7 * i) % 16),
            };
            let f = f.wrapping_add(a).wrapping_add(K[i]).wrapping_add(m[g]);
            a = d;
            d = c;
            c = b;
            b = b.wrapping_add(f.rotate_left(S[i]));
        }
        for (x, v) in h.iter_mut().zip([a, b, c, d]) {
            *x = x.wrapping_add(v);
        }
    }

    fn update(&mut self, data: &[u8]) {
        let h = &mut self.h;
        self.blocks.update(data, |b| Self::compress(h, b));
    }

    fn finish(mut self) -> [u8; 16] {
        let h = &mut self.h;
        self.blocks.finish(false, |b| Self::compress(h, b));
        let mut out = [0u8; 16];
        for (o, v) in out.chunks_exact_mut(4).zip(self.h) {
            o.copy_from_slice(&v.to_le_bytes());
        }
        out
    }
}

/// `apr_base64_decode`: decode up to the first byte outside the alphabet
/// (padding included), as Basic credentials and `unbase64()` are read.
pub fn base64_decode_lenient(text: &[u8]) -> Vec<u8> {
    fn val(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
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

    fn sha1(data: &[u8]) -> [u8; 20] {
        let mut h = Sha1::new();
        h.update(data);
        h.finish()
    }

    fn md5(data: &[u8]) -> [u8; 16] {
        let mut h = Md5::new();
        h.update(data);
        h.finish()
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
        // Split feeding crosses block boundaries the same way.
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut h = Sha1::new();
        for part in data.chunks(37) {
            h.update(part);
        }
        assert_eq!(h.finish(), sha1(&data));
        let mut h = Md5::new();
        for part in data.chunks(63) {
            h.update(part);
        }
        assert_eq!(h.finish(), md5(&data));
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
}
