//! The `ETag` of a static file, as `ap_make_etag` builds it under `FileETag`.
//!
//! Caches and browsers revalidate with the exact tag they were given, so the
//! tag must be byte-identical to Apache's for a site moved between the two to
//! keep its caches warm, and so that differential tests can compare it.
//!
//! Format: `"` + the configured components in the fixed order INode, Size,
//! MTime, each in lower-case hex without leading zeros (the mtime in
//! microseconds), joined by `-` + `"`. The 2.4 default (no `FileETag`
//! anywhere; Debian sets none) is `MTime Size`: `"<size>-<mtime µs>"`, e.g.
//! `"c-660c387a61207"`. The tag is weak (`W/"…"`) when the request started
//! less than one second after the file's mtime (or before it), because the
//! file could still change within that second. `FileETag None` sends no
//! `ETag`. `FileETag Digest` sends the base64 SHA-1 of the whole file instead
//! and takes precedence over everything else, `None` included; it is never
//! made weak by the one-second rule.
//!
//! ## `mod_deflate` (note)
//!
//! When `mod_deflate` compresses a response it rewrites the tag to
//! `"<tag>-gzip"` (`W/"…-gzip"` if weak; `DeflateAlterETag AddSuffix`, the
//! default). Conditional checks run in the handler against the *unsuffixed*
//! tag, so a client revalidating with the `-gzip` tag always gets 200, never
//! 304, and a 304 for the plain tag carries the plain tag and no `Vary`
//! (observed with Apache 2.4.71). The suffix belongs to the deflate filter,
//! not here.

use super::digest;
use std::fs::{File, Metadata};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::time::SystemTime;

/// `FileETag None`.
pub const ETAG_NONE: u8 = 1;
/// `FileETag MTime` (also `LMTime`, `LastModified`).
pub const ETAG_MTIME: u8 = 2;
/// `FileETag INode`.
pub const ETAG_INODE: u8 = 4;
/// `FileETag Size`.
pub const ETAG_SIZE: u8 = 8;
/// `FileETag Digest`.
pub const ETAG_DIGEST: u8 = 16;
/// `FileETag All` = INode MTime Size.
pub const ETAG_ALL: u8 = ETAG_MTIME | ETAG_INODE | ETAG_SIZE;
/// What an empty (unset) component set means: MTime Size.
pub const ETAG_DEFAULT: u8 = ETAG_MTIME | ETAG_SIZE;

/// The file facts an `ETag` is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileStamp {
    pub size: u64,
    /// Modification time in microseconds since the epoch (`apr_time_t`).
    pub mtime_us: i64,
    pub inode: u64,
}

impl FileStamp {
    pub fn from_metadata(m: &Metadata) -> Self {
        FileStamp {
            size: m.len(),
            mtime_us: m.mtime() * 1_000_000 + m.mtime_nsec() / 1000,
            inode: m.ino(),
        }
    }

    pub fn mtime(&self) -> SystemTime {
        let d = std::time::Duration::from_micros(self.mtime_us.unsigned_abs());
        if self.mtime_us >= 0 {
            SystemTime::UNIX_EPOCH + d
        } else {
            SystemTime::UNIX_EPOCH - d
        }
    }
}

/// What the tag for a file will be, before any file content is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EtagPlan {
    /// No `ETag` header (`FileETag None`).
    Omit,
    /// The complete header value.
    Value(String),
    /// `FileETag Digest`: the value is the base64 SHA-1 of the file, see
    /// [`digest_etag`]; `weak` only when a caller forces weakness.
    Digest { weak: bool },
}

/// Decide the tag for `file` under the effective `FileETag` components
/// `bits` (the merged configuration's `(bits & !remove) | add`; 0 = unset).
/// `request_time_us` is when the request started (`r->request_time`);
/// `force_weak` is for callers that must not promise a strong tag.
pub fn plan_etag(bits: u8, file: &FileStamp, request_time_us: i64, force_weak: bool) -> EtagPlan {
    if bits & ETAG_DIGEST != 0 {
        return EtagPlan::Digest { weak: force_weak };
    }
    if bits & ETAG_NONE != 0 {
        return EtagPlan::Omit;
    }
    let bits = if bits == 0 { ETAG_DEFAULT } else { bits };
    let weak = force_weak || request_time_us.wrapping_sub(file.mtime_us) < 1_000_000;
    let mut out = String::with_capacity(48);
    if weak {
        out.push_str("W/");
    }
    out.push('"');
    let mut first = true;
    for (bit, value) in [
        (ETAG_INODE, file.inode),
        (ETAG_SIZE, file.size),
        (ETAG_MTIME, file.mtime_us as u64),
    ] {
        if bits & bit != 0 {
            if !first {
                out.push('-');
            }
            first = false;
            push_hex(&mut out, value);
        }
    }
    out.push('"');
    EtagPlan::Value(out)
}

