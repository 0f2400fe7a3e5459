//! Server-level directives of the core, the MPM, `mod_so`, `mod_unixd`
//! and `FileETag`. Most set one field of the server being configured;
//! process-tuning directives of Apache's MPMs are accepted and have no
//! effect (htaccel sizes itself; see docs/deviations.md).

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::registry::{
    flag, Args, Directive, Run, ACCESS_CONF, EXEC_ON_READ, OR_ALL, OR_FILEINFO, RSRC_CONF,
};
use std::path::PathBuf;

pub const ETAG_NONE: u8 = 1;
pub const ETAG_MTIME: u8 = 2;
pub const ETAG_INODE: u8 = 4;
pub const ETAG_SIZE: u8 = 8;
pub const ETAG_DIGEST: u8 = 16;
pub const ETAG_ALL: u8 = ETAG_MTIME | ETAG_INODE | ETAG_SIZE;

/// `FileETag` as Apache keeps it: absolute bits plus relative adjustments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ETagSet {
    pub bits: u8,
    pub add: u8,
    pub remove: u8,
}

impl ETagSet {
    pub fn merge(base: Option<ETagSet>, new: Option<ETagSet>) -> Option<ETagSet> {
        let (base, new) = match (base, new) {
            (b, None) => return b,
            (None, Some(n)) => (ETagSet::default(), n),
            (Some(b), Some(n)) => (b, n),
        };
        let mut c = if new.bits == 0 {
            let add = (base.add & !new.remove) | new.add;
            let remove = (base.remove & !new.add) | new.remove;
            ETagSet {
                bits: (base.bits & !remove) | add,
                add,
                remove,
            }
        } else {
            new
        };
        if c.bits != ETAG_NONE {
            c.bits &= !ETAG_NONE;
        }
        Some(c)
    }

    /// The components in force; Apache's default is `MTime Size`.
    pub fn effective(set: Option<ETagSet>) -> u8 {
        let s = set.unwrap_or_default();
        let bits = (s.bits & !s.remove) | s.add;
        if bits == 0 {
            ETAG_MTIME | ETAG_SIZE
        } else {
            bits
        }
    }
}

pub fn run_file_etag(
    _w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    conf: &mut DirConf,
) -> Result<(), String> {
    let mut cfg = conf.core.etag.unwrap_or_default();
    let mut first = true;
    let mut explicit = false;
    for token in htaccel_conf::split_args(&inv.raw) {
        let (action, name) = match token.as_bytes().first() {
            Some(b'+') | Some(b'-') => (token.as_bytes()[0], &token[1..]),
            _ => {
                if first {
                    cfg = ETagSet::default();
                    first = false;
                }
                (b'*', token.as_str())
            }
        };
        let bit = match name.to_ascii_lowercase().as_str() {
            "none" | "all" if action != b'*' => {
                return Err(format!(
                    "FileETag keyword '{name}' cannot be used with '+' or '-'"
                ))
            }
            "none" => {
                cfg.bits = ETAG_NONE;
                explicit = true;
                ETAG_NONE
            }
            "all" => {
                cfg.bits = ETAG_ALL;
                explicit = true;
                ETAG_ALL
            }
            "size" => ETAG_SIZE,
            "lmtime" | "mtime" | "lastmodified" => ETAG_MTIME,
            "inode" => ETAG_INODE,
            "digest" => ETAG_DIGEST,
            _ => return Err(format!("Unknown keyword '{name}' for FileETag directive")),
        };
        match action {
            b'+' => {
                cfg.add |= bit;
                cfg.remove &= !bit;
            }
            b'-' => {
                cfg.remove |= bit;
                cfg.add &= !bit;
            }
            _ => {
                cfg.bits |= bit;
                cfg.add = 0;
                cfg.remove = 0;
                explicit = true;
            }
        }
    }
    if explicit && cfg.bits & ETAG_NONE != ETAG_NONE {
        cfg.bits &= !ETAG_NONE;
    }
    conf.core.etag = Some(cfg);
    Ok(())
}

fn one(inv: &Invocation<'_>) -> String {
    inv.words[0].clone()
}

fn number<T: std::str::FromStr>(inv: &Invocation<'_>) -> Result<T, String> {
    inv.words[0]
        .parse()
        .map_err(|_| format!("{} argument is not parsable.", inv.name))
}

/// Whether `d` is accepted with no effect in htaccel (`htaccel check`
/// reports where a configuration uses one).
pub fn is_without_effect(d: &crate::registry::Directive) -> bool {
    matches!(d.run, crate::registry::Run::WithoutEffect)
}

