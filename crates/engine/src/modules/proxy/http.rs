//! Reverse proxying to HTTP/1.1 upstreams (mod_proxy with mod_proxy_http):
//! which requests go (`translate`, Apache's `proxy_trans`), the request
//! head the upstream gets (`decide`), and the answer's post-processing
//! (`finish`). The exchange itself is the server's (`server/src/proxy_http`).
//!
//! The request: `Host` first (the upstream's, or the client's with
//! `ProxyPreserveHost On`), then the client's headers in order without
//! hop-by-hop ones (`Connection` and what it names, `Keep-Alive`, `TE`,
//! `Upgrade`), `X-Forwarded-For`/`-Host`/`-Server` merged in,
//! the path re-escaped (unless `nocanon`) and the query as sent; an
//! HTTP/1.0 request under `force-proxy-request-1.0`. The client's
//! `Upgrade` goes on where the worker allows its protocol, and the
//! upstream's `101` turns the exchange into a tunnel.
//!
//! The answer: the upstream's status and headers go to the normal table,
//! without hop-by-hop ones and without `Date`/`Server` (the server writes
//! its own); `ProxyPassReverse` maps `Location`, `Content-Location` and
//! `URI` back to this server; the body keeps the upstream's length, else
//! goes chunked. Failures: 503 when no connection can be made, 502 for a
//! broken answer, 504 when the upstream does not answer within `Timeout`.

use super::conf::{Pass, Reverse, Via};
use crate::http::backend::{
    BackendAddr, BackendAnswer, BackendCall, BackendHead, BackendRequest, Decision, Fields,
    HttpRequest, Interim, TlsUpstream, UpstreamVerify,
};
use crate::http::Response;
use crate::request::{location_matches, Ctx, Status};

/// The handler of proxied requests (`r->handler`).
pub const HANDLER: &str = "proxy-server";

