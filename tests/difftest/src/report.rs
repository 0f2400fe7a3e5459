//! What a person reads: each difference with the request and both answers,
//! the per-case table, and the closing `N passed, M failed` line.

use crate::client::Exchange;
use crate::protocol::Protocol;
use crate::requests::Request;
use crate::response::Response;
use crate::runner::CaseResult;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Bytes of a body shown before cutting it short.
const BODY_SHOWN: usize = 1500;
/// Bytes of a request shown before cutting it short.
const REQUEST_SHOWN: usize = 800;
/// Differing requests of one case shown with both answers in full; the
/// rest are listed with their differences only.
const DIFFS_SHOWN: usize = 4;

/// Bytes as readable text: CRLF shown as a line break (a lone LF as `\n`
/// and a line break), other control and non-ASCII bytes escaped, cut after
/// `limit` bytes. For protocol text, where CRLF is the norm.
pub fn show_bytes(b: &[u8], limit: usize) -> String {
    show(b, limit, false)
}

/// Like [`show_bytes`] for content, where LF is the norm (CR shown as `\r`).
pub fn show_body(b: &[u8], limit: usize) -> String {
    show(b, limit, true)
}

fn show(b: &[u8], limit: usize, lf_is_line: bool) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < b.len().min(limit) {
        match b[i] {
            b'\n' if lf_is_line => out.push('\n'),
            b'\r' if !lf_is_line && b.get(i + 1) == Some(&b'\n') => {
                out.push('\n');
                i += 1;
            }
            b'\n' => out.push_str("\\n\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push('\t'),
            c @ 0x20..=0x7e => out.push(c as char),
            c => {
                let _ = write!(out, "\\x{c:02x}");
            }
        }
        i += 1;
    }
    if b.len() > limit {
        let _ = write!(out, "… ({} more bytes)", b.len() - limit);
    }
    out
}

fn indent(text: &str, by: &str) -> String {
    text.lines().map(|l| format!("{by}{l}\n")).collect()
}

fn show_response(r: &Response) -> String {
    let mut out = format!("{}\n", r.status_line);
    for (n, v) in &r.headers {
        let _ = writeln!(out, "{n}: {v}");
    }
    if !r.body.is_empty() {
        out.push('\n');
        out.push_str(&show_body(&r.body, BODY_SHOWN));
        if r.body.len() > BODY_SHOWN {
            out.push('\n');
        } else if !r.body.ends_with(b"\n") {
            out.push_str("\n[no line break at the end]\n");
        }
    }
    out
}

/// An exchange as the client saw it.
pub fn show_exchange(e: &Exchange) -> String {
    let mut out = String::new();
    for (i, r) in e.responses.iter().enumerate() {
        if i > 0 {
            out.push_str("~~~~ next response\n");
        }
        out.push_str(&show_response(r));
    }
    if !e.trailing.is_empty() {
        let _ = writeln!(
            out,
            "~~~~ {} bytes that are no HTTP response:\n{}",
            e.trailing.len(),
            show_bytes(&e.trailing, BODY_SHOWN)
        );
    }
    let _ = writeln!(out, "[{}]", e.end.describe());
    out
}

/// The request as the case writes it and, over HTTP/2, as it was sent
/// (pseudo-header fields, fields, body), each line after `prefix`.
fn show_request(req: &Request, protocol: Protocol, prefix: &str) -> String {
    let mut out = indent(&show_bytes(&req.bytes(), REQUEST_SHOWN), prefix);
    if protocol == Protocol::Http2 {
        if let Ok(streams) = crate::h2request::translate(req) {
            for s in streams {
                let _ = writeln!(out, "{prefix}[sent as HTTP/2]");
                let mut text = format!(
                    ":method: {}\n:path: {}\n:authority: {}\n",
                    s.method, s.path, s.authority
                );
                for (n, v) in &s.headers {
                    let _ = writeln!(text, "{n}: {}", show_body(v, REQUEST_SHOWN));
                }
                if !s.body.is_empty() {
                    let _ = writeln!(text, "\n{}", show_body(&s.body, REQUEST_SHOWN));
                }
                out.push_str(&indent(&text, prefix));
            }
        }
    }
    out
}

