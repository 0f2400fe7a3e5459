//! The request-target and the host name: the checks Apache makes on them
//! while it reads a request, before any module sees it.
//!
//! * `ap_parse_uri` splits the target with APR's `apr_uri_parse` (or
//!   `apr_uri_parse_hostinfo` for `CONNECT`); a target it cannot split and
//!   a path that does not start with `/` (except `OPTIONS *`) are answered
//!   400, and so are a fragment or a user name under `HttpProtocolOptions
//!   Strict` (the default; `Unsafe` lets both through).
//! * `fix_hostname` (server/vhost.c) validates the host of an absolute
//!   target, or else of the `Host` header: no `/`, `\` or `..`, a port
//!   1..=65535, IPv6 literals that parse; in `Strict` mode also
//!   letters/digits/`-`/`_`/`.` only, a dotted quad with exactly four parts
//!   and no leading zeros, a top-level label starting with a letter, and no
//!   purely numeric name. It lowercases the name and drops one trailing dot.
//!
//! Everything here is a pure function of bytes, so the unit tests below can
//! hold the observed answers of Apache 2.4.71 row by row.

use crate::chars::{is_alpha, is_digit, is_hex};
use std::ops::Range;

/// The parts of a request-target that the protocol layer needs, as byte
/// ranges of the target.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Uri {
    pub scheme: Option<Range<usize>>,
    pub hostname: Option<Range<usize>>,
    pub port_str: Option<Range<usize>>,
    pub path: Option<Range<usize>>,
    pub user: bool,
    pub fragment: bool,
}

fn is_scheme_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.')
}

/// `strtol` acceptance of a port string as APR uses it: an optional sign and
/// at least one digit, nothing after.
fn strtol_ok(s: &[u8]) -> bool {
    let d = match s.first() {
        Some(b'+') | Some(b'-') => &s[1..],
        _ => s,
    };
    !d.is_empty() && d.iter().all(|&c| is_digit(c))
}

/// `apr_uri_parse`. `None` is APR's `APR_EGENERAL` (a bad port or an
/// unterminated IPv6 literal); everything else parses.
pub(crate) fn parse_uri(u: &[u8]) -> Option<Uri> {
    let mut out = Uri::default();
    let n = u.len();
    let mut start = 0usize; // start of the path part
    if u.first() != Some(&b'/') {
        // Scheme: a letter, then letters, digits, '+', '-', '.', then ':'.
        if n > 0 && is_alpha(u[0]) {
            let mut s = 1;
            while s < n && is_scheme_char(u[s]) {
                s += 1;
            }
            if s < n && u[s] == b':' {
                out.scheme = Some(0..s);
                if u.get(s + 1) == Some(&b'/') && u.get(s + 2) == Some(&b'/') {
                    start = authority(u, s + 3, &mut out)?;
                } else {
                    start = s + 1;
                }
            }
        }
    }
    path_part(u, start, &mut out);
    Some(out)
}

/// The authority after `scheme://`: `[user[:pass]@]host[:port]`. Returns
/// where the path starts.
fn authority(u: &[u8], hostinfo: usize, out: &mut Uri) -> Option<usize> {
    let end = u[hostinfo..]
        .iter()
        .position(|&c| matches!(c, b'/' | b'?' | b'#'))
        .map_or(u.len(), |p| hostinfo + p);
    let mut host = hostinfo;
    if let Some(at) = u[hostinfo..end].iter().rposition(|&c| c == b'@') {
        out.user = true;
        host = hostinfo + at + 1;
    }
    let (name, colon) = if u.get(host) == Some(&b'[') {
        let rb = u[host..end].iter().position(|&c| c == b']')? + host;
        let colon = if rb + 1 < end && u[rb + 1] == b':' {
            Some(rb + 1)
        } else {
            None
        };
        // APR keeps what lies between the brackets; a byte between ']' and
        // the end that is not ':' is dropped with the brackets.
        (host + 1..rb, colon)
    } else {
        match u[host..end].iter().position(|&c| c == b':') {
            Some(p) => (host..host + p, Some(host + p)),
            None => (host..end, None),
        }
    };
    out.hostname = Some(name);
    if let Some(c) = colon {
        out.port_str = Some(c + 1..end);
        if c + 1 != end && !strtol_ok(&u[c + 1..end]) {
            return None;
        }
    }
    Some(end)
}

