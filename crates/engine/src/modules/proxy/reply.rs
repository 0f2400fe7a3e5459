//! A FastCGI backend's answer turned into the client's, as Apache treats a
//! script's header block (`ap_scan_script_header_err_brigade_ex`, used by
//! mod_proxy_fcgi), then through the output filters.
//!
//! The header block is sorted as Apache sorts it: `Content-Type` becomes
//! the response's type; `Status` its status; `Location`, `ETag`,
//! `Content-Range` and a valid `Last-Modified` go to the normal table;
//! `Content-Length` and `Transfer-Encoding` are dropped (FastCGI frames the
//! body itself; the server chunks it), the length kept only where
//! `ap_trust_cgilike_cl` is set; every other header goes to the
//! "always" table (`err_headers_out`), repeated names merged with ", ",
//! `Set-Cookie` kept one per line after the others. Without `Status`, a GET
//! is checked against its conditional headers (a backend's `ETag` and
//! `Last-Modified` may make a 304 or 412).

use crate::http::backend::{BackendAnswer, BackendError, BackendHead, Decision};
use crate::http::conditional::{self, Clock, Validators, Verdict};
use crate::http::Response;
use crate::request::Ctx;

/// The response for a failed exchange: Apache's error page for 502, 503 or
/// 504, with the reason in the error log.
pub fn failed(mut ctx: Ctx<'_>, error: BackendError) -> BackendAnswer<'_> {
    let status = error.status();
    let module = if ctx.filename.contains("fcgi://") {
        "proxy_fcgi"
    } else {
        "proxy_http"
    };
    ctx.reason = Some(crate::request::Reason::new(
        "error",
        module,
        error.message(),
    ));
    if let BackendError::Proxy { reason, .. } = &error {
        proxy_error(&mut ctx, status, reason);
    }
    let resp = crate::errors::die(&mut ctx, status);
    BackendAnswer::respond(resp)
}

/// `ProxyErrorOverride` for mod_proxy_fcgi: a script's error `Status`, on
/// the initial request only (`ap_is_initial_req`), answered by this
/// server's error page or `ErrorDocument` instead of the script's body.
pub fn error_override<'a>(ctx: &mut Ctx<'a>, head: &BackendHead) -> Option<BackendAnswer<'a>> {
    if ctx.redirects > 0 || ctx.is_subreq {
        return None;
    }
    let status = head.lines.iter().find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("Status")
            .then(|| atoi(value.trim_matches([' ', '\t'])))
    })?;
    if !super::conf::should_override(&ctx.conf.proxy, status) {
        return None;
    }
    // The script's other fields go with the error page, as a CGI
    // script's do (Apache keeps them in `err_headers_out`).
    if let Err(answer) = keep_fields(ctx, head) {
        return Some(*answer);
    }
    Some(error_page(ctx, status))
}

/// The error page for `status` instead of a backend's answer; when the
/// `ErrorDocument` is itself served by a backend, that exchange follows.
pub fn error_page<'a>(ctx: &mut Ctx<'a>, status: u16) -> BackendAnswer<'a> {
    let resp = crate::errors::die(ctx, status);
    match crate::error_backend::decision(ctx) {
        Some(Decision::Backend(call)) => BackendAnswer::Then(Box::new(call)),
        Some(Decision::Respond(r)) => BackendAnswer::respond(r),
        Some(Decision::Kept(r)) => BackendAnswer::respond((*r).clone()),
        None => BackendAnswer::respond(resp),
    }
}

/// `ap_proxyerror`: the reason logged (AH00898) and shown on the page,
/// whose status line becomes `NNN Proxy Error`.
pub(super) fn proxy_error(ctx: &mut Ctx<'_>, status: u16, reason: &str) {
    let client = Some(ctx.req.remote());
    if let Some(r) = ctx.reason.take() {
        ctx.site.log.error(&r.level, r.module, client, &r.message);
    }
    let returned = format!("AH00898: {reason} returned by {}", ctx.uri);
    ctx.site.log.error("error", "proxy", client, &returned);
    ctx.error_note = Some(format!(
        "The proxy server could not handle the request<p>Reason: <strong>{}</strong></p>",
        crate::uri::escape_html_str(reason)
    ));
    ctx.error_status_line = Some(format!("{status} Proxy Error"));
    ctx.verbose_errors = true;
}

/// A header block sorted into Apache's tables.
struct Sorted {
    status: Option<u16>,
    status_text: Option<String>,
    normal: Vec<(String, String)>,
    content_type: Option<String>,
}

