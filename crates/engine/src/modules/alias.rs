//! mod_alias: `Redirect`, `RedirectMatch`, `RedirectPermanent`,
//! `RedirectTemp`, `RedirectRelative` (also in `.htaccess`), and the
//! server-level `Alias`, `AliasMatch`, `ScriptAlias`, `ScriptAliasMatch`.
//!
//! Apache keeps two lists. Server-level entries (outside any section) act
//! in `translate_name`, before the directory walk: a redirect ends the
//! request there, an alias picks the filename instead of the document
//! root. Entries in a `<Directory>`, `<Location>`, `<Files>` or
//! `.htaccess` act in the fixups, after access control and before mod_dir;
//! a child's list is tried before its parent's, first match wins.
//!
//! A redirect matches the full decoded request path (never a path relative
//! to the `.htaccess`): a plain URL-path matches on whole segments with
//! repeated slashes folded, and the rest of the request path is escaped
//! and appended; a regex result is re-escaped as mod_alias does
//! ([`target`]). With a 3xx status and a single URL — `Redirect 301 /new`,
//! `Redirect /new` — a per-directory `Redirect` sends every request of the
//! directory to that URL ("Location-style"); there the URL is an Apache
//! expression string, of which htaccel takes literal text only and refuses
//! the rest loudly.
//!
//! `ScriptAlias` maps like `Alias` and sets the `cgi-script` handler; as in
//! an Apache without mod_cgi (htaccel has none), no script is executed.

pub mod target;

use crate::config::{Invocation, SectionKind, Walker};
use crate::dirconf::DirConf;
use crate::regex_engine::Regex;
use crate::registry::{Args, Directive, Module, Run, ACCESS_CONF, OR_FILEINFO, RSRC_CONF};
use crate::request::{Ctx, Status};
use std::sync::Arc;

/// What an entry compares the request path with.
#[derive(Clone, Debug)]
pub enum Matcher {
    /// A URL-path, matched on whole segments.
    Prefix(String),
    /// A regex searched anywhere in the path.
    Regex(Regex),
}

/// One `Redirect*` or `*Alias*` line.
#[derive(Clone, Debug)]
pub struct Entry {
    pub matcher: Matcher,
    /// Target URL (redirects) or path (aliases); `None` for a status
    /// without URL (`Redirect gone /x`, `RedirectMatch 404 re`).
    pub real: Option<String>,
    /// The status as Apache's `atoi` read it (`0` lets the request go on).
    pub status: u32,
    /// `cgi-script` for the `ScriptAlias` forms.
    pub handler: Option<&'static str>,
}

/// A Location-style redirect: every request of the directory.
#[derive(Clone, Debug)]
pub struct LocationRedirect {
    /// Literal URL; `None` for a bare status (`Redirect gone`).
    pub url: Option<String>,
    pub status: u32,
}

/// The per-directory slot.
#[derive(Clone, Debug, Default)]
pub struct AliasDir {
    /// This level's entries first, then the inherited ones.
    pub redirects: Vec<Arc<Entry>>,
    pub location: Option<LocationRedirect>,
    /// `RedirectRelative`.
    pub allow_relative: Option<bool>,
    /// `AliasPreservePath` (meaningful for the one-argument `Alias` only).
    pub preserve_path: Option<bool>,
}

impl AliasDir {
    pub fn merge(base: &AliasDir, new: &AliasDir) -> AliasDir {
        let redirects = if base.redirects.is_empty() {
            new.redirects.clone()
        } else {
            new.redirects
                .iter()
                .chain(&base.redirects)
                .cloned()
                .collect()
        };
        AliasDir {
            redirects,
            location: new.location.clone().or_else(|| base.location.clone()),
            allow_relative: new.allow_relative.or(base.allow_relative),
            preserve_path: new.preserve_path.or(base.preserve_path),
        }
    }
}

/// The server-level lists of one server.
#[derive(Clone, Debug, Default)]
pub struct AliasServer {
    pub aliases: Vec<Arc<Entry>>,
    pub redirects: Vec<Arc<Entry>>,
}

impl AliasServer {
    /// A `<VirtualHost>`'s lists are tried before the main server's.
    pub fn merge(main: &AliasServer, vhost: &AliasServer) -> AliasServer {
        AliasServer {
            aliases: vhost.aliases.iter().chain(&main.aliases).cloned().collect(),
            redirects: vhost
                .redirects
                .iter()
                .chain(&main.redirects)
                .cloned()
                .collect(),
        }
    }
}

