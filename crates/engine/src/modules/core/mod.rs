//! mod core: the directives Apache's core owns — `Options`, `AllowOverride`,
//! the sections (`<Directory>`, `<Files>`, `<IfModule>` …), `ErrorDocument`,
//! server-level settings — and the per-directory slot they fill.

pub mod cache_directives;
pub mod error_document;
pub mod if_section;
pub mod options;
pub mod sections;
pub mod server_directives;

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::registry::{
    Args, Directive, Module, Run, ACCESS_CONF, EXEC_ON_READ, OR_ALL, OR_FILEINFO, OR_OPTIONS,
    OR_UNSET, RSRC_CONF,
};
use htaccel_conf::Origin;
use options::{OptionSet, OPT_ALL_WITH_EXTRAS, OPT_NONE, OPT_SYM_LINKS, OPT_UNSET};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Which methods an enclosing `<Limit>`/`<LimitExcept>` covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MethodLimit {
    pub methods: Vec<String>,
    /// `<LimitExcept>`: every method except those listed.
    pub except: bool,
}

/// Where an `ErrorDocument` sends the client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorDocument {
    /// `default`: Apache's built-in page.
    Default,
    /// A text body (the target had a space, or was not a URL).
    Text(String),
    /// A local URL-path: internal redirect.
    Local(String),
    /// A full URL: 302 to it.
    Remote(String),
    /// A text (`text`) or URL with variables, evaluated per request
    /// ([`ErrorDocument::resolve`]).
    Expr {
        expr: Arc<crate::expr::StrExpr>,
        text: bool,
    },
}

/// `ServerSignature`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signature {
    Off,
    On,
    Email,
}

/// What a `<Files>`/`<FilesMatch>` section matches against a basename.
#[derive(Clone, Debug)]
pub enum FilesMatcher {
    Exact(String),
    /// Shell wildcard; `/` never matched by a wildcard.
    Glob(htaccel_conf::fnmatch::Glob),
    Regex(crate::regex_engine::Regex),
}

impl FilesMatcher {
    pub fn matches(&self, basename: &[u8]) -> bool {
        match self {
            FilesMatcher::Exact(s) => s.as_bytes() == basename,
            FilesMatcher::Glob(g) => g.matches(basename),
            FilesMatcher::Regex(r) => r.is_match(basename),
        }
    }
}

/// A `<Files>`/`<FilesMatch>` section with what it configures.
#[derive(Clone, Debug)]
pub struct FilesSection {
    pub matcher: FilesMatcher,
    pub conf: Arc<DirConf>,
    pub origin: Origin,
}

/// `HostnameLookups`: what the client's name is taken to be where a log,
/// `REMOTE_HOST` or a variable shows it (host-based access control looks
/// the name up double-reverse whatever this says).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostnameLookups {
    Off,
    /// The PTR name, unchecked.
    On,
    /// The PTR name only if it resolves back to the address.
    Double,
}

/// The core's per-directory slot (Apache's `core_dir_config`, the parts we use).
#[derive(Clone, Debug)]
pub struct CoreDir {
    pub options: OptionSet,
    /// `HostnameLookups`, where set (unset: `Off`).
    pub hostname_lookups: Option<HostnameLookups>,
    /// `AllowOverride` mask, `OR_UNSET` when not set here.
    pub allow_override: u32,
    /// `AllowOverride Options=` list, `OPT_UNSET` when not set here.
    pub override_opts: u32,
    pub override_list: Option<Arc<HashSet<String>>>,
    pub error_documents: Arc<HashMap<u16, ErrorDocument>>,
    /// `AddDefaultCharset`: `Some(None)` is Off.
    pub add_default_charset: Option<Option<String>>,
    /// `ForceType`: `Some(None)` is `None`.
    pub force_type: Option<Option<String>>,
    /// `SetHandler`: `Some(None)` is `None`.
    pub handler: Option<Option<String>>,
    pub accept_path_info: Option<bool>,
    pub etag: Option<server_directives::ETagSet>,
    pub limit_req_body: Option<u64>,
    pub server_signature: Option<Signature>,
    /// `UseCanonicalName On` (`Some(true)`) or `Off`, where set.
    pub use_canonical_name: Option<bool>,
    /// `UseCanonicalPhysicalPort`, where set.
    pub use_canonical_phys_port: Option<bool>,
    /// `MaxRanges`, `MaxRangeOverlaps`, `MaxRangeReversals`, where set.
    pub max_ranges: Option<crate::http::range::Limit>,
    pub max_overlaps: Option<crate::http::range::Limit>,
    pub max_reversals: Option<crate::http::range::Limit>,
    pub files: Vec<Arc<FilesSection>>,
    /// `<If>`/`<ElseIf>`/`<Else>` sections, in order (Apache's `sec_if`).
    pub if_sections: Vec<Arc<if_section::IfSection>>,
}

