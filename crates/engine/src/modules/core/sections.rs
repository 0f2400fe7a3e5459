//! The core's containers: `<Directory>`, `<Files>`, `<Location>`,
//! `<VirtualHost>`, the parse-time conditionals (`<IfModule>`, `<IfDefine>`,
//! `<IfVersion>`, `<IfFile>`, `<IfDirective>`, `<IfSection>`), `<Limit>`,
//! and `Include`.
//!
//! Each handler checks where it stands, builds a fresh per-directory
//! config for its body (or, for the conditionals, walks the body into the
//! enclosing config when the condition holds) and files the result where
//! the request phases will look for it.

use super::{FilesMatcher, FilesSection, MethodLimit};
use crate::config::server::{DirSection, DirSectionMatcher, LocationSection};
use crate::config::{Invocation, SectionKind, Walker};
use crate::dirconf::DirConf;
use crate::registry::{ACCESS_CONF, OR_ALL};
use std::path::Path;
use std::sync::Arc;

/// The Apache release whose behaviour htaccel reproduces (`<IfVersion>`).
pub const APACHE_VERSION: (u32, u32, u32) = (2, 4, 71);

fn section_name(inv: &Invocation<'_>) -> String {
    format!("<{}", inv.name)
}

/// Apache's `ap_check_cmd_context` for the "cannot occur within" family.
pub(crate) fn not_within(
    w: &Walker<'_>,
    inv: &Invocation<'_>,
    kinds: &[SectionKind],
) -> Result<(), String> {
    for k in kinds {
        if w.ctx.within(*k) {
            let parent = w.ctx.parent.clone().unwrap_or_default();
            return Err(format!(
                "{} cannot occur within <{}> section",
                section_name(inv),
                parent
            ));
        }
    }
    Ok(())
}

/// A section that is not a parse-time conditional must be closed.
pub(crate) fn require_closed(inv: &Invocation<'_>) -> Result<(), String> {
    if inv.closed {
        Ok(())
    } else {
        Err(format!(
            "{}:{}: <{}> was not closed.",
            inv.origin.file, inv.origin.line, inv.name
        ))
    }
}

/// The first word of a section's arguments; Apache's "requires additional arguments" otherwise.
pub(crate) fn first_arg(inv: &Invocation<'_>) -> Result<String, String> {
    inv.words
        .first()
        .cloned()
        .filter(|w| !w.is_empty())
        .ok_or_else(|| {
            format!(
                "{}> directive requires additional arguments",
                section_name(inv)
            )
        })
}

/// `AllowOverride` and `AllowOverrideList` only mean something in `<Directory>`.
pub fn only_in_directory(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    name: &str,
) -> Result<(), String> {
    if w.ctx.within(SectionKind::Location) || w.ctx.within(SectionKind::Files) {
        w.warn(
            inv.origin,
            format!(
                "Useless use of {name} in line {} of {}.",
                inv.origin.line, inv.origin.file
            ),
        );
    }
    Ok(())
}

/// Compile a section regex with Apache's flags (PCRE, dot matches newline;
/// look-arounds as real `<FilesMatch>` blocks use them).
pub fn compile_regex(pattern: &str) -> Result<crate::regex_engine::Regex, String> {
    crate::regex_engine::Regex::new(pattern, false)
        .map_err(|_| "Regex could not be compiled".to_string())
}

/// Walk a section body into a fresh config in the main config's
/// directory context.
pub(crate) fn walk_section_body(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    kind: SectionKind,
    path: String,
) -> Result<DirConf, String> {
    let mut conf = DirConf::for_section();
    let saved = w.ctx.override_mask;
    let saved_path = w.ctx.path.replace(path);
    if !w.ctx.htaccess {
        w.ctx.override_mask = OR_ALL | ACCESS_CONF;
    }
    let r = w.walk_nested(inv.children, &mut conf, kind, inv.name);
    w.ctx.override_mask = saved;
    w.ctx.path = saved_path;
    r.map_err(|e| w.nested(e))?;
    Ok(conf)
}

pub fn run_directory(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    directory(w, inv, false)
}

pub fn run_directory_match(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    directory(w, inv, true)
}

