//! Header tables as Apache's modules see them, and the two response tables
//! the output filters edit before the response goes out.
//!
//! Apache keeps headers in APR tables: names compare without case, `set`
//! replaces every entry by one, `merge` appends `, value` to the first
//! entry. Request headers repeated by the client are already joined into
//! one entry when modules see them. A response has two tables:
//! `headers_out`, sent only with what a handler produced, and
//! `err_headers_out`, sent with every response, errors included; when the
//! error path builds a page it turns the old error table into the normal
//! one and starts an empty error table (`ap_send_error_response`). At the
//! end the error table comes first, then the normal one, and the content
//! type (`r->content_type`, which `Header set Content-Type` changes) is
//! written last (`merge_response_headers`).

use crate::http::{Headers, Response};
use crate::request::Ctx;
use std::borrow::Cow;

/// A list of headers with APR-table semantics. Values are bytes: request
/// headers need not be UTF-8.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    pub entries: Vec<(String, Vec<u8>)>,
}

impl Table {
    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.entries
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_slice())
    }

    /// `apr_table_set`: the first entry of `name` takes the value, the
    /// others go; a new entry at the end when there is none.
    pub fn set(&mut self, name: &str, value: Vec<u8>) {
        match self.position(name) {
            Some(i) => {
                self.entries[i].1 = value;
                let mut j = i + 1;
                while j < self.entries.len() {
                    if self.entries[j].0.eq_ignore_ascii_case(name) {
                        self.entries.remove(j);
                    } else {
                        j += 1;
                    }
                }
            }
            None => self.entries.push((name.to_string(), value)),
        }
    }

    /// `apr_table_add`: one more entry.
    pub fn add(&mut self, name: &str, value: Vec<u8>) {
        self.entries.push((name.to_string(), value));
    }

    /// `apr_table_merge`: `, value` appended to the first entry of `name`.
    pub fn merge(&mut self, name: &str, value: &[u8]) {
        match self.position(name) {
            Some(i) => {
                let v = &mut self.entries[i].1;
                v.extend_from_slice(b", ");
                v.extend_from_slice(value);
            }
            None => self.entries.push((name.to_string(), value.to_vec())),
        }
    }

    /// `apr_table_unset`: every entry of `name` goes.
    pub fn unset(&mut self, name: &str) {
        self.entries.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.entries
            .iter()
            .position(|(n, _)| n.eq_ignore_ascii_case(name))
    }

    /// Request headers as Apache holds them: one entry per name, repeated
    /// fields joined with `, ` in the place of the first.
    pub fn from_request(headers: &Headers) -> Table {
        let mut t = Table::default();
        for (name, value) in headers.iter() {
            t.merge(name, value);
        }
        t
    }

    /// A request-header list as it is (already in Apache's form).
    pub fn of(headers: &Headers) -> Table {
        Table {
            entries: headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_vec()))
                .collect(),
        }
    }

    /// Back into the request-header list.
    pub fn into_request(self) -> Headers {
        let mut h = Headers::new();
        for (n, v) in self.entries {
            h.push(n, v);
        }
        h
    }

    /// From a response-header list.
    pub fn from_strings(list: Vec<(String, String)>) -> Table {
        Table {
            entries: list.into_iter().map(|(n, v)| (n, v.into_bytes())).collect(),
        }
    }

    /// Into a response-header list (invalid UTF-8 replaced).
    pub fn into_strings(self) -> impl Iterator<Item = (String, String)> {
        self.entries.into_iter().map(|(n, v)| {
            let v = String::from_utf8(v)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
            (n, v)
        })
    }
}

/// Headers an output filter cannot change: the protocol filters and the
/// core set them after every content filter has run (the content length
/// from the body, `Date`, `Server`, the range of a 206).
pub fn is_protected(name: &str) -> bool {
    ["Content-Length", "Content-Range", "Date", "Server"]
        .iter()
        .any(|p| p.eq_ignore_ascii_case(name))
}

