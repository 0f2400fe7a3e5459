//! The `Accept*` header lines as mod_negotiation reads them: a list of
//! `name; param=value` items with a quality, a level and a charset. The
//! same reader takes a variant's `Content-Type` apart (its `qs`, `level`
//! and `charset` parameters), as Apache's `get_entry` does.
//!
//! Apache is lenient here and the selection depends on its exact
//! leniency (a quality it cannot read counts as 1, `text/html` has level
//! 2 unless told otherwise), so the reading follows it step by step.

/// One item of an `Accept*` line, or a variant's content type read the
/// same way. `name` is lower case.
#[derive(Clone, Debug, PartialEq)]
pub struct AcceptRec {
    pub name: String,
    pub quality: f32,
    pub level: f32,
    pub charset: String,
}

/// The pseudo-types of mod_include, treated as `text/html`.
pub const INCLUDES_MAGIC_TYPE: &str = "text/x-server-parsed-html";
pub const INCLUDES_MAGIC_TYPE3: &str = "text/x-server-parsed-html3";
/// The type a variant with a handler and no type gets (`CGI_MAGIC_TYPE`).
pub const CGI_MAGIC_TYPE: &str = "application/x-httpd-cgi";

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// `ap_get_token`: a token up to `;` or `,` (or white space unless
/// `accept_white`), quoted strings kept whole; white space around skipped.
fn get_token<'a>(line: &mut &'a [u8], accept_white: bool) -> &'a [u8] {
    let mut p = 0;
    let s = *line;
    while p < s.len() && is_space(s[p]) {
        p += 1;
    }
    let start = p;
    while p < s.len() && (accept_white || !is_space(s[p])) && s[p] != b';' && s[p] != b',' {
        let c = s[p];
        p += 1;
        if c == b'"' {
            while p < s.len() {
                let q = s[p];
                p += 1;
                if q == b'"' {
                    break;
                }
            }
        }
    }
    let token = &s[start..p];
    while p < s.len() && is_space(s[p]) {
        p += 1;
    }
    *line = &s[p..];
    token
}

/// `ap_get_token` without white space in the token.
pub fn token<'a>(line: &mut &'a [u8]) -> &'a [u8] {
    get_token(line, false)
}

/// `atoq`: a quality value, read loosely; anything unreadable is 1.
pub fn atoq(s: &[u8]) -> f32 {
    let mut i = 0;
    while i < s.len() && is_space(s[i]) {
        i += 1;
    }
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    if at(i) != b'.' {
        let c = at(i);
        i += 1;
        if c != b'0' {
            return 1.0;
        }
    }
    if at(i) == b'.' {
        let mut v = 0i32;
        i += 1;
        if at(i).is_ascii_digit() {
            v += i32::from(at(i) - b'0') * 100;
            i += 1;
            if at(i).is_ascii_digit() {
                v += i32::from(at(i) - b'0') * 10;
                i += 1;
                if at(i) > b'0' && at(i) <= b'9' {
                    v += i32::from(at(i) - b'0');
                }
            }
        }
        return v as f32 / 1000.0;
    }
    0.0
}

/// C's `atoi`: optional white space and sign, then digits.
fn atoi(s: &[u8]) -> i32 {
    let mut i = 0;
    while i < s.len() && is_space(s[i]) {
        i += 1;
    }
    let neg = match s.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let mut v: i32 = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        v = v.wrapping_mul(10).wrapping_add(i32::from(s[i] - b'0'));
        i += 1;
    }
    if neg {
        v.wrapping_neg()
    } else {
        v
    }
}

/// `get_entry`: one item from the front of `line`, which is advanced past
/// it (and past its comma).
pub fn get_entry(line: &mut &[u8]) -> AcceptRec {
    let name = String::from_utf8_lossy(get_token(line, false)).to_ascii_lowercase();
    let level = match name.as_str() {
        "text/html" | INCLUDES_MAGIC_TYPE => 2.0,
        INCLUDES_MAGIC_TYPE3 => 3.0,
        _ => 0.0,
    };
    let mut rec = AcceptRec {
        name,
        quality: 1.0,
        level,
        charset: String::new(),
    };
    while line.first() == Some(&b';') {
        *line = &line[1..];
        let parm = get_token(line, true);
        // The parameter's name runs to white space or `=`.
        let name_end = parm
            .iter()
            .position(|&c| is_space(c) || c == b'=')
            .unwrap_or(parm.len());
        if name_end == parm.len() {
            continue;
        }
        let pname = parm[..name_end].to_ascii_lowercase();
        let mut v = name_end + 1;
        while v < parm.len() && (is_space(parm[v]) || parm[v] == b'=') {
            v += 1;
        }
        let value = if parm.get(v) == Some(&b'"') {
            let rest = &parm[v + 1..];
            let end = rest
                .iter()
                .position(|&c| matches!(c, b'\n' | b'\r' | b'"'))
                .unwrap_or(rest.len());
            &rest[..end]
        } else {
            let rest = &parm[v.min(parm.len())..];
            let end = rest.iter().position(|&c| is_space(c)).unwrap_or(rest.len());
            &rest[..end]
        };
        let value = value.to_ascii_lowercase();
        match pname.as_slice() {
            b"q" | b"qs" => rec.quality = atoq(&value),
            b"level" => rec.level = atoi(&value) as f32,
            b"charset" => rec.charset = String::from_utf8_lossy(&value).into_owned(),
            _ => {}
        }
    }
    if line.first() == Some(&b',') {
        *line = &line[1..];
    }
    rec
}

/// `do_header_line`: every item of a header line; `None` when the header
/// is absent (which is not the same as empty).
pub fn parse_line(value: Option<&[u8]>) -> Option<Vec<AcceptRec>> {
    let mut line = value?;
    let mut out = Vec::new();
    while !line.is_empty() {
        out.push(get_entry(&mut line));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualities_are_read_as_apache_reads_them() {
        assert_eq!(atoq(b"0.5"), 0.5);
        assert_eq!(atoq(b".25"), 0.25);
        assert_eq!(atoq(b"0.1234"), 0.123);
        assert_eq!(atoq(b"0"), 0.0);
        assert_eq!(atoq(b"1.0"), 1.0);
        assert_eq!(atoq(b"x"), 1.0);
        assert_eq!(atoq(b""), 1.0);
    }

    #[test]
    fn items_with_parameters_and_the_old_format() {
        let v = parse_line(Some(
            "text/html;level=3;q=0.7, TEXT/Plain ; q = 0.2 ,*/*".as_bytes(),
        ))
        .unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(
            (v[0].name.as_str(), v[0].level, v[0].quality),
            ("text/html", 3.0, 0.7)
        );
        assert_eq!((v[1].name.as_str(), v[1].quality), ("text/plain", 0.2));
        assert_eq!((v[2].name.as_str(), v[2].quality), ("*/*", 1.0));
        let old = parse_line(Some("text/html text/plain".as_bytes())).unwrap();
        assert_eq!(old.len(), 2);
        assert_eq!(old[0].level, 2.0);
        let ct = parse_line(Some("text/html; charset=UTF-8".as_bytes())).unwrap();
        assert_eq!(ct[0].charset, "utf-8");
        assert_eq!(parse_line(Some("".as_bytes())).unwrap().len(), 0);
        assert_eq!(parse_line(None), None);
    }
}
