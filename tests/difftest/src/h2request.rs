//! Translating a case's request block, written as HTTP/1.1, into the
//! HTTP/2 requests a client would send for it (`--http2`): the method, the
//! target as `:path`, `Host` as `:authority`, the other header fields with
//! lower-case names, and the body with its HTTP/1.1 framing removed.
//!
//! HTTP/2 has no connection-specific fields (RFC 9113, 8.2.2): `Connection`
//! and the fields it names, `Keep-Alive`, `Proxy-Connection`,
//! `Transfer-Encoding` and `Upgrade` are dropped, `TE` is kept only as
//! `trailers`. A block of several requests (a keep-alive sequence, a
//! pipeline) becomes as many streams, sent one after the other on one
//! connection.
//!
//! What only HTTP/1.1 can say is refused with the reason, never guessed at:
//! malformed request lines or fields, other versions (HTTP/1.0, 0.9),
//! framing probes (`Content-Length` with `Transfer-Encoding`, several
//! lengths, a body shorter than its length), targets that are no `:path`,
//! bodies sent in timed parts, and pipelines whose later requests depend on
//! the connection being closed. The runner counts such requests per case.

use crate::requests::{Gap, Request};

/// One HTTP/2 request: pseudo-header values, fields, body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct H2Request {
    pub method: String,
    /// `:path`.
    pub path: String,
    /// `:authority`: the HTTP/1.1 `Host` value.
    pub authority: String,
    /// Lower-case names, values as sent (without surrounding whitespace).
    pub headers: Vec<(String, Vec<u8>)>,
    pub body: Vec<u8>,
}

/// Fields that belong to one HTTP/1.1 connection and have no place in
/// HTTP/2 (`te` is handled apart: it stays as `trailers`).
const CONNECTION_SPECIFIC: [&str; 5] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
];

/// The HTTP/2 requests for `req`, in order, or why it has none.
pub fn translate(req: &Request) -> Result<Vec<H2Request>, String> {
    if req.opts.tls.as_ref().is_some_and(|t| t.plain) {
        return Err("plain HTTP/1.1 bytes on the TLS port".into());
    }
    if req.gaps.iter().any(|g| matches!(g, Gap::Sleep(_))) {
        return Err("bytes sent in timed parts (the timing is the connection's)".into());
    }
    let bytes = req.bytes();
    let mut rest = &bytes[..];
    let mut out = Vec::new();
    while !rest.is_empty() {
        let (request, close, used) = one_request(rest)?;
        rest = &rest[used..];
        if close && !rest.is_empty() {
            return Err("`Connection: close` before the end of a pipeline \
                        (what follows depends on the closed connection)"
                .into());
        }
        out.push(request);
    }
    if out.is_empty() {
        return Err("no request".into());
    }
    Ok(out)
}

/// `token` characters (RFC 9110, 5.6.2).
fn is_tchar(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c)
}

fn is_token(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(|&c| is_tchar(c))
}

