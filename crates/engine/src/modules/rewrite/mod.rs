//! mod_rewrite: `RewriteEngine`, `RewriteBase`, `RewriteCond`,
//! `RewriteRule`, `RewriteOptions` and `RewriteMap`, with Apache 2.4's
//! semantics in server and per-directory context.
//!
//! Why it looks the way it does:
//!
//! * Rules are compiled when their file is read ([`parse`]): regexes,
//!   flags, and every substitution and test string cut into pieces, so a
//!   request only walks prepared data. A `.htaccess` is compiled once per
//!   version, not once per request as Apache does.
//! * Two configuration slots, as in Apache: [`RewriteDir`] in each
//!   per-directory scope (`.htaccess`, `<Directory>`, `<Files>`,
//!   `<Location>`) and [`RewriteServer`] per server. Their merges follow
//!   `config_perdir_merge`/`config_server_merge` exactly, because
//!   inheritance is where real sites differ: a child `.htaccess` with *any*
//!   mod_rewrite directive replaces its parent's rules unless `RewriteOptions
//!   Inherit…` says otherwise, while a child without one leaves the parent's
//!   configuration (and its directory context) in force.
//! * The rule loop ([`exec`]) is pure over a request interface
//!   ([`vars::Host`]); [`hooks`] binds it to the request phases: server
//!   rules in `translate_name`, directory rules first in the fixups (the
//!   internal redirect is only scheduled; `Redirect` and `DirectorySlash`
//!   still run after it), `[T=]`/`[H=]` at the end of the fixups, and the
//!   internal redirect itself in place of the content handler.
//! * What Apache refuses, we refuse with its words (a 500 for the file);
//!   what htaccel cannot do yet (`prg:` and `dbm:` maps) fails loudly
//!   instead of being skipped.

pub mod exec;
pub mod hooks;
mod host;
pub mod maps;
pub mod parse;
pub mod simulate;
pub mod trace;
pub mod variable;
pub mod vars;

#[cfg(test)]
mod tests;

use crate::config::{Invocation, SectionKind, Walker};
use crate::dirconf::DirConf;
use crate::registry::{self, Args, Directive, Module, Run, OR_FILEINFO, RSRC_CONF};
use maps::RewriteMap;
use parse::{Cond, Rule};
use std::collections::HashMap;
use std::sync::Arc;

pub use hooks::{
    fixup, force_type_handler, handler, redirect_handler, translate_name, RequestState,
};

/// `RewriteOptions` bits (Apache's `OPTION_*`).
pub mod opt {
    pub const INHERIT: u32 = 1 << 1;
    pub const INHERIT_BEFORE: u32 = 1 << 2;
    pub const NOSLASH: u32 = 1 << 3;
    pub const ANYURI: u32 = 1 << 4;
    pub const MERGEBASE: u32 = 1 << 5;
    pub const INHERIT_DOWN: u32 = 1 << 6;
    pub const INHERIT_DOWN_BEFORE: u32 = 1 << 7;
    pub const IGNORE_INHERIT: u32 = 1 << 8;
    pub const IGNORE_CONTEXT_INFO: u32 = 1 << 9;
    pub const LEGACY_PREFIX_DOCROOT: u32 = 1 << 10;
    pub const UNSAFE_PREFIX_STAT: u32 = 1 << 12;
}

/// A list of compiled rules, shared between the scopes that inherit it.
pub type Rules = Arc<Vec<Arc<Rule>>>;

/// The per-directory slot. `None` until a mod_rewrite directive appears in
/// the scope (Apache creates a module's per-directory config lazily, and a
/// scope without one leaves its parent's in force, directory included).
#[derive(Clone, Debug, Default)]
pub struct RewriteDir {
    pub conf: Option<Arc<PerDirConf>>,
}

