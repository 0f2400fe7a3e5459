//! The CGI/1.1 environment a FastCGI backend receives, as mod_proxy_fcgi
//! builds it: the request's `env` (`SetEnv`, `SetEnvIf`, `[E=]`,
//! `REDIRECT_*` after an internal redirect), overlaid with Apache's common
//! variables (`ap_add_common_vars`: `HTTP_*` from the request headers,
//! server and client addresses, document root, script file) and the CGI
//! variables (`ap_add_cgi_vars`: `REQUEST_URI` as sent, `SCRIPT_NAME`,
//! `PATH_INFO`, `PATH_TRANSLATED`).
//!
//! mod_cgi's scripts get the same variables ([`build_cgi`]).
//!
//! Deliberate details, all Apache's: `Authorization` and
//! `Proxy-Authorization` are not exported unless `CGIPassAuth On` says so
//! (scripts must not see passwords; applications get them through
//! `SetEnvIf … HTTP_AUTHORIZATION` or `[E=HTTP_AUTHORIZATION:…]`), nor is
//! `Proxy` (httpoxy); a header whose
//! name has a character other than letters, digits and `-` is skipped;
//! `PATH` is the server's own.

use crate::request::Ctx;

/// Apache's `DEFAULT_PATH`, used when the server has no `PATH`.
const DEFAULT_PATH: &str = "/bin:/usr/bin:/usr/ucb:/usr/bsd:/usr/local/bin";

/// The request an internal redirect came from.
#[derive(Clone, Debug)]
pub struct Prev {
    pub uri: String,
    pub args: Option<String>,
}

/// An ordered environment where setting a name again replaces its value.
#[derive(Default)]
struct Env {
    vars: Vec<(String, Vec<u8>)>,
}

impl Env {
    fn set(&mut self, name: &str, value: impl Into<Vec<u8>>) {
        let value = value.into();
        match self.vars.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = value,
            None => self.vars.push((name.to_string(), value)),
        }
    }

    /// A value derived from the decoded path (`SCRIPT_NAME`, `PATH_INFO`
    /// …): the bytes its text form stands for (`crate::path_text`).
    fn set_path(&mut self, name: &str, value: &str) {
        self.set(name, crate::path_text::bytes(value).into_owned());
    }
}

/// `HTTP_` plus the header name upper-cased with `-` as `_`; `None` for a
/// name Apache refuses to export.
fn http2env(name: &str) -> Option<String> {
    let mut out = String::with_capacity(5 + name.len());
    out.push_str("HTTP_");
    for c in name.chars() {
        match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' => out.push(c.to_ascii_uppercase()),
            '-' => out.push('_'),
            _ => return None,
        }
    }
    Some(out)
}

/// The request-target of the request line (`original_uri`): what the
/// client sent, query included, even after internal redirects.
fn original_uri(request_line: &str) -> &str {
    let mut words = request_line.split_ascii_whitespace();
    words.next();
    words.next().unwrap_or("")
}

/// The environment for `ctx`, with `script_filename` as `SCRIPT_FILENAME`
/// (mod_proxy_fcgi sends its `proxy:fcgi://host/…` form; PHP-FPM strips
/// it). `prev` is the request this one was internally redirected from
/// (`r->prev`: its URI and query), for `REDIRECT_URL` and
/// `REDIRECT_QUERY_STRING`.
pub fn build(ctx: &Ctx<'_>, script_filename: &str, prev: Option<&Prev>) -> Vec<(String, Vec<u8>)> {
    let mut e = common(ctx, script_filename, prev);
    // php_value/php_flag recorded for PHP-FPM (`htaccel serve --php`).
    if let Some(v) = ctx.conf.php.php_value() {
        e.set("PHP_VALUE", v);
    }
    if let Some(v) = ctx.conf.php.php_admin_value() {
        e.set("PHP_ADMIN_VALUE", v);
    }
    e.vars
}

