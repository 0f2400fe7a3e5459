//! Which output filters a response goes through: mod_filter's
//! `AddOutputFilterByType`, the core's `SetOutputFilter`, and mod_mime's
//! `AddOutputFilter` (recorded by [`super::mime`]). The only content
//! filter htaccel has is mod_deflate's `DEFLATE`; other filters Apache's
//! loaded modules provide are refused loudly, unknown names are skipped
//! with Apache's error-log line.
//!
//! `AddOutputFilterByType` keeps mod_filter's quirks: the filter it
//! declares (`BYTYPE:DEFLATE`) is per configuration, so a child
//! directory's `AddOutputFilterByType DEFLATE …` replaces the parent's
//! type list instead of adding to it; it acts only on 200 responses
//! (unless `filter-errordocs` is set); the type is compared without its
//! parameters.
//!
//! Apache applies byte ranges after the content filters, to the
//! compressed body. When `DEFLATE` may run, the default handler therefore
//! leaves `Range` alone ([`insert`]) and the ranges are cut after the
//! filters ([`deferred_ranges`]).

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::http::conditional::Clock;
use crate::http::range::{byterange_filter, RangeLimits, RangeOutcome};
use crate::http::{Body, Response};
use crate::registry::{
    Args, Directive, Module, Run, ACCESS_CONF, OR_FILEINFO, OR_OPTIONS, RSRC_CONF,
};
use crate::request::{Ctx, Status};
use std::sync::Arc;

/// A filter as htaccel knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Known {
    Deflate,
    /// Apache has it with the modules loaded; htaccel does not.
    Unsupported,
    Unknown,
}

fn lookup(name: &str, deflate_loaded: bool) -> Known {
    if deflate_loaded && name.eq_ignore_ascii_case("DEFLATE") {
        Known::Deflate
    } else if deflate_loaded && name.eq_ignore_ascii_case("INFLATE") {
        Known::Unsupported
    } else {
        Known::Unknown
    }
}

/// One `BYTYPE:<name>` filter declared by `AddOutputFilterByType`.
#[derive(Clone, Debug)]
pub struct ByType {
    /// `BYTYPE:` and the provider name as written (the key is case-sensitive).
    pub fname: String,
    /// The media types, as written, that select the provider.
    pub types: Vec<String>,
}

/// The per-directory slot.
#[derive(Clone, Debug, Default)]
pub struct FilterDir {
    /// mod_filter's declared filters, by name; a child's replace the parent's.
    pub declared: Vec<Arc<ByType>>,
    /// mod_filter's chain of filter names; `None` when not set here.
    pub chain: Option<Vec<String>>,
    /// The core's `SetOutputFilter` names; `None` when not set here.
    pub set_output: Option<Vec<String>>,
}

impl FilterDir {
    pub fn merge(base: &FilterDir, new: &FilterDir) -> FilterDir {
        let mut declared = new.declared.clone();
        for d in &base.declared {
            if !declared.iter().any(|n| n.fname == d.fname) {
                declared.push(d.clone());
            }
        }
        let chain = match (&base.chain, &new.chain) {
            (Some(b), Some(n)) => Some(b.iter().chain(n).cloned().collect()),
            (b, n) => n.clone().or_else(|| b.clone()),
        };
        FilterDir {
            declared,
            chain,
            set_output: new.set_output.clone().or_else(|| base.set_output.clone()),
        }
    }
}

// ---------------------------------------------------------------------------
// Configuration

/// Filters are found by name when a request runs, so a filter line may
/// come before its module's `LoadModule`.
fn deflate_loaded(w: &Walker<'_>) -> bool {
    w.loaded_by_reading("deflate_module")
}

