//! mod_rewrite in the request phases: what Apache's `hook_uri2file`
//! (server rules, translate phase), `hook_fixup` (directory rules, first
//! fixup), `hook_mimetype` (`[T=]`/`[H=]`, last fixup) and
//! `handler_redirect` (the internal redirect) do with the rule loop's
//! result, and the [`Host`] that lets the loop read the request.

use super::exec::{self, absolute_uri, Outcome, PerDir, State};
use super::host::{document_root, server_name, server_port, HostCtx};
use super::opt;
use super::parse::{flag, Rule};
use crate::http::Response;
use crate::modules::core::options::{OPT_SYM_LINKS, OPT_SYM_OWNER};
use crate::request::{Ctx, Status};
use std::sync::Arc;

/// Apache's `LimitRequestLine` default; twice it bounds a rewritten name.
const LIMIT_REQUEST_LINE: usize = 8190;

/// The handler name of a scheduled internal redirect.
pub const REDIRECT_HANDLER: &str = "redirect-handler";

/// mod_rewrite's part of a request: what it scheduled and what must
/// outlive an internal redirect (Apache keeps those in the request pool,
/// which internal redirects share).
#[derive(Clone, Debug, Default)]
pub struct RequestState {
    /// An `[END]` rule applied: no more rewriting for this client request.
    pub end: bool,
    /// Cookie names already set by `[CO=]` in this client request.
    pub cookies: Vec<String>,
    /// The URL-path of the scheduled internal redirect.
    pub redirect: Option<String>,
    /// `[T=]`/`[H=]` to apply at the end of the fixups.
    pub forced_type: Option<String>,
    pub forced_handler: Option<String>,
    /// For a sub-request made by mod_rewrite: its parent's URI (Apache's
    /// recursion guard compares them).
    pub main_uri: Option<String>,
    /// `[P]`: the URL a rule wanted to proxy to.
    pub proxy: Option<String>,
}

impl crate::request::RequestSlot for RequestState {
    fn for_redirect(from: &Ctx<'_>) -> Self {
        from.modules.rewrite.for_redirect()
    }

    fn absorb(&mut self, sub: Self) {
        RequestState::absorb(self, sub);
    }
}

impl RequestState {
    /// What the next request of an internal redirect inherits.
    pub fn for_redirect(&self) -> RequestState {
        RequestState {
            end: self.end,
            cookies: self.cookies.clone(),
            ..RequestState::default()
        }
    }

    /// Become the sub-request mod_dir serves in place of a directory
    /// (Apache's fast redirect copies its notes and handler): a redirect
    /// or `[T=]` scheduled there is this request's now.
    pub fn absorb(&mut self, sub: RequestState) {
        if sub.redirect.is_some() {
            self.redirect = sub.redirect;
        }
        if sub.forced_type.is_some() {
            self.forced_type = sub.forced_type;
        }
        if sub.forced_handler.is_some() {
            self.forced_handler = sub.forced_handler;
        }
    }
}

/// What both contexts do once their rules ran: refuse a rewritten query
/// string with a control character or space (403, `code` in the log line;
/// unless the URL is escaped on its way out), answer a status rule's
/// status, else take the rewritten query.
fn settle_query_and_status(
    ctx: &mut Ctx<'_>,
    args: &Option<String>,
    outcome: Outcome,
    will_escape: bool,
    code: &str,
) -> Result<(), Status> {
    if let Some(a) = args {
        if !will_escape && bad_query(a) {
            fail(
                ctx,
                format!("{code}: Rewritten query string contains control characters or spaces"),
            );
            return Err(403);
        }
    }
    if let Outcome::Status { code, log, reset } = outcome {
        if let Some(l) = log {
            fail(ctx, l);
        }
        // mod_rewrite sets `r->status` back to 200 before it answers.
        ctx.status_reset = reset;
        return Err(answer(ctx, code));
    }
    ctx.args = args.clone();
    Ok(())
}

/// A byte a rewritten query string may not carry unescaped (Apache's
/// `ap_scan_vchar_obstext` stops at it): controls, space, DEL.
fn bad_query(args: &str) -> bool {
    args.bytes().any(|c| c <= 0x20 || c == 0x7f)
}

