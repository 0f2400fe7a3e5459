//! mod_php's handler, carried out on PHP-FPM: a request whose handler is
//! PHP's (`SetHandler application/x-httpd-php`, `AddHandler`, `AddType`
//! naming that type, `php-script`) runs the script on the pool that stands
//! in for mod_php ([`super::pool`]), after the checks mod_php makes first
//! (path info refused by `AcceptPathInfo Off`: 404; no such file: 404; a
//! directory: 403), with the `php_value`/`php_flag` settings in force
//! there as `PHP_VALUE`/`PHP_ADMIN_VALUE`.
//!
//! Where Apache with mod_php would send a PHP file's bytes, htaccel never
//! does (docs/deviations.md): `php_flag engine off` (mod_php declines and
//! the default handler sends the file) answers 403, the highlighted-source
//! handler `application/x-httpd-php-source` answers 500 (htaccel has no
//! highlighter), and [`refuses_as_file`] keeps the default handler from
//! sending a `.php`-like file while mod_php is loaded.

use crate::http::backend::Decision;
use crate::modules::proxy::{self, cgi_env};
use crate::request::Ctx;

/// The handlers mod_php answers (PHP 8's script name, and those of 7 and 5).
const RUN: &[&str] = &[
    "application/x-httpd-php",
    "php-script",
    "php7-script",
    "php5-script",
];
const SOURCE: &str = "application/x-httpd-php-source";

/// What mod_php would do with the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Run the script.
    Run,
    /// Show the script's highlighted source.
    Source,
}

/// mod_php's share of the request, when mod_php is loaded: its handler
/// name in `r->handler`, or (no handler set) in the content type, which
/// Apache's `ap_invoke_handler` takes as the handler.
pub fn kind(ctx: &Ctx<'_>) -> Option<Kind> {
    ctx.engine.modules.php.as_ref()?;
    let name = ctx.handler_name()?;
    if RUN.iter().any(|r| name.eq_ignore_ascii_case(r)) {
        Some(Kind::Run)
    } else if name.eq_ignore_ascii_case(SOURCE) {
        Some(Kind::Source)
    } else {
        None
    }
}

/// Whether mod_php's handler takes the request.
pub fn wants(ctx: &Ctx<'_>) -> bool {
    kind(ctx).is_some()
}