/// mod_rewrite's configuration of one directory scope (Apache's
/// `rewrite_perdir_conf`).
#[derive(Clone, Debug, Default)]
pub struct PerDirConf {
    /// `RewriteEngine`, if set here or inherited.
    pub state: Option<bool>,
    /// `RewriteOptions`, if set here or inherited (as a whole).
    pub options: Option<u32>,
    pub base_url: Option<String>,
    /// The context directory, with a trailing slash; `None` for the
    /// server's own defaults.
    pub directory: Option<String>,
    pub rules: Rules,
    /// Conditions waiting for their rule while the scope is read.
    pending: Vec<Cond>,
}

impl PerDirConf {
    pub fn enabled(&self) -> bool {
        self.state == Some(true)
    }
    pub fn opts(&self) -> u32 {
        self.options.unwrap_or(0)
    }
}

/// Rules of `first` followed by those of `then`.
fn chain(first: &Rules, then: &Rules) -> Rules {
    if then.is_empty() {
        return first.clone();
    }
    if first.is_empty() {
        return then.clone();
    }
    Arc::new(first.iter().chain(then.iter()).cloned().collect())
}

/// Whether a child inherits its parent's rules, and where they go:
/// `Some(true)` after its own, `Some(false)` before.
fn inherits(child_opts: u32, parent_opts: u32) -> Option<bool> {
    let ignore = child_opts & opt::IGNORE_INHERIT != 0;
    if child_opts & opt::INHERIT != 0 || (parent_opts & opt::INHERIT_DOWN != 0 && !ignore) {
        Some(true)
    } else if child_opts & opt::INHERIT_BEFORE != 0
        || (parent_opts & opt::INHERIT_DOWN_BEFORE != 0 && !ignore)
    {
        Some(false)
    } else {
        None
    }
}

impl RewriteDir {
    /// Apache's `config_perdir_merge`, with its lazy creation: a scope
    /// without mod_rewrite directives takes its parent's configuration as
    /// it is.
    pub fn merge(base: &RewriteDir, add: &RewriteDir) -> RewriteDir {
        let Some(a) = &add.conf else {
            return base.clone();
        };
        let Some(b) = &base.conf else {
            return RewriteDir {
                conf: Some(Arc::new(PerDirConf {
                    pending: Vec::new(),
                    ..(**a).clone()
                })),
            };
        };
        let state = a.state.or(b.state);
        let options = a.options.or(b.options);
        let merged_opts = options.unwrap_or(0);
        let base_url = if merged_opts & opt::MERGEBASE != 0 {
            a.base_url.clone().or_else(|| b.base_url.clone())
        } else {
            a.base_url.clone()
        };
        let rules = match inherits(merged_opts, b.opts()) {
            Some(true) => chain(&a.rules, &b.rules),
            Some(false) => chain(&b.rules, &a.rules),
            None => a.rules.clone(),
        };
        RewriteDir {
            conf: Some(Arc::new(PerDirConf {
                state,
                options,
                base_url,
                directory: a.directory.clone(),
                rules,
                pending: Vec::new(),
            })),
        }
    }

    pub fn get(&self) -> Option<&PerDirConf> {
        self.conf.as_deref()
    }
}

/// mod_rewrite's configuration of one server (Apache's
/// `rewrite_server_conf`): the server-context rules and the maps.
#[derive(Clone, Debug, Default)]
pub struct RewriteServer {
    pub state: Option<bool>,
    pub options: Option<u32>,
    pub rules: Rules,
    pending: Vec<Cond>,
    pub maps: HashMap<String, Arc<RewriteMap>>,
    /// The server's configuration holds a mod_rewrite directive (Apache
    /// creates a module's server configuration for a `<VirtualHost>`
    /// only then).
    declared: bool,
    /// A `<VirtualHost>` without one: it uses the main server's
    /// configuration itself (its maps too), and its server-context
    /// rewriting declines (`conf->server != r->server` in Apache's
    /// `hook_uri2file`), whatever the main server enables.
    pub shares_main: bool,
}

impl RewriteServer {
    pub fn enabled(&self) -> bool {
        self.state == Some(true)
    }
    pub fn opts(&self) -> u32 {
        self.options.unwrap_or(0)
    }