/// `value` in lower-case hex without leading zeros (`%x`).
fn push_hex(out: &mut String, value: u64) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut buf = [0u8; 16];
    let mut i = buf.len();
    let mut v = value;
    loop {
        i -= 1;
        buf[i] = DIGITS[(v & 0xf) as usize];
        v >>= 4;
        if v == 0 {
            break;
        }
    }
    // SAFETY: every byte written above is one of `DIGITS`, all ASCII.
    // (Validating these few bytes cost more than the rest of the tag.)
    out.push_str(unsafe { std::str::from_utf8_unchecked(&buf[i..]) });
}

/// The `FileETag Digest` tag: `"<base64 SHA-1 of the first len bytes>"`.
pub fn digest_etag(file: &File, len: u64, weak: bool) -> io::Result<String> {
    let sum = digest::sha1_base64_of_file(file, len)?;
    Ok(if weak {
        format!("W/\"{sum}\"")
    } else {
        format!("\"{sum}\"")
    })
}

/// [`plan_etag`] carried out: `None` when no `ETag` is to be sent. Reads the
/// whole file only under `FileETag Digest`.
pub fn file_etag(
    bits: u8,
    stamp: &FileStamp,
    request_time_us: i64,
    file: &File,
    force_weak: bool,
) -> io::Result<Option<String>> {
    match plan_etag(bits, stamp, request_time_us, force_weak) {
        EtagPlan::Omit => Ok(None),
        EtagPlan::Value(v) => Ok(Some(v)),
        EtagPlan::Digest { weak } => digest_etag(file, stamp.size, weak).map(Some),
    }
}

/// The tag of a variant of a negotiated resource: its own tag with the
/// variant list's (`vlv`, itself a tag such as `"661343b6e62f7"`) after a
/// `;`. Apache's `etag_end` copies one byte too few of the list's tag, so
/// the closing quote is lost (`"a-661343b6d69a6;661343b6e62f7`), and a
/// weak list tag makes the whole tag weak; both are reproduced, since
/// clients revalidate with the tag as sent.
pub fn with_vlist(etag: &str, vlv: &str) -> String {
    let (vlv_weak, vlv) = match vlv.strip_prefix("W/") {
        Some(rest) => (true, rest),
        None => (false, vlv),
    };
    // Past the list tag's opening quote, all but its last byte.
    let body = vlv.get(1..vlv.len().saturating_sub(1)).unwrap_or("");
    let own = etag.strip_suffix('"').unwrap_or(etag);
    let mut out = String::with_capacity(own.len() + body.len() + 3);
    if vlv_weak && !own.starts_with("W/") {
        out.push_str("W/");
    }
    out.push_str(own);
    out.push(';');
    out.push_str(body);
    out
}

