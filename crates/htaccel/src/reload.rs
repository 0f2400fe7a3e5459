//! Configuration generations and Apache's reload signals.
//!
//! A [`Generation`] is one reading of the configuration turned into what
//! the server runs: the engine, the log files opened for it and the
//! connection settings. The first is built at start; SIGUSR1 (`-k
//! graceful`) and SIGHUP (`-k restart`) build the next one from the files
//! as they are now, with freshly opened logs (which is how logrotate's
//! renamed files are let go), and the server hands it to new connections
//! while open ones finish on theirs (`htaccel_server`'s `generation.rs`).
//!
//! Unlike Apache, whose parent exits when the new configuration does not
//! load, a configuration that fails to read, compile or open its logs
//! leaves the running generation serving; the reason goes to the running
//! error log. What a generation cannot change in a running process is
//! said there too: the listening sockets (`Listen`) and the user are those
//! of the start. Started as root with `User`, the log and TLS files a
//! generation names are opened by the privileged broker (`privsep`),
//! which reads the configuration as root first.

use crate::logs::{Logs, Target};
use crate::pidfile::{self, PidFile};
use crate::privsep::Files;
use htaccel_engine::config::server::{CustomLog, ServerConf};
use htaccel_engine::engine::{Engine, Loaded};
use htaccel_engine::http::{Handler, Log};
use htaccel_engine::modules::ssl::opened_elsewhere::reading_with;
use htaccel_server::{Control, ServerOptions, Signalled};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Reads the configuration again, from the files (or the built-in text)
/// the server started with.
pub type ReadConfig = Box<dyn FnMut() -> Result<Loaded, String>>;

/// One configuration, ready to serve.
pub struct Generation {
    pub engine: Arc<Engine>,
    pub log: Arc<dyn Log>,
    /// The per-connection settings (`listen` and `threads` left empty).
    pub opts: ServerOptions,
    /// The `Listen` arguments, to tell when a reload asks for other sockets.
    pub listen: Vec<String>,
    /// `GracefulShutdownTimeout` (`None`: no limit).
    pub graceful_stop: Option<Duration>,
    /// Where `PidFile` says the process ID goes.
    pub pid_path: Option<std::path::PathBuf>,
}

/// Set once privileges are settled: mod_md's certificate manager may run.
pub(crate) static MD_MANAGER_MAY_RUN: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

impl Generation {
    /// Open the logs `loaded` names (through `files`) and build its engine.
    pub fn build(loaded: &Loaded, files: &mut Files) -> Result<Generation, String> {
        let main = &loaded.build.main;
        let root = &loaded.env.server_root;
        let ssl = loaded.env.is_loaded("ssl_module");
        // The main server's access logs are opened once: a virtual host
        // writing to them (having none of its own, or through `GlobalLog`)
        // shares the descriptor or the piped logger, as in Apache.
        let main_access = open_access(&main.custom_logs, root, files)?;
        let log: Arc<dyn Log> = Arc::new(open_logs(main, main, &main_access, root, ssl, files)?);
        // A `<VirtualHost>` with an `ErrorLog`, `CustomLog` or `LogLevel`
        // of its own writes to its own logs; the others share the main
        // server's, as in Apache.
        let mut vhost_logs = Vec::new();
        for v in &loaded.build.vhosts {
            vhost_logs.push(match has_own_logs(v) {
                true => Some(
                    Arc::new(open_logs(v, main, &main_access, root, ssl, files)?) as Arc<dyn Log>,
                ),
                false => None,
            });
        }
        let engine = Arc::new(Engine::with_vhost_logs(loaded, log.clone(), vhost_logs)?);
        // The log files it appends to, which may sit beside a document
        // root: their writes are not changes to any answer.
        htaccel_engine::watch::global().note_own_writes(
            log_targets(loaded)
                .into_iter()
                .map(|(target, _)| target)
                .filter(|t| t.starts_with('/')),
        );
        // mod_ssl's certificates and keys, read with each configuration (a
        // reload renews them, as Apache's graceful restart does).
        let tls_ports = engine.tls_ports();
        let tls = if tls_ports.is_empty() {
            None
        } else {
            let setup =
                htaccel_server::tls::TlsSetup::build_reading(&tls_ports, &|p| files.read_tls(p))
                    .map_err(|e| format!("htaccel: {e}"))?;
            setup.log_to(&log);
            Some(Arc::new(setup))
        };
        // mod_md's certificate manager, for the domains no earlier
        // generation already manages; the first generation's starts once
        // the process runs as `User` (`run::serve`), so that everything it
        // writes in the store belongs to that user.
        if !engine.managed_domains().is_empty()
            && MD_MANAGER_MAY_RUN.load(std::sync::atomic::Ordering::Relaxed)
        {
            htaccel_server::md::start(engine.managed_domains(), log.clone());
        }
        // The main server's settings; the engine gives each connection
        // and request its own server's (`Handler::address_settings`).
        let main_settings = engine.main.settings;
        let opts = ServerOptions {
            limits: main_settings.limits,
            timeouts: htaccel_server::Timeouts {
                timeout: main_settings.timeout,
                keepalive: main_settings.keepalive_timeout,
                ..Default::default()
            },
            keepalive: main_settings.keepalive,
            max_keepalive_requests: main_settings.max_keepalive_requests,
            server_header: engine.server_header.clone(),
            tls,
            ..Default::default()
        };
        let global = &loaded.build.global;
        Ok(Generation {
            engine,
            log,
            opts,
            listen: global.listen.iter().map(|(l, _)| l.clone()).collect(),
            graceful_stop: global
                .graceful_shutdown_timeout
                .filter(|&s| s > 0)
                .map(Duration::from_secs),
            pid_path: global.pid_file.as_deref().map(|p| pidfile::path(p, root)),
        })
    }

