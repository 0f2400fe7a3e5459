//! mod_proxy and mod_proxy_fcgi: requests handed to a FastCGI backend
//! (PHP-FPM), configured as Apache users configure it:
//!
//! ```apache
//! <FilesMatch \.php$>
//!     SetHandler "proxy:unix:/run/php/php8.2-fpm.sock|fcgi://localhost"
//! </FilesMatch>
//! ```
//!
//! (or `proxy:fcgi://127.0.0.1:9000`). The engine decides here and does no
//! I/O: [`decide`] turns a request whose handler names a FastCGI backend
//! into a [`BackendCall`] carrying the CGI environment (`cgi_env`) and a
//! continuation that owns the request's context; the server performs the
//! exchange and calls back with the backend's header block, which
//! `reply` post-processes as Apache does (status, header tables,
//! conditional GET, then mod_expires/mod_headers).
//!
//! As in Apache, the handler applies only while mod_proxy and
//! mod_proxy_fcgi are loaded; a request for a script that does not exist
//! still goes to the backend (PHP-FPM answers "File not found.").
//! Reverse proxying to HTTP upstreams (`ProxyPass`, mod_proxy_http) is in
//! `http`; mod_proxy directives htaccel does not implement are refused
//! loudly.

pub mod cgi_env;
pub mod conf;
pub mod cookies;
pub mod http;
pub mod reply;
pub mod sections;

use crate::http::backend::{BackendAddr, BackendCall, BackendRequest, BackendTimeouts, Decision};
use crate::registry::{Args, Directive, Module, Run, ACCESS_CONF, OR_FILEINFO, RSRC_CONF};
use crate::request::Ctx;
use std::path::PathBuf;

const SRV: u32 = RSRC_CONF | ACCESS_CONF;

pub static MODULE: Module = Module {
    source: "mod_proxy.c",
    identifier: "proxy_module",
    builtin: false,
    directives: DIRECTIVES,
};

