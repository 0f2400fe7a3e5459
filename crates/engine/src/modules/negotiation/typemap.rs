//! Type maps: the `type-map` handler (`handle_map_file`, `read_type_map`).
//! A `.var` file lists the variants of a resource as records of header
//! lines (`URI:`, `Content-Type:` with its `qs`, `Content-Language:`,
//! `Content-Encoding:`, `Content-Length:`, `Description:`, an inline
//! `Body:`), separated by blank lines. The best variant is then served:
//! inline from the map, or by an internal redirect to its URI.
//!
//! The reader follows Apache's line by line (`#` comments, continuation
//! lines, the `Body:` end tag searched within the next 8 KiB), since a map
//! Apache reads one way must not be read another.

use super::accept;
use super::select::Variant;
use crate::request::{Ctx, Status};

/// Apache's `MAX_STRING_LEN`: the longest line (and body) a map may hold.
const MAX_STRING_LEN: usize = 8192;

/// A type map being read.
pub struct Map {
    data: Vec<u8>,
}

/// `apr_file_gets`/`getc`/`ungetc` over the map's bytes.
struct Reader<'d> {
    data: &'d [u8],
    pos: usize,
}

impl Reader<'_> {
    fn gets(&mut self) -> Option<Vec<u8>> {
        if self.pos >= self.data.len() {
            return None;
        }
        let rest = &self.data[self.pos..];
        let max = MAX_STRING_LEN - 1;
        let end = match rest.iter().take(max).position(|&c| c == b'\n') {
            Some(i) => i + 1,
            None => rest.len().min(max),
        };
        self.pos += end;
        Some(rest[..end].to_vec())
    }
    fn getc(&mut self) -> Option<u8> {
        let c = self.data.get(self.pos).copied()?;
        self.pos += 1;
        Some(c)
    }
    fn ungetc(&mut self) {
        self.pos = self.pos.saturating_sub(1);
    }
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

enum Line {
    Eof,
    Seen(Vec<u8>),
    Sep,
}

/// `get_header_line`: the next header line with its continuations.
fn header_line(r: &mut Reader<'_>) -> Line {
    let mut buf = loop {
        match r.gets() {
            None => return Line::Eof,
            Some(l) if l.first() == Some(&b'#') => continue,
            Some(l) => break l,
        }
    };
    if buf.iter().all(|&c| is_space(c)) {
        return Line::Sep;
    }
    if buf.len() >= 5 && buf[..5].eq_ignore_ascii_case(b"Body:") {
        return Line::Seen(buf);
    }
    while let Some(mut c) = r.getc() {
        if c == b'#' {
            while let Some(c) = r.getc() {
                if c == b'\n' {
                    break;
                }
            }
        } else if is_space(c) {
            while c != b'\n' && is_space(c) {
                match r.getc() {
                    Some(n) => c = n,
                    None => break,
                }
            }
            r.ungetc();
            if c == b'\n' {
                return Line::Seen(buf);
            }
            while buf.len() < MAX_STRING_LEN - 2 {
                match r.getc() {
                    Some(b'\n') | None => break,
                    Some(c) => buf.push(c),
                }
            }
            buf.push(b'\n');
        } else {
            r.ungetc();
            return Line::Seen(buf);
        }
    }
    Line::Seen(buf)
}

/// `strip_paren_comments`, with its handling of quotes (a quote only
/// skips itself).
fn strip_paren_comments(hdr: &mut [u8]) {
    let mut i = 0;
    while i < hdr.len() {
        if hdr[i] == b'(' {
            while i < hdr.len() && hdr[i] != b')' {
                hdr[i] = b' ';
                i += 1;
            }
            if i < hdr.len() {
                hdr[i] = b' ';
                i += 1;
            }
        } else {
            i += 1;
        }
    }
}

/// A variant record before it is complete (`clean_var_rec`).
fn clean() -> Variant {
    let mut v = Variant::new(
        String::new(),
        &accept::AcceptRec {
            name: String::new(),
            quality: 0.0,
            level: 0.0,
            charset: String::new(),
        },
    );
    v.source_quality = 0.0;
    v
}

/// `do_languages_line`.
fn languages(body: &[u8]) -> Vec<String> {
    let mut line = body;
    let mut out = Vec::new();
    while !line.is_empty() {
        out.push(String::from_utf8_lossy(accept::token(&mut line)).to_ascii_lowercase());
        if matches!(line.first(), Some(b',' | b';')) {
            line = &line[1..];
        }
    }
    out
}

