//! `ErrorLog syslog[:facility[:tag]]`: error-log lines sent to the system
//! logger through the C library's `openlog`/`syslog`, as Apache's error
//! log sends them (`open_error_log` and `write_logline` in log.c).
//!
//! The facility is the first of Apache's table whose name begins with the
//! given word (so `syslog:loc` is `local0`, as in Apache); none is
//! `local7`, an empty tag is the program's name. `openlog` is the
//! process's: the last server whose error log is syslog sets the facility
//! and tag of every line, as in Apache. A line goes with its level as the
//! priority (`trace1`…`trace8` as `debug`) and, in the default format,
//! without its time (the system logger stamps it).

use std::ffi::CString;

/// Apache's facility table, in its order.
const FACILITIES: &[(&str, libc::c_int)] = &[
    ("auth", libc::LOG_AUTH),
    ("authpriv", libc::LOG_AUTHPRIV),
    ("cron", libc::LOG_CRON),
    ("daemon", libc::LOG_DAEMON),
    ("ftp", libc::LOG_FTP),
    ("kern", libc::LOG_KERN),
    ("lpr", libc::LOG_LPR),
    ("mail", libc::LOG_MAIL),
    ("news", libc::LOG_NEWS),
    ("syslog", libc::LOG_SYSLOG),
    ("user", libc::LOG_USER),
    ("uucp", libc::LOG_UUCP),
    ("local0", libc::LOG_LOCAL0),
    ("local1", libc::LOG_LOCAL1),
    ("local2", libc::LOG_LOCAL2),
    ("local3", libc::LOG_LOCAL3),
    ("local4", libc::LOG_LOCAL4),
    ("local5", libc::LOG_LOCAL5),
    ("local6", libc::LOG_LOCAL6),
    ("local7", libc::LOG_LOCAL7),
];

/// The name the lines carry when the configuration gives no tag (Apache:
/// its `argv[0]`).
const PROGRAM: &str = "htaccel";

/// Whether an `ErrorLog` value names the system logger.
pub fn is_syslog(target: &str) -> bool {
    target == "syslog" || target.starts_with("syslog:")
}

/// The facility and tag of `syslog[:facility[:tag]]`; the error Apache
/// gives for a facility it does not know.
pub fn parse(target: &str) -> Result<(libc::c_int, String), String> {
    let Some(rest) = target.strip_prefix("syslog:") else {
        return Ok((libc::LOG_LOCAL7, PROGRAM.to_string()));
    };
    let (facility, tag) = match rest.split_once(':') {
        Some((f, "")) => (f, PROGRAM),
        Some((f, t)) => (f, t),
        None => (rest, PROGRAM),
    };
    if facility.is_empty() {
        return Ok((libc::LOG_LOCAL7, tag.to_string()));
    }
    FACILITIES
        .iter()
        .find(|(name, _)| {
            name.len() >= facility.len() && name[..facility.len()].eq_ignore_ascii_case(facility)
        })
        .map(|&(_, value)| (value, tag.to_string()))
        .ok_or_else(|| {
            format!(
                "(20024)The given path is misformatted or contained invalid characters: AH10036: {PROGRAM}: could not open syslog error log {rest}.\nAH00015: Unable to open logs"
            )
        })
}

/// `openlog` with Apache's options. The tag is kept for the life of the
/// process: the C library holds on to the pointer.
pub fn open(facility: libc::c_int, tag: &str) {
    let tag = CString::new(tag.replace('\0', "")).unwrap_or_default();
    let tag: &'static std::ffi::CStr = Box::leak(tag.into_boxed_c_str());
    // SAFETY: the tag lives for the rest of the process.
    unsafe {
        libc::openlog(
            tag.as_ptr(),
            libc::LOG_NDELAY | libc::LOG_CONS | libc::LOG_PID,
            facility,
        )
    };
}

/// Send one line (without its newline) at `level`.
pub fn send(level: usize, line: &str) {
    let priority = level.min(libc::LOG_DEBUG as usize) as libc::c_int;
    let Ok(text) = CString::new(line.replace('\0', "")) else {
        return;
    };
    // SAFETY: both strings are NUL-terminated; the format takes one string.
    unsafe { libc::syslog(priority, c"%s".as_ptr(), text.as_ptr()) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facilities_as_apache_reads_them() {
        assert_eq!(parse("syslog"), Ok((libc::LOG_LOCAL7, "htaccel".into())));
        assert_eq!(
            parse("syslog:local1"),
            Ok((libc::LOG_LOCAL1, "htaccel".into()))
        );
        assert_eq!(
            parse("syslog:LOC"),
            Ok((libc::LOG_LOCAL0, "htaccel".into()))
        );
        assert_eq!(
            parse("syslog:daemon:web"),
            Ok((libc::LOG_DAEMON, "web".into()))
        );
        assert_eq!(parse("syslog::web"), Ok((libc::LOG_LOCAL7, "web".into())));
        assert_eq!(
            parse("syslog:user:"),
            Ok((libc::LOG_USER, "htaccel".into()))
        );
        assert!(parse("syslog:local10").unwrap_err().contains("AH10036"));
        assert!(parse("syslog:bogus")
            .unwrap_err()
            .contains("could not open syslog error log bogus."));
    }
}