static DIRECTIVES: &[Directive] = &[
    Directive {
        name: "<Proxy",
        args: Args::Section,
        req_override: RSRC_CONF,
        about: "Container for directives affecting resources located in the proxied location",
        run: Run::Handler(sections::section),
    },
    Directive {
        name: "<ProxyMatch",
        args: Args::Section,
        req_override: RSRC_CONF,
        about: "Container for directives affecting resources located in the proxied location, in regular expression syntax",
        run: Run::Handler(sections::section),
    },
    // What mod_proxy adds to mod_status's page: its balancers' tables.
    // htaccel has no balancers (refused: docs/deviations.md), so
    // the page has nothing to add, as Apache's without balancers.
    Directive {
        name: "ProxyStatus",
        args: Args::Take1,
        req_override: RSRC_CONF,
        about: "Configure Status: proxy status to one of: on | off | full",
        run: Run::Handler(
            |_w, inv, _c| match inv.words[0].to_ascii_lowercase().as_str() {
                "off" | "on" | "full" => Ok(()),
                _ => Err("ProxyStatus must be one of: off | on | full".into()),
            },
        ),
    },
    Directive {
        name: "ProxyPass",
        args: Args::Argv,
        req_override: SRV,
        about: "a virtual path and a URL",
        run: Run::Handler(|w, inv, c| conf::proxy_pass(w, inv, c, false)),
    },
    Directive {
        name: "ProxyPassMatch",
        args: Args::Argv,
        req_override: SRV,
        about: "a virtual path and a URL",
        run: Run::Handler(|w, inv, c| conf::proxy_pass(w, inv, c, true)),
    },
    Directive {
        name: "ProxyPassReverse",
        args: Args::Argv,
        req_override: SRV,
        about: "a virtual path and a URL for reverse proxy behaviour",
        run: Run::Handler(conf::proxy_pass_reverse),
    },
    Directive {
        name: "ProxyPreserveHost",
        args: Args::Flag,
        req_override: SRV,
        about: "on if we should preserve host header while proxying",
        run: Run::Handler(|_w, inv, c| {
            c.proxy.preserve_host = Some(crate::registry::flag(&inv.words));
            Ok(())
        }),
    },
    Directive {
        name: "ProxyAddHeaders",
        args: Args::Flag,
        req_override: SRV,
        about: "on if X-Forwarded-* headers should be added or completed",
        run: Run::Handler(|_w, inv, c| {
            c.proxy.add_headers = Some(crate::registry::flag(&inv.words));
            Ok(())
        }),
    },
    Directive {
        name: "ProxyPassReverseCookieDomain",
        args: Args::Take23,
        req_override: SRV,
        about: "a domain in a Set-Cookie of the upstream, and this server's",
        run: Run::Handler(conf::cookie_map),
    },
    Directive {
        name: "ProxyPassReverseCookiePath",
        args: Args::Take23,
        req_override: SRV,
        about: "a path in a Set-Cookie of the upstream, and this server's",
        run: Run::Handler(conf::cookie_map),
    },
    Directive {
        name: "ProxyRequests",
        args: Args::Flag,
        req_override: RSRC_CONF,
        about: "on if the true proxy requests should be accepted",
        run: Run::DefaultOnly {
            default: "Off",
            missing: "forward proxying",
        },
    },
    Directive {
        name: "ProxyTimeout",
        args: Args::Take1,
        req_override: RSRC_CONF,
        about: "Set the timeout (in seconds) for a proxied connection. This overrides the server timeout",
        run: Run::Handler(conf::proxy_timeout),
    },
    Directive {
        name: "ProxyErrorOverride",
        args: Args::Iterate,
        req_override: SRV,
        about: "use our error handling pages instead of the servers' we are proxying",
        run: Run::Handler(conf::error_override),
    },
    Directive {
        name: "ProxySet",
        args: Args::Raw,
        req_override: SRV,
        about: "",
        run: Run::Unsupported,
    },
    Directive {
        name: "ProxyVia",
        args: Args::Take1,
        req_override: RSRC_CONF,
        about: "Configure Via: proxy header header to one of: on | off | block | full",
        run: Run::Handler(conf::proxy_via),
    },
    Directive {
        name: "BalancerMember",
        args: Args::Raw,
        req_override: SRV,
        about: "",
        run: Run::Unsupported,
    },
    Directive { name: "ProxyReceiveBufferSize", args: Args::Take1, req_override: RSRC_CONF, about: "Receive buffer size for outgoing HTTP and FTP connections in bytes", run: Run::WithoutEffect },
    Directive { name: "ProxyIOBufferSize", args: Args::Take1, req_override: RSRC_CONF, about: "IO buffer size for outgoing HTTP and FTP connections in bytes", run: Run::DefaultOnly { default: "8192", missing: "reading a back-end's body in pieces of another size" } },
    Directive { name: "ProxyMaxForwards", args: Args::Take1, req_override: RSRC_CONF, about: "The maximum number of proxies a request may be forwarded through.", run: Run::DefaultOnly { default: "-1", missing: "a Max-Forwards header on proxied requests" } },
    Directive { name: "ProxyBadHeader", args: Args::Take1, req_override: RSRC_CONF, about: "How to handle bad header line in response: IsError | Ignore | StartBody", run: Run::DefaultOnly { default: "IsError", missing: "passing on a back-end's malformed header lines" } },
    Directive { name: "Proxy100Continue", args: Args::Flag, req_override: SRV, about: "on if 100-Continue should be forwarded to the origin server, off if the proxy should handle it by itself", run: Run::DefaultOnly { default: "On", missing: "answering 100 Continue without the back-end" } },
    Directive { name: "ProxyPassInterpolateEnv", args: Args::Flag, req_override: SRV, about: "Interpolate Env Vars in reverse Proxy", run: Run::DefaultOnly { default: "Off", missing: "${VAR} in ProxyPass and ProxyPassReverse lines" } },
    Directive { name: "ProxySourceAddress", args: Args::Take1, req_override: SRV, about: "Configure local source IP used for request forward", run: Run::Unsupported },
    // Forward-proxy settings: `ProxyRequests On` is refused already.
    Directive { name: "ProxyRemote", args: Args::Raw, req_override: RSRC_CONF, about: "a scheme, partial URL or '*' and a proxy server", run: Run::Unsupported },
    Directive { name: "ProxyRemoteMatch", args: Args::Raw, req_override: RSRC_CONF, about: "a regex pattern and a proxy server", run: Run::Unsupported },
    Directive { name: "ProxyBlock", args: Args::Raw, req_override: RSRC_CONF, about: "A list of names, hosts or domains to which the proxy will not connect", run: Run::Unsupported },
    Directive { name: "NoProxy", args: Args::Raw, req_override: RSRC_CONF, about: "A list of domains, hosts, or subnets to which the proxy will connect directly", run: Run::Unsupported },
    Directive { name: "ProxyDomain", args: Args::Take1, req_override: RSRC_CONF, about: "The default intranet domain name (in absence of a domain in the URL)", run: Run::Unsupported },
    // Balancer settings: balancers (`BalancerMember`) are refused.
    Directive { name: "BalancerGrowth", args: Args::Take1, req_override: RSRC_CONF, about: "Number of additional Balancers that can be added post-config", run: Run::WithoutEffect },
    Directive { name: "BalancerPersist", args: Args::Flag, req_override: RSRC_CONF, about: "on if the balancer should persist changes on reboot/restart made via the Balancer Manager", run: Run::WithoutEffect },
    Directive { name: "BalancerInherit", args: Args::Flag, req_override: RSRC_CONF, about: "on if this server should inherit Balancers and Workers defined in the main server (Setting to off recommended if using the Balancer Manager)", run: Run::WithoutEffect },
    Directive {
        name: "ProxyPassInherit",
        args: Args::Flag,
        req_override: RSRC_CONF,
        about: "Inherit main server proxies",
        run: Run::DefaultOnly {
            default: "On",
            missing: "virtual hosts that do not inherit the main server's ProxyPass lines",
        },
    },
];