    /// Write the pid file this generation names, unless `current` is it.
    pub fn write_pid_file(&self, current: Option<PidFile>) -> Result<Option<PidFile>, String> {
        match (&self.pid_path, current) {
            (Some(want), Some(have)) if have.path() == want => Ok(Some(have)),
            (Some(want), _) => {
                let log = self.log.clone();
                let mut warn = |m: &str| log.error("warn", "core", None, m);
                PidFile::write(want.clone(), &mut warn).map(Some)
            }
            (None, _) => Ok(None),
        }
    }
}

/// Whether a `<VirtualHost>` opens logs of its own.
fn has_own_logs(v: &ServerConf) -> bool {
    v.error_log.is_some()
        || v.error_log_format.is_some()
        || !v.custom_logs.is_empty()
        || v.log_level.is_some()
        || !v.log_level_modules.is_empty()
}

/// A server's `ErrorLog`, else the main server's, else standard error.
fn error_target(conf: &ServerConf, main: &ServerConf) -> String {
    conf.error_log
        .clone()
        .or_else(|| main.error_log.clone())
        .unwrap_or_else(|| "/dev/stderr".into())
}

/// Every log target a generation of `loaded` opens, in the order
/// [`Generation::build`] opens them, resolved against `ServerRoot`, each
/// with the words that name it in an error (the privileged broker opens
/// these, and only these, for the server).
pub fn log_targets(loaded: &Loaded) -> Vec<(String, String)> {
    let main = &loaded.build.main;
    let root = &loaded.env.server_root;
    let mut out = Vec::new();
    let own = loaded.build.vhosts.iter().filter(|v| has_own_logs(v));
    for conf in std::iter::once(main).chain(own) {
        let error = error_target(conf, main);
        if !crate::syslog::is_syslog(&error) {
            out.push((relative_to(root, &error), format!("error log file {error}")));
        }
        for cl in &conf.custom_logs {
            out.push((
                relative_to(root, &cl.target),
                format!("transfer log file {}", cl.target),
            ));
        }
    }
    out
}

/// Open the targets of `logs`, in their order.
fn open_access(
    logs: &[CustomLog],
    root: &Path,
    files: &mut Files,
) -> Result<Vec<Arc<Target>>, String> {
    logs.iter()
        .map(|cl| {
            files
                .open_log(&relative_to(root, &cl.target))
                .map(Arc::new)
                .map_err(|e| {
                    format!(
                        "htaccel: could not open transfer log file {}: {e}",
                        cl.target
                    )
                })
        })
        .collect()
}

