//! Which output filters a response goes through: mod_filter's smart
//! filters (`FilterDeclare`, `FilterProvider`, `FilterChain`,
//! `FilterProtocol`, and `AddOutputFilterByType`, which declares one named
//! `BYTYPE:<provider>`), the core's `SetOutputFilter`, and mod_mime's
//! `AddOutputFilter` (recorded by [`super::mime`]). The content filters
//! htaccel has are mod_deflate's `DEFLATE` and mod_brotli's
//! `BROTLI_COMPRESS` ([`Coding`]); other filters Apache's loaded modules
//! provide are refused loudly, unknown names are skipped with Apache's
//! error-log line. They run in Apache's order: smart filters declared
//! without a type (`RESOURCE`) first, then mod_mime's, `SetOutputFilter`'s
//! and the chain's `CONTENT_SET` ones as they were inserted; the first
//! that compresses leaves the others an encoded response, which they pass.
//!
//! A smart filter keeps mod_filter's quirks (see [`directives`] for how
//! sections declare them): it acts only on 200 responses (unless
//! `filter-errordocs` is set); its providers are tried in order once the
//! handler made the response's headers, by media type without parameters
//! or by expression, the first that matches running; its protocol flags
//! edit the headers when a provider matches, and may hold `Range` back
//! from the request until one does.
//!
//! Apache applies byte ranges after the content filters, to the
//! compressed body. When `DEFLATE` may run, the default handler therefore
//! leaves `Range` alone ([`insert`]) and the ranges are cut after the
//! filters ([`deferred_ranges`]).

pub mod directives;

pub use directives::{FilterDir, CORE_MODULE, MODULE};

use crate::expr::{ExprContext, RequestExpr, Var};
use crate::http::conditional::Clock;
use crate::http::range::{byterange_filter, RangeOutcome};
use crate::http::{Body, Response};
use crate::request::{Ctx, Status};
use directives::{Dispatch, Place, Proto, SmartFilter};
use std::borrow::Cow;
use std::sync::Arc;

/// A content filter htaccel has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coding {
    /// mod_deflate's `DEFLATE`.
    Deflate,
    /// mod_brotli's `BROTLI_COMPRESS`.
    Brotli,
    /// mod_substitute's `SUBSTITUTE`.
    Substitute,
}

impl Coding {
    /// Run the filter on a response; a filter that fails the answer says
    /// with which status.
    fn run(self, ctx: &mut Ctx<'_>, resp: &mut Response) -> Result<(), Status> {
        match self {
            Coding::Deflate => crate::modules::deflate::compress(ctx, resp),
            Coding::Brotli => crate::modules::brotli::compress(ctx, resp),
            Coding::Substitute => return crate::modules::substitute::substitute(ctx, resp),
        }
        Ok(())
    }

    /// Where the filter sits among the content filters when inserted by
    /// name (`AddOutputFilter`, `SetOutputFilter`): the type its module
    /// registered it with.
    fn place(self) -> Place {
        match self {
            Coding::Deflate | Coding::Brotli => Place::ContentSet,
            Coding::Substitute => Place::Resource,
        }
    }
}

/// A filter as htaccel knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Known {
    Coding(Coding),
    /// Apache has it with the modules loaded; htaccel does not.
    Unsupported,
    Unknown,
}

/// The filter registered under `name` (any case) by the modules
/// `is_loaded` says are loaded.
fn lookup(name: &str, is_loaded: impl Fn(&str) -> bool) -> Known {
    let named = |n: &str| name.eq_ignore_ascii_case(n);
    if named("DEFLATE") && is_loaded("deflate_module") {
        Known::Coding(Coding::Deflate)
    } else if named("BROTLI_COMPRESS") && is_loaded("brotli_module") {
        Known::Coding(Coding::Brotli)
    } else if named("SUBSTITUTE") && is_loaded("substitute_module") {
        Known::Coding(Coding::Substitute)
    } else if named("INFLATE") && is_loaded("deflate_module") {
        Known::Unsupported
    } else {
        Known::Unknown
    }
}