/// The environment of a CGI script run by mod_cgi: the same variables,
/// the script's own file as `SCRIPT_FILENAME`.
pub fn build_cgi(ctx: &Ctx<'_>, prev: Option<&Prev>) -> Vec<(String, Vec<u8>)> {
    common(ctx, &ctx.filename, prev).vars
}

/// `ap_add_common_vars` and `ap_add_cgi_vars` over the request's `env`.
fn common(ctx: &Ctx<'_>, script_filename: &str, prev: Option<&Prev>) -> Env {
    let mut e = Env::default();
    for (n, v) in ctx.env.iter() {
        // Values built from the path (`[E=CAP:$1]`) are in its text form.
        e.set_path(n, v);
    }
    for (name, value) in ctx.headers_in.iter() {
        if name.eq_ignore_ascii_case("Content-Type") {
            e.set("CONTENT_TYPE", value.to_vec());
        } else if name.eq_ignore_ascii_case("Content-Length") {
            e.set("CONTENT_LENGTH", value.to_vec());
        } else if name.eq_ignore_ascii_case("Proxy") {
        } else if name.eq_ignore_ascii_case("Authorization")
            || name.eq_ignore_ascii_case("Proxy-Authorization")
        {
            // `CGIPassAuth On` lets the script see them.
            if ctx.conf.cgi.pass_auth == Some(true) {
                if let Some(var) = http2env(name) {
                    e.set(&var, value.to_vec());
                }
            }
        } else if let Some(var) = http2env(name) {
            e.set(&var, value.to_vec());
        }
    }
    let path = std::env::var("PATH").unwrap_or_else(|_| DEFAULT_PATH.to_string());
    e.set("PATH", path);
    if let Ok(v) = std::env::var("LD_LIBRARY_PATH") {
        e.set("LD_LIBRARY_PATH", v);
    }
    e.set("SERVER_SIGNATURE", "");
    e.set("SERVER_SOFTWARE", ctx.engine.server_header.as_str());
    let req = ctx.req;
    let port = ctx.server_port();
    e.set("SERVER_NAME", ctx.server_name());
    e.set("SERVER_ADDR", req.local.ip().to_string());
    e.set("SERVER_PORT", port.to_string());
    if let Some(host) = ctx.remote_host() {
        e.set("REMOTE_HOST", host);
    }
    e.set("REMOTE_ADDR", req.remote_ip().to_string());
    let docroot = ctx.document_root();
    e.set("DOCUMENT_ROOT", docroot.as_bytes());
    if req.secure {
        e.set("HTTPS", "on");
    }
    e.set("REQUEST_SCHEME", if req.secure { "https" } else { "http" });
    e.set_path(
        "CONTEXT_PREFIX",
        ctx.context_prefix.as_deref().unwrap_or(""),
    );
    e.set_path(
        "CONTEXT_DOCUMENT_ROOT",
        ctx.context_document_root
            .as_deref()
            .unwrap_or(docroot.as_ref()),
    );
    e.set(
        "SERVER_ADMIN",
        ctx.site
            .server_admin
            .as_deref()
            .unwrap_or("[no address given]"),
    );
    e.set_path("SCRIPT_FILENAME", script_filename);
    e.set("REMOTE_PORT", ctx.useragent_port().to_string());
    if let Some(prev) = prev {
        e.set_path("REDIRECT_URL", &prev.uri);
        if let Some(q) = &prev.args {
            e.set_path("REDIRECT_QUERY_STRING", q);
        }
    }
    // ap_add_cgi_vars
    e.set("GATEWAY_INTERFACE", "CGI/1.1");
    e.set("SERVER_PROTOCOL", req.version.as_str());
    e.set("REQUEST_METHOD", &*ctx.method);
    e.set_path("QUERY_STRING", ctx.args.as_deref().unwrap_or(""));
    // `CGIVar REQUEST_URI current-uri`: the path after internal
    // redirects, decoded, without the query.
    if ctx.conf.cgi.request_uri_current == Some(true) {
        e.set_path("REQUEST_URI", &ctx.uri);
    } else {
        e.set("REQUEST_URI", original_uri(&req.request_line));
    }
    if ctx.path_info.is_empty() {
        e.set_path("SCRIPT_NAME", &ctx.uri);
    } else {
        let script = &ctx.uri[..find_path_info(&ctx.uri, &ctx.path_info)];
        e.set_path("SCRIPT_NAME", script);
        e.set_path("PATH_INFO", &ctx.path_info);
        // PATH_INFO looked up as a URI path (ap_sub_req_lookup_uri).
        let (sub, _) = ctx.sub_request(&ctx.path_info);
        // A sub-request mod_rewrite redirected has the filename
        // "redirect:/target".
        if let Some(target) = &sub.modules.rewrite.redirect {
            e.set_path("PATH_TRANSLATED", &format!("redirect:{target}"));
        } else if !sub.filename.is_empty() {
            e.set_path(
                "PATH_TRANSLATED",
                &format!("{}{}", sub.filename, sub.path_info),
            );
        }
    }
    e
}

