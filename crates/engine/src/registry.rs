//! The directive registry: one table entry per directive, declared once in
//! the module that owns it, and the one function that checks a directive
//! before its handler runs.
//!
//! Apache keeps every fact about a directive in its module's `command_rec`
//! table (name, argument shape, where it may appear, which `AllowOverride`
//! class it needs) and checks all of them in one place (`invoke_cmd`). We
//! copy that shape: the main config and every `.htaccess` go through
//! [`invoke`], so a directive is accepted or refused in the same way
//! wherever it appears, and `<IfModule>` consults the same table.

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;

/// `AllowOverride Limit`: access control by host (Order, Allow, Deny).
pub const OR_LIMIT: u32 = 1;
/// `AllowOverride Options`.
pub const OR_OPTIONS: u32 = 2;
/// `AllowOverride FileInfo`: document types, rewriting, headers, errors.
pub const OR_FILEINFO: u32 = 4;
/// `AllowOverride AuthConfig`: authentication and authorization.
pub const OR_AUTHCFG: u32 = 8;
/// `AllowOverride Indexes`: directory indexing, expiry.
pub const OR_INDEXES: u32 = 16;
/// Set while `AllowOverride` was never configured for a directory.
pub const OR_UNSET: u32 = 32;
/// Allowed inside `<Directory>`/`<Location>`/`<Files>` in the main config.
pub const ACCESS_CONF: u32 = 64;
/// Allowed at server and `<VirtualHost>` level.
pub const RSRC_CONF: u32 = 128;
/// Run while the configuration is read, before any other directive
/// (`LoadModule`, `Define`, `Include`, the `<If…>` tests): Apache's
/// `EXEC_ON_READ`.
pub const EXEC_ON_READ: u32 = 256;
/// `AllowOverride Nonfatal=Override`.
pub const NONFATAL_OVERRIDE: u32 = 512;
/// `AllowOverride Nonfatal=Unknown`.
pub const NONFATAL_UNKNOWN: u32 = 1024;
/// `AllowOverride Nonfatal=All`.
pub const NONFATAL_ALL: u32 = NONFATAL_OVERRIDE | NONFATAL_UNKNOWN;
/// Every `.htaccess` class: a directive declaring all five is allowed under
/// any non-empty `AllowOverride`.
pub const OR_ALL: u32 = OR_LIMIT | OR_OPTIONS | OR_FILEINFO | OR_AUTHCFG | OR_INDEXES;

/// How a directive's arguments are split and counted (Apache's `args_how`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Args {
    /// The handler gets the raw argument text and splits it itself.
    Raw,
    /// Any number of words, including none.
    Argv,
    NoArgs,
    Take1,
    Take2,
    Take12,
    Take3,
    Take23,
    Take123,
    Take13,
    /// One or more words; the handler runs once per word.
    Iterate,
    /// A first word, then one or more; the handler runs once per later word.
    Iterate2,
    /// `On` or `Off`.
    Flag,
    /// A `<Section>`: the handler gets the raw arguments and the children.
    Section,
}

/// What reading a directive does: its handler, or one of the two answers
/// htaccel gives to directives it has no handler for. Which one is a
/// property of the table entry, so that `htaccel check` can list them.
#[derive(Clone, Copy)]
pub enum Run {
    Handler(RunFn),
    /// Accepted with no effect (process tuning Apache's MPM reads, files
    /// only Apache's runtime uses).
    WithoutEffect,
    /// Refused when read: "not supported by htaccel yet".
    Unsupported,
    /// A setting htaccel has only at Apache's default: that value (its
    /// words, compared without case) is accepted, since it is what
    /// htaccel does; any other is refused with `missing`, what htaccel
    /// would have to do for it.
    DefaultOnly {
        default: &'static str,
        missing: &'static str,
    },
}

/// The handler of a directive. It receives the walker (the state of the
/// configuration being read), the invocation (name, words, origin,
/// children) and the per-directory configuration being built.
pub type RunFn = fn(&mut Walker<'_>, &Invocation<'_>, &mut DirConf) -> Result<(), String>;

/// One directive, with everything there is to know about it.
pub struct Directive {
    /// Apache's spelling; lookup is case-insensitive.
    pub name: &'static str,
    pub args: Args,
    /// Where it may appear: `RSRC_CONF`, `ACCESS_CONF` and the `OR_*`
    /// classes that allow it in `.htaccess`.
    pub req_override: u32,
    /// One line of help, printed after an arity error.
    pub about: &'static str,
    pub run: Run,
}

/// A module: a named group of directives. `<IfModule>` accepts both
/// `name` forms Apache accepts (`mod_rewrite.c` and `rewrite_module`).
pub struct Module {
    /// Source-file name, e.g. `mod_rewrite.c` (`core.c` for the core).
    pub source: &'static str,
    /// Module identifier, e.g. `rewrite_module`.
    pub identifier: &'static str,
    /// Always present, as modules compiled into Debian's `apache2` are.
    pub builtin: bool,
    pub directives: &'static [Directive],
}

impl Module {
    /// Whether `<IfModule name>` names this module.
    pub fn is_named(&self, name: &str) -> bool {
        name.eq_ignore_ascii_case(self.source) || name == self.identifier
    }
}

/// Find a directive by name among the loaded modules.
pub fn find<'m>(modules: &[&'m Module], name: &str) -> Option<(&'m Module, &'m Directive)> {
    modules.iter().find_map(|m| {
        m.directives
            .iter()
            .find(|d| d.name.eq_ignore_ascii_case(name))
            .map(|d| (*m, d))
    })
}

/// Split the argument text as Apache does for `args` and check the count,
/// with Apache's wording for a wrong count.
pub fn check_arity(d: &Directive, words: &[String], raw: &str) -> Result<(), String> {
    let n = words.len();
    let about = if d.about.is_empty() {
        String::new()
    } else {
        format!(", {}", d.about)
    };
    let bad = |what: &str| Err(format!("{} {}{}", d.name, what, about));
    match d.args {
        Args::Raw | Args::Argv | Args::Section => Ok(()),
        Args::NoArgs if !raw.trim().is_empty() => Err(format!("{} takes no arguments", d.name)),
        Args::NoArgs => Ok(()),
        Args::Take1 if n != 1 => bad("takes one argument"),
        Args::Take2 if n != 2 => bad("takes two arguments"),
        Args::Take12 if !(1..=2).contains(&n) => bad("takes 1-2 arguments"),
        Args::Take3 if n != 3 => bad("takes three arguments"),
        Args::Take23 if !(2..=3).contains(&n) => bad("takes two or three arguments"),
        Args::Take123 if !(1..=3).contains(&n) => bad("takes one, two or three arguments"),
        Args::Take13 if !(n == 1 || n == 3) => bad("takes one or three arguments"),
        Args::Iterate if n == 0 => bad("requires at least one argument"),
        Args::Iterate2 if n < 2 => bad("requires at least two arguments"),
        Args::Flag => {
            let w = words.first().map(String::as_str).unwrap_or("");
            if w.eq_ignore_ascii_case("on") || w.eq_ignore_ascii_case("off") {
                Ok(())
            } else {
                Err(format!("{} must be On or Off", d.name))
            }
        }
        _ => Ok(()),
    }
}

/// Parse an `On`/`Off` word already checked by [`check_arity`].
pub fn flag(words: &[String]) -> bool {
    !words.first().is_some_and(|w| w.eq_ignore_ascii_case("off"))
}