impl Map {
    /// `read_type_map`: the variants, in the map's order.
    /// `map_file` is the map's own path (an inline body's variant is named
    /// after it); errors name the request's file, as Apache's do.
    fn read(&self, ctx: &Ctx<'_>, map_file: &str) -> Result<Vec<Variant>, Status> {
        let log = |msg: String| {
            ctx.site
                .log
                .error("error", "negotiation", Some(ctx.req.remote()), &msg)
        };
        let mut r = Reader {
            data: &self.data,
            pos: 0,
        };
        let mut vars = Vec::new();
        let mut cur = clean();
        let mut has_content = false;
        loop {
            let line = header_line(&mut r);
            let mut buf = match line {
                Line::Seen(b) => b,
                Line::Sep | Line::Eof => {
                    if !cur.file_name.is_empty() && has_content {
                        vars.push(std::mem::replace(&mut cur, clean()));
                    } else {
                        cur = clean();
                    }
                    has_content = false;
                    if matches!(line, Line::Eof) {
                        break;
                    }
                    continue;
                }
            };
            let text = String::from_utf8_lossy(&buf).trim_end().to_string();
            let Some(colon) = buf.iter().position(|&c| c == b':') else {
                log(format!(
                    "AH00681: Syntax error in type map, no ':' in {} for header {}",
                    ctx.filename, text
                ));
                return Err(500);
            };
            buf[..colon].make_ascii_lowercase();
            let mut start = colon + 1;
            while start < buf.len() && is_space(buf[start]) {
                start += 1;
            }
            if start >= buf.len() {
                log(format!(
                    "AH00682: Syntax error in type map --- no header body: {} for {}",
                    ctx.filename, text
                ));
                return Err(500);
            }
            let (name, body) = buf.split_at_mut(start);
            strip_paren_comments(body);
            let mut body: &[u8] = body;
            if name.starts_with(b"uri:") {
                cur.file_name = crate::path_text::from_slice(accept::token(&mut body)).into_owned();
            } else if name.starts_with(b"content-type:") {
                let ct = accept::get_entry(&mut body);
                let keep = (
                    cur.file_name.clone(),
                    cur.content_encoding.take(),
                    std::mem::take(&mut cur.languages),
                );
                let (bytes, description, vbody) =
                    (cur.bytes, std::mem::take(&mut cur.description), cur.body);
                cur = Variant::new(keep.0, &ct);
                cur.content_encoding = keep.1;
                cur.languages = keep.2;
                cur.bytes = bytes;
                cur.description = description;
                cur.body = vbody;
                has_content = true;
            } else if name.starts_with(b"content-length:") {
                let tok = accept::token(&mut body);
                match std::str::from_utf8(tok)
                    .ok()
                    .filter(|t| !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit()))
                    .and_then(|t| t.parse::<i64>().ok())
                {
                    Some(n) => cur.bytes = n,
                    None => {
                        log(format!(
                            "AH00684: Parse error in type map, Content-Length: '{}' in {} is invalid.",
                            String::from_utf8_lossy(tok),
                            ctx.filename
                        ));
                        break;
                    }
                }
                has_content = true;
            } else if name.starts_with(b"content-language:") {
                cur.languages = languages(body);
                has_content = true;
            } else if name.starts_with(b"content-encoding:") {
                cur.content_encoding =
                    Some(String::from_utf8_lossy(accept::token(&mut body)).into_owned());
                has_content = true;
            } else if name.starts_with(b"description:") {
                let mut d: Vec<u8> = body
                    .iter()
                    .map(|&c| if c == b'\n' { b' ' } else { c })
                    .collect();
                d.pop();
                cur.description = String::from_utf8_lossy(&d).into_owned();
            } else if name.starts_with(b"body:") {
                let mut tag = body.to_vec();
                while tag.last().is_some_and(|&c| is_space(c)) {
                    tag.pop();
                }
                // The body is searched for in the next MAX_STRING_LEN - 1 bytes.
                let window_end = (r.pos + MAX_STRING_LEN - 1).min(self.data.len());
                let window = &self.data[r.pos..window_end];
                let window = match window.iter().position(|&c| c == 0) {
                    Some(nul) => &window[..nul],
                    None => window,
                };
                let found = if tag.is_empty() {
                    Some(0)
                } else {
                    window.windows(tag.len()).position(|w| w == &tag[..])
                };
                let Some(at) = found else {
                    log(format!(
                        "AH00685: Syntax error in type map, no end tag '{}' found in {} for Body: content.",
                        String::from_utf8_lossy(&tag),
                        ctx.filename
                    ));
                    break;
                };
                let mut end = at + tag.len();
                while end < window.len() {
                    end += 1;
                    if window[end - 1] == b'\n' {
                        break;
                    }
                }
                cur.body = Some((r.pos as u64, at as u64));
                cur.bytes = at as i64;
                r.pos += end;
                let base = map_file.rsplit('/').next().unwrap_or("");
                cur.file_name = base.to_string();
            }
        }
        Ok(vars)
    }
}

