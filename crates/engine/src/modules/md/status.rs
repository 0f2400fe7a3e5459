//! mod_md's two pages of its own: the `md-status` handler (every managed
//! domain, or the one its path names) and `/.httpd/certificate-status`,
//! which each managed domain answers before any other phase. Both are
//! JSON from [`super::json`]; both refuse methods other than `GET` (and
//! `HEAD`, which is a `GET` to Apache's method numbers) with 501.

use super::json;
use crate::http::md::ManagedDomain;
use crate::http::{Body, Response};
use crate::request::{Ctx, Status};

const HANDLER: &str = "md-status";
/// Where a managed domain publishes its certificate's state.
pub const CERTIFICATE_STATUS_PATH: &str = "/.httpd/certificate-status";

fn now() -> i64 {
    crate::http::date::unix_secs(std::time::SystemTime::now())
}

fn json_response(text: String) -> Response {
    let mut resp = Response::new(200);
    resp.add_header("Content-Type", "application/json");
    resp.body = Body::bytes(text.into_bytes());
    resp
}

/// Whether the handler `name` is `md-status`.
pub fn claims(name: &str) -> bool {
    name == HANDLER
}

/// `md_status_handler`.
pub fn handler(ctx: &mut Ctx<'_>) -> Option<Result<Response, Status>> {
    if ctx.handler_name() != Some(HANDLER) || !ctx.site.env.is_loaded("md_module") {
        return None;
    }
    // The store and the certificate manager change outside the engine's view.
    crate::answer_memo::note_volatile();
    if ctx.method != "GET" && ctx.method != "HEAD" {
        ctx.allow_no_method();
        return Some(Ok(crate::errors::error_response(ctx, 501)));
    }
    let mds = &ctx.engine.modules.md.domains;
    // `/md-status/NAME`: the domain of that name, else the one covering it.
    let named = (ctx.path_info.len() > 1)
        .then(|| ctx.path_info.rsplit('/').next())
        .flatten()
        .filter(|_| ctx.path_info.starts_with('/'));
    let one = named.and_then(|n| {
        mds.iter()
            .find(|m| m.name == n)
            .or_else(|| mds.iter().find(|m| m.covers(n)))
    });
    let value = match one {
        Some(md) => json::domain(md, now()),
        None => json::all(mds, now()),
    };
    let mut resp = json_response(json::text(&value));
    // mod_md writes it with no length: chunked (or to the connection's end).
    resp.stream = crate::http::Unannounced::Chunked;
    Some(Ok(resp))
}

/// `md_http_cert_status`: the answer for `/.httpd/certificate-status` on
/// a managed domain's name (`Ok`), a 501 for another method (`Err`), or
/// `None` when the request is not one (the path, the setting, the name).
pub fn certificate_status(
    engine: &crate::engine::Engine,
    method: &str,
    path: &str,
    md: &ManagedDomain,
) -> Option<Result<Response, u16>> {
    if path != CERTIFICATE_STATUS_PATH || !engine.modules.md.certificate_status {
        return None;
    }
    crate::answer_memo::note_volatile();
    if method != "GET" && method != "HEAD" {
        return Some(Err(501));
    }
    let text = json::text(&json::certificate_status(md, now()));
    let mut resp = json_response(text);
    // mod_md writes it with no length: chunked (or to the connection's end).
    resp.stream = crate::http::Unannounced::Chunked;
    Some(Ok(resp))
}