/// Apache's `subst_prefix_path`: `input` with the directory `dir`
/// replaced by `base` (a `/` added after `base` when it lacks one), or
/// unchanged when `input` is not below `dir`.
pub fn subst_prefix_path(input: &str, dir: &str, base: &str) -> Option<String> {
    let mut len = dir.len();
    if dir.ends_with('/') {
        len -= 1;
    }
    let ib = input.as_bytes();
    if ib.len() > len && ib[..len] == dir.as_bytes()[..len] && ib[len] == b'/' {
        let mut out = base.to_string();
        if !base.is_empty() && !base.ends_with('/') {
            out.push('/');
        }
        out.push_str(&input[len + 1..]);
        Some(out)
    } else {
        None
    }
}

/// Apache's `escape_absolute_uri`: escape the path part of an absolute
/// URL (after `scheme://host/`), LDAP URLs field by field.
fn escape_absolute_uri(uri: &str, scheme_len: usize) -> String {
    let esc = |s: &str| crate::uri::escape_path(&crate::path_text::bytes(s)).into_owned();
    let b = uri.as_bytes();
    if scheme_len == 0 || scheme_len > b.len() {
        return uri.to_string();
    }
    let mut cp = scheme_len;
    if b[cp - 1] == b'/' {
        while cp < b.len() && b[cp] != b'/' {
            cp += 1;
        }
        if cp >= b.len() || cp + 1 >= b.len() {
            return uri.to_string();
        }
        cp += 1;
        if uri.len() >= 4 && uri[..4].eq_ignore_ascii_case("ldap") {
            let rest = &uri[cp..];
            let parts: Vec<&str> = rest.splitn(5, '?').collect();
            let escaped: Vec<String> = parts.iter().map(|p| esc(p)).collect();
            return format!("{}{}", &uri[..cp], escaped.join("?"));
        }
    }
    format!("{}{}", &uri[..cp], esc(&uri[cp..]))
}

/// The request's context prefix and context document root (Apache's
/// `ap_context_prefix`/`ap_context_document_root`): what an `Alias` set,
/// else the empty prefix and the document root.
fn context_info(ctx: &Ctx<'_>) -> (String, String) {
    (
        ctx.context_prefix.clone().unwrap_or_default(),
        ctx.context_document_root
            .clone()
            .unwrap_or_else(|| document_root(ctx)),
    )
}

/// Whether mod_proxy is loaded.
fn proxy_available(ctx: &Ctx<'_>) -> bool {
    ctx.site.env.is_loaded("mod_proxy.c")
}

/// `[P]`: Apache without mod_proxy answers 403; with it, the request
/// becomes a proxy request (`proxy:URL?args`, handler `proxy-server`),
/// which mod_proxy's handler answers (`modules::proxy::http`). The URL's
/// path is escaped the way mod_proxy's canonicaliser does (`%` included,
/// so a decoded `%25` goes on as `%25`), unless the rule has `[NE]`: then
/// it goes as the rule wrote it (`proxy-nocanon`), and one holding a space
/// or a control byte is refused.
fn proxy(ctx: &mut Ctx<'_>, target: &str, code: &str, noescape: bool) -> Result<(), Status> {
    let raw = target.strip_prefix("proxy:").unwrap_or(target);
    ctx.modules.rewrite.proxy = Some(raw.to_string());
    if !proxy_available(ctx) {
        fail(ctx, format!("{code}: attempt to make remote request from mod_rewrite without proxy enabled: {target}"));
        return Err(403);
    }
    let url = if noescape {
        raw.to_string()
    } else {
        let keep = ctx.site.encoded_slashes == crate::uri::EncodedSlashes::NoDecode;
        crate::modules::proxy::http::escape_url_path(raw, false, keep)
    };
    ctx.filename = match &ctx.args {
        Some(a) => format!("proxy:{url}?{a}"),
        None => format!("proxy:{url}"),
    };
    if noescape && ctx.filename.bytes().any(|b| b <= b' ' || b == 0x7f) {
        fail(
            ctx,
            "AH10415: To be forwarded path contains control characters or spaces".to_string(),
        );
        return Err(403);
    }
    ctx.handler = Some(crate::modules::proxy::http::HANDLER.to_string());
    Ok(())
}

