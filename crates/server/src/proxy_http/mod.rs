//! The HTTP/1.1 client for reverse proxying (mod_proxy_http's side of the
//! wire): the request head to an upstream, the upstream's response head,
//! and how its body is framed.
//!
//! Why our own client rather than hyper's: the exchange must run inside
//! the connection's own loop (its buffers, `Timeout`, mod_reqtimeout's body
//! stage, the `100 Continue` rule), stream both ways without buffering, hand
//! the raw head to the engine for Apache's post-processing, and decode
//! chunked bodies with the same code (`crate::body`) and limits that read
//! client bodies. What remains is a status line and header fields, below;
//! hyper and hyper-util would add two crates and their own connection
//! handling for it.
//!
//! The exchange itself (`exchange.rs`) is a step of the request's exchange
//! (`crate::exchange`).

pub(crate) mod exchange;
pub(crate) mod tls;
mod tunnel;

use htaccel_engine::http::backend::HttpRequest;

/// The longest upstream response head.
pub(crate) const HEAD_MAX: usize = 64 * 1024;
/// The most header fields in an upstream response head.
const FIELDS_MAX: usize = 200;

/// How the request body goes upstream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RequestBody {
    /// No body, and no framing header.
    None,
    /// `Content-Length`.
    Length(u64),
    /// `Transfer-Encoding: chunked` (a chunked body longer than the
    /// prefetch, streamed as mod_proxy_http's `RB_STREAM_CHUNKED`).
    Chunked,
}

/// The request head as sent: request line, the engine's headers, the
/// body's framing, `Connection` (with `Upgrade` when the client's protocol
/// switch is offered).
pub(crate) fn request_head(req: &HttpRequest, body: RequestBody, keep: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(512);
    out.extend_from_slice(req.method.as_bytes());
    out.push(b' ');
    // A query a rewrite built from bytes that are not UTF-8 goes as bytes.
    out.extend_from_slice(&htaccel_engine::path_text::bytes(&req.target));
    out.extend_from_slice(if req.http10 {
        b" HTTP/1.0\r\n".as_slice()
    } else {
        b" HTTP/1.1\r\n".as_slice()
    });
    for (n, v) in &req.headers {
        out.extend_from_slice(n.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(v);
        out.extend_from_slice(b"\r\n");
    }
    match body {
        RequestBody::None => {}
        RequestBody::Length(n) => {
            out.extend_from_slice(format!("Content-Length: {n}\r\n").as_bytes())
        }
        RequestBody::Chunked => out.extend_from_slice(b"Transfer-Encoding: chunked\r\n"),
    }
    if req.http10 {
        out.extend_from_slice(b"\r\n");
        return out;
    }
    if let Some(protocol) = &req.upgrade {
        out.extend_from_slice(b"Connection: Upgrade\r\nUpgrade: ");
        out.extend_from_slice(protocol.as_bytes());
        out.extend_from_slice(b"\r\n\r\n");
        return out;
    }
    out.extend_from_slice(if keep {
        b"Connection: Keep-Alive\r\n\r\n".as_slice()
    } else {
        b"Connection: close\r\n\r\n".as_slice()
    });
    out
}

/// An upstream's response head.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ResponseHead {
    pub status: u16,
    pub reason: String,
    /// `HTTP/1.1` or later (else 1.0: no keep-alive unless announced).
    pub http11: bool,
    /// `Name: value` lines, in order.
    pub lines: Vec<String>,
}

impl ResponseHead {
    fn values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.lines.iter().filter_map(move |l| {
            let (n, v) = l.split_once(':')?;
            n.trim().eq_ignore_ascii_case(name).then_some(v.trim())
        })
    }

    fn has_token(&self, name: &str, token: &str) -> bool {
        self.values(name)
            .flat_map(|v| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case(token))
    }

    /// How the body is framed, for a request with `method`.
    pub(crate) fn framing(&self, method: &str) -> Result<BodyFraming, String> {
        if method == "HEAD" || self.status == 204 || self.status == 304 || self.status < 200 {
            return Ok(BodyFraming::None);
        }
        if self.values("Transfer-Encoding").next().is_some() {
            return if self.has_token("Transfer-Encoding", "chunked") {
                Ok(BodyFraming::Chunked)
            } else {
                Err("unsupported Transfer-Encoding from the upstream".into())
            };
        }
        let mut lengths = self.values("Content-Length");
        match lengths.next() {
            Some(v) => {
                let n = v
                    .parse::<u64>()
                    .map_err(|_| format!("bad Content-Length '{v}' from the upstream"))?;
                if lengths.any(|o| o != v) {
                    return Err("conflicting Content-Length from the upstream".into());
                }
                Ok(BodyFraming::Length(n))
            }
            None => Ok(BodyFraming::UntilClose),
        }
    }

    /// Whether the upstream connection may serve another request.
    pub(crate) fn reusable(&self) -> bool {
        if self.has_token("Connection", "close") {
            return false;
        }
        self.http11 || self.has_token("Connection", "keep-alive")
    }
}

/// How an upstream's body ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BodyFraming {
    None,
    Length(u64),
    Chunked,
    UntilClose,
}