// ---------------------------------------------------------------------------
// Configuration

/// Whether the directive is read for a directory (Apache's `cmd->path`).
fn in_directory(w: &Walker<'_>) -> bool {
    w.ctx.htaccess
        || [
            SectionKind::Directory,
            SectionKind::Location,
            SectionKind::Files,
            SectionKind::If,
        ]
        .iter()
        .any(|k| w.ctx.within(*k))
}

fn is_redirect(status: u32) -> bool {
    (300..400).contains(&status)
}

/// C's `atoi` on a word that starts with a digit.
fn atoi(s: &str) -> u32 {
    let mut v: u64 = 0;
    for c in s.bytes().take_while(u8::is_ascii_digit) {
        v = (v * 10 + u64::from(c - b'0')).min(u64::from(u32::MAX));
    }
    v as u32
}

/// The URL of a Location-style redirect: an Apache expression string.
/// Literal text is what it evaluates to; variables, back-references and
/// escapes are not supported yet.
fn expression_url(name: &str, url: &str) -> Result<String, String> {
    let b = url.as_bytes();
    let dynamic = url.contains("%{")
        || url.contains('\\')
        || b.windows(2).any(|w| w[0] == b'$' && w[1].is_ascii_digit());
    if dynamic {
        return Err(format!(
            "{name}: the target '{url}' is an expression with variables, back-references or escapes, which htaccel does not support yet"
        ));
    }
    Ok(url.to_string())
}

/// Apache's `add_redirect_internal`, for every `Redirect*` directive.
fn add_redirect(
    w: &mut Walker<'_>,
    c: &mut DirConf,
    name: &str,
    args: (&str, Option<&str>, Option<&str>),
    use_regex: bool,
    default_status: u32,
) -> Result<(), String> {
    let (arg1, arg2, arg3) = args;
    let mut status = default_status;
    // 1: a redirect status; -1: a status that takes no URL; 0: not a status.
    let grok: i8 = match arg1.to_ascii_lowercase().as_str() {
        "permanent" => {
            status = 301;
            1
        }
        "temp" => {
            status = 302;
            1
        }
        "seeother" => {
            status = 303;
            1
        }
        "gone" => {
            status = 410;
            -1
        }
        a if a.starts_with(|ch: char| ch.is_ascii_digit()) => {
            status = atoi(a);
            if is_redirect(status) {
                1
            } else {
                -1
            }
        }
        _ => 0,
    };
    if arg3.is_some() && grok == 0 {
        return Err("Redirect: invalid first argument (of three)".into());
    }
    let per_dir = in_directory(w);
    if per_dir {
        if (grok > 0 && arg2.is_some() && arg3.is_none()) || (grok == 0 && arg2.is_none()) {
            let url = if grok != 0 { arg2.unwrap_or("") } else { arg1 };
            c.alias.location = Some(LocationRedirect {
                url: Some(expression_url(name, url)?),
                status,
            });
            return Ok(());
        }
        if grok < 0 && arg2.is_none() {
            c.alias.location = Some(LocationRedirect { url: None, status });
            return Ok(());
        }
    }
    let (fake, url) = if arg3.is_none() && grok == 0 {
        (Some(arg1), arg2)
    } else {
        (arg2, arg3)
    };
    let Some(fake) = fake else {
        if is_redirect(status) {
            return Err("URL to redirect to is missing".into());
        }
        // Apache takes this and crashes on the first request.
        return Err(format!(
            "{name} with a status and no URL-path is only meaningful inside a directory"
        ));
    };
    let matcher = if use_regex {
        Matcher::Regex(
            Regex::new(fake, false)
                .map_err(|_| "Regular expression could not be compiled.".to_string())?,
        )
    } else {
        Matcher::Prefix(fake.to_string())
    };
    if is_redirect(status) {
        let Some(u) = url else {
            return Err("URL to redirect to is missing".into());
        };
        if !use_regex && !target::is_url(u) && !u.starts_with('/') {
            return Err("Redirect to non-URL".into());
        }
    } else if url.is_some() {
        return Err("Redirect URL not valid for this status".into());
    }
    let entry = Arc::new(Entry {
        matcher,
        real: url.map(str::to_string),
        status,
        handler: None,
    });
    if per_dir {
        c.alias.redirects.push(entry);
    } else {
        w.server()?.modules.alias.redirects.push(entry);
    }
    Ok(())
}