/// A status a rule answers with. For 405 and 501 Apache's error page
/// carries `Allow` with the methods the request allowed, and a rule
/// answers before any handler allowed one: only `TRACE` (when enabled).
fn answer(ctx: &mut Ctx<'_>, code: u16) -> Status {
    if (code == 405 || code == 501) && ctx.allow.is_none() {
        ctx.allow_no_method();
    }
    code
}

/// Log why mod_rewrite answers with an error, as Apache does at the
/// moment it decides (module `rewrite`, level `error`).
fn fail(ctx: &mut Ctx<'_>, message: String) {
    ctx.site
        .log
        .error("error", "rewrite", Some(ctx.req.remote()), &message);
}

/// Add header names to the response's `Vary`, each once.
fn merge_vary(ctx: &mut Ctx<'_>, names: &[String]) {
    if names.is_empty() {
        return;
    }
    let pos = ctx
        .headers_out
        .iter()
        .position(|(n, _)| n.eq_ignore_ascii_case("Vary"));
    let mut current: Vec<String> = match pos {
        Some(i) => ctx.headers_out[i]
            .1
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        None => Vec::new(),
    };
    for n in names {
        if !current.iter().any(|c| c.eq_ignore_ascii_case(n)) {
            current.push(n.clone());
        }
    }
    let value = current.join(",");
    match pos {
        Some(i) => ctx.headers_out[i].1 = value,
        None => ctx.headers_out.push(("Vary".into(), value)),
    }
}

/// Run a rule list over the request and keep what every outcome keeps:
/// `[END]`, `[T=]`/`[H=]`. `Vary` names stay in `st` for the caller to add
/// to `headers_out` (which an error response drops, as Apache's does).
fn run(
    ctx: &mut Ctx<'_>,
    rules: &[Arc<Rule>],
    perdir: Option<PerDir<'_>>,
    st: &mut State,
) -> exec::ListResult {
    let tracing = super::trace::enabled();
    let mut host = HostCtx { ctx, tracing };
    let res = exec::apply_list(rules, perdir, st, &mut host, 2 * LIMIT_REQUEST_LINE);
    if st.end {
        ctx.modules.rewrite.end = true;
    }
    if let Some(t) = st.forced_type.take() {
        ctx.modules.rewrite.forced_type = Some(t);
    }
    if let Some(h) = st.forced_handler.take() {
        ctx.modules.rewrite.forced_handler = Some(h);
    }
    if tracing {
        super::trace::line(format!("  result: {:?}", res.outcome));
    }
    res
}

/// Build the `Location` of an external redirect and answer with it.
fn external_redirect(
    ctx: &mut Ctx<'_>,
    st: &State,
    noescape: bool,
    oargs: Option<&str>,
    url: String,
) -> Status {
    let skip = absolute_uri(&url).map(|(n, _)| n).unwrap_or(0);
    let mut location = if noescape {
        url
    } else {
        escape_absolute_uri(&url, skip)
    };
    if let Some(args) = &st.args {
        location.push('?');
        if noescape || oargs == Some(args.as_str()) {
            location.push_str(args);
        } else {
            location.push_str(&crate::uri::escape_path(&crate::path_text::bytes(args)));
        }
    }
    let status = if (300..400).contains(&st.status) {
        st.status
    } else {
        302
    };
    if super::trace::enabled() {
        super::trace::line(format!("  external redirect {status} to {location}"));
    }
    ctx.headers_out.push(("Location".into(), location));
    ctx.status_reset = true;
    status
}

