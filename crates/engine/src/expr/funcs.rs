//! The functions and file tests of the core that need nothing from the
//! request: text transforms, digests, file reads, the clock.
//!
//! Apache's values are C strings, so a result that would hold a NUL
//! (a decoded `unbase64`, a binary `file`) ends there.

use super::ast::UnaryOp;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Apache's limit for `file()`.
const MAX_FILE_SIZE: u64 = 10 * 1024 * 1024;

fn until_nul(mut v: Vec<u8>) -> Vec<u8> {
    if let Some(n) = v.iter().position(|&b| b == 0) {
        v.truncate(n);
    }
    v
}

fn path(arg: &[u8]) -> &Path {
    Path::new(std::ffi::OsStr::from_bytes(arg))
}

/// The process environment (`osenv`, and the last resort of `env`).
pub fn os_env(name: &str) -> Option<Vec<u8>> {
    if name.is_empty() || name.contains('=') {
        return None;
    }
    std::env::var_os(name).map(|v| v.as_bytes().to_vec())
}

/// `unescape()`: every `%XX` decoded except `%2F`, which stays; a bad or
/// NUL escape makes the result empty.
pub fn unescape(arg: &[u8]) -> Vec<u8> {
    let mode = crate::uri::UnescapeMode {
        reserved: b"/",
        ..Default::default()
    };
    match crate::uri::unescape_with(arg, &mode) {
        Ok(v) => v.into_owned(),
        Err(_) => Vec::new(),
    }
}

