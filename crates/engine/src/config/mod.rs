//! Reading configuration: the walk over a syntax tree that hands each
//! directive to its handler, for the main config and for `.htaccess` alike.
//!
//! This is Apache's `ap_walk_config` + `invoke_cmd`: `${VAR}` substitution,
//! lookup in the registry among the loaded modules, the context and
//! `AllowOverride` checks with Apache's wording, then the handler. The
//! walker carries what a handler may need: the server being built (main
//! config only), the override mask in force, the enclosing sections.

pub mod server;

use crate::dirconf::DirConf;
use crate::registry::{self, Args, Module, Run, NONFATAL_OVERRIDE, NONFATAL_UNKNOWN};
use htaccel_conf::{Node, Origin};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

pub use server::{ServerBuild, ServerConf};

/// What every configuration file is read against: the loaded modules,
/// `Define`d names, the server root.
#[derive(Clone)]
pub struct Environment {
    pub modules: Vec<&'static Module>,
    pub defines: HashMap<String, String>,
    pub server_root: PathBuf,
    /// The files `Include` read, for `-t -D DUMP_INCLUDES`.
    pub includes: IncludeLog,
    /// Each module's state while reading (`modules::read_slots!`).
    pub read: ReadSlots,
    /// Modules loaded that htaccel stands in for: their settings are known,
    /// `<IfModule>` finds them absent (the stand-ins of the modules that
    /// have none of their own, see ARCHITECTURE.md).
    pub stand_ins: Vec<&'static Module>,
}

/// `ReadSlots` with one field per module of `modules::read_slots!`.
macro_rules! read_slots_struct {
    ($($field:ident: $slot:ty,)*) => {
        /// Each module's state while a configuration is read.
        #[derive(Clone, Default)]
        pub struct ReadSlots {
            $(pub $field: $slot,)*
        }
    };
}

crate::modules::read_slots!(read_slots_struct);

/// The files `Include`/`IncludeOptional` read, in order, with their depth
/// and the line Apache shows for each: that of the latest `Include`
/// directive begun when the file was opened (for the second file of a
/// wildcard, an `Include` inside the first one, if it had one).
#[derive(Clone, Debug, Default)]
pub struct IncludeLog {
    /// (depth below the main file, line shown, file).
    pub files: Vec<(usize, u32, PathBuf)>,
    pub depth: usize,
    pub last_line: u32,
}

impl Environment {
    pub fn is_loaded(&self, name: &str) -> bool {
        self.modules.iter().any(|m| m.is_named(name))
    }
}

/// A container a directive sits in, innermost last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SectionKind {
    VirtualHost,
    Directory,
    Location,
    /// mod_proxy's `<Proxy>`, `<ProxyMatch>`.
    Proxy,
    Files,
    If,
    Limit,
    /// `<RequireAll>`, `<RequireAny>`, `<RequireNone>`.
    Authz,
}

/// The context a directive is read in.
#[derive(Clone)]
pub struct Context {
    /// Apache's `cmd->override`: which `req_override` bits are acceptable here.
    pub override_mask: u32,
    /// Options a `.htaccess` may name (`AllowOverride Options=…`).
    pub override_opts: u32,
    /// Directive names allowed by `AllowOverrideList`, lower-case.
    pub override_list: Option<Arc<HashSet<String>>>,
    pub htaccess: bool,
    pub sections: Vec<SectionKind>,
    /// Name of the innermost container as written (`Files`), for errors.
    pub parent: Option<String>,
    /// Methods limited by an enclosing `<Limit>`/`<LimitExcept>`.
    pub limit: Option<crate::modules::core::MethodLimit>,
    /// Apache's `cmd->path`: the directory of the `.htaccess` or the path
    /// of the enclosing `<Directory>`/`<Files>`/`<Location>`; `None` at
    /// server level (mod_rewrite's context directory comes from it).
    pub path: Option<String>,
}

impl Context {
    pub fn main_server() -> Self {
        Context {
            override_mask: registry::RSRC_CONF | registry::OR_ALL,
            override_opts: crate::modules::core::options::OPT_ALL_WITH_EXTRAS,
            override_list: None,
            htaccess: false,
            sections: Vec::new(),
            parent: None,
            limit: None,
            path: None,
        }
    }
    pub fn within(&self, kind: SectionKind) -> bool {
        self.sections.contains(&kind)
    }
}

/// One directive or section as its handler sees it.
pub struct Invocation<'n> {
    /// The name as written.
    pub name: &'n str,
    /// Arguments after `${VAR}` substitution, split as Apache splits them.
    pub words: Vec<String>,
    /// Argument text after substitution.
    pub raw: String,
    pub origin: &'n Origin,
    /// Children of a section.
    pub children: &'n [Node],
    /// Whether the section's closing tag was found.
    pub closed: bool,
    /// Whether the closing line was exactly `</Name>` (a true parse-time
    /// conditional ends only on such a line).
    pub closed_exactly: bool,
    /// The body of a section read as text ([`htaccel_conf::VERBATIM_SECTIONS`]).
    pub verbatim: Option<&'n [htaccel_conf::VerbatimLine]>,
}