/// Server-context rules (`translate_name`, first). `Ok(true)` when the
/// rules mapped the request to a file name (the document root is then not
/// used); `Ok(false)` to go on with `ctx.uri` (maybe rewritten by `[PT]`).
pub fn translate_name(ctx: &mut Ctx<'_>) -> Result<bool, Status> {
    let enabled = ctx.conf.rewrite.get().is_some_and(|d| d.enabled());
    let any_uri = ctx
        .conf
        .rewrite
        .get()
        .is_some_and(|d| d.opts() & opt::ANYURI != 0);
    if !enabled || ctx.modules.rewrite.end || ctx.site.modules.rewrite.shares_main {
        return Ok(false);
    }
    if !any_uri && (ctx.req.target == "*" || !ctx.uri.starts_with('/')) {
        return Ok(false);
    }
    let site = ctx.site;
    let sconf = &site.modules.rewrite;
    // SCRIPT_URL and SCRIPT_URI, as Apache sets them for every request
    // the server-context engine sees.
    let script_url = if ctx.is_subreq {
        ctx.uri.clone()
    } else {
        ctx.env
            .get("REDIRECT_SCRIPT_URL")
            .map(str::to_string)
            .unwrap_or_else(|| ctx.uri.clone())
    };
    let port = server_port(ctx);
    let scheme = if ctx.req.secure { "https" } else { "http" };
    let default = if ctx.req.secure { 443 } else { 80 };
    let port_text = if port == default {
        String::new()
    } else {
        format!(":{port}")
    };
    let script_uri = format!("{scheme}://{}{port_text}{script_url}", server_name(ctx));
    ctx.env.set("SCRIPT_URL", script_url);
    ctx.env.set("SCRIPT_URI", script_uri);

    if super::trace::enabled() {
        super::trace::line(format!(
            "{}server rules for {}",
            if ctx.is_subreq { "[sub-request] " } else { "" },
            ctx.uri
        ));
    }
    let oargs = ctx.args.clone();
    let mut st = State {
        filename: ctx.uri.clone(),
        args: ctx.args.clone(),
        status: 200,
        ..State::default()
    };
    let res = run(ctx, &sconf.rules, None, &mut st);
    merge_vary(ctx, &st.vary);
    let noescape = match res.outcome {
        Outcome::Unchanged => return Ok(false),
        Outcome::Changed { noescape } => noescape,
        Outcome::Status { .. } => false,
    };
    let skip_absolute = absolute_uri(&st.filename).is_some();
    let will_escape = skip_absolute && !noescape;
    settle_query_and_status(ctx, &st.args, res.outcome, will_escape, "AH10410")?;
    if st.filename.starts_with("proxy:") {
        let target = st.filename.clone();
        return proxy(ctx, &target, "AH00669", noescape).map(|()| true);
    }
    if skip_absolute {
        let url = st.filename.clone();
        return Err(external_redirect(ctx, &st, noescape, oargs.as_deref(), url));
    }
    if let Some(rest) = st.filename.strip_prefix("passthrough:") {
        ctx.uri = rest.to_string();
        return Ok(false);
    }
    if !st.filename.starts_with('/') {
        return Err(400);
    }
    let reduced = st.uri_reduced && sconf.opts() & opt::LEGACY_PREFIX_DOCROOT == 0;
    let lastsub = if sconf.opts() & opt::UNSAFE_PREFIX_STAT != 0 {
        None
    } else {
        res.lastsub.as_deref()
    };
    let filename = if !prefix_stat(ctx, &st.filename, lastsub) || reduced {
        match core_translate(&document_root(ctx), &st.filename) {
            Some(f) => f,
            None => {
                ctx.log_error(
                    "error",
                    "core",
                    &format!("AH00127: Cannot map {} to file", ctx.req.request_line),
                );
                return Err(403);
            }
        }
    } else {
        st.filename.clone()
    };
    if super::trace::enabled() {
        super::trace::line(format!("  mapped to file {filename}"));
    }
    ctx.filename = filename;
    ctx.path_info = st.path_info;
    Ok(true)
}

/// Apache's `prefix_stat`: whether a server-context result is a file
/// system path (its first segment exists, and the rule wrote that segment
/// literally or the path is below the document root) rather than a
/// URL-path to put below the document root.
fn prefix_stat(ctx: &Ctx<'_>, path: &str, lastsub: Option<&Rule>) -> bool {
    let cur = path.trim_start_matches('/');
    let seg = match cur.find('/') {
        Some(i) => &cur[..i],
        None => cur,
    };
    if seg == ".." {
        return false;
    }
    let statpath = format!("/{seg}");
    if crate::fs::stat(&statpath).is_err() {
        return false;
    }
    let Some(rule) = lastsub else {
        return true;
    };
    if rule.flags & flag::UNSAFE_PREFIX_STAT != 0 {
        return true;
    }
    let root = ctx.document_root();
    rule.output.starts_with(&statpath) || path.starts_with(root.as_ref())
}