/// mod_mime's `AddOutputFilter` names for the file's extensions, in
/// order, handed to `each` (no list is built: most files name none).
fn for_each_mime_filter(ctx: &Ctx<'_>, mut each: impl FnMut(&str)) {
    let extensions = &ctx.conf.mime.extensions;
    if extensions.is_empty() {
        return;
    }
    let basename = ctx.filename.rsplit('/').next().unwrap_or("");
    for ext in basename.split('.').skip(1).filter(|e| !e.is_empty()) {
        if let Some(f) =
            crate::modules::mime::ext_get(extensions, ext).and_then(|e| e.output_filters.as_ref())
        {
            f.split(';')
                .take_while(|n| !n.is_empty())
                .for_each(&mut each);
        }
    }
}

/// The content filters attached to a request.
#[derive(Debug, Default)]
struct Attached {
    /// Inserted directly (`AddOutputFilter`, then `SetOutputFilter`).
    direct: Vec<Coding>,
    /// The smart filters of the chain, in its order.
    smart: Vec<Arc<SmartFilter>>,
    /// mod_include's `INCLUDES` ([`crate::modules::include`]).
    includes: bool,
}

impl Attached {
    fn any(&self) -> bool {
        !self.direct.is_empty() || !self.smart.is_empty()
    }

    /// `filter_insert` keeps `Range` from the request when the first of
    /// the chain's filters that may cut or change the length says so; a
    /// provider that matches gives it back.
    fn holds_range(&self) -> bool {
        self.smart
            .iter()
            .any(|f| f.proto.has(Proto::NO_BYTERANGE) || f.proto.has(Proto::CHANGE_LENGTH))
    }
}

fn attached(ctx: &Ctx<'_>, log_unknown: bool) -> Result<Attached, String> {
    let f = &ctx.conf.filter;
    let mut a = Attached::default();
    let mut refused = None;
    let mut consider = |name: &str, from_mime: bool| {
        if refused.is_some() {
            return;
        }
        if crate::modules::include::is_filter(ctx, name) {
            a.includes = true;
            return;
        }
        match lookup(name, |m| ctx.site.env.is_loaded(m)) {
            Known::Coding(c) => a.direct.push(c),
            Known::Unsupported if from_mime => {
                refused = Some(format!(
                    "AddOutputFilter {name}: the {name} filter is not supported by htaccel yet"
                ))
            }
            _ => {
                if log_unknown {
                    ctx.log_error(
                        "error",
                        "core",
                        &format!("AH00082: an unknown filter was not added: {name}"),
                    );
                }
            }
        }
    };
    for_each_mime_filter(ctx, |n| consider(n, true));
    for n in f.set_output.iter().flatten() {
        consider(n, false);
    }
    if let Some(msg) = refused {
        return Err(msg);
    }
    for fname in f.chain_names() {
        match f.declared.iter().find(|d| d.fname == fname) {
            Some(d) => a.smart.push(d.clone()),
            None if log_unknown => ctx.log_error(
                "warn",
                "filter",
                &format!("AH01380: Unknown filter {fname} not added"),
            ),
            None => {}
        }
    }
    Ok(a)
}

/// Whether mod_include's `INCLUDES` filter is among the filters the
/// request's configuration attaches.
pub fn includes_attached(ctx: &Ctx<'_>) -> bool {
    attached(ctx, false).is_ok_and(|a| a.includes)
}