/// mod_proxy_http: no directives of its own; loading it lets `http://`
/// upstreams be proxied.
pub static HTTP_MODULE: Module = Module {
    source: "mod_proxy_http.c",
    identifier: "proxy_http_module",
    builtin: false,
    directives: &[],
};

/// mod_proxy_wstunnel: since Apache 2.4.47 it leaves `ws://` and `wss://`
/// URLs to mod_proxy_http when that is loaded
/// (`ProxyWebsocketFallbackToProxyHttp On`, its default), which is how
/// htaccel serves them (`http`). Its own tunnel, used without
/// mod_proxy_http or with the fallback off, is refused.
pub static WSTUNNEL_MODULE: Module = Module {
    source: "mod_proxy_wstunnel.c",
    identifier: "proxy_wstunnel_module",
    builtin: false,
    directives: &[Directive {
        name: "ProxyWebsocketFallbackToProxyHttp",
        args: Args::Flag,
        req_override: SRV,
        about: "whether to let mod_proxy_http handle the upgrade and tunneling, On by default",
        run: Run::DefaultOnly {
            default: "On",
            missing: "mod_proxy_wstunnel's own tunnel; with the default (On), mod_proxy_http tunnels WebSockets",
        },
    }],
};

/// Whether `url` is a WebSocket one (`ws://`, `wss://`).
pub fn is_websocket(url: &str) -> bool {
    let lower = url.get(..6).unwrap_or(url).to_ascii_lowercase();
    lower.starts_with("ws://") || lower.starts_with("wss://")
}

/// Why a server cannot serve a WebSocket URL htaccel's way: only
/// mod_proxy_wstunnel's own tunnel would (mod_proxy_http not loaded).
pub fn websocket_refusal(env: &crate::config::Environment) -> Option<&'static str> {
    (env.is_loaded("mod_proxy_wstunnel.c") && !env.is_loaded("mod_proxy_http.c")).then_some(
        "only mod_proxy_wstunnel's own tunnel would serve it (mod_proxy_http is not loaded), which htaccel does not have; load mod_proxy_http, which then tunnels WebSockets in Apache too",
    )
}

/// `post_config`: a `ProxyPass` to a WebSocket URL that only
/// mod_proxy_wstunnel's own tunnel would serve is refused at start.
pub fn check(engine: &crate::engine::Engine) -> Result<(), String> {
    for site in std::iter::once(&engine.main).chain(engine.vhosts.iter()) {
        let Some(reason) = websocket_refusal(&site.env) else {
            continue;
        };
        let passes = site.base.proxy.passes.iter().chain(
            site.locations
                .iter()
                .flat_map(|l| l.conf.proxy.passes.iter()),
        );
        for pass in passes {
            if let Some(url) = pass.url.as_deref().filter(|u| is_websocket(u)) {
                return Err(format!("ProxyPass {} {url}: {reason}", pass.path));
            }
        }
    }
    Ok(())
}

pub static FCGI_MODULE: Module = Module {
    source: "mod_proxy_fcgi.c",
    identifier: "proxy_fcgi_module",
    builtin: false,
    directives: FCGI_DIRECTIVES,
};