impl Default for CoreDir {
    fn default() -> Self {
        Self::for_section()
    }
}

impl CoreDir {
    /// The range limits in force (Apache's defaults where unset).
    pub fn range_limits(&self) -> crate::http::range::RangeLimits {
        let d = crate::http::range::RangeLimits::default();
        crate::http::range::RangeLimits {
            max_ranges: self.max_ranges.unwrap_or(d.max_ranges),
            max_overlaps: self.max_overlaps.unwrap_or(d.max_overlaps),
            max_reversals: self.max_reversals.unwrap_or(d.max_reversals),
        }
    }

    pub fn for_section() -> Self {
        CoreDir {
            hostname_lookups: None,
            options: OptionSet {
                opts: OPT_UNSET,
                add: OPT_NONE,
                remove: OPT_NONE,
            },
            allow_override: OR_UNSET,
            override_opts: OPT_UNSET | OPT_ALL_WITH_EXTRAS,
            override_list: None,
            error_documents: Arc::default(),
            add_default_charset: None,
            force_type: None,
            handler: None,
            accept_path_info: None,
            etag: None,
            limit_req_body: None,
            server_signature: None,
            max_ranges: None,
            max_overlaps: None,
            max_reversals: None,
            use_canonical_name: None,
            use_canonical_phys_port: None,
            files: Vec::new(),
            if_sections: Vec::new(),
        }
    }

    pub fn for_server() -> Self {
        let mut c = Self::for_section();
        c.options.opts = OPT_UNSET | OPT_SYM_LINKS;
        c
    }

    pub fn merge(base: &CoreDir, new: &CoreDir) -> CoreDir {
        let mut c = base.clone();
        c.options = OptionSet::merge(&base.options, &new.options);
        c.hostname_lookups = new.hostname_lookups.or(base.hostname_lookups);
        if new.allow_override & OR_UNSET == 0 {
            c.allow_override = new.allow_override;
        }
        if new.override_opts & OPT_UNSET == 0 {
            c.override_opts = new.override_opts;
        }
        if new.override_list.is_some() {
            c.override_list = new.override_list.clone();
        }
        if !new.error_documents.is_empty() {
            if base.error_documents.is_empty() {
                c.error_documents = new.error_documents.clone();
            } else {
                let mut m = (*base.error_documents).clone();
                m.extend(new.error_documents.iter().map(|(k, v)| (*k, v.clone())));
                c.error_documents = Arc::new(m);
            }
        }
        macro_rules! replace {
            ($($f:ident),*) => { $( if new.$f.is_some() { c.$f = new.$f.clone(); } )* };
        }
        replace!(
            add_default_charset,
            force_type,
            handler,
            accept_path_info,
            limit_req_body,
            server_signature,
            max_ranges,
            max_overlaps,
            max_reversals,
            use_canonical_name,
            use_canonical_phys_port
        );
        c.etag = server_directives::ETagSet::merge(base.etag, new.etag);
        if !new.files.is_empty() {
            c.files.extend(new.files.iter().cloned());
        }
        if !new.if_sections.is_empty() {
            c.if_sections.extend(new.if_sections.iter().cloned());
        }
        c
    }