fn run_listen(w: &mut Walker<'_>, inv: &Invocation<'_>, _c: &mut DirConf) -> Result<(), String> {
    // `TAKE_ARGV`, counted by the handler, in its words.
    if !(1..=2).contains(&inv.words.len()) {
        return Err("Listen requires 1 or 2 arguments.".into());
    }
    let build = w.server.as_deref_mut().ok_or("Listen not allowed here")?;
    if build.in_virtual_host() {
        return Err("Listen cannot occur within <VirtualHost> section".into());
    }
    build
        .global
        .listen
        .push((inv.words[0].clone(), inv.origin.clone()));
    // The listener's protocol: the one named, else `https` for port 443
    // and `http` for the others. A `<VirtualHost>` whose address is this
    // listener's takes it (`ap_setup_listeners`), and mod_ssl turns TLS on
    // for an `https` server with certificates.
    let spec = &inv.words[0];
    let (ip, port) = match spec.rsplit_once(':') {
        Some((h, p)) => (
            h.trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<std::net::IpAddr>()
                .ok(),
            p.parse::<u16>().ok(),
        ),
        None => (None, spec.parse::<u16>().ok()),
    };
    let https = match inv.words.get(1) {
        Some(proto) => proto.eq_ignore_ascii_case("https"),
        None => port == Some(443),
    };
    if let (true, Some(port)) = (https, port) {
        build.global.https_listeners.push((ip, port));
    }
    Ok(())
}

fn run_document_root(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    let root = w.env.server_root.join(&inv.words[0]);
    let root = PathBuf::from(crate::walk::clean_path(&root.to_string_lossy()));
    if !root.is_dir() {
        w.warn(
            inv.origin,
            format!("DocumentRoot [{}] does not exist", root.display()),
        );
    }
    w.server()?.document_root = Some(root);
    Ok(())
}

fn run_server_root(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    let root = PathBuf::from(&inv.words[0]);
    if !root.is_dir() {
        // Apache refuses to start here; htaccel has no module files to find
        // under ServerRoot, so it only needs the path for relative names.
        w.warn(
            inv.origin,
            format!(
                "ServerRoot {} is not a directory; relative paths are resolved against it anyway",
                root.display()
            ),
        );
    }
    w.env.server_root = root;
    Ok(())
}

fn run_define(w: &mut Walker<'_>, inv: &Invocation<'_>, _c: &mut DirConf) -> Result<(), String> {
    let name = inv.words[0].clone();
    if name.contains(':') {
        return Err("Variable name must not contain ':'".into());
    }
    w.env
        .defines
        .insert(name, inv.words.get(1).cloned().unwrap_or_default());
    Ok(())
}

fn run_undefine(w: &mut Walker<'_>, inv: &Invocation<'_>, _c: &mut DirConf) -> Result<(), String> {
    w.env.defines.remove(&inv.words[0]);
    Ok(())
}

fn run_load_module(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    let identifier = &inv.words[0];
    if crate::modules::is_builtin(identifier) {
        // Compiled into Debian's Apache (whose binary refuses the line),
        // a file in Red Hat's layout (`00-base.conf` loads mod_log_config,
        // mod_logio, mod_unixd…): part of htaccel either way.
        return Ok(());
    }
    if w.env.is_loaded(identifier) {
        w.warn(
            inv.origin,
            format!("module {identifier} is already loaded, skipping"),
        );
        return Ok(());
    }
    let file = inv.words.get(1).map(String::as_str).unwrap_or("");
    let module =
        crate::modules::by_identifier(identifier).or_else(|| crate::modules::php::by_file(file));
    if module.is_some_and(crate::modules::php::is_mod_php) {
        if let Some(build) = w.server.as_deref_mut() {
            build
                .global
                .mod_php
                .get_or_insert_with(|| (inv.origin.clone(), file.to_string()));
        }
    }
    match module {
        Some(m) => {
            crate::modules::load_check(m, file)?;
            w.env.modules.push(m)
        }
        None => {
            let stand_in = crate::modules::unsupported::stand_in(identifier);
            let runner = crate::modules::unsupported::runner(identifier);
            let settings = if stand_in.is_some() {
                "; its settings are accepted where they do nothing without it, the directive that would turn it on is refused"
            } else if runner.is_some_and(|r| r.runs_php) {
                "; the files it would run (PHP files among them) are answered 403, never sent"
            } else if runner.is_some() {
                "; the files it would run are answered 403, never sent"
            } else {
                ""
            };
            if let Some(r) = runner {
                w.env.read.runners.load(r);
            }
            w.warn(
                inv.origin,
                format!(
                    "module {identifier} is not part of htaccel; <IfModule> will treat it as absent{settings}"
                ),
            );
            if let Some(m) = stand_in {
                if !w.env.stand_ins.iter().any(|s| std::ptr::eq(*s, m)) {
                    w.env.stand_ins.push(m);
                }
            }
        }
    }
    Ok(())
}