/// `translate_name`: a `ProxyPass` matching the URI makes the request a
/// proxy request (`filename` = `proxy:` + the upstream URL).
///
/// (ProxyPass exists only where mod_proxy is loaded; a site without one
/// pays two emptiness checks per location here.)
pub fn translate(ctx: &mut Ctx<'_>) -> Result<bool, Status> {
    let keep = ctx.site.encoded_slashes == crate::uri::EncodedSlashes::NoDecode;
    match lookup(ctx, keep) {
        Some(Some((url, nokeepalive))) => {
            ctx.filename = format!("proxy:{url}");
            ctx.handler = Some(HANDLER.to_string());
            if nokeepalive {
                ctx.env.set("proxy-nokeepalive", "1");
            }
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// The pass that maps the request and its upstream URL (with whether the
/// connection may not be reused): `None` when none matches, `Some(None)`
/// for `!`. `keep_slashes`: see [`canonenc`].
fn lookup(ctx: &Ctx<'_>, keep_slashes: bool) -> Option<Option<(String, bool)>> {
    // The nearest <Location> with a ProxyPass first, then the server's.
    let located = ctx
        .site
        .locations
        .iter()
        .rfind(|l| {
            !l.conf.proxy.passes.is_empty()
                && match &l.regex {
                    Some(re) => re.is_match(&crate::path_text::bytes(&ctx.uri)),
                    None => location_matches(&l.path, &ctx.uri),
                }
        })
        .map(|l| l.conf.proxy.passes.clone());
    let server = &ctx.site.base.proxy.passes;
    if located.is_none() && server.is_empty() {
        return None;
    }
    for pass in located.iter().flat_map(|p| p.iter()).chain(server.iter()) {
        if let Some(url) = map(ctx, pass, keep_slashes) {
            let url = url?;
            // A substituted ProxyPassMatch URL names no configured
            // worker: mod_proxy's default one, which does not keep
            // connections, takes it (and says so in the env).
            let nokeepalive = pass.regex.is_some()
                && pass
                    .url
                    .as_deref()
                    .is_some_and(|u| u.contains('$') && !is_fcgi(u))
                || pass.disable_reuse;
            return Some(Some((url, nokeepalive)));
        }
    }
    None
}

/// Apache canonicalises the upstream URL after the `<Location>` and `<If>`
/// walks and reads `AllowEncodedSlashes` from the merged per-directory
/// configuration; its 2.4 merge copies the unset (Off) value of every
/// section that applied. So under `NoDecode`, once such a section merged,
/// encoded slashes are escaped again (`%252F`) like any other `%`.
fn recanonicalise(ctx: &mut Ctx<'_>) {
    if ctx.site.encoded_slashes != crate::uri::EncodedSlashes::NoDecode
        || std::sync::Arc::ptr_eq(&ctx.conf, &ctx.site.base)
    {
        return;
    }
    let Some(Some((kept, _))) = lookup(ctx, true) else {
        return;
    };
    if ctx.filename.strip_prefix("proxy:") != Some(kept.as_str()) {
        return;
    }
    if let Some(Some((url, _))) = lookup(ctx, false) {
        ctx.filename = format!("proxy:{url}");
    }
}

/// The upstream URL for the request under `pass`: `None` when the pass
/// does not match, `Some(None)` for `!`.
fn map(ctx: &Ctx<'_>, pass: &Pass, keep: bool) -> Option<Option<String>> {
    let uri = ctx.uri.as_str();
    let remainder_raw;
    let url = match &pass.regex {
        Some(re) => {
            let uri_bytes = crate::path_text::bytes(uri);
            let caps = re.captures(&uri_bytes)?;
            let Some(url) = &pass.url else {
                return Some(None);
            };
            if let Some(raw) = unparsed_for_nocanon(ctx, pass, url) {
                if let Some(raw_caps) = re.captures(raw.as_bytes()) {
                    let out = crate::regsub::pregsub(url.as_bytes(), raw.as_bytes(), &raw_caps)?;
                    return Some(Some(String::from_utf8_lossy(&out).into_owned()));
                }
            }
            let out = crate::regsub::pregsub(url.as_bytes(), &uri_bytes, &caps)?;
            let out = crate::path_text::from_bytes(out);
            // ProxyPassMatch: the URL is used as substituted; the query
            // is added when the URL has none.
            return Some(Some(with_query(
                ctx,
                escape_url_path(&out, pass.nocanon, keep),
            )));
        }
        None => {
            let n = crate::modules::alias::alias_matches(uri.as_bytes(), pass.path.as_bytes());
            if n == 0 {
                return None;
            }
            let Some(url) = &pass.url else {
                return Some(None);
            };
            if let Some(raw) = unparsed_for_nocanon(ctx, pass, url) {
                let m = crate::modules::alias::alias_matches(raw.as_bytes(), pass.path.as_bytes());
                if m == n {
                    return Some(Some(format!("{url}{}", &raw[m..])));
                }
            }
            remainder_raw = &uri[n..];
            url
        }
    };
    let joined = format!("{url}{remainder_raw}");
    Some(Some(with_query(
        ctx,
        escape_url_path(&joined, pass.nocanon, keep),
    )))
}

/// `nocanon` to an HTTP upstream: the target as the client sent it (query
/// included), which mod_proxy maps instead of the decoded URI when the
/// pass matches it the same way (otherwise it falls back to the decoded
/// URI, canonicalised).
fn unparsed_for_nocanon<'a>(ctx: &'a Ctx<'_>, pass: &Pass, url: &str) -> Option<&'a str> {
    (pass.nocanon && !is_fcgi(url)).then_some(ctx.req.target.as_str())
}

/// The URL with its path escaped as `ap_proxy_canonenc` does (for
/// `http://`, `fcgi://` and `unix:/socket|fcgi://` URLs); `keep_slashes`:
/// `AllowEncodedSlashes NoDecode` (see [`canonenc`]).
pub(crate) fn escape_url_path(url: &str, nocanon: bool, keep_slashes: bool) -> String {
    if nocanon {
        return url.to_string();
    }
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let rest = &url[scheme_end + 3..];
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, "/"),
    };
    format!(
        "{}{authority}{}",
        &url[..scheme_end + 3],
        canonenc(path, keep_slashes)
    )
}

/// Whether a proxy URL names a FastCGI backend.
pub fn is_fcgi(url: &str) -> bool {
    let lower = url.get(..7).unwrap_or("").to_ascii_lowercase();
    lower == "fcgi://"
        || url
            .get(..5)
            .is_some_and(|p| p.eq_ignore_ascii_case("unix:"))
}

/// `ap_proxy_canonenc` for the path of a reverse-proxied (already decoded)
/// URI: letters, digits and `$-_.+!*'(),;:@&=/~` stay, anything else,
/// `%` included, becomes `%XX` (upper-case hex); with `keep_slashes`
/// (`AllowEncodedSlashes NoDecode`, see [`recanonicalise`]) an encoded
/// slash (`%2F`, `%2f`) stays as it is.
pub(super) fn canonenc(path: &str, keep_slashes: bool) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    // The bytes a decoded path's text form stands for (`%C0%AE` again).
    let b = &*crate::path_text::bytes(path);
    let mut out = String::with_capacity(b.len() + 8);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let encoded_slash = keep_slashes
            && c == b'%'
            && b.get(i + 1) == Some(&b'2')
            && b.get(i + 2).is_some_and(|d| d.eq_ignore_ascii_case(&b'f'));
        if encoded_slash {
            out.push_str(std::str::from_utf8(&b[i..i + 3]).expect("ASCII"));
            i += 3;
            continue;
        }
        if c.is_ascii_alphanumeric() || b"$-_.+!*'(),;:@&=/~".contains(&c) {
            out.push(c as char);
        } else {
            out.push('%');
            out.push(HEX[(c >> 4) as usize] as char);
            out.push(HEX[(c & 15) as usize] as char);
        }
        i += 1;
    }
    out
}