/// A warning or notice raised while reading configuration.
#[derive(Clone, Debug)]
pub struct Notice {
    pub origin: Origin,
    pub message: String,
}

/// An error that stops reading, with where it happened.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigError {
    pub origin: Origin,
    /// The directive's message, Apache's wording.
    pub message: String,
    /// Raised while the file was read (a directive that runs on read,
    /// [`registry::EXEC_ON_READ`], or a macro's text that does not parse):
    /// Apache reports those in one line, `apache2: Syntax error on line N
    /// of FILE: …`, and the others as `AH00526`.
    pub read_time: bool,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.origin, self.message)
    }
}

/// The state of one configuration read.
pub struct Walker<'a> {
    pub env: &'a mut Environment,
    /// The server being built; `None` while compiling a `.htaccess`.
    pub server: Option<&'a mut ServerBuild>,
    pub ctx: Context,
    pub notices: Vec<Notice>,
    /// An error from inside a section's body, kept with its own origin
    /// while the section's handler returns (see [`Walker::nested`]).
    nested_error: Option<ConfigError>,
    /// This walk is Apache's reading of the file: only what runs on read
    /// ([`registry::EXEC_ON_READ`]) runs (see [`Walker::read_modules`]).
    reading: bool,
    /// The modules a directive may belong to, when more than those loaded
    /// so far: every module the reading loaded (see [`Walker::naming`]).
    named: Option<Vec<&'static crate::registry::Module>>,
}

impl<'a> Walker<'a> {
    pub fn new(
        env: &'a mut Environment,
        server: Option<&'a mut ServerBuild>,
        ctx: Context,
    ) -> Self {
        Walker {
            env,
            server,
            ctx,
            notices: Vec::new(),
            nested_error: None,
            reading: false,
            named: None,
        }
    }