/// `LogLevel [level] [module:level …]`: the server's level and per-module
/// ones. htaccel writes no `trace` lines and has no per-directory levels:
/// both are said at start-up rather than silently dropped.
fn run_log_level(w: &mut Walker<'_>, inv: &Invocation<'_>, _c: &mut DirConf) -> Result<(), String> {
    let level = |word: &str| -> Result<String, String> {
        let lower = word.to_ascii_lowercase();
        if crate::log_format::LEVELS.contains(&lower.as_str()) {
            Ok(lower)
        } else {
            Err(format!("LogLevel keyword must be one of emerg/alert/crit/error/warn/notice/info/debug/trace1/.../trace8 (got {word})"))
        }
    };
    let mut server_level = None;
    let mut modules = Vec::new();
    for word in &inv.words {
        match word.split_once(':') {
            Some((module, l)) => {
                let module = module
                    .trim_end_matches("_module")
                    .trim_start_matches("mod_");
                modules.push((module.to_string(), level(l)?));
            }
            None => server_level = Some(level(word)?),
        }
    }
    if let Some(trace) = server_level
        .iter()
        .chain(modules.iter().map(|m| &m.1))
        .find(|l| l.starts_with("trace"))
    {
        w.warn(
            inv.origin,
            format!("LogLevel {trace}: htaccel writes no trace lines (htaccel explain shows how a request is decided); debug and more severe lines are written"),
        );
    }
    if !w.ctx.sections.is_empty() && !w.ctx.within(crate::config::SectionKind::VirtualHost) {
        w.warn(
            inv.origin,
            "LogLevel inside a <Directory>, <Location> or <Files> section applies to the whole server in htaccel",
        );
    }
    if let Some(b) = w.server.as_deref_mut() {
        let server = b.current();
        if server_level.is_some() {
            server.log_level = server_level;
        }
        server.log_level_modules.extend(modules);
    }
    Ok(())
}