fn run_redirect(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    let a = &inv.words;
    let args = (
        a[0].as_str(),
        a.get(1).map(String::as_str),
        a.get(2).map(String::as_str),
    );
    add_redirect(w, c, "Redirect", args, false, 302)
}

fn run_redirect_match(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
) -> Result<(), String> {
    let a = &inv.words;
    let args = (
        a[0].as_str(),
        a.get(1).map(String::as_str),
        a.get(2).map(String::as_str),
    );
    add_redirect(w, c, "RedirectMatch", args, true, 302)
}

fn redirect2(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
    name: &str,
    status: u32,
) -> Result<(), String> {
    let args = (inv.words[0].as_str(), Some(inv.words[1].as_str()), None);
    add_redirect(w, c, name, args, false, status)
}

/// The section an `Alias` with one argument may not sit in, as Apache
/// names it in its refusal.
fn forbidden_parent(w: &Walker<'_>) -> Option<String> {
    for (kind, canonical) in [
        (SectionKind::Directory, "<Directory"),
        (SectionKind::Files, "<Files"),
        (SectionKind::If, "<If"),
    ] {
        if w.ctx.within(kind) {
            return Some(canonical.to_string());
        }
    }
    None
}

/// `Alias`/`ScriptAlias`, `AliasMatch`/`ScriptAliasMatch`.
fn add_alias(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    name: &'static str,
    handler: Option<&'static str>,
    use_regex: bool,
) -> Result<(), String> {
    if inv.words.len() == 1 {
        if let Some(section) = forbidden_parent(w) {
            return Err(format!("{name} cannot occur within {section}> section"));
        }
        if !in_directory(w) {
            return Err(format!("{name} must have two arguments when used globally"));
        }
        return Err(format!(
            "{name} with one argument (inside <Location>) is not supported by htaccel yet"
        ));
    }
    if w.ctx.limit.is_some() {
        return Err(format!(
            "{name} cannot occur within <Limit> or <LimitExcept> section"
        ));
    }
    if in_directory(w) {
        return Err(format!("{name} cannot occur within directory context"));
    }
    let fake = inv.words[0].clone();
    let real = inv.words[1].clone();
    let matcher = if use_regex {
        Matcher::Regex(
            Regex::new(&fake, false)
                .map_err(|_| "Regular expression could not be compiled.".to_string())?,
        )
    } else {
        Matcher::Prefix(fake.clone())
    };
    let server = w.server()?;
    let overlap = match &matcher {
        Matcher::Regex(_) => None,
        Matcher::Prefix(_) => server
            .modules
            .alias
            .aliases
            .iter()
            .find(|e| match &e.matcher {
                Matcher::Prefix(p) => alias_matches(fake.as_bytes(), p.as_bytes()) > 0,
                Matcher::Regex(re) => re.is_match(fake.as_bytes()),
            }),
    };
    let warning = overlap.map(|e| {
        format!(
            "AH00671: The {name} directive in {} at line {} will probably never match because it overlaps an earlier {}Alias{}.",
            inv.origin.file,
            inv.origin.line,
            if e.handler.is_some() { "Script" } else { "" },
            if matches!(e.matcher, Matcher::Regex(_)) { "Match" } else { "" },
        )
    });
    server.modules.alias.aliases.push(Arc::new(Entry {
        matcher,
        real: Some(real),
        status: 0,
        handler,
    }));
    if let Some(m) = warning {
        w.warn(inv.origin, m);
    }
    Ok(())
}

const FI: u32 = OR_FILEINFO;