/// Before the handler (`insert_filter`): refuse filters htaccel lacks, and
/// keep `Range` away from the handler when `DEFLATE` may change the body.
pub fn insert(ctx: &mut Ctx<'_>) -> Result<(), Status> {
    let a = match attached(ctx, true) {
        Ok(a) => a,
        Err(msg) => {
            if ctx.reason.is_none() {
                ctx.reason = Some(crate::request::Reason::new("error", "filter", msg));
            }
            return Err(500);
        }
    };
    ctx.includes_filter |= a.includes;
    if a.any() && ctx.headers_in.contains("Range") {
        ctx.range_deferred = Some(ctx.headers_in.clone().into_owned());
        ctx.headers_in.to_mut().remove("Range");
    }
    Ok(())
}

/// The response as a provider's condition sees it: the handler's content
/// type and headers (mod_headers' edits come later).
struct Dispatching<'r, 'c> {
    base: RequestExpr<'r, 'c>,
    resp: &'r Response,
}

impl ExprContext for Dispatching<'_, '_> {
    fn ssl_var(&self, name: &str) -> Option<String> {
        self.base.ssl_var(name)
    }

    fn var(&self, var: Var) -> Option<Cow<'_, [u8]>> {
        if var == Var::ContentType {
            if let Some(t) = self.resp.header("Content-Type") {
                return Some(Cow::Borrowed(t.as_bytes()));
            }
        }
        self.base.var(var)
    }

    fn request_header(&self, name: &str) -> Option<Cow<'_, [u8]>> {
        self.base.request_header(name)
    }

    fn response_header(&self, name: &str) -> Option<Cow<'_, [u8]>> {
        // The content type, encoding and languages are fields of the
        // request until the header filter writes them out (a proxied
        // answer's are headers already); `Accept-Ranges` comes with the
        // byte-range filter, after every content filter.
        let later = ["Content-Type", "Content-Encoding", "Content-Language"]
            .iter()
            .any(|n| !self.resp.entity_in_headers && n.eq_ignore_ascii_case(name))
            || name.eq_ignore_ascii_case("Accept-Ranges");
        if later {
            return self.base.response_header(name);
        }
        match self.resp.header(name) {
            Some(v) => Some(Cow::Borrowed(v.as_bytes())),
            None => self.base.response_header(name),
        }
    }

    fn env(&self, name: &str) -> Option<Cow<'_, [u8]>> {
        self.base.env(name)
    }

    fn note(&self, name: &str) -> Option<Cow<'_, [u8]>> {
        self.base.note(name)
    }

    fn remote_ip(&self) -> Option<std::net::IpAddr> {
        self.base.remote_ip()
    }

    fn url_accessible(&self, url: &str) -> bool {
        self.base.url_accessible(url)
    }

    fn file_accessible(&self, path: &str) -> bool {
        self.base.file_accessible(path)
    }
}

/// Whether a proxied response forbids its transformation.
fn no_transform(resp: &Response) -> bool {
    resp.header("Cache-Control")
        .is_some_and(|v| v.to_ascii_lowercase().contains("no-transform"))
}

/// `filter_harness` and `filter_lookup`: the content filter of the first
/// of `filter`'s providers that takes the response. An expression's
/// request headers go into `Vary` whether it matched or not; one that
/// fails to evaluate does not match. On a proxied request
/// (`r->proxyreq`) the protocol flags may turn the filter, or a provider
/// (its content filter's own flags), away.
fn provider_matches(ctx: &Ctx<'_>, resp: &mut Response, filter: &SmartFilter) -> Option<Coding> {
    let proxied = ctx.filename.starts_with("proxy:");
    if proxied
        && (filter.proto.has(Proto::NO_PROXY)
            || (filter.proto.has(Proto::TRANSFORM) && no_transform(resp)))
    {
        return None;
    }
    for provider in &filter.providers {
        let matched = match &provider.dispatch {
            Dispatch::Types(types) => type_matches(types, resp.header("Content-Type")),
            Dispatch::Expr(expr) => {
                let outcome = expr.eval(&Dispatching {
                    base: RequestExpr::with_status(ctx, resp.status),
                    resp,
                });
                match outcome.value {
                    Ok(yes) => {
                        if let Some(vary) = outcome.vary {
                            crate::modules::core::if_section::merge_vary(&mut resp.headers, &vary);
                        }
                        yes
                    }
                    Err(err) => {
                        ctx.log_error(
                            "error",
                            "filter",
                            &format!("AH01379: Error evaluating filter dispatch condition: {err}"),
                        );
                        false
                    }
                }
            }
        };
        if !matched {
            continue;
        }
        let flags = ctx.conf.filter.provider_flags(provider.coding);
        if proxied {
            if flags.has(Proto::NO_PROXY) {
                continue;
            }
            if flags.has(Proto::TRANSFORM) {
                if no_transform(resp) {
                    continue;
                }
                let host = crate::engine::request_host(ctx.req).map(|(h, _)| h);
                resp.add_header(
                    "Warning",
                    format!(
                        "214 {} Transformation applied",
                        host.as_deref().unwrap_or("(null)")
                    ),
                );
            }
        }
        return Some(provider.coding);
    }
    None
}