/// One request at the start of `b`: the request, whether it asked for the
/// connection to close, and the bytes it took.
fn one_request(b: &[u8]) -> Result<(H2Request, bool, usize), String> {
    let head_len = b
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("an incomplete request (no end of the header section)")?;
    let head = &b[..head_len];
    let mut lines = head.split(|&c| c == b'\n').map(|l| {
        // every line but the last ends in CR here (the head ends in CRLF)
        l.strip_suffix(b"\r").unwrap_or(l)
    });
    if head
        .split(|&c| c == b'\n')
        .rev()
        .skip(1)
        .any(|l| !l.ends_with(b"\r"))
        || head.iter().filter(|&&c| c == b'\r').count()
            != head.iter().filter(|&&c| c == b'\n').count()
    {
        return Err("a line not ended by CRLF".into());
    }
    let request_line = lines.next().unwrap_or_default();
    let words: Vec<&[u8]> = request_line.split(|&c| c == b' ').collect();
    let [method, target, version] = words[..] else {
        return Err("a malformed request line".into());
    };
    if !is_token(method) {
        return Err("a malformed method".into());
    }
    let method = String::from_utf8_lossy(method).into_owned();
    if method == "CONNECT" {
        return Err("CONNECT (its HTTP/2 form has no :path)".into());
    }
    match version {
        b"HTTP/1.1" => {}
        b"HTTP/1.0" => return Err("an HTTP/1.0 request".into()),
        _ => return Err("a version other than HTTP/1.1 and HTTP/1.0".into()),
    }
    let path = h2_path(target)?;
    let mut host: Option<Vec<u8>> = None;
    let mut lengths: Vec<&[u8]> = Vec::new();
    let mut chunked = false;
    let mut close = false;
    let mut nominated: Vec<String> = Vec::new();
    let mut headers = Vec::new();
    for line in lines {
        if line.first().is_some_and(|&c| c == b' ' || c == b'\t') {
            return Err("a folded header line (obs-fold)".into());
        }
        let colon = line
            .iter()
            .position(|&c| c == b':')
            .ok_or("a header line without ':'")?;
        let name = &line[..colon];
        if !is_token(name) {
            return Err("a malformed header name".into());
        }
        let value = line[colon + 1..].trim_ascii();
        if value.iter().any(|&c| (c < 0x20 && c != b'\t') || c == 0x7f) {
            return Err("a header value with control bytes".into());
        }
        let name = String::from_utf8_lossy(name).to_ascii_lowercase();
        match name.as_str() {
            "host" => {
                if host.replace(value.to_vec()).is_some() {
                    return Err("more than one Host".into());
                }
                continue;
            }
            "content-length" => lengths.push(value),
            "transfer-encoding" => {
                if !value.eq_ignore_ascii_case(b"chunked") || chunked {
                    return Err("a Transfer-Encoding other than one `chunked`".into());
                }
                chunked = true;
            }
            "connection" => {
                for token in String::from_utf8_lossy(value).split(',') {
                    let token = token.trim().to_ascii_lowercase();
                    if token == "close" {
                        close = true;
                    }
                    nominated.push(token);
                }
            }
            _ => {}
        }
        headers.push((name, value.to_vec()));
    }
    let authority = authority(host)?;
    let body_start = head_len + 4;
    let (body, used) = match (&lengths[..], chunked) {
        ([], false) => (Vec::new(), 0),
        ([_, ..], true) => {
            return Err("both Content-Length and Transfer-Encoding (a framing probe)".into())
        }
        ([_, _, ..], false) => return Err("more than one Content-Length".into()),
        ([len], false) => {
            let len: usize = std::str::from_utf8(len)
                .ok()
                .filter(|l| l.bytes().all(|c| c.is_ascii_digit()))
                .and_then(|l| l.parse().ok())
                .ok_or("a malformed Content-Length")?;
            let body = b
                .get(body_start..body_start + len)
                .ok_or("a body shorter than its Content-Length (the server would wait)")?;
            (body.to_vec(), len)
        }
        ([], true) => {
            let (body, used) = crate::response::dechunk(&b[body_start..])
                .ok_or("an incomplete or malformed chunked body")?;
            let framing = &b[body_start..body_start + used];
            if !(framing == b"0\r\n\r\n" || framing.ends_with(b"\r\n0\r\n\r\n")) {
                return Err("a chunked body with trailers or a last-chunk extension".into());
            }
            (body, used)
        }
    };
    headers.retain(|(name, value)| {
        if name == "te" {
            return value.eq_ignore_ascii_case(b"trailers");
        }
        !CONNECTION_SPECIFIC.contains(&name.as_str()) && !nominated.contains(name)
    });
    let request = H2Request {
        method,
        path,
        authority,
        headers,
        body,
    };
    Ok((request, close, body_start + used))
}

/// The request target as `:path`: origin-form only.
fn h2_path(target: &[u8]) -> Result<String, String> {
    let target = std::str::from_utf8(target).map_err(|_| "a target that is not UTF-8")?;
    if target == "*" {
        // The `http` crate's URI cannot hold both an authority and the
        // path `*`, so `h2` cannot send them together.
        return Err("`*` as the target (the HTTP/2 client sends no :path `*` \
                    with an :authority)"
            .into());
    }
    if !target.starts_with('/') {
        return Err("a target not in origin-form (absolute- or authority-form)".into());
    }
    // The `http` crate, through which `h2` takes the target, accepts a
    // :path only in URI syntax (no `#`, `<`, spaces, control bytes...).
    let parsed: Result<http::uri::PathAndQuery, _> = target.parse();
    match parsed {
        Ok(p) if p.as_str() == target => Ok(target.into()),
        _ => Err("a target outside URI syntax, which the HTTP/2 client refuses as :path".into()),
    }
}

