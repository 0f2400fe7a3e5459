//! `apr_password_validate`: does a password match a stored hash?
//!
//! APR recognises three formats itself — bcrypt (`$2y$`, `$2a$`), its own
//! MD5 (`$apr1$`) and `{SHA}` — and hands anything else to the system's
//! `crypt()`: DES, `$1$`, `$5$`, `$6$`, `$2b$` and whatever libxcrypt
//! knows. Plain text is therefore never accepted on Unix (`crypt("pw",
//! "pw")` is not "pw"). We keep exactly that split: the first three here
//! (bcrypt through the `bcrypt` crate, APR1 on top of `md-5`, SHA-1 through
//! `sha1`), the rest through libcrypt's re-entrant `crypt_rn`, so a hash
//! the server's `crypt()` takes is taken here too. Final comparisons are
//! constant-time.

use md5::{Digest, Md5};
use sha1::Sha1;

/// Whether `password` matches `hash` as APR decides it.
pub fn validate(password: &[u8], hash: &str) -> bool {
    let b = hash.as_bytes();
    if b.len() > 3 && b[0] == b'$' && b[1] == b'2' && (b[2] == b'a' || b[2] == b'y') && b[3] == b'$'
    {
        return bcrypt::verify(password, hash).unwrap_or(false);
    }
    if let Some(rest) = hash.strip_prefix("$apr1$") {
        let computed = apr1(password, rest.as_bytes());
        return ct_eq(computed.as_bytes(), b);
    }
    if hash.starts_with("{SHA}") {
        let digest = Sha1::digest(password);
        let computed = format!("{{SHA}}{}", crate::http::digest::base64(&digest));
        return ct_eq(computed.as_bytes(), b);
    }
    match system_crypt(password, hash) {
        Some(computed) => ct_eq(&computed, b),
        None => false,
    }
}

/// Equal bytes, in time that depends only on the lengths.
pub fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

const ITOA64: &[u8; 64] = b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

fn to64(out: &mut String, mut v: u32, n: usize) {
    for _ in 0..n {
        out.push(ITOA64[(v & 0x3f) as usize] as char);
        v >>= 6;
    }
}

/// APR's MD5 crypt (`apr_md5_encode` with the `$apr1$` magic): the
/// FreeBSD MD5-crypt algorithm with a different magic string. `setting` is
/// what follows `$apr1$`; the salt is up to 8 bytes, ending at `$`.
pub fn apr1(password: &[u8], setting: &[u8]) -> String {
    const MAGIC: &[u8] = b"$apr1$";
    let end = setting
        .iter()
        .take(8)
        .position(|&c| c == b'$')
        .unwrap_or(setting.len().min(8));
    let salt = &setting[..end];

    let mut ctx = Md5::new();
    ctx.update(password);
    ctx.update(MAGIC);
    ctx.update(salt);
    let mut alt = Md5::new();
    alt.update(password);
    alt.update(salt);
    alt.update(password);
    let fin = alt.finalize();
    let mut pl = password.len();
    while pl > 0 {
        let n = pl.min(16);
        ctx.update(&fin[..n]);
        pl -= n;
    }
    let mut i = password.len();
    while i != 0 {
        if i & 1 != 0 {
            ctx.update([0u8]);
        } else {
            ctx.update(&password[..1]);
        }
        i >>= 1;
    }
    let mut fin = ctx.finalize();
    for i in 0..1000 {
        let mut c = Md5::new();
        if i & 1 != 0 {
            c.update(password);
        } else {
            c.update(fin);
        }
        if i % 3 != 0 {
            c.update(salt);
        }
        if i % 7 != 0 {
            c.update(password);
        }
        if i & 1 != 0 {
            c.update(fin);
        } else {
            c.update(password);
        }
        fin = c.finalize();
    }
    let mut out = String::with_capacity(37);
    out.push_str("$apr1$");
    out.push_str(&String::from_utf8_lossy(salt));
    out.push('$');
    let f = |i: usize| u32::from(fin[i]);
    to64(&mut out, (f(0) << 16) | (f(6) << 8) | f(12), 4);
    to64(&mut out, (f(1) << 16) | (f(7) << 8) | f(13), 4);
    to64(&mut out, (f(2) << 16) | (f(8) << 8) | f(14), 4);
    to64(&mut out, (f(3) << 16) | (f(9) << 8) | f(15), 4);
    to64(&mut out, (f(4) << 16) | (f(10) << 8) | f(5), 4);
    to64(&mut out, f(11), 2);
    out
}

#[link(name = "crypt")]
extern "C" {
    fn crypt_rn(
        phrase: *const libc::c_char,
        setting: *const libc::c_char,
        data: *mut libc::c_void,
        size: libc::c_int,
    ) -> *mut libc::c_char;
}

/// libxcrypt's `struct crypt_data` is 32 KiB; `crypt_rn` takes its size.
const CRYPT_DATA_SIZE: usize = 32768;

/// The system `crypt()` of `password` with `setting` (re-entrant form).
fn system_crypt(password: &[u8], setting: &str) -> Option<Vec<u8>> {
    let phrase = std::ffi::CString::new(password).ok()?;
    let setting = std::ffi::CString::new(setting).ok()?;
    let mut data = vec![0u8; CRYPT_DATA_SIZE];
    // SAFETY: both strings are NUL-terminated; `data` is a zeroed buffer of
    // the size passed, which crypt_rn uses as its private state and output.
    let out = unsafe {
        crypt_rn(
            phrase.as_ptr(),
            setting.as_ptr(),
            data.as_mut_ptr().cast(),
            CRYPT_DATA_SIZE as libc::c_int,
        )
    };
    if out.is_null() {
        return None;
    }
    // SAFETY: on success crypt_rn returns a NUL-terminated string inside `data`.
    let s = unsafe { std::ffi::CStr::from_ptr(out) }.to_bytes().to_vec();
    // Failure tokens start with '*' and never match a stored hash anyway.
    (!s.starts_with(b"*")).then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Hashes made with htpasswd -m/-s/-d/-B and openssl passwd -1/-5/-6 for "pw".
    #[test]
    fn every_format() {
        for h in [
            "$apr1$C5vU6pMr$MdpSRMUcsQTmESi27ALHY1",
            "{SHA}GpHWL3ymc5liWkNopqtdSjuqYHM=",
            "O/vvS2zLlstDM",
            "$2y$04$eLbT/.qXKT4A868UqMDW2.GBikszGrag8ByK.bJdwweDw/rLQJ2u2",
            "$1$abcdefgh$IQtUouv7y7Q9dRWkQEPCc.",
            "$5$abcdefgh$ijtOJ//yvc/9bq1g0llFn9dB688BwBDRD90DlKKSKE1",
            "$6$abcdefgh$KQeXafAQAaOoKTevphVU215RvJdgzyfASRasIOuh12hO8u0r1bGW92ZnTmC9IjsiQ8VPiTXBiZF49dFL1U4wX/",
        ] {
            assert!(validate(b"pw", h), "{h}");
            assert!(!validate(b"px", h), "{h}");
        }
        assert!(!validate(b"pw", "pw"));
        assert!(!validate(b"", ""));
    }
}