fn path_part(u: &[u8], start: usize, out: &mut Uri) {
    let rest = &u[start..];
    let p = memchr::memchr2(b'?', b'#', rest).unwrap_or(rest.len());
    if p > 0 {
        out.path = Some(start..start + p);
    }
    if p < rest.len() {
        // A '#' anywhere after the path (in the query or right after the
        // path) starts a fragment.
        out.fragment = rest[p..].contains(&b'#');
    }
}

/// `apr_uri_parse_hostinfo`, used for `CONNECT host:port`.
pub(crate) fn parse_hostinfo(u: &[u8]) -> Option<Uri> {
    let (name, colon) = if u.first() == Some(&b'[') {
        let rb = u.iter().position(|&c| c == b']')?;
        if u.get(rb + 1) != Some(&b':') {
            return None;
        }
        (1..rb, rb + 1)
    } else {
        let c = u.iter().position(|&c| c == b':')?;
        (0..c, c)
    };
    let port = &u[colon + 1..];
    if port.is_empty() || !strtol_ok(port) {
        return None;
    }
    Some(Uri {
        hostname: Some(name),
        port_str: Some(colon + 1..u.len()),
        ..Uri::default()
    })
}

/// What `ap_parse_uri` and the strict checks of `ap_parse_request_line`
/// decide about a target: `Err(())` is a 400. On success, the host named by
/// the target (absolute `http` target, or `CONNECT`), if any.
#[inline]
pub(crate) fn check_target(
    method: &[u8],
    target: &[u8],
    secure: bool,
    strict: bool,
) -> Result<TargetHost, ()> {
    // ap_parse_uri treats a run of leading slashes as one: "//x" is a path.
    let mut skip = 0;
    while target.len() > skip + 1 && target[skip] == b'/' && target[skip + 1] == b'/' {
        skip += 1;
    }
    let t = &target[skip..];
    let connect = method == b"CONNECT";
    let uri = if connect {
        parse_hostinfo(t)
    } else {
        parse_uri(t)
    }
    .ok_or(())?;
    if let Some(p) = &uri.path {
        let path = &t[p.clone()];
        if path[0] != b'/' && !(method == b"OPTIONS" && path == b"*") {
            return Err(());
        }
    }
    if strict && (uri.fragment || uri.user) {
        return Err(());
    }
    let own_scheme: &[u8] = if secure { b"https" } else { b"http" };
    let scheme = uri.scheme.as_ref().map(|r| &t[r.clone()]);
    let host_from_uri = connect || scheme.is_some_and(|s| s.eq_ignore_ascii_case(own_scheme));
    // ap_post_read_request: only http and https targets are served.
    let scheme_ok =
        scheme.is_none_or(|s| s.eq_ignore_ascii_case(b"http") || s.eq_ignore_ascii_case(b"https"));
    let off = |r: Range<usize>| r.start + skip..r.end + skip;
    Ok(TargetHost {
        hostname: if host_from_uri {
            uri.hostname.map(off)
        } else {
            None
        },
        port_str: if host_from_uri {
            uri.port_str.map(off)
        } else {
            None
        },
        scheme_ok,
    })
}

/// The host part of a target, as ranges of the target.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct TargetHost {
    pub hostname: Option<Range<usize>>,
    pub port_str: Option<Range<usize>>,
    /// False for a scheme other than http/https: answered 400 after the
    /// headers are read (`ap_post_read_request`).
    pub scheme_ok: bool,
}

/// A validated host name: lowercased, without port and brackets, one
/// trailing dot removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Host {
    pub name: String,
    pub v6: bool,
}

/// `fix_hostname` for a host taken from the request-target (already without
/// port and brackets). `Ok(None)`: empty, left unset.
pub(crate) fn fix_uri_host(host: &[u8], strict: bool) -> Result<Option<Host>, ()> {
    if host.is_empty() {
        return Ok(None);
    }
    if host.iter().all(|&c| is_digit(c)) {
        if strict {
            return Err(());
        }
        // `Unsafe`: a purely numeric name is taken as it is.
        let name = host.iter().map(|&c| c as char).collect();
        return Ok(Some(Host { name, v6: false }));
    }
    let v6 = host.contains(&b':');
    fix(host, v6, strict).map(Some)
}