/// The client's query, as sent, after the mapped URL (mod_proxy_fcgi
/// passes it as `QUERY_STRING` only).
fn with_query(ctx: &Ctx<'_>, url: String) -> String {
    match &ctx.args {
        Some(q) if !is_fcgi(&url) => format!("{url}?{q}"),
        _ => url,
    }
}

/// Whether the request is a reverse-proxy request to an HTTP upstream.
pub fn wants(ctx: &Ctx<'_>) -> bool {
    ctx.handler.as_deref() == Some(HANDLER)
        && ctx.filename.starts_with("proxy:")
        && ctx.site.env.is_loaded("mod_proxy.c")
}

/// mod_proxy_http passes on a request body framed by `chunked` alone (or
/// by a length); any other `Transfer-Encoding` the protocol layer let
/// through (`identity, chunked`, `gzip, chunked`, or two fields that
/// join to one of those) is refused with 500 before the body is read or
/// the upstream is asked, and the connection closes. A back end that
/// frames by `Content-Length` can then never be handed bytes the front
/// end took for a body. Returns the refused codings, as joined.
fn unsupported_transfer_coding(ctx: &Ctx<'_>) -> Option<String> {
    let mut codings = ctx.headers_in.get_all("Transfer-Encoding").peekable();
    codings.peek()?;
    let joined = codings
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .collect::<Vec<_>>()
        .join(", ");
    (!joined.eq_ignore_ascii_case("chunked")).then_some(joined)
}

/// Hop-by-hop request headers never forwarded (`Expect: 100-continue`
/// goes on: Apache relays it to the upstream).
const HOP_BY_HOP: &[&str] = &["connection", "keep-alive", "te", "upgrade", "host"];

