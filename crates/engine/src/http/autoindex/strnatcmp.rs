//! `apr_strnatcmp`, the order of mod_autoindex's `VersionSort`.

use std::cmp::Ordering;

/// `apr_strnatcmp` (`apr_strnatcasecmp` with `fold_case`): runs of digits
/// compare by value (with leading zeros compared digit by digit), white
/// space is skipped, other bytes compare as signed chars.
pub fn strnatcmp(a: &[u8], b: &[u8], fold_case: bool) -> Ordering {
    let at = |s: &[u8], i: usize| s.get(i).copied().unwrap_or(0);
    let is_space = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c);
    let (mut ai, mut bi) = (0usize, 0usize);
    loop {
        let (mut ca, mut cb) = (at(a, ai), at(b, bi));
        while is_space(ca) {
            ai += 1;
            ca = at(a, ai);
        }
        while is_space(cb) {
            bi += 1;
            cb = at(b, bi);
        }
        if ca.is_ascii_digit() && cb.is_ascii_digit() {
            let r = if ca == b'0' || cb == b'0' {
                compare_left(&a[ai..], &b[bi..])
            } else {
                compare_right(&a[ai..], &b[bi..])
            };
            if r != Ordering::Equal {
                return r;
            }
        }
        if ca == 0 && cb == 0 {
            return Ordering::Equal;
        }
        if fold_case {
            ca = ca.to_ascii_uppercase();
            cb = cb.to_ascii_uppercase();
        }
        match (ca as i8).cmp(&(cb as i8)) {
            Ordering::Equal => {}
            o => return o,
        }
        ai += 1;
        bi += 1;
    }
}

fn digit_at(s: &[u8], i: usize) -> Option<u8> {
    s.get(i).copied().filter(u8::is_ascii_digit)
}

/// Right-aligned numbers: the longer run wins, else the first difference.
fn compare_right(a: &[u8], b: &[u8]) -> Ordering {
    let mut bias = Ordering::Equal;
    let mut i = 0;
    loop {
        match (digit_at(a, i), digit_at(b, i)) {
            (None, None) => return bias,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                if bias == Ordering::Equal {
                    bias = x.cmp(&y);
                }
            }
        }
        i += 1;
    }
}

/// Left-aligned (fractional) numbers: the first difference wins.
fn compare_left(a: &[u8], b: &[u8]) -> Ordering {
    let mut i = 0;
    loop {
        match (digit_at(a, i), digit_at(b, i)) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x != y => return x.cmp(&y),
            _ => {}
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order() {
        use Ordering::*;
        let c = |a: &str, b: &str| strnatcmp(a.as_bytes(), b.as_bytes(), false);
        assert_eq!(c("9.txt", "10.txt"), Less);
        assert_eq!(c("a2", "a10"), Less);
        assert_eq!(c("a010", "a02"), Less);
        assert_eq!(c("x 1", "x1"), Equal);
        assert_eq!(c("abc", "abd"), Less);
        assert_eq!(c("é", "a"), Less);
        assert_eq!(c("B", "a"), Less);
        assert_eq!(strnatcmp(b"B", b"a", true), Greater);
    }
}