static FCGI_DIRECTIVES: &[Directive] = &[
    Directive {
        name: "ProxyFCGIBackendType",
        args: Args::Take1,
        req_override: SRV | OR_FILEINFO,
        about: "Specify the type of FastCGI server: 'Generic', 'FPM'",
        run: Run::DefaultOnly {
            default: "FPM",
            missing: "the SCRIPT_FILENAME and PATH_INFO of a generic FastCGI server",
        },
    },
    Directive {
        name: "ProxyFCGISetEnvIf",
        args: Args::Raw,
        req_override: SRV | OR_FILEINFO,
        about: "",
        run: Run::Unsupported,
    },
];

/// A FastCGI backend named by a handler: where it listens, and the
/// `scheme://host[:port]` part Apache puts in `SCRIPT_FILENAME`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FcgiTarget {
    pub addr: BackendAddr,
    pub url_base: String,
}

/// mod_proxy_fcgi's default port.
const FCGI_PORT: u16 = 8000;

/// Parse a `proxy:` handler: `proxy:unix:/path|fcgi://host` or
/// `proxy:fcgi://host[:port][/…]`. `None`: not a proxy handler;
/// `Some(Err)`: a proxy handler htaccel cannot serve.
pub fn parse_handler(handler: &str) -> Option<Result<FcgiTarget, String>> {
    let rest = strip_prefix_ci(handler, "proxy:")?;
    let (unix, url) = match strip_prefix_ci(rest, "unix:") {
        Some(r) => match r.split_once('|') {
            Some((path, url)) => (Some(path), url),
            None => return Some(Err(format!("invalid proxy handler {handler}"))),
        },
        None => (None, rest),
    };
    let Some(hostpart) = strip_prefix_ci(url, "fcgi://") else {
        return Some(Err(format!(
            "proxy handler {handler}: only fcgi:// backends are supported by htaccel yet"
        )));
    };
    let authority = hostpart.split('/').next().unwrap_or("");
    let (host, port_text) = match authority.find(']') {
        Some(end) => (&authority[..=end], authority[end + 1..].strip_prefix(':')),
        None => match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        },
    };
    let port = match port_text.map(str::parse::<u16>) {
        None => FCGI_PORT,
        Some(Ok(p)) => p,
        Some(Err(_)) => return Some(Err(format!("invalid port in proxy handler {handler}"))),
    };
    if host.is_empty() {
        return Some(Err(format!("no host in proxy handler {handler}")));
    }
    let host = host.to_ascii_lowercase();
    let url_base = if port == FCGI_PORT {
        format!("fcgi://{host}")
    } else {
        format!("fcgi://{host}:{port}")
    };
    let addr = match unix {
        Some(path) => BackendAddr::Unix(PathBuf::from(path)),
        None => BackendAddr::Tcp(format!("{host}:{port}")),
    };
    Some(Ok(FcgiTarget { addr, url_base }))
}

fn strip_prefix_ci<'s>(s: &'s str, prefix: &str) -> Option<&'s str> {
    (s.len() >= prefix.len()
        && s.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes()))
    .then(|| &s[prefix.len()..])
}

/// Whether the request goes to a FastCGI backend (its handler is a
/// `proxy:` one and mod_proxy_fcgi is loaded).
pub fn wants(ctx: &Ctx<'_>) -> bool {
    ctx.handler
        .as_deref()
        .is_some_and(|h| strip_prefix_ci(h, "proxy:").is_some())
        && ctx.site.env.is_loaded("mod_proxy.c")
        && ctx.site.env.is_loaded("mod_proxy_fcgi.c")
}

