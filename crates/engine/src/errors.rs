//! The error path (Apache's `ap_die` and `ap_send_error_response`): a
//! status becomes the configured `ErrorDocument` — a text, a redirect to
//! a URL, or an internal redirect to a local page — or Apache's built-in
//! error page. A local page served by a backend (a PHP script, a proxied
//! URL) is handed back to the request's entry point (`error_backend`).

use crate::engine::Engine;
use crate::error_backend::Parked;
use crate::handler::Settled;
use crate::http::error_page::{self, ErrorContext, ServerSignature};
use crate::http::Response;
use crate::modules::core::{ErrorDocument, Signature};
use crate::modules::proxy::cgi_env::Prev;
use crate::request::Ctx;

/// Apache's `ap_die` as a handler or a backend's reply reaches it: the
/// answer for a request that ended with `status`, through the output
/// filters of an error (`Header always`), ready to send.
pub(crate) fn die(ctx: &mut Ctx<'_>, status: u16) -> Response {
    let mut resp = error_response(ctx, status);
    crate::filters::output(ctx, &mut resp, true);
    resp
}

/// The response for a request that ended with `status`.
pub fn error_response(ctx: &mut Ctx<'_>, status: u16) -> Response {
    ctx.log_reason();
    let doc = ctx
        .conf
        .core
        .error_documents
        .get(&status)
        .map(|d| d.resolve(ctx, status));
    let resp = match doc {
        Some(ErrorDocument::Text(text)) => {
            let ectx = ErrorContext {
                method: &ctx.method,
                head: ctx.req.method == "HEAD",
                suppress_charset: ctx.env.contains("suppress-error-charset"),
                ..Default::default()
            };
            let mut r = error_page::custom_text_response(status, &text, &ectx);
            // `ap_send_error_response` sets `Allow` on a 405 or 501 before
            // it looks for a text `ErrorDocument`.
            if let Some(allow) = ctx.allow {
                r.add_header("Allow", allow);
            }
            // Apache's error responses drop `headers_out` but the Location.
            for (n, v) in &ctx.headers_out {
                if n.eq_ignore_ascii_case("Location") {
                    r.add_header(n.clone(), v.clone());
                }
            }
            r
        }
        Some(ErrorDocument::Remote(url)) if status != 401 => {
            let mut r = canned(ctx, 302, Some(&url), None);
            r.set_header("Location", url);
            r
        }
        Some(ErrorDocument::Local(target)) if ctx.prev_status.is_none() => {
            local_document(ctx, status, &target)
        }
        _ => canned(ctx, status, None, None),
    };
    let mut resp = resp;
    if status == 416 {
        // Apache produces the 416 page from inside the byte-range filter,
        // after the response length was dropped: it goes out unannounced.
        resp.stream = crate::http::Unannounced::ChunkedIfKept;
    }
    finish(ctx, resp)
}

