//! What Apache asks of the operating system through its portable runtime:
//! the local broken-down time (`apr_time_exp_lt`), the names of user
//! and group ids (`apr_uid_name_get`, `apr_gid_name_get`) and random
//! bytes (`ap_random_insecure_bytes`). Each unsafe
//! call is made here once; mod_rewrite's variables, the expression
//! parser's, the log formats and mod_autoindex all read these.

use std::ffi::CStr;

/// The broken-down local time of `secs` seconds since the epoch.
pub fn local_tm(secs: i64) -> libc::tm {
    // SAFETY: tm is plain data; localtime_r only writes into it.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let t = secs as libc::time_t;
    // SAFETY: both pointers are valid for the duration of the call.
    unsafe { libc::localtime_r(&t, &mut tm) };
    tm
}

/// Fill `buf` with random bytes from the kernel (`getrandom`), for
/// values that must differ between processes, not for secrets.
pub fn random_bytes(buf: &mut [u8]) {
    let mut filled = 0;
    while filled < buf.len() {
        let rest = &mut buf[filled..];
        // SAFETY: the pointer and length describe `rest`, which the call
        // only writes into.
        let n = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        if n > 0 {
            filled += n as usize;
        } else if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            // No entropy source at all: the clock still tells processes apart.
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
                ^ u128::from(std::process::id());
            for (b, n) in rest.iter_mut().zip(nanos.to_le_bytes().iter().cycle()) {
                *b = *n;
            }
            return;
        }
    }
}

/// Room for the strings of one passwd or group entry.
const ENTRY_BUFFER: usize = 4096;

/// The name of a user id (`getpwuid_r`).
pub fn user_name(uid: u32) -> Option<String> {
    let mut buf = vec![0 as libc::c_char; ENTRY_BUFFER];
    // SAFETY: passwd is plain data that getpwuid_r fills in.
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call; buf outlives the use of pw.
    let rc = unsafe { libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr(), buf.len(), &mut result) };
    if rc != 0 || result.is_null() {
        return None;
    }
    // SAFETY: on success pw_name points into buf, NUL-terminated.
    let name = unsafe { CStr::from_ptr(pw.pw_name) };
    Some(name.to_string_lossy().into_owned())
}

/// The name of a group id (`getgrgid_r`).
pub fn group_name(gid: u32) -> Option<String> {
    let mut buf = vec![0 as libc::c_char; ENTRY_BUFFER];
    // SAFETY: group is plain data that getgrgid_r fills in.
    let mut gr: libc::group = unsafe { std::mem::zeroed() };
    let mut result: *mut libc::group = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call; buf outlives the use of gr.
    let rc = unsafe { libc::getgrgid_r(gid, &mut gr, buf.as_mut_ptr(), buf.len(), &mut result) };
    if rc != 0 || result.is_null() {
        return None;
    }
    // SAFETY: on success gr_name points into buf, NUL-terminated.
    let name = unsafe { CStr::from_ptr(gr.gr_name) };
    Some(name.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    #[test]
    fn root_is_named_and_the_epoch_is_1970() {
        assert_eq!(super::user_name(0).as_deref(), Some("root"));
        assert_eq!(super::group_name(0).as_deref(), Some("root"));
        // Midday UTC is 1 January 1970 in every time zone.
        let tm = super::local_tm(12 * 3600);
        assert_eq!((tm.tm_year, tm.tm_mon, tm.tm_mday), (70, 0, 1));
    }
}