/// Sort the block's fields: the script's own `Status` and `Content-Type`,
/// the normal table (`Location`, `ETag`, …), and the rest merged into the
/// "always" table on `ctx`. A line that is no field is a 500, with
/// Apache's error-log line.
fn sort_fields(ctx: &mut Ctx<'_>, head: &BackendHead) -> Result<Sorted, u16> {
    let mut status: Option<u16> = None;
    let mut normal: Vec<(String, String)> = Vec::new();
    let mut merge: Vec<(String, String)> = Vec::new();
    let mut cookies: Vec<(String, String)> = Vec::new();
    let mut content_type = None;
    let mut status_text = None;
    for line in &head.lines {
        let Some((name, value)) = line.split_once(':') else {
            let shown: String = line.chars().take(30).collect();
            ctx.reason = Some(crate::request::Reason::new(
                "error",
                "core",
                format!(
                    "malformed header from script '{}': Bad header: {shown}",
                    basename(&ctx.filename)
                ),
            ));
            return Err(500);
        };
        let value = value.trim_start_matches([' ', '\t']);
        let lower = name.to_ascii_lowercase();
        match lower.as_str() {
            "content-type" => {
                let t = type_tolower(value.trim_end());
                content_type = (!t.is_empty()).then_some(t);
            }
            "status" => {
                status = Some(atoi(value));
                status_text = Some(value.trim_end().to_string());
            }
            "location" | "content-range" | "etag" => set(&mut normal, name, value),
            // A script frames its body by its end; its own length is
            // trusted only under `ap_trust_cgilike_cl` (Apache 2.4.60).
            "content-length" if ctx.env.contains("ap_trust_cgilike_cl") => {
                set(&mut normal, name, value)
            }
            "content-length" | "transfer-encoding" => {}
            "last-modified" => {
                if let Some(t) = crate::http::date::parse_http_date(value) {
                    // ap_update_mtime + ap_set_last_modified: never later than now.
                    let now = ctx.request_time_us() / 1_000_000;
                    let t = crate::http::date::fmt_http_date(t.min(now));
                    set(&mut normal, "Last-Modified", &t);
                }
            }
            "set-cookie" => cookies.push((name.to_string(), value.to_string())),
            _ => merge.push((name.to_string(), value.to_string())),
        }
    }
    // Overlap (merge) onto the "always" table, cookies last.
    for (n, v) in merge {
        match ctx
            .err_headers_out
            .iter_mut()
            .find(|(m, _)| m.eq_ignore_ascii_case(&n))
        {
            Some(slot) => {
                slot.1.push_str(", ");
                slot.1.push_str(&v);
            }
            None => ctx.err_headers_out.push((n, v)),
        }
    }
    if !cookies.is_empty() {
        let mut old: Vec<(String, String)> = Vec::new();
        ctx.err_headers_out.retain(|(n, v)| {
            let keep = !n.eq_ignore_ascii_case("Set-Cookie");
            if !keep {
                old.push((n.clone(), v.clone()));
            }
            keep
        });
        ctx.err_headers_out.extend(old);
        ctx.err_headers_out.extend(cookies);
    }
    Ok(Sorted {
        status,
        status_text,
        normal,
        content_type,
    })
}

/// Only the "always" table's share of a header block (for an answer that
/// replaces the script's, such as mod_cgi's redirects); a malformed block
/// gives the error answer instead.
pub fn keep_fields<'a>(
    ctx: &mut Ctx<'a>,
    head: &BackendHead,
) -> Result<(), Box<BackendAnswer<'a>>> {
    sort_fields(ctx, head).map(|_| ()).map_err(|status| {
        let resp = crate::errors::die(ctx, status);
        Box::new(BackendAnswer::respond(resp))
    })
}