pub static DIRECTIVES: &[Directive] = &[
    Directive {
        name: "Alias",
        args: Args::Take12,
        req_override: RSRC_CONF | ACCESS_CONF,
        about: "a fakename and a realname, or a realname in a Location",
        run: Run::Handler(|w, inv, _c| add_alias(w, inv, "Alias", None, false)),
    },
    Directive {
        name: "ScriptAlias",
        args: Args::Take12,
        req_override: RSRC_CONF | ACCESS_CONF,
        about: "a fakename and a realname, or a realname in a Location",
        run: Run::Handler(|w, inv, _c| add_alias(w, inv, "ScriptAlias", Some("cgi-script"), false)),
    },
    Directive {
        name: "Redirect",
        args: Args::Take123,
        req_override: FI,
        about: "an optional status, then document to be redirected and destination URL",
        run: Run::Handler(run_redirect),
    },
    Directive {
        name: "AliasMatch",
        args: Args::Take2,
        req_override: RSRC_CONF,
        about: "a regular expression and a filename",
        run: Run::Handler(|w, inv, _c| add_alias(w, inv, "AliasMatch", None, true)),
    },
    Directive {
        name: "ScriptAliasMatch",
        args: Args::Take2,
        req_override: RSRC_CONF,
        about: "a regular expression and a filename",
        run: Run::Handler(|w, inv, _c| {
            add_alias(w, inv, "ScriptAliasMatch", Some("cgi-script"), true)
        }),
    },
    Directive {
        name: "RedirectMatch",
        args: Args::Take23,
        req_override: FI,
        about: "an optional status, then a regular expression and destination URL",
        run: Run::Handler(run_redirect_match),
    },
    Directive {
        name: "RedirectTemp",
        args: Args::Take2,
        req_override: FI,
        about: "a document to be redirected, then the destination URL",
        run: Run::Handler(|w, inv, c| redirect2(w, inv, c, "RedirectTemp", 302)),
    },
    Directive {
        name: "RedirectPermanent",
        args: Args::Take2,
        req_override: FI,
        about: "a document to be redirected, then the destination URL",
        run: Run::Handler(|w, inv, c| redirect2(w, inv, c, "RedirectPermanent", 301)),
    },
    Directive {
        name: "RedirectRelative",
        args: Args::Flag,
        req_override: FI,
        about: "Set to ON to allow relative redirect targets to be issued as-is",
        run: Run::Handler(|_w, inv, c| {
            c.alias.allow_relative = Some(crate::registry::flag(&inv.words));
            Ok(())
        }),
    },
    Directive {
        name: "AliasPreservePath",
        args: Args::Flag,
        req_override: FI,
        about: "Set to ON to map the full path after the fakename to the realname.",
        run: Run::Handler(|_w, inv, c| {
            c.alias.preserve_path = Some(crate::registry::flag(&inv.words));
            Ok(())
        }),
    },
];

pub static MODULE: Module = Module {
    source: "mod_alias.c",
    identifier: "alias_module",
    builtin: false,
    directives: DIRECTIVES,
};

// ---------------------------------------------------------------------------
// Requests

/// Apache's `alias_matches`: how many bytes of `uri` the URL-path `fake`
/// covers, or 0. Any run of slashes in `fake` matches any non-empty run in
/// `uri`; the match must end at a segment boundary.
pub fn alias_matches(uri: &[u8], fake: &[u8]) -> usize {
    let (mut a, mut u) = (0, 0);
    while a < fake.len() {
        if fake[a] == b'/' {
            if uri.get(u) != Some(&b'/') {
                return 0;
            }
            while fake.get(a) == Some(&b'/') {
                a += 1;
            }
            while uri.get(u) == Some(&b'/') {
                u += 1;
            }
        } else {
            if uri.get(u) != Some(&fake[a]) {
                return 0;
            }
            a += 1;
            u += 1;
        }
    }
    if a > 0 && fake[a - 1] != b'/' && u < uri.len() && uri[u] != b'/' {
        return 0;
    }
    u
}

/// What a list lookup found.
struct Hit {
    found: String,
    entry: Arc<Entry>,
    /// The URL-path and target of a plain match (`CONTEXT_PREFIX`,
    /// `CONTEXT_DOCUMENT_ROOT`).
    context: Option<(String, String)>,
}

/// A list lookup failed: the substitution grew too long (500).
struct SubstitutionFailed(String);

