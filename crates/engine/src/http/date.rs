//! HTTP dates as Apache reads and writes them.
//!
//! Apache parses `If-Modified-Since`, `If-Unmodified-Since`, `If-Range` and
//! the `Last-Modified`/`Date` it compares them with through APR's
//! `apr_date_parse_http`, which is both stricter and looser than RFC 9110: the
//! weekday is skipped up to the first space without being checked, anything
//! after the seconds (the zone included) is ignored, a missing space after the
//! seconds in RFC 1123 form is an error, dates before 1970 are errors, and the
//! epoch itself is indistinguishable from an error (`APR_DATE_BAD` is 0).
//! Conditional requests must make exactly the same decisions, so this is a
//! faithful re-implementation rather than a general date parser.
//!
//! All times here are whole seconds since the epoch (`i64`), the only
//! resolution HTTP comparisons use.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the epoch of `t` (negative before 1970), rounded towards
/// negative infinity like `apr_time_sec` of a non-negative time.
pub fn unix_secs(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => {
            let d = e.duration();
            -(d.as_secs() as i64) - i64::from(d.subsec_nanos() > 0)
        }
    }
}

/// Microseconds since the epoch of `t` (`apr_time_t`).
pub fn unix_micros(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_micros() as i64,
        Err(e) => -(e.duration().as_micros() as i64),
    }
}

/// Match `data` against an `apr_date_checkmask` mask: `@` upper-case letter,
/// `$` lower-case letter, `#` digit, `~` digit or space, `*` the rest
/// (anything, even nothing), any other byte itself. Without `*` the data must
/// end where the mask does.
fn check_mask(data: &[u8], mask: &[u8]) -> bool {
    for (i, &m) in mask.iter().enumerate() {
        let d = data.get(i).copied().unwrap_or(0);
        let ok = match m {
            b'*' => return true,
            b'@' => d.is_ascii_uppercase(),
            b'$' => d.is_ascii_lowercase(),
            b'#' => d.is_ascii_digit(),
            b'~' => d == b' ' || d.is_ascii_digit(),
            _ => d == m,
        };
        if !ok {
            return false;
        }
    }
    data.len() == mask.len()
}

fn digit(b: u8) -> i64 {
    i64::from(b) - i64::from(b'0')
}

fn two(b: &[u8], i: usize) -> i64 {
    digit(b[i]) * 10 + digit(b[i + 1])
}

const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// `apr_date_parse_http`: the three HTTP date forms (RFC 1123, RFC 850,
/// asctime) plus RFC 1123 with a one-digit day. `None` where APR answers
/// `APR_DATE_BAD`, including for the epoch itself.
pub fn parse_http_date(s: impl AsRef<[u8]>) -> Option<i64> {
    let b = s.as_ref();
    let start = b.iter().position(|c| !is_c_space(*c))?;
    let b = &b[start..];
    // Skip the weekday, whatever it is, up to the first space.
    let sp = b.iter().position(|&c| c == b' ')?;
    let d = &b[sp + 1..];

    let (year, mday, mon_at, time_at);
    if check_mask(d, b"## @$$ #### ##:##:## *") {
        let century = two(d, 7) - 19;
        if century < 0 {
            return None;
        }
        year = century * 100 + two(d, 9);
        mday = two(d, 0);
        mon_at = 3;
        time_at = 12;
    } else if check_mask(d, b"##-@$$-## ##:##:## *") {
        let mut y = two(d, 7);
        if y < 70 {
            y += 100;
        }
        year = y;
        mday = two(d, 0);
        mon_at = 3;
        time_at = 10;
    } else if check_mask(d, b"@$$ ~# ##:##:## ####*") {
        let century = two(d, 16) - 19;
        if century < 0 {
            return None;
        }
        year = century * 100 + two(d, 18);
        mday = if d[4] == b' ' { 0 } else { digit(d[4]) * 10 } + digit(d[5]);
        mon_at = 0;
        time_at = 7;
    } else if check_mask(d, b"# @$$ #### ##:##:## *") {
        let century = two(d, 6) - 19;
        if century < 0 {
            return None;
        }
        year = century * 100 + two(d, 8);
        mday = digit(d[0]);
        mon_at = 2;
        time_at = 11;
    } else {
        return None;
    }
    // `year` counts from 1900, like `tm_year`.
    if mday <= 0 || mday > 31 {
        return None;
    }
    let (hour, min, sec) = (two(d, time_at), two(d, time_at + 3), two(d, time_at + 6));
    if hour > 23 || min > 59 || sec > 61 {
        return None;
    }
    let mon = MONTHS.iter().position(|m| &d[mon_at..mon_at + 3] == *m)? as i64;
    if mday == 31 && matches!(mon, 3 | 5 | 8 | 10) {
        return None;
    }
    if mon == 1
        && (mday > 29 || (mday == 29 && (year & 3 != 0 || (year % 100 == 0 && year % 400 != 100))))
    {
        return None;
    }
    // `apr_time_exp_get`: days since 1 March 1900, then shift to the epoch.
    const DAY_OFFSET: [i64; 12] = [306, 337, 0, 31, 61, 92, 122, 153, 184, 214, 245, 275];
    let y = if mon < 2 { year - 1 } else { year };
    let mut days = y * 365 + y / 4 - y / 100 + (y / 100 + 3) / 4;
    days += DAY_OFFSET[mon as usize] + mday - 1;
    days -= 25508;
    let t = ((days * 24 + hour) * 60 + min) * 60 + sec;
    if t <= 0 {
        return None;
    }
    Some(t)
}

