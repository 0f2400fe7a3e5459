//! The request entry point and the content handlers: what a request that
//! passed every phase is answered with (a file, a directory listing, a
//! 403 for a directory without index, 404 for what does not exist), and
//! the core's own `TRACE`.

use crate::engine::Engine;
use crate::error_backend;
use crate::fs::Kind;
use crate::http::backend::{BackendError, Decision};
use crate::http::default_handler;
use crate::http::{Request, Response};
use crate::modules::core::server_directives::ETagSet;
use crate::modules::hooks;
use crate::modules::proxy::cgi_env::Prev;
use crate::request::{self, Ctx, Status};
use crate::site::Site;

/// Answer one request on a site, where no backend exchange can be made
/// (`htaccel explain`, tests): a backend request answers as an
/// unreachable backend does.
pub fn handle(engine: &Engine, site: &Site, req: &Request) -> Response {
    match decide(engine, site, req) {
        Decision::Respond(r) => r,
        Decision::Kept(r) => std::sync::Arc::unwrap_or_clone(r),
        Decision::Backend(call) => {
            let e = BackendError::Unavailable(format!("no connection to {} here", call.addr));
            (call.finish)(Err(e)).into_error_page()
        }
    }
}

/// Decide one request on a site: a response, or a backend exchange for
/// the server to perform.
pub fn decide<'a>(engine: &'a Engine, site: &'a Site, req: &'a Request) -> Decision<'a> {
    // Changes completed before this request arrived are in force for it.
    crate::watch::global().sync();
    decide_synced(engine, site, req)
}

/// [`decide`] once the watcher's queue was read for this request.
pub fn decide_synced<'a>(engine: &'a Engine, site: &'a Site, req: &'a Request) -> Decision<'a> {
    // The target is checked before anything else, TRACE included
    // (Apache refuses `/../x`, `%2f` and `%00` before its TRACE handler).
    let parsed = match request_uri(site, req) {
        Ok(u) => u,
        Err(e) => {
            if let Some(level) = e.level {
                site.log
                    .error(level, "core", Some(req.remote()), &e.message);
            }
            let uri = String::from_utf8_lossy(req.target.as_bytes()).into_owned();
            let mut ctx = Ctx::new(engine, site, req, uri, None);
            let mut resp = crate::errors::error_response(&mut ctx, e.status);
            // The error filters run with the server's configuration.
            crate::filters::output(&mut ctx, &mut resp, true);
            return error_backend::respond_or_backend(&mut ctx, resp);
        }
    };
    let uri = crate::path_text::from_bytes(parsed.path);
    // What answers before any other phase (mod_md: ACME's challenges).
    let early = hooks::EARLY_ANSWERS.iter().find_map(|answer| {
        answer(
            engine,
            req,
            parsed.target.path.as_deref().unwrap_or_default(),
            &uri,
        )
    });
    if let Some(answer) = early {
        let mut ctx = Ctx::new(engine, site, req, uri, parsed.target.query);
        let resp = match answer {
            Ok(resp) => crate::errors::finish(&mut ctx, resp),
            Err(status) => {
                // Before any handler: no method is allowed yet.
                ctx.allow_no_method();
                crate::errors::error_response(&mut ctx, status)
            }
        };
        return Decision::Respond(resp);
    }
    let mut ctx = Ctx::new(engine, site, req, uri, parsed.target.query);
    if req.method == "TRACE" {
        if let Err(status) = ctx.before_trace() {
            let resp = request::respond(&mut ctx, Err(status));
            return error_backend::respond_or_backend(&mut ctx, resp);
        }
        return Decision::Respond(trace(engine, site, req));
    }
    if req.target == "*" {
        // Server-context rewrite rules see `*` (with RewriteOptions AllowAnyURI).
        if let Err(status) = hooks::run_first(hooks::TRANSLATE_STAR, &mut ctx) {
            let resp = request::respond(&mut ctx, Err(status));
            return error_backend::respond_or_backend(&mut ctx, resp);
        }
        return Decision::Respond(crate::errors::finish(&mut ctx, options_star()));
    }
    let phases = ctx.process_internal();
    // A backend handler, possibly after mod_rewrite's internal redirects
    // (the front-controller rewrite to index.php).
    match settle(&mut ctx, phases, None) {
        Settled::Backend {
            last,
            backend,
            prev,
        } => (backend.decide)(last.map_or(ctx, |b| *b), prev),
        Settled::Switched { response, .. } => Decision::Respond(response),
        Settled::Failed {
            mut last,
            mut response,
        } => {
            let last = last.as_deref_mut().unwrap_or(&mut ctx);
            response.body_limit = last.conf.core.limit_req_body.unwrap_or(1 << 30);
            error_backend::respond_or_backend(last, response)
        }
        Settled::Handler { mut last, phases } => {
            let last = last.as_deref_mut().unwrap_or(&mut ctx);
            let mut resp = request::respond(last, phases);
            // LimitRequestBody: Apache 2.4.54 and later default to 1 GiB.
            resp.body_limit = last.conf.core.limit_req_body.unwrap_or(1 << 30);
            // A local ErrorDocument served by a backend.
            error_backend::respond_or_backend(last, resp)
        }
    }
}