/// The exchange for a proxy request ([`wants`]); `prev` as for
/// FastCGI backends (`ProxyPassMatch … fcgi://`).
pub fn decide(mut ctx: Ctx<'_>, prev: Option<super::cgi_env::Prev>) -> Decision<'_> {
    recanonicalise(&mut ctx);
    let url = ctx.filename["proxy:".len()..].to_string();
    if is_fcgi(&url) {
        if !ctx.site.env.is_loaded("mod_proxy_fcgi.c") {
            ctx.reason = Some(crate::request::Reason::new("warn", "proxy",
                format!("AH01144: No protocol handler was valid for the URL {} (scheme 'fcgi'). If you are using a DSO version of mod_proxy, make sure the proxy submodules are included in the configuration using LoadModule.", ctx.uri),
            ));
            return Decision::Respond(super::respond_error(ctx, 403));
        }
        return super::decide_url(ctx, &url, prev);
    }
    if let Some(reason) = super::is_websocket(&url)
        .then(|| super::websocket_refusal(&ctx.site.env))
        .flatten()
    {
        ctx.reason = Some(crate::request::Reason::new(
            "error",
            "proxy",
            format!("{url}: {reason}"),
        ));
        return Decision::Respond(super::respond_error(ctx, 500));
    }
    if !ctx.site.env.is_loaded("mod_proxy_http.c") {
        // Apache: no module handles the scheme, named as the URL writes it.
        let scheme = url.split_once("://").map_or("", |(s, _)| s);
        ctx.reason = Some(crate::request::Reason::new("warn", "proxy",
            format!("AH01144: No protocol handler was valid for the URL {} (scheme '{scheme}'). If you are using a DSO version of mod_proxy, make sure the proxy submodules are included in the configuration using LoadModule.", ctx.uri),
        ));
        return Decision::Respond(super::respond_error(ctx, 403));
    }
    if let Some(codings) = unsupported_transfer_coding(&ctx) {
        ctx.reason = Some(crate::request::Reason::new(
            "error",
            "proxy_http",
            format!("AH01093: {codings} Transfer-Encoding is not supported"),
        ));
        let mut resp = super::respond_error(ctx, 500);
        resp.close = true;
        resp.disposal = crate::http::BodyDisposal::Unread;
        return Decision::Respond(resp);
    }
    let scheme_len = url.find("://").map_or(0, |i| i + 3);
    let scheme = url[..scheme_len].to_ascii_lowercase();
    // mod_proxy_http serves `ws://` and `wss://` URLs as `http://` and
    // `https://` ones, with WebSocket allowed as the protocol to switch to.
    let tls = match scheme.as_str() {
        "http://" | "ws://" => false,
        // mod_ssl's proxy side, when mod_ssl is loaded.
        "https://" | "wss://" if ctx.site.env.is_loaded("ssl_module") => true,
        _ => {
            ctx.reason = Some(crate::request::Reason::new("error", "proxy",
                format!("AH01144: No protocol handler was valid for the URL {url} (htaccel proxies to http://, https://, ws:// and wss:// only)"),
            ));
            return Decision::Respond(super::respond_error(ctx, 500));
        }
    };
    let rest = &url[scheme_len..];
    let (authority, target) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let default_port = if tls { 443 } else { 80 };
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => match p.parse::<u16>() {
            Ok(p) => (h, p),
            Err(_) => (authority, default_port),
        },
        _ => (authority, default_port),
    };
    let ssl = &ctx.site.modules.ssl;
    if tls && ssl.proxy_engine != Some(true) {
        // mod_ssl refuses the connection it is asked to secure.
        ctx.reason = Some(crate::request::Reason::new(
            "error",
            "proxy",
            format!("AH00961: https: failed to enable ssl support for {host}:{port} ({host})"),
        ));
        return Decision::Respond(super::respond_error(ctx, 500));
    }
    if let Err(status) = crate::modules::filter::insert(&mut ctx) {
        return Decision::Respond(super::respond_error(ctx, status));
    }
    ctx.handler_ran = true;
    let host_header = if ctx.conf.proxy.preserve_host == Some(true) {
        ctx.headers_in
            .get_str("Host")
            .map(str::to_string)
            .unwrap_or_else(|| ctx.site.server_name.clone())
    } else if port == default_port {
        host.to_string()
    } else {
        format!("{host}:{port}")
    };
    let mut headers: Vec<(String, Vec<u8>)> = vec![("Host".into(), host_header.into_bytes())];
    let named: Vec<String> = ctx
        .headers_in
        .get_all("Connection")
        .flat_map(|v| {
            String::from_utf8_lossy(v)
                .split(',')
                .map(|t| t.trim().to_ascii_lowercase())
                .collect::<Vec<_>>()
        })
        .collect();
    // `force-proxy-request-1.0`: an HTTP/1.0 request, without
    // `Connection` nor `Expect`, on a connection that is not kept, its
    // body sent with its length.
    let http10 = ctx.env.contains("force-proxy-request-1.0");
    // Credentials this server checked stay here unless `Proxy-Chain-Auth`
    // passes them on (RFC 2616 lets a proxy do either).
    let keep_proxy_auth = ctx.user.is_none() || ctx.env.contains("Proxy-Chain-Auth");
    for (name, value) in ctx.headers_in.iter() {
        let lower = name.to_ascii_lowercase();
        if HOP_BY_HOP.contains(&lower.as_str())
            || named.contains(&lower)
            || lower == "content-length"
            || lower == "transfer-encoding"
            || http10 && lower == "expect"
            || !keep_proxy_auth && lower == "proxy-authorization"
        {
            continue;
        }
        headers.push((name.to_string(), value.to_vec()));
    }
    // Via before the X-Forwarded-* fields, as Apache 2.4.71 adds them.
    match ctx.conf.proxy.via {
        Some(Via::Block) => headers.retain(|(n, _)| !n.eq_ignore_ascii_case("Via")),
        Some(Via::On | Via::Full) => merge(&mut headers, "Via", via(&ctx).into_bytes()),
        Some(Via::Off) | None => {}
    }
    if ctx.conf.proxy.add_headers != Some(false) {
        let client_host = ctx.headers_in.get("Host").map(|h| h.to_vec());
        merge(
            &mut headers,
            "X-Forwarded-For",
            ctx.req.remote_ip().to_string().into_bytes(),
        );
        if let Some(h) = client_host {
            merge(&mut headers, "X-Forwarded-Host", h);
        }
        merge(
            &mut headers,
            "X-Forwarded-Server",
            ctx.site.server_name.clone().into_bytes(),
        );
    }
    // No ProxyPass defines a worker for the URL (a mod_rewrite [P]):
    // mod_proxy's default worker, which does not keep connections.
    let worker = worker(&ctx, &url);
    if worker.is_none() {
        ctx.env.set("proxy-nokeepalive", "1");
    }
    let timeouts = super::timeouts(&ctx, worker.as_ref());
    let mut upgrades = Upgrades::of(&ctx, worker.as_ref(), super::is_websocket(&url));
    if http10 {
        upgrades.offered = None;
    }
    // One reading of the upstream's fields for its interim answers and
    // its final one.
    let field_map = std::sync::Arc::new(FieldMap::of(&ctx));
    let request = HttpRequest {
        method: ctx.method.to_string(),
        target: target.to_string(),
        headers,
        close: http10 || ctx.env.contains("proxy-nokeepalive"),
        upgrade: upgrades.offered.clone(),
        http10,
        interim: interim(&ctx, &field_map),
        no_half_close: ctx.env.contains("proxy-nohalfclose"),
        initial_not_pooled: ctx.env.contains("proxy-initial-not-pooled"),
        extra_crlf: ctx.env.contains("proxy-sendextracrlf"),
    };
    let addr = if tls {
        let ssl = &ctx.site.modules.ssl;
        // `proxy-request-hostname`: what SNI sends and the certificate
        // must name.
        let hostname = match ctx.conf.proxy.preserve_host {
            Some(true) => {
                crate::engine::request_host(ctx.req).map_or_else(|| host.to_string(), |(h, _)| h)
            }
            _ => host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string(),
        };
        let (tls12, tls13, suites) = ssl.proxy_offer();
        BackendAddr::Tls(Box::new(TlsUpstream {
            tls12,
            tls13,
            suites,
            addr: format!("{host}:{port}"),
            hostname,
            check_peer_name: ssl.proxy_check_peer_name,
            check_peer_cn: ssl.proxy_check_peer_cn,
            check_peer_expire: ssl.proxy_check_peer_expire != Some(false),
            verify: (ssl.proxy_verify == Some(true)).then(|| UpstreamVerify {
                ca_file: ssl.proxy_ca_file.clone(),
                ca_path: ssl.proxy_ca_path.clone(),
                depth: ssl
                    .proxy_verify_depth
                    .unwrap_or(crate::modules::ssl::DEFAULT_VERIFY_DEPTH),
            }),
        }))
    } else {
        BackendAddr::Tcp(format!("{host}:{port}"))
    };
    Decision::Backend(BackendCall {
        timeouts,
        addr,
        request: BackendRequest::Http(request),
        // LimitRequestBody does not apply to a proxied request: Apache's
        // input filter skips it when `r->proxyreq` is set.
        body_limit: 0,
        body_read: false,
        // mod_proxy_http spools for proxy-sendcl unless told to chunk too.
        send_length: http10
            || ctx.env.contains("proxy-sendcl")
                && !ctx.env.contains("proxy-sendchunks")
                && !ctx.env.contains("proxy-sendchunked"),
        early_hints: ctx.modules.early_hints.take(),
        finish: Box::new(move |result| match result {
            Ok(head) => {
                let offer = crate::modules::http2::upgrade_offer(&ctx);
                let alt_svc = crate::request::alt_svc(&ctx);
                let mut answer = finish(ctx, head, &upgrades, &field_map);
                // The backend's own answer (not an error page made of it).
                if let Some(response) = answer.response_mut() {
                    if response.arrival == crate::http::Arrival::Later {
                        response.upgrade_offer = offer;
                    }
                    response.alt_svc = alt_svc;
                }
                answer
            }
            Err(e) => super::reply::failed(ctx, e),
        }),
    })
}

