//! Directives that Apache modules loaded by the configuration provide but
//! htaccel does not implement yet. They are registered with their real
//! contexts and override classes, so that "not allowed here" is answered as
//! Apache answers it; where Apache would accept them, htaccel refuses them
//! loudly (the file fails with a 500 and an error-log line naming the
//! directive) rather than ignoring rules a site relies on.

use crate::registry::{Args, Directive, Module, Run, ACCESS_CONF, OR_FILEINFO, RSRC_CONF};
use crate::request::Ctx;

/// Nothing to carry: the directives here never configure anything.
#[derive(Clone, Debug, Default)]
pub struct UnsupportedDir;

impl UnsupportedDir {
    pub fn merge(_base: &UnsupportedDir, _new: &UnsupportedDir) -> UnsupportedDir {
        UnsupportedDir
    }
}

/// Whether `d` is refused as not supported (`htaccel check` lists them).
pub fn is_unsupported(d: &Directive) -> bool {
    matches!(d.run, Run::Unsupported)
}

const FI: u32 = OR_FILEINFO | ACCESS_CONF | RSRC_CONF;

/// `<If>`/`<ElseIf>`/`<Else>` and `SetInputFilter` belong to the core.
pub static CORE_EXTRA: Module = Module {
    source: "core.c",
    identifier: "core_module",
    builtin: true,
    directives: &[
        Directive {
            name: "SetInputFilter",
            args: Args::Raw,
            req_override: FI,
            about: "",
            run: Run::Unsupported,
        },
        Directive {
            name: "ContentDigest",
            args: Args::Flag,
            req_override: crate::registry::OR_OPTIONS | ACCESS_CONF | RSRC_CONF,
            about: "whether or not to send a Content-MD5 header with each request",
            run: Run::DefaultOnly {
                default: "Off",
                missing: "a Content-MD5 header on files",
            },
        },
    ],
};

/// Modules Debian ships that htaccel does not implement, whose stock
/// configuration files (`mods-available/*.conf`, enabled with the module
/// by `a2enmod`) write settings without an `<IfModule>` around them.
///
/// Each setting here does nothing in Apache either until a directive
/// turns the module on (`CacheEnable`, `DAV On`, `ProxyHTMLEnable On`, a
/// `ftp://` proxy, which mod_proxy here refuses): such a setting is
/// accepted, where Apache accepts it, and the directive that would turn
/// the module on is refused with the reason. These modules
/// stay absent for `<IfModule>` (the `LoadModule` line says so), so a
/// guarded block that would use one is skipped, as for any module
/// htaccel does not have.
pub static STAND_INS: &[&Module] = &[&CACHE, &CACHE_DISK, &DAV, &DAV_FS, &PROXY_FTP, &PROXY_HTML];

/// A module htaccel does not have that runs the files it handles (a
/// script runner or an interpreter): while a configuration loads it, the
/// default handler never sends those files as they are. Apache with the
/// module would run them; without it, Apache would send their source.
#[derive(Debug)]
pub struct Runner {
    pub identifier: &'static str,
    pub name: &'static str,
    /// The handler names it answers to (`AddHandler`, `SetHandler`, or a
    /// content type standing for the handler).
    pub handlers: &'static [&'static str],
    /// It runs PHP: every file named like a PHP script is refused too,
    /// whatever its handler (its handler names are the site's choice).
    pub runs_php: bool,
}

/// The script runners a configuration may load, with their stock handler
/// names.
pub static RUNNERS: &[Runner] = &[
    Runner {
        identifier: "fcgid_module",
        name: "mod_fcgid",
        handlers: &["fcgid-script"],
        runs_php: true,
    },
    Runner {
        identifier: "suphp_module",
        name: "mod_suphp",
        handlers: &["application/x-httpd-suphp", "x-httpd-php", "x-httpd-suphp"],
        runs_php: true,
    },
    Runner {
        identifier: "lsapi_module",
        name: "mod_lsapi",
        handlers: &["application/x-httpd-lsphp"],
        runs_php: true,
    },
    Runner {
        identifier: "wsgi_module",
        name: "mod_wsgi",
        handlers: &["wsgi-script"],
        runs_php: false,
    },
    Runner {
        identifier: "perl_module",
        name: "mod_perl",
        handlers: &["perl-script", "modperl"],
        runs_php: false,
    },
    Runner {
        identifier: "python_module",
        name: "mod_python",
        handlers: &["mod_python", "python-program"],
        runs_php: false,
    },
    Runner {
        identifier: "lua_module",
        name: "mod_lua",
        handlers: &["lua-script"],
        runs_php: false,
    },
    Runner {
        identifier: "include_module",
        name: "mod_include",
        // `server-parsed` is the default handler with the module's filter
        // ([`crate::modules::include`]).
        handlers: &["text/x-server-parsed-html", "text/x-server-parsed-html3"],
        runs_php: false,
    },
];

