//! The `requests` file of a case: what the client sends, written so that a
//! person can read it (the format is documented in `tests/cases/README.md`).
//!
//! Blocks are separated by a line `---`. A block is either an ordinary
//! request (request line, header lines, optional blank line and body: the
//! harness adds `Host`, `Connection: close` and `Content-Length`) or a `raw`
//! block whose lines are sent byte for byte (with escapes), for malformed
//! requests, pipelining and keep-alive sequences. Comment lines (`#`) before
//! the request may carry per-request options.

use std::time::Duration;

/// Largest request the expansion of `{{repeat N TEXT}}` may produce.
const MAX_REQUEST_BYTES: usize = 16 << 20;

/// One exchange on one connection.
#[derive(Clone, Debug)]
pub struct Request {
    /// Line in the `requests` file where the block starts.
    pub line: usize,
    /// Short human-readable name: the request line.
    pub title: String,
    /// Bytes to send. Between two segments the client waits as the gap
    /// after the first says.
    pub segments: Vec<Vec<u8>>,
    /// How the client waits after each segment (the last one's is unused).
    pub gaps: Vec<Gap>,
    pub opts: RequestOptions,
}

/// Per-request options, given as comment lines before the request.
#[derive(Clone, Debug, Default)]
pub struct RequestOptions {
    /// `# ignore-body`: do not compare bodies (nor `Content-Length`).
    pub ignore_body: bool,
    /// `# ignore-header NAME...`: do not compare these headers (lower case).
    pub ignore_headers: Vec<String>,
    /// `# timeout SECS`: how long to wait for the server to say more.
    pub timeout: Option<Duration>,
    /// `# wait SECS`: how long the client waits before it sends the
    /// request, over every protocol (time that must pass on both servers,
    /// such as mod_status's uptime reaching a second).
    pub wait: Option<Duration>,
    /// `# from ADDR`: the loopback address the client connects from
    /// (127.0.0.1 when absent), for access rules that look at it.
    pub from: Option<std::net::Ipv4Addr>,
    /// `# mask-json NAME...`: mask these JSON members' string values in
    /// both bodies (values that are truly dynamic, such as a stored time).
    pub mask_json: Vec<String>,
    /// `# mask-values [KEY...]`: compare a `Key: value` body by its keys
    /// and their order (mod_status's `?auto`), without the lines of these
    /// keys, and not `Content-Length`.
    pub mask_values: bool,
    pub mask_values_drop: Vec<String>,
    /// `# compare-from TEXT`: compare the bodies from the first occurrence
    /// of TEXT on (a section of a page whose rest is each server's own,
    /// such as a module's part of mod_status's page), and not
    /// `Content-Length`; a body without TEXT compares as its absence, and
    /// two without it differ (the section is what the request is for).
    pub compare_from: Option<String>,
    /// `# https`, `# sni NAME`, `# no-sni`, `# tls1.2`: send over TLS to
    /// the server's TLS port (cases that need `https`).
    pub tls: Option<TlsOptions>,
    /// `# proxy-header BYTES`: bytes (escapes as in raw lines) sent first
    /// on the connection, before TLS too: a PROXY protocol header.
    pub proxy_header: Option<Vec<u8>>,
}

/// How the client speaks TLS for one request.
#[derive(Clone, Debug, Default)]
pub struct TlsOptions {
    /// The SNI name (`None`: no SNI extension).
    pub sni: Option<String>,
    /// Offer TLS 1.2 only.
    pub tls12_only: bool,
    /// `# plain-on-tls-port`: plain HTTP to the TLS port (no TLS at all).
    pub plain: bool,
    /// `# client-cert NAME`: present the certificate `NAME.crt` (key
    /// `NAME.key`) of the case's certificates.
    pub client_cert: Option<String>,
}