/// Where a request ends once its phases ran, the internal redirects its
/// handler scheduled followed (mod_rewrite's redirect-handler: the
/// front-controller rewrite to `index.php`). `last` is the chain's last
/// request, `None` when that is the request [`settle`] started from.
pub(crate) enum Settled<'a> {
    /// The handler phase answers `last`, whose phases gave `phases`.
    Handler {
        last: Option<Box<Ctx<'a>>>,
        phases: Result<(), Status>,
    },
    /// A backend handler answers `last`, redirected from `prev`.
    Backend {
        last: Option<Box<Ctx<'a>>>,
        backend: &'static hooks::Backend,
        prev: Option<Prev>,
    },
    /// `last` scheduled a redirect that could not be made (the recursion
    /// limit): this answer.
    Failed {
        last: Option<Box<Ctx<'a>>>,
        response: Response,
    },
    /// The core's upgrade handler switched `last`'s connection to another
    /// protocol: this answer (`101 Switching Protocols`).
    Switched {
        last: Option<Box<Ctx<'a>>>,
        response: Response,
    },
}

impl<'a> Settled<'a> {
    /// The chain's last request (`None`: the first).
    pub(crate) fn last(self) -> Option<Box<Ctx<'a>>> {
        match self {
            Settled::Handler { last, .. }
            | Settled::Backend { last, .. }
            | Settled::Failed { last, .. }
            | Settled::Switched { last, .. } => last,
        }
    }
}

/// The one loop that follows a request past its phases: a backend handler
/// ends it, a scheduled internal redirect makes the next request (whose
/// phases run), anything else is the handler phase's. `prev` is the
/// request `first` was itself redirected from, if it was.
pub(crate) fn settle<'a>(
    first: &mut Ctx<'a>,
    mut phases: Result<(), Status>,
    mut prev: Option<Prev>,
) -> Settled<'a> {
    // Boxed: a request that is not redirected (most) moves no second
    // request context around.
    let mut last: Option<Box<Ctx<'a>>> = None;
    loop {
        let cur = match &mut last {
            Some(c) => c,
            None => &mut *first,
        };
        if phases.is_err() {
            return Settled::Handler { last, phases };
        }
        // The core's upgrade handler runs before any module's handler.
        if let Some(response) = hooks::switch_protocol(cur) {
            return Settled::Switched { last, response };
        }
        if let Some(backend) = hooks::backend(cur) {
            if let Some(status) = hooks::refuses_backend(cur) {
                return Settled::Handler {
                    last,
                    phases: Err(status),
                };
            }
            return Settled::Backend {
                last,
                backend,
                prev,
            };
        }
        match hooks::redirect(cur) {
            None => return Settled::Handler { last, phases },
            Some(Err(response)) => return Settled::Failed { last, response },
            Some(Ok((next, next_phases))) => {
                prev = Some(match last.replace(Box::new(next)) {
                    Some(from) => Prev {
                        uri: from.uri,
                        args: from.args,
                    },
                    None => Prev {
                        uri: first.uri.clone(),
                        args: first.args.clone(),
                    },
                });
                phases = next_phases;
            }
        }
    }
}