/// The backend exchange for a request that passed every phase and whose
/// handler is a `proxy:` one ([`wants`]); `prev` is the request it was
/// internally redirected from, if any.
pub fn decide(mut ctx: Ctx<'_>, prev: Option<cgi_env::Prev>) -> Decision<'_> {
    let handler = ctx.handler.clone().unwrap_or_default();
    let target = match parse_handler(&handler) {
        Some(Ok(t)) => t,
        Some(Err(message)) => {
            ctx.reason = Some(crate::request::Reason::new("error", "proxy", message));
            return Decision::Respond(respond_error(ctx, 500));
        }
        None => return Decision::Respond(respond_error(ctx, 500)),
    };
    // mod_proxy: r->filename becomes "proxy:" + the backend URL + the file.
    let mut script_filename = format!("proxy:{}{}", target.url_base, ctx.filename);
    fcgi_path_info(&mut ctx, None, &mut script_filename);
    // A worker a `ProxyPass` defined takes the request when its URL
    // covers the handler's URL and the file, as for a mapped request;
    // else mod_proxy's default worker does.
    let url = format!("{}{}", &handler["proxy:".len()..], ctx.filename);
    let worker = http::worker(&ctx, &url);
    let via = Via {
        default_worker: worker.is_none(),
        keep_conn: worker
            .as_ref()
            .is_some_and(|w| w.enable_reuse && !w.disable_reuse),
        timeouts: timeouts(&ctx, worker.as_ref()),
        mod_proxy: true,
    };
    call(ctx, target, script_filename, prev, via)
}

/// The exchange for a request `ProxyPass`/`ProxyPassMatch` mapped to a
/// FastCGI URL (`fcgi://host/path`, `unix:/socket|fcgi://host/path`): the
/// script is the URL's path, which PHP-FPM takes from `SCRIPT_FILENAME`.
pub fn decide_url<'a>(mut ctx: Ctx<'a>, url: &str, prev: Option<cgi_env::Prev>) -> Decision<'a> {
    let target = match parse_handler(&format!("proxy:{url}")) {
        Some(Ok(t)) => t,
        Some(Err(message)) => {
            ctx.reason = Some(crate::request::Reason::new("error", "proxy", message));
            return Decision::Respond(respond_error(ctx, 500));
        }
        None => return Decision::Respond(respond_error(ctx, 500)),
    };
    let fcgi = url
        .find("fcgi://")
        .or_else(|| url.find("FCGI://"))
        .map_or(url, |i| &url[i + 7..]);
    let path = fcgi.find('/').map_or("/", |i| &fcgi[i..]);
    let mut script_filename = format!("proxy:{}{path}", target.url_base);
    fcgi_path_info(&mut ctx, Some(path), &mut script_filename);
    let worker = http::worker(&ctx, url);
    let keep_conn = worker
        .as_ref()
        .is_some_and(|w| w.enable_reuse && !w.disable_reuse);
    let via = Via {
        default_worker: worker.is_none(),
        keep_conn,
        timeouts: timeouts(&ctx, worker.as_ref()),
        mod_proxy: true,
    };
    call(ctx, target, script_filename, prev, via)
}

/// mod_proxy_fcgi's `proxy-fcgi-pathinfo` environment variable, for a
/// backend that wants `PATH_INFO` guessed from the URL's `path` (as the
/// backend gets it, `%`-encoded; `None`: the handler's URL, whose path is
/// the request's file, encoded only when the variable is set): `first-dot` and `last-dot` take what
/// follows the first `/` after the first or last `.`; `full` walks the
/// file system for the script as the core walks a request, which then
/// goes as `SCRIPT_FILENAME` (observed with Apache 2.4.71: no `proxy:`
/// prefix, the rest as `PATH_INFO`); any other value makes the whole
/// path `PATH_INFO`, decoded when the value is `unescape`. Decoding
/// keeps `%2F`. Without it the backend works out `PATH_INFO` itself.
fn fcgi_path_info(ctx: &mut Ctx<'_>, path: Option<&str>, script_filename: &mut String) {
    let Some(kind) = ctx
        .env
        .get("proxy-fcgi-pathinfo")
        .map(str::to_ascii_lowercase)
    else {
        return;
    };
    let encoded;
    let path = match path {
        Some(p) => p,
        None => {
            encoded = http::canonenc(&ctx.filename, false);
            &encoded
        }
    };
    let decoded =
        |p: &str| crate::path_text::from_bytes(crate::uri::unescape_keep2f_lossy(p.as_bytes()));
    let after_dot = |dot: Option<usize>| {
        let dot = dot?;
        path[dot..].find('/').map(|slash| dot + slash)
    };
    match kind.as_str() {
        "full" => {
            let file = crate::walk::clean_path(&decoded(path));
            if let Ok(walked) = crate::walk::directory_walk(ctx.site, &file) {
                *script_filename = walked.filename;
                ctx.path_info = walked.path_info;
            }
        }
        "first-dot" | "last-dot" => {
            let dot = if kind == "first-dot" {
                path.find('.')
            } else {
                path.rfind('.')
            };
            if let Some(slash) = after_dot(dot) {
                ctx.path_info = decoded(&path[slash..]);
            }
        }
        "unescape" => ctx.path_info = decoded(path),
        _ => ctx.path_info = path.to_string(),
    }
}

