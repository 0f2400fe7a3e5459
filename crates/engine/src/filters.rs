//! Output filters: what modules change on a response after its handler
//! (or the error path) produced it, in Apache's order — mod_expires before
//! mod_headers, compression last. `error` tells whether the response came
//! from the error path, where only `Header always` edits apply.

use crate::header_table::Output;
use crate::http::Response;
use crate::modules::hooks;
use crate::request::Ctx;

pub fn output(ctx: &mut Ctx<'_>, resp: &mut Response, error: bool) {
    if std::mem::replace(&mut ctx.output_done, true) {
        return;
    }
    // What the access logs' `env=` conditions will read, as the variables
    // stand once the answer is made (mod_log_config reads them at the end).
    if ctx.engine.log_env_all {
        resp.log_env
            .extend(ctx.env.iter().map(|(n, v)| (n.to_string(), v.to_string())));
    } else {
        for name in &ctx.engine.log_env_names {
            if let Some(value) = ctx.env.get(name) {
                resp.log_env.push((name.clone(), value.to_string()));
            }
        }
    }
    // mod_deflate's filter runs before mod_headers' (both content filters,
    // DEFLATE inserted first).
    if !error && resp.arrival != crate::http::Arrival::Later {
        for filter in hooks::CONTENT_FILTERS {
            filter(ctx, resp);
        }
    }
    if Output::needed(ctx, error) {
        let mut out = Output::start(ctx, resp, error);
        for filter in hooks::HEADER_FILTERS {
            filter(ctx, &mut out);
        }
        out.finish(ctx, resp);
    }
    // Byte ranges are a protocol filter: after every content filter.
    for filter in hooks::PROTOCOL_FILTERS {
        filter(ctx, resp);
    }
    // Apache's HTTP header filter, after every module had its say.
    crate::http::vary::fixup_vary(&mut resp.headers);
    // Its check of the fields does not run on a stream of HTTP/2
    // (mod_http2's secondary connection) or HTTP/3: there the server
    // resets the stream when the protocol cannot carry a field.
    let checked = if ctx.req.on_stream() {
        Ok(())
    } else {
        crate::header_table::check(&mut resp.headers)
    };
    if let Err(message) = checked {
        // Apache's header filter refuses the response and answers 500.
        ctx.site
            .log
            .error("error", "http", Some(ctx.req.remote()), &message);
        *resp = crate::errors::error_response(ctx, 500);
        // Sent without a length, the connection closed after it.
        resp.close = true;
        resp.stream = crate::http::Unannounced::Chunked;
        let mut out = Output::start(ctx, resp, true);
        for filter in hooks::ERROR_HEADER_FILTERS {
            filter(ctx, &mut out);
        }
        out.finish(ctx, resp);
        if crate::header_table::check(&mut resp.headers).is_err() {
            // Refused again: a bare 500, as Apache falls back to.
            resp.headers = vec![("Content-Length".into(), "0".into())];
            resp.body = crate::http::Body::empty();
            resp.stream = crate::http::Unannounced::No;
        }
    }
}