/// `unbase64()`: APR's lenient decoder, which stops at the first byte that
/// is not in the alphabet (padding included).
pub fn unbase64(arg: &[u8]) -> Vec<u8> {
    until_nul(crate::http::digest::base64_decode_lenient(arg))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn md5_hex(arg: &[u8]) -> String {
    hex(&crate::http::digest::md5(arg))
}

pub fn sha1_hex(arg: &[u8]) -> String {
    hex(&crate::http::digest::sha1(arg))
}

/// `ldap()`: RFC 4514 and 4515 escaping as APR does it (`\xx`, lower-case
/// hex) for control and non-ASCII bytes and `"+,;<>\*()`.
pub fn ldap_escape(arg: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(arg.len());
    for &c in arg {
        let printable = (0x20..0x7f).contains(&c);
        if !printable || b"\"+,;<>\\*()".contains(&c) {
            out.extend_from_slice(format!("\\{c:02x}").as_bytes());
        } else {
            out.push(c);
        }
    }
    out
}

/// `file()`: the content of a file of at most 10 MiB; the error is
/// Apache's evaluation error.
pub fn read_file(arg: &[u8]) -> Result<Vec<u8>, String> {
    // Read outside the caches the watcher keeps true: an answer that
    // depends on it is not kept (`answer_memo`).
    crate::answer_memo::note_volatile();
    let name = String::from_utf8_lossy(arg);
    let (f, meta) =
        crate::fs::open_nonblocking(path(arg)).map_err(|_| format!("Cannot open file {name}"))?;
    // Apache reads as many bytes as the file's size says, so a FIFO or a
    // device (size 0) gives "" without a read (Apache first waits for a
    // FIFO's writer; here the open does not wait), and a directory fails
    // on reading.
    let len = if meta.is_file() || meta.is_dir() {
        meta.len()
    } else {
        0
    };
    if len == 0 {
        return Ok(Vec::new());
    }
    if len > MAX_FILE_SIZE {
        return Err(format!("File {name} too large"));
    }
    let mut data = Vec::with_capacity(len as usize);
    use std::io::Read;
    f.take(len)
        .read_to_end(&mut data)
        .map_err(|_| format!("Cannot read from file {name}"))?;
    Ok(until_nul(data))
}

/// `filesize()`: the size of a non-empty regular file, else `0`.
pub fn file_size(arg: &[u8]) -> String {
    // Read outside the caches the watcher keeps true: an answer that
    // depends on it is not kept (`answer_memo`).
    crate::answer_memo::note_volatile();
    match std::fs::metadata(path(arg)) {
        Ok(m) if m.is_file() && m.len() > 0 => m.len().to_string(),
        _ => "0".to_string(),
    }
}

/// The file-system unary operators.
pub fn file_test(op: &UnaryOp, arg: &[u8]) -> bool {
    // Read outside the caches the watcher keeps true: an answer that
    // depends on it is not kept (`answer_memo`).
    crate::answer_memo::note_volatile();
    if arg.is_empty() {
        return false;
    }
    let p = path(arg);
    match op {
        UnaryOp::IsSymlink => {
            std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
        }
        // Apache asks for the link itself here (APR_FINFO_LINK).
        UnaryOp::Executable => std::fs::symlink_metadata(p).is_ok_and(|m| m.mode() & 0o111 != 0),
        _ => {
            let Ok(m) = std::fs::metadata(p) else {
                return false;
            };
            let ft = m.file_type();
            match op {
                UnaryOp::IsDir => ft.is_dir(),
                UnaryOp::Exists => true,
                UnaryOp::IsFile => ft.is_file(),
                UnaryOp::NonEmptyFile => ft.is_file() && m.len() > 0,
                _ => false,
            }
        }
    }
}

/// The broken-down local time now.
fn local_now() -> libc::tm {
    crate::os::local_tm(crate::http::date::unix_secs(std::time::SystemTime::now()))
}

/// `TIME`, `TIME_YEAR` … `TIME_WDAY`, in local time, as Apache prints them.
pub fn time_var(v: super::vars::Var) -> String {
    use super::vars::Var;
    let tm = local_now();
    let year = tm.tm_year + 1900;
    match v {
        Var::TimeYear => format!("{year:04}"),
        Var::TimeMon => format!("{:02}", tm.tm_mon + 1),
        Var::TimeDay => format!("{:02}", tm.tm_mday),
        Var::TimeHour => format!("{:02}", tm.tm_hour),
        Var::TimeMin => format!("{:02}", tm.tm_min),
        Var::TimeSec => format!("{:02}", tm.tm_sec),
        Var::TimeWday => format!("{}", tm.tm_wday),
        _ => format!(
            "{year:04}{:02}{:02}{:02}{:02}{:02}",
            tm.tm_mon + 1,
            tm.tm_mday,
            tm.tm_hour,
            tm.tm_min,
            tm.tm_sec
        ),
    }
}

/// `LAST_MODIFIED`: a time in microseconds, local time, `YYYYMMDDhhmmss`.
pub fn timestamp(us: i64) -> String {
    let secs = us.div_euclid(1_000_000) as libc::time_t;
    // SAFETY: tm is plain data; localtime_r only writes into it.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the duration of the call.
    unsafe { libc::localtime_r(&secs, &mut tm) };
    format!(
        "{:04}{:02}{:02}{:02}{:02}{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trip_and_leniency() {
        assert_eq!(unbase64(b"aGVsbG8="), b"hello");
        assert_eq!(unbase64(b"aGVsbG8"), b"hello");
        assert_eq!(unbase64(b"aGV*sbG8"), b"he");
        assert_eq!(unbase64(b"AGE="), b"");
    }

    #[test]
    fn digests_are_lower_hex() {
        assert_eq!(md5_hex(b""), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(sha1_hex(b"abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
    }

    #[test]
    fn unescape_keeps_encoded_slash() {
        assert_eq!(unescape(b"a%20b%2Fc"), b"a b%2Fc");
        assert_eq!(unescape(b"bad%zz"), b"");
        assert_eq!(unescape(b"nul%00"), b"");
    }

    #[test]
    fn ldap() {
        assert_eq!(ldap_escape(b"a(b)*,c"), b"a\\28b\\29\\2a\\2cc");
    }

    #[test]
    fn file_tests() {
        assert!(file_test(&UnaryOp::IsDir, b"/"));
        assert!(!file_test(&UnaryOp::IsFile, b"/"));
        assert!(file_test(&UnaryOp::Exists, b"/"));
        assert!(!file_test(&UnaryOp::Exists, b""));
        assert_eq!(file_size(b"/nonexistent"), "0");
        assert!(read_file(b"/nonexistent").is_err());
    }
}