/// `fix_hostname` for a `Host` header value: whether it names a host (an
/// empty value leaves the host name unset), or `Err` for a 400. Nothing is
/// allocated: the engine derives the host name from the header itself.
#[inline]
pub(crate) fn host_header_ok(v: &[u8], strict: bool) -> Result<bool, ()> {
    if v.is_empty() {
        return Ok(false);
    }
    if v.iter().all(|&c| is_digit(c)) {
        // A purely numeric host name is refused in strict mode, taken as
        // it is otherwise.
        return if strict { Err(()) } else { Ok(true) };
    }
    let host = parse_addr_port(v)?;
    check(host, v[0] == b'[', strict)?;
    Ok(true)
}

/// `apr_parse_addr_port` as `fix_hostname` uses it: the host part of
/// `host[:port]` or `[v6][:port]`; a port must be 1..=65535, a scope id is
/// refused, an IPv6 literal must parse.
fn parse_addr_port(s: &[u8]) -> Result<&[u8], ()> {
    let mut last = s.len(); // exclusive end of the host part
    let mut ch = s.len();
    while ch > 0 && is_digit(s[ch - 1]) {
        ch -= 1;
    }
    // `ch` is the index just after the last non-digit; s[ch - 1] is that byte.
    if ch > 0 && s[ch - 1] == b':' && ch < s.len() {
        if ch - 1 == 0 {
            return Err(());
        }
        let port = &s[ch..];
        let value = port.iter().try_fold(0u32, |acc, &c| {
            acc.checked_mul(10)?.checked_add((c - b'0') as u32)
        });
        match value {
            Some(p) if (1..=65535).contains(&p) => {}
            _ => return Err(()),
        }
        last = ch - 1;
    }
    let host = &s[..last];
    if host.first() == Some(&b'[') {
        let rb = host.iter().position(|&c| c == b']').ok_or(())?;
        if rb != host.len() - 1 {
            return Err(());
        }
        let inner = &host[1..rb];
        if inner.contains(&b'%') {
            return Err(()); // scope id
        }
        let text = std::str::from_utf8(inner).map_err(|_| ())?;
        text.parse::<std::net::Ipv6Addr>().map_err(|_| ())?;
        return Ok(inner);
    }
    Ok(host)
}

/// Validate a host name as `fix_hostname` does; returns it without its
/// one trailing dot.
fn check(host: &[u8], v6: bool, strict: bool) -> Result<&[u8], ()> {
    if v6 {
        for (i, &c) in host.iter().enumerate() {
            let next = host.get(i + 1).copied();
            match c {
                c if is_hex(c) => {}
                b':' if next == Some(b'.') => return Err(()),
                b':' => {}
                b'.' if matches!(next, Some(b':') | Some(b'.')) => return Err(()),
                b'.' => {}
                _ => return Err(()),
            }
        }
        if host.windows(2).filter(|w| w == b"::").count() > 1 {
            return Err(());
        }
        return Ok(host);
    }
    for (i, &c) in host.iter().enumerate() {
        match c {
            b'.' if host.get(i + 1) == Some(&b'.') => return Err(()),
            b'/' | b'\\' => return Err(()),
            _ => {}
        }
    }
    let h = host.strip_suffix(b".").unwrap_or(host);
    if strict {
        strict_hostname(h)?;
    }
    Ok(h)
}

/// Validate and normalise: lowercase, one trailing dot removed.
fn fix(host: &[u8], v6: bool, strict: bool) -> Result<Host, ()> {
    let h = check(host, v6, strict)?;
    let name = h.iter().map(|&c| c.to_ascii_lowercase() as char).collect();
    Ok(Host { name, v6 })
}