/// Apache's `ap_core_translate` for a rewritten URL-path: below the
/// document root, `.` and `..` resolved; `None` when it would climb out.
fn core_translate(root: &str, uri: &str) -> Option<String> {
    // apr_filepath_merge's PATH_MAX bound, as for a request's own path.
    if root.len() + uri.trim_start_matches('/').len() + 4 > 4096 {
        return None;
    }
    let mut out: Vec<&str> = Vec::new();
    for seg in uri.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                out.pop()?;
            }
            s => out.push(s),
        }
    }
    let mut f = root.trim_end_matches('/').to_string();
    for s in &out {
        f.push('/');
        f.push_str(s);
    }
    if out.is_empty() || uri.ends_with('/') {
        f.push('/');
    }
    Some(f)
}

/// Per-directory rules (first of the fixups).
pub fn fixup(ctx: &mut Ctx<'_>) -> Result<(), Status> {
    let Some(dconf) = ctx.conf.rewrite.conf.clone() else {
        return Ok(());
    };
    if !dconf.enabled() {
        return Ok(());
    }
    let Some(dir) = dconf.directory.as_deref() else {
        return Ok(());
    };
    let opts = dconf.opts();
    if opts & opt::NOSLASH == 0 {
        let l = dir.len() - 1;
        if dir.ends_with('/') && ctx.filename.len() == l && ctx.filename == dir[..l] {
            return Ok(());
        }
    }
    if ctx.modules.rewrite.end {
        return Ok(());
    }
    if ctx.conf.core.opts() & (OPT_SYM_LINKS | OPT_SYM_OWNER) == 0 {
        let msg = format!("AH00670: Options FollowSymLinks and SymLinksIfOwnerMatch are both off, so the RewriteRule directive is also forbidden due to its similar ability to circumvent directory restrictions : {}", ctx.filename);
        fail(ctx, msg);
        return Err(403);
    }
    if super::trace::enabled() {
        super::trace::line(format!(
            "{}directory rules of {dir} for {}{}",
            if ctx.is_subreq { "[sub-request] " } else { "" },
            ctx.filename,
            ctx.path_info
        ));
    }
    let mut st = State {
        filename: ctx.filename.clone(),
        path_info: ctx.path_info.clone(),
        args: ctx.args.clone(),
        status: 200,
        ..State::default()
    };
    let perdir = PerDir {
        directory: dir,
        base: dconf.base_url.as_deref(),
    };
    let res = run(ctx, &dconf.rules, Some(perdir), &mut st);
    merge_vary(ctx, &st.vary);
    let noescape = match res.outcome {
        Outcome::Unchanged => return Ok(()),
        Outcome::Changed { noescape } => noescape,
        Outcome::Status { .. } => false,
    };
    // The rules read the request but never change it: its file name and
    // query are still the ones they started from.
    let oargs = ctx.args.clone();
    ctx.path_info = std::mem::take(&mut st.path_info);
    let skip_absolute = absolute_uri(&st.filename).map(|(n, _)| n);
    let will_escape = skip_absolute.is_some() && !noescape;
    settle_query_and_status(ctx, &st.args, res.outcome, will_escape, "AH10411")?;
    if st.filename.starts_with("proxy:") {
        let target = st.filename.clone();
        return proxy(ctx, &target, "AH10160", noescape);
    }
    if let Some(skip) = skip_absolute {
        let mut url = st.filename.clone();
        if let Some(base) = dconf.base_url.as_deref() {
            // The path after `scheme://host/` may still hold the directory:
            // put the base URL in its place.
            if let Some(slash) = url[skip..].find('/') {
                let after = skip + slash + 1;
                if after < url.len() {
                    let dir_rel = dir.strip_prefix('/').unwrap_or(dir);
                    if let Some(replaced) = subst_prefix_path(&url[after..], dir_rel, &base[1..]) {
                        url = format!("{}{replaced}", &url[..after]);
                    }
                }
            }
        }
        return Err(external_redirect(ctx, &st, noescape, oargs.as_deref(), url));
    }
    let mut filename = st.filename.clone();
    if let Some(rest) = filename.strip_prefix("passthrough:") {
        filename = rest.to_string();
    }
    if !filename.starts_with('/') {
        return Err(400);
    }
    if filename == ctx.filename {
        if super::trace::enabled() {
            super::trace::line(format!(
                "  initial URL equal rewritten URL: {filename} [IGNORING REWRITE]"
            ));
        }
        return Ok(());
    }
    let mut changed = false;
    if let Some(base) = dconf.base_url.as_deref() {
        if let Some(f) = subst_prefix_path(&filename, dir, base) {
            filename = f;
            changed = true;
        }
    } else {
        let root = document_root(ctx);
        let l = if root == "/" { 0 } else { root.len() };
        if filename.starts_with(root.as_str()) && filename.as_bytes().get(l) == Some(&b'/') {
            filename = filename[l..].to_string();
            changed = true;
        }
    }
    // A result that is neither below the directory nor below the document
    // root: an Alias context (prefix, directory) maps it back. Without an
    // Alias the context root is the document root, so nothing changes.
    if !changed && opts & opt::IGNORE_CONTEXT_INFO == 0 {
        let (prefix, croot) = context_info(ctx);
        if let Some(f) = subst_prefix_path(&filename, &croot, &prefix) {
            filename = f;
        }
    }
    if super::trace::enabled() {
        super::trace::line(format!("  internal redirect scheduled to {filename}"));
    }
    ctx.modules.rewrite.redirect = Some(filename);
    ctx.handler = Some(REDIRECT_HANDLER.to_string());
    Ok(())
}