/// Where `path_info` begins in `uri` (Apache's `ap_find_path_info`): the
/// two are compared from their ends, runs of `/` counting as one, and the
/// end of the common part is moved on to the next `/` of `uri` (its end
/// when none): a `PATH_INFO` that is no suffix of the URI (a guessed one)
/// leaves the whole URI, or all but a matching tail, as `SCRIPT_NAME`.
fn find_path_info(uri: &str, path_info: &str) -> usize {
    let (u, p) = (uri.as_bytes(), path_info.as_bytes());
    let (mut lu, mut lp) = (u.len(), p.len());
    let mut consumed = false;
    loop {
        if lu == 0 {
            consumed = true;
            break;
        }
        lu -= 1;
        if lp == 0 {
            break;
        }
        lp -= 1;
        if u[lu] != p[lp] {
            break;
        }
        if p[lp] == b'/' {
            while lp > 0 && p[lp - 1] == b'/' {
                lp -= 1;
            }
            while lu > 0 && u[lu - 1] == b'/' {
                lu -= 1;
            }
        }
    }
    if consumed {
        lu = 0;
    }
    while lu < u.len() && u[lu] != b'/' {
        lu += 1;
    }
    lu
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_info_is_found_as_apache_finds_it() {
        let script = |uri: &'static str, info: &str| &uri[..find_path_info(uri, info)];
        assert_eq!(script("/a.php/x/y", "/x/y"), "/a.php");
        assert_eq!(script("/a.php//x", "/x"), "/a.php");
        assert_eq!(script("/a.php/x", "//x"), "/a.php");
        // A guessed PATH_INFO that ends as the URI does: nothing left.
        assert_eq!(script("/one/a.b.php", "/srv/www/one/a.b.php"), "");
        // One that does not: the whole URI.
        assert_eq!(
            script("/h/a.b.php/x/y.z", "/srv/h/a.b.php"),
            "/h/a.b.php/x/y.z"
        );
        assert_eq!(script("/p/a.php/x", "/y"), "/p/a.php/x");
    }

    #[test]
    fn header_names() {
        assert_eq!(http2env("X-Forwarded-For").unwrap(), "HTTP_X_FORWARDED_FOR");
        assert_eq!(http2env("accept").unwrap(), "HTTP_ACCEPT");
        assert!(http2env("X_Under").is_none());
        assert!(http2env("a.b").is_none());
    }

    #[test]
    fn request_uri_is_the_target_as_sent() {
        assert_eq!(
            original_uri("GET /a%20b/x.php?q=1 HTTP/1.1"),
            "/a%20b/x.php?q=1"
        );
        assert_eq!(original_uri("GET /"), "/");
        assert_eq!(original_uri(""), "");
    }

    #[test]
    fn set_replaces_in_place() {
        let mut e = Env::default();
        e.set("A", "1");
        e.set("B", "2");
        e.set("A", "3");
        assert_eq!(
            e.vars,
            vec![("A".into(), b"3".to_vec()), ("B".into(), b"2".to_vec())]
        );
    }
}
