//! Apache's request hooks: which module functions each phase runs, in the
//! order Apache runs them. The driver (`request.rs` for the phases up to
//! the fixups, `handler.rs` for the handler) walks these lists and names
//! no module; a module joins a phase by adding its function here.
//!
//! Apache orders a hook's functions by each module's registration
//! (`APR_HOOK_FIRST`/`MIDDLE`/`LAST` and named predecessors); the lists
//! below are that order as resolved for the modules htaccel has. Two kinds
//! of phase, as in Apache: "run all" (every function runs; the first
//! error stops the request) and "run first" (the first function that
//! claims the phase ends it, `Ok(true)`; `Ok(false)` declines).

use crate::engine::Engine;
use crate::header_table::Output;
use crate::http::backend::Decision;
use crate::http::{Request, Response};
use crate::modules::proxy::cgi_env::Prev;
use crate::modules::{
    actions, alias, allowmethods, auth_basic, authn_core, autoindex, cgi, dir, env, expires,
    filter, headers, http2, http3, include, logio, md, mime, mime_magic, negotiation, php, proxy,
    remoteip, rewrite, setenvif, speling, ssl, status, unique_id, unsupported, userdir,
    vhost_alias,
};
use crate::request::{Ctx, Status};

/// A function of a phase that cannot fail.
pub type Notice = fn(&mut Ctx<'_>);
/// A function of a "run all" phase: `Err` stops the request with a status.
pub type RunAll = fn(&mut Ctx<'_>) -> Result<(), Status>;
/// A function of a "run first" phase: `Ok(true)` claims the phase.
pub type RunFirst = fn(&mut Ctx<'_>) -> Result<bool, Status>;
/// A content handler: `None` declines (the next one is asked).
pub type Handler = fn(&mut Ctx<'_>) -> Option<Result<Response, Status>>;
/// A `post_read_request` function that may answer before a request
/// context exists (mod_md's ACME challenges): the request, its raw and
/// decoded path; `Err` carries the status of an error answer.
pub type EarlyAnswer = fn(&Engine, &Request, &str, &str) -> Option<Result<Response, Status>>;
/// A scheduled internal redirect (mod_rewrite's `redirect-handler`): the
/// new request after its phases, or the answer when it cannot be made;
/// `None`: nothing was scheduled.
#[allow(clippy::type_complexity)]
pub type Redirect =
    for<'a> fn(&mut Ctx<'a>) -> Option<Result<(Ctx<'a>, Result<(), Status>), Response>>;
/// The core's upgrade handler's switch of protocol (`ap_switch_protocol`
/// through the modules' `protocol_switch` hooks): the answer that switches
/// (`101 Switching Protocols`), `None` to answer as the request is.
pub type Switch = fn(&Ctx<'_>) -> Option<Response>;
/// The protocols a handler's answer announces in `Upgrade`
/// (`ap_get_protocol_upgrades`), `None` for none.
pub type Offer = fn(&Ctx<'_>) -> Option<std::sync::Arc<str>>;
/// A file the default handler must not send as it is (it belongs to a
/// backend that is not configured for it).
pub type FileRefusal = fn(&mut Ctx<'_>) -> bool;
/// A check of a started engine: `Err` refuses the configuration.
pub type EngineCheck = fn(&Engine) -> Result<(), String>;
/// An output filter that edits the response's header tables.
pub type HeaderFilter = fn(&mut Ctx<'_>, &mut Output);
/// An output filter on the whole response (body and headers).
pub type ResponseFilter = fn(&mut Ctx<'_>, &mut Response) -> Result<(), Status>;
/// A protocol filter on the whole response, after its headers were made:
/// `Err` is an error bucket sent down the chain (the response becomes that
/// status's error page, `crate::filters::output`).
pub type ProtocolFilter = fn(&mut Ctx<'_>, &mut Response) -> Result<(), Status>;
/// A section of mod_status's pages (Apache's optional `status_hook`): the
/// request and whether the page is `?auto`'s short form; `None` declines.
pub type StatusSection = fn(&Ctx<'_>, bool) -> Option<String>;

/// Whether `name` is a variable a module sets anew for every request
/// (mod_unique_id's token, under any `REDIRECT_` prefix): an answer that
/// reads it is not kept, and an access log's copy is renewed.
pub fn per_request_variable(name: &str) -> bool {
    unique_id::is_token_name(name)
}

/// Whether the request's access-log line takes its time to first byte
/// (mod_logio's `LogIOTrackTTFB`).
pub fn tracks_ttfb(ctx: &Ctx<'_>) -> bool {
    logio::tracks_ttfb(ctx)
}

/// Whether the default handler sends its file to an output filter that
/// will pass it unchanged after its set-up ran (mod_include's, where no
/// includes are allowed): no `ETag`, no 304.
pub fn filter_passes_unchanged(ctx: &Ctx<'_>) -> bool {
    include::passes_unparsed(ctx)
}

/// A back-end handler's answer that an output filter htaccel lacks would
/// have to change (mod_include's, where includes are allowed): the
/// status refusing it, before the back-end is asked.
pub fn refuses_backend(ctx: &mut Ctx<'_>) -> Option<Status> {
    include::refuses_backend(ctx)
}

/// Once the default handler sent such a file: what the filter logs as it
/// removes itself.
pub fn filter_removed(ctx: &Ctx<'_>) {
    include::note_removed(ctx)
}

/// A kept answer's access-log variables (`env`) for one more request: the
/// per-request values drawn again; `None` when they hold none.
pub fn renew_logged_variables(
    engine: &Engine,
    env: &[(String, String)],
    now_us: i64,
) -> Option<Vec<(String, String)>> {
    if !engine.modules.unique_id.loaded {
        return None;
    }
    unique_id::refresh_logged(env, now_us)
}

/// How the request's TLS connection is to end, as mod_ssl chose it
/// (`ssl-unclean-shutdown`); `None` off TLS.
pub fn tls_shutdown(ctx: &Ctx<'_>) -> Option<crate::http::tls::TlsShutdown> {
    ctx.modules.ssl_shutdown.0
}

/// `post_read_request` functions that answer before anything else.
pub static EARLY_ANSWERS: &[EarlyAnswer] = &[md::post_read_request];

/// `post_read_request`: once a request (or an internal redirect) exists,
/// with the server-level configuration only. mod_remoteip first, so that
/// what follows sees the client's address, and mod_headers' `early` edits
/// (`APR_HOOK_FIRST`); mod_ssl after mod_setenvif, mod_md after mod_ssl
/// (as they order themselves); mod_unique_id last (all in the middle, in
/// Debian's load order).
pub static POST_READ_REQUEST: &[Notice] = &[
    remoteip::post_read_request,
    headers::early,
    setenvif::post_read_request,
    ssl::shutdown::post_read_request,
    md::strict_transport_security,
    unique_id::post_read_request,
];

/// `post_read_request` functions that may refuse a request or one of its
/// internal redirects (a refusal of a redirect is an error of the
/// redirect, as Apache's `ap_die` makes it): mod_md's redirection to
/// `https:`.
pub static POST_READ_REQUEST_CHECKS: &[RunAll] = &[md::require_https];

/// `translate_name`: the URI to a file name. mod_rewrite's server rules
/// first, mod_proxy's `ProxyPass`, mod_alias, then the core (the document
/// root), which always maps.
pub static TRANSLATE_NAME: &[RunFirst] = &[
    rewrite::translate_name,
    proxy::http::translate,
    alias::translate,
    userdir::translate,
    vhost_alias::translate,
    crate::request::core_translate_name,
];

/// `map_to_storage` before the core's directory walk: mod_proxy's walk of
/// its `<Proxy>` sections for a proxied request, which has no directory.
pub static MAP_TO_STORAGE: &[RunFirst] = &[proxy::sections::map_to_storage];

/// `post_read_request` functions that may refuse the request a client
/// sent (not its internal redirects): mod_ssl's refusal of plain HTTP on
/// an SSL port.
pub static READ_REQUEST_CHECKS: &[RunAll] = &[ssl::ports::check_request];

/// `translate_name` for the target `*` (`OPTIONS *`): only mod_rewrite's
/// server rules see it (with `RewriteOptions AllowAnyURI`).
pub static TRANSLATE_STAR: &[RunFirst] = &[rewrite::translate_name];

/// `header_parser`: per-directory functions that read the request headers
/// before access control (main requests only).
pub static HEADER_PARSER: &[Notice] = &[setenvif::header_parser];

/// `access_checker` and what follows it (authentication, authorization):
/// mod_allowmethods first (`APR_HOOK_REALLY_FIRST`), mod_ssl's
/// `SSLRequireSSL` and client verification, then the core's `Satisfy` of
/// host rules and `Require`.
pub static ACCESS_CHECKER: &[RunAll] = &[
    allowmethods::check_access,
    ssl::check_access,
    authn_core::check_access,
];

/// `type_checker`: mod_negotiation's MultiViews first, then mod_mime.
pub static TYPE_CHECKER: &[RunFirst] = &[
    negotiation::handle_multi,
    mime::type_checker,
    mime_magic::type_checker,
];

/// `fixups`: mod_rewrite's directory rules, mod_alias's directory
/// redirects, mod_env, mod_ssl's and mod_http2's variables, the encoding's
/// spelling, mod_dir (slash, index, fallback resource), the `[T=]`/`[H=]`
/// that rules remembered, `RequestHeader`, mod_http2's early hints, then
/// mod_speling (last of the modules that hook last, as Debian loads them).
pub static FIXUPS: &[RunAll] = &[
    rewrite::fixup,
    alias::fixup,
    env::fixup,
    ssl::fixup,
    http2::fixup,
    negotiation::fix_encoding,
    dir::fixup,
    rewrite::force_type_handler,
    headers::fixup,
    http2::early_hints,
    speling::fixup,
    // APR_HOOK_LAST.
    include::fixup,
    auth_basic::fake_fixup,
];

/// `insert_filter`: the filters a request's configuration attaches
/// (mod_filter's `FilterChain`/`AddOutputFilterByType`, `SetOutputFilter`).
pub static INSERT_FILTER: &[RunAll] = &[filter::insert];

/// The protocol switches the core's upgrade handler offers, first of all
/// handlers: mod_http2's `h2c`.
pub static PROTOCOL_SWITCH: &[Switch] = &[http2::upgrade];

/// What answers announce they could switch to: mod_http2's protocols.
pub static PROTOCOL_OFFERS: &[Offer] = &[http2::upgrade_offer];

/// `handler`: the handlers that answer by name before the default handler
/// (the file, or a directory's listing): mod_rewrite's redirect-handler,
/// the refusal of a backend handler reached without its exchange,
/// mod_status's pages, mod_md's `md-status`, mod_negotiation's type maps,
/// mod_autoindex's directory listings.
pub static HANDLERS: &[Handler] = &[
    rewrite::handler,
    crate::error_backend::refuse_unreachable,
    status::handler,
    md::status::handler,
    negotiation::type_map_handler,
    autoindex::handler,
];

/// A handler that hands the request to another process: whether the
/// request's handler is this one, and the exchange it asks the server for.
pub struct Backend {
    pub wants: fn(&Ctx<'_>) -> bool,
    pub decide: for<'a> fn(Ctx<'a>, Option<Prev>) -> Decision<'a>,
}

/// The backend handlers: PHP through PHP-FPM (standing in for mod_php),
/// mod_proxy_fcgi's `SetHandler proxy:…`, mod_proxy_http's `ProxyPass`,
/// mod_cgi/mod_cgid.
pub static BACKENDS: &[Backend] = &[
    Backend {
        wants: php::handler::wants,
        decide: php::handler::decide,
    },
    Backend {
        wants: proxy::wants,
        decide: proxy::decide,
    },
    Backend {
        wants: proxy::http::wants,
        decide: proxy::http::decide,
    },
    Backend {
        wants: cgi::wants,
        decide: cgi::decide,
    },
];

/// Files the default handler refuses (403): a PHP file where PHP-FPM
/// stands in for mod_php but no handler claimed it, a CGI script where
/// CGI is not allowed, a file a script runner htaccel does not have
/// would run.
pub static FILE_REFUSALS: &[FileRefusal] = &[
    php::handler::refuses_as_file,
    cgi::refuses_as_file,
    include::refuses_as_file,
    unsupported::refuses_as_file,
];

/// The handlers that answer with an internal redirect, which the handler
/// phase follows (to a backend too): mod_rewrite's redirect-handler, then
/// mod_actions (`APR_HOOK_LAST`, after every handler that answers by name:
/// see [`claimed_by_name`]).
pub static REDIRECTS: &[Redirect] = &[rewrite::hooks::redirect_next, actions::redirect_next];

/// Whether a handler that answers by name ([`HANDLERS`]) claims the
/// handler `name`, ahead of a module that hooks last (mod_actions).
pub fn claimed_by_name(name: &str) -> bool {
    name == rewrite::hooks::REDIRECT_HANDLER
        || status::claims(name)
        || md::status::claims(name)
        || negotiation::claims(name)
        || autoindex::claims(name)
}

/// The content filters, first of the output filters (mod_filter's
/// chains, mod_deflate inserted first).
pub static CONTENT_FILTERS: &[ResponseFilter] = &[filter::content_filters];

/// The filters that edit the header tables, in Apache's order: mod_expires'
/// before mod_headers'.
pub static HEADER_FILTERS: &[HeaderFilter] = &[expires::output, headers::output];

/// What edits an error response's header tables once its output filters
/// were dropped (`ap_send_error_response` keeps the protocol filters and
/// runs `insert_error_filter`: mod_headers' `always` table).
pub static ERROR_HEADER_FILTERS: &[HeaderFilter] = &[headers::output];

/// The protocol filters after every content filter: the byte ranges.
pub static PROTOCOL_FILTERS: &[ProtocolFilter] = &[filter::deferred_ranges];

/// Whether a header filter has edits configured for the request's
/// directory (else only headers set before the handler need the tables).
pub fn header_filters_configured(ctx: &Ctx<'_>) -> bool {
    ctx.conf.headers.has_output() || ctx.conf.expires.is_active()
}

/// Checks of a started engine as a whole (`post_config` functions that
/// need every server: HTTP/3's UDP ports against the TLS ones, WebSocket
/// URLs only mod_proxy_wstunnel's own tunnel would serve).
pub static ENGINE_CHECKS: &[EngineCheck] = &[http3::check, proxy::check];

/// `pre_connection`: whether a connection from `peer` to `local` must
/// begin with a PROXY header (mod_remoteip's `RemoteIPProxyProtocol`).
pub fn proxy_header_required(
    engine: &Engine,
    local: std::net::SocketAddr,
    peer: std::net::SocketAddr,
) -> bool {
    remoteip::proxy_header_required(engine, local, peer)
}

/// mod_ssl's `ssl_var_lookup` (an optional function in Apache): the
/// `SSL_*` variables of a request, which mod_log_config's `%{…}x` and
/// ap_expr read; `None` when the variable has no value.
pub fn ssl_var_lookup(req: &Request, name: &str) -> Option<String> {
    ssl::vars::lookup(req, name)
}

/// mod_log_config's `%{…}c`, which mod_ssl registers: a short name
/// (`version`, `cipher`, `subjectdn`, `issuerdn`) for one of its variables.
pub fn ssl_log_connection_var(req: &Request, name: &str) -> Option<String> {
    ssl::vars::log_connection_var(req, name)
}

/// What modules add to mod_status's pages, in the order Apache runs them.
pub static STATUS_SECTIONS: &[StatusSection] = &[
    md::server_status::managed_certificates,
    md::server_status::managed_staplings,
];

/// Every function of a "run all" phase, until one fails.
pub fn run_all(hooks: &[RunAll], ctx: &mut Ctx<'_>) -> Result<(), Status> {
    hooks.iter().try_for_each(|hook| hook(ctx))
}

/// The functions of a "run first" phase until one claims it: whether one did.
pub fn run_first(hooks: &[RunFirst], ctx: &mut Ctx<'_>) -> Result<bool, Status> {
    for hook in hooks {
        if hook(ctx)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The backend handler the request wants, if any.
pub fn backend(ctx: &Ctx<'_>) -> Option<&'static Backend> {
    BACKENDS.iter().find(|b| (b.wants)(ctx))
}

/// The internal redirect scheduled for `ctx`, made.
#[allow(clippy::type_complexity)]
pub fn redirect<'a>(ctx: &mut Ctx<'a>) -> Option<Result<(Ctx<'a>, Result<(), Status>), Response>> {
    REDIRECTS.iter().find_map(|redirect| redirect(ctx))
}

/// The switch of protocol the request asks for and may make.
pub fn switch_protocol(ctx: &Ctx<'_>) -> Option<Response> {
    PROTOCOL_SWITCH.iter().find_map(|switch| switch(ctx))
}

/// The protocols a handler's answer to `ctx` announces.
pub fn upgrade_offer(ctx: &Ctx<'_>) -> Option<std::sync::Arc<str>> {
    PROTOCOL_OFFERS.iter().find_map(|offer| offer(ctx))
}

/// The first handler that answers.
pub fn handle(ctx: &mut Ctx<'_>) -> Option<Result<Response, Status>> {
    HANDLERS.iter().find_map(|handler| handler(ctx))
}