fn is_c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Days since 1970-01-01 → (year, month 1..=12, day 1..=31), proleptic
/// Gregorian.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `ASN1_TIME_print`: "Nov  6 08:49:37 1994 GMT", as OpenSSL prints a
/// certificate's validity dates.
pub fn fmt_asn1_time(secs: i64) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let t = secs.rem_euclid(86_400);
    format!(
        "{} {d:2} {:02}:{:02}:{:02} {y} GMT",
        MONTHS[m as usize - 1],
        t / 3600,
        t / 60 % 60,
        t % 60
    )
}

/// `apr_rfc822_date`: "Sun, 06 Nov 1994 08:49:37 GMT" for any time,
/// including before 1970.
pub fn fmt_http_date(secs: i64) -> String {
    const WDAY: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MON: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let (wday, mon) = (WDAY[days.rem_euclid(7) as usize], MON[m as usize - 1]);
    if !(0..10_000).contains(&y) {
        return format!(
            "{wday}, {d:02} {mon} {y:04} {:02}:{:02}:{:02} GMT",
            rem / 3600,
            rem / 60 % 60,
            rem % 60
        );
    }
    // Built by hand into a fixed buffer: this runs for every Last-Modified
    // and Date, and the formatting machinery costs ten times as much.
    let two = |n: i64| [b'0' + (n / 10) as u8, b'0' + (n % 10) as u8];
    let mut out = *b"Thu, 01 Jan 1970 00:00:00 GMT";
    out[0..3].copy_from_slice(wday.as_bytes());
    out[5..7].copy_from_slice(&two(i64::from(d)));
    out[8..11].copy_from_slice(mon.as_bytes());
    out[12..14].copy_from_slice(&two(y / 100));
    out[14..16].copy_from_slice(&two(y % 100));
    out[17..19].copy_from_slice(&two(rem / 3600));
    out[20..22].copy_from_slice(&two(rem / 60 % 60));
    out[23..25].copy_from_slice(&two(rem % 60));
    // SAFETY: every byte is ASCII: the template's, the names' and the
    // digits written above. (Validating them cost as much as the rest.)
    unsafe { std::str::from_utf8_unchecked(&out) }.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: i64 = 1_795_242_770; // Sat, 21 Nov 2026 06:32:50 GMT

    #[test]
    fn format() {
        // Observed with Apache 2.4.71: Last-Modified of a file with mtime
        // 2026-11-21 06:32:50 UTC.
        assert_eq!(fmt_http_date(T), "Sat, 21 Nov 2026 06:32:50 GMT");
        assert_eq!(fmt_http_date(784111777), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(fmt_http_date(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(fmt_http_date(-1), "Wed, 31 Dec 1969 23:59:59 GMT");
        assert_eq!(fmt_http_date(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT");
        assert_eq!(
            fmt_http_date(253_402_300_800),
            "Sat, 01 Jan 10000 00:00:00 GMT"
        );
    }

    #[test]
    fn forms_apache_accepts() {
        // Observed with Apache 2.4.71: each of these as If-Modified-Since
        // equal to Last-Modified "Sat, 21 Nov 2026 06:32:50 GMT" gave 304.
        assert_eq!(parse_http_date("Sat, 21 Nov 2026 06:32:50 GMT"), Some(T));
        assert_eq!(
            parse_http_date("Sat, 21 Nov 2026 06:32:50 GMT junk"),
            Some(T)
        );
        assert_eq!(parse_http_date("Saturday, 21-Nov-26 06:32:50 GMT"), Some(T));
        assert_eq!(parse_http_date("Sat Nov 21 06:32:50 2026"), Some(T));
        // The weekday is not checked, the zone not read.
        assert_eq!(parse_http_date("  Xyz, 21 Nov 2026 06:32:50 PST"), Some(T));
        assert_eq!(
            parse_http_date("Sat, 1 Nov 2026 06:32:50 GMT"),
            parse_http_date("Sat, 01 Nov 2026 06:32:50 GMT")
        );
        assert_eq!(parse_http_date("Sun Nov  6 08:49:37 1994"), Some(784111777));
        assert_eq!(
            parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"),
            Some(784111777)
        );
        assert_eq!(
            parse_http_date("Sat, 21 Nov 2026 06:32:60 GMT"),
            Some(T + 10)
        );
    }

    #[test]
    fn forms_apache_rejects() {
        // Observed with Apache 2.4.71: these gave 200 where the valid date gave 304.
        assert_eq!(parse_http_date("21 Nov 2026 06:32:50 GMT"), None);
        assert_eq!(parse_http_date("Sat, 21 Nov 2026 06:32:50"), None);
        assert_eq!(parse_http_date("garbage"), None);
        assert_eq!(parse_http_date(""), None);
        assert_eq!(parse_http_date("Sat, 31 Nov 2026 06:32:50 GMT"), None);
        assert_eq!(parse_http_date("Sat, 29 Feb 2026 06:32:50 GMT"), None);
        assert_eq!(parse_http_date("Sat, 29 Feb 1900 06:32:50 GMT"), None);
        assert!(parse_http_date("Tue, 29 Feb 2000 06:32:50 GMT").is_some());
        assert_eq!(parse_http_date("Sat, 21 nov 2026 06:32:50 GMT"), None);
        assert_eq!(parse_http_date("Sat, 21 Nov 1800 06:32:50 GMT"), None);
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), None);
        assert_eq!(parse_http_date("Wed, 31 Dec 1969 23:59:59 GMT"), None);
        assert_eq!(parse_http_date("Sat, 21 Nov 2026 24:00:00 GMT"), None);
    }

    #[test]
    fn round_trip() {
        for t in [1, 86_399, 951_782_400, T, 4_102_444_800, 253_402_300_799] {
            assert_eq!(parse_http_date(fmt_http_date(t)), Some(t), "{t}");
        }
    }
}
