//! `ap_pregsub`: `$0`…`$9` in a replacement text become the matching
//! parts of the subject; a backslash makes the next character literal
//! (`\$1` is `$1`). The result is bounded as Apache bounds it, so a
//! replacement cannot blow up memory.

/// Apache's `AP_PREGSUB_MAXLEN`: results this long or longer fail.
pub const MAX_LEN: usize = 8192 * 8;

/// Apache looks at ten groups at most (`AP_MAX_REG_MATCH`).
const MAX_GROUPS: usize = 10;

/// Substitute the groups of `captures` (spans into `subject`, group 0
/// first) into `template`. `None` when the result would reach
/// [`MAX_LEN`] bytes.
pub fn substitute(
    template: &str,
    subject: &[u8],
    captures: &[Option<(usize, usize)>],
) -> Option<Vec<u8>> {
    let t = template.as_bytes();
    let mut out = Vec::with_capacity(t.len());
    let mut i = 0;
    while i < t.len() {
        let c = t[i];
        i += 1;
        if c == b'$' && i < t.len() && t[i].is_ascii_digit() {
            let n = usize::from(t[i] - b'0');
            i += 1;
            if n < MAX_GROUPS {
                if let Some(Some((s, e))) = captures.get(n) {
                    out.extend_from_slice(&subject[*s..*e]);
                }
            }
        } else if c == b'\\' && i < t.len() {
            out.push(t[i]);
            i += 1;
        } else {
            out.push(c);
        }
        if out.len() >= MAX_LEN {
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
        let subject = b"/sub/a.gif";
        let caps = [Some((0, 10)), Some((0, 6)), None];
        assert_eq!(substitute("$1.png", subject, &caps).unwrap(), b"/sub/a.png");
        assert_eq!(substitute("x$0y", subject, &caps).unwrap(), b"x/sub/a.gify");
        assert_eq!(substitute("$2|$7|$", subject, &caps).unwrap(), b"||$");
        assert_eq!(
            substitute(r"\$1 \\ a&b\", subject, &caps).unwrap(),
            br"$1 \ a&b\"
        );
    }

    #[test]
    fn bounded() {
        let subject = vec![b'a'; 5000];
        let caps = [Some((0, 5000))];
        assert!(substitute(&"$0".repeat(13), &subject, &caps).is_some());
        assert!(substitute(&"$0".repeat(14), &subject, &caps).is_none());
    }
}