/// The request's target parsed and normalised with its server's settings
/// (`AllowEncodedSlashes`, `MergeSlashes`): Apache's `r->uri` and `r->args`.
pub(crate) fn request_uri(
    site: &Site,
    req: &Request,
) -> Result<crate::uri::RequestUri, crate::uri::UriError> {
    let opts = crate::uri::NormalizeOptions {
        encoded_slashes: site.encoded_slashes,
        merge_slashes: site.merge_slashes,
    };
    let parse = crate::uri::ParseOptions {
        strict: site.strict_protocol,
        secure: req.secure,
    };
    crate::uri::request_uri_with(&req.method, &req.target, &parse, &opts)
}

/// `OPTIONS *`: an empty 200, no resource involved.
fn options_star() -> Response {
    let mut r = Response::new(200);
    r.add_header("Content-Length", "0");
    r
}

/// The core's TRACE handler: the request echoed back as `message/http`.
fn trace(engine: &Engine, site: &Site, req: &Request) -> Response {
    if !site.trace_enable
        || matches!(req.framing, crate::http::BodyFraming::Length(n) if n > 0)
        || req.framing == crate::http::BodyFraming::Chunked
    {
        let uri = req.target.clone();
        let mut ctx = Ctx::new(engine, site, req, uri, None);
        if !site.trace_enable {
            // Refused before any handler allowed a method (`r->allowed`
            // empty): `Allow` is empty.
            ctx.allow_no_method();
            return crate::errors::error_response(&mut ctx, 405);
        }
        return crate::errors::error_response(&mut ctx, 413);
    }
    let mut body = Vec::new();
    body.extend_from_slice(req.request_line.as_bytes());
    body.extend_from_slice(b"\r\n");
    for (name, value) in req.headers.iter() {
        body.extend_from_slice(name.as_bytes());
        body.extend_from_slice(b": ");
        body.extend_from_slice(value);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(b"\r\n");
    let mut r = Response::new(200);
    // Apache writes the echo in pieces and flushes: always chunked.
    r.add_header("Transfer-Encoding", "chunked");
    r.add_header("Content-Type", "message/http");
    r.body = crate::http::Body::bytes(body);
    r
}

/// The answer for an error found while reading the body of `req` after it
/// was decided (Apache's handler reads or discards the body and dies with
/// the status): the error path of the request as the handler saw it, so
/// its directory's `ErrorDocument` and `Header always` apply.
pub fn body_error(engine: &Engine, site: &Site, req: &Request, status: u16) -> Response {
    let protocol = || {
        crate::errors::protocol_error(engine, &crate::http::ProtocolError::of_request(status, req))
    };
    let Ok(parsed) = request_uri(site, req) else {
        return protocol();
    };
    let uri = crate::path_text::from_bytes(parsed.path);
    let mut ctx = Ctx::new(engine, site, req, uri, parsed.target.query);
    let phases = ctx.process_internal();
    let mut last = settle(&mut ctx, phases, None).last();
    let ctx = last.as_deref_mut().unwrap_or(&mut ctx);
    crate::errors::die(ctx, status)
}

/// The handler phase for a request that passed every check: the
/// handlers that answer by name (mod_rewrite's redirect-handler is reached
/// here from an ErrorDocument redirect; a main request takes it in
/// `request::respond`), then the default handler.
pub fn run(ctx: &mut Ctx<'_>) -> Result<Response, Status> {
    if let Some(answer) = hooks::handle(ctx) {
        return answer;
    }
    file(ctx)
}

/// The default handler: the file itself, or its refusal (404, 405, 501).
fn file(ctx: &mut Ctx<'_>) -> Result<Response, Status> {
    if hooks::FILE_REFUSALS.iter().any(|refuses| refuses(ctx)) {
        return Err(403);
    }
    let is_file = ctx.finfo.map(|f| f.kind) == Some(Kind::File);
    let path_info_ok = ctx.path_info.is_empty() || ctx.conf.core.accept_path_info == Some(true);
    let file = if is_file && path_info_ok {
        let seen = ctx.finfo.expect("a regular file was found");
        match crate::filecache::open(&ctx.filename, &seen) {
            Ok(f) => Some(f),
            Err(e) => {
                ctx.reason = Some(crate::request::Reason::new(
                    "error",
                    "core",
                    format!(
                        "({}){e}: AH00132: file permissions deny server access: {}",
                        e.raw_os_error().unwrap_or(0),
                        ctx.filename
                    ),
                ));
                return Err(403);
            }
        }
    } else {
        None
    };
    if file.is_none() && matches!(&*ctx.method, "GET" | "HEAD" | "POST") {
        let message = if ctx.finfo.map(|f| f.kind) == Some(Kind::Dir) {
            // No module answered for the directory (neither mod_dir's
            // index nor mod_autoindex is loaded, say).
            format!("AH00129: Attempt to serve directory: {}", ctx.filename)
        } else {
            format!(
                "AH00128: File does not exist: {}{}",
                ctx.filename, ctx.path_info
            )
        };
        ctx.reason = Some(crate::request::Reason::new("info", "core", message));
    }
    let content_type = content_type_with_charset(ctx);
    let language = if ctx.languages.is_empty() {
        None
    } else {
        Some(ctx.languages.join(","))
    };
    // The clock decides Last-Modified (a future mtime is clamped) and
    // whether the ETag is weak (a file changed within the last second);
    // once the file is a second old, neither moves again, so only a file
    // that young makes the answer depend on the clock.
    let now = crate::engine::clock_us();
    if file
        .as_ref()
        .is_some_and(|f| f.stamp.mtime_us > now.saturating_sub(1_000_000))
    {
        crate::answer_memo::note_volatile();
    }
    // Only a multi-range answer needs a boundary.
    let boundary = if ctx.headers_in.contains("Range") {
        ctx.engine.boundary()
    } else {
        String::new()
    };
    // mod_include's filter, attached where no includes are allowed.
    let unparsed = file.is_some() && hooks::filter_passes_unchanged(ctx);
    let input = default_handler::FileRequest {
        method: &ctx.method,
        headers: &ctx.headers_in,
        held_range: ctx.range_deferred.as_ref(),
        status_so_far: ctx.prev_status.unwrap_or(200),
        file,
        content_type: content_type.as_deref(),
        content_encoding: ctx.encodings.last().map(String::as_str),
        content_language: language.as_deref(),
        etag_bits: if unparsed {
            crate::http::etag::ETAG_NONE
        } else {
            ETagSet::effective(ctx.conf.core.etag)
        },
        vlist_validator: ctx.vlist_validator.as_deref(),
        content_md5: false,
        no_local_copy: unparsed,
        request_time_us: now,
        now_us: now,
        trace_enabled: ctx.site.trace_enable,
        range_limits: ctx.conf.core.range_limits(),
        boundary: &boundary,
    };
    let answer = match default_handler::serve(&input) {
        Ok(resp) => Ok(resp),
        // The default handler cuts ranges itself, standing for Apache's
        // byte-range filter, which runs after the output filters: the
        // same answer as long as the ranges can be satisfied. Ranges that
        // cannot are an error bucket meeting a response whose headers the
        // output filters already made (`Header always` results kept or
        // not, see `filters::error_bucket`): the file is served whole and
        // the ranges are left to the protocol filter.
        Err(refusal) if refusal.status == 416 && input.held_range.is_none() => {
            let held = input.headers.clone();
            let mut whole = held.clone();
            whole.remove("Range");
            let answer = default_handler::serve(&default_handler::FileRequest {
                headers: &whole,
                held_range: Some(&held),
                ..input
            });
            if answer.is_ok() {
                ctx.range_deferred = Some(held);
            }
            answer.map_err(|refusal| refusal.status)
        }
        Err(refusal) => {
            if refusal.status == 405 || refusal.status == 501 {
                ctx.allow = Some(refusal.allow);
            }
            Err(refusal.status)
        }
    };
    if unparsed && answer.is_ok() {
        hooks::filter_removed(ctx);
    }
    answer
}

/// The `Content-Type` as sent: `AddDefaultCharset` applies to `text/plain`
/// and `text/html` without a charset (Apache's `ap_make_content_type`).
pub fn content_type_with_charset(ctx: &Ctx<'_>) -> Option<String> {
    // The directory pseudo-type goes out as it is: only an OPTIONS answer
    // for a directory without an index carries it (Apache does the same).
    let t = ctx.content_type.clone()?;
    if let Some(Some(cs)) = &ctx.conf.core.add_default_charset {
        let lower = t.to_ascii_lowercase();
        if (lower.starts_with("text/plain") || lower.starts_with("text/html"))
            && !lower.contains("charset=")
        {
            return Some(format!("{t}; charset={cs}"));
        }
    }
    Some(t)
}