/// Apache's `try_alias_list`: the first entry that matches `uri`.
fn try_list(
    entries: &[Arc<Entry>],
    uri: &str,
    is_redirect: bool,
) -> Result<Option<Hit>, SubstitutionFailed> {
    let bytes = uri.as_bytes();
    for entry in entries {
        match &entry.matcher {
            Matcher::Regex(re) => {
                // Patterns match the bytes the path stands for.
                let raw = crate::path_text::bytes(uri);
                let Some(caps) = re.captures(&raw) else {
                    continue;
                };
                let found = match &entry.real {
                    None => String::new(),
                    Some(real) => match crate::regsub::pregsub(real.as_bytes(), &raw, &caps) {
                        Some(v) => {
                            let s = crate::path_text::from_bytes(v);
                            if is_redirect {
                                target::reassemble(&s)
                            } else {
                                s
                            }
                        }
                        None => return Err(SubstitutionFailed(real.clone())),
                    },
                };
                return Ok(Some(Hit {
                    found,
                    entry: entry.clone(),
                    context: None,
                }));
            }
            Matcher::Prefix(fake) => {
                let l = alias_matches(bytes, fake.as_bytes());
                if l == 0 {
                    continue;
                }
                let real = entry.real.clone().unwrap_or_default();
                let found = if is_redirect {
                    let rest = crate::path_text::bytes(&uri[l..]);
                    format!("{real}{}", crate::uri::escape_path(&rest))
                } else {
                    format!("{real}{}", &uri[l..])
                };
                return Ok(Some(Hit {
                    found,
                    entry: entry.clone(),
                    context: Some((fake.clone(), real)),
                }));
            }
        }
    }
    Ok(None)
}

/// Apache's `try_redirect`: the Location-style redirect in force.
fn location_style(loc: &LocationRedirect) -> String {
    match &loc.url {
        Some(url) => target::reassemble(url),
        None => String::new(),
    }
}

/// Answer a redirect (or other status) found for this request: build the
/// `Location` for a 3xx, end the request with the status. Status 0 lets
/// the request go on, as Apache's `OK`.
fn answer(
    ctx: &mut Ctx<'_>,
    found: String,
    status: u32,
    allow_relative: bool,
) -> Result<(), Status> {
    if status == 0 {
        return Ok(());
    }
    let status = u16::try_from(status).unwrap_or(500);
    if is_redirect(u32::from(status)) {
        let mut location = found;
        if !(allow_relative && location.starts_with('/')) {
            if location.starts_with('/') {
                location = ctx.construct_url(&location);
            }
            if !target::is_url(&location) {
                let msg = format!(
                    "AH00676: cannot redirect '{}' to '{location}'; target is not a valid absoluteURI or abs_path",
                    ctx.uri
                );
                return Err(fail(ctx, msg));
            }
        }
        if let Some(args) = &ctx.args {
            if !location.contains('?') {
                location.push('?');
                location.push_str(args);
            }
        }
        ctx.headers_out.push(("Location".into(), location));
    } else if status == 405 || status == 501 {
        // No handler ran, so only the core's TRACE is allowed.
        ctx.allow_no_method();
    }
    Err(status)
}

fn fail(ctx: &mut Ctx<'_>, msg: String) -> Status {
    if ctx.reason.is_none() && !ctx.is_subreq {
        ctx.reason = Some(crate::request::Reason::new("error", "alias", msg));
    }
    500
}

fn substitution_failed(ctx: &mut Ctx<'_>, e: SubstitutionFailed) -> Status {
    fail(
        ctx,
        format!(
            "AH00672: Regex substitution in '{}' failed. Replacement too long?",
            e.0
        ),
    )
}

/// The fixups hook (`fixup_redir`): the per-directory redirects.
pub fn fixup(ctx: &mut Ctx<'_>) -> Result<(), Status> {
    let conf = ctx.conf.clone();
    let alias = &conf.alias;
    let allow_relative = alias.allow_relative == Some(true);
    if let Some(loc) = &alias.location {
        let found = location_style(loc);
        return answer(ctx, found, loc.status, allow_relative);
    }
    if alias.redirects.is_empty() {
        return Ok(());
    }
    match try_list(&alias.redirects, &ctx.uri, true) {
        Ok(Some(hit)) => answer(ctx, hit.found, hit.entry.status, allow_relative),
        Ok(None) => Ok(()),
        Err(e) => Err(substitution_failed(ctx, e)),
    }
}

/// The Location-style redirect and `RedirectRelative` that `<Location>`
/// sections give this URI before translation (Apache walks the locations
/// once before `translate_name`).
fn early_location(ctx: &Ctx<'_>) -> (Option<LocationRedirect>, bool) {
    let mut location = ctx.site.base.alias.location.clone();
    let mut relative = ctx.site.base.alias.allow_relative;
    for loc in &ctx.site.locations {
        let a = &loc.conf.alias;
        if a.location.is_none() && a.allow_relative.is_none() {
            continue;
        }
        let hit = match &loc.regex {
            Some(re) => re.is_match(&crate::path_text::bytes(&ctx.uri)),
            None => crate::request::location_matches(&loc.path, &ctx.uri),
        };
        if hit {
            location = a.location.clone().or(location);
            relative = a.allow_relative.or(relative);
        }
    }
    (location, relative == Some(true))
}