    /// The modules loaded once Apache has read `nodes`. Apache reads the
    /// main configuration first, running `LoadModule`, `Define`,
    /// `Include` and the `<If…>` tests as it meets them
    /// ([`registry::EXEC_ON_READ`]), and runs the other directives after,
    /// so a directive may come before the `LoadModule` of its module.
    /// A configuration that cannot be read stops this early: the walk that
    /// follows reports why.
    pub fn read_modules(
        env: &Environment,
        nodes: &[Node],
    ) -> Vec<&'static crate::registry::Module> {
        let mut env = env.clone();
        let mut scratch = ServerBuild::new();
        let mut walker = Walker::new(&mut env, Some(&mut scratch), Context::main_server());
        walker.reading = true;
        let _ = walker.walk(nodes, &mut DirConf::default());
        env.modules
    }

    /// Name directives by `modules` (what [`Walker::read_modules`] found),
    /// while `<IfModule>` and `<IfDirective>` still see the modules
    /// loaded so far, as Apache's reading did.
    pub fn naming(mut self, modules: Vec<&'static crate::registry::Module>) -> Self {
        self.named = Some(modules);
        self
    }

    /// Whether the module `name` is loaded once the whole configuration is
    /// read (Apache runs `LoadModule` as it reads, before any other
    /// directive runs), wherever its `LoadModule` line stands.
    pub fn loaded_by_reading(&self, name: &str) -> bool {
        match &self.named {
            Some(modules) => modules.iter().any(|m| m.is_named(name)),
            None => self.env.is_loaded(name),
        }
    }

    pub fn warn(&mut self, origin: &Origin, message: impl Into<String>) {
        self.notices.push(Notice {
            origin: origin.clone(),
            message: message.into(),
        });
    }

    /// Run every node of `nodes` into `conf`.
    pub fn walk(&mut self, nodes: &[Node], conf: &mut DirConf) -> Result<(), ConfigError> {
        for node in nodes {
            self.dispatch(node, conf)?;
        }
        Ok(())
    }

    /// Run `nodes` inside a nested section: `ctx` is in force for them and
    /// restored afterwards.
    pub fn walk_nested(
        &mut self,
        nodes: &[Node],
        conf: &mut DirConf,
        kind: SectionKind,
        section_name: &str,
    ) -> Result<(), ConfigError> {
        let saved = self.ctx.clone();
        self.ctx.sections.push(kind);
        self.ctx.parent = Some(section_name.to_string());
        let result = self.walk(nodes, conf);
        self.ctx = saved;
        result
    }

    /// Hand an error from a section's body back through the section's
    /// handler, keeping the file and line where it happened.
    pub fn nested(&mut self, e: ConfigError) -> String {
        let message = e.message.clone();
        self.nested_error = Some(e);
        message
    }

    /// The main server (or `<VirtualHost>`) being configured. Only in the
    /// main config; directives that need it are `RSRC_CONF` and so never
    /// reach their handler from a `.htaccess`.
    pub fn server(&mut self) -> Result<&mut ServerConf, String> {
        match self.server.as_deref_mut() {
            Some(b) => Ok(b.current()),
            None => Err("not allowed here".into()),
        }
    }

    fn dispatch(&mut self, node: &Node, conf: &mut DirConf) -> Result<(), ConfigError> {
        crate::expr::set_ssl_vars(self.env.is_loaded("ssl_module"));
        let (name, raw, origin, children, closed, lookup_name) = match node {
            Node::Directive(d) => (
                d.name.as_str(),
                d.raw_args.as_str(),
                &d.origin,
                &[][..],
                true,
                d.name.clone(),
            ),
            Node::Section(s) => (
                s.name.as_str(),
                s.raw_args.as_str(),
                &s.origin,
                &s.children[..],
                s.closed,
                format!("<{}", s.name),
            ),
        };
        let (missing_gt, closed_exactly, verbatim) = match node {
            Node::Section(s) => (s.missing_gt, s.closed_exactly(), s.verbatim.as_deref()),
            Node::Directive(_) => (false, true, None),
        };
        let err = |message: String| ConfigError {
            origin: origin.clone(),
            message,
            read_time: false,
        };
        if self.reading {
            let on_read = registry::find(&self.env.modules, &lookup_name)
                .is_some_and(|(_, d)| d.req_override & registry::EXEC_ON_READ != 0);
            if !on_read {
                // What runs later is not run; a section's body is still
                // read, for what runs on read inside it.
                return match node {
                    Node::Section(s) => self.walk(&s.children, conf),
                    Node::Directive(_) => Ok(()),
                };
            }
        }
        let modules = self.named.as_deref().unwrap_or(&self.env.modules);
        let found = registry::find(modules, &lookup_name)
            .or_else(|| registry::find(&self.env.stand_ins, &lookup_name));
        let Some((_module, directive)) = found else {
            if self.ctx.htaccess && self.ctx.override_mask & NONFATAL_UNKNOWN != 0 {
                self.warn(origin, format!("Unknown directive {lookup_name} perhaps misspelled or defined by a module not included in the server configuration"));
                return Ok(());
            }
            return Err(err(format!(
                "Invalid command '{lookup_name}', perhaps misspelled or defined by a module not included in the server configuration"
            )));
        };
        let on_read = directive.req_override & registry::EXEC_ON_READ != 0;
        let err = |message: String| ConfigError {
            read_time: on_read,
            ..err(message)
        };
        let listed = self
            .ctx
            .override_list
            .as_ref()
            .is_some_and(|l| l.contains(&directive.name.to_ascii_lowercase()));
        if self.ctx.override_mask & directive.req_override == 0 && !listed {
            if self.ctx.htaccess && self.ctx.override_mask & NONFATAL_OVERRIDE != 0 {
                self.warn(
                    origin,
                    format!("{} in .htaccess forbidden by AllowOverride", directive.name),
                );
                return Ok(());
            }
            return Err(err(match &self.ctx.parent {
                Some(p) => format!("{} not allowed in <{}> context", directive.name, p),
                None => format!("{} not allowed here", directive.name),
            }));
        }
        if missing_gt {
            return Err(err(format!("{lookup_name}> directive missing closing '>'")));
        }
        let raw = self.substitute(raw, origin);
        let words = if directive.args == Args::Raw {
            Vec::new()
        } else {
            htaccel_conf::split_args(&raw)
        };
        registry::check_arity(directive, &words, &raw).map_err(err)?;
        let inv = Invocation {
            name,
            words,
            raw,
            origin,
            children,
            closed,
            closed_exactly,
            verbatim,
        };
        let ran = match directive.run {
            Run::Handler(run) => run(self, &inv, conf),
            Run::WithoutEffect => Ok(()),
            Run::Unsupported => Err(format!("{} is not supported by htaccel yet", inv.name)),
            Run::DefaultOnly { default, missing } => {
                let given = if directive.args == Args::Raw {
                    htaccel_conf::split_args(&inv.raw).join(" ")
                } else {
                    inv.words.join(" ")
                };
                if given.eq_ignore_ascii_case(default) {
                    Ok(())
                } else {
                    Err(format!(
                        "{name} {given} is not supported by htaccel yet ({missing}); only {name} {default}, Apache's default, is",
                        name = inv.name
                    ))
                }
            }
        };
        ran.map_err(|message| {
            self.nested_error.take().unwrap_or_else(|| ConfigError {
                origin: origin.clone(),
                message,
                read_time: on_read,
            })
        })
    }

    /// Apache's `ap_resolve_env`: `${NAME}` from `Define`d names, else from
    /// the process environment; unknown names stay as written (with a warning).
    fn substitute(&mut self, raw: &str, origin: &Origin) -> String {
        if !raw.contains("${") {
            return raw.to_string();
        }
        let mut out = String::with_capacity(raw.len());
        let mut rest = raw;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            match after.find('}') {
                Some(end) => {
                    let name = &after[..end];
                    if let Some(v) = self.env.defines.get(name) {
                        out.push_str(v);
                    } else if let Ok(v) = std::env::var(name) {
                        out.push_str(&v);
                    } else {
                        self.warn(
                            origin,
                            format!("Config variable ${{{name}}} is not defined"),
                        );
                        out.push_str(&rest[start..start + 3 + end]);
                    }
                    rest = &after[end + 1..];
                }
                None => {
                    out.push_str(&rest[start..]);
                    rest = "";
                }
            }
        }
        out.push_str(rest);
        out
    }
}
