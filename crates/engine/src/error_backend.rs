//! A local `ErrorDocument` served by a backend (`ErrorDocument 404
//! /404.php` with PHP-FPM, `/index.php/error/404` behind a front
//! controller, a `ProxyPass`'d URL).
//!
//! Why a hand-back: the error path (`errors::error_response`) produces a
//! [`Response`] and is reached from many places (access checks, the
//! default handler, mod_rewrite, the proxy modules), but a backend exchange
//! is something only the request's entry point can ask the server for
//! (`handler::decide` returns a [`Decision`]). So when the error document's
//! redirected request wants a backend, the error path parks it on the
//! failing request's context ([`Ctx::error_backend`]) and returns a
//! stand-in; the entry point sees the parked request after the error path
//! ran and turns it into the exchange ([`decision`]).
//!
//! Where no exchange can follow (the error of a backend's own answer, a
//! request the connection layer rejected), the parked request is dropped:
//! the stand-in — Apache's page for a failed error document — goes out and
//! the error log says why, so the limitation is never silent.

use crate::http::backend::Decision;
use crate::http::Response;
use crate::modules::hooks::{self, Backend};
use crate::modules::proxy::cgi_env::Prev;
use crate::request::Ctx;

/// An error document's request, ready for its backend exchange.
pub struct Parked<'a> {
    /// `None` once taken by [`decision`].
    doc: Option<(Ctx<'a>, &'static Backend, Option<Prev>)>,
    /// The failing request's content handler ran: the body is gone.
    body_read: bool,
}

impl<'a> Parked<'a> {
    /// `ctx` is the redirected request (its phases passed, its handler
    /// `backend`); `prev` the request it was redirected from;
    /// `body_read`: the failing request's content handler ran, and read
    /// the body (Apache's default handler discards it first thing).
    pub fn new(
        ctx: Ctx<'a>,
        backend: &'static Backend,
        prev: Option<Prev>,
        body_read: bool,
    ) -> Box<Self> {
        Box::new(Parked {
            doc: Some((ctx, backend, prev)),
            body_read,
        })
    }
}

impl Drop for Parked<'_> {
    fn drop(&mut self) {
        if let Some((ctx, _, _)) = &self.doc {
            ctx.log_error(
                "error",
                "core",
                &format!(
                    "{}: an error document served by a backend is not supported by htaccel here (after a backend's answer or a rejected request)",
                    ctx.uri
                ),
            );
        }
    }
}

/// A handler hook: a backend handler reached where no exchange can be made
/// (main requests and error documents reach their backends in `decide`)
/// is refused with a 500, never served as a file.
pub fn refuse_unreachable(ctx: &mut Ctx<'_>) -> Option<Result<Response, crate::request::Status>> {
    hooks::backend(ctx)?;
    ctx.reason = Some(crate::request::Reason::new(
        "error",
        "core",
        format!(
            "{}: a backend handler reached where htaccel cannot call it",
            ctx.uri
        ),
    ));
    Some(Err(500))
}

/// The backend exchange for an error document the error path parked on
/// `ctx`, if it did.
pub fn decision<'a>(ctx: &mut Ctx<'a>) -> Option<Decision<'a>> {
    let mut parked = ctx.error_backend.take()?;
    // On a stream `ap_discard_request_body` reads nothing (its connection
    // never keeps alive): the body is left for the error document.
    let body_read = parked.body_read && !ctx.req.on_stream();
    let (mut doc, backend, prev) = parked.doc.take()?;
    if body_read {
        // mod_proxy_fcgi measures what is left of the body: nothing, so
        // the backend is told a length of 0 (a chunked body included).
        let framed = doc.headers_in.contains("Content-Length")
            || doc.headers_in.contains("Transfer-Encoding");
        doc.headers_in.to_mut().remove("Transfer-Encoding");
        if framed {
            doc.headers_in.to_mut().set("Content-Length", "0");
        }
    }
    let mut d = (backend.decide)(doc, prev);
    if let Decision::Backend(call) = &mut d {
        call.body_read = body_read;
        if body_read {
            // The failing request's handler read the body, not a proxy:
            // its LimitRequestBody applied.
            call.body_limit = ctx.conf.core.limit_req_body.unwrap_or(1 << 30);
        }
    }
    Some(d)
}