/// The logs of one server (the main one or a `<VirtualHost>`): its own
/// `ErrorLog` and `LogLevel`, each else the main server's; its own
/// `CustomLog`s followed by the main server's `GlobalLog`s, or with none
/// of its own every log of the main server (`main_access`, opened
/// already); `LogFormat` nicknames its own, then the main server's (the
/// main server's alone for a `GlobalLog` beside logs of its own, whose
/// format the main server settled).
fn open_logs(
    conf: &ServerConf,
    main: &ServerConf,
    main_access: &[Arc<Target>],
    root: &Path,
    ssl: bool,
    files: &mut Files,
) -> Result<Logs, String> {
    let error_target = error_target(conf, main);
    let error_file = if crate::syslog::is_syslog(&error_target) {
        let (facility, tag) = crate::syslog::parse(&error_target)?;
        crate::syslog::open(facility, &tag);
        Target::Syslog
    } else {
        files
            .open_log(&relative_to(root, &error_target))
            .map_err(|e| format!("htaccel: could not open error log file {error_target}: {e}"))?
    };
    let mut formats = main.log_formats.clone();
    formats.extend(conf.log_formats.clone());
    let compile = |cl: &CustomLog, formats| {
        Logs::format(&cl.format, formats, ssl).map_err(|e| format!("{}: {e}", cl.origin))
    };
    let mut access = Vec::new();
    if std::ptr::eq(conf, main) || conf.custom_logs.is_empty() {
        for (cl, target) in main.custom_logs.iter().zip(main_access) {
            access.push((target.clone(), compile(cl, &formats)?, cl.condition.clone()));
        }
    } else {
        let own = open_access(&conf.custom_logs, root, files)?;
        for (cl, target) in conf.custom_logs.iter().zip(own) {
            access.push((target, compile(cl, &formats)?, cl.condition.clone()));
        }
        let inherited = main
            .custom_logs
            .iter()
            .zip(main_access)
            .filter(|(cl, _)| cl.inherit);
        for (cl, target) in inherited {
            access.push((
                target.clone(),
                compile(cl, &main.log_formats)?,
                cl.condition.clone(),
            ));
        }
    }
    let level = conf
        .log_level
        .clone()
        .or_else(|| main.log_level.clone())
        .unwrap_or_else(|| "warn".into());
    let mut modules = main.log_level_modules.clone();
    if !std::ptr::eq(conf, main) {
        modules.extend(conf.log_level_modules.iter().cloned());
    }
    let format = conf
        .error_log_format
        .as_ref()
        .or(main.error_log_format.as_ref());
    let name = conf
        .server_name
        .as_deref()
        .or(main.server_name.as_deref())
        .unwrap_or_default();
    Ok(Logs::new(error_file, &level, access)
        .with_module_levels(&modules)
        .with_format(format, name))
}

/// A log target relative to `ServerRoot`, as Apache resolves it.
fn relative_to(root: &Path, target: &str) -> String {
    if target.starts_with('/') || target.starts_with('|') {
        target.to_string()
    } else {
        root.join(target).to_string_lossy().into_owned()
    }
}

/// The running server's side of reloads: what it needs to build the next
/// generation and to say what happened.
pub struct Reloads {
    pub read: ReadConfig,
    /// The running generation's error log.
    pub log: Arc<dyn Log>,
    pub listen: Vec<String>,
    pub graceful_stop: Option<Duration>,
    pub pid_file: Option<PidFile>,
}

impl Control for Reloads {
    fn reload(&mut self, _signal: Signalled) -> Option<(Arc<dyn Handler>, ServerOptions)> {
        // With a privileged broker, it reads the configuration first and
        // opens what it names; then this process reads it to build the
        // engine.
        let next = match Files::for_next_generation().and_then(|mut files| {
            let opened = files.tls_metadata();
            reading_with(opened, || (self.read)())
                .and_then(|loaded| Generation::build(&loaded, &mut files))
        }) {
            Ok(next) => next,
            Err(e) => {
                self.log.error(
                    "error",
                    "core",
                    None,
                    &format!(
                        "{}; the configuration was not reloaded, the previous one keeps serving",
                        e.replace('\n', " ")
                    ),
                );
                return None;
            }
        };
        if next.listen != self.listen {
            next.log.error(
                "warn",
                "core",
                None,
                &format!(
                    "Listen changed ({} before, {} now): the listening sockets of the start are kept; restart htaccel (stop and start) to listen elsewhere",
                    self.listen.join(", "),
                    next.listen.join(", ")
                ),
            );
        }
        match next.write_pid_file(self.pid_file.take()) {
            Ok(p) => self.pid_file = p,
            Err(e) => next.log.error("error", "core", None, &e),
        }
        self.log = next.log.clone();
        self.graceful_stop = next.graceful_stop;
        Some((next.engine, next.opts))
    }

    fn graceful_stop_limit(&self) -> Option<Duration> {
        self.graceful_stop
    }

    fn reloaded(&mut self) {
        self.log.error(
            "notice",
            "mpm_event",
            None,
            &format!(
                "AH00489: htaccel/{} configured -- resuming normal operations",
                env!("CARGO_PKG_VERSION")
            ),
        );
    }
}