/// The tag of a variant list: the directory's modification time
/// (`ap_make_etag` on a request whose file does not exist), weak when it
/// changed less than a second before the request.
pub fn vlist_tag(dir_mtime_us: i64, request_time_us: i64) -> String {
    let mut out = String::with_capacity(20);
    if request_time_us.wrapping_sub(dir_mtime_us) < 1_000_000 {
        out.push_str("W/");
    }
    out.push('"');
    push_hex(&mut out, dir_mtime_us as u64);
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // Observed with Apache 2.4.71 for a 12-byte file, inode 0x9861ed,
    // mtime 0x660c393ee0868 µs, requested more than a second later:
    //   (no FileETag)          ETag: "c-660c393ee0868"
    //   FileETag All           ETag: "9861ed-c-660c393ee0868"
    //   FileETag INode -MTime  ETag: "9861ed"   (INode only)
    //   FileETag None          no ETag
    //   FileETag -INode +Size  ETag: "4" for a 4-byte file (spec M-32)
    const F: FileStamp = FileStamp {
        size: 12,
        mtime_us: 0x660c393ee0868,
        inode: 0x9861ed,
    };
    const LATER: i64 = 0x660c393ee0868 + 5_000_000;

    fn v(bits: u8, now: i64) -> String {
        match plan_etag(bits, &F, now, false) {
            EtagPlan::Value(s) => s,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn variant_list_tag_as_apache_writes_it() {
        // Observed with Apache 2.4.71 for index.html.fr behind MultiViews.
        assert_eq!(
            with_vlist(
                "\"a-661343b6d69a6\"",
                &vlist_tag(0x661343b6e62f7, LATER_DIR)
            ),
            "\"a-661343b6d69a6;661343b6e62f7"
        );
        assert_eq!(with_vlist("\"a-1\"", "W/\"2\""), "W/\"a-1;2");
    }
    const LATER_DIR: i64 = 0x661343b6e62f7 + 5_000_000;

    #[test]
    fn components() {
        assert_eq!(v(0, LATER), "\"c-660c393ee0868\"");
        assert_eq!(v(ETAG_MTIME | ETAG_SIZE, LATER), "\"c-660c393ee0868\"");
        assert_eq!(v(ETAG_ALL, LATER), "\"9861ed-c-660c393ee0868\"");
        assert_eq!(v(ETAG_INODE, LATER), "\"9861ed\"");
        assert_eq!(v(ETAG_SIZE, LATER), "\"c\"");
        assert_eq!(v(ETAG_MTIME, LATER), "\"660c393ee0868\"");
        assert_eq!(
            v(ETAG_INODE | ETAG_MTIME, LATER),
            "\"9861ed-660c393ee0868\""
        );
        assert_eq!(plan_etag(ETAG_NONE, &F, LATER, false), EtagPlan::Omit);
        assert_eq!(
            plan_etag(ETAG_DIGEST, &F, LATER, false),
            EtagPlan::Digest { weak: false }
        );
        // Digest wins over None (`FileETag None` then `+Digest`).
        assert_eq!(
            plan_etag(ETAG_NONE | ETAG_DIGEST, &F, LATER, false),
            EtagPlan::Digest { weak: false }
        );
        let zero = FileStamp {
            size: 0,
            mtime_us: 0x660c391c5642f,
            inode: 1,
        };
        assert_eq!(
            plan_etag(0, &zero, 0x660c391c5642f + 2_000_000, false),
            EtagPlan::Value("\"0-660c391c5642f\"".into())
        );
    }

    #[test]
    fn weak_within_a_second() {
        // Observed with Apache 2.4.71: a file written just before the request
        // got ETag: W/"5-660c38ebffeb9", the same file a second later "5-660c38ebffeb9";
        // a file with an mtime in the future got W/"24-6ba1694472000".
        assert_eq!(v(0, F.mtime_us), "W/\"c-660c393ee0868\"");
        assert_eq!(v(0, F.mtime_us + 999_999), "W/\"c-660c393ee0868\"");
        assert_eq!(v(0, F.mtime_us + 1_000_000), "\"c-660c393ee0868\"");
        assert_eq!(v(0, F.mtime_us - 10_000_000), "W/\"c-660c393ee0868\"");
        assert_eq!(
            plan_etag(0, &F, LATER, true),
            EtagPlan::Value("W/\"c-660c393ee0868\"".into())
        );
    }

    #[test]
    fn digest_value() {
        use std::io::Write;
        // Observed with Apache 2.4.71: `FileETag Digest` on "hello world\n"
        // gave ETag: "IlljY7PeQLBvmB+4XYIxLowO1RE=" (also for a fresh file).
        let mut f = crate::http::digest::tests::tempfile();
        f.write_all(b"hello world\n").unwrap();
        let stamp = FileStamp {
            size: 12,
            mtime_us: LATER,
            inode: 3,
        };
        assert_eq!(
            file_etag(ETAG_DIGEST, &stamp, LATER, &f, false)
                .unwrap()
                .unwrap(),
            "\"IlljY7PeQLBvmB+4XYIxLowO1RE=\""
        );
        assert_eq!(
            file_etag(ETAG_NONE, &stamp, LATER, &f, false).unwrap(),
            None
        );
    }

    #[test]
    fn stamp_from_metadata() {
        let f = crate::http::digest::tests::tempfile();
        let m = f.metadata().unwrap();
        let s = FileStamp::from_metadata(&m);
        assert_eq!(s.size, 0);
        assert_eq!(s.inode, m.ino());
        assert_eq!(crate::http::date::unix_micros(s.mtime()), s.mtime_us);
    }
}