/// What a worker lets clients switch to, and what this request asked for.
struct Upgrades {
    /// The worker's `upgrade=`.
    allowed: Option<String>,
    /// A `ws://` or `wss://` URL: WebSocket is allowed without `upgrade=`.
    websocket: bool,
    /// The client's `Upgrade`, offered upstream.
    offered: Option<String>,
}

impl Upgrades {
    fn of(ctx: &Ctx<'_>, worker: Option<&Pass>, websocket: bool) -> Upgrades {
        let mut upgrades = Upgrades {
            allowed: worker.and_then(|w| w.upgrade.clone()),
            websocket,
            offered: None,
        };
        upgrades.offered = upgrades.offer(ctx);
        upgrades
    }

    /// Whether the worker lets `protocol` through.
    fn allow(&self, protocol: &str) -> bool {
        let default = self.websocket.then_some("WebSocket");
        super::conf::can_upgrade(self.allowed.as_deref(), protocol, default)
    }

    /// The client's `Upgrade`, when the worker lets it through (a worker
    /// that names no protocol and is no `ws://` one lets none: the field is
    /// then a hop-by-hop one like any other).
    fn offer(&self, ctx: &Ctx<'_>) -> Option<String> {
        // (A stream of HTTP/2 or HTTP/3 switches no protocol: mod_http2
        // takes WebSockets only by its own extended CONNECT.)
        if self.allowed.is_none() && !self.websocket || ctx.req.on_stream() {
            return None;
        }
        let asked = ctx.headers_in.get_str("Upgrade")?;
        self.allow(asked).then(|| asked.to_string())
    }
}