/// A type map met among MultiViews' candidates (`sub` is its
/// sub-request): its records replace the listing, and its tag is the
/// variant list's.
pub fn read_for(ctx: &mut Ctx<'_>, sub: &Ctx<'_>) -> Result<(Map, Vec<Variant>), Status> {
    let path = crate::path_text::os_path(std::path::Path::new(&sub.filename)).into_owned();
    let data = match read_bounded(&path) {
        Ok(d) => d,
        Err(e) => {
            ctx.log_error(
                "error",
                "negotiation",
                &format!(
                    "({}){}: AH00683: cannot access type map file: {}",
                    e.raw_os_error().unwrap_or(0),
                    e,
                    sub.filename
                ),
            );
            return Err(read_error_status(&e));
        }
    };
    let map = Map { data };
    let mut vars = map.read(ctx, &sub.filename)?;
    fill_lengths(&ctx.filename, &mut vars);
    let tag = map_tag(sub, ctx.request_time_us());
    ctx.vlist_validator = tag;
    Ok((map, vars))
}

/// The tag of a map (the variant list's), as `ap_make_etag` gives it for
/// the request that reads it.
fn map_tag(req: &Ctx<'_>, now_us: i64) -> Option<String> {
    let f = req.finfo?;
    let bits = crate::modules::core::server_directives::ETagSet::effective(req.conf.core.etag);
    let stamp = crate::http::etag::FileStamp {
        size: f.size,
        mtime_us: f.mtime_us,
        inode: f.inode,
    };
    match crate::http::etag::plan_etag(bits, &stamp, now_us, false) {
        crate::http::etag::EtagPlan::Value(own) => Some(match &req.vlist_validator {
            Some(prev) => crate::http::etag::with_vlist(&own, prev),
            None => own,
        }),
        _ => None,
    }
}

/// Lengths the map does not give come from the files beside the request.
fn fill_lengths(filename: &str, vars: &mut [Variant]) {
    let dir = match filename.rfind('/') {
        Some(i) => &filename[..=i],
        None => "",
    };
    for v in vars {
        if v.bytes < 0 {
            let full = format!("{dir}{}", v.file_name);
            if let Ok(m) = std::fs::metadata(crate::path_text::os_path(std::path::Path::new(&full)))
            {
                v.bytes = m.len() as i64;
            }
        }
    }
}

/// Whether the request is for a type map (the `type-map` handler, or a
/// file of type `application/x-type-map` with no handler).
fn is_map(ctx: &Ctx<'_>) -> bool {
    ctx.handler_name().is_some_and(super::claims)
}

/// The handler: `None` when the request is not for a type map (or the
/// module is not loaded).
pub fn handle(ctx: &mut Ctx<'_>) -> Option<Result<crate::http::Response, Status>> {
    if !is_map(ctx) || !super::loaded(ctx) {
        return None;
    }
    // The map is read on every request, outside the caches.
    crate::answer_memo::note_volatile();
    Some(serve(ctx))
}

/// 404 for a map that is not there, 500 for one too long, else 403.
fn read_error_status(e: &std::io::Error) -> Status {
    if e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR) {
        404
    } else if e.kind() == std::io::ErrorKind::Other {
        500
    } else {
        403
    }
}

/// The most of a map that is read: a longer one fails (500, error-log line).
const MAP_MAX: u64 = 1 << 20;

/// The map's bytes, bounded by [`MAP_MAX`].
fn read_bounded(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut data = Vec::new();
    std::fs::File::open(path)?
        .take(MAP_MAX + 1)
        .read_to_end(&mut data)?;
    if data.len() as u64 > MAP_MAX {
        return Err(std::io::Error::other(format!(
            "type map larger than {MAP_MAX} bytes"
        )));
    }
    Ok(data)
}