/// A response on its way through the output filters.
pub struct Output {
    pub status: u16,
    /// The response came from the error path (only `Header always` applies).
    pub error: bool,
    /// `r->err_headers_out`.
    pub err: Table,
    /// `r->headers_out`.
    pub out: Table,
    /// `r->content_type`, without the charset `AddDefaultCharset` adds
    /// when the header is written.
    pub content_type: Option<String>,
    /// Whether a filter changed `content_type`.
    pub content_type_changed: bool,
    /// The `Content-Type` the response had, as it would be sent.
    sent_type: Option<String>,
}

impl Output {
    /// Whether anything can change the response's headers: a module with
    /// output edits configured, or headers set before the handler.
    pub fn needed(ctx: &Ctx<'_>, error: bool) -> bool {
        !ctx.err_headers_out.is_empty()
            || (!error && !ctx.headers_out.is_empty())
            || crate::modules::hooks::header_filters_configured(ctx)
    }

    /// Split `resp` into the two tables.
    pub fn start(ctx: &mut Ctx<'_>, resp: &mut Response, error: bool) -> Output {
        let mut headers = std::mem::take(&mut resp.headers);
        let sent_type = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("Content-Type"))
            .map(|(_, v)| v.clone());
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case("Content-Type"));
        let (err, mut out) = if error {
            // The error page starts a new error table; the old one is sent
            // as the normal table.
            (Vec::new(), std::mem::take(&mut ctx.err_headers_out))
        } else {
            (
                std::mem::take(&mut ctx.err_headers_out),
                std::mem::take(&mut ctx.headers_out),
            )
        };
        out.extend(headers.into_iter().map(|(n, v)| (n.into_owned(), v)));
        let handler_type = if error {
            None
        } else {
            ctx.content_type.as_ref().map(|t| {
                if t == crate::http::DIR_MAGIC_TYPE {
                    "text/html".to_string()
                } else {
                    t.clone()
                }
            })
        };
        let content_type = match (&sent_type, handler_type) {
            (Some(sent), Some(raw)) if make_content_type(ctx, &raw) == *sent => Some(raw),
            (Some(sent), _) => Some(sent.clone()),
            // A 304 or 204 goes out without a type, but filters still see it.
            (None, raw) => raw,
        };
        Output {
            status: resp.status,
            error,
            err: Table::from_strings(err),
            out: Table::from_strings(out),
            content_type,
            content_type_changed: false,
            sent_type,
        }
    }

    /// Put the tables back into `resp`: the error table first, then the
    /// normal one, then the content type.
    pub fn finish(self, ctx: &Ctx<'_>, resp: &mut Response) {
        let mut headers: Vec<(Cow<'static, str>, String)> = self
            .err
            .into_strings()
            .chain(self.out.into_strings())
            .map(|(n, v)| (n.into(), v))
            .collect();
        let header_only = matches!(self.status, 204 | 304);
        let content_type = if header_only {
            // A 304 or 204 carries no type of its own; one a directive
            // set (`Header set Content-Type`) is sent as Apache sends it.
            self.content_type.filter(|_| self.content_type_changed)
        } else if self.content_type_changed {
            self.content_type.map(|t| make_content_type(ctx, &t))
        } else {
            self.sent_type
        };
        if let Some(t) = content_type {
            headers.retain(|(n, _)| !n.eq_ignore_ascii_case("Content-Type"));
            headers.push(("Content-Type".into(), t));
        }
        // The handler's entity headers were already taken off a 304 or 204
        // (`conditional::strip_for_304`); those still here were set by
        // directives, and Apache sends them: the server must not strip them.
        if header_only
            && headers.iter().any(|(n, _)| {
                ["Content-Type", "Content-Encoding", "Content-Language"]
                    .iter()
                    .any(|e| n.eq_ignore_ascii_case(e))
            })
        {
            resp.entity_in_headers = true;
        }
        resp.headers = headers;
    }
}

/// The `Content-Type` as sent for a type (`ap_make_content_type`):
/// `AddDefaultCharset` for `text/plain` and `text/html` without a charset.
pub fn make_content_type(ctx: &Ctx<'_>, t: &str) -> String {
    if let Some(Some(cs)) = &ctx.conf.core.add_default_charset {
        let lower = t.to_ascii_lowercase();
        if (lower.starts_with("text/plain") || lower.starts_with("text/html"))
            && !lower.contains("charset=")
        {
            return format!("{t}; charset={cs}");
        }
    }
    t.to_string()
}

