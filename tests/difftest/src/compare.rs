//! Deciding whether two servers answered the same, as a client would judge.
//!
//! What is compared: status line, every header except those that only
//! identify the server or the moment (`Date`, `Server`, `Keep-Alive`,
//! `Connection`), bodies, stray bytes and how the connection ended. Header
//! names are case-insensitive; the order of headers of the same name is kept,
//! the order between different names is not (clients do not see it).
//!
//! What is normalised first: each server's own port (the two listen on
//! different ports), the product name in `ServerSignature` lines, multipart/byteranges boundaries (random by design), the
//! order of the methods in `Allow` (Apache lists them in hash-table order,
//! which changes from one process to the next), and times taken from the
//! clock (`Expires`, `Cache-Control: max-age`), which may differ by a few
//! seconds between the two requests.

use crate::client::Exchange;
use crate::httpdate;
use crate::requests::RequestOptions;
use crate::response::Response;
use std::collections::{BTreeMap, BTreeSet};

/// Headers that never count.
const UNCOMPARED: [&str; 4] = ["date", "server", "keep-alive", "connection"];
/// Product names in `ServerSignature` address lines: each server names
/// itself there (a deliberate difference, listed in docs/deviations.md).
const PRODUCT_TOKENS: [&str; 2] = ["Apache", "htaccel"];
/// Seconds two clock-derived values may differ by.
const CLOCK_TOLERANCE: i64 = 5;

/// A response with everything server-specific replaced by placeholders.
#[derive(Debug)]
pub struct Normal {
    pub status_line: String,
    pub headers: BTreeMap<String, Vec<String>>,
    pub body: Vec<u8>,
}

/// The ports a server of a case listens on: its plain port, and for
/// `needs https` cases its TLS port. Each is normalised to a placeholder
/// (`:PORT`, `:TLSPORT`) before comparing.
#[derive(Clone, Copy, Debug)]
pub struct Ports {
    pub plain: u16,
    pub tls: Option<u16>,
}

impl From<u16> for Ports {
    fn from(plain: u16) -> Ports {
        Ports { plain, tls: None }
    }
}

impl Ports {
    fn fix(&self, s: &str) -> String {
        let s = s.replace(&format!(":{}", self.plain), ":PORT");
        match self.tls {
            Some(t) => s.replace(&format!(":{t}"), ":TLSPORT"),
            None => s,
        }
    }
    fn fix_bytes(&self, b: &[u8]) -> Vec<u8> {
        let out = replace(b, format!(":{}", self.plain).as_bytes(), b":PORT");
        match self.tls {
            Some(t) => replace(&out, format!(":{t}").as_bytes(), b":TLSPORT"),
            None => out,
        }
    }
}

/// Normalises one response of a server listening on `ports`.
pub fn normalise(r: &Response, ports: Ports, opts: &RequestOptions) -> Normal {
    let boundary = r
        .header("content-type")
        .filter(|t| t.to_ascii_lowercase().starts_with("multipart/"))
        .and_then(|t| t.split_once("boundary="))
        .map(|(_, b)| b.trim_matches('"').to_string())
        .filter(|b| !b.is_empty());
    let fix = |s: &str| {
        let s = ports.fix(s);
        match &boundary {
            Some(b) => s.replace(b.as_str(), "BOUNDARY"),
            None => s,
        }
    };
    let mut headers: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (name, value) in &r.headers {
        let name = name.to_ascii_lowercase();
        if UNCOMPARED.contains(&name.as_str())
            || opts.ignore_headers.contains(&name)
            || ((opts.ignore_body || opts.mask_values || opts.compare_from.is_some())
                && name == "content-length")
        {
            continue;
        }
        let value = if name == "allow" {
            sorted_list(value)
        } else {
            fix(value)
        };
        headers.entry(name).or_default().push(value);
    }
    let mut body = ports.fix_bytes(&r.body);
    if let Some(b) = &boundary {
        body = replace(&body, b.as_bytes(), b"BOUNDARY");
        // The boundary's length varies, and the body's length with it: a
        // length that matches the body is compared as the normalised body's;
        // without a body (HEAD) it cannot be told from the headers alone.
        if let Some(cl) = headers.get_mut("content-length") {
            for v in cl.iter_mut() {
                if r.body.is_empty() {
                    *v = "(depends on the boundary)".into();
                } else if *v == r.body.len().to_string() {
                    *v = body.len().to_string();
                }
            }
        }
    }
    let before = body.len();
    for product in PRODUCT_TOKENS {
        let from = format!("<address>{product} Server at ");
        body = replace(&body, from.as_bytes(), b"<address>SERVER Server at ");
    }
    body = mask_stream_tag(&body);
    if body.len() != before {
        if let Some(cl) = headers.get_mut("content-length") {
            for v in cl.iter_mut() {
                if *v == before.to_string() {
                    *v = body.len().to_string();
                }
            }
        }
    }
    if opts.ignore_body {
        body.clear();
    }
    if let Some(text) = &opts.compare_from {
        body = match memchr::memmem::find(&body, text.as_bytes()) {
            Some(at) => body[at..].to_vec(),
            None => format!("(no section starting with {text:?})").into_bytes(),
        };
    }
    if !opts.mask_json.is_empty() {
        body = crate::jsonmask::mask(&body, &opts.mask_json);
    }
    if opts.mask_values {
        body = crate::valuemask::mask(&body, &opts.mask_values_drop);
    }
    Normal {
        status_line: fix(&r.status_line),
        headers,
        body,
    }
}

