//! MultiViews (`handle_multi`, `read_types_multi`, `do_negotiation`):
//! for a file that does not exist, the files `NAME.*` beside it are the
//! variants. Each is looked up as a sub-request (so access control,
//! `<Files>` and mod_mime apply to it as to a request for it), kept only
//! when it is a regular file whose every unrecognised name part matches
//! the request's name in order (mod_mime's exceptions list), sorted by
//! name, and the best one becomes the request (a fast redirect).
//!
//! The directory is read on every such request and no cache holds its
//! listing, so the answer is never kept by the answer memo.

use super::accept::{self, CGI_MAGIC_TYPE};
use super::select::{self, NegState, Variant};
use crate::fs::Kind;
use crate::modules::core::options::OPT_MULTI;
use crate::request::{Ctx, Status};
use std::os::unix::ffi::OsStrExt;

/// The request's parts a variant is found from.
struct Target {
    /// `r->filename`'s directory, with its trailing slash.
    dir: String,
    /// `r->filename`'s last part: variants are `base.*`.
    base: String,
}

fn target(ctx: &Ctx<'_>) -> Option<Target> {
    if !ctx.filename.starts_with('/') {
        return None;
    }
    let slash = ctx.filename.rfind('/')?;
    Some(Target {
        dir: ctx.filename[..=slash].to_string(),
        base: ctx.filename[slash + 1..].to_string(),
    })
}

/// The URI of a variant's sub-request: the request's directory (without
/// its path info) with the file's name, and the path info again.
fn variant_uri(ctx: &Ctx<'_>, name: &str) -> String {
    let uri = if ctx.path_info.is_empty() {
        &ctx.uri[..]
    } else {
        ctx.uri.strip_suffix(&ctx.path_info[..]).unwrap_or(&ctx.uri)
    };
    let dir = match uri.rfind('/') {
        Some(i) => &uri[..=i],
        None => "/",
    };
    format!("{dir}{name}{}", ctx.path_info)
}

/// The URI of a file named relative to the request's directory, without
/// the request's path info.
fn variant_uri_plain(ctx: &Ctx<'_>, name: &str) -> String {
    let uri = if ctx.path_info.is_empty() {
        &ctx.uri[..]
    } else {
        ctx.uri.strip_suffix(&ctx.path_info[..]).unwrap_or(&ctx.uri)
    };
    let dir = match uri.rfind('/') {
        Some(i) => &uri[..=i],
        None => "/",
    };
    format!("{dir}{name}")
}

/// Whether each unrecognised part of a file's name (after its base)
/// matches a part of the requested name, in order.
fn exceptions_match(base: &str, exceptions: &[String]) -> bool {
    let mut left = exceptions.iter().peekable();
    for seg in base.split('.') {
        match left.peek() {
            None => break,
            Some(e) if e.as_str() == seg => {
                left.next();
            }
            Some(_) => {}
        }
    }
    left.peek().is_none()
}

/// The type checker's first hook. `Ok(true)`: a variant was chosen and the
/// request is now that variant; `Ok(false)`: not a MultiViews request, or
/// no file matched.
pub fn handle_multi(ctx: &mut Ctx<'_>) -> Result<bool, Status> {
    if ctx.finfo.is_some()
        || ctx.conf.core.opts() & OPT_MULTI == 0
        || ctx.filename.starts_with("proxy:")
        || !super::loaded(ctx)
    {
        return Ok(false);
    }
    let Some(target) = target(ctx) else {
        return Ok(false);
    };
    // A listing nobody watches for this request: never kept.
    crate::answer_memo::note_volatile();
    let mut neg = parse_accept_headers(ctx);
    let found = read_types_multi(ctx, &target)?;
    let prefer_scripts = !is_get(ctx) || ctx.args.is_some() || !ctx.path_info.is_empty();
    let sub = match found {
        Found::Files(mut vars, mut subs) => {
            if vars.is_empty() {
                return Ok(false);
            }
            let best = do_negotiation(ctx, &mut neg, &mut vars, prefer_scripts, None)?;
            subs.swap_remove(best)
        }
        Found::Map(map, mut vars) => {
            if vars.is_empty() {
                return Ok(false);
            }
            let best = do_negotiation(ctx, &mut neg, &mut vars, prefer_scripts, Some(&map))?;
            // A map's variant is looked up now (`ap_sub_req_lookup_file`).
            let (sub, status) = ctx.sub_request_path(
                &variant_uri_plain(ctx, &vars[best].file_name),
                ctx.args.clone(),
            );
            status?;
            sub
        }
    };
    ctx.fast_redirect(sub);
    Ok(true)
}