/// Apache's last check of a response's headers (`check_headers`): names
/// must be tokens (`strict`, `HttpProtocolOptions Strict`) or visible
/// bytes (`Unsafe`), values must hold no control characters but tabs; a
/// folded line (CRLF and blanks) becomes one space. The error is the
/// error-log message.
pub fn check<N: AsRef<str>>(headers: &mut [(N, String)], strict: bool) -> Result<(), String> {
    for (name, value) in headers.iter_mut() {
        let name = name.as_ref();
        if name.is_empty() {
            return Err("AH02428: Empty response header name, aborting request".into());
        }
        if !is_field_name(name.as_bytes(), strict) {
            return Err(format!(
                "AH02429: Response header name '{name}' contains invalid characters, aborting request"
            ));
        }
        let b = value.as_bytes();
        if !has_ctl(b) {
            continue;
        }
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            if !is_ctl(b[i]) {
                out.push(b[i]);
                i += 1;
                continue;
            }
            if b[i] == b'\r'
                && b.get(i + 1) == Some(&b'\n')
                && matches!(b.get(i + 2), Some(b' ' | b'\t'))
            {
                i += 3;
                while matches!(b.get(i), Some(b' ' | b'\t')) {
                    i += 1;
                }
                out.push(b' ');
                continue;
            }
            return Err(format!(
                "AH02430: Response header '{name}' value of '{}' contains invalid characters, aborting request",
                String::from_utf8_lossy(&b[i.min(b.len())..])
            ));
        }
        *value = String::from_utf8_lossy(&out).into_owned();
    }
    Ok(())
}

/// A control byte other than HT (`T_HTTP_CTRLS`).
fn is_ctl(c: u8) -> bool {
    (c < 0x20 && c != b'\t') || c == 0x7f
}

/// Whether `b` holds a control byte other than HT. Every response header
/// value goes through here (in the engine and again in the server), and
/// almost none has one: the bytes are tested in fixed-size blocks without
/// a branch per byte, which the compiler turns into vector instructions;
/// the last block overlaps the one before rather than being tested byte by
/// byte.
pub fn has_ctl(b: &[u8]) -> bool {
    fn ctl(c: u8) -> bool {
        ((c < 0x20) & (c != b'\t')) | (c == 0x7f)
    }
    fn any<const N: usize>(block: &[u8]) -> bool {
        let block: &[u8; N] = block.try_into().expect("a block of N bytes");
        block.iter().fold(false, |acc, &c| acc | ctl(c))
    }
    let len = b.len();
    if len >= 16 {
        b.chunks_exact(16).any(any::<16>) || any::<16>(&b[len - 16..])
    } else if len >= 8 {
        any::<8>(&b[..8]) || any::<8>(&b[len - 8..])
    } else {
        b.iter().fold(false, |acc, &c| acc | ctl(c))
    }
}

/// Whether `name` is a token (RFC 9110 `tchar`), the rule for a header name.
pub fn is_token(name: &[u8]) -> bool {
    name.iter().fold(true, |acc, &c| acc & TCHAR[c as usize])
}

/// Whether a response may carry `name` as a field name: a token in strict
/// mode, visible bytes and obs-text under `HttpProtocolOptions Unsafe`
/// (`ap_scan_vchar_obstext`); never empty.
pub fn is_field_name(name: &[u8], strict: bool) -> bool {
    !name.is_empty()
        && if strict {
            is_token(name)
        } else {
            name.iter().all(|&c| c > b' ' && c != 0x7f)
        }
}