/// The exchange with PHP-FPM for a request [`wants`] took, or mod_php's
/// refusal; `prev` is the request it was internally redirected from.
pub fn decide(mut ctx: Ctx<'_>, prev: Option<cgi_env::Prev>) -> Decision<'_> {
    let Some(target) = ctx.engine.modules.php.clone() else {
        return Decision::Respond(proxy::respond_error(ctx, 500));
    };
    if let Some(status) = refusal(&mut ctx) {
        // Through the error path, whose local ErrorDocument may be a
        // script itself (`ErrorDocument 404 /404.php`).
        let resp = crate::errors::die(&mut ctx, status);
        return crate::error_backend::respond_or_backend(&mut ctx, resp);
    }
    // As mod_proxy_fcgi names the script; PHP-FPM strips the prefix.
    let script_filename = format!("proxy:{}{}", target.url_base, ctx.filename);
    // mod_php runs in the server: no proxy timeout applies (`Timeout`
    // does), nor ProxyErrorOverride.
    let via = proxy::Via {
        default_worker: true,
        keep_conn: false,
        timeouts: Default::default(),
        mod_proxy: false,
    };
    proxy::call(ctx, target, script_filename, prev, via)
}

/// mod_php's checks before it runs a script (and htaccel's where mod_php
/// would let the default handler send it): the error status, with the
/// error-log line on `ctx`.
fn refusal(ctx: &mut Ctx<'_>) -> Option<u16> {
    let (status, line) = refusal_reason(ctx)?;
    ctx.reason = Some(crate::request::Reason::new("error", "core", line));
    Some(status)
}

fn refusal_reason(ctx: &Ctx<'_>) -> Option<(u16, String)> {
    if kind(ctx) == Some(Kind::Source) {
        let line = format!(
            "{}: the PHP source highlighter (handler application/x-httpd-php-source) is not supported by htaccel",
            ctx.filename
        );
        return Some((500, line));
    }
    if !ctx.path_info.is_empty() && ctx.conf.core.accept_path_info == Some(false) {
        let line = format!("AcceptPathInfo off disallows user's path: {}", ctx.uri);
        return Some((404, line));
    }
    if engine_off(ctx) {
        let line = format!(
            "{}: PHP is off here (engine off); htaccel never sends a PHP file's source",
            ctx.filename
        );
        return Some((403, line));
    }
    match ctx.finfo.map(|f| f.kind) {
        None => Some((
            404,
            format!("script '{}' not found or unable to stat", ctx.filename),
        )),
        Some(crate::fs::Kind::Dir) => Some((
            403,
            format!("attempt to invoke directory '{}' as script", ctx.filename),
        )),
        _ => None,
    }
}

/// `php_flag engine off` (or `php_admin_flag`, or `php_value engine 0`)
/// in force for the request.
fn engine_off(ctx: &Ctx<'_>) -> bool {
    ctx.conf
        .php
        .settings
        .iter()
        .find(|s| s.name.eq_ignore_ascii_case("engine"))
        .is_some_and(|s| {
            let v = s.value.trim();
            v.is_empty()
                || v == "0"
                || ["off", "no", "false", "none"]
                    .iter()
                    .any(|w| v.eq_ignore_ascii_case(w))
        })
}

/// The default handler's guard while mod_php is loaded: an existing file
/// whose name ends like a PHP script's (`.php`, `.php3`…`.php8`, `.phtml`,
/// `.phar`, `.phps`, any case) is refused (403, with the line for the
/// error log) instead of sent. Apache would send it where no PHP handler applies;
/// with mod_php loaded that is a script meant to run, and its source may
/// hold passwords.
pub fn refuses_as_file(ctx: &mut Ctx<'_>) -> bool {
    let is_file = ctx.finfo.map(|f| f.kind) == Some(crate::fs::Kind::File);
    if ctx.engine.modules.php.is_none() || !is_file || !looks_like_php(&ctx.filename) {
        return false;
    }
    ctx.reason = Some(crate::request::Reason::new("error", "core",
        format!(
            "{}: not sent: mod_php is loaded and no PHP handler applies to this file (htaccel never sends a PHP file's source; add SetHandler application/x-httpd-php for it)",
            ctx.filename
        ),
    ));
    true
}

/// Whether a file name ends like a PHP file's.
pub fn looks_like_php(filename: &str) -> bool {
    let name = filename.rsplit('/').next().unwrap_or(filename);
    let Some(dot) = name.rfind('.') else {
        return false;
    };
    let ext = name[dot + 1..].to_ascii_lowercase();
    match ext.strip_prefix("ph") {
        Some("p" | "tml" | "ar" | "ps") => true,
        Some(rest) => rest
            .strip_prefix('p')
            .is_some_and(|d| d.len() == 1 && d.as_bytes()[0].is_ascii_digit()),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::looks_like_php;

    #[test]
    fn php_like_names() {
        for n in [
            "/a/x.php",
            "/a/X.PHP",
            "/a/.php",
            "/a/x.phtml",
            "/a/x.phar",
            "/a/x.phps",
            "/a/x.php5",
            "/a/x.php8",
            "x.Php7",
        ] {
            assert!(looks_like_php(n), "{n}");
        }
        for n in [
            "/a/x.html",
            "/a/x.php.txt",
            "/a/php",
            "/a.php/x",
            "/a/x.ph",
            "/a/x.php55",
            "/a/x.phpx",
        ] {
            assert!(!looks_like_php(n), "{n}");
        }
    }
}
