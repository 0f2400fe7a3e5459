//! The FastCGI client: how the server performs the exchanges the engine
//! asks for (`engine::http::backend`), typically with PHP-FPM.
//!
//! * `codec`: records, parameters, the incremental record reader.
//! * `pool`: connections, bounded per backend (back-pressure, 503).
//! * `exchange` (a step of the request's exchange, `crate::exchange`,
//!   reading the client's body and writing the client's response through
//!   the connection's buffers): send the environment, stream the request body
//!   as `FCGI_STDIN`, read `FCGI_STDOUT` up to the end of the header
//!   block, let the engine post-process the head, then stream the rest of
//!   `FCGI_STDOUT` to the client (chunked, or delimited by close).
//!   `FCGI_STDERR` goes to the error log as Apache logs it (AH01071).
//!
//! Failures before the head is complete are answered 503 (no connection),
//! 502 (the backend broke the exchange) or 504 (no answer within
//! `Timeout`); after the head is sent, the client connection is closed
//! (the response cannot be changed any more), as Apache does.

pub(crate) mod codec;
pub(crate) mod exchange;
pub(crate) mod pool;

/// Where a CGI header block ends in `buf`: the end of its last line and
/// the start of the body (after the empty line). Lines end in LF or CRLF.
pub(crate) fn head_end(buf: &[u8]) -> Option<(usize, usize)> {
    let mut start = 0;
    while let Some(off) = memchr::memchr(b'\n', &buf[start..]) {
        let nl = start + off;
        let line = &buf[start..nl];
        if line.is_empty() || line == b"\r" {
            return Some((start, nl + 1));
        }
        start = nl + 1;
    }
    None
}

/// The header block's lines, without their line ends.
pub(crate) fn head_lines(head: &[u8]) -> Vec<String> {
    head.split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.is_empty())
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_block() {
        let b = b"Status: 404\r\nX-A: 1\r\n\r\nbody";
        let (h, s) = head_end(b).unwrap();
        assert_eq!(&b[s..], b"body");
        assert_eq!(head_lines(&b[..h]), vec!["Status: 404", "X-A: 1"]);
        let b = b"Content-type: text/html\n\nx";
        let (h, s) = head_end(b).unwrap();
        assert_eq!(
            (&b[..h], &b[s..]),
            (&b"Content-type: text/html\n"[..], &b"x"[..])
        );
        assert_eq!(head_end(b"X: 1\r\n"), None);
        assert_eq!(head_end(b"\r\nbody"), Some((0, 2)));
    }
}