fn directory(w: &mut Walker<'_>, inv: &Invocation<'_>, is_match: bool) -> Result<(), String> {
    not_within(
        w,
        inv,
        &[
            SectionKind::Directory,
            SectionKind::Location,
            SectionKind::Files,
            SectionKind::Limit,
        ],
    )?;
    require_closed(inv)?;
    let mut arg = first_arg(inv)?;
    let mut regex = is_match;
    if !is_match && arg == "~" {
        regex = true;
        arg = inv
            .words
            .get(1)
            .cloned()
            .ok_or("<Directory ~ > block must specify a path")?;
    }
    let matcher = if regex {
        DirSectionMatcher::Regex(compile_regex(&arg)?)
    } else {
        if !arg.starts_with('/') {
            return Err(format!("<Directory \"{arg}\"> path is invalid."));
        }
        // Apache makes the path canonical (`..` and `.` resolved) first.
        let mut path = crate::walk::clean_path(&arg);
        if !path.ends_with('/') {
            path.push('/');
        }
        let components = if path == "/" {
            0
        } else {
            path.matches('/').count() - 1
        };
        DirSectionMatcher::Path {
            fnmatch: htaccel_conf::fnmatch::has_wildcard(path.as_bytes()),
            path,
            components,
        }
    };
    let section_path = match &matcher {
        DirSectionMatcher::Path { path, .. } => path.clone(),
        DirSectionMatcher::Regex(_) => arg.clone(),
    };
    let conf = walk_section_body(w, inv, SectionKind::Directory, section_path)?;
    let server = w.server()?;
    server.directories.push(DirSection {
        matcher,
        conf: Arc::new(conf),
        origin: inv.origin.clone(),
    });
    Ok(())
}

pub fn run_location(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    location(w, inv, false)
}

pub fn run_location_match(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    location(w, inv, true)
}

fn location(w: &mut Walker<'_>, inv: &Invocation<'_>, is_match: bool) -> Result<(), String> {
    not_within(
        w,
        inv,
        &[
            SectionKind::Directory,
            SectionKind::Location,
            SectionKind::Files,
            SectionKind::Limit,
        ],
    )?;
    require_closed(inv)?;
    let mut arg = first_arg(inv)?;
    let mut regex = is_match;
    if !is_match && arg == "~" {
        regex = true;
        arg = inv.words.get(1).cloned().unwrap_or_default();
    }
    let regex = if regex {
        Some(compile_regex(&arg)?)
    } else {
        None
    };
    let conf = walk_section_body(w, inv, SectionKind::Location, arg.clone())?;
    let server = w.server()?;
    server.locations.push(LocationSection {
        path: arg,
        regex,
        conf: Arc::new(conf),
        origin: inv.origin.clone(),
    });
    Ok(())
}

pub fn run_files(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    files(w, inv, c, false)
}

pub fn run_files_match(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
) -> Result<(), String> {
    files(w, inv, c, true)
}

fn files(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    target: &mut DirConf,
    is_match: bool,
) -> Result<(), String> {
    not_within(w, inv, &[SectionKind::Location, SectionKind::Limit])?;
    require_closed(inv)?;
    let arg = first_arg(inv)?;
    let section_path = match inv.words.get(1) {
        Some(re) if arg == "~" && !is_match => re.clone(),
        _ => arg.clone(),
    };
    let matcher = if is_match {
        FilesMatcher::Regex(compile_regex(&arg)?)
    } else if arg == "~" {
        FilesMatcher::Regex(compile_regex(
            inv.words.get(1).map(String::as_str).unwrap_or(""),
        )?)
    } else if htaccel_conf::fnmatch::has_wildcard(arg.as_bytes()) {
        FilesMatcher::Glob(htaccel_conf::fnmatch::Glob::new(
            arg,
            htaccel_conf::fnmatch::Flags::PATHNAME,
        ))
    } else {
        FilesMatcher::Exact(arg)
    };
    let conf = walk_section_body(w, inv, SectionKind::Files, section_path)?;
    target.core.files.push(Arc::new(FilesSection {
        matcher,
        conf: Arc::new(conf),
        origin: inv.origin.clone(),
    }));
    Ok(())
}