fn serve(ctx: &mut Ctx<'_>) -> Result<crate::http::Response, Status> {
    let path = crate::path_text::os_path(std::path::Path::new(&ctx.filename)).into_owned();
    let data = match read_bounded(&path) {
        Ok(d) => d,
        Err(e) => {
            ctx.log_error(
                "error",
                "negotiation",
                &format!(
                    "({}){}: AH00683: cannot access type map file: {}",
                    e.raw_os_error().unwrap_or(0),
                    e,
                    ctx.filename
                ),
            );
            return Err(read_error_status(&e));
        }
    };
    let map = Map { data };
    let filename = ctx.filename.clone();
    let mut vars = map.read(ctx, &filename)?;
    fill_lengths(&filename, &mut vars);
    // The variant list's tag is the map's own.
    let now = ctx.request_time_us();
    if let Some(tag) = map_tag(ctx, now) {
        ctx.vlist_validator = Some(tag);
    }
    let mut neg = super::multiviews::parse_accept_headers(ctx);
    let best = super::multiviews::do_negotiation(ctx, &mut neg, &mut vars, false, Some(&map))?;
    // HTTP/1.0 caches cannot tell variants apart: such an answer expires at once.
    let no_cache = ctx.req.version == crate::http::Version::Http10
        && !ctx.conf.negotiation.cache_negotiated.unwrap_or(false);
    let best = &vars[best];
    let mut resp = match best.body {
        Some((offset, len)) => inline(ctx, &map, best, offset, len)?,
        None => {
            let uri = if ctx.path_info.is_empty() {
                &ctx.uri[..]
            } else {
                ctx.uri.strip_suffix(&ctx.path_info[..]).unwrap_or(&ctx.uri)
            };
            let udir = match uri.rfind('/') {
                Some(i) => &uri[..=i],
                None => "/",
            };
            let udir = crate::uri::escape_path(&crate::path_text::bytes(udir)).into_owned();
            ctx.modules.rewrite.redirect =
                Some(format!("{udir}{}{}", best.file_name, ctx.path_info));
            match crate::modules::rewrite::redirect_handler(ctx) {
                Some(resp) => resp,
                None => return Err(500),
            }
        }
    };
    if no_cache && resp.header("Expires").is_none() {
        let secs = ctx.request_time_us().div_euclid(1_000_000);
        resp.add_header("Expires", crate::http::date::fmt_http_date(secs));
    }
    Ok(resp)
}

/// A variant held in the map itself.
fn inline(
    ctx: &mut Ctx<'_>,
    map: &Map,
    v: &Variant,
    offset: u64,
    len: u64,
) -> Result<crate::http::Response, Status> {
    if !matches!(&*ctx.method, "GET" | "HEAD" | "POST") {
        // The methods the map allows, and TRACE as the core adds it.
        ctx.allow = Some(if ctx.site.trace_enable {
            "GET,HEAD,POST,OPTIONS,TRACE"
        } else {
            "GET,HEAD,POST,OPTIONS"
        });
        return Err(405);
    }
    if !v.mime_type.is_empty() {
        ctx.content_type = Some(if v.content_charset.is_empty() {
            v.mime_type.clone()
        } else {
            format!("{}; charset={}", v.mime_type, v.content_charset)
        });
    }
    if !v.languages.is_empty() {
        ctx.languages = v.languages.clone();
    }
    if let Some(e) = v.content_encoding.as_ref().filter(|e| !e.is_empty()) {
        ctx.encodings = vec![e.clone()];
    }
    let mut resp = crate::http::Response::new(200);
    resp.add_header("Accept-Ranges", "bytes");
    resp.add_header("Content-Length", len.to_string());
    if let Some(t) = crate::handler::content_type_with_charset(ctx) {
        resp.add_header("Content-Type", t);
    }
    if !ctx.languages.is_empty() {
        resp.add_header("Content-Language", ctx.languages.join(","));
    }
    if let Some(e) = ctx.encodings.last() {
        resp.add_header("Content-Encoding", e.clone());
    }
    let start = offset as usize;
    let end = (start + len as usize).min(map.data.len());
    if ctx.method != "HEAD" {
        resp.body = crate::http::Body::bytes(map.data[start..end].to_vec());
    }
    Ok(resp)
}

/// `setup_choice_response` for a variant of a map: it is looked up now,
/// and must not itself be negotiated.
pub fn check_choice(ctx: &mut Ctx<'_>, v: &Variant) -> Result<(), Status> {
    let (sub, status) = ctx.sub_request_path(&v.file_name, None);
    let tcn = sub
        .err_headers_out
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("TCN"));
    if let Err(s) = status {
        if !tcn {
            return Err(s);
        }
    }
    if tcn || sub.handler.as_deref() == Some("type-map") {
        return Err(506);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        let mut r = Reader {
            data: text.as_bytes(),
            pos: 0,
        };
        let mut out = Vec::new();
        loop {
            match header_line(&mut r) {
                Line::Eof => break,
                Line::Sep => out.push("<sep>".to_string()),
                Line::Seen(b) => out.push(String::from_utf8_lossy(&b).into_owned()),
            }
        }
        out
    }

    #[test]
    fn header_lines_with_comments_and_continuations() {
        assert_eq!(
            lines("# c\nURI: a\nDescription: one\n  two\n# x\nContent-Type: text/html\n\nURI: b\n"),
            [
                "URI: a\n",
                "Description: one\ntwo\n",
                "Content-Type: text/html\n",
                "<sep>",
                "URI: b\n",
            ]
        );
    }

    #[test]
    fn parenthesised_comments_become_spaces() {
        let mut h = b"English (the original)\n".to_vec();
        strip_paren_comments(&mut h);
        assert_eq!(&h[..], b"English               \n");
    }

    #[test]
    fn languages_are_split_and_lowered() {
        assert_eq!(languages(b"EN, fr;de\n"), ["en", "fr", "de"]);
    }
}
