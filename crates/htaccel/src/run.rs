//! Carrying out a command: read the configuration through the engine,
//! open the logs, bind, drop privileges, serve.

use crate::cli::Cmd;
use crate::logs::{self, Logs};
use crate::privileges;
use crate::privsep::Files;
use crate::reload::{Generation, ReadConfig, Reloads};
use crate::startup;
use htaccel_conf::ParseOptions;
use htaccel_engine::engine::{Engine, Loaded};
use htaccel_engine::modules::php::pool;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const SERVE_CONF: &str = include_str!("serve.conf");

/// Run a command; the process exit code.
pub fn execute(cmd: Cmd) -> i32 {
    if let Cmd::Check(opts) = cmd {
        return crate::check::execute(opts);
    }
    if let Cmd::Explain {
        docroot,
        url,
        method,
        headers,
        file,
        defines,
    } = cmd
    {
        return crate::explain::execute(crate::explain::Query {
            docroot,
            url,
            method,
            headers,
            file,
            defines,
        });
    }
    match try_execute(cmd) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("{e}");
            1
        }
    }
}

fn try_execute(cmd: Cmd) -> Result<(), String> {
    match cmd {
        Cmd::Serve {
            docroot,
            listen,
            php,
        } => {
            let root = std::fs::canonicalize(&docroot)
                .map_err(|e| format!("htaccel: cannot serve {}: {e}", docroot.display()))?;
            if !root.is_dir() {
                return Err(format!(
                    "htaccel: cannot serve {}: not a directory",
                    root.display()
                ));
            }
            // A bare `--php` loads mod_php, which needs a pool: the
            // distribution's default one, else a clear refusal.
            let php = match php.as_deref() {
                Some("") => Some(
                    htaccel_engine::modules::php::pool::find_default(None)
                        .map(|p| format!("unix:{}", p.display()))
                        .ok_or_else(|| serve_php_refusal(&root))?,
                ),
                _ => php,
            };
            let fpm = php.as_deref().map(|a| (a, pool::proxy_handler(a)));
            if fpm.is_none() {
                warn_php_files(&root);
            }
            let text = SERVE_CONF
                .replace("@DOCROOT@", &root.to_string_lossy())
                .replace("@LISTEN@", &listen)
                .replace("@PHP_FPM@", fpm.as_ref().map_or("", |f| f.0))
                .replace("@PHP_HANDLER@", fpm.as_ref().map_or("", |f| f.1.as_str()));
            // `--php` turns on serve.conf's `LoadModule php_module`.
            let mut defines = Vec::new();
            if php.is_some() {
                defines.push("HTACCEL_PHP".to_string());
            }
            if fpm.is_some() {
                defines.push("HTACCEL_FPM".to_string());
            }
            let read = move || {
                let nodes = htaccel_conf::parse_str(&text, "serve.conf", &ParseOptions::default())
                    .map_err(|e| e.to_string())?;
                let loaded = startup::load_nodes(
                    &nodes,
                    PathBuf::from(startup::DEFAULT_SERVER_ROOT),
                    defines.clone(),
                )?;
                for n in &loaded.notices {
                    eprintln!("htaccel: {}: {} (serve.conf)", n.origin, n.message);
                }
                Ok(loaded)
            };
            serve(Box::new(read), Some(&root), 0)
        }
        Cmd::Config(start) => {
            start.redirect_startup_log()?;
            let threads = if start.single { 1 } else { 0 };
            serve(Box::new(move || start.load()), None, threads)
        }
        Cmd::Check(_) | Cmd::Explain { .. } => unreachable!("handled by execute"),
        Cmd::ConfigTest(start) => {
            start.redirect_startup_log()?;
            let loaded = start.load()?;
            let sink: Arc<dyn htaccel_engine::http::Log> = Arc::new(Logs::new(
                logs::open_target("/dev/stderr").map_err(|e| e.to_string())?,
                "warn",
                Vec::new(),
            ));
            let engine = Engine::new(&loaded, sink)?;
            // mod_ssl's certificates and keys are read as at start
            // (mod_md's store is read, never written).
            htaccel_server::md::config_test_only();
            htaccel_server::tls::TlsSetup::build(&engine.tls_ports())
                .map_err(|e| format!("htaccel: {e}"))?;
            crate::dump::config_test(&start, &loaded)
        }
        Cmd::Signal(start, action) => crate::apachectl::signal(start, action),
        Cmd::Version => {
            print!("{}", crate::dump::version());
            Ok(())
        }
        Cmd::CompiledModules => {
            print!("{}", crate::dump::compiled_modules());
            Ok(())
        }
        Cmd::Settings => {
            print!("{}", crate::dump::settings());
            Ok(())
        }
    }
}