    /// Apache's `config_server_merge`: a `<VirtualHost>` (`add`) over the
    /// main server (`base`). Maps and rules are the virtual host's own
    /// unless it inherits.
    pub fn merge(base: &RewriteServer, add: &RewriteServer) -> RewriteServer {
        if !add.declared {
            return RewriteServer {
                shares_main: true,
                ..base.clone()
            };
        }
        let options = add.options.or(base.options);
        let overlay = |under: &HashMap<String, Arc<RewriteMap>>,
                       over: &HashMap<String, Arc<RewriteMap>>| {
            let mut m = under.clone();
            m.extend(over.iter().map(|(k, v)| (k.clone(), v.clone())));
            m
        };
        let (rules, maps) = match inherits(options.unwrap_or(0), base.opts()) {
            Some(true) => (
                chain(&add.rules, &base.rules),
                overlay(&base.maps, &add.maps),
            ),
            Some(false) => (
                chain(&base.rules, &add.rules),
                overlay(&add.maps, &base.maps),
            ),
            None => (add.rules.clone(), add.maps.clone()),
        };
        RewriteServer {
            state: add.state.or(base.state),
            options,
            rules,
            pending: Vec::new(),
            maps,
            declared: true,
            shares_main: false,
        }
    }
}

/// Whether a directive is read in server context (Apache's
/// `cmd->path == NULL`): the main server or a `<VirtualHost>`, outside any
/// directory section.
fn server_context(w: &Walker<'_>) -> bool {
    !w.ctx.htaccess && w.ctx.path.is_none()
}

/// The context directory of the scope being read: the `.htaccess`
/// directory or section path with a trailing slash; `*If/` inside `<If>`
/// (Apache's pseudo path, which never prefixes a file name).
fn context_directory(w: &Walker<'_>) -> Option<String> {
    if w.ctx.within(SectionKind::If) {
        return Some("*If/".into());
    }
    w.ctx.path.as_ref().map(|p| {
        if p.ends_with('/') {
            p.clone()
        } else {
            format!("{p}/")
        }
    })
}

/// Note that the server being configured holds a mod_rewrite directive
/// (anywhere in it, sections included; not in `.htaccess` files).
fn declare(w: &mut Walker<'_>) {
    if let (false, Some(build)) = (w.ctx.htaccess, w.server.as_deref_mut()) {
        build.current().modules.rewrite.declared = true;
    }
}

/// This scope's slot, created on first use.
fn dir_conf<'c>(w: &Walker<'_>, c: &'c mut DirConf) -> &'c mut PerDirConf {
    let directory = context_directory(w);
    let slot = c.rewrite.conf.get_or_insert_with(|| {
        Arc::new(PerDirConf {
            directory,
            ..Default::default()
        })
    });
    Arc::make_mut(slot)
}

fn run_engine(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    declare(w);
    let on = registry::flag(&inv.words);
    if server_context(w) {
        w.server()?.modules.rewrite.state = Some(on);
    }
    dir_conf(w, c).state = Some(on);
    Ok(())
}

fn run_options(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    declare(w);
    let mut options = 0;
    for word in &inv.words {
        let w_ = word.to_ascii_lowercase();
        options |= match w_.as_str() {
            "inherit" => opt::INHERIT,
            "inheritbefore" => opt::INHERIT_BEFORE,
            "inheritdown" => opt::INHERIT_DOWN,
            "inheritdownbefore" => opt::INHERIT_DOWN_BEFORE,
            "ignoreinherit" => opt::IGNORE_INHERIT,
            "allownoslash" => opt::NOSLASH,
            "allowanyuri" => opt::ANYURI,
            "mergebase" => opt::MERGEBASE,
            "ignorecontextinfo" => opt::IGNORE_CONTEXT_INFO,
            "legacyprefixdocroot" => opt::LEGACY_PREFIX_DOCROOT,
            // `LongURLOptimization` is trunk-only: Apache 2.4 refuses it.
            "unsafeprefixstat" => opt::UNSAFE_PREFIX_STAT,
            _ if w_.starts_with("maxredirects=") => {
                w.warn(inv.origin, "AH00664: RewriteOptions: MaxRedirects option has been removed in favor of the global LimitInternalRecursion directive and will be ignored.");
                0
            }
            _ => return Err(format!("RewriteOptions: unknown option '{word}'")),
        };
    }
    if server_context(w) {
        let s = &mut w.server()?.modules.rewrite;
        s.options = Some(s.opts() | options);
    }
    let d = dir_conf(w, c);
    d.options = Some(d.opts() | options);
    Ok(())
}