/// A comma-separated list in sorted order.
fn sorted_list(v: &str) -> String {
    let mut items: Vec<&str> = v.split(',').map(str::trim).collect();
    items.sort_unstable();
    items.join(",")
}

/// Every difference a client could notice between Apache's exchange `a`
/// (on `a_port`) and the other server's `b` (on `b_port`). Empty: same.
pub fn differences(
    a: &Exchange,
    a_port: impl Into<Ports>,
    b: &Exchange,
    b_port: impl Into<Ports>,
    opts: &RequestOptions,
) -> Vec<String> {
    let (a_port, b_port) = (a_port.into(), b_port.into());
    let mut out = Vec::new();
    if a.tls != b.tls {
        out.push(format!(
            "TLS session: Apache {}, htaccel {}",
            a.tls.as_deref().unwrap_or("none"),
            b.tls.as_deref().unwrap_or("none")
        ));
    }
    if a.responses.len() != b.responses.len() {
        out.push(format!(
            "number of responses: Apache {}, htaccel {}",
            a.responses.len(),
            b.responses.len()
        ));
    }
    for (i, (ra, rb)) in a.responses.iter().zip(&b.responses).enumerate() {
        let which = if a.responses.len() > 1 {
            format!("response {}: ", i + 1)
        } else {
            String::new()
        };
        let (na, nb) = (normalise(ra, a_port, opts), normalise(rb, b_port, opts));
        if na.status_line != nb.status_line {
            out.push(format!(
                "{which}status line: Apache `{}`, htaccel `{}`",
                na.status_line, nb.status_line
            ));
        }
        let names: BTreeSet<&String> = na.headers.keys().chain(nb.headers.keys()).collect();
        for name in names {
            let (va, vb) = (na.headers.get(name), nb.headers.get(name));
            if !same_values(name, va, vb) {
                out.push(format!(
                    "{which}header {name}: Apache {}, htaccel {}",
                    show_values(va),
                    show_values(vb)
                ));
            }
        }
        if na.body != nb.body {
            out.push(format!(
                "{which}body: {}",
                body_difference(&na.body, &nb.body)
            ));
        }
        // A section neither answer has is not a section compared.
        if let Some(text) = &opts.compare_from {
            if !na.body.starts_with(text.as_bytes()) && !nb.body.starts_with(text.as_bytes()) {
                out.push(format!("{which}body: neither answer has {text:?}"));
            }
        }
    }
    let (ta, tb) = (a_port.fix_bytes(&a.trailing), b_port.fix_bytes(&b.trailing));
    if ta != tb {
        out.push(format!(
            "bytes after the last response: {}",
            body_difference(&ta, &tb)
        ));
    }
    if a.end != b.end {
        out.push(format!(
            "connection: Apache: {}; htaccel: {}",
            a.end.describe(),
            b.end.describe()
        ));
    }
    out
}

fn same_values(name: &str, a: Option<&Vec<String>>, b: Option<&Vec<String>>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_value(name, x, y))
        }
        (None, None) => true,
        _ => false,
    }
}