/// The `ProxyPass` whose URL (a worker) covers `url`, if any.
pub(super) fn worker(ctx: &Ctx<'_>, url: &str) -> Option<Pass> {
    // A ProxyPassMatch defines a worker named by its URL up to the first
    // `$` (observed: kept for FastCGI, not for HTTP upstreams).
    let fcgi = is_fcgi(url);
    let covers = |p: &&Pass| {
        let Some(w) = p.url.as_deref() else {
            return false;
        };
        let w = match (&p.regex, w.find('$')) {
            (None, _) => w,
            (Some(_), Some(i)) if fcgi => &w[..i],
            (Some(_), None) => w,
            (Some(_), Some(_)) => return false,
        };
        url.len() >= w.len() && url.as_bytes()[..w.len()].eq_ignore_ascii_case(w.as_bytes())
    };
    ctx.conf
        .proxy
        .passes
        .iter()
        .find(covers)
        .or_else(|| {
            ctx.site
                .locations
                .iter()
                .find_map(|l| l.conf.proxy.passes.iter().find(covers))
        })
        .cloned()
}

/// `ProxyVia on|full`'s entry: the client's protocol version, this
/// server's name (its `ServerName`: mod_proxy does not use the client's
/// host here) and port unless the scheme's default; with `full`, the
/// server's product.
fn via(ctx: &Ctx<'_>) -> String {
    let version = match ctx.req.version {
        crate::http::Version::Http10 => "1.0",
        crate::http::Version::Http11 => "1.1",
        crate::http::Version::Http2 => "2.0",
        crate::http::Version::Http3 => "3.0",
    };
    let port = ctx.server_port();
    let default = if ctx.req.secure { 443 } else { 80 };
    let port = if port == default {
        String::new()
    } else {
        format!(":{port}")
    };
    let name = &ctx.site.server_name;
    match ctx.conf.proxy.via {
        Some(Via::Full) => format!(
            "{version} {name}{port} (htaccel/{})",
            env!("CARGO_PKG_VERSION")
        ),
        _ => format!("{version} {name}{port}"),
    }
}

/// `apr_table_mergen`: append to the first field of that name, else add one.
fn merge(headers: &mut Vec<(String, Vec<u8>)>, name: &str, value: Vec<u8>) {
    match headers
        .iter_mut()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
    {
        Some((_, v)) => {
            v.extend_from_slice(b", ");
            v.extend_from_slice(&value);
        }
        None => headers.push((name.to_string(), value)),
    }
}

/// Hop-by-hop response headers. (The upstream's `Date` and `Server`
/// stay, as Apache keeps them for a proxied answer.)
const DROPPED: &[&str] = &[
    "connection",
    "keep-alive",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "proxy-connection",
];