/// `AddOutputFilterByType name[;name…] type…`.
fn run_by_type(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    if inv.words.len() < 2 {
        return Err("AddOutputFilterByType requires at least two arguments".into());
    }
    let loaded = deflate_loaded(w);
    for pname in inv.words[0].split(';').filter(|p| !p.is_empty()) {
        match lookup(pname, loaded) {
            Known::Deflate => {}
            Known::Unsupported => {
                return Err(format!(
                "AddOutputFilterByType {pname}: the {pname} filter is not supported by htaccel yet"
            ))
            }
            Known::Unknown => return Err(format!("Unknown filter provider {pname}")),
        }
        let fname = format!("BYTYPE:{pname}");
        let f = &mut c.filter;
        match f.declared.iter_mut().find(|d| d.fname == fname) {
            Some(d) => Arc::make_mut(d)
                .types
                .extend(inv.words[1..].iter().cloned()),
            None => {
                f.declared.push(Arc::new(ByType {
                    fname: fname.clone(),
                    types: inv.words[1..].to_vec(),
                }));
                f.chain.get_or_insert_with(Vec::new).push(fname);
            }
        }
    }
    Ok(())
}

/// `SetOutputFilter name[;name…]` (the core's).
fn run_set_output(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    let loaded = deflate_loaded(w);
    let names: Vec<String> = inv.words[0]
        .split(';')
        .take_while(|n| !n.is_empty())
        .map(str::to_string)
        .collect();
    for n in &names {
        if lookup(n, loaded) == Known::Unsupported {
            return Err(format!(
                "SetOutputFilter {n}: the {n} filter is not supported by htaccel yet"
            ));
        }
    }
    c.filter.set_output = Some(names);
    Ok(())
}

pub static DIRECTIVES: &[Directive] = &[
    Directive {
        name: "FilterDeclare",
        args: Args::Take12,
        req_override: OR_OPTIONS,
        about: "filter-name [filter-type]",
        run: Run::Unsupported,
    },
    Directive {
        name: "FilterProvider",
        args: Args::Take3,
        req_override: OR_OPTIONS,
        about: "filter-name provider-name match-expression",
        run: Run::Unsupported,
    },
    Directive {
        name: "FilterChain",
        args: Args::Iterate,
        req_override: OR_OPTIONS,
        about: "list of filter names with optional [+-=!@]",
        run: Run::Unsupported,
    },
    Directive {
        name: "FilterTrace",
        args: Args::Take2,
        req_override: RSRC_CONF | ACCESS_CONF,
        about: "filter-name debug-level",
        run: Run::Unsupported,
    },
    Directive {
        name: "AddOutputFilterByType",
        args: Args::Argv,
        req_override: OR_FILEINFO,
        about: "output filter name followed by one or more content-types",
        run: Run::Handler(run_by_type),
    },
    Directive {
        name: "FilterProtocol",
        args: Args::Take23,
        req_override: OR_OPTIONS,
        about: "filter-name [provider-name] protocol-args",
        run: Run::Unsupported,
    },
];

pub static MODULE: Module = Module {
    source: "mod_filter.c",
    identifier: "filter_module",
    builtin: false,
    directives: DIRECTIVES,
};

/// The core's `SetOutputFilter`.
pub static CORE_DIRECTIVES: &[Directive] = &[Directive {
    name: "SetOutputFilter",
    args: Args::Take1,
    req_override: OR_FILEINFO,
    about: "filter (or ; delimited list of filters) to be run on the request content",
    run: Run::Handler(run_set_output),
}];

pub static CORE_MODULE: Module = Module {
    source: "core.c",
    identifier: "core_module",
    builtin: true,
    directives: CORE_DIRECTIVES,
};

// ---------------------------------------------------------------------------
// Requests

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

/// How `DEFLATE` is attached to a request.
#[derive(Debug, Default)]
struct Attached {
    /// Inserted directly (`SetOutputFilter`, `AddOutputFilter`).
    direct: bool,
    /// Type lists of the `BYTYPE:` filters with the `DEFLATE` provider.
    by_type: Vec<Arc<ByType>>,
}