/// The script runners a configuration loads (its read slot, kept with
/// the configuration for the default handler).
#[derive(Clone, Debug, Default)]
pub struct LoadedRunners(Vec<&'static Runner>);

impl LoadedRunners {
    pub fn load(&mut self, runner: &'static Runner) {
        if !self.0.iter().any(|known| std::ptr::eq(*known, runner)) {
            self.0.push(runner);
        }
    }

    /// Whether the runner named `identifier` is loaded.
    pub fn has(&self, identifier: &str) -> bool {
        self.0.iter().any(|r| r.identifier == identifier)
    }
}

/// The script runner named `identifier`, if it is one.
pub fn runner(identifier: &str) -> Option<&'static Runner> {
    RUNNERS.iter().find(|r| r.identifier == identifier)
}

/// The default handler's refusal (403, with the error-log line) of a file
/// that a script runner the configuration loads would have run.
pub fn refuses_as_file(ctx: &mut Ctx<'_>) -> bool {
    let runners = &ctx.site.env.read.runners.0;
    if runners.is_empty() {
        return false;
    }
    // What is not a file is answered as the default handler answers it
    // (a missing one is a 404, as the runner would give).
    if ctx.finfo.map(|f| f.kind) != Some(crate::fs::Kind::File) {
        return false;
    }
    let handler = ctx.handler_name().unwrap_or("");
    let Some(runner) = runners.iter().find(|r| {
        r.handlers.contains(&handler)
            || (r.runs_php && crate::modules::php::handler::looks_like_php(&ctx.filename))
    }) else {
        return false;
    };
    ctx.reason = Some(crate::request::Reason::new("error", "core",
        format!(
            "{}: not sent: the configuration loads {} ({}), which htaccel does not have, and the file is one it would run (htaccel never sends a script's source; run PHP on PHP-FPM with SetHandler \"proxy:unix:…|fcgi://localhost\")",
            ctx.filename, runner.name, runner.identifier
        ),
    ));
    true
}

/// The stand-in for the module `identifier` names, if it has one.
pub fn stand_in(identifier: &str) -> Option<&'static Module> {
    STAND_INS
        .iter()
        .copied()
        .find(|m| m.identifier == identifier)
}

/// A setting that has no effect until its module is turned on.
macro_rules! inert {
    ($name:literal, $args:expr, $ovr:expr) => {
        Directive {
            name: $name,
            args: $args,
            req_override: $ovr,
            about: "",
            run: Run::WithoutEffect,
        }
    };
}

/// The directive that turns a module htaccel does not have on.
fn refuse_turning_on(inv: &crate::config::Invocation<'_>, module: &str) -> Result<(), String> {
    Err(format!(
        "{} is not supported by htaccel: {module} is not part of it",
        inv.name
    ))
}

/// An `On|Off` directive that turns a module on: `Off` is accepted.
fn refuse_on(inv: &crate::config::Invocation<'_>, module: &str) -> Result<(), String> {
    if inv
        .words
        .first()
        .is_some_and(|w| w.eq_ignore_ascii_case("off"))
    {
        return Ok(());
    }
    refuse_turning_on(inv, module)
}

const SRV: u32 = RSRC_CONF;
const SRV_DIR: u32 = RSRC_CONF | ACCESS_CONF;