/// The client's response for an upstream's head.
fn finish<'a>(
    mut ctx: Ctx<'a>,
    head: BackendHead,
    upgrades: &Upgrades,
    field_map: &FieldMap,
) -> BackendAnswer<'a> {
    let (status, reason) = head.status.clone().unwrap_or((502, String::new()));
    let switched_to = head.lines.iter().find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.trim()
            .eq_ignore_ascii_case("Upgrade")
            .then(|| v.trim().to_string())
    });
    if status == 101 {
        let expected = upgrades
            .offered
            .as_deref()
            .zip(switched_to.as_deref())
            .is_some_and(|(asked, got)| asked.eq_ignore_ascii_case(got));
        if !expected {
            let reason = format!(
                "Unexpected Upgrade: {} (expecting {})",
                switched_to.as_deref().unwrap_or("n/a"),
                upgrades.offered.as_deref().unwrap_or("n/a")
            );
            super::reply::proxy_error(&mut ctx, 502, &reason);
            let resp = crate::errors::die(&mut ctx, 502);
            return BackendAnswer::respond(resp);
        }
    }
    // ProxyErrorOverride: this server's error page; a 401's challenge
    // goes with it.
    if super::conf::should_override(&ctx.conf.proxy, status) {
        if status == 401 {
            let challenge = head.lines.iter().find_map(|l| {
                let (n, v) = l.split_once(':')?;
                n.trim()
                    .eq_ignore_ascii_case("WWW-Authenticate")
                    .then(|| v.trim().to_string())
            });
            if let Some(v) = challenge {
                ctx.err_headers_out.push(("WWW-Authenticate".into(), v));
            }
        }
        return super::reply::error_page(&mut ctx, status);
    }
    // An error document proxied with ProxyErrorOverride keeps the error's
    // status over the upstream's (mod_proxy_http's `original_status`).
    let overridden = ctx
        .prev_status
        .filter(|&prev| super::conf::should_override(&ctx.conf.proxy, prev));
    let mut resp = Response::new(overridden.unwrap_or(status));
    resp.entity_in_headers = true;
    // The upstream's reason phrase is kept (Apache's r->status_line).
    if overridden.is_none() {
        resp.status_line = Some(format!("{status} {reason}"));
    }
    let fields = field_map.fields(&head.lines);
    resp.headers = fields.fields;
    let (content_type, has_length) = (fields.content_type, fields.has_length);
    // The upstream's `Upgrade` (its `101`'s, or one naming the protocol a
    // `426` wants) goes back when the worker lets that protocol through.
    if let Some(protocol) = switched_to.filter(|p| status == 101 || upgrades.allow(p)) {
        resp.headers.push(("Connection".into(), "Upgrade".into()));
        resp.headers.push(("Upgrade".into(), protocol));
    }
    if status == 101 {
        let resp = crate::errors::finish(&mut ctx, resp);
        return BackendAnswer::Switch(crate::filters::for_log_only(&mut ctx, resp));
    }
    if let Some(t) = &content_type {
        ctx.content_type = Some(t.clone());
        resp.headers.push(("Content-Type".into(), t.clone()));
    }
    let mut pass_body = !head.body_empty;
    if resp.status == 200 {
        match crate::modules::xsendfile::apply(&mut ctx, &mut resp) {
            crate::modules::xsendfile::Outcome::None => {}
            crate::modules::xsendfile::Outcome::File => pass_body = false,
            crate::modules::xsendfile::Outcome::Error(s) => {
                let resp = crate::errors::die(&mut ctx, s);
                return BackendAnswer::respond(resp);
            }
        }
    }
    if pass_body && crate::modules::filter::may_need_body(&ctx) {
        // A body of known length reaches the filters whole; a chunked or
        // close-delimited one in pieces.
        return super::reply::collect(ctx, resp, !has_length);
    }
    super::reply::stream(ctx, resp, pass_body, pass_body && !has_length)
}

/// How an upstream's fields become this server's (mod_proxy's
/// `ap_proxy_read_headers` and `ap_proxy_clear_connection`): hop-by-hop
/// ones dropped (and those `Connection` names), `ProxyPassReverse` and the
/// cookie maps applied, `Via` added; taken from the request's context so
/// that interim answers, which come before the request's answer is made,
/// are read the same way.
struct FieldMap {
    reverses: std::sync::Arc<Vec<Reverse>>,
    cookie_paths: std::sync::Arc<Vec<super::conf::CookieMap>>,
    cookie_domains: std::sync::Arc<Vec<super::conf::CookieMap>>,
    /// This server's `scheme://host[:port]`, for a path a reverse map
    /// gives (only when there are reverse maps).
    url_base: String,
    via: Option<String>,
}

/// An upstream's fields as this server's.
struct Mapped {
    fields: Fields,
    /// `Content-Type`, kept apart (Apache's `r->content_type`).
    content_type: Option<String>,
    has_length: bool,
}