/// `:authority` from the `Host` value.
fn authority(host: Option<Vec<u8>>) -> Result<String, String> {
    let host = host.ok_or("no Host (HTTP/2 always names an authority)")?;
    let host = String::from_utf8(host).map_err(|_| "a Host that is not UTF-8")?;
    if host.is_empty() {
        return Err("an empty Host".into());
    }
    let parsed: Result<http::uri::Authority, _> = host.parse();
    match parsed {
        Ok(a) if a.as_str() == host && !host.contains('@') => Ok(host),
        _ => Err("a Host that is not a valid :authority (host[:port])".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::requests::parse;

    fn one(text: &str) -> Result<Vec<H2Request>, String> {
        translate(&parse(text).unwrap()[0])
    }

    #[test]
    fn plain_request_becomes_pseudo_headers_and_fields() {
        let r = one("GET /a?b=1\nAccept: */*\nTE: trailers\nUpgrade: h2c\n").unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].method, "GET");
        assert_eq!(r[0].path, "/a?b=1");
        assert_eq!(r[0].authority, "localhost");
        // Host became :authority; Connection (added by the harness) and
        // Upgrade are connection-specific; TE stays as `trailers`.
        assert_eq!(
            r[0].headers,
            vec![
                ("accept".to_string(), b"*/*".to_vec()),
                ("te".to_string(), b"trailers".to_vec())
            ]
        );
        let r = one("GET /\nTE: gzip\nConnection: X-Hop\nX-Hop: 1\nX-Kept: 2\n").unwrap();
        assert_eq!(r[0].headers, vec![("x-kept".to_string(), b"2".to_vec())]);
    }

    #[test]
    fn bodies_lose_their_framing() {
        let r = one("POST /p\nContent-Type: text/plain\n\nab\ncd\n").unwrap();
        assert_eq!(r[0].body, b"ab\ncd");
        assert!(r[0]
            .headers
            .contains(&("content-length".to_string(), b"5".to_vec())));
        let r = one("POST /p\nTransfer-Encoding: chunked\n\nhello\n").unwrap();
        assert_eq!(r[0].body, b"hello");
        assert!(r[0].headers.iter().all(|(n, _)| n != "transfer-encoding"));
    }

    #[test]
    fn keep_alive_sequences_become_streams() {
        let r = one("raw\nGET /a HTTP/1.1\nHost: x\n\n<pause>\nHEAD /b HTTP/1.1\nHost: y:8\nConnection: close\n\n")
            .unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].path.as_str(), r[0].authority.as_str()), ("/a", "x"));
        assert_eq!(
            (r[1].method.as_str(), r[1].authority.as_str()),
            ("HEAD", "y:8")
        );
    }

    #[test]
    fn what_only_http1_can_say_is_refused() {
        let refused = [
            "GET / HTTP/1.0\n",
            "GET http://x/ HTTP/1.1\n",
            "CONNECT x:443 HTTP/1.1\n",
            "OPTIONS * HTTP/1.1\n",
            "raw\nGET /  HTTP/1.1\nHost: x\n\n",
            "raw\nGET / HTTP/1.1\nHost: x\n Folded: y\n\n",
            "raw\nGET / HTTP/1.1\nHost: x\nBad Name: y\n\n",
            "raw\nGET / HTTP/1.1\\n\nHost: x\n\n",
            "raw\nGET / HTTP/1.1\nHost: x\nHost: y\n\n",
            "raw\nGET / HTTP/1.1\n\n",
            "raw\nPOST / HTTP/1.1\nHost: x\nContent-Length: 3\nTransfer-Encoding: chunked\n\n0\n\n",
            "raw\nPOST / HTTP/1.1\nHost: x\nContent-Length: 3\nContent-Length: 3\n\nabc",
            "raw\nPOST / HTTP/1.1\nHost: x\nContent-Length: 9\n\nabc\\",
            "raw\nGET / HTTP/1.1\nHost: x\nConnection: close\n\nGET / HTTP/1.1\nHost: x\n\n",
            "raw\nGET / HTTP/1.1\nHost: x\n\ngarbage",
            "raw\nPOST / HTTP/1.1\nHost: x\nContent-Length: 2\n\n<sleep 100>\nab\\",
            "# https\n# plain-on-tls-port\nGET /\n",
            "GET /a#frag\n",
        ];
        for text in refused {
            assert!(one(text).is_err(), "{text:?} was translated");
        }
    }
}