    /// The options in force (without Apache's bookkeeping bit).
    pub fn opts(&self) -> u32 {
        self.options.opts & !OPT_UNSET
    }
}

fn run_options(w: &mut Walker<'_>, inv: &Invocation<'_>, conf: &mut DirConf) -> Result<(), String> {
    let allowed = if w.ctx.htaccess {
        w.ctx.override_opts
    } else {
        OPT_ALL_WITH_EXTRAS
    };
    conf.core.options.apply_line(&inv.words, allowed)
}

fn run_allow_override(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    conf: &mut DirConf,
) -> Result<(), String> {
    sections::only_in_directory(w, inv, "AllowOverride")?;
    let (mask, opts) = options::parse_allow_override(&inv.words)?;
    conf.core.allow_override = mask;
    if let Some(o) = opts {
        conf.core.override_opts = o;
    }
    Ok(())
}

fn run_allow_override_list(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    conf: &mut DirConf,
) -> Result<(), String> {
    sections::only_in_directory(w, inv, "AllowOverrideList")?;
    let mut list = HashSet::new();
    for name in &inv.words {
        if name.eq_ignore_ascii_case("none") {
            if inv.words.len() != 1 {
                return Err("'None' not allowed with other directives in AllowOverrideList".into());
            }
            break;
        }
        match crate::registry::find(&w.env.modules, name) {
            None => w.warn(
                inv.origin,
                format!("Discarding unrecognized directive `{name}' in AllowOverrideList"),
            ),
            Some((_, d)) if d.req_override & (OR_ALL | ACCESS_CONF) == 0 => w.warn(
                inv.origin,
                format!("Discarding directive `{name}' not allowed in AllowOverrideList"),
            ),
            Some((_, d)) => {
                list.insert(d.name.to_ascii_lowercase());
            }
        }
    }
    conf.core.override_list = Some(Arc::new(list));
    Ok(())
}

fn run_error_document(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    conf: &mut DirConf,
) -> Result<(), String> {
    let code: u16 = inv.words[0]
        .parse()
        .ok()
        .filter(|c| (100..=599).contains(c))
        .ok_or_else(|| "Unsupported HTTP response code ".to_string() + &inv.words[0])?;
    let target = &inv.words[1];
    let doc = if target.eq_ignore_ascii_case("default") {
        ErrorDocument::Default
    } else if target.contains(' ') {
        ErrorDocument::Text(target.clone())
    } else if target.starts_with('/') {
        ErrorDocument::Local(target.clone())
    } else if is_url(target) {
        ErrorDocument::Remote(target.clone())
    } else {
        ErrorDocument::Text(target.clone())
    };
    let doc = error_document::compile(doc, w.ctx.htaccess)?;
    Arc::make_mut(&mut conf.core.error_documents).insert(code, doc);
    Ok(())
}

fn run_add_default_charset(
    _w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    conf: &mut DirConf,
) -> Result<(), String> {
    let v = &inv.words[0];
    conf.core.add_default_charset = Some(if v.eq_ignore_ascii_case("off") {
        None
    } else if v.eq_ignore_ascii_case("on") {
        // Apache's DEFAULT_ADD_DEFAULT_CHARSET_NAME.
        Some("iso-8859-1".to_string())
    } else {
        Some(v.clone())
    });
    Ok(())
}

fn none_or(v: &str) -> Option<String> {
    if v.eq_ignore_ascii_case("none") {
        None
    } else {
        Some(v.to_string())
    }
}

fn run_force_type(
    _w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    conf: &mut DirConf,
) -> Result<(), String> {
    conf.core.force_type = Some(none_or(&inv.words[0]).map(|t| t.to_ascii_lowercase()));
    Ok(())
}