/// What a matched provider's protocol flags (`DEFLATE`'s own, set by
/// `FilterProtocol NAME DEFLATE …`) change in the headers before it runs.
/// Returns whether the ranges held back are given back.
fn apply_provider_flags(resp: &mut Response, proto: Proto) -> bool {
    if proto.has(Proto::CHANGE) {
        resp.remove_header("Content-MD5");
        resp.remove_header("ETag");
        if proto.has(Proto::CHANGE_LENGTH) {
            resp.remove_header("Content-Length");
        }
    }
    if proto.has(Proto::NO_CACHE) {
        resp.remove_header("Last-Modified");
        resp.add_header("Cache-Control", "no-cache");
    }
    if proto.has(Proto::NO_BYTERANGE) {
        resp.set_header("Accept-Ranges", "none");
        return false;
    }
    true
}

/// Whether a `BYTYPE:` filter's types select this response.
fn type_matches(types: &[String], content_type: Option<&str>) -> bool {
    let Some(ct) = content_type else {
        return false;
    };
    let len = ct.find([';', ' ', '\t']).unwrap_or(ct.len());
    types.iter().any(|t| t == &ct[..len])
}

/// The file body of a `HEAD` response, which the default handler dropped:
/// Apache's filters still see it (to learn the compressed length, to cut
/// ranges).
fn head_body(ctx: &Ctx<'_>, resp: &Response) -> Option<Body> {
    crate::answer_memo::note_volatile();
    let len: u64 = resp.header("Content-Length")?.parse().ok()?;
    let (file, meta) = crate::fs::open_regular(std::path::Path::new(&ctx.filename)).ok()?;
    (meta.len() == len).then(|| Body::file(Arc::new(file), 0, len))
}

/// Whether a content filter (`DEFLATE`) may need the whole body: a
/// backend's answer is then collected before the output filters run.
pub fn may_need_body(ctx: &Ctx<'_>) -> bool {
    attached(ctx, false).is_ok_and(|a| a.any())
}