/// Server-level directives: one entry each.
pub static DIRECTIVES: &[Directive] = &[
    Directive { name: "Listen", args: Args::Argv, req_override: RSRC_CONF, about: "A port number or a numeric IP address and a port number, and an optional protocol", run: Run::Handler(run_listen) },
    Directive { name: "ServerName", args: Args::Take1, req_override: RSRC_CONF, about: "The hostname and port of the server", run: Run::Handler(|w, inv, _| { w.server()?.server_name = Some(one(inv)); Ok(()) }) },
    Directive { name: "ServerAlias", args: Args::Argv, req_override: RSRC_CONF, about: "A name or names alternately used to access the server", run: Run::Handler(|w, inv, _| {
        let server = w.server.as_deref_mut().ok_or("ServerAlias not allowed here")?;
        if !server.in_virtual_host() { return Err("ServerAlias only used in <VirtualHost>".into()); }
        server.current().server_aliases.extend(inv.words.iter().cloned());
        Ok(())
    }) },
    Directive { name: "ServerAdmin", args: Args::Take1, req_override: RSRC_CONF, about: "The email address of the server administrator", run: Run::Handler(|w, inv, _| { w.server()?.server_admin = Some(one(inv)); Ok(()) }) },
    Directive { name: "DocumentRoot", args: Args::Take1, req_override: RSRC_CONF, about: "Root directory of the document tree", run: Run::Handler(run_document_root) },
    Directive { name: "ServerRoot", args: Args::Take1, req_override: RSRC_CONF | EXEC_ON_READ, about: "Common directory of server-related files (logs, confs, etc.)", run: Run::Handler(run_server_root) },
    Directive { name: "AccessFileWatch", args: Args::Flag, req_override: RSRC_CONF, about: "Whether changes to access files and file metadata are learnt from inotify (On) or by stat every AccessFileCheckInterval (Off)", run: Run::Handler(super::cache_directives::run_watch) },
    Directive { name: "AccessFileCheckInterval", args: Args::Take1, req_override: RSRC_CONF, about: "Seconds facts about an unwatched directory are trusted before stat revalidates them (0: every request)", run: Run::Handler(super::cache_directives::run_check_interval) },
    Directive { name: "StatCacheEntries", args: Args::Take1, req_override: RSRC_CONF, about: "Number of file-metadata answers kept in memory (0: none)", run: Run::Handler(super::cache_directives::run_stat_cache_entries) },
    Directive { name: "AccessFileMaxSize", args: Args::Take1, req_override: RSRC_CONF, about: "Largest access file, in bytes, compiled; a larger one fails with 500", run: Run::Handler(super::cache_directives::run_max_size) },
    Directive { name: "AccessFileMaxDirectives", args: Args::Take1, req_override: RSRC_CONF, about: "Most directives an access file may hold; more fail with 500", run: Run::Handler(super::cache_directives::run_max_directives) },
    Directive { name: "AccessFileName", args: Args::Iterate, req_override: RSRC_CONF, about: "Name(s) of per-directory config files (default: .htaccess)", run: Run::Handler(|w, inv, _| {
        let server = w.server()?;
        let list = server.access_file_names.get_or_insert_with(Vec::new);
        list.clear();
        list.extend(inv.words.iter().cloned());
        Ok(())
    }) },
    Directive { name: "ErrorLog", args: Args::Take1, req_override: RSRC_CONF, about: "The filename of the error log", run: Run::Handler(|w, inv, _| {
        let target = one(inv);
        w.server()?.error_log = Some(target);
        Ok(())
    }) },
    Directive { name: "ErrorLogFormat", args: Args::Take12, req_override: RSRC_CONF, about: "Format string for the ErrorLog", run: Run::Handler(|w, inv, _| {
        match inv.words.as_slice() {
            [format] => {
                let parsed = crate::error_log_format::ErrorLogFormat::parse(format)?;
                w.server()?.error_log_format = Some(parsed);
                Ok(())
            }
            [kind, format] if kind.eq_ignore_ascii_case("connection") || kind.eq_ignore_ascii_case("request") => {
                if format.is_empty() {
                    Ok(())
                } else {
                    Err(format!("ErrorLogFormat {kind} is not supported by htaccel yet (once-per-{} lines)", kind.to_ascii_lowercase()))
                }
            }
            _ => Err("ErrorLogFormat type must be one of request, connection".into()),
        }
    }) },
    Directive { name: "LogLevel", args: Args::Argv, req_override: RSRC_CONF | ACCESS_CONF, about: "Level of verbosity in error logging", run: Run::Handler(run_log_level) },
    Directive { name: "Timeout", args: Args::Take1, req_override: RSRC_CONF, about: "Timeout duration (sec)", run: Run::Handler(|w, inv, _| { let v = number(inv)?; w.server()?.timeout = Some(v); Ok(()) }) },
    Directive { name: "KeepAlive", args: Args::Flag, req_override: RSRC_CONF, about: "Whether persistent connections should be On or Off", run: Run::Handler(|w, inv, _| { w.server()?.keepalive = Some(flag(&inv.words)); Ok(()) }) },
    Directive { name: "KeepAliveTimeout", args: Args::Take1, req_override: RSRC_CONF, about: "Keep-Alive timeout duration (sec)", run: Run::Handler(|w, inv, _| { let v = number(inv)?; w.server()?.keepalive_timeout = Some(v); Ok(()) }) },
    Directive { name: "MaxKeepAliveRequests", args: Args::Take1, req_override: RSRC_CONF, about: "Maximum number of Keep-Alive requests per connection, or 0 for infinite", run: Run::Handler(|w, inv, _| { let v = number(inv)?; w.server()?.max_keepalive_requests = Some(v); Ok(()) }) },
    Directive { name: "LimitRequestLine", args: Args::Take1, req_override: RSRC_CONF, about: "Limit on maximum size of an HTTP request line", run: Run::Handler(|w, inv, _| { let v = number(inv)?; w.server()?.limit_request_line = Some(v); Ok(()) }) },
    Directive { name: "LimitRequestFieldsize", args: Args::Take1, req_override: RSRC_CONF, about: "Limit on maximum size of an HTTP request header field", run: Run::Handler(|w, inv, _| { let v = number(inv)?; w.server()?.limit_request_field_size = Some(v); Ok(()) }) },
    Directive { name: "LimitRequestFields", args: Args::Take1, req_override: RSRC_CONF, about: "Limit (0 = unlimited) on max number of header fields in a request message", run: Run::Handler(|w, inv, _| { let v = number(inv)?; w.server()?.limit_request_fields = Some(v); Ok(()) }) },
    Directive { name: "LimitInternalRecursion", args: Args::Take12, req_override: RSRC_CONF, about: "maximum recursion depth of internal redirects and subrequests", run: Run::Handler(|w, inv, _| { let v = number(inv)?; w.server()?.limit_internal_recursion = Some(v); Ok(()) }) },
    Directive { name: "ServerTokens", args: Args::Take1, req_override: RSRC_CONF, about: "Tokens displayed in the Server: header - Min[imal], Major, Minor, Prod[uctOnly], OS, or Full", run: Run::Handler(|w, inv, _| {
        w.server.as_deref_mut().ok_or("ServerTokens not allowed here")?.global.server_tokens = Some(one(inv)); Ok(())
    }) },
    Directive { name: "HostnameLookups", args: Args::Take1, req_override: ACCESS_CONF | RSRC_CONF, about: "\"on\" to enable, \"off\" to disable reverse DNS lookups, or \"double\" to enable double-reverse DNS lookups", run: Run::Handler(|_w, inv, c| {
        let v = one(inv);
        let lookups = match v.to_ascii_lowercase().as_str() {
            "on" => super::HostnameLookups::On,
            "off" => super::HostnameLookups::Off,
            "double" => super::HostnameLookups::Double,
            _ => return Err("parameter must be 'on', 'off', or 'double'".into()),
        };
        c.core.hostname_lookups = Some(lookups);
        Ok(())
    }) },
    Directive { name: "ExtendedStatus", args: Args::Flag, req_override: RSRC_CONF, about: "\"On\" to track extended status information, \"Off\" to disable", run: Run::Handler(|w, inv, _| {
        let b = w.server.as_deref_mut().ok_or("ExtendedStatus not allowed here")?;
        if b.in_virtual_host() { return Err("ExtendedStatus cannot occur within <VirtualHost> section".into()); }
        b.global.extended_status = Some(flag(&inv.words)); Ok(())
    }) },
    Directive { name: "TraceEnable", args: Args::Take1, req_override: RSRC_CONF, about: "'on' (default), 'off' or 'extended' to trace request body content", run: Run::Handler(|w, inv, _| {
        w.server()?.trace_enable = Some(one(inv)); Ok(())
    }) },
    Directive { name: "Define", args: Args::Take12, req_override: RSRC_CONF | EXEC_ON_READ, about: "Define a variable, optionally to a value.  Same as passing -D to the command line.", run: Run::Handler(run_define) },
    Directive { name: "UnDefine", args: Args::Take1, req_override: RSRC_CONF | EXEC_ON_READ, about: "Undefine the existence of a variable. Undo a Define.", run: Run::Handler(run_undefine) },
    Directive { name: "User", args: Args::Take1, req_override: RSRC_CONF, about: "Effective user id for this server", run: Run::Handler(|w, inv, _| {
        w.server.as_deref_mut().ok_or("User not allowed here")?.global.user = Some(one(inv)); Ok(())
    }) },
    Directive { name: "Group", args: Args::Take1, req_override: RSRC_CONF, about: "Name or number of group to run httpd as", run: Run::Handler(|w, inv, _| {
        w.server.as_deref_mut().ok_or("Group not allowed here")?.global.group = Some(one(inv)); Ok(())
    }) },
    Directive { name: "PidFile", args: Args::Take1, req_override: RSRC_CONF, about: "A file for logging the server process ID", run: Run::Handler(|w, inv, _| {
        w.server.as_deref_mut().ok_or("PidFile not allowed here")?.global.pid_file = Some(one(inv)); Ok(())
    }) },
    Directive { name: "GracefulShutdownTimeout", args: Args::Take1, req_override: RSRC_CONF, about: "Maximum time in seconds to wait for child processes to complete transactions during shutdown", run: Run::Handler(|w, inv, _| {
        let v = number(inv)?;
        w.server.as_deref_mut().ok_or("GracefulShutdownTimeout not allowed here")?.global.graceful_shutdown_timeout = Some(v); Ok(())
    }) },
    Directive { name: "LoadModule", args: Args::Take2, req_override: RSRC_CONF | EXEC_ON_READ, about: "a module name and the name of a shared object file to load it from", run: Run::Handler(run_load_module) },
    Directive { name: "Mutex", args: Args::Raw, req_override: RSRC_CONF, about: "mutex (or \"default\") and mechanism", run: Run::WithoutEffect },
    Directive { name: "DefaultRuntimeDir", args: Args::Take1, req_override: RSRC_CONF | EXEC_ON_READ, about: "Common directory for run-time files (shared memory, locks, etc.)", run: Run::WithoutEffect },
    Directive { name: "UseCanonicalName", args: Args::Take1, req_override: RSRC_CONF | ACCESS_CONF, about: "How to work out the ServerName : Port when constructing URLs", run: Run::Handler(|_w, inv, c| {
        c.core.use_canonical_name = Some(match inv.words[0].to_ascii_lowercase().as_str() {
            "on" => true,
            "off" => false,
            "dns" => return Err("UseCanonicalName DNS is not supported by htaccel yet (a reverse lookup of the local address on the request path)".into()),
            _ => return Err("parameter must be 'on', 'off', or 'dns'".into()),
        });
        Ok(())
    }) },
    Directive { name: "EnableSendfile", args: Args::Take1, req_override: OR_FILEINFO | RSRC_CONF | ACCESS_CONF, about: "Controls whether sendfile may be used to transmit files", run: Run::WithoutEffect },
    Directive { name: "EnableMMAP", args: Args::Take1, req_override: OR_FILEINFO | RSRC_CONF | ACCESS_CONF, about: "Controls whether memory-mapping may be used to read files", run: Run::WithoutEffect },
    Directive { name: "StartServers", args: Args::Take1, req_override: RSRC_CONF, about: "Number of child processes launched at server startup", run: Run::WithoutEffect },
    Directive { name: "MinSpareServers", args: Args::Take1, req_override: RSRC_CONF, about: "Minimum number of idle children", run: Run::WithoutEffect },
    Directive { name: "MaxSpareServers", args: Args::Take1, req_override: RSRC_CONF, about: "Maximum number of idle children", run: Run::WithoutEffect },
    Directive { name: "MinSpareThreads", args: Args::Take1, req_override: RSRC_CONF, about: "Minimum number of idle threads", run: Run::WithoutEffect },
    Directive { name: "MaxSpareThreads", args: Args::Take1, req_override: RSRC_CONF, about: "Maximum number of idle threads", run: Run::WithoutEffect },
    Directive { name: "ThreadLimit", args: Args::Take1, req_override: RSRC_CONF, about: "Maximum number of worker threads per child process", run: Run::WithoutEffect },
    Directive { name: "ThreadsPerChild", args: Args::Take1, req_override: RSRC_CONF, about: "Number of threads each child creates", run: Run::WithoutEffect },
    Directive { name: "MaxRequestWorkers", args: Args::Take1, req_override: RSRC_CONF, about: "Maximum number of threads alive at the same time", run: Run::WithoutEffect },
    Directive { name: "MaxConnectionsPerChild", args: Args::Take1, req_override: RSRC_CONF, about: "Maximum number of connections a particular child serves before dying.", run: Run::WithoutEffect },
    Directive { name: "ServerLimit", args: Args::Take1, req_override: RSRC_CONF, about: "Maximum number of children alive at the same time", run: Run::WithoutEffect },
    Directive { name: "MaxClients", args: Args::Take1, req_override: RSRC_CONF, about: "Deprecated name of MaxRequestWorkers", run: Run::WithoutEffect },
    Directive { name: "MaxRequestsPerChild", args: Args::Take1, req_override: RSRC_CONF, about: "Maximum number of connections a particular child serves before dying. (DEPRECATED, use MaxConnectionsPerChild)", run: Run::WithoutEffect },
    Directive { name: "AsyncRequestWorkerFactor", args: Args::Take1, req_override: RSRC_CONF, about: "How many additional connects will be accepted per idle worker thread", run: Run::WithoutEffect },
    Directive { name: "ThreadStackSize", args: Args::Take1, req_override: RSRC_CONF, about: "Size in bytes of stack used by threads handling client connections", run: Run::WithoutEffect },
    Directive { name: "MaxMemFree", args: Args::Take1, req_override: RSRC_CONF, about: "Maximum number of 1k blocks a particular child's allocator may hold.", run: Run::WithoutEffect },
    Directive { name: "CoreDumpDirectory", args: Args::Take1, req_override: RSRC_CONF, about: "The location of the directory Apache changes to before dumping core", run: Run::WithoutEffect },
    Directive { name: "ScoreBoardFile", args: Args::Take1, req_override: RSRC_CONF, about: "A file for Apache to maintain runtime process management information", run: Run::WithoutEffect },
    Directive { name: "ReadBufferSize", args: Args::Take1, req_override: ACCESS_CONF | RSRC_CONF, about: "Size (in bytes) of the memory buffers used to read data", run: Run::WithoutEffect },
    Directive { name: "FlushMaxThreshold", args: Args::Take1, req_override: RSRC_CONF, about: "Maximum threshold above which pending data are flushed to the network", run: Run::WithoutEffect },
    Directive { name: "FlushMaxPipelined", args: Args::Take1, req_override: RSRC_CONF, about: "Maximum number of pipelined responses (pending) above which they are flushed to the network", run: Run::WithoutEffect },
    Directive { name: "AcceptFilter", args: Args::Take2, req_override: RSRC_CONF, about: "Set the Accept Filter to use for a protocol", run: Run::WithoutEffect },
    Directive { name: "Protocol", args: Args::Take1, req_override: RSRC_CONF, about: "Set the Protocol for httpd to use.", run: Run::WithoutEffect },
    Directive { name: "LimitXMLRequestBody", args: Args::Take1, req_override: OR_ALL, about: "Limit (in bytes) on maximum size of an XML-based request body", run: Run::WithoutEffect },
    Directive { name: "NameVirtualHost", args: Args::Take1, req_override: RSRC_CONF, about: "A numeric IP address:port, or the name of a host", run: Run::Handler(|w, inv, _| {
        w.warn(inv.origin, "AH00548: NameVirtualHost has no effect and will be removed in the next release");
        Ok(())
    }) },
    Directive { name: "MergeTrailers", args: Args::Flag, req_override: RSRC_CONF, about: "merge request trailers into request headers or not", run: Run::DefaultOnly { default: "Off", missing: "merging a chunked request's trailer fields into its header" } },
    Directive { name: "StrictHostCheck", args: Args::Flag, req_override: RSRC_CONF, about: "Controls whether a hostname match is required", run: Run::Handler(|w, inv, _| { w.server()?.strict_host_check = Some(flag(&inv.words)); Ok(()) }) },
    Directive { name: "UseCanonicalPhysicalPort", args: Args::Take1, req_override: RSRC_CONF | ACCESS_CONF, about: "Whether to use the physical Port when constructing URLs", run: Run::Handler(|_w, inv, c| {
        c.core.use_canonical_phys_port = Some(match inv.words[0].to_ascii_lowercase().as_str() {
            "on" => true,
            "off" => false,
            _ => return Err("parameter must be 'on' or 'off'".into()),
        });
        Ok(())
    }) },
    Directive { name: "QualifyRedirectURL", args: Args::Flag, req_override: OR_FILEINFO, about: "Controls whether the REDIRECT_URL environment variable is fully qualified", run: Run::DefaultOnly { default: "Off", missing: "a full URL in REDIRECT_URL" } },
    Directive { name: "SeeRequestTail", args: Args::Flag, req_override: RSRC_CONF, about: "For extended status, \"On\" to see the last 63 chars of the request line, \"Off\" (default) to see the first 63", run: Run::WithoutEffect },
    Directive { name: "RegexDefaultOptions", args: Args::Raw, req_override: RSRC_CONF, about: "default options for regexes (prefixed by '+' to add, '-' to del)", run: Run::Handler(run_regex_default_options) },
    Directive { name: "Port", args: Args::Take1, req_override: RSRC_CONF, about: "Port was replaced with Listen in Apache 2.0", run: Run::Handler(|_w, _inv, _c| Err("Port was replaced with Listen in Apache 2.0".into())) },
    Directive { name: "ServerPath", args: Args::Take1, req_override: RSRC_CONF, about: "The pathname the server can be reached at", run: Run::Unsupported },
    Directive { name: "MaxRanges", args: Args::Take1, req_override: RSRC_CONF | ACCESS_CONF, about: "Maximum number of Ranges in a request before returning the entire resource, or 0 for unlimited", run: Run::Handler(|_w, inv, c| {
        c.core.max_ranges = Some(range_limit(inv, 200)?);
        Ok(())
    }) },
    Directive { name: "MaxRangeOverlaps", args: Args::Take1, req_override: RSRC_CONF | ACCESS_CONF, about: "Maximum number of overlaps in Ranges in a request before returning the entire resource, or 0 for unlimited", run: Run::Handler(|_w, inv, c| {
        c.core.max_overlaps = Some(range_limit(inv, 20)?);
        Ok(())
    }) },
    Directive { name: "MaxRangeReversals", args: Args::Take1, req_override: RSRC_CONF | ACCESS_CONF, about: "Maximum number of reversals in Ranges in a request before returning the entire resource, or 0 for unlimited", run: Run::Handler(|_w, inv, c| {
        c.core.max_reversals = Some(range_limit(inv, 20)?);
        Ok(())
    }) },
    Directive { name: "HttpProtocolOptions", args: Args::Iterate, req_override: RSRC_CONF, about: "'Allow0.9' or 'Require1.0' (default); 'RegisteredMethods' or 'LenientMethods' (default); 'Unsafe' or 'Strict' (default). Sets HTTP acceptance rules", run: Run::Handler(run_http_protocol_options) },
    Directive { name: "RegisterHttpMethod", args: Args::Iterate, req_override: RSRC_CONF, about: "Registers non-standard HTTP methods", run: Run::Handler(|w, inv, _| {
        let build = w.server.as_deref_mut().ok_or("RegisterHttpMethod not allowed here")?;
        if build.in_virtual_host() {
            return Err("RegisterHttpMethod cannot occur within <VirtualHost> section".into());
        }
        for method in &inv.words {
            crate::http::method::register(method)?;
        }
        Ok(())
    }) },
    Directive { name: "MergeSlashes", args: Args::Flag, req_override: RSRC_CONF, about: "Controls whether consecutive slashes in the URI path are merged", run: Run::Handler(|w, inv, _| {
        w.server()?.merge_slashes = Some(flag(&inv.words));
        Ok(())
    }) },
    Directive { name: "AllowEncodedSlashes", args: Args::Take1, req_override: RSRC_CONF, about: "Allow URLs containing '/' encoded as '%2F'", run: Run::Handler(|w, inv, _| {
        let mode = encoded_slashes(&inv.words[0])?;
        w.server()?.encoded_slashes = Some(mode);
        Ok(())
    }) },
];