/// Parse a response head at the start of `buf`: the head and its length,
/// or `None` while incomplete.
pub(crate) fn parse_head(buf: &[u8]) -> Result<Option<(ResponseHead, usize)>, String> {
    let Some(end) = find_end(buf) else {
        if buf.len() > HEAD_MAX {
            return Err("response head from the upstream too long".into());
        }
        return Ok(None);
    };
    let text = &buf[..end];
    let mut lines = text
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let status_line = lines.next().unwrap_or_default();
    let status_line = std::str::from_utf8(status_line)
        .map_err(|_| "status line from the upstream is not text".to_string())?;
    let rest = status_line
        .strip_prefix("HTTP/1.")
        .ok_or_else(|| format!("bad status line from the upstream: {status_line:.40}"))?;
    let (minor, rest) = rest.split_at(1.min(rest.len()));
    let http11 = minor != "0";
    let rest = rest.strip_prefix(' ').unwrap_or(rest);
    let (code, reason) = rest.split_once(' ').unwrap_or((rest, ""));
    let status = code
        .parse::<u16>()
        .ok()
        .filter(|s| (100..600).contains(s) && code.len() == 3)
        .ok_or_else(|| format!("bad status line from the upstream: {status_line:.40}"))?;
    let mut out = Vec::new();
    for l in lines {
        if l.is_empty() {
            break;
        }
        if l[0] == b' ' || l[0] == b'\t' || !l.contains(&b':') {
            return Err("malformed header from the upstream".into());
        }
        out.push(String::from_utf8_lossy(l).into_owned());
        if out.len() > FIELDS_MAX {
            return Err("too many header fields from the upstream".into());
        }
    }
    Ok(Some((
        ResponseHead {
            status,
            reason: reason.to_string(),
            http11,
            lines: out,
        },
        end,
    )))
}

/// The length of the head, blank line included.
fn find_end(buf: &[u8]) -> Option<usize> {
    let mut start = 0;
    while let Some(off) = memchr::memchr(b'\n', &buf[start..]) {
        let nl = start + off;
        let line = &buf[start..nl];
        if (line.is_empty() || line == b"\r") && start > 0 {
            return Some(nl + 1);
        }
        start = nl + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads() {
        let b = b"HTTP/1.1 404 Not Here\r\nA: 1\r\nContent-Length: 3\r\n\r\nabc";
        let (h, n) = parse_head(b).unwrap().unwrap();
        assert_eq!(&b[n..], b"abc");
        assert_eq!(
            (h.status, h.reason.as_str(), h.http11),
            (404, "Not Here", true)
        );
        assert_eq!(h.lines, vec!["A: 1", "Content-Length: 3"]);
        assert_eq!(h.framing("GET"), Ok(BodyFraming::Length(3)));
        assert_eq!(h.framing("HEAD"), Ok(BodyFraming::None));
        assert!(h.reusable());
        assert_eq!(parse_head(b"HTTP/1.1 200 OK\r\nA: 1\r\n").unwrap(), None);
        let (h, _) = parse_head(b"HTTP/1.0 200 OK\n\n").unwrap().unwrap();
        assert!(!h.reusable());
        assert_eq!(h.framing("GET"), Ok(BodyFraming::UntilClose));
        assert!(parse_head(b"HTP/1.1 200 OK\r\n\r\n").is_err());
        assert!(parse_head(b"HTTP/1.1 2000 OK\r\n\r\n").is_err());
        assert!(parse_head(b"HTTP/1.1 200 OK\r\n folded\r\n\r\n").is_err());
        let (h, _) = parse_head(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        )
        .unwrap()
        .unwrap();
        assert_eq!(h.framing("GET"), Ok(BodyFraming::Chunked));
        assert!(!h.reusable());
        let (h, _) =
            parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n")
                .unwrap()
                .unwrap();
        assert!(h.framing("GET").is_err());
    }

    #[test]
    fn request_heads() {
        let r = HttpRequest {
            method: "POST".into(),
            target: "/a?b".into(),
            headers: vec![("Host".into(), b"up:8080".to_vec())],
            close: false,
            upgrade: None,
            http10: false,
            interim: None,
            no_half_close: false,
            initial_not_pooled: false,
            extra_crlf: false,
        };
        assert_eq!(
            request_head(&r, RequestBody::Length(3), true),
            b"POST /a?b HTTP/1.1\r\nHost: up:8080\r\nContent-Length: 3\r\nConnection: Keep-Alive\r\n\r\n"
        );
        assert_eq!(
            request_head(&r, RequestBody::Chunked, false),
            b"POST /a?b HTTP/1.1\r\nHost: up:8080\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        );
        let upgrade = HttpRequest {
            upgrade: Some("websocket".into()),
            ..r.clone()
        };
        assert_eq!(
            request_head(&upgrade, RequestBody::None, false),
            b"POST /a?b HTTP/1.1\r\nHost: up:8080\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"
        );
        let old = HttpRequest { http10: true, ..r };
        assert_eq!(
            request_head(&old, RequestBody::Length(3), false),
            b"POST /a?b HTTP/1.0\r\nHost: up:8080\r\nContent-Length: 3\r\n\r\n"
        );
    }
}