pub fn run_virtual_host(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    if !w.ctx.sections.is_empty() {
        return Err("<VirtualHost cannot occur within <VirtualHost> section".into());
    }
    require_closed(inv)?;
    if inv.words.is_empty() {
        return Err("<VirtualHost> directive requires additional arguments".into());
    }
    let build = w
        .server
        .as_deref_mut()
        .ok_or("<VirtualHost not allowed here")?;
    let idx = build.begin_virtual_host(inv.words.clone(), inv.origin.clone());
    let mut conf = DirConf::for_server();
    let r = w.walk_nested(inv.children, &mut conf, SectionKind::VirtualHost, inv.name);
    let build = w
        .server
        .as_deref_mut()
        .ok_or("<VirtualHost not allowed here")?;
    build.end_virtual_host(idx, conf);
    r.map_err(|e| w.nested(e))
}

/// Walk a conditional section's body into the enclosing config when `cond` holds.
fn conditional(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
    cond: bool,
) -> Result<(), String> {
    if cond {
        if inv.closed && !inv.closed_exactly {
            return Err(format!("</{0}> without matching <{0}> section", inv.name));
        }
        // The body belongs to the enclosing context: same override, same parent.
        let r = w.walk(inv.children, c);
        r.map_err(|e| w.nested(e))?;
    }
    Ok(())
}

/// `!name` → (true, "name").
fn negation(arg: &str) -> (bool, &str) {
    match arg.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, arg),
    }
}

pub fn run_if_module(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
) -> Result<(), String> {
    let arg = first_arg(inv)?;
    let (neg, name) = negation(&arg);
    let loaded = w.env.is_loaded(name);
    conditional(w, inv, c, loaded != neg)
}

pub fn run_if_define(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
) -> Result<(), String> {
    let arg = first_arg(inv)?;
    let (neg, name) = negation(&arg);
    let defined = w.env.defines.contains_key(name);
    conditional(w, inv, c, defined != neg)
}

pub fn run_if_file(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
) -> Result<(), String> {
    let arg = first_arg(inv)?;
    let (neg, name) = negation(&arg);
    let path = if Path::new(name).is_absolute() {
        Path::new(name).to_path_buf()
    } else {
        w.env.server_root.join(name)
    };
    let exists = path.exists();
    conditional(w, inv, c, exists != neg)
}

pub fn run_if_directive(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
) -> Result<(), String> {
    let arg = first_arg(inv)?;
    let (neg, name) = negation(&arg);
    let known = crate::registry::find(&w.env.modules, name).is_some();
    conditional(w, inv, c, known != neg)
}

pub fn run_if_section(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
) -> Result<(), String> {
    let arg = first_arg(inv)?;
    let (neg, name) = negation(&arg);
    let known = crate::registry::find(&w.env.modules, &format!("<{name}")).is_some();
    conditional(w, inv, c, known != neg)
}

pub fn run_if_version(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
) -> Result<(), String> {
    let cond = if_version_holds(&inv.words)?;
    conditional(w, inv, c, cond)
}

/// mod_version's comparison: `[op] version` with `=`/`==`, `>`, `>=`, `<`,
/// `<=`, `~`/regex, and `!` negating any of them.
fn if_version_holds(words: &[String]) -> Result<bool, String> {
    let (op, ver) = match words {
        [v] => ("=".to_string(), v.clone()),
        [op, v] => (op.clone(), v.clone()),
        _ => return Err("Missing version argument".into()),
    };
    let (neg, op) = match op.strip_prefix('!') {
        Some(rest) => (
            true,
            if rest.is_empty() {
                "=".to_string()
            } else {
                rest.to_string()
            },
        ),
        None => (false, op),
    };
    let current = format!(
        "{}.{}.{}",
        APACHE_VERSION.0, APACHE_VERSION.1, APACHE_VERSION.2
    );
    let result = if op == "~" || (ver.starts_with('/') && ver.ends_with('/') && ver.len() > 1) {
        let pat = ver.trim_start_matches('/').trim_end_matches('/');
        compile_regex(pat)?.is_match(current.as_bytes())
    } else {
        let mut parts = ver.split('.').map(|p| p.parse::<u32>());
        let want = (
            parts
                .next()
                .and_then(Result::ok)
                .ok_or("Unparseable version")?,
            parts
                .next()
                .transpose()
                .map_err(|_| "Unparseable version")?
                .unwrap_or(0),
            parts
                .next()
                .transpose()
                .map_err(|_| "Unparseable version")?
                .unwrap_or(0),
        );
        let ord = APACHE_VERSION.cmp(&want);
        match op.as_str() {
            "=" | "==" => ord.is_eq(),
            ">" => ord.is_gt(),
            ">=" => ord.is_ge(),
            "<" => ord.is_lt(),
            "<=" => ord.is_le(),
            other => return Err(format!("unrecognized operator '{other}'")),
        }
    };
    Ok(result != neg)
}