/// How the client waits between two segments of a raw request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gap {
    /// `<pause>`: until every request sent so far has been answered (or an
    /// interim answer came).
    Answers,
    /// `<sleep MS>`: for this long, whatever the server says meanwhile
    /// (a body that arrives in parts).
    Sleep(Duration),
    /// `<shutdown>`, the block's last line: the client ends its output
    /// (a half-close: a TCP FIN, after TLS's `close_notify`) and reads on.
    Shutdown,
}

impl Request {
    /// Everything the request sends, segments joined.
    pub fn bytes(&self) -> Vec<u8> {
        self.segments.concat()
    }
}

/// Parses a whole `requests` file. Errors name the line.
pub fn parse(text: &str) -> Result<Vec<Request>, String> {
    let mut out = Vec::new();
    let mut block: Vec<&str> = Vec::new();
    let mut start = 1;
    for (i, line) in text.lines().enumerate() {
        if line.trim_end() == "---" {
            if let Some(r) = parse_block(start, &block)? {
                out.push(r);
            }
            block.clear();
            start = i + 2;
        } else {
            block.push(line);
        }
    }
    if let Some(r) = parse_block(start, &block)? {
        out.push(r);
    }
    if out.is_empty() {
        return Err("no request in the file".into());
    }
    Ok(out)
}

fn parse_block(start: usize, lines: &[&str]) -> Result<Option<Request>, String> {
    let mut opts = RequestOptions::default();
    let mut i = 0;
    while i < lines.len() && (lines[i].trim().is_empty() || lines[i].starts_with('#')) {
        parse_option(lines[i], &mut opts).map_err(|e| format!("line {}: {e}", start + i))?;
        i += 1;
    }
    if i == lines.len() {
        return Ok(None);
    }
    let line = start + i;
    let at = |e: String| format!("line {line}: {e}");
    let (title, segments, gaps) = if lines[i].trim() == "raw" {
        raw_block(&lines[i + 1..]).map_err(at)?
    } else {
        let (title, segments) = plain_block(&lines[i..]).map_err(at)?;
        (title, segments, vec![Gap::Answers])
    };
    if segments.iter().map(Vec::len).sum::<usize>() == 0 {
        return Err(at("the request is empty".into()));
    }
    Ok(Some(Request {
        line,
        title,
        segments,
        gaps,
        opts,
    }))
}

fn parse_option(line: &str, opts: &mut RequestOptions) -> Result<(), String> {
    let mut words = line.trim_start_matches('#').split_whitespace();
    match words.next() {
        Some("ignore-body") => opts.ignore_body = true,
        Some("mask-values") => {
            opts.mask_values = true;
            opts.mask_values_drop.extend(words.map(str::to_string));
        }
        Some("compare-from") => {
            let text = words.collect::<Vec<_>>().join(" ");
            if text.is_empty() {
                return Err("compare-from needs the text a section starts with".into());
            }
            opts.compare_from = Some(text);
        }
        Some("ignore-header") => {
            let names: Vec<String> = words.map(str::to_ascii_lowercase).collect();
            if names.is_empty() {
                return Err("ignore-header needs header names".into());
            }
            opts.ignore_headers.extend(names);
        }
        Some("mask-json") => {
            let names: Vec<String> = words.map(str::to_string).collect();
            if names.is_empty() {
                return Err("mask-json needs member names".into());
            }
            opts.mask_json.extend(names);
        }
        Some(option @ ("timeout" | "wait")) => {
            let secs: f64 = words
                .next()
                .and_then(|w| w.parse().ok())
                .filter(|s: &f64| *s > 0.0 && *s <= 120.0)
                .ok_or_else(|| format!("{option} needs a number of seconds (at most 120)"))?;
            let secs = Some(Duration::from_secs_f64(secs));
            if option == "wait" {
                opts.wait = secs;
            } else {
                opts.timeout = secs;
            }
        }
        Some("https") => {
            opts.tls.get_or_insert_with(|| TlsOptions {
                sni: Some("localhost".into()),
                ..Default::default()
            });
        }
        Some("sni") => {
            let name = words.next().ok_or("sni needs a host name")?;
            opts.tls.get_or_insert_with(Default::default).sni = Some(name.to_string());
        }
        Some("plain-on-tls-port") => opts.tls.get_or_insert_with(Default::default).plain = true,
        Some("client-cert") => {
            let name = words.next().ok_or("client-cert needs a certificate name")?;
            opts.tls
                .get_or_insert_with(|| TlsOptions {
                    sni: Some("localhost".into()),
                    ..Default::default()
                })
                .client_cert = Some(name.to_string());
        }
        Some("no-sni") => opts.tls.get_or_insert_with(Default::default).sni = None,
        Some("tls1.2") => {
            let t = opts.tls.get_or_insert_with(|| TlsOptions {
                sni: Some("localhost".into()),
                ..Default::default()
            });
            t.tls12_only = true;
        }
        Some("from") => {
            let addr: std::net::Ipv4Addr = words
                .next()
                .and_then(|w| w.parse().ok())
                .filter(|a: &std::net::Ipv4Addr| a.is_loopback())
                .ok_or("from needs an address in 127.0.0.0/8")?;
            opts.from = Some(addr);
        }
        Some("proxy-header") => {
            let text = line
                .trim_start_matches('#')
                .trim_start()
                .strip_prefix("proxy-header")
                .unwrap_or("")
                .trim_start();
            let (bytes, _) = unescape(text)?;
            if bytes.is_empty() {
                return Err("proxy-header needs the bytes to send".into());
            }
            opts.proxy_header = Some(bytes);
        }
        _ => {} // a comment
    }
    Ok(())
}

