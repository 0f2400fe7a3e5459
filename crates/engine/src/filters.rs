//! Output filters: what modules change on a response after its handler
//! (or the error path) produced it, in Apache's order — mod_expires before
//! mod_headers, compression last. `error` tells whether the response came
//! from the error path, where only `Header always` edits apply.
//!
//! A protocol filter may still turn the response into an error once its
//! headers were made (the byte-range filter's 416): Apache sends an error
//! bucket down the chain and the protocol's response filter calls
//! `ap_die` ([`error_bucket`]).

use crate::header_table::Output;
use crate::http::Response;
use crate::modules::hooks;
use crate::request::Ctx;

pub fn output(ctx: &mut Ctx<'_>, resp: &mut Response, error: bool) {
    if std::mem::replace(&mut ctx.output_done, true) {
        return;
    }
    // Apache's filter goes with the handler's output: an error page, whose
    // filters start again from the protocol's, has none.
    if !error && hooks::tracks_ttfb(ctx) {
        resp.log_vars
            .get_or_insert_with(Default::default)
            .track_ttfb = true;
    }
    // mod_log_config's `%h`, as `HostnameLookups` has it for the request.
    resp.remote_host = ctx.remote_host();
    // mod_deflate's filter runs before mod_headers' (both content filters,
    // DEFLATE inserted first).
    if !error && resp.arrival != crate::http::Arrival::Later {
        for filter in hooks::CONTENT_FILTERS {
            if let Err(status) = filter(ctx, resp) {
                // A content filter failed before anything was sent: the
                // handler's `AP_FILTER_ERROR` becomes the status's page.
                error_bucket(ctx, resp, status, Vec::new());
                keep_notes(ctx, resp);
                return;
            }
        }
    }
    // `r->err_headers_out` as the header filters leave it, for as long as
    // the protocol keeps it apart from `headers_out` (see `error_bucket`).
    let mut unmerged = Vec::new();
    if Output::needed(ctx, error) {
        let mut out = Output::start(ctx, resp, error);
        for filter in hooks::HEADER_FILTERS {
            filter(ctx, &mut out);
        }
        // Only the byte-range filter sends an error bucket, and only for
        // ranges it was left.
        if ctx.req.on_stream() && ctx.range_deferred.is_some() {
            unmerged = out.err.clone().into_strings().collect();
        }
        out.finish(ctx, resp);
    }
    // Byte ranges are a protocol filter: after every content filter.
    for filter in hooks::PROTOCOL_FILTERS {
        if let Err(status) = filter(ctx, resp) {
            error_bucket(ctx, resp, status, unmerged);
            keep_notes(ctx, resp);
            return;
        }
    }
    // Apache's HTTP header filter, after every module had its say.
    resp.protocol = crate::http::protocol_env::header_filter(ctx, &mut resp.headers);
    // Its check of the fields does not run on a stream of HTTP/2
    // (mod_http2's secondary connection) or HTTP/3: there the server
    // resets the stream when the protocol cannot carry a field.
    let checked = if ctx.req.on_stream() {
        Ok(())
    } else {
        crate::header_table::check(&mut resp.headers, ctx.site.strict_protocol)
    };
    if let Err(message) = checked {
        // Apache's header filter refuses the response and answers 500.
        ctx.site
            .log
            .error("error", "http", Some(ctx.req.remote()), &message);
        let protocol = resp.protocol;
        *resp = crate::errors::error_response(ctx, 500);
        resp.protocol = protocol;
        // Sent without a length, the connection closed after it.
        resp.close = true;
        resp.stream = crate::http::Unannounced::Chunked;
        let mut out = Output::start(ctx, resp, true);
        for filter in hooks::ERROR_HEADER_FILTERS {
            filter(ctx, &mut out);
        }
        out.finish(ctx, resp);
        if crate::header_table::check(&mut resp.headers, ctx.site.strict_protocol).is_err() {
            // Refused again: a bare 500, as Apache falls back to.
            resp.headers = vec![("Content-Length".into(), "0".into())];
            resp.body = crate::http::Body::empty();
            resp.stream = crate::http::Unannounced::No;
        }
    }
    // After the header filter, which may note `force-response-1.0`.
    record_env(ctx, resp);
    keep_notes(ctx, resp);
}

/// A response no output filter sees (an interim `101` before a tunnel),
/// with what the access log reads of the request kept as [`output`] keeps
/// it.
pub fn for_log_only(ctx: &mut Ctx<'_>, mut resp: Response) -> Response {
    ctx.output_done = true;
    record_env(ctx, &mut resp);
    resp.remote_host = ctx.remote_host();
    keep_notes(ctx, &mut resp);
    resp
}