/// `--apache-only`: one request and Apache's answer.
pub fn transcript_entry(req: &Request, protocol: Protocol, e: &Exchange) -> String {
    format!(
        ">>> line {}: {}\n{}<<<\n{}\n",
        req.line,
        req.title,
        show_request(req, protocol, "  > "),
        indent(&show_exchange(e), "  ")
    )
}

/// Everything that went wrong in one case.
pub fn failure(r: &CaseResult, protocol: Protocol) -> String {
    let mut out = format!("==== FAILED {} ====\n", r.name);
    if let Some(readme) = &r.readme {
        let _ = writeln!(out, "({readme})");
    }
    if let Some(e) = &r.error {
        let _ = writeln!(out, "error: {e}");
    }
    for (i, d) in r.diffs.iter().enumerate() {
        let _ = writeln!(
            out,
            "\n---- requests line {}: {}",
            d.request.line, d.request.title
        );
        for p in &d.problems {
            let _ = writeln!(out, "  * {p}");
        }
        if i >= DIFFS_SHOWN {
            continue;
        }
        out.push_str("  request:\n");
        out.push_str(&show_request(&d.request, protocol, "    > "));
        out.push_str("  Apache answered:\n");
        out.push_str(&indent(&show_exchange(&d.apache), "    | "));
        out.push_str("  htaccel answered:\n");
        out.push_str(&indent(&show_exchange(&d.other), "    | "));
    }
    if !r.apache_log.trim().is_empty() {
        let _ = writeln!(out, "\n  Apache's logs:\n{}", r.apache_log);
    }
    if !r.other_log.trim().is_empty() {
        let _ = writeln!(out, "  htaccel's logs:\n{}", r.other_log);
    }
    out
}

/// The requests of a case that were not sent because `protocol` cannot
/// express them, grouped by reason (`--http2`), one line a reason.
pub fn skipped(r: &CaseResult, protocol: Protocol) -> String {
    let mut reasons: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (line, why) in &r.skipped {
        reasons.entry(why.as_str()).or_default().push(*line);
    }
    let mut out = String::new();
    for (why, lines) in reasons {
        let shown: Vec<String> = lines.iter().take(8).map(usize::to_string).collect();
        let more = if lines.len() > 8 { ", …" } else { "" };
        let _ = writeln!(
            out,
            "       not expressible in {}: {} × {why} (line {}{more})",
            protocol.name(),
            lines.len(),
            shown.join(", ")
        );
    }
    out
}

/// The per-case table and the total line (last, alone on its line).
pub fn summary(results: &[CaseResult], protocol: Protocol) -> String {
    let width = results
        .iter()
        .map(|r| r.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    // Over HTTP/2, the requests not sent (not expressible) get a column.
    let not_sent = |r: Option<&CaseResult>| match (protocol, r) {
        (Protocol::Http1, _) => String::new(),
        (_, None) => format!("  {:>8}", "not sent"),
        (_, Some(r)) => format!("  {:>8}", r.skipped.len()),
    };
    let mut out = format!(
        "{:<width$}  {:>8}{}  {:>9}  {:>9}  {:>6}\n",
        "case",
        "requests",
        not_sent(None),
        "identical",
        "differing",
        "secs"
    );
    for r in results {
        let mark = if r.error.is_some() { "  ERROR" } else { "" };
        let _ = writeln!(
            out,
            "{:<width$}  {:>8}{}  {:>9}  {:>9}  {:>6.1}{mark}",
            r.name,
            r.requests,
            not_sent(Some(r)),
            r.identical,
            r.diffs.len(),
            r.elapsed.as_secs_f64()
        );
    }
    if protocol != Protocol::Http1 {
        let skipped: usize = results.iter().map(|r| r.skipped.len()).sum();
        let sent: usize = results.iter().map(|r| r.identical + r.diffs.len()).sum();
        let _ = writeln!(
            out,
            "over {}: {sent} requests compared, {skipped} not expressible in {} (not sent)",
            protocol.name(),
            protocol.name()
        );
    }
    let passed = results.iter().filter(|r| r.passed()).count();
    let _ = writeln!(out, "{passed} passed, {} failed", results.len() - passed);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn bytes_are_escaped_and_cut() {
        assert_eq!(super::show_bytes(b"a\r\nb\x00c", 10), "a\nb\\x00c");
        assert_eq!(super::show_bytes(b"abcdef", 2), "ab… (4 more bytes)");
        assert_eq!(super::show_body(b"a\r\nb\n", 10), "a\\r\nb\n");
    }
}
