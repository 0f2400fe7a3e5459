//! Byte classes of Apache's request parser (`server/gen_test_char.c`), as
//! lookup tables so that every scan on the request path is one load per byte.
//!
//! Apache decides these classes with the C library in the "C" locale: bytes
//! 0x80..=0xFF are neither letters, digits, spaces nor controls, which is why
//! obs-text passes the field-content check but fails the token check.

const TOKEN: u8 = 1;
const CTRL: u8 = 2;
const VCHAR_OBS: u8 = 4;
const SPACE: u8 = 8;
const DIGIT: u8 = 16;
const ALPHA: u8 = 32;
const HEX: u8 = 64;

const fn build() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        let mut f = 0;
        let alpha = c.is_ascii_alphabetic();
        let digit = c.is_ascii_digit();
        if alpha {
            f |= ALPHA;
        }
        if digit {
            f |= DIGIT;
        }
        if c.is_ascii_hexdigit() {
            f |= HEX;
        }
        // RFC 7230 tchar: the complement of Apache's T_HTTP_TOKEN_STOP.
        if alpha
            || digit
            || matches!(
                c,
                b'!' | b'#' | b'$' | b'%' | b'&' | b'\'' | b'*' | b'+' | b'-' | b'.'
            )
            || matches!(c, b'^' | b'_' | b'`' | b'|' | b'~')
        {
            f |= TOKEN;
        }
        // T_HTTP_CTRLS: NUL, C0 controls except HT, and DEL.
        if c == 0 || ((c < 0x20 || c == 0x7f) && c != b'\t') {
            f |= CTRL;
        }
        // T_VCHAR_OBSTEXT: neither NUL, a control nor SP.
        if c != 0 && !(c < 0x20 || c == 0x7f) && c != b' ' {
            f |= VCHAR_OBS;
        }
        // isspace() in the C locale.
        if matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
            f |= SPACE;
        }
        t[i] = f;
        i += 1;
    }
    t
}

static TABLE: [u8; 256] = build();

#[inline]
pub(crate) fn is_token(c: u8) -> bool {
    TABLE[c as usize] & TOKEN != 0
}

/// A byte that may not appear in a field value (`ap_scan_http_field_content` stops there).
#[inline]
pub(crate) fn is_ctrl(c: u8) -> bool {
    TABLE[c as usize] & CTRL != 0
}

#[inline]
pub(crate) fn is_vchar_obs(c: u8) -> bool {
    TABLE[c as usize] & VCHAR_OBS != 0
}

#[inline]
pub(crate) fn is_space(c: u8) -> bool {
    TABLE[c as usize] & SPACE != 0
}

#[inline]
pub(crate) fn is_digit(c: u8) -> bool {
    TABLE[c as usize] & DIGIT != 0
}

#[inline]
pub(crate) fn is_alpha(c: u8) -> bool {
    TABLE[c as usize] & ALPHA != 0
}

#[inline]
pub(crate) fn is_hex(c: u8) -> bool {
    TABLE[c as usize] & HEX != 0
}

/// Length of the run of token bytes at the start of `s`.
#[inline]
pub(crate) fn token_len(s: &[u8]) -> usize {
    s.iter().position(|&c| !is_token(c)).unwrap_or(s.len())
}

// Eight bytes at a time ("SWAR"): a word flags a chunk that may hold a
// byte of interest, which is then looked at byte by byte; clean chunks, the
// usual case, cost a few operations for eight bytes.
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Non-zero iff some byte of `w` is below `n` (`n` at most 128).
#[inline]
fn any_below(w: u64, n: u8) -> u64 {
    w.wrapping_sub(ONES * n as u64) & !w & HIGHS
}

/// Non-zero iff some byte of `w` equals `b`.
#[inline]
fn any_equal(w: u64, b: u8) -> u64 {
    let x = w ^ (ONES * b as u64);
    x.wrapping_sub(ONES) & !x & HIGHS
}

#[inline]
fn word(s: &[u8], i: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&s[i..i + 8]);
    u64::from_le_bytes(b)
}

/// Length of the run of visible or obs-text bytes at the start of `s`
/// (what [`is_vchar_obs`] accepts: neither a control, SP, nor DEL).
#[inline]
pub(crate) fn vchar_obs_len(s: &[u8]) -> usize {
    let mut i = 0;
    while i + 8 <= s.len() {
        let w = word(s, i);
        if any_below(w, 0x21) | any_equal(w, 0x7f) != 0 {
            break;
        }
        i += 8;
    }
    i + s[i..]
        .iter()
        .position(|&c| !is_vchar_obs(c))
        .unwrap_or(s.len() - i)
}

/// Whether `s` holds a byte [`is_ctrl`] refuses.
#[inline]
pub(crate) fn has_ctrl(s: &[u8]) -> bool {
    let mut i = 0;
    while i + 8 <= s.len() {
        let w = word(s, i);
        // Below 0x20 includes HT, which is allowed: look closer then.
        if any_below(w, 0x20) | any_equal(w, 0x7f) != 0 && s[i..i + 8].iter().any(|&c| is_ctrl(c)) {
            return true;
        }
        i += 8;
    }
    s[i..].iter().any(|&c| is_ctrl(c))
}