/// Serve a local `ErrorDocument` by internal redirect; the status stays.
fn local_document(ctx: &mut Ctx<'_>, status: u16, target: &str) -> Response {
    if ctx.redirects >= ctx.site.limit_internal_recursion {
        // Only a chain of new errors (see `status_reset`) gets here.
        ctx.log_error("error", "core", &format!(
            "AH00124: Request exceeded the limit of {} internal redirects due to probable configuration error. Use 'LimitInternalRecursion' to increase the limit if necessary. Use 'LogLevel debug' to get a backtrace.",
            ctx.site.limit_internal_recursion));
        let first = ctx.first_error.unwrap_or(status);
        return canned(ctx, first, None, Some(status));
    }
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p.to_string(), Some(q.to_string())),
        None => (target.to_string(), None),
    };
    // `ap_die` notes the failed request's method and error notes in the
    // environment the redirect carries over (as `REDIRECT_*`).
    ctx.env.set("REQUEST_METHOD", ctx.method.clone());
    if let Some(note) = &ctx.error_note {
        ctx.env.set("ERROR_NOTES", note.clone());
    }
    let mut redirected = ctx.internal_redirect(path, query, Some(status));
    redirected.method = "GET".into();
    let phases = redirected.process_internal();
    // What the document's request sent went out before the page, whatever
    // answers in the end.
    ctx.modules.early_hints = redirected.modules.early_hints.clone();
    // A backend handler, reached directly or through mod_rewrite's internal
    // redirects (a front controller): parked for the request's entry point,
    // which makes the exchange (see `error_backend`).
    let prev = Prev {
        uri: ctx.uri.clone(),
        args: ctx.args.clone(),
    };
    let result = match crate::handler::settle(&mut redirected, phases, Some(prev)) {
        // mod_rewrite's redirect-handler answers for the new request.
        Settled::Handler {
            last: Some(mut last),
            phases,
        } => Ok(crate::request::respond(&mut last, phases)),
        // The core's upgrade handler announced its protocols in the
        // document's own headers, which are sent.
        Settled::Handler {
            last: None,
            phases: Ok(()),
        } => crate::handler::run(&mut redirected).map(|mut r| {
            r.upgrade_offer = crate::modules::hooks::upgrade_offer(&redirected);
            r
        }),
        Settled::Handler {
            last: None,
            phases: Err(e),
        } => Err(e),
        Settled::Backend {
            last,
            backend,
            prev,
        } => {
            let doc = last.map_or(redirected, |b| *b);
            // What goes out when no exchange can follow (see
            // `error_backend`): a failed error document's page, through
            // the failing request's filters, with its error headers.
            ctx.err_headers_out = doc.err_headers_out.clone();
            ctx.error_backend = Some(Parked::new(doc, backend, prev, ctx.handler_ran));
            return failed_document_page(ctx, status);
        }
        Settled::Failed { response, .. } => Ok(response),
        // An `Upgrade: h2c` switched the connection here: stream 1 is the
        // document's request.
        Settled::Switched { response, .. } => return response,
    };
    match result {
        Ok(mut r) => {
            r.status = status;
            // The response is the redirected request's: its output filters
            // run, the original request's do not.
            crate::filters::output(&mut redirected, &mut r, false);
            ctx.output_done = true;
            // The redirect starts a new `headers_out`: of the failed
            // request's, only a redirect's `Location` goes on
            // (`internal_internal_redirect`).
            if (300..400).contains(&status) {
                if let Some((n, v)) = ctx
                    .headers_out
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case("Location"))
                {
                    r.headers.insert(0, (n.clone().into(), v.clone()));
                }
            }
            r
        }
        Err(second) if redirected.status_reset => {
            // mod_rewrite answered after setting the status back to 200:
            // a new error of the error document's request, with its own
            // ErrorDocument (Apache's ap_die sees no recursion).
            redirected.prev_status = None;
            redirected.first_error = Some(ctx.first_error.unwrap_or(status));
            let mut r = error_response(&mut redirected, second);
            // Its own error document may be a backend's too.
            if redirected.error_backend.is_some() {
                ctx.error_backend = redirected.error_backend.take();
            }
            crate::filters::output(&mut redirected, &mut r, true);
            ctx.output_done = true;
            r
        }
        Err(_) => {
            redirected.log_reason();
            ctx.err_headers_out = std::mem::take(&mut redirected.err_headers_out);
            failed_document_page(ctx, status)
        }
    }
}

/// Apache's page for an error whose local `ErrorDocument` failed too: it
/// names the redirected request's own status, which it inherits from the
/// original error whatever failed in it, and is written while the method
/// is still the redirect's GET.
fn failed_document_page(ctx: &mut Ctx<'_>, status: u16) -> Response {
    let method = std::mem::replace(&mut ctx.method, "GET".into());
    let r = canned(ctx, status, None, Some(status));
    ctx.method = method;
    r
}

/// Apache's built-in page for `status`.
fn canned(ctx: &Ctx<'_>, status: u16, location: Option<&str>, additional: Option<u16>) -> Response {
    let location = location.map(str::to_string).or_else(|| {
        ctx.headers_out
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("Location"))
            .map(|(_, v)| v.clone())
    });
    let signature = signature_line(ctx);
    let status_line = ctx
        .error_status_line
        .as_deref()
        .filter(|l| l.starts_with(&status.to_string()));
    let ectx = ErrorContext {
        method: &ctx.method,
        location: location.as_deref(),
        status_line,
        verbose_errors: ctx.verbose_errors,
        note: ctx.error_note.as_deref(),
        server_admin: ctx.site.server_admin.as_deref(),
        signature: signature.as_deref(),
        additional_error: additional,
        head: ctx.req.method == "HEAD",
        allow: ctx.allow,
        expect: ctx.headers_in.get_str("Expect"),
        variant_list: ctx.variant_list.as_deref(),
        suppress_charset: ctx.env.contains("suppress-error-charset"),
    };
    // Apache's error responses drop `headers_out` (`ap_send_error_response`
    // swaps in `err_headers_out`); the Location is part of the page.
    let mut resp = error_page::error_response(status, &ectx);
    if let Some(line) = status_line {
        resp.status_line = Some(line.to_string());
    }
    resp
}

/// The `<address>` line of `ServerSignature`.
pub(crate) fn signature_line(ctx: &Ctx<'_>) -> Option<String> {
    let mode = match ctx.conf.core.server_signature {
        Some(Signature::On) => ServerSignature::On,
        Some(Signature::Email) => ServerSignature::EMail,
        _ => ServerSignature::Off,
    };
    // The name and port a self-referential URL would carry.
    let (host, port) = (ctx.server_name(), ctx.server_port());
    let admin = ctx
        .site
        .server_admin
        .as_deref()
        .unwrap_or(error_page::DEFAULT_ADMIN);
    error_page::signature_line(mode, &ctx.engine.server_header, &host, port, admin)
}