/// Why `htaccel serve --php` (no address) cannot start: no default pool.
fn serve_php_refusal(root: &Path) -> String {
    format!(
        "htaccel: serve --php: no PHP-FPM pool found (no {}/php*-fpm.sock, no {}). Start PHP-FPM (Debian: apt install php-fpm), or name its socket:\n\n    htaccel serve {} --php=unix:/run/php/php8.2-fpm.sock\n",
        pool::DEBIAN_RUN_DIR,
        pool::RHEL_SOCKET,
        root.display()
    )
}

/// `htaccel serve` without a PHP backend: say so at start when the
/// directory holds PHP files, which are then sent as files, source
/// included, as Apache without PHP sends them.
fn warn_php_files(root: &Path) {
    if let Some(found) = crate::php_scan::first_php_file(root) {
        eprintln!(
            "htaccel: warning: {} holds PHP files (such as {}) and no PHP backend is configured: \
they are sent as plain files, source code included, as Apache without PHP sends them. \
To run them on PHP-FPM: htaccel serve {} --php=unix:/run/php/php8.2-fpm.sock",
            root.display(),
            found.display(),
            root.display()
        );
    }
}

/// Raise the soft limit on open files to the hard one (at most 2^20), as
/// Debian's `apache2ctl` raises Apache's (`ulimit -n`) and as services are
/// expected to do for themselves under systemd, whose soft default of
/// 1,024 would leave the open-file cache a few dozen descriptors per
/// thread (it takes a sixteenth of the limit). A limit that cannot be
/// raised stays as it was: the caches then hold fewer files.
fn raise_open_file_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return;
    }
    let wanted = limit.rlim_max.min(1 << 20);
    if limit.rlim_cur < wanted {
        limit.rlim_cur = wanted;
        // SAFETY: setrlimit reads the struct it is given.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) };
    }
}

/// Parse `Listen` arguments as Apache does: `port` (every address, IPv6
/// and IPv4), `addr:port`, `[v6]:port`.
fn listen_addrs(spec: &str) -> Result<Vec<SocketAddr>, String> {
    if let Ok(port) = spec.parse::<u16>() {
        return Ok(vec![htaccel_server::wildcard(port)]);
    }
    spec.to_socket_addrs()
        .map(|a| a.collect())
        .map_err(|e| format!("Listen {spec}: {e}"))
}

/// Serve until stopped. `threads`: worker threads (0: one per core).
pub(crate) fn serve(
    mut read: ReadConfig,
    serve_root: Option<&Path>,
    threads: usize,
) -> Result<(), String> {
    // As root with worker threads to come, fork the privileged broker
    // first, while this is the only thread (see `privsep`). It stays
    // only if privileges are dropped below.
    raise_open_file_limit();
    if privileges::is_root() && threads != 1 {
        crate::privsep::start(&mut read)?;
    }
    let loaded = read()?;
    let (switch, after_bind) = privilege_step(&loaded, serve_root)?;
    if !switch {
        crate::privsep::dismiss();
    }
    let first = Generation::build(&loaded, &mut Files::for_next_generation()?)?;

    let mut listen = Vec::new();
    for (spec, origin) in &loaded.build.global.listen {
        listen.extend(listen_addrs(spec).map_err(|e| format!("{origin}: {e}"))?);
    }
    if listen.is_empty() {
        return Err(
            "htaccel: no listening sockets available, shutting down (add a Listen directive)"
                .into(),
        );
    }
    let mut opts = first.opts.clone();
    opts.listen = listen;
    opts.threads = match threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };

    // mod_md's certificate manager starts as `User`, once bound.
    let (md, md_log) = (first.engine.managed_domains().to_vec(), first.log.clone());
    let after_bind: AfterBind = Box::new(move || {
        after_bind()?;
        crate::reload::MD_MANAGER_MAY_RUN.store(true, std::sync::atomic::Ordering::Relaxed);
        if !md.is_empty() {
            htaccel_server::md::start(&md, md_log);
        }
        Ok(())
    });
    let after_bind = announce_ready(after_bind);
    let pid_file = first.write_pid_file(None)?;
    let mut reloads = Reloads {
        read,
        log: first.log.clone(),
        listen: first.listen.clone(),
        graceful_stop: first.graceful_stop,
        pid_file,
    };
    htaccel_server::run_controlled(first.engine, opts, after_bind, &mut reloads).map_err(|e| {
        let text = e.to_string();
        // Apache's own words for a socket that cannot be bound stand alone.
        if text.contains("AH00072") {
            text
        } else {
            format!("htaccel: {text}")
        }
    })
}

