//! Reading the preferred HTTP date format (`Sun, 06 Nov 1994 08:49:37 GMT`)
//! into seconds since the epoch, so that headers computed from the clock
//! (`Expires`) can be compared with a tolerance instead of exactly.

/// Seconds since 1970 for an IMF-fixdate, or `None` for anything else.
pub fn parse(s: &str) -> Option<i64> {
    let words: Vec<&str> = s.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = words.as_slice() else {
        return None;
    };
    let day: i64 = day.parse().ok()?;
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| m == month)? as i64
        + 1;
    let year: i64 = year.parse().ok()?;
    let mut hms = time.split(':').map(|p| p.parse::<i64>().ok());
    let (h, m, sec) = (hms.next()??, hms.next()??, hms.next()??);
    Some(days_from_civil(year, month, day) * 86_400 + h * 3600 + m * 60 + sec)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_dates() {
        assert_eq!(super::parse("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(
            super::parse("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(super::parse("yesterday"), None);
    }
}
