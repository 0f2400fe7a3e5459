//! `--h2c-upgrade`: each request sent as `curl --http2` sends it to a
//! cleartext address, an HTTP/1.1 request with `Upgrade: h2c`,
//! `HTTP2-Settings` and `Connection: Upgrade, HTTP2-Settings`; a server
//! that switches answers `101 Switching Protocols` and then the request
//! over HTTP/2 on stream 1, one that does not answers over HTTP/1.1.
//!
//! What curl saw is what is compared: every head it received (the `101`
//! included, with its status line, so the HTTP version it ended up with is
//! compared too), the final answer's body, and whether curl succeeded. The
//! request block is read as `--http2` reads it (`h2request.rs`: method,
//! target, `Host`, fields, body); curl sends it with the case's fields in
//! place of its own `User-Agent` and `Accept`, and with its own
//! `Connection` (the case's `Connection: close` would forbid the upgrade).
//! Raw blocks, blocks of several requests, TLS, a PROXY header or another
//! client address are not sent.

use crate::client::{End, Exchange};
use crate::h2request::H2Request;
use crate::requests::Request;
use crate::response::Response;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How long curl may take, unless the request says otherwise.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The one request `curl --http2` sends for `req`, or why it cannot.
pub fn expressible(req: &Request) -> Result<Vec<H2Request>, String> {
    if req.title.starts_with("raw") {
        return Err("a raw block (its own bytes are what it tests)".into());
    }
    if req.opts.tls.is_some() {
        return Err("a request over TLS (h2c is cleartext)".into());
    }
    if req.opts.proxy_header.is_some() || req.opts.from.is_some() {
        return Err("a PROXY header or another client address".into());
    }
    let streams = crate::h2request::translate(req)?;
    if streams.len() != 1 {
        return Err("several requests on one connection".into());
    }
    Ok(streams)
}

/// Files of one exchange, unique within the process.
static EXCHANGES: AtomicU64 = AtomicU64::new(0);

/// Send `h2` (the translation of `req`) with `curl --http2` to the server
/// on `port`, using `dir` for curl's files.
pub fn exchange(port: u16, req: &Request, h2: &H2Request, dir: &Path) -> Exchange {
    let n = EXCHANGES.fetch_add(1, Ordering::Relaxed);
    let heads = dir.join(format!("curl-{n}.heads"));
    let body = dir.join(format!("curl-{n}.body"));
    let sent = dir.join(format!("curl-{n}.sent"));
    let timeout = req.opts.timeout.unwrap_or(DEFAULT_TIMEOUT);
    let mut cmd = Command::new("curl");
    cmd.args(["--http2", "-sS", "--globoff", "--path-as-is"])
        .arg("--max-time")
        .arg(format!("{}", timeout.as_secs_f64()))
        .arg("-D")
        .arg(&heads)
        .arg("-o")
        .arg(&body);
    match h2.method.as_str() {
        "HEAD" => {
            cmd.arg("--head");
        }
        "GET" if h2.body.is_empty() => {}
        m => {
            cmd.args(["-X", m]);
        }
    }
    if !h2.body.is_empty() || h2.headers.iter().any(|(n, _)| n == "content-length") {
        if std::fs::write(&sent, &h2.body).is_err() {
            return failed("could not write the body for curl".into());
        }
        cmd.arg("--data-binary").arg(format!("@{}", sent.display()));
    }
    cmd.args(["-H", &format!("Host: {}", h2.authority)]);
    // curl's own fields give way to the case's (or go).
    for own in ["user-agent", "accept", "content-type"] {
        if !h2.headers.iter().any(|(n, _)| n == own) {
            cmd.args(["-H", &format!("{own}:")]);
        }
    }
    for (name, value) in &h2.headers {
        // curl writes its own length and its own `HTTP2-Settings`.
        if name == "content-length" || name == "http2-settings" {
            continue;
        }
        let value = String::from_utf8_lossy(value);
        if value.is_empty() {
            cmd.args(["-H", &format!("{name};")]);
        } else {
            cmd.args(["-H", &format!("{name}: {value}")]);
        }
    }
    cmd.arg("--request-target")
        .arg(&h2.path)
        .arg(format!("http://127.0.0.1:{port}/"));
    let out = cmd.output();
    let heads_text = std::fs::read(&heads).unwrap_or_default();
    let body_bytes = std::fs::read(&body).unwrap_or_default();
    for f in [&heads, &body, &sent] {
        let _ = std::fs::remove_file(f);
    }
    let out = match out {
        Ok(o) => o,
        Err(e) => return failed(format!("curl did not run: {e}")),
    };
    let mut responses = parse_heads(&heads_text);
    // With `--head`, curl writes the head where the body would go.
    if h2.method != "HEAD" {
        if let Some(last) = responses.iter_mut().rev().find(|r| !r.is_interim()) {
            last.body = body_bytes;
        }
    }
    Exchange {
        tls: None,
        responses,
        trailing: Vec::new(),
        end: match out.status.code() {
            Some(0) => End::Closed,
            code => End::Http2(format!("curl ended with {code:?}")),
        },
    }
}

fn failed(why: String) -> Exchange {
    Exchange {
        tls: None,
        responses: Vec::new(),
        trailing: Vec::new(),
        end: End::NoConnection(why),
    }
}

/// The heads curl wrote with `-D`, in order (`HTTP/1.1 101 …`, then
/// `HTTP/2 200`, …); each status line without curl's trailing blank.
fn parse_heads(text: &[u8]) -> Vec<Response> {
    let text = String::from_utf8_lossy(text);
    let mut out = Vec::new();
    let mut current: Option<Response> = None;
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            out.extend(current.take());
            continue;
        }
        match &mut current {
            None => {
                let status_line = line.trim_end().to_string();
                let status = status_line
                    .split(' ')
                    .nth(1)
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                current = Some(Response {
                    status_line,
                    status,
                    headers: Vec::new(),
                    body: Vec::new(),
                });
            }
            Some(r) => {
                if let Some((n, v)) = line.split_once(':') {
                    r.headers.push((n.to_string(), v.trim().to_string()));
                }
            }
        }
    }
    out.extend(current);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn heads_are_read_in_order_with_their_versions() {
        let text = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\nHTTP/2 200 \r\ncontent-length: 6\r\n\r\n";
        let r = super::parse_heads(text);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].status, 101);
        assert_eq!(r[0].headers[0], ("Upgrade".into(), "h2c".into()));
        assert_eq!(r[1].status_line, "HTTP/2 200");
        assert_eq!(r[1].headers, [("content-length".into(), "6".into())]);
    }
}