/// Exact, except for values computed from the clock.
fn same_value(name: &str, a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    match name {
        "expires" => match (httpdate::parse(a), httpdate::parse(b)) {
            (Some(x), Some(y)) => (x - y).abs() <= CLOCK_TOLERANCE,
            _ => false,
        },
        "cache-control" => {
            let (xa, xb): (Vec<&str>, Vec<&str>) = (
                a.split(',').map(str::trim).collect(),
                b.split(',').map(str::trim).collect(),
            );
            xa.len() == xb.len() && xa.iter().zip(&xb).all(|(x, y)| same_directive(x, y))
        }
        _ => same_time_stamps(a, b),
    }
}

/// mod_headers' `%t` (`t=<µs since the epoch>`, within the clock
/// tolerance) and `%D` (`D=<µs the request took>`, any value) in values
/// that are otherwise the same.
fn same_time_stamps(a: &str, b: &str) -> bool {
    fn split(v: &str) -> (String, Vec<i64>) {
        let mut text = String::new();
        let mut times = Vec::new();
        let mut rest = v;
        while let Some(i) = rest.find("t=").into_iter().chain(rest.find("D=")).min() {
            let digits = rest[i + 2..].bytes().take_while(u8::is_ascii_digit).count();
            text.push_str(&rest[..i + 2]);
            if digits > 0 && rest.as_bytes()[i] == b't' {
                times.push(rest[i + 2..i + 2 + digits].parse().unwrap_or(i64::MIN));
            }
            text.push_str(if digits > 0 { "#" } else { "" });
            rest = &rest[i + 2 + digits..];
        }
        text.push_str(rest);
        (text, times)
    }
    let ((ta, xa), (tb, xb)) = (split(a), split(b));
    ta == tb
        && xa.len() == xb.len()
        && xa
            .iter()
            .zip(&xb)
            .all(|(x, y)| x.abs_diff(*y) <= CLOCK_TOLERANCE as u64 * 1_000_000)
}

/// `max-age=N` and `s-maxage=N` agree within the clock tolerance.
fn same_directive(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let (Some((ka, va)), Some((kb, vb))) = (a.split_once('='), b.split_once('=')) else {
        return false;
    };
    let seconds = |v: &str| v.trim_matches('"').parse::<i64>().ok();
    ka.eq_ignore_ascii_case(kb)
        && matches!(ka.to_ascii_lowercase().as_str(), "max-age" | "s-maxage")
        && matches!((seconds(va), seconds(vb)), (Some(x), Some(y)) if (x - y).abs() <= CLOCK_TOLERANCE)
}

fn show_values(v: Option<&Vec<String>>) -> String {
    match v {
        None => "(absent)".into(),
        Some(v) => v
            .iter()
            .map(|s| format!("`{s}`"))
            .collect::<Vec<_>>()
            .join(" + "),
    }
}

fn body_difference(a: &[u8], b: &[u8]) -> String {
    let at = a
        .iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let mut text = format!(
        "Apache {} bytes, htaccel {} bytes, first difference at byte {at}",
        a.len(),
        b.len()
    );
    text.push_str(&line_difference(a, b));
    text
}

/// Bodies of text small enough to read: the lines only one of them has
/// (a script's environment dump, a page), so that a failure shows what
/// differs and not just where.
fn line_difference(a: &[u8], b: &[u8]) -> String {
    const READABLE: usize = 16 * 1024;
    let (Ok(a), Ok(b)) = (std::str::from_utf8(a), std::str::from_utf8(b)) else {
        return String::new();
    };
    if a.len() > READABLE || b.len() > READABLE {
        return String::new();
    }
    let only = |x: &str, y: &str| -> Vec<String> {
        let mut rest: Vec<&str> = y.lines().collect();
        x.lines()
            .filter(|l| match rest.iter().position(|r| r == l) {
                Some(i) => {
                    rest.remove(i);
                    false
                }
                None => true,
            })
            .map(str::to_string)
            .collect()
    };
    let mut out = String::new();
    for line in only(a, b) {
        out.push_str(&format!("\n      Apache only:  {line}"));
    }
    for line in only(b, a) {
        out.push_str(&format!("\n      htaccel only: {line}"));
    }
    out
}