/// `resp`, or the exchange an error document parked on `ctx` asks for.
pub fn respond_or_backend<'a>(ctx: &mut Ctx<'a>, resp: Response) -> Decision<'a> {
    decision(ctx).unwrap_or(Decision::Respond(resp))
}

#[cfg(test)]
mod tests {
    use crate::engine::Engine;
    use crate::http::backend::{BackendAnswer, BackendHead, BackendRequest, Decision};
    use crate::http::{AccessEntry, Log, Request};
    use std::net::SocketAddr;
    use std::sync::{Arc, Mutex};

    #[derive(Default)]
    struct Errors(Mutex<Vec<String>>);
    impl Log for Errors {
        fn access(&self, _: &AccessEntry<'_>) {}
        fn error(&self, _: &str, _: &str, _: Option<SocketAddr>, message: &str) {
            self.0.lock().unwrap().push(message.to_string());
        }
    }

    fn engine(log: Arc<Errors>) -> Engine {
        let root = std::env::temp_dir().join(format!("htaccel-eb-{}", std::process::id()));
        std::fs::create_dir_all(&root).unwrap();
        let text = format!(
            "LoadModule proxy_module m.so\nLoadModule proxy_fcgi_module m.so\nLoadModule mime_module m.so\nTypesConfig /dev/null\n\
             DocumentRoot {}\n<FilesMatch \\.php$>\nSetHandler \"proxy:unix:/nowhere.sock|fcgi://localhost\"\n</FilesMatch>\n\
             ErrorDocument 404 /err.php\nErrorDocument 400 /err.php\n",
            root.display()
        );
        crate::test_support::engine_logging(&text, "/", log).unwrap()
    }

    fn request(method: &str, target: &str) -> Request {
        crate::test_support::request(method, target, "localhost")
    }

    fn param<'p>(params: &'p [(String, Vec<u8>)], name: &str) -> Option<&'p str> {
        params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| std::str::from_utf8(v).unwrap())
    }

    #[test]
    fn a_missing_file_goes_to_the_error_script_with_its_status() {
        let e = engine(Arc::default());
        let req = request("POST", "/missing?x=1");
        let Decision::Backend(call) = crate::handler::decide(&e, &e.main, &req) else {
            panic!("no backend exchange");
        };
        let BackendRequest::FastCgi { params, .. } = &call.request else {
            panic!("not FastCGI");
        };
        assert_eq!(param(params, "REDIRECT_STATUS"), Some("404"));
        assert_eq!(param(params, "REDIRECT_URL"), Some("/missing"));
        assert_eq!(param(params, "REDIRECT_QUERY_STRING"), Some("x=1"));
        assert_eq!(param(params, "REDIRECT_REQUEST_METHOD"), Some("POST"));
        assert_eq!(param(params, "REQUEST_METHOD"), Some("GET"));
        assert_eq!(param(params, "SCRIPT_NAME"), Some("/err.php"));
        // The default handler read the body before it refused.
        assert!(call.body_read);
        // Without a Status of its own, the script's answer keeps the 404.
        let answer = (call.finish)(Ok(BackendHead {
            lines: vec!["Content-Type: text/plain".into()],
            ..Default::default()
        }));
        let BackendAnswer::Send { response, .. } = answer else {
            panic!("the script's answer is sent as it comes");
        };
        assert_eq!(response.status, 404);
    }

    #[test]
    fn where_no_exchange_can_follow_the_log_says_so() {
        let log = Arc::new(Errors::default());
        let e = engine(log.clone());
        let req = request("GET", "/missing");
        // A 400 the connection layer found: answered without a backend.
        let r = crate::errors::protocol_error(
            &e,
            &crate::http::ProtocolError {
                status: 400,
                request: Some(&req),
                ..Default::default()
            },
        );
        assert_eq!(r.status, 400);
        let logged = log.0.lock().unwrap().join("\n");
        assert!(logged.contains("an error document served by a backend is not supported"));
    }
}