/// GET and HEAD (Apache's `M_GET`).
fn is_get(ctx: &Ctx<'_>) -> bool {
    ctx.method == "GET" || ctx.method == "HEAD"
}

pub(super) fn parse_accept_headers(ctx: &Ctx<'_>) -> NegState {
    let h = &ctx.headers_in;
    let line = |name: &str| accept::parse_line(h.get(name).map(|v| &v[..]));
    let accepts = line("Accept");
    let accept_q = accepts
        .as_ref()
        .is_some_and(|a| a.iter().any(|r| r.quality < 1.0));
    let conf = &ctx.conf.negotiation;
    NegState {
        force_priority: conf.force_priority,
        language_priority: conf
            .language_priority
            .as_deref()
            .cloned()
            .unwrap_or_default(),
        accept_q,
        accepts,
        accept_encodings: line("Accept-Encoding"),
        accept_langs: line("Accept-Language"),
        accept_charsets: line("Accept-Charset"),
        ..Default::default()
    }
}

/// The variants: files, each with its sub-request, or a type map's records.
enum Found<'a> {
    Files(Vec<Variant>, Vec<Ctx<'a>>),
    Map(super::typemap::Map, Vec<Variant>),
}

/// `read_types_multi`: the variants, each with its sub-request, sorted.
fn read_types_multi<'a>(ctx: &mut Ctx<'a>, t: &Target) -> Result<Found<'a>, Status> {
    let dir_path = crate::path_text::os_path(std::path::Path::new(&t.dir)).into_owned();
    let entries = match std::fs::read_dir(&dir_path) {
        Ok(rd) => rd,
        Err(e) => {
            ctx.log_error(
                "error",
                "negotiation",
                &format!(
                    "({}){}: AH00686: cannot read directory for multi: {}",
                    e.raw_os_error().unwrap_or(0),
                    e,
                    t.dir
                ),
            );
            return Err(403);
        }
    };
    let base = crate::path_text::bytes(&t.base).into_owned();
    let mut anymatch = false;
    let mut found: Vec<(Variant, Ctx<'a>)> = Vec::new();
    for entry in entries.flatten() {
        let os_name = entry.file_name();
        let raw = os_name.as_bytes();
        if !raw.starts_with(&base) || raw.get(base.len()) != Some(&b'.') {
            continue;
        }
        if entry.file_type().is_ok_and(|k| k.is_dir()) {
            continue;
        }
        anymatch = true;
        let name = crate::path_text::from_slice(raw).into_owned();
        let (sub, status) = ctx.sub_request_path(&variant_uri(ctx, &name), ctx.args.clone());
        if sub.finfo.map(|f| f.kind) != Some(Kind::File) {
            continue;
        }
        let content_type = match (&sub.content_type, &sub.handler) {
            (None, Some(_)) => Some(CGI_MAGIC_TYPE.to_string()),
            (t, _) => t.clone(),
        };
        let Some(exceptions) =
            crate::modules::mime::exceptions(&name, &sub.conf.mime, &ctx.engine.modules.mime)
        else {
            continue;
        };
        if !exceptions_match(&t.base, &exceptions) {
            continue;
        }
        let Some(content_type) = content_type.filter(|_| status.is_ok()) else {
            continue;
        };
        if content_type == super::MAP_FILE_MAGIC_TYPE || sub.handler.as_deref() == Some("type-map")
        {
            // A type map among the names: its records are the variants.
            let (map, vars) = super::typemap::read_for(ctx, &sub)?;
            return Ok(Found::Map(map, vars));
        }
        let ct = accept::get_entry(&mut content_type.as_bytes());
        let mut v = Variant::new(name, &ct);
        if !sub.encodings.is_empty() {
            v.content_encoding = Some(sub.encodings.join(", "));
        }
        v.languages = sub.languages.clone();
        v.bytes = sub.finfo.map_or(-1, |f| f.size as i64);
        v.has_handler = sub.handler.is_some();
        found.push((v, sub));
    }
    if anymatch && found.is_empty() {
        ctx.log_error(
            "error",
            "negotiation",
            &format!(
                "AH00687: Negotiation: discovered file(s) matching request: {} (None could be negotiated).",
                ctx.filename
            ),
        );
        return Err(404);
    }
    // The variant list's tag: the directory's (the request's own file does
    // not exist), under the request's configuration. Apache sets it even
    // when no name matched, and it follows the request through internal
    // and fast redirects (a rewrite to a front page, a `FallbackResource`).
    let etag_bits = crate::modules::core::server_directives::ETagSet::effective(ctx.conf.core.etag);
    if etag_bits & crate::http::etag::ETAG_NONE == 0 {
        if let Ok(d) = crate::fs::stat(&t.dir) {
            let own = crate::http::etag::vlist_tag(d.mtime_us, crate::engine::clock_us());
            // A list tag the request already carried (an internal redirect
            // from another MultiViews request) is folded into the new one,
            // as `ap_make_etag` folds it into every tag.
            ctx.vlist_validator = Some(match &ctx.vlist_validator {
                Some(prev) => crate::http::etag::with_vlist(&own, prev),
                None => own,
            });
        }
    }
    found.sort_by(|(a, _), (b, _)| {
        b.source_quality
            .partial_cmp(&a.source_quality)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| {
                crate::path_text::bytes(&a.file_name).cmp(&crate::path_text::bytes(&b.file_name))
            })
    });
    let (vars, subs) = found.into_iter().unzip();
    Ok(Found::Files(vars, subs))
}