/// `strict_hostname_check`.
fn strict_hostname(h: &[u8]) -> Result<(), ()> {
    let mut dotted = true;
    let mut leading_zero = false;
    let mut dots = 0;
    for (i, &c) in h.iter().enumerate() {
        if is_alpha(c) || c == b'-' || c == b'_' {
            dotted = false;
        } else if c == b'.' {
            dots += 1;
            if h.get(i + 1) == Some(&b'0') && h.get(i + 2).is_some_and(|&d| is_digit(d)) {
                leading_zero = true;
            }
        } else if !is_digit(c) {
            return Err(());
        }
    }
    if dotted {
        if h.first() == Some(&b'.')
            || (h.first() == Some(&b'0') && h.get(1).is_some_and(|&d| is_digit(d)))
        {
            leading_zero = true;
        }
        if leading_zero || dots != 3 {
            return Err(());
        }
    } else if let Some(dot) = h.iter().rposition(|&c| c == b'.') {
        // The top-level label must start with a letter.
        if let Some(&first) = h.get(dot + 1) {
            if !is_alpha(first) {
                return Err(());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(method: &str, t: &str) -> Result<Option<String>, ()> {
        let th = check_target(method.as_bytes(), t.as_bytes(), false, true)?;
        if !th.scheme_ok {
            return Err(());
        }
        Ok(th.hostname.map(|r| t[r].to_string()))
    }

    /// Request-targets, with the status Apache 2.4.71 answered for
    /// `<method> <target> HTTP/1.1` plus `Host: x` (raw request through a
    /// socket; 200/404/405 mean the protocol layer let it through).
    #[test]
    fn targets_as_apache() {
        let rows: &[(&str, &str, u16)] = &[
            ("GET", "/", 200),
            ("GET", "//a", 404),
            ("GET", "/\u{e9}", 404),
            ("GET", "a", 400),
            ("GET", "*", 400),
            ("OPTIONS", "*", 200),
            ("GET", "/#a", 400),
            ("GET", "/?a#b", 400),
            ("GET", "http://u:p@x/", 400),
            ("GET", "http://@x/", 400),
            ("GET", "http://x/", 200),
            ("GET", "https://x/", 200),
            ("GET", "ftp://x/", 400),
            ("GET", "http://x:ab/", 400),
            ("GET", "http://x:/", 200),
            ("GET", "http:/x", 404),
            ("CONNECT", "x:443", 405),
            ("CONNECT", "x", 400),
            ("CONNECT", "/", 400),
        ];
        for &(m, t, status) in rows {
            let got = target(m, t);
            assert_eq!(got.is_err(), status == 400, "{m} {t}: {got:?}");
        }
        assert_eq!(
            target("GET", "http://X:80/a").unwrap().as_deref(),
            Some("X")
        );
        assert_eq!(target("GET", "HTTP://x/").unwrap().as_deref(), Some("x"));
        assert_eq!(target("GET", "https://x/").unwrap(), None);
        assert_eq!(target("CONNECT", "h:443").unwrap().as_deref(), Some("h"));
        assert_eq!(
            target("GET", "http://[::1]:8/").unwrap().as_deref(),
            Some("::1")
        );
        assert!(target("GET", "http://[::1/").is_err());
    }

    /// `Host` header values, with Apache 2.4.71's answer to
    /// `GET / HTTP/1.1` carrying them (raw request through a socket).
    #[test]
    fn host_header_as_apache() {
        let rows: &[(&[u8], Option<&str>)] = &[
            (b"x", Some("x")),
            (b"A.COM", Some("a.com")),
            (b"a.com.", Some("a.com")),
            (b".a.com", Some(".a.com")),
            (b"-a.com", Some("-a.com")),
            (b"a_b.c", Some("a_b.c")),
            (b"1.2.3.4", Some("1.2.3.4")),
            (b"[::1]:80", Some("::1")),
            (b"[fe80::1]", Some("fe80::1")),
            (b"x:8080", Some("x")),
            // 400 for each of these:
            (b"a b", None),
            (b"a/b", None),
            (b"a..b", None),
            (b"a:xx", None),
            (b"x:", None),
            (b"x:0", None),
            (b"x:65536", None),
            (b":80", None),
            (b"[::1", None),
            (b"[::1%eth0]", None),
            (b"[zz::1]", None),
            (b"1.2.3", None),
            (b"01.2.3.4", None),
            (b"123", None),
            (b"a.1b", None),
            (b"a, b", None),
            ("\u{e9}.com".as_bytes(), None),
        ];
        let name = |v: &[u8]| fix(parse_addr_port(v)?, v[0] == b'[', true).map(|h| h.name);
        for &(v, want) in rows {
            let ok = host_header_ok(v, true);
            match want {
                Some(n) => {
                    assert_eq!(ok, Ok(true), "{:?}", String::from_utf8_lossy(v));
                    assert_eq!(name(v).unwrap(), n);
                }
                None => assert!(ok.is_err(), "{:?} accepted", String::from_utf8_lossy(v)),
            }
        }
        // An empty Host leaves the host name unset (400 only for HTTP/1.1).
        assert_eq!(host_header_ok(b"", true), Ok(false));
        assert!(fix_uri_host(b"a..b", true).is_err());
        assert!(fix_uri_host(b"80", true).is_err());
        assert!(fix_uri_host(b"::1", true).unwrap().unwrap().v6);
    }
}