/// `DefaultType`: gone in 2.4; any value but `None`/`Off` is ignored with
/// a warning, as Apache does.
fn run_default_type(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _conf: &mut DirConf,
) -> Result<(), String> {
    let v = &inv.words[0];
    if !v.eq_ignore_ascii_case("off") && !v.eq_ignore_ascii_case("none") {
        w.warn(
            inv.origin,
            format!(
                "AH00117: Ignoring deprecated use of DefaultType in line {} of {}.",
                inv.origin.line, inv.origin.file
            ),
        );
    }
    Ok(())
}

fn run_set_handler(
    _w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    conf: &mut DirConf,
) -> Result<(), String> {
    conf.core.handler = Some(none_or(&inv.words[0]).as_deref().map(handler_name));
    Ok(())
}

/// A handler as `SetHandler` names it: lower-cased, except a value that
/// begins with `proxy:unix` (exactly so), whose socket path keeps its case
/// (Apache's `core_override_type`).
fn handler_name(word: &str) -> String {
    if word.starts_with("proxy:unix") {
        word.to_string()
    } else {
        word.to_ascii_lowercase()
    }
}

fn run_accept_path_info(
    _w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    conf: &mut DirConf,
) -> Result<(), String> {
    conf.core.accept_path_info = match inv.words[0].to_ascii_lowercase().as_str() {
        "on" => Some(true),
        "off" => Some(false),
        "default" => None,
        _ => return Err("AcceptPathInfo must be set to on, off or default".into()),
    };
    Ok(())
}

fn run_limit_request_body(
    _w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    conf: &mut DirConf,
) -> Result<(), String> {
    let v = inv.words[0]
        .parse::<u64>()
        .map_err(|_| "LimitRequestBody argument is not parsable.".to_string())?;
    conf.core.limit_req_body = Some(v);
    Ok(())
}

fn run_server_signature(
    _w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    conf: &mut DirConf,
) -> Result<(), String> {
    conf.core.server_signature = Some(match inv.words[0].to_ascii_lowercase().as_str() {
        "on" => Signature::On,
        "off" => Signature::Off,
        "email" => Signature::Email,
        _ => return Err("ServerSignature: use one of: off | on | email".into()),
    });
    Ok(())
}

fn run_error(_w: &mut Walker<'_>, inv: &Invocation<'_>, _conf: &mut DirConf) -> Result<(), String> {
    Err(strip_quotes(&inv.raw))
}

/// Apache's `ap_is_url`: a scheme (letters, digits, `+`, `-`, `.`) and a colon.
fn is_url(s: &str) -> bool {
    match s.find(':') {
        Some(0) | None => false,
        Some(i) => s[..i]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b)),
    }
}

