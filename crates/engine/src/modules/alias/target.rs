//! Turning a redirect target into `Location` text the way mod_alias does.
//!
//! `RedirectMatch` results and the one-URL ("Location-style") `Redirect`
//! forms are taken apart with APR's URI parser, put back together without
//! the query and fragment, escaped as a path, and then given their query
//! and fragment back unescaped. That round trip is visible to clients: a
//! decoded `?` captured from the request path becomes a real query
//! separator, `%` in the target becomes `%25`, a password turns into
//! `XXXXXXXX`, a default port disappears. The parser's errors are ignored
//! as Apache ignores them, keeping whatever was filled in before the error.

use crate::uri::escape_path;

/// The parts of a URI as `apr_uri_parse` fills them in.
#[derive(Debug, Default, PartialEq, Eq)]
struct Parts<'a> {
    scheme: Option<&'a str>,
    user: Option<&'a str>,
    password: Option<&'a str>,
    hostname: Option<&'a str>,
    port_str: Option<&'a str>,
    port: u16,
    path: Option<&'a str>,
    query: Option<&'a str>,
    fragment: Option<&'a str>,
}

/// Default ports APR knows, by scheme (case-insensitive).
fn port_of_scheme(scheme: Option<&str>) -> u16 {
    const SCHEMES: &[(&str, u16)] = &[
        ("http", 80),
        ("ftp", 21),
        ("https", 443),
        ("gopher", 70),
        ("ldap", 389),
        ("nntp", 119),
        ("snews", 563),
        ("imap", 143),
        ("pop", 110),
        ("sip", 5060),
        ("rtsp", 554),
        ("wais", 210),
        ("z39.50r", 210),
        ("z39.50s", 210),
        ("prospero", 191),
        ("nfs", 2049),
        ("tip", 3372),
        ("acap", 674),
        ("telnet", 23),
        ("ssh", 22),
    ];
    let Some(s) = scheme else { return 0 };
    SCHEMES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(s))
        .map_or(0, |(_, p)| *p)
}

/// C's `strtol` on a port string, truncated to 16 bits as APR stores it;
/// also whether the whole string was consumed.
fn strtol_port(s: &str) -> (u16, bool) {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
        i += 1;
    }
    let mut negative = false;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        negative = b[i] == b'-';
        i += 1;
    }
    let start = i;
    let mut v: i64 = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        v = (v * 10 + i64::from(b[i] - b'0')).min(i64::from(i32::MAX) + 1);
        i += 1;
    }
    if i == start {
        // No digits: strtol consumes nothing.
        return (0, b.is_empty());
    }
    let v = if negative { -v } else { v };
    (v as u16, i == b.len())
}

/// `apr_uri_parse`, keeping what it filled in when it gives up.
fn parse(uri: &str) -> Parts<'_> {
    let mut p = Parts::default();
    let b = uri.as_bytes();
    if b.first() == Some(&b'/') {
        if b.get(1) == Some(&b'/') && b.get(2) != Some(&b'/') {
            authority(uri, 2, &mut p);
        } else {
            path(uri, 0, &mut p);
        }
        return p;
    }
    // The scheme: a letter, then letters, digits, `+`, `-`, `.`, then `:`.
    let mut s = 0;
    if b.first().is_some_and(u8::is_ascii_alphabetic) {
        s = 1;
        while s < b.len() && (b[s].is_ascii_alphanumeric() || matches!(b[s], b'+' | b'-' | b'.')) {
            s += 1;
        }
    }
    if s != 0 && b.get(s) == Some(&b':') {
        p.scheme = Some(&uri[..s]);
        s += 1;
    } else {
        s = 0;
    }
    if b.get(s) != Some(&b'/') || b.get(s + 1) != Some(&b'/') {
        if s == 0 {
            // No scheme, no authority: a `:` before the first `/` is an error.
            let end = uri.find('/').unwrap_or(uri.len());
            if uri[..end].contains(':') {
                return p;
            }
        }
        path(uri, s, &mut p);
        return p;
    }
    authority(uri, s + 2, &mut p);
    p
}

/// The path, query and fragment from `start` on.
fn path<'a>(uri: &'a str, start: usize, p: &mut Parts<'a>) {
    let rest = &uri[start..];
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    if end != 0 {
        p.path = Some(&rest[..end]);
    }
    let rest = &rest[end..];
    if let Some(q) = rest.strip_prefix('?') {
        match q.find('#') {
            Some(h) => {
                p.query = Some(&q[..h]);
                p.fragment = Some(&q[h + 1..]);
            }
            None => p.query = Some(q),
        }
    } else if let Some(f) = rest.strip_prefix('#') {
        p.fragment = Some(f);
    }
}