impl FieldMap {
    fn of(ctx: &Ctx<'_>) -> FieldMap {
        let proxy = &ctx.conf.proxy;
        FieldMap {
            url_base: if proxy.reverses.is_empty() {
                String::new()
            } else {
                ctx.construct_url("")
            },
            reverses: proxy.reverses.clone(),
            cookie_paths: proxy.cookie_paths.clone(),
            cookie_domains: proxy.cookie_domains.clone(),
            via: matches!(proxy.via, Some(Via::On | Via::Full)).then(|| via(ctx)),
        }
    }

    fn fields(&self, lines: &[String]) -> Mapped {
        let mut named: Vec<String> = Vec::new();
        for line in lines {
            if let Some((n, v)) = line.split_once(':') {
                if n.trim().eq_ignore_ascii_case("Connection") {
                    named.extend(v.split(',').map(|t| t.trim().to_ascii_lowercase()));
                }
            }
        }
        let mut out = Mapped {
            fields: Vec::with_capacity(lines.len() + 1),
            content_type: None,
            has_length: false,
        };
        for line in lines {
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            let name = name.trim();
            let value = value.trim();
            let lower = name.to_ascii_lowercase();
            if DROPPED.contains(&lower.as_str()) || named.contains(&lower) {
                continue;
            }
            match lower.as_str() {
                "content-type" => {
                    out.content_type = Some(value.to_string());
                    continue;
                }
                "content-length" => out.has_length = true,
                _ => {}
            }
            let value = match lower.as_str() {
                "location" | "content-location" | "uri" => self.reverse_map(value),
                "set-cookie" => {
                    super::cookies::reverse_map(&self.cookie_paths, &self.cookie_domains, value)
                }
                _ => value.to_string(),
            };
            out.fields.push((name.to_string().into(), value));
        }
        if let Some(via) = &self.via {
            out.fields.push(("Via".into(), via.clone()));
        }
        out
    }

    /// `ProxyPassReverse`: an upstream URL mapped back to this server.
    fn reverse_map(&self, url: &str) -> String {
        for r in self.reverses.iter() {
            let real = r.url.as_str();
            let matched = url.len() >= real.len()
                && url.as_bytes()[..real.len()].eq_ignore_ascii_case(real.as_bytes());
            if matched {
                let mapped = format!("{}{}", r.path, &url[real.len()..]);
                if mapped.contains("://") {
                    return mapped;
                }
                return format!("{}{mapped}", self.url_base);
            }
        }
        url.to_string()
    }
}

/// mod_proxy_http passes an upstream's interim answers other than `100`
/// and `101` on (`ap_send_interim_response`: to HTTP/1.1 clients, with
/// the upstream's reason) unless `proxy-interim-response` says other than
/// `RFC` (`Suppress`).
fn interim(ctx: &Ctx<'_>, map: &std::sync::Arc<FieldMap>) -> Option<Interim> {
    let policy = ctx.env.get("proxy-interim-response");
    if policy.is_some_and(|p| !p.eq_ignore_ascii_case("RFC")) {
        return None;
    }
    let map = std::sync::Arc::clone(map);
    Some(Interim(std::sync::Arc::new(move |head: &BackendHead| {
        let mut fields = map.fields(&head.lines);
        if let Some(t) = fields.content_type.take() {
            fields.fields.push(("Content-Type".into(), t));
        }
        fields.fields
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(
            escape_url_path("http://up:8080/base/a b/é", false, false),
            "http://up:8080/base/a%20b/%C3%A9"
        );
        assert_eq!(
            escape_url_path("http://up/a b", true, false),
            "http://up/a b"
        );
        assert_eq!(escape_url_path("http://up", false, false), "http://up/");
        assert_eq!(
            escape_url_path("http://up/m/x?n=1%2f%", false, false),
            "http://up/m/x%3Fn=1%252f%25"
        );
        // NoDecode: encoded slashes stay as sent, other escapes do not.
        assert_eq!(
            escape_url_path("http://up/a%2Fb%2fc%41%2", false, true),
            "http://up/a%2Fb%2fc%2541%252"
        );
    }

    #[test]
    fn merging() {
        let mut h = vec![("X-Forwarded-For".to_string(), b"10.0.0.1".to_vec())];
        merge(&mut h, "x-forwarded-for", b"127.0.0.1".to_vec());
        merge(&mut h, "X-Forwarded-Server", b"localhost".to_vec());
        assert_eq!(h[0].1, b"10.0.0.1, 127.0.0.1");
        assert_eq!(h[1].0, "X-Forwarded-Server");
    }
}