/// `RegexDefaultOptions [none] [+|-]OPTION…`: htaccel compiles every
/// regex with Apache's default options (`DOTALL`), so a line that leaves
/// exactly that set is accepted and any other is refused.
fn run_regex_default_options(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    let build = w
        .server
        .as_deref_mut()
        .ok_or("RegexDefaultOptions not allowed here")?;
    if build.in_virtual_host() {
        return Err("RegexDefaultOptions cannot occur within <VirtualHost> section".into());
    }
    const OPTIONS: [&str; 4] = ["ICASE", "DOTALL", "DOLLAR_ENDONLY", "EXTENDED"];
    let mut set = [false, true, false, false];
    for word in &htaccel_conf::split_args(&inv.raw) {
        if word.eq_ignore_ascii_case("none") {
            set = [false; 4];
            continue;
        }
        let (how, name) = match word.as_bytes().first() {
            Some(b'+') => (Some(true), &word[1..]),
            Some(b'-') => (Some(false), &word[1..]),
            _ => (None, word.as_str()),
        };
        let Some(i) = OPTIONS.iter().position(|o| o.eq_ignore_ascii_case(name)) else {
            return Err(format!("RegexDefaultOptions: option '{name}' unknown"));
        };
        match how {
            Some(on) => set[i] = on,
            None => {
                set = [false; 4];
                set[i] = true;
            }
        }
    }
    if set != [false, true, false, false] {
        return Err("RegexDefaultOptions other than DOTALL alone (Apache's default) is not supported by htaccel yet".into());
    }
    Ok(())
}