fn run_base(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    declare(w);
    if server_context(w) {
        return Err("RewriteBase: only valid in per-directory config files".into());
    }
    let a = &inv.words[0];
    if a.is_empty() {
        return Err("RewriteBase: empty URL not allowed".into());
    }
    if !a.starts_with('/') {
        return Err("RewriteBase: argument is not a valid URL".into());
    }
    dir_conf(w, c).base_url = Some(a.clone());
    Ok(())
}

fn run_cond(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    declare(w);
    let mut warnings = Vec::new();
    let restricted = w.ctx.htaccess;
    let cond = parse::parse_cond(&inv.raw, inv.origin, restricted, &mut |m| warnings.push(m));
    for m in warnings {
        w.warn(inv.origin, m);
    }
    let cond = cond?;
    if server_context(w) {
        w.server()?.modules.rewrite.pending.push(cond);
    } else {
        dir_conf(w, c).pending.push(cond);
    }
    Ok(())
}

fn run_rule(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    declare(w);
    if server_context(w) {
        let s = &mut w.server()?.modules.rewrite;
        let conds = std::mem::take(&mut s.pending);
        let rule = parse::parse_rule(&inv.raw, inv.origin, conds)?;
        Arc::make_mut(&mut s.rules).push(Arc::new(rule));
    } else {
        let d = dir_conf(w, c);
        let conds = std::mem::take(&mut d.pending);
        let rule = parse::parse_rule(&inv.raw, inv.origin, conds)?;
        Arc::make_mut(&mut d.rules).push(Arc::new(rule));
    }
    Ok(())
}

fn run_map(w: &mut Walker<'_>, inv: &Invocation<'_>, _c: &mut DirConf) -> Result<(), String> {
    declare(w);
    let name = inv.words[0].clone();
    let map = RewriteMap::parse(&name, &inv.words[1], &w.env.server_root)?;
    w.server()?.modules.rewrite.maps.insert(name, Arc::new(map));
    Ok(())
}

pub static DIRECTIVES: &[Directive] = &[
    Directive {
        name: "RewriteEngine",
        args: Args::Flag,
        req_override: OR_FILEINFO,
        about: "On or Off to enable or disable (default) the whole rewriting engine",
        run: Run::Handler(run_engine),
    },
    Directive {
        name: "RewriteOptions",
        args: Args::Iterate,
        req_override: OR_FILEINFO,
        about: "List of option strings to set",
        run: Run::Handler(run_options),
    },
    Directive {
        name: "RewriteBase",
        args: Args::Take1,
        req_override: OR_FILEINFO,
        about: "the base URL of the per-directory context",
        run: Run::Handler(run_base),
    },
    Directive {
        name: "RewriteCond",
        args: Args::Raw,
        req_override: OR_FILEINFO,
        about: "an input string and a to be applied regexp-pattern",
        run: Run::Handler(run_cond),
    },
    Directive {
        name: "RewriteRule",
        args: Args::Raw,
        req_override: OR_FILEINFO,
        about: "an URL-applied regexp-pattern and a substitution URL",
        run: Run::Handler(run_rule),
    },
    Directive {
        name: "RewriteMap",
        args: Args::Take23,
        req_override: RSRC_CONF,
        about: "a mapname and a filename and options",
        run: Run::Handler(run_map),
    },
];

pub static MODULE: Module = Module {
    source: "mod_rewrite.c",
    identifier: "rewrite_module",
    builtin: false,
    directives: DIRECTIVES,
};