/// Once bound and running as the configured user: tell systemd the
/// service is ready (`Type=notify`) and, under `WatchdogSec=`, keep
/// telling it that the process lives.
fn announce_ready(after_bind: AfterBind) -> AfterBind {
    Box::new(move || {
        after_bind()?;
        let notifier = crate::sd_notify::Notifier::from_env();
        if let Err(e) = notifier.notify("READY=1") {
            eprintln!("htaccel: warning: could not notify systemd of readiness: {e}");
        }
        if let Some(every) = notifier.watchdog_interval() {
            std::thread::Builder::new()
                .name("watchdog".into())
                .spawn(move || loop {
                    std::thread::sleep(every);
                    let _ = notifier.notify("WATCHDOG=1");
                })?;
        }
        Ok(())
    })
}

/// What to do once the sockets are bound: become `User`/`Group` when
/// running as root, as Apache does. Under `serve`, a document root the
/// configured user cannot read is served without switching (with a
/// warning), since the built-in configuration's `www-data` is a default
/// the user never chose.
type AfterBind = Box<dyn FnOnce() -> std::io::Result<()> + Send>;

/// Make `dir` and everything under it belong to `uid`:`gid` (symbolic
/// links are not followed).
fn give_tree(dir: &Path, uid: u32, gid: u32) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::os::unix::fs::lchown(dir, Some(uid), Some(gid))?;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            give_tree(&entry.path(), uid, gid)?;
        } else {
            std::os::unix::fs::lchown(entry.path(), Some(uid), Some(gid))?;
        }
    }
    Ok(())
}

/// Also says whether the user is switched.
fn privilege_step(loaded: &Loaded, serve_root: Option<&Path>) -> Result<(bool, AfterBind), String> {
    let g = &loaded.build.global;
    let Some(user) = g.user.clone().filter(|_| privileges::is_root()) else {
        return Ok((
            false,
            Box::new(|| {
                crate::apachectl::tell_ready();
                Ok(())
            }),
        ));
    };
    let (uid, gid) =
        privileges::resolve(&user, g.group.as_deref()).map_err(|e| format!("htaccel: {e}"))?;
    // mod_md's store is written by the certificate manager, which runs as
    // `User` once privileges are dropped (Apache makes it the child's too):
    // it is given to `User` just before the switch, after the start made
    // its temporary certificates.
    let md_store = (!g.modules.md.domains.is_empty()).then(|| {
        g.modules
            .md
            .store_dir
            .clone()
            .unwrap_or_else(|| loaded.env.server_root.join("md"))
    });
    if let Some(root) = serve_root {
        if !privileges::can_read_dir(root, uid, gid) {
            eprintln!(
                "htaccel: warning: user {user} cannot read {}; serving as root. Run htaccel as an ordinary user, or make the directory readable by {user}.",
                root.display()
            );
            return Ok((
                false,
                Box::new(|| {
                    crate::apachectl::tell_ready();
                    Ok(())
                }),
            ));
        }
    }
    Ok((
        true,
        Box::new(move || {
            if let Some(store) = &md_store {
                give_tree(store, uid, gid).map_err(|e| {
                    std::io::Error::new(e.kind(), format!("MDStoreDir {}: {e}", store.display()))
                })?;
            }
            privileges::drop_to(uid, gid, &user)?;
            crate::apachectl::tell_ready();
            Ok(())
        }),
    ))
}