/// Last touches on every response.
pub fn finish(ctx: &mut Ctx<'_>, mut resp: Response) -> Response {
    ctx.log_reason();
    // mod_http2 reads mod_ssl's note on a final 403 only (an error
    // document's too: the note is the failed request's).
    resp.renegotiation_forbidden = ctx.renegotiation_forbidden && resp.status == 403;
    // An answer made by a later request of the chain (an error document)
    // already has what this one sent, and more.
    if resp.early_hints.is_empty() {
        resp.early_hints = ctx.modules.early_hints.take();
    }
    if !ctx.handler_ran {
        // Answered before any content handler read the body (`ap_die`).
        resp.disposal = crate::http::BodyDisposal::AfterResponse;
    }
    resp
}

/// An error the connection layer found while reading a request, or before
/// any request existed.
///
/// With the request as far as it was read, the answer goes through the
/// error path of every request (`ap_read_request` dies through `ap_die`):
/// the server's own configuration applies — `ErrorDocument` (text, remote
/// URL, local page reached by a `GET` redirect), `Header always` — from the
/// connection's default server, the one its address selects before any
/// `Host` is looked at. Only a 417 comes after the virtual host was chosen
/// from `Host` (`ap_check_request_header` tests `Expect` last).
pub fn protocol_error(engine: &Engine, e: &crate::http::ProtocolError<'_>) -> Response {
    if let Some(req) = e.request {
        let site = if e.status == 417 {
            engine.site_for(req)
        } else {
            engine.select_site(req, None)
        };
        let uri = String::from_utf8_lossy(req.target.as_bytes()).into_owned();
        let mut ctx = Ctx::new(engine, site, req, uri, None);
        ctx.error_note = e.note.map(str::to_string);
        if matches!(e.status, 405 | 501) {
            // No handler allowed a method (`r->allowed` empty).
            ctx.allow_no_method();
        }
        let mut resp = match e.additional {
            None => error_response(&mut ctx, e.status),
            // An error met while answering another: the built-in page
            // naming both (no ErrorDocument is tried again), through the
            // output filters all the same (`Header always`).
            Some(first) => canned(&ctx, e.status, None, Some(first)),
        };
        crate::filters::output(&mut ctx, &mut resp, true);
        resp.close = true;
        return resp;
    }
    let ectx = ErrorContext {
        method: e.method.unwrap_or("GET"),
        note: e.note,
        expect: e.expect,
        head: e.head,
        server_admin: engine.main.server_admin.as_deref(),
        additional_error: e.additional,
        ..Default::default()
    };
    let mut r = error_page::error_response(e.status, &ectx);
    r.close = true;
    r
}

#[cfg(test)]
mod tests {
    use super::protocol_error;
    use crate::engine::Engine;
    use crate::http::{ProtocolError, Request};

    fn engine(text: &str) -> Engine {
        crate::test_support::engine(&format!(
            "LoadModule mime_module m.so\nLoadModule headers_module m.so\nTypesConfig /dev/null\n{text}"
        ))
    }

    fn request(host: &str) -> Request {
        crate::test_support::request("GET", "/", host)
    }

    fn body(r: &crate::http::Response) -> String {
        String::from_utf8(r.body.to_vec().unwrap()).unwrap()
    }

    #[test]
    fn server_configuration_applies_to_a_failed_request() {
        let e = engine("Header always set X-A 1\nErrorDocument 400 \"custom\"\n");
        let req = request("localhost");
        let r = protocol_error(
            &e,
            &ProtocolError {
                status: 400,
                request: Some(&req),
                ..Default::default()
            },
        );
        assert_eq!(r.status, 400);
        assert_eq!(r.header("X-A"), Some("1"));
        assert_eq!(body(&r), "custom");
        assert!(r.close);
        // Without a request (nothing read), the built-in page.
        let r = protocol_error(
            &e,
            &ProtocolError {
                status: 400,
                ..Default::default()
            },
        );
        assert_eq!(r.header("X-A"), None);
        assert!(body(&r).contains("<h1>Bad Request</h1>"));
    }

    #[test]
    fn the_default_host_answers_but_a_417_is_for_the_named_one() {
        let e = engine(
            "<VirtualHost *:80>\nServerName first.example\nErrorDocument 400 \"first\"\nErrorDocument 417 \"first\"\n</VirtualHost>\n\
             <VirtualHost *:80>\nServerName second.example\nErrorDocument 400 \"second\"\nErrorDocument 417 \"second\"\n</VirtualHost>\n",
        );
        let req = request("second.example");
        let answer = |status| {
            body(&protocol_error(
                &e,
                &ProtocolError {
                    status,
                    request: Some(&req),
                    ..Default::default()
                },
            ))
        };
        assert_eq!(answer(400), "first");
        assert_eq!(answer(417), "second");
    }
}