pub(crate) use htaccel_engine::header_table::find_token;

/// [`find_token`] for `close` and for `keep-alive` (a `Connection` value),
/// in one pass over the list.
#[inline]
pub(crate) fn close_and_keep_alive(list: &[u8]) -> (bool, bool) {
    let (mut close, mut keep) = (false, false);
    let mut i = 0;
    while i < list.len() {
        while i < list.len() && !is_token(list[i]) {
            i += 1;
        }
        let start = i;
        i += token_len(&list[i..]);
        let word = &list[start..i];
        if !word.is_empty() {
            close |= word.len() <= 5 && word.eq_ignore_ascii_case(&b"close"[..word.len()]);
            keep |= word.len() <= 10 && word.eq_ignore_ascii_case(&b"keep-alive"[..word.len()]);
        }
    }
    (close, keep)
}

/// `ap_is_chunked`: whether the (joined) `Transfer-Encoding` value ends in the
/// `chunked` coding. `chunked` alone, or a last token `chunked` preceded by a
/// comma (after optional spaces), or by a space that follows a comma.
pub(crate) fn is_chunked(v: &[u8]) -> bool {
    if v.eq_ignore_ascii_case(b"chunked") {
        return true;
    }
    let n = v.len();
    if n <= 7 {
        return false;
    }
    let at = n - 7;
    if !(is_space(v[at - 1]) || v[at - 1] == b',') || !v[at..].eq_ignore_ascii_case(b"chunked") {
        return false;
    }
    // Walk back over spaces from the byte before "chunked".
    let mut s = at;
    loop {
        s -= 1;
        if s == 0 || v[s] != b' ' {
            break;
        }
    }
    v[s] == b',' || v[s] == b' '
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        assert!(is_token(b'a') && is_token(b'~') && !is_token(b'(') && !is_token(0xe9));
        assert!(is_ctrl(0) && is_ctrl(0x7f) && is_ctrl(b'\r') && !is_ctrl(b'\t') && !is_ctrl(0xe9));
        assert!(
            is_vchar_obs(b'!') && is_vchar_obs(0xff) && !is_vchar_obs(b' ') && !is_vchar_obs(0x7f)
        );
        assert!(is_space(0x0b) && !is_space(0xa0));
    }

    #[test]
    fn tokens() {
        // Observed with Apache 2.4.71 (printf | nc): `Connection: c` closes,
        // `Connection: keep` on HTTP/1.0 keeps the connection alive.
        assert!(find_token(b"c", b"close"));
        assert!(find_token(b"Foo, CLOSE", b"close"));
        assert!(find_token(b"keep", b"keep-alive"));
        assert!(!find_token(b"closed", b"close"));
        assert!(!find_token(b"", b"close"));
        assert!(!find_token(b" , ;", b"close"));
    }

    #[test]
    fn word_scans_agree_with_the_byte_classes() {
        // Every byte value at every position of inputs longer than a word.
        for len in [0usize, 1, 7, 8, 9, 15, 16, 17, 24] {
            for pos in 0..len {
                for b in 0..=255u8 {
                    let mut s = vec![b'a'; len];
                    s[pos] = b;
                    let run = s.iter().position(|&c| !is_vchar_obs(c)).unwrap_or(len);
                    assert_eq!(vchar_obs_len(&s), run, "len {len} pos {pos} byte {b}");
                    assert_eq!(has_ctrl(&s), is_ctrl(b), "len {len} pos {pos} byte {b}");
                }
            }
            let s = vec![0x80u8; len];
            assert_eq!(vchar_obs_len(&s), len);
            assert!(!has_ctrl(&s));
        }
    }

    #[test]
    fn connection_tokens_in_one_pass() {
        for v in [
            &b"c"[..],
            b"Foo, CLOSE",
            b"keep",
            b"closed",
            b"",
            b" , ;",
            b"Keep-Alive",
            b"keep-alive, close",
            b"keep-alived",
            b"k,c",
        ] {
            assert_eq!(
                close_and_keep_alive(v),
                (find_token(v, b"close"), find_token(v, b"keep-alive")),
                "{v:?}"
            );
        }
    }

    #[test]
    fn chunked() {
        // Observed with Apache 2.4.71: these are accepted as chunked (200)…
        for v in [
            "chunked",
            "Chunked",
            "gzip, chunked",
            "chunked, chunked",
            "gzip,chunked",
            "gzip ,  chunked",
        ] {
            assert!(is_chunked(v.as_bytes()), "{v}");
        }
        // …and these are answered 400.
        for v in [
            "gzip",
            "chunked, gzip",
            "identity",
            "",
            "gzip chunked",
            "xchunked",
        ] {
            assert!(!is_chunked(v.as_bytes()), "{v}");
        }
    }
}