/// `do_negotiation`: choose, and set the headers that say how. Returns
/// the index of the chosen variant, or the status of the answer (406, or
/// 300 for a client that does transparent negotiation).
///
/// `map` is the type map the variants came from, if any: its variants may
/// be elsewhere (a `/` in the name) or inline (`Body:`), which makes the
/// resource not transparently negotiable, and a chosen one is looked up
/// now (`setup_choice_response`).
pub(super) fn do_negotiation(
    ctx: &mut Ctx<'_>,
    neg: &mut NegState,
    vars: &mut [Variant],
    prefer_scripts: bool,
    map: Option<&super::typemap::Map>,
) -> Result<usize, Status> {
    // A GET without path info is transparently negotiable when every
    // variant is a neighbour (always, for MultiViews).
    neg.is_transparent = is_get(ctx)
        && ctx.path_info.is_empty()
        && (map.is_none()
            || vars
                .iter()
                .all(|v| !v.file_name.contains('/') && v.body.is_none()));
    if neg.is_transparent {
        let headers = &ctx.headers_in;
        let negotiate = headers
            .get("Negotiate")
            .map(|v| String::from_utf8_lossy(v).into_owned());
        neg.read_negotiate(negotiate.as_deref(), || {
            headers
                .get("User-Agent")
                .is_some_and(|ua| ua.starts_with(b"Lynx"))
        });
    } else {
        neg.may_choose = true;
    }
    neg.add_default_accepts(prefer_scripts);
    neg.prefer_language = ctx.env.get("prefer-language").map(str::to_string);
    neg.may_discard = if ctx.env.get("no-gzip").is_some() {
        1
    } else if ctx.env.get("gzip-only-text/html") == Some("1") {
        2
    } else {
        0
    };
    let (best, choice) = select::best_match(neg, vars);
    if !choice {
        neg.send_alternates = true;
        select::set_neg_headers(neg, vars, false, &mut ctx.err_headers_out);
        ctx.variant_list = Some(select::variant_list(vars));
        if neg.is_transparent && neg.ua_supports_trans {
            return Err(300);
        }
        if best.is_none() {
            ctx.log_error(
                "error",
                "negotiation",
                &format!("AH00690: no acceptable variant: {}", ctx.filename),
            );
            return Err(406);
        }
    }
    let best = best.expect("a choice names its variant");
    if neg.is_transparent && map.is_some() {
        super::typemap::check_choice(ctx, &vars[best])?;
    }
    if neg.is_transparent {
        let location =
            crate::uri::escape_path_segment(&crate::path_text::bytes(&vars[best].file_name))
                .into_owned();
        match ctx
            .err_headers_out
            .iter_mut()
            .find(|(n, _)| n.eq_ignore_ascii_case("Content-Location"))
        {
            Some((_, v)) => *v = location,
            None => ctx
                .err_headers_out
                .push(("Content-Location".into(), location)),
        }
        select::set_neg_headers(neg, vars, true, &mut ctx.err_headers_out);
    } else {
        select::set_neg_headers(neg, vars, choice, &mut ctx.err_headers_out);
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unrecognised_parts_must_appear_in_the_requested_name_in_order() {
        let ex = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(exceptions_match("index", &ex(&["index"])));
        assert!(exceptions_match("index.html", &ex(&["index"])));
        assert!(exceptions_match("index.foo", &ex(&["index", "foo"])));
        assert!(!exceptions_match("index.html", &ex(&["index", "foo"])));
        assert!(!exceptions_match("foo.index", &ex(&["index", "foo"])));
    }
}