/// `HttpProtocolOptions WORD…`: the words of the server's lines
/// accumulate, and opposite words are an error.
fn run_http_protocol_options(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    let o = &mut w.server()?.http_protocol;
    for word in &inv.words {
        http_protocol_option(o, word)?;
    }
    Ok(())
}

fn http_protocol_option(
    o: &mut crate::config::server::HttpProtocolOptions,
    word: &str,
) -> Result<(), String> {
    let word = word.to_ascii_lowercase();
    let (field, bit) = match word.as_str() {
        "strict" => (&mut o.conformance, 1),
        "unsafe" => (&mut o.conformance, 2),
        "lenientmethods" => (&mut o.methods, 1),
        "registeredmethods" => (&mut o.methods, 2),
        "allow0.9" => (&mut o.http09, 1),
        "require1.0" => (&mut o.http09, 2),
        _ => return Err("HttpProtocolOptions accepts 'Unsafe' or 'Strict' (default), 'RegisteredMethods' or 'LenientMethods' (default), and 'Require1.0' or 'Allow0.9' (default)".into()),
    };
    *field |= bit;
    if o.http09 == 3 {
        return Err(
            "HttpProtocolOptions 'Allow0.9' and 'Require1.0' are mutually exclusive".into(),
        );
    }
    if o.conformance == 3 {
        return Err("HttpProtocolOptions 'Strict' and 'Unsafe' are mutually exclusive".into());
    }
    if o.methods == 3 {
        return Err(
            "HttpProtocolOptions 'RegisteredMethods' and 'LenientMethods' are mutually exclusive"
                .into(),
        );
    }
    Ok(())
}