/// `hay` with every occurrence of `needle` replaced.
/// mod_http2's `H2_STREAM_TAG` in a script's output names the serving
/// process and its connection counter, which differ between any two
/// servers: each run of digits becomes `N`, so that the tag's shape
/// (process, connection, stream) is still compared.
fn mask_stream_tag(body: &[u8]) -> Vec<u8> {
    const NAME: &[u8] = b"H2_STREAM_TAG=";
    let mut out = Vec::with_capacity(body.len());
    let mut rest = body;
    while let Some(at) = memchr::memmem::find(rest, NAME) {
        out.extend_from_slice(&rest[..at + NAME.len()]);
        rest = &rest[at + NAME.len()..];
        let end = rest
            .iter()
            .position(|b| !(b.is_ascii_digit() || *b == b'-'))
            .unwrap_or(rest.len());
        let mut in_digits = false;
        for &b in &rest[..end] {
            if b.is_ascii_digit() {
                if !in_digits {
                    out.push(b'N');
                }
                in_digits = true;
            } else {
                out.push(b);
                in_digits = false;
            }
        }
        rest = &rest[end..];
    }
    out.extend_from_slice(rest);
    out
}

pub fn replace(hay: &[u8], needle: &[u8], with: &[u8]) -> Vec<u8> {
    if needle.is_empty() {
        return hay.to_vec();
    }
    let mut out = Vec::with_capacity(hay.len());
    let mut i = 0;
    while i < hay.len() {
        if hay[i..].starts_with(needle) {
            out.extend_from_slice(with);
            i += needle.len();
        } else {
            out.push(hay[i]);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mod_headers_time_stamps() {
        assert!(same_value(
            "x-a",
            "t=1795243757485436 D=247",
            "t=1795243758000000 D=12"
        ));
        assert!(!same_value(
            "x-a",
            "t=1795243757485436",
            "t=1795243757485436 D=1"
        ));
        assert!(!same_value(
            "x-a",
            "t=1795243757485436",
            "t=1795243767485436"
        ));
        assert!(!same_value("x-a", "a=1", "a=2"));
    }
    use crate::client::End;

    fn resp(headers: &[(&str, &str)], body: &str) -> Response {
        Response {
            status_line: "HTTP/1.1 200 OK".into(),
            status: 200,
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            body: body.as_bytes().to_vec(),
        }
    }

    fn ex(r: Response) -> Exchange {
        Exchange {
            tls: None,
            responses: vec![r],
            trailing: Vec::new(),
            end: End::Closed,
        }
    }

    #[test]
    fn ignores_identity_headers_and_ports() {
        let a = ex(resp(
            &[("Date", "x"), ("Location", "http://localhost:1111/d/")],
            "see :1111",
        ));
        let b = ex(resp(
            &[("date", "y"), ("location", "http://localhost:2222/d/")],
            "see :2222",
        ));
        assert!(differences(&a, 1111, &b, 2222, &Default::default()).is_empty());
    }

    #[test]
    fn boundaries_and_clock_tolerance() {
        let a = ex(resp(
            &[
                ("Content-Type", "multipart/byteranges; boundary=abc123"),
                ("Expires", "Sun, 06 Nov 1994 08:49:37 GMT"),
                ("Cache-Control", "max-age=60, public"),
            ],
            "--abc123\r\n",
        ));
        let b = ex(resp(
            &[
                ("Content-Type", "multipart/byteranges; boundary=zz9"),
                ("Expires", "Sun, 06 Nov 1994 08:49:39 GMT"),
                ("Cache-Control", "max-age=58, public"),
            ],
            "--zz9\r\n",
        ));
        assert!(differences(&a, 1, &b, 2, &Default::default()).is_empty());
    }

    #[test]
    fn reports_values_order_and_absence() {
        let a = ex(resp(&[("X", "1"), ("X", "2"), ("ETag", "\"a\"")], "b"));
        let b = ex(resp(&[("X", "2"), ("X", "1")], "c"));
        let d = differences(&a, 1, &b, 2, &Default::default());
        assert_eq!(d.len(), 3, "{d:?}");
        assert!(d[0].starts_with("header etag"));
        assert!(d[1].starts_with("header x"));
        assert!(d[2].starts_with("body"));
    }

    #[test]
    fn stream_tags_are_compared_by_shape() {
        assert_eq!(
            super::mask_stream_tag(b"A=1\nH2_STREAM_TAG=18557-2-1\nB=2"),
            b"A=1\nH2_STREAM_TAG=N-N-N\nB=2".to_vec()
        );
        assert_eq!(
            super::mask_stream_tag(b"H2_STREAM_TAG=3-1"),
            b"H2_STREAM_TAG=N-N".to_vec()
        );
    }
}