/// Directives of the core that a `.htaccess` may hold, or that configure
/// directories in the main config.
pub static DIRECTIVES: &[Directive] = &[
    Directive { name: "Options", args: Args::Argv, req_override: OR_OPTIONS | ACCESS_CONF | RSRC_CONF, about: "Set a number of attributes for a given directory", run: Run::Handler(run_options) },
    Directive { name: "AllowOverride", args: Args::Argv, req_override: ACCESS_CONF, about: "Controls what groups of directives can be configured by per-directory config files", run: Run::Handler(run_allow_override) },
    Directive { name: "AllowOverrideList", args: Args::Argv, req_override: ACCESS_CONF, about: "Controls what individual directives can be configured by per-directory config files", run: Run::Handler(run_allow_override_list) },
    Directive { name: "ErrorDocument", args: Args::Take2, req_override: OR_FILEINFO | ACCESS_CONF | RSRC_CONF, about: "Change responses for HTTP errors", run: Run::Handler(run_error_document) },
    Directive { name: "AddDefaultCharset", args: Args::Take1, req_override: OR_FILEINFO | ACCESS_CONF | RSRC_CONF, about: "The name of the default charset to add to any Content-Type without one or 'Off' to disable", run: Run::Handler(run_add_default_charset) },
    Directive { name: "ForceType", args: Args::Take1, req_override: OR_FILEINFO | ACCESS_CONF, about: "a mime type that overrides other configured type", run: Run::Handler(run_force_type) },
    Directive { name: "DefaultType", args: Args::Take1, req_override: OR_FILEINFO | ACCESS_CONF | RSRC_CONF, about: "the default media type for otherwise untyped files (DEPRECATED)", run: Run::Handler(run_default_type) },
    Directive { name: "SetHandler", args: Args::Take1, req_override: OR_FILEINFO | ACCESS_CONF | RSRC_CONF, about: "a handler name that overrides any other configured handler", run: Run::Handler(run_set_handler) },
    Directive { name: "AcceptPathInfo", args: Args::Take1, req_override: OR_FILEINFO | ACCESS_CONF | RSRC_CONF, about: "Set to on or off for PATH_INFO to be accepted by handlers, or default for the per-handler preference", run: Run::Handler(run_accept_path_info) },
    Directive { name: "FileETag", args: Args::Raw, req_override: OR_FILEINFO | ACCESS_CONF | RSRC_CONF, about: "Specify components used to construct a file's ETag", run: Run::Handler(server_directives::run_file_etag) },
    Directive { name: "LimitRequestBody", args: Args::Take1, req_override: OR_ALL | ACCESS_CONF | RSRC_CONF, about: "Limit (in bytes) on maximum size of request message body", run: Run::Handler(run_limit_request_body) },
    Directive { name: "ServerSignature", args: Args::Take1, req_override: OR_ALL | ACCESS_CONF | RSRC_CONF, about: "En-/disable server signature (on|off|email)", run: Run::Handler(run_server_signature) },
    Directive { name: "Error", args: Args::Raw, req_override: OR_ALL | ACCESS_CONF | RSRC_CONF, about: "", run: Run::Handler(run_error) },
    // Sections
    Directive { name: "<Directory", args: Args::Section, req_override: RSRC_CONF, about: "Container for directives affecting resources located in the specified directories", run: Run::Handler(sections::run_directory) },
    Directive { name: "<DirectoryMatch", args: Args::Section, req_override: RSRC_CONF, about: "Container for directives affecting resources located in the specified directories", run: Run::Handler(sections::run_directory_match) },
    Directive { name: "<Location", args: Args::Section, req_override: RSRC_CONF, about: "Container for directives affecting resources accessed through the specified URL paths", run: Run::Handler(sections::run_location) },
    Directive { name: "<LocationMatch", args: Args::Section, req_override: RSRC_CONF, about: "Container for directives affecting resources accessed through the specified URL paths", run: Run::Handler(sections::run_location_match) },
    Directive { name: "<Files", args: Args::Section, req_override: OR_ALL | ACCESS_CONF | RSRC_CONF, about: "Container for directives affecting files matching specified patterns", run: Run::Handler(sections::run_files) },
    Directive { name: "<FilesMatch", args: Args::Section, req_override: OR_ALL | ACCESS_CONF | RSRC_CONF, about: "Container for directives affecting files matching specified patterns", run: Run::Handler(sections::run_files_match) },
    Directive { name: "<VirtualHost", args: Args::Section, req_override: RSRC_CONF, about: "Container to map directives to a particular virtual host, takes one or more host addresses", run: Run::Handler(sections::run_virtual_host) },
    Directive { name: "<If", args: Args::Section, req_override: OR_ALL | ACCESS_CONF | RSRC_CONF, about: "Container for directives to be conditionally applied", run: Run::Handler(if_section::run_if) },
    Directive { name: "<ElseIf", args: Args::Section, req_override: OR_ALL | ACCESS_CONF | RSRC_CONF, about: "Container for directives to be conditionally applied", run: Run::Handler(if_section::run_else_if) },
    Directive { name: "<Else", args: Args::Section, req_override: OR_ALL | ACCESS_CONF | RSRC_CONF, about: "Container for directives to be conditionally applied", run: Run::Handler(if_section::run_else) },
    Directive { name: "<IfModule", args: Args::Section, req_override: OR_ALL | ACCESS_CONF | RSRC_CONF | EXEC_ON_READ, about: "Container for directives based on existence of specified modules", run: Run::Handler(sections::run_if_module) },
    Directive { name: "<IfDefine", args: Args::Section, req_override: OR_ALL | ACCESS_CONF | RSRC_CONF | EXEC_ON_READ, about: "Container for directives based on existence of command line defines", run: Run::Handler(sections::run_if_define) },
    Directive { name: "<IfVersion", args: Args::Section, req_override: OR_ALL | ACCESS_CONF | RSRC_CONF | EXEC_ON_READ, about: "a comparison operator, a version (and a delimiter)", run: Run::Handler(sections::run_if_version) },
    Directive { name: "<IfFile", args: Args::Section, req_override: OR_ALL | ACCESS_CONF | RSRC_CONF | EXEC_ON_READ, about: "Container for directives based on existence of files on disk", run: Run::Handler(sections::run_if_file) },
    Directive { name: "<IfDirective", args: Args::Section, req_override: OR_ALL | ACCESS_CONF | RSRC_CONF | EXEC_ON_READ, about: "Container for directives based on existence of named directive", run: Run::Handler(sections::run_if_directive) },
    Directive { name: "<IfSection", args: Args::Section, req_override: OR_ALL | ACCESS_CONF | RSRC_CONF | EXEC_ON_READ, about: "Container for directives based on existence of named section", run: Run::Handler(sections::run_if_section) },
    Directive { name: "<Limit", args: Args::Section, req_override: OR_LIMIT_OR_AUTH | ACCESS_CONF, about: "Container for authentication directives when accessed using specified HTTP methods", run: Run::Handler(sections::run_limit) },
    Directive { name: "<LimitExcept", args: Args::Section, req_override: OR_LIMIT_OR_AUTH | ACCESS_CONF, about: "Container for authentication directives to be excluded when accessing using specified HTTP methods", run: Run::Handler(sections::run_limit_except) },
    Directive { name: "Include", args: Args::Take1, req_override: RSRC_CONF | ACCESS_CONF | EXEC_ON_READ, about: "Name(s) of the config file(s) to be included; fails if the wildcard does not match at least one file", run: Run::Handler(sections::run_include) },
    Directive { name: "IncludeOptional", args: Args::Take1, req_override: RSRC_CONF | ACCESS_CONF | EXEC_ON_READ, about: "Name or pattern of the config file(s) to be included; ignored if the file does not exist or the pattern does not match any files", run: Run::Handler(sections::run_include_optional) },
];

const OR_LIMIT_OR_AUTH: u32 = crate::registry::OR_LIMIT | crate::registry::OR_AUTHCFG;

/// Text of an `Error` directive: the argument without its quotes.
fn strip_quotes(raw: &str) -> String {
    let t = raw.trim();
    let t = t.strip_prefix('"').unwrap_or(t);
    t.strip_suffix('"').unwrap_or(t).to_string()
}

pub static MODULE: Module = Module {
    source: "core.c",
    identifier: "core_module",
    builtin: true,
    directives: DIRECTIVES,
};

/// Server-level directives of the core (and of the MPM, `mod_so`,
/// `mod_unixd`, `mod_log_config`), kept in their own table so that the
/// per-directory table above stays readable.
pub static SERVER_MODULE: Module = Module {
    source: "http_core.c",
    identifier: "http_module",
    builtin: true,
    directives: server_directives::DIRECTIVES,
};

/// The bit of a method in a method mask (`AP_METHOD_BIT << method_number`).
pub fn method_bit(method: &str) -> u64 {
    crate::http::method::bit(method)
}