static CACHE: Module = Module {
    source: "mod_cache.c",
    identifier: "cache_module",
    builtin: false,
    directives: &[
        Directive {
            name: "CacheEnable",
            args: Args::Take12,
            req_override: SRV_DIR,
            about: "",
            run: Run::Handler(|_w, inv, _c| refuse_turning_on(inv, "mod_cache")),
        },
        inert!("CacheDisable", Args::Take1, SRV_DIR),
        inert!("CacheMaxExpire", Args::Take1, SRV_DIR),
        inert!("CacheMinExpire", Args::Take1, SRV_DIR),
        inert!("CacheDefaultExpire", Args::Take1, SRV_DIR),
        inert!("CacheQuickHandler", Args::Flag, SRV),
        inert!("CacheIgnoreNoLastMod", Args::Flag, SRV_DIR),
        inert!("CacheIgnoreCacheControl", Args::Flag, SRV),
        inert!("CacheStoreExpired", Args::Flag, SRV_DIR),
        inert!("CacheStorePrivate", Args::Flag, SRV_DIR),
        inert!("CacheStoreNoStore", Args::Flag, SRV_DIR),
        inert!("CacheIgnoreHeaders", Args::Iterate, SRV),
        inert!("CacheIgnoreQueryString", Args::Flag, SRV),
        inert!("CacheIgnoreURLSessionIdentifiers", Args::Iterate, SRV),
        inert!("CacheLastModifiedFactor", Args::Take1, SRV_DIR),
        inert!("CacheLock", Args::Flag, SRV),
        inert!("CacheLockPath", Args::Take1, SRV),
        inert!("CacheLockMaxAge", Args::Take1, SRV),
        inert!("CacheHeader", Args::Flag, SRV_DIR),
        inert!("CacheDetailHeader", Args::Flag, SRV_DIR),
        inert!("CacheKeyBaseURL", Args::Take1, SRV),
        inert!("CacheStaleOnError", Args::Flag, SRV_DIR),
    ],
};

static CACHE_DISK: Module = Module {
    source: "mod_cache_disk.c",
    identifier: "cache_disk_module",
    builtin: false,
    directives: &[
        inert!("CacheRoot", Args::Take1, SRV),
        inert!("CacheDirLevels", Args::Take1, SRV),
        inert!("CacheDirLength", Args::Take1, SRV),
        inert!("CacheMinFileSize", Args::Take1, SRV_DIR),
        inert!("CacheMaxFileSize", Args::Take1, SRV_DIR),
        inert!("CacheReadSize", Args::Take1, SRV_DIR),
        inert!("CacheReadTime", Args::Take1, SRV_DIR),
    ],
};

static DAV: Module = Module {
    source: "mod_dav.c",
    identifier: "dav_module",
    builtin: false,
    directives: &[
        Directive {
            name: "DAV",
            args: Args::Take1,
            req_override: ACCESS_CONF,
            about: "",
            run: Run::Handler(|_w, inv, _c| refuse_on(inv, "mod_dav")),
        },
        inert!("DAVBasePath", Args::Take1, ACCESS_CONF),
        inert!("DAVMinTimeout", Args::Take1, SRV_DIR),
        inert!("DAVDepthInfinity", Args::Flag, SRV_DIR),
        inert!("DAVLockDiscovery", Args::Flag, SRV_DIR),
    ],
};

static DAV_FS: Module = Module {
    source: "mod_dav_fs.c",
    identifier: "dav_fs_module",
    builtin: false,
    directives: &[inert!("DAVLockDB", Args::Take1, SRV)],
};

static PROXY_FTP: Module = Module {
    source: "mod_proxy_ftp.c",
    identifier: "proxy_ftp_module",
    builtin: false,
    directives: &[
        inert!("ProxyFtpListOnWildcard", Args::Flag, SRV_DIR),
        inert!("ProxyFtpEscapeWildcards", Args::Flag, SRV_DIR),
        inert!("ProxyFtpDirCharset", Args::Take1, SRV_DIR),
    ],
};

static PROXY_HTML: Module = Module {
    source: "mod_proxy_html.c",
    identifier: "proxy_html_module",
    builtin: false,
    directives: &[
        Directive {
            name: "ProxyHTMLEnable",
            args: Args::Flag,
            req_override: SRV_DIR,
            about: "",
            run: Run::Handler(|_w, inv, _c| refuse_on(inv, "mod_proxy_html")),
        },
        inert!("ProxyHTMLEvents", Args::Iterate, SRV_DIR),
        inert!("ProxyHTMLLinks", Args::Iterate2, SRV_DIR),
        inert!("ProxyHTMLURLMap", Args::Raw, SRV_DIR),
        inert!("ProxyHTMLDoctype", Args::Take12, SRV_DIR),
        inert!("ProxyHTMLFixups", Args::Iterate, SRV_DIR),
        inert!("ProxyHTMLMeta", Args::Flag, SRV_DIR),
        inert!("ProxyHTMLInterp", Args::Flag, SRV_DIR),
        inert!("ProxyHTMLExtended", Args::Flag, SRV_DIR),
        inert!("ProxyHTMLStripComments", Args::Flag, SRV_DIR),
        inert!("ProxyHTMLBufSize", Args::Take1, SRV_DIR),
        inert!("ProxyHTMLCharsetOut", Args::Take1, SRV_DIR),
    ],
};