/// The variables the access logs' `env=` conditions will read, as they
/// stand once the answer is made (mod_log_config reads them at the end).
fn record_env(ctx: &Ctx<'_>, resp: &mut Response) {
    let env: Vec<(String, String)> = if ctx.engine.log_env_all {
        ctx.env
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    } else {
        ctx.engine
            .log_env_names
            .iter()
            .filter_map(|name| {
                // mod_unique_id's token is the log's to write, not an
                // input of the answer: a kept answer's is drawn again for
                // each request (`Engine::with_own_token`).
                let value = if hooks::per_request_variable(name) {
                    ctx.env.get_unrecorded(name)
                } else {
                    ctx.env.get(name)
                };
                Some((name.clone(), value?.to_string()))
            })
            .collect()
    };
    if !env.is_empty() {
        resp.log_vars.get_or_insert_with(Default::default).env = env;
    }
}

/// The request notes as the filters leave them, for the access log's
/// `%{NAME}n` (mod_deflate's and mod_brotli's sizes and ratio, notes
/// mod_headers set).
fn keep_notes(ctx: &Ctx<'_>, resp: &mut Response) {
    if !ctx.notes.is_empty() {
        resp.log_vars.get_or_insert_with(Default::default).notes = ctx.notes.clone();
    }
}

/// An error bucket a protocol filter sent after the response's headers were
/// made (the byte-range filter's `send_416`): the protocol's response filter
/// meets it and calls `ap_die`, whose `ap_send_error_response` makes the old
/// `err_headers_out` the page's `headers_out` and gives mod_headers' error
/// filter a fresh `err_headers_out` for its `Header always` edits.
///
/// What that old table holds depends on where the bucket is met. HTTP/1.1's
/// header filter (`ap_http_header_filter`) first merges `err_headers_out`
/// into `headers_out` and empties it, then finds the bucket: the page
/// carries only the fresh `Header always` results. mod_http2 replaces that
/// filter with `h2_c2_filter_response_out`, which calls `ap_die` before its
/// `create_response` merges the tables: the old `err_headers_out` (the
/// script's headers, the first `Header always` results) is still there and
/// follows the fresh one. HTTP/3 streams share the HTTP/2 rule
/// ([`crate::http::Request::on_stream`]): Apache has no HTTP/3, and htaccel
/// answers there as Apache does over HTTP/2. `unmerged` is the table as the
/// header filters left it on a stream, empty otherwise.
fn error_bucket(
    ctx: &mut Ctx<'_>,
    resp: &mut Response,
    status: crate::request::Status,
    unmerged: Vec<(String, String)>,
) {
    ctx.err_headers_out = unmerged;
    // The error path's own output filters run on the page (`ap_die`).
    ctx.output_done = false;
    let mut page = crate::errors::die(ctx, status);
    // The handler ran: the request body is read as after any handler.
    page.disposal = crate::http::BodyDisposal::Discard;
    *resp = page;
}

#[cfg(test)]
mod tests {
    use crate::http::http2::H2Stream;
    use crate::http::Request;
    use crate::test_support::{engine, request};

    fn ranged(h2_stream: Option<H2Stream>) -> Request {
        let mut req = request("GET", "/f.txt", "localhost");
        req.headers.push("Range", "bytes=500-".to_string());
        req.h2_stream = h2_stream;
        req
    }

    /// The byte-range filter's 416 meets a response whose headers were
    /// made: the first `Header always` results are gone on HTTP/1.1 and
    /// follow the fresh ones on a stream; `Header set` results never stay.
    #[test]
    fn an_error_bucket_keeps_the_error_table_only_on_a_stream() {
        let root = std::env::temp_dir().join(format!("htaccel-bucket-{}", std::process::id()));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("f.txt"), "twenty bytes of text").unwrap();
        let text = format!(
            "LoadModule mime_module m.so\nLoadModule headers_module m.so\nTypesConfig /dev/null\nDocumentRoot {}\nHeader always set X-Always a\nHeader always add X-Add v\nHeader set X-Onsuccess b\n",
            root.display()
        );
        let e = engine(&text);
        let names = |req: &Request| {
            let r = crate::handler::handle(&e, &e.main, req);
            assert_eq!(r.status, 416);
            r.headers
                .iter()
                .filter(|(n, _)| n.starts_with("X-"))
                .map(|(n, v)| format!("{n}: {v}"))
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&ranged(None)), ["X-Always: a", "X-Add: v"]);
        let stream = Some(H2Stream { session: 1, id: 1 });
        assert_eq!(
            names(&ranged(stream)),
            ["X-Always: a", "X-Add: v", "X-Always: a", "X-Add: v"]
        );
        std::fs::remove_dir_all(root).unwrap();
    }
}
