//! Apache's `ap_pregsub`: a replacement template with `$0`…`$9` filled in
//! from a regex match. `SetEnvIf` values and `Header edit` replacements go
//! through it.
//!
//! `$N` is group N of the match (nothing for a group that did not take part
//! or is empty); a backslash makes the next character literal (`\$1` is
//! `$1`); anything else is copied. The result is refused when it would
//! reach 64 KiB, Apache's limit, so a template cannot multiply a header
//! into an unbounded allocation.

/// Longest result, exclusive (`AP_PREGSUB_MAXLEN`).
pub const MAX_LEN: usize = 8 * 8192;

/// Groups `$0`…`$9` (`AP_MAX_REG_MATCH`).
const MAX_GROUPS: usize = 10;

/// Fill `template` from the match `caps` (spans into `source`, group 0
/// first). `None` when the result would be too long.
pub fn pregsub(template: &[u8], source: &[u8], caps: &[Option<(usize, usize)>]) -> Option<Vec<u8>> {
    pregsub_within(template, source, caps, MAX_LEN)
}

/// [`pregsub`] with the caller's bound (`ap_pregsub_ex`'s `maxlen`): `None`
/// when the result would reach `max_len` bytes; 0 is no bound.
pub fn pregsub_within(
    template: &[u8],
    source: &[u8],
    caps: &[Option<(usize, usize)>],
    max_len: usize,
) -> Option<Vec<u8>> {
    let group = |n: usize| -> &[u8] {
        match caps.get(n).copied().flatten() {
            Some((s, e)) if n < MAX_GROUPS && s < e && e <= source.len() => &source[s..e],
            _ => &[],
        }
    };
    let mut out = Vec::with_capacity(template.len());
    let mut i = 0;
    while i < template.len() {
        let c = template[i];
        i += 1;
        if c == b'$' && i < template.len() && template[i].is_ascii_digit() {
            out.extend_from_slice(group(usize::from(template[i] - b'0')));
            i += 1;
        } else if c == b'\\' && i < template.len() {
            out.push(template[i]);
            i += 1;
        } else {
            out.push(c);
        }
        if max_len > 0 && out.len() >= max_len {
            return None;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_and_escapes() {
        let src = b"abc-def";
        let caps = [Some((0, 7)), Some((0, 3)), None, Some((4, 4))];
        let r = |t: &str| String::from_utf8(pregsub(t.as_bytes(), src, &caps).unwrap()).unwrap();
        assert_eq!(r("x$1y"), "xabcy");
        assert_eq!(r("$0"), "abc-def");
        assert_eq!(r("[$2][$3][$9]"), "[][][]");
        assert_eq!(r(r"\$1 \\ \q"), r"$1 \ q");
        assert_eq!(r("$"), "$");
        assert_eq!(r("$x"), "$x");
        assert_eq!(r("end\\"), "end\\");
    }

    #[test]
    fn too_long_is_refused() {
        let src = vec![b'a'; 40_000];
        let caps = [Some((0, src.len()))];
        assert!(pregsub(b"$0", &src, &caps).is_some());
        assert!(pregsub(b"$0$0", &src, &caps).is_none());
    }
}