fn attached(ctx: &Ctx<'_>, log_unknown: bool) -> Result<Attached, String> {
    let f = &ctx.conf.filter;
    let mut a = Attached::default();
    // Asked only when a filter is named (most requests name none).
    let mut loaded = None;
    let mut refused = None;
    let mut consider = |name: &str, from_mime: bool| {
        if refused.is_some() {
            return;
        }
        let loaded = *loaded.get_or_insert_with(|| ctx.site.env.is_loaded("deflate_module"));
        match lookup(name, loaded) {
            Known::Deflate => a.direct = true,
            Known::Unsupported if from_mime => {
                refused = Some(format!(
                    "AddOutputFilter {name}: the {name} filter is not supported by htaccel yet"
                ))
            }
            _ => {
                if log_unknown {
                    ctx.site.log.error(
                        "error",
                        "core",
                        Some(ctx.req.remote()),
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
    for fname in f.chain.iter().flatten() {
        if let Some(d) = f.declared.iter().find(|d| &d.fname == fname) {
            a.by_type.push(d.clone());
        }
    }
    Ok(a)
}

/// Before the handler (`insert_filter`): refuse filters htaccel lacks, and
/// keep `Range` away from the handler when `DEFLATE` may change the body.
pub fn insert(ctx: &mut Ctx<'_>) -> Result<(), Status> {
    let a = match attached(ctx, true) {
        Ok(a) => a,
        Err(msg) => {
            if ctx.reason.is_none() {
                ctx.reason = Some(("error".into(), msg));
            }
            return Err(500);
        }
    };
    if (a.direct || !a.by_type.is_empty()) && ctx.headers_in.contains("Range") {
        ctx.range_deferred = Some(ctx.headers_in.clone().into_owned());
        ctx.headers_in.to_mut().remove("Range");
    }
    Ok(())
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

/// The output filters on a response that came from a handler: `DEFLATE`
/// if it is attached and selected.
/// Whether a content filter (`DEFLATE`) may need the whole body: a
/// backend's answer is then collected before the output filters run.
pub fn may_need_body(ctx: &Ctx<'_>) -> bool {
    attached(ctx, false).is_ok_and(|a| a.direct || !a.by_type.is_empty())
}

pub fn content_filters(ctx: &mut Ctx<'_>, resp: &mut Response) {
    let Ok(a) = attached(ctx, false) else {
        return;
    };
    let by_type = (resp.status == 200 || ctx.env.contains("filter-errordocs"))
        && a.by_type
            .iter()
            .any(|d| type_matches(&d.types, resp.header("Content-Type")));
    let selected = a.direct || by_type;
    let head = ctx.method == "HEAD";
    let restore = head
        && resp.status == 200
        && resp.body.is_empty()
        && (selected || ctx.range_deferred.is_some());
    let restored = restore
        && match head_body(ctx, resp) {
            Some(b) => {
                resp.body = b;
                true
            }
            None => false,
        };
    if selected {
        crate::modules::deflate::compress(ctx, resp);
    }
    if restored && ctx.range_deferred.is_none() {
        resp.body = Body::empty();
    }
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
    *resp = match byterange_filter(&headers, whole, clock, &RangeLimits::default(), &boundary) {
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

    fn by(fname: &str, types: &[&str]) -> Arc<ByType> {
        Arc::new(ByType {
            fname: fname.into(),
            types: types.iter().map(|t| t.to_string()).collect(),
        })
    }

    #[test]
    fn child_declaration_replaces_parent_types() {
        let parent = FilterDir {
            declared: vec![by("BYTYPE:DEFLATE", &["text/html"])],
            chain: Some(vec!["BYTYPE:DEFLATE".into()]),
            set_output: None,
        };
        let child = FilterDir {
            declared: vec![by("BYTYPE:DEFLATE", &["text/css"])],
            chain: Some(vec!["BYTYPE:DEFLATE".into()]),
            set_output: Some(vec!["DEFLATE".into()]),
        };
        let m = FilterDir::merge(&parent, &child);
        assert_eq!(m.declared.len(), 1);
        assert_eq!(m.declared[0].types, ["text/css"]);
        assert_eq!(m.chain.as_ref().unwrap().len(), 2);
        assert_eq!(m.set_output.as_deref(), Some(&["DEFLATE".to_string()][..]));
        let m2 = FilterDir::merge(&parent, &FilterDir::default());
        assert_eq!(m2.declared[0].types, ["text/html"]);
    }

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
        assert_eq!(lookup("deflate", true), Known::Deflate);
        assert_eq!(lookup("DEFLATE", false), Known::Unknown);
        assert_eq!(lookup("INFLATE", true), Known::Unsupported);
        assert_eq!(lookup("BROTLI_COMPRESS", true), Known::Unknown);
    }
}