/// The response for a backend's header block.
pub fn finish(mut ctx: Ctx<'_>, head: BackendHead) -> BackendAnswer<'_> {
    let Sorted {
        status,
        status_text,
        normal,
        content_type,
    } = match sort_fields(&mut ctx, &head) {
        Ok(s) => s,
        Err(status) => return error(ctx, status),
    };
    let status_from_script = status;
    let status = match status {
        Some(s) if (100..600).contains(&s) => s,
        Some(_) => {
            ctx.reason = Some(crate::request::Reason::new(
                "error",
                "core",
                "Invalid status line from script",
            ));
            return error(ctx, 500);
        }
        // Without one, the status the request has: an error document's
        // is the error's (and no conditional check applies to it).
        None => ctx.prev_status.unwrap_or(200),
    };
    let mut resp = Response::new(status);
    resp.headers = normal.into_iter().map(|(n, v)| (n.into(), v)).collect();
    // The script's own status text is kept (Apache's r->status_line).
    resp.status_line = status_text;
    if let Some(t) = &content_type {
        ctx.content_type = Some(t.clone());
        resp.headers.push(("Content-Type".into(), t.clone()));
    }
    let mut pass_body = !head.body_empty;
    // Without Status, a GET (or HEAD) is checked against the validators
    // the script sent (ap_meets_conditions).
    if conditional::is_get(&ctx.method) && status_from_script.is_none() {
        let now = ctx.request_time_us() / 1_000_000;
        let clock = Clock {
            mtime: None,
            request_time: now,
            now,
        };
        // A `Range` held back for after the content filters still counts.
        let verdict = conditional::meets_conditions(
            &ctx.method,
            status,
            ctx.range_deferred.as_ref().unwrap_or(&ctx.headers_in),
            &Validators::from_response(&resp, clock),
        );
        match verdict {
            Verdict::Proceed => {}
            Verdict::NotModified => {
                resp.status = 304;
                conditional::strip_for_304(&mut resp);
                pass_body = false;
            }
            // The script's headers stay; its body is dropped.
            Verdict::PreconditionFailed => {
                resp.status = 412;
                pass_body = false;
            }
        }
    }
    // mod_xsendfile: a file named by the script replaces its body.
    if resp.status == 200 {
        match crate::modules::xsendfile::apply(&mut ctx, &mut resp) {
            crate::modules::xsendfile::Outcome::None => {}
            crate::modules::xsendfile::Outcome::File => pass_body = false,
            crate::modules::xsendfile::Outcome::Error(s) => return error(ctx, s),
        }
    }
    if pass_body && crate::modules::filter::may_need_body(&ctx) {
        // mod_proxy_fcgi passes the body before its end.
        return collect(ctx, resp, true);
    }
    // The body's length is not known: chunked (HTTP/1.1) as Apache sends
    // it, whether or not the connection stays open.
    stream(ctx, resp, pass_body, pass_body)
}

/// A backend's answer whose body the server passes on as it arrives:
/// chunked when `chunked`, then the last touches and the output filters.
pub fn stream<'a>(
    mut ctx: Ctx<'a>,
    mut resp: Response,
    pass_body: bool,
    chunked: bool,
) -> BackendAnswer<'a> {
    let closing = closes(&ctx);
    if closing {
        resp.close = true;
        if pass_body {
            resp.stream = crate::http::Unannounced::Chunked;
        }
    }
    if chunked && !closing && resp.header("Content-Length").is_none() {
        resp.headers
            .push(("Transfer-Encoding".into(), "chunked".into()));
    }
    if pass_body {
        resp.arrival = crate::http::Arrival::Later;
    }
    let mut resp = crate::errors::finish(&mut ctx, resp);
    crate::filters::output(&mut ctx, &mut resp, false);
    BackendAnswer::Send {
        response: resp,
        pass_body,
    }
}

/// A body a content filter (`DEFLATE`) may need whole: the server collects
/// it, then the output filters run on the complete response, as on a
/// file's. Unchanged by them, it still goes chunked, as a script's output.
/// `pieces`: the body reaches Apache's filters in more than one piece.
pub fn collect<'a>(mut ctx: Ctx<'a>, resp: Response, pieces: bool) -> BackendAnswer<'a> {
    BackendAnswer::Collect(Box::new(move |body| {
        let mut resp = resp;
        resp.body = crate::http::Body::bytes(body);
        if pieces {
            resp.arrival = crate::http::Arrival::InPieces;
        }
        let mut resp = crate::errors::finish(&mut ctx, resp);
        crate::filters::output(&mut ctx, &mut resp, false);
        let encoded = resp.header("Content-Encoding").is_some();
        let framed =
            resp.header("Content-Length").is_some() || resp.header("Transfer-Encoding").is_some();
        if closes(&ctx) {
            resp.close = true;
            if !framed {
                resp.stream = crate::http::Unannounced::Chunked;
            }
        } else if !encoded && !framed {
            resp.headers
                .insert(0, ("Transfer-Encoding".into(), "chunked".into()));
        }
        resp
    }))
}

/// An error document's answer for a status that drops the connection:
/// Apache's ap_die closed it before the redirect, so the body is ended by
/// the close, not chunked.
fn closes(ctx: &Ctx<'_>) -> bool {
    ctx.prev_status
        .is_some_and(crate::http::status::drops_connection)
}

fn error(mut ctx: Ctx<'_>, status: u16) -> BackendAnswer<'_> {
    let resp = crate::errors::die(&mut ctx, status);
    BackendAnswer::respond(resp)
}

fn set(table: &mut Vec<(String, String)>, name: &str, value: &str) {
    table.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    table.push((name.to_string(), value.to_string()));
}

/// C's `atoi`: leading blanks, optional sign, digits; 0 when none.
pub(crate) fn atoi(s: &str) -> u16 {
    let s = s.trim_start();
    let digits: String = s.chars().take_while(char::is_ascii_digit).take(5).collect();
    digits
        .parse::<u32>()
        .map_or(0, |n| n.min(u16::MAX as u32) as u16)
}

/// `ap_content_type_tolower`: the media type in lower case, its
/// parameters as written.
fn type_tolower(t: &str) -> String {
    match t.split_once(';') {
        Some((ty, params)) => format!("{};{params}", ty.to_ascii_lowercase()),
        None => t.to_ascii_lowercase(),
    }
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_like_atoi() {
        assert_eq!(atoi("404 Not Found"), 404);
        assert_eq!(atoi("  302"), 302);
        assert_eq!(atoi("abc"), 0);
    }

    #[test]
    fn content_type_case() {
        assert_eq!(
            type_tolower("Text/HTML; Charset=UTF-8"),
            "text/html; Charset=UTF-8"
        );
        assert_eq!(type_tolower("image/PNG"), "image/png");
    }
}