/// The content filters on a response that came from a handler, in
/// Apache's order: the direct ones, and the smart filters whose provider
/// takes the response.
pub fn content_filters(ctx: &mut Ctx<'_>, resp: &mut Response) -> Result<(), Status> {
    let Ok(a) = attached(ctx, false) else {
        return Ok(());
    };
    if !a.any() && ctx.range_deferred.is_none() {
        // Most answers: no content filter, no ranges held back.
        return Ok(());
    }
    // Smart filters act on 200 answers (or with `filter-errordocs`).
    let smart_on = resp.status == 200 || ctx.env.contains("filter-errordocs");
    let mut matched = Vec::new();
    if smart_on {
        for filter in &a.smart {
            if let Some(coding) = provider_matches(ctx, resp, filter) {
                matched.push((filter.place, coding));
            }
        }
    }
    // Apache's chain: filters in the order they were inserted (those named
    // by `AddOutputFilter`, `SetOutputFilter`, then the smart ones), each
    // after every filter of its type or an earlier one.
    let mut order: Vec<(Place, Coding)> = a.direct.iter().map(|c| (c.place(), *c)).collect();
    order.extend(&matched);
    order.sort_by_key(|(place, _)| *place);
    let matched: Vec<Coding> = matched.iter().map(|(_, c)| *c).collect();
    let order: Vec<Coding> = order.into_iter().map(|(_, c)| c).collect();
    let head = ctx.method == "HEAD";
    let restore = head
        && resp.status == 200
        && resp.body.is_empty()
        && (!order.is_empty() || ctx.range_deferred.is_some());
    let restored = restore
        && match head_body(ctx, resp) {
            Some(b) => {
                resp.body = b;
                true
            }
            None => false,
        };
    // Each matching provider's flags, once the length was read above.
    let mut ranges_back = false;
    for coding in matched {
        ranges_back |= apply_provider_flags(resp, ctx.conf.filter.provider_flags(coding));
    }
    if a.holds_range() && !ranges_back {
        // `Range` was taken from the request and never given back.
        ctx.range_deferred = None;
    }
    for coding in order {
        coding.run(ctx, resp)?;
    }
    if restored && ctx.range_deferred.is_none() {
        resp.body = Body::empty();
    }
    Ok(())
}

/// The byte-range filter for a response whose ranges were left for after
/// the content filters; a `HEAD` body goes only now. Ranges that cannot be
/// satisfied are `send_416`'s error bucket: `Err(416)`.
pub fn deferred_ranges(ctx: &mut Ctx<'_>, resp: &mut Response) -> Result<(), Status> {
    let Some(headers) = ctx.range_deferred.take() else {
        return Ok(());
    };
    // A body Apache began to send before its end is never cut.
    let streamed = resp.header("Transfer-Encoding").is_some();
    let now = ctx.engine.request_time_us().div_euclid(1_000_000);
    let mtime = ctx.finfo.map(|f| f.mtime_us.div_euclid(1_000_000));
    let clock = Clock {
        mtime,
        request_time: now,
        now,
    };
    if streamed {
        return Ok(());
    }
    let whole = std::mem::replace(resp, Response::new(resp.status));
    let boundary = ctx.engine.boundary();
    *resp = match byterange_filter(
        &headers,
        whole,
        clock,
        &ctx.conf.core.range_limits(),
        &boundary,
    ) {
        RangeOutcome::Full(r) | RangeOutcome::Partial(r) => r,
        RangeOutcome::NotSatisfiable => return Err(416),
    };
    if ctx.method == "HEAD" && !resp.body.is_empty() {
        if resp.header("Content-Length").is_none() {
            resp.set_header("Content-Length", resp.body.len().to_string());
        }
        resp.body = Body::empty();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_compare_without_parameters() {
        let t = vec!["text/html".to_string()];
        assert!(type_matches(&t, Some("text/html")));
        assert!(type_matches(&t, Some("text/html; charset=UTF-8")));
        assert!(type_matches(&t, Some("text/html;charset=x")));
        assert!(!type_matches(&t, Some("Text/HTML")));
        assert!(!type_matches(&t, Some("text/htmlx")));
        assert!(!type_matches(&t, None));
    }

    #[test]
    fn filter_names() {
        let both = |_: &str| true;
        let deflate = |m: &str| m == "deflate_module";
        assert_eq!(lookup("deflate", both), Known::Coding(Coding::Deflate));
        assert_eq!(lookup("DEFLATE", |_: &str| false), Known::Unknown);
        assert_eq!(lookup("INFLATE", both), Known::Unsupported);
        assert_eq!(
            lookup("brotli_compress", both),
            Known::Coding(Coding::Brotli)
        );
        assert_eq!(lookup("BROTLI_COMPRESS", deflate), Known::Unknown);
    }
}