/// How one request reaches its FastCGI backend.
pub(crate) struct Via {
    /// No `ProxyPass` defines a worker for the backend (SetHandler, a
    /// substituted `ProxyPassMatch`): mod_proxy's default reverse worker.
    pub default_worker: bool,
    /// The connection is kept for the next request (`FCGI_KEEP_CONN`).
    pub keep_conn: bool,
    pub timeouts: BackendTimeouts,
    /// mod_proxy_fcgi answers (`ProxyErrorOverride` applies); else
    /// htaccel's mod_php, which runs PHP on PHP-FPM too.
    pub mod_proxy: bool,
}

/// `ap_proxy_connect_backend`'s timeouts: the worker's `timeout=`, else
/// the server's `ProxyTimeout`, else `Timeout`; the connect's own
/// `connectiontimeout=` before those.
fn timeouts(ctx: &Ctx<'_>, worker: Option<&conf::Pass>) -> BackendTimeouts {
    let io = worker.and_then(|w| w.timeout).or(ctx.conf.proxy.timeout);
    BackendTimeouts {
        io,
        connect: worker.and_then(|w| w.connect_timeout).or(io),
    }
}

pub(crate) fn call<'a>(
    mut ctx: Ctx<'a>,
    target: FcgiTarget,
    script_filename: String,
    prev: Option<cgi_env::Prev>,
    via: Via,
) -> Decision<'a> {
    if let Err(status) = crate::modules::filter::insert(&mut ctx) {
        return Decision::Respond(respond_error(ctx, status));
    }
    ctx.handler_ran = true;
    // No worker is configured for the backend (SetHandler, a substituted
    // ProxyPassMatch): mod_proxy's default reverse worker, which does not
    // keep connections, takes the request and says so in the environment.
    if via.default_worker {
        ctx.env.set("proxy-nokeepalive", "1");
    }
    let params = cgi_env::build(&ctx, &script_filename, prev.as_ref());
    let error_override = via.mod_proxy;
    Decision::Backend(BackendCall {
        timeouts: via.timeouts,
        addr: target.addr,
        request: BackendRequest::FastCgi {
            params,
            keep_conn: via.keep_conn,
        },
        // LimitRequestBody does not apply to a proxied request: Apache's
        // input filter skips it when `r->proxyreq` is set.
        body_limit: 0,
        body_read: false,
        send_length: ctx.env.contains("proxy-sendcl"),
        early_hints: ctx.modules.early_hints.take(),
        finish: Box::new(move |result| match result {
            Ok(head) => {
                let offer = crate::modules::http2::upgrade_offer(&ctx);
                let alt_svc = crate::request::alt_svc(&ctx);
                if error_override {
                    if let Some(answer) = reply::error_override(&mut ctx, &head) {
                        return answer;
                    }
                }
                let mut answer = reply::finish(ctx, head);
                // The backend's own answer (not an error page made of it).
                if let Some(response) = answer.response_mut() {
                    if response.arrival == crate::http::Arrival::Later {
                        response.upgrade_offer = offer;
                    }
                    response.alt_svc = alt_svc;
                }
                answer
            }
            Err(e) => reply::failed(ctx, e),
        }),
    })
}

pub(crate) fn respond_error(mut ctx: Ctx<'_>, status: u16) -> crate::http::Response {
    crate::errors::die(&mut ctx, status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handlers() {
        let t = parse_handler("proxy:unix:/run/php/fpm.sock|fcgi://localhost")
            .unwrap()
            .unwrap();
        assert_eq!(t.addr, BackendAddr::Unix("/run/php/fpm.sock".into()));
        assert_eq!(t.url_base, "fcgi://localhost");
        let t = parse_handler("proxy:fcgi://127.0.0.1:9000")
            .unwrap()
            .unwrap();
        assert_eq!(t.addr, BackendAddr::Tcp("127.0.0.1:9000".into()));
        assert_eq!(t.url_base, "fcgi://127.0.0.1:9000");
        let t = parse_handler("PROXY:fcgi://Backend/").unwrap().unwrap();
        assert_eq!(t.addr, BackendAddr::Tcp("backend:8000".into()));
        assert!(parse_handler("text/html").is_none());
        assert!(parse_handler("proxy:http://x/").unwrap().is_err());
        assert!(parse_handler("proxy:unix:/x").unwrap().is_err());
        assert!(parse_handler("proxy:fcgi://h:port").unwrap().is_err());
    }
}