/// `METHOD TARGET [VERSION]`, headers, blank line, body.
fn plain_block(lines: &[&str]) -> Result<(String, Vec<Vec<u8>>), String> {
    let request_line = expand(lines[0].trim())?;
    let words: Vec<&str> = request_line.split_whitespace().collect();
    let (method, target, version) = match words.as_slice() {
        [m, t] => (*m, *t, "HTTP/1.1"),
        [m, t, v] => (*m, *t, *v),
        _ => return Err("expected `METHOD TARGET [HTTP/1.x]` (use a raw block otherwise)".into()),
    };
    let mut headers = Vec::new();
    let mut rest = lines[1..].iter();
    for h in rest.by_ref() {
        if h.trim().is_empty() {
            break;
        }
        let h = expand(h)?;
        if !h.contains(':') {
            return Err(format!(
                "header line without ':': {h:?} (use a raw block for malformed requests)"
            ));
        }
        headers.push(h);
    }
    let mut body_lines: Vec<&str> = rest.copied().collect();
    while body_lines.last().is_some_and(|l| l.trim().is_empty()) {
        body_lines.pop();
    }
    let body = body_lines.join("\n");
    let has = |name: &str| {
        headers.iter().any(|h| {
            h.split(':')
                .next()
                .is_some_and(|n| n.trim().eq_ignore_ascii_case(name))
        })
    };
    let chunked = headers.iter().any(|h| {
        let (n, v) = h.split_once(':').unwrap_or((h, ""));
        n.trim().eq_ignore_ascii_case("transfer-encoding")
            && v.to_ascii_lowercase().contains("chunked")
    });
    let mut out = format!("{method} {target} {version}\r\n");
    if !has("host") {
        out.push_str("Host: localhost\r\n");
    }
    for h in &headers {
        out.push_str(h);
        out.push_str("\r\n");
    }
    if !has("connection") {
        out.push_str("Connection: close\r\n");
    }
    if !body.is_empty() && !has("content-length") && !has("transfer-encoding") {
        out.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    out.push_str("\r\n");
    if chunked && !has("content-length") {
        if !body.is_empty() {
            out.push_str(&format!("{:x}\r\n{body}\r\n", body.len()));
        }
        out.push_str("0\r\n\r\n");
    } else {
        out.push_str(&body);
    }
    Ok((shorten(&request_line), vec![out.into_bytes()]))
}

/// The segments of a raw block, each with the gap after it.
type Segments = (String, Vec<Vec<u8>>, Vec<Gap>);

/// Lines sent as written plus CRLF (escapes processed, a final `\` keeps
/// the CRLF off); a line `<pause>` waits for the answers so far, a line
/// `<sleep MS>` for MS milliseconds; a last line `<shutdown>` ends the
/// client's output.
fn raw_block(lines: &[&str]) -> Result<Segments, String> {
    let mut segments = Vec::new();
    let mut cur = Vec::new();
    let mut title = None;
    let shutdown = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .is_some_and(|last| lines[last].trim_end() == "<shutdown>");
    for (i, line) in lines.iter().enumerate() {
        let gap = match line.trim_end() {
            "<pause>" => Some(Gap::Answers),
            "<shutdown>" if shutdown && lines[i + 1..].iter().all(|l| l.trim().is_empty()) => {
                break;
            }
            "<shutdown>" => return Err("<shutdown> must be the block's last line".into()),
            l => match l.strip_prefix("<sleep ").and_then(|r| r.strip_suffix('>')) {
                Some(ms) => Some(Gap::Sleep(Duration::from_millis(
                    ms.trim().parse().map_err(|_| format!("bad {l}"))?,
                ))),
                None => None,
            },
        };
        if let Some(gap) = gap {
            segments.push((std::mem::take(&mut cur), gap));
            continue;
        }
        if title.is_none() && !line.trim().is_empty() {
            title = Some(format!("raw: {}", shorten(line)));
        }
        let (bytes, newline) = unescape(&expand(line)?)?;
        cur.extend_from_slice(&bytes);
        if newline {
            cur.extend_from_slice(b"\r\n");
        }
        if cur.len() > MAX_REQUEST_BYTES {
            return Err("raw request too large".into());
        }
    }
    segments.push((
        cur,
        if shutdown {
            Gap::Shutdown
        } else {
            Gap::Answers
        },
    ));
    // An empty segment stays where its gap does something of its own: a
    // `<sleep>` right after a `<pause>` waits for the answers, then sleeps.
    segments.retain(|(s, gap)| !s.is_empty() || matches!(gap, Gap::Shutdown | Gap::Sleep(_)));
    let (segments, gaps) = segments.into_iter().unzip();
    Ok((title.unwrap_or_else(|| "raw".into()), segments, gaps))
}

fn shorten(s: &str) -> String {
    if s.len() <= 100 {
        return s.to_string();
    }
    let mut end = 90;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &s[..end], s.len())
}