pub fn run_limit(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    limit(w, inv, c, false)
}

pub fn run_limit_except(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
) -> Result<(), String> {
    limit(w, inv, c, true)
}

fn limit(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
    except: bool,
) -> Result<(), String> {
    require_closed(inv)?;
    if inv.words.is_empty() {
        return Err(format!(
            "{}> directive requires additional arguments",
            section_name(inv)
        ));
    }
    let mut methods = Vec::new();
    for m in &inv.words {
        if m == "TRACE" && !except {
            return Err("TRACE cannot be controlled by <Limit>, see TraceEnable".into());
        }
        if !crate::http::method::is_registered(m) {
            if w.ctx.htaccess {
                return Err(format!(
                    "Could not register method '{m}' for {} from .htaccess configuration",
                    section_name(inv)
                ));
            }
            crate::http::method::register(m)?;
        }
        methods.push(if m == "HEAD" {
            "GET".to_string()
        } else {
            m.clone()
        });
    }
    let saved = w.ctx.limit.replace(MethodLimit { methods, except });
    let r = w.walk_nested(inv.children, c, SectionKind::Limit, inv.name);
    w.ctx.limit = saved;
    r.map_err(|e| w.nested(e))
}

pub fn run_include(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
) -> Result<(), String> {
    include(w, inv, c, false)
}

pub fn run_include_optional(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
) -> Result<(), String> {
    include(w, inv, c, true)
}

fn include(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
    optional: bool,
) -> Result<(), String> {
    let paths = htaccel_conf::include_paths(&inv.words[0], &w.env.server_root, optional)?;
    w.env.includes.last_line = inv.origin.line;
    for path in paths {
        let log = &mut w.env.includes;
        log.files.push((log.depth, log.last_line, path.clone()));
        // An included file that cannot be read or parsed is reported at the
        // `Include` line, its own line chained after (Apache reads includes
        // while building the tree, and each level prefixes where it was).
        let nodes = htaccel_conf::parse_file(&path, &htaccel_conf::ParseOptions::default())
            .map_err(|e| read_error(&e.origin, e.message))?;
        w.env.includes.depth += 1;
        let walked = w.walk(&nodes, c);
        w.env.includes.depth -= 1;
        if let Err(e) = walked {
            return Err(if e.read_time || is_read_error(&e.message) {
                read_error(&e.origin, e.message)
            } else {
                w.nested(e)
            });
        }
    }
    Ok(())
}

/// The message of a file that could not be read, as the line that
/// included it reports it: `Syntax error on line N of FILE: …`, or, for a
/// file that could not be opened (line 0), the reason alone.
fn read_error(origin: &htaccel_conf::Origin, message: String) -> String {
    if origin.line == 0 {
        message
    } else {
        format!(
            "Syntax error on line {} of {}: {message}",
            origin.line, origin.file
        )
    }
}

/// Whether a configuration error comes from reading a file (Apache's
/// tree-building stage, reported `apache2: Syntax error on line …`) rather
/// than from a directive (reported `AH00526: …`).
pub fn is_read_error(message: &str) -> bool {
    message.starts_with("Could not open configuration file ")
        || message.starts_with("Syntax error on line ")
        || message.ends_with("> was not closed.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_version_compares() {
        let w = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert!(if_version_holds(&w(">= 2.4")).unwrap());
        assert!(!if_version_holds(&w("< 2.4")).unwrap());
        assert!(if_version_holds(&w("!= 2.2")).unwrap());
        assert!(if_version_holds(&w("~ ^2\\.4")).unwrap());
    }
}