/// `user:password@host:port`, then the path.
fn authority<'a>(uri: &'a str, start: usize, p: &mut Parts<'a>) {
    let rest = &uri[start..];
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let mut hostinfo = &rest[..end];
    if let Some(at) = hostinfo.rfind('@') {
        let userinfo = &hostinfo[..at];
        match userinfo.find(':') {
            Some(c) => {
                p.user = Some(&userinfo[..c]);
                p.password = Some(&userinfo[c + 1..]);
            }
            None => p.user = Some(userinfo),
        }
        hostinfo = &hostinfo[at + 1..];
    }
    let port_at = if hostinfo.starts_with('[') {
        let Some(close) = hostinfo.find(']') else {
            return;
        };
        if hostinfo[close + 1..].starts_with(':') {
            p.hostname = Some(&hostinfo[1..close]);
            Some(close + 1)
        } else {
            // APR takes everything between the first and the last byte.
            p.hostname = Some(&hostinfo[1..hostinfo.len() - 1]);
            None
        }
    } else {
        match hostinfo.find(':') {
            Some(c) => {
                p.hostname = Some(&hostinfo[..c]);
                Some(c)
            }
            None => {
                p.hostname = Some(hostinfo);
                None
            }
        }
    };
    if let Some(c) = port_at {
        let port_str = &hostinfo[c + 1..];
        p.port_str = Some(port_str);
        if port_str.is_empty() {
            p.port = port_of_scheme(p.scheme);
        } else {
            let (port, whole) = strtol_port(port_str);
            p.port = port;
            if !whole {
                return;
            }
        }
    }
    path(uri, start + end, p);
}

/// `apr_uri_unparse` with `APR_URI_UNP_OMITQUERY` (the password masked).
fn unparse_without_query(p: &Parts<'_>) -> String {
    let mut site = String::new();
    if p.user.is_some() || p.password.is_some() {
        site.push_str(p.user.unwrap_or(""));
        if p.password.is_some() {
            site.push_str(":XXXXXXXX");
        }
        site.push('@');
    }
    let mut out = String::new();
    if let Some(host) = p.hostname {
        let v6 = host.contains(':');
        let default_port =
            p.port_str.is_none() || p.port == 0 || p.port == port_of_scheme(p.scheme);
        out.push_str("//");
        out.push_str(&site);
        if v6 {
            out.push('[');
        }
        out.push_str(host);
        if v6 {
            out.push(']');
        }
        if !default_port {
            out.push(':');
            out.push_str(p.port_str.unwrap_or(""));
        }
    } else {
        out.push_str(&site);
    }
    if let Some(scheme) = p.scheme {
        out.insert(0, ':');
        out.insert_str(0, scheme);
    }
    out.push_str(p.path.unwrap_or(""));
    out
}

/// What mod_alias sends for a `RedirectMatch` substitution or a
/// Location-style target: everything before the query escaped as a path,
/// query and fragment kept as they are.
pub fn reassemble(found: &str) -> String {
    let p = parse(found);
    let path = unparse_without_query(&p);
    let mut out = escape_path(&crate::path_text::bytes(&path)).into_owned();
    if let Some(q) = p.query {
        out.push('?');
        out.push_str(q);
    }
    if let Some(f) = p.fragment {
        out.push('#');
        out.push_str(f);
    }
    out
}

/// `ap_is_url`: a scheme (letters, digits, `+`, `-`, `.`) and a colon.
pub fn is_url(u: &str) -> bool {
    match u.find(':') {
        Some(0) | None => false,
        Some(i) => u[..i]
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.')),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        assert_eq!(
            reassemble("http://example.com/xa?b"),
            "http://example.com/xa?b"
        );
        assert_eq!(reassemble("/sub/a b#f g"), "/sub/a%20b#f g");
        assert_eq!(reassemble("http://e.com/a%20b"), "http://e.com/a%2520b");
        assert_eq!(reassemble("http://e.com:80/p"), "http://e.com/p");
        assert_eq!(reassemble("http://e.com:8080/p"), "http://e.com:8080/p");
        assert_eq!(reassemble("http://e.com:/p"), "http://e.com/p");
        assert_eq!(
            reassemble("https://u:pw@e.com/p"),
            "https://u:XXXXXXXX@e.com/p"
        );
        assert_eq!(reassemble("http://[::1]:81/p"), "http://%5b::1%5d:81/p");
        assert_eq!(reassemble("mailto:a@b"), "mailto:a@b");
        assert_eq!(reassemble("http://e.com:8x/p"), "http://e.com:8x");
        assert_eq!(reassemble("a:b/c"), "a:b/c");
        assert_eq!(reassemble("x/a:b"), "x/a:b");
        assert_eq!(reassemble("a/b?"), "a/b?");
        assert_eq!(reassemble("//host/p"), "//host/p");
        assert_eq!(reassemble("///p"), "///p");
    }

    #[test]
    fn relative_with_colon_is_dropped() {
        assert_eq!(reassemble("ab:c"), "ab:c");
        assert_eq!(reassemble("1ab:c/d"), "");
    }

    #[test]
    fn urls() {
        assert!(is_url("http://x"));
        assert!(is_url("mailto:x"));
        assert!(is_url("a+b.c-d:"));
        assert!(!is_url(":x"));
        assert!(!is_url("/x:y"));
        assert!(!is_url("noscheme"));
    }
}