/// Expands `{{repeat N TEXT}}` into TEXT repeated N times.
pub fn expand(line: &str) -> Result<String, String> {
    const OPEN: &str = "{{repeat ";
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find(OPEN) {
        out.push_str(&rest[..at]);
        let after = &rest[at + OPEN.len()..];
        let close = after.find("}}").ok_or("`{{repeat` without `}}`")?;
        let inner = &after[..close];
        let (n, text) = inner.split_once(' ').ok_or("expected {{repeat N TEXT}}")?;
        let n: usize = n.parse().map_err(|_| format!("bad repeat count {n:?}"))?;
        if n.saturating_mul(text.len()) + out.len() > MAX_REQUEST_BYTES {
            return Err("repeat expands too far".into());
        }
        out.push_str(&text.repeat(n));
        rest = &after[close + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Processes `\r \n \t \0 \\ \xHH`; a trailing `\` means "no line break".
pub fn unescape(line: &str) -> Result<(Vec<u8>, bool), String> {
    let mut out = Vec::with_capacity(line.len());
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        match b.get(i + 1) {
            None => return Ok((out, false)),
            Some(b'r') => out.push(b'\r'),
            Some(b'n') => out.push(b'\n'),
            Some(b't') => out.push(b'\t'),
            Some(b'0') => out.push(0),
            Some(b'\\') => out.push(b'\\'),
            Some(b'x') => {
                let hex = line.get(i + 2..i + 4).ok_or("\\x needs two hex digits")?;
                out.push(u8::from_str_radix(hex, 16).map_err(|_| format!("bad escape \\x{hex}"))?);
                i += 2;
            }
            Some(c) => return Err(format!("unknown escape \\{}", *c as char)),
        }
        i += 2;
    }
    Ok((out, true))
}

/// The methods of the requests found in `bytes`, in order, as far as they
/// can be told apart (a response to `HEAD` has no body, so the reader must
/// know). Stops at the first thing that does not look like a request.
pub fn methods_in(bytes: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut p = 0;
    for _ in 0..10_000 {
        while p < bytes.len() && (bytes[p] == b'\r' || bytes[p] == b'\n') {
            p += 1;
        }
        let Some(head_len) = find_head_end(&bytes[p..]) else {
            if p < bytes.len() {
                out.push(first_word(&bytes[p..]));
            }
            break;
        };
        let head = &bytes[p..p + head_len.0];
        out.push(first_word(head));
        p += head_len.1;
        let (length, chunked) = body_framing(head);
        if chunked {
            match chunked_len(&bytes[p..]) {
                Some(n) => p += n,
                None => break,
            }
        } else {
            p += length;
        }
        if p >= bytes.len() {
            break;
        }
    }
    out
}

/// (length of the head without its terminator, length including it).
fn find_head_end(b: &[u8]) -> Option<(usize, usize)> {
    let crlf = b
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, i + 4));
    let lf = b.windows(2).position(|w| w == b"\n\n").map(|i| (i, i + 2));
    match (crlf, lf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

fn first_word(b: &[u8]) -> String {
    let end = b
        .iter()
        .position(|c| matches!(c, b' ' | b'\r' | b'\n'))
        .unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

fn body_framing(head: &[u8]) -> (usize, bool) {
    let text = String::from_utf8_lossy(head);
    let mut length = 0;
    let mut chunked = false;
    for line in text.lines().skip(1) {
        let Some((n, v)) = line.split_once(':') else {
            continue;
        };
        let n = n.trim();
        if n.eq_ignore_ascii_case("content-length") {
            length = v.trim().parse().unwrap_or(0);
        } else if n.eq_ignore_ascii_case("transfer-encoding") {
            chunked = v.to_ascii_lowercase().contains("chunked");
        }
    }
    (length, chunked)
}

/// Length of a chunked body including its last chunk and trailers.
pub fn chunked_len(b: &[u8]) -> Option<usize> {
    let mut p = 0;
    for _ in 0..100_000 {
        let eol = b[p..].windows(2).position(|w| w == b"\r\n")?;
        let line = std::str::from_utf8(&b[p..p + eol]).ok()?;
        let size = usize::from_str_radix(line.split(';').next()?.trim(), 16).ok()?;
        p += eol + 2;
        if size == 0 {
            for _ in 0..1000 {
                let eol = b[p..].windows(2).position(|w| w == b"\r\n")?;
                p += eol + 2;
                if eol == 0 {
                    return Some(p);
                }
            }
            return None;
        }
        p = p.checked_add(size)?.checked_add(2)?;
        if p > b.len() {
            return None;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_request_gets_host_and_close() {
        let r = parse("GET /a\nAccept: */*\n").unwrap();
        assert_eq!(
            String::from_utf8(r[0].bytes()).unwrap(),
            "GET /a HTTP/1.1\r\nHost: localhost\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
    }

    #[test]
    fn body_and_options() {
        let r = parse("# ignore-body\n# timeout 3\nPOST /x HTTP/1.0\n\nab\ncd\n\n---\nGET /\n")
            .unwrap();
        assert_eq!(r.len(), 2);
        assert!(r[0].opts.ignore_body);
        assert_eq!(r[0].opts.timeout, Some(Duration::from_secs(3)));
        let f = parse("# from 127.0.0.2\nGET /\n").unwrap();
        assert_eq!(f[0].opts.from, Some(std::net::Ipv4Addr::new(127, 0, 0, 2)));
        assert!(parse("# from 10.0.0.1\nGET /\n").is_err());
        let p = parse("# proxy-header PROXY TCP4 1.2.3.4 5.6.7.8 1 2\\r\\n\nGET /\n").unwrap();
        assert_eq!(
            p[0].opts.proxy_header.as_deref(),
            Some(&b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n"[..])
        );
        assert!(String::from_utf8(r[0].bytes())
            .unwrap()
            .ends_with("Content-Length: 5\r\n\r\nab\ncd"));
        assert_eq!(r[1].line, 9);
    }

    #[test]
    fn chunked_body_is_framed() {
        let r = parse("POST /x\nTransfer-Encoding: chunked\n\nhello\n").unwrap();
        assert!(String::from_utf8(r[0].bytes())
            .unwrap()
            .ends_with("\r\n\r\n5\r\nhello\r\n0\r\n\r\n"));
    }

    #[test]
    fn raw_shutdown_ends_the_block() {
        let r = parse("raw\nGET / HTTP/1.1\n\n<pause>\nbye\n<shutdown>\n").unwrap();
        assert_eq!(
            r[0].segments,
            vec![b"GET / HTTP/1.1\r\n\r\n".to_vec(), b"bye\r\n".to_vec()]
        );
        assert_eq!(r[0].gaps, vec![Gap::Answers, Gap::Shutdown]);
        assert!(parse("raw\nGET / HTTP/1.1\n<shutdown>\nmore\n").is_err());
        let r = parse("raw\nGET / HTTP/1.1\n\n<sleep 5>\n<shutdown>\n").unwrap();
        assert_eq!(
            r[0].gaps,
            vec![Gap::Sleep(Duration::from_millis(5)), Gap::Shutdown]
        );
        assert!(r[0].segments[1].is_empty());
    }

    #[test]
    fn raw_lines_escapes_and_pause() {
        let r = parse("raw\nGET / HTTP/1.1\nHost: x\\x00y\n\n<pause>\nab\\\n").unwrap();
        assert_eq!(r[0].segments.len(), 2);
        assert_eq!(r[0].segments[0], b"GET / HTTP/1.1\r\nHost: x\0y\r\n\r\n");
        assert_eq!(r[0].segments[1], b"ab");
        assert_eq!(r[0].gaps[0], Gap::Answers);
        let r = parse("raw\nPOST / HTTP/1.1\n\n<sleep 250>\n0\n").unwrap();
        assert_eq!(r[0].gaps[0], Gap::Sleep(Duration::from_millis(250)));
        assert_eq!(r[0].segments[1], b"0\r\n");
        // A sleep after a pause: the answers first, then the sleep.
        let r = parse("raw\nGET / HTTP/1.1\n\n<pause>\n<sleep 250>\nGET / HTTP/1.1\n\n").unwrap();
        assert_eq!(
            r[0].gaps[..2],
            [Gap::Answers, Gap::Sleep(Duration::from_millis(250))]
        );
        assert!(r[0].segments[1].is_empty());
    }

    #[test]
    fn repeat_expands() {
        assert_eq!(expand("a{{repeat 3 xy}}b").unwrap(), "axyxyxyb");
    }

    #[test]
    fn methods_are_found_in_pipelines() {
        let b = b"HEAD / HTTP/1.1\r\n\r\nPOST /p HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.1\r\n\r\n";
        assert_eq!(methods_in(b), vec!["HEAD", "POST", "GET"]);
        let c = b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nHEAD / HTTP/1.1\r\n\r\n";
        assert_eq!(methods_in(c), vec!["POST", "HEAD"]);
    }
}
