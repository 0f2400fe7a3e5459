//! Parsing HTTP/1.x responses out of the bytes a server sent, as a client
//! would: status line, headers, and a body framed by `Content-Length`,
//! `chunked` or the end of the connection (none for `HEAD`, 1xx, 204, 304).
//! The parser is incremental so that pipelined answers on one connection can
//! be told apart and a keep-alive client knows when to send the next request.

/// Largest body the harness accepts from a server.
const MAX_BODY: usize = 256 << 20;

/// One response as a client sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// `HTTP/1.1 200 OK`, verbatim.
    pub status_line: String,
    pub status: u16,
    /// In the order sent, names as sent.
    pub headers: Vec<(String, String)>,
    /// Decoded body (chunked framing removed).
    pub body: Vec<u8>,
}

impl Response {
    /// First value of a header, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// 1xx answers precede the real one and answer no request by themselves.
    pub fn is_interim(&self) -> bool {
        (100..200).contains(&self.status)
    }
}

/// Outcome of trying to parse one response at the start of a buffer.
#[derive(Debug)]
pub enum Parsed {
    /// A response and the number of bytes it took.
    Complete(Response, usize),
    /// More bytes are needed.
    Incomplete,
    /// The bytes are not an HTTP response.
    Invalid,
}

/// Parses one response from `buf`. `head` says the request was `HEAD`;
/// `eof` says the connection is closed (a body without framing ends there).
pub fn parse(buf: &[u8], head: bool, eof: bool) -> Parsed {
    let more = if eof {
        Parsed::Invalid
    } else {
        Parsed::Incomplete
    };
    if buf.len() < 5 {
        return if b"HTTP/".starts_with(buf) {
            more
        } else {
            Parsed::Invalid
        };
    }
    if !buf.starts_with(b"HTTP/") {
        return Parsed::Invalid;
    }
    let Some((head_len, body_start)) = head_end(buf) else {
        return more;
    };
    let Ok(text) = std::str::from_utf8(&buf[..head_len]) else {
        return Parsed::Invalid;
    };
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let status_line = lines.next().unwrap_or_default().to_string();
    let mut words = status_line.splitn(3, ' ');
    let _version = words.next();
    let Some(status) = words.next().and_then(|c| c.parse::<u16>().ok()) else {
        return Parsed::Invalid;
    };
    let mut headers = Vec::new();
    for line in lines {
        let (name, value) = line.split_once(':').unwrap_or((line, ""));
        headers.push((name.to_string(), value.trim().to_string()));
    }
    let mut resp = Response {
        status_line,
        status,
        headers,
        body: Vec::new(),
    };
    let rest = &buf[body_start..];
    if head || resp.is_interim() || status == 204 || status == 304 {
        return Parsed::Complete(resp, body_start);
    }
    let chunked = resp
        .header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().trim_end().ends_with("chunked"));
    if chunked {
        return match dechunk(rest) {
            Some((body, used)) => {
                resp.body = body;
                Parsed::Complete(resp, body_start + used)
            }
            None => more,
        };
    }
    if let Some(len) = resp.header("content-length") {
        let Ok(len) = len.trim().parse::<usize>() else {
            return Parsed::Invalid;
        };
        if len > MAX_BODY {
            return Parsed::Invalid;
        }
        if rest.len() < len {
            return more;
        }
        resp.body = rest[..len].to_vec();
        return Parsed::Complete(resp, body_start + len);
    }
    if !eof {
        return Parsed::Incomplete;
    }
    resp.body = rest.to_vec();
    Parsed::Complete(resp, buf.len())
}

/// End of the head: (length without the blank line, start of the body).
fn head_end(buf: &[u8]) -> Option<(usize, usize)> {
    let mut p = 0;
    while let Some(nl) = buf[p..].iter().position(|&c| c == b'\n') {
        let start = p;
        p += nl + 1;
        if matches!(&buf[start..p], b"\r\n" | b"\n") {
            let head = &buf[..start];
            let head = head.strip_suffix(b"\n").unwrap_or(head);
            let head = head.strip_suffix(b"\r").unwrap_or(head);
            return Some((head.len(), p));
        }
    }
    None
}

/// Decodes a chunked body: (body, bytes used including trailers).
pub fn dechunk(b: &[u8]) -> Option<(Vec<u8>, usize)> {
    let mut body = Vec::new();
    let mut p = 0;
    for _ in 0..1_000_000 {
        let eol = b.get(p..)?.windows(2).position(|w| w == b"\r\n")?;
        let line = std::str::from_utf8(&b[p..p + eol]).ok()?;
        let size = usize::from_str_radix(line.split(';').next()?.trim(), 16).ok()?;
        p += eol + 2;
        if size == 0 {
            for _ in 0..1000 {
                let eol = b.get(p..)?.windows(2).position(|w| w == b"\r\n")?;
                p += eol + 2;
                if eol == 0 {
                    return Some((body, p));
                }
            }
            return None;
        }
        if body.len() + size > MAX_BODY || b.len() < p + size + 2 {
            return None;
        }
        body.extend_from_slice(&b[p..p + size]);
        p += size + 2;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn complete(p: Parsed) -> (Response, usize) {
        match p {
            Parsed::Complete(r, n) => (r, n),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn content_length_body() {
        let b = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nX: a b \r\n\r\nabcHTTP/1.1";
        let (r, n) = complete(parse(b, false, false));
        assert_eq!(r.status, 200);
        assert_eq!(r.status_line, "HTTP/1.1 200 OK");
        assert_eq!(r.headers[1], ("X".into(), "a b".into()));
        assert_eq!(r.body, b"abc");
        assert_eq!(&b[n..], b"HTTP/1.1");
    }

    #[test]
    fn chunked_and_head() {
        let b =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n1\r\nd\r\n0\r\n\r\n";
        let (r, n) = complete(parse(b, false, false));
        assert_eq!(r.body, b"abcd");
        assert_eq!(n, b.len());
        let h = b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n";
        let (r, n) = complete(parse(h, true, false));
        assert!(r.body.is_empty());
        assert_eq!(n, h.len());
    }

    #[test]
    fn incomplete_and_close_delimited() {
        let b = b"HTTP/1.0 200 OK\r\n\r\nbody";
        assert!(matches!(parse(b, false, false), Parsed::Incomplete));
        let (r, _) = complete(parse(b, false, true));
        assert_eq!(r.body, b"body");
        assert!(matches!(parse(b"HTT", false, false), Parsed::Incomplete));
        assert!(matches!(parse(b"<html>", false, false), Parsed::Invalid));
    }
}