/// `MaxRanges`, `MaxRangeOverlaps`, `MaxRangeReversals`: `none`,
/// `default`, `unlimited` or a positive number.
fn range_limit(inv: &Invocation<'_>, default: u32) -> Result<crate::http::range::Limit, String> {
    let word = &inv.words[0];
    if word.eq_ignore_ascii_case("none") {
        return Ok(Some(0));
    }
    if word.eq_ignore_ascii_case("default") {
        return Ok(Some(default));
    }
    if word.eq_ignore_ascii_case("unlimited") {
        return Ok(None);
    }
    // `atoi`: leading digits count, anything after them is ignored.
    let digits: String = word
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    match digits.parse::<u32>() {
        Ok(n) if n > 0 => Ok(Some(n)),
        _ => Err(format!(
            "{} requires 'none', 'default', 'unlimited' or a positive integer",
            inv.name
        )),
    }
}

/// `AllowEncodedSlashes On|Off|NoDecode` (any case).
fn encoded_slashes(word: &str) -> Result<crate::uri::EncodedSlashes, String> {
    use crate::uri::EncodedSlashes;
    if word.eq_ignore_ascii_case("on") {
        Ok(EncodedSlashes::On)
    } else if word.eq_ignore_ascii_case("off") {
        Ok(EncodedSlashes::Off)
    } else if word.eq_ignore_ascii_case("nodecode") {
        Ok(EncodedSlashes::NoDecode)
    } else {
        Err("AllowEncodedSlashes must be On, Off, or NoDecode".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uri::EncodedSlashes;

    #[test]
    fn allow_encoded_slashes_words() {
        assert_eq!(encoded_slashes("On"), Ok(EncodedSlashes::On));
        assert_eq!(encoded_slashes("off"), Ok(EncodedSlashes::Off));
        assert_eq!(encoded_slashes("NODECODE"), Ok(EncodedSlashes::NoDecode));
        assert_eq!(
            encoded_slashes("yes"),
            Err("AllowEncodedSlashes must be On, Off, or NoDecode".to_string())
        );
    }
}