/// Whether `list` holds `tok` as one of its tokens, as Apache's
/// `ap_find_token` answers: tokens are runs of tchar, compared without case,
/// and a token that is a *prefix* of `tok` also counts (`Connection: clo`
/// closes the connection on Apache 2.4.71; observed on the wire).
pub fn find_token(list: &[u8], tok: &[u8]) -> bool {
    let mut i = 0;
    while i < list.len() {
        while i < list.len() && !TCHAR[list[i] as usize] {
            i += 1;
        }
        let start = i;
        while i < list.len() && TCHAR[list[i] as usize] {
            i += 1;
        }
        let word = &list[start..i];
        if !word.is_empty()
            && word.len() <= tok.len()
            && word.eq_ignore_ascii_case(&tok[..word.len()])
        {
            return true;
        }
    }
    false
}

/// RFC 9110 `tchar`, as a table: every response header name passes here.
const TCHAR: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric();
        c += 1;
    }
    let extra = b"!#$%&'*+-.^_`|~";
    let mut i = 0;
    while i < extra.len() {
        t[extra[i] as usize] = true;
        i += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn has_ctl_finds_every_position() {
        for len in 0..48 {
            let clean = vec![b'a'; len];
            assert!(!has_ctl(&clean), "{len}");
            let tabs = vec![b'\t'; len];
            assert!(!has_ctl(&tabs), "{len}");
            for at in 0..len {
                for bad in [0u8, b'\r', b'\n', 0x1f, 0x7f] {
                    let mut v = clean.clone();
                    v[at] = bad;
                    assert!(has_ctl(&v), "{len} {at} {bad}");
                }
                let mut v = clean.clone();
                v[at] = 0xff;
                assert!(!has_ctl(&v));
            }
        }
        assert!(is_token(b"X-Custom_1") && !is_token(b"X A") && !is_token(b"\xe9"));
    }

    fn t(list: &[(&str, &str)]) -> Table {
        Table {
            entries: list
                .iter()
                .map(|(n, v)| (n.to_string(), v.as_bytes().to_vec()))
                .collect(),
        }
    }

    #[test]
    fn set_keeps_first_position_and_drops_the_rest() {
        let mut x = t(&[("A", "1"), ("B", "2"), ("a", "3")]);
        x.set("A", b"9".to_vec());
        assert_eq!(x, t(&[("A", "9"), ("B", "2")]));
        x.set("C", b"c".to_vec());
        assert_eq!(x, t(&[("A", "9"), ("B", "2"), ("C", "c")]));
    }

    #[test]
    fn merge_appends_to_the_first_entry() {
        let mut x = t(&[("A", "1"), ("a", "2")]);
        x.merge("A", b"3");
        assert_eq!(x, t(&[("A", "1, 3"), ("a", "2")]));
        x.merge("B", b"b");
        assert_eq!(x.get("b"), Some(&b"b"[..]));
    }

    #[test]
    fn request_headers_are_joined() {
        let mut h = Headers::new();
        h.push("Accept", "a");
        h.push("X", "1");
        h.push("accept", "b");
        let x = Table::from_request(&h);
        assert_eq!(x, t(&[("Accept", "a, b"), ("X", "1")]));
    }

    #[test]
    fn header_check() {
        let mut ok = vec![("X-A".to_string(), "a\tb\r\n  c".to_string())];
        assert!(check(&mut ok, true).is_ok());
        assert_eq!(ok[0].1, "a\tb c");
        assert!(check(&mut [("X", "a\nb".to_string())], true).is_err());
        assert!(check(&mut [("", "a".to_string())], true).is_err());
        assert!(check(&mut [("X A", "a".to_string())], true).is_err());
        assert!(check(&mut [("X(A)", "a".to_string())], true).is_err());
        // `HttpProtocolOptions Unsafe`: any visible bytes in a name.
        assert!(check(&mut [("X(A)", "a".to_string())], false).is_ok());
        assert!(check(&mut [("X A", "a".to_string())], false).is_err());
        assert!(check(&mut [("X", "a\nb".to_string())], false).is_err());
    }

    #[test]
    fn unset_and_add() {
        let mut x = t(&[("A", "1"), ("a", "2"), ("B", "3")]);
        x.unset("A");
        x.add("B", b"4".to_vec());
        assert_eq!(x, t(&[("B", "3"), ("B", "4")]));
    }
}