/// `[T=]`/`[H=]` remembered by the rules (last of the fixups).
pub fn force_type_handler(ctx: &mut Ctx<'_>) -> Result<(), Status> {
    if let Some(t) = ctx.modules.rewrite.forced_type.clone() {
        ctx.content_type = Some(t);
    }
    if let Some(h) = ctx.modules.rewrite.forced_handler.clone() {
        // Apache sets the handler over the scheduled redirect-handler: the
        // internal redirect never happens, and the named handler is left
        // with the `redirect:` file name (a 404 or 403, not the target).
        if let Some(target) = ctx.modules.rewrite.redirect.take() {
            ctx.filename = format!("redirect:{target}");
        }
        ctx.handler = Some(h);
    }
    Ok(())
}

/// The internal redirect a directory rule scheduled (Apache's
/// `redirect-handler`): a new request for the new URL, with the
/// environment renamed `REDIRECT_*`, answered in place of this one.
pub fn redirect_handler(ctx: &mut Ctx<'_>) -> Option<Response> {
    Some(match redirect_next(ctx)? {
        Ok((mut new, phases)) => crate::request::respond(&mut new, phases),
        Err(resp) => resp,
    })
}

/// [`redirect_handler`] as a handler hook.
pub fn handler(ctx: &mut Ctx<'_>) -> Option<Result<Response, Status>> {
    redirect_handler(ctx).map(Ok)
}

/// [`redirect_handler`] up to the handler: the new request after its
/// phases (for a caller that may hand it to a backend), or the answer
/// when it cannot be made.
#[allow(clippy::type_complexity)]
pub fn redirect_next<'a>(
    ctx: &mut Ctx<'a>,
) -> Option<Result<(Ctx<'a>, Result<(), Status>), Response>> {
    let target = ctx.modules.rewrite.redirect.take()?;
    // The handler asks for "filename?args".
    let url = match &ctx.args {
        Some(a) => format!("{target}?{a}"),
        None => target,
    };
    let vary = ctx
        .headers_out
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("Vary"))
        .map(|(_, v)| v.clone());
    let from = ctx.uri.clone();
    let next = ctx.redirect_to_url(&url, |new| {
        if let Some(v) = vary {
            new.headers_out.push(("Vary".into(), v));
        }
    });
    if super::trace::enabled() {
        if let Ok((new, phases)) = &next {
            super::trace::line(format!(
                "internal redirect {from} -> {}{}",
                new.uri,
                new.args
                    .as_deref()
                    .map(|a| format!("?{a}"))
                    .unwrap_or_default()
            ));
            super::trace::line(format!(
                "  {} -> file {}{} ({})",
                new.uri,
                new.filename,
                new.path_info,
                match phases {
                    Ok(()) => "phases passed".to_string(),
                    Err(s) => format!("status {s}"),
                }
            ));
        } else {
            super::trace::line(format!(
                "internal redirect {from} -> {url} (not made: answered {})",
                next.as_ref().err().map_or(0, |r| r.status)
            ));
        }
    }
    Some(next)
}