/// The translate_name hook (`translate_alias_redir`): server-level
/// redirects, then aliases. `Ok(true)` when an alias chose the filename.
pub fn translate(ctx: &mut Ctx<'_>) -> Result<bool, Status> {
    if !ctx.uri.starts_with('/') && !ctx.uri.is_empty() {
        return Ok(false);
    }
    let (location, allow_relative) = early_location(ctx);
    if let Some(loc) = location {
        let found = location_style(&loc);
        return answer(ctx, found, loc.status, allow_relative).map(|()| false);
    }
    let site = ctx.site;
    let server = &site.modules.alias;
    match try_list(&server.redirects, &ctx.uri, true) {
        Ok(Some(hit)) => {
            return answer(ctx, hit.found, hit.entry.status, allow_relative).map(|()| false)
        }
        Ok(None) => {}
        Err(e) => return Err(substitution_failed(ctx, e)),
    }
    match try_list(&server.aliases, &ctx.uri, false) {
        Ok(Some(hit)) => {
            let mut filename = hit.found;
            if !filename.starts_with('/') && !filename.is_empty() {
                filename = ctx
                    .site
                    .env
                    .server_root
                    .join(&filename)
                    .to_string_lossy()
                    .into_owned();
            }
            // Dot segments a substitution may have formed are resolved
            // here, so that `<Directory>` sections see the real path.
            ctx.filename = crate::walk::clean_path(&filename);
            if let Some(h) = hit.entry.handler {
                ctx.handler = Some(h.to_string());
                ctx.script_aliased = true;
            }
            if let Some((prefix, root)) = hit.context {
                ctx.context_prefix = Some(prefix);
                ctx.context_document_root = Some(root);
            }
            Ok(true)
        }
        Ok(None) => Ok(false),
        Err(e) => Err(substitution_failed(ctx, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_prefix() {
        assert_eq!(alias_matches(b"/sub/old", b"/sub/old"), 8);
        assert_eq!(alias_matches(b"/sub/old/x", b"/sub/old"), 8);
        assert_eq!(alias_matches(b"/sub/oldx", b"/sub/old"), 0);
        assert_eq!(alias_matches(b"/sub/oldx", b"/sub/"), 5);
        assert_eq!(alias_matches(b"//sub///old/x", b"/sub/old"), 11);
        assert_eq!(alias_matches(b"/sub/dbl", b"/sub//dbl"), 8);
        assert_eq!(alias_matches(b"/sub", b"/sub/"), 0);
        assert_eq!(alias_matches(b"/x", b"/"), 1);
        assert_eq!(alias_matches(b"/x", b""), 0);
    }

    #[test]
    fn status_words() {
        assert_eq!(atoi("301x"), 301);
        assert_eq!(atoi("0"), 0);
        assert_eq!(atoi("99999999999999"), u32::MAX);
    }

    #[test]
    fn merge_prepends_child() {
        let e = |s: &str| {
            Arc::new(Entry {
                matcher: Matcher::Prefix(s.into()),
                real: None,
                status: 410,
                handler: None,
            })
        };
        let base = AliasDir {
            redirects: vec![e("/p")],
            ..Default::default()
        };
        let child = AliasDir {
            redirects: vec![e("/c1"), e("/c2")],
            allow_relative: Some(true),
            ..Default::default()
        };
        let m = AliasDir::merge(&base, &child);
        let names: Vec<_> = m
            .redirects
            .iter()
            .map(|e| match &e.matcher {
                Matcher::Prefix(p) => p.clone(),
                Matcher::Regex(_) => String::new(),
            })
            .collect();
        assert_eq!(names, ["/c1", "/c2", "/p"]);
        assert_eq!(m.allow_relative, Some(true));
    }

    #[test]
    fn literal_expressions_only() {
        assert_eq!(expression_url("Redirect", "/new").unwrap(), "/new");
        assert!(expression_url("Redirect", "/n%{REQUEST_URI}").is_err());
        assert!(expression_url("Redirect", "/n$1").is_err());
        assert!(expression_url("Redirect", r"/n\x").is_err());
        assert_eq!(expression_url("Redirect", "/a$b").unwrap(), "/a$b");
    }
}
