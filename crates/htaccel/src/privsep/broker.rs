//! The broker's side: the root process's loop. It reads requests from the
//! server and answers with descriptors of what the configuration, read
//! here as root, names; nothing the server sends is a path.

use super::wire::Channel;
use super::{
    DONE, FAILED, LOG, PREPARE, REMOVE_PID_FILE, RESTART_LOGGER, TLS_FILE, WRITE_PID_FILE,
};
use crate::reload::{log_targets, ReadConfig};
use htaccel_engine::engine::Engine;
use htaccel_engine::http::{AccessEntry, Log};
use htaccel_engine::modules::ssl::opened_elsewhere;
use std::collections::HashSet;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Serve the server's requests until it ends; never returns.
pub(super) fn run(channel: Channel, read: &mut ReadConfig) -> ! {
    // SAFETY: prctl and signal with constant arguments; getppid has no
    // preconditions.
    unsafe {
        // End with the server even if it could not close the channel.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
        libc::prctl(libc::PR_SET_NAME, c"htaccel-priv".as_ptr());
        // The signals that reload or stop the server are the server's.
        for sig in [
            libc::SIGHUP,
            libc::SIGUSR1,
            libc::SIGUSR2,
            libc::SIGWINCH,
            libc::SIGINT,
            libc::SIGPIPE,
        ] {
            libc::signal(sig, libc::SIG_IGN);
        }
    }
    // SAFETY: getppid has no preconditions.
    let server = unsafe { libc::getppid() };
    let mut named = Named::default();
    while let Ok(Some((request, _))) = channel.recv() {
        let answered = match request[0] {
            PREPARE => prepare(&channel, read, &mut named),
            RESTART_LOGGER => {
                let command = String::from_utf8_lossy(&request[1..]).into_owned();
                restart_logger(&channel, &command, &named.loggers)
            }
            kind @ (WRITE_PID_FILE | REMOVE_PID_FILE) => {
                let path = PathBuf::from(std::ffi::OsStr::from_bytes(&request[1..]));
                let done = pid_file(&path, kind == REMOVE_PID_FILE, server, &named.pid_files);
                match done {
                    Ok(()) => channel.send(&[DONE], None),
                    Err(reason) => {
                        let mut m = vec![FAILED];
                        m.extend_from_slice(reason.as_bytes());
                        channel.send(&m, None)
                    }
                }
            }
            _ => channel.send(&[FAILED], None),
        };
        if answered.is_err() {
            break;
        }
    }
    // SAFETY: ends this process without running the server's exit code.
    unsafe { libc::_exit(0) }
}

/// What the configurations read here named, which the server may ask
/// for again.
#[derive(Default)]
struct Named {
    /// Piped logger commands.
    loggers: HashSet<String>,
    /// `PidFile` paths.
    pid_files: HashSet<PathBuf>,
}

/// Write the server's process ID to `path`, or remove `path` if it holds
/// it, when a configuration read here names it.
fn pid_file(
    path: &Path,
    remove: bool,
    server: libc::pid_t,
    named: &HashSet<PathBuf>,
) -> Result<(), String> {
    if !named.contains(path) {
        return Err(format!(
            "{}: no configuration names this PidFile",
            path.display()
        ));
    }
    if remove {
        if crate::pidfile::read(path) == Some(server) {
            std::fs::remove_file(path).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        return Ok(());
    }
    std::fs::write(path, format!("{server}\n"))
        .map_err(|e| format!("AH00099: could not create {}: {e}", path.display()))
}

/// Read the configuration; send a descriptor for each log target and TLS
/// file it names, then `DONE`, or `FAILED` with the reason.
fn prepare(channel: &Channel, read: &mut ReadConfig, named: &mut Named) -> std::io::Result<()> {
    let failed = |reason: &str| {
        let mut m = vec![FAILED];
        m.extend_from_slice(reason.as_bytes());
        channel.send(&m, None)
    };
    // The server reads the same files right after and says what they
    // note; here they are read in silence.
    let loaded = match silenced(read) {
        Ok(l) => l,
        Err(e) => return failed(&e),
    };
    if let Some(p) = &loaded.build.global.pid_file {
        let path = crate::pidfile::path(p, &loaded.env.server_root);
        named.pid_files.insert(path);
    }
    for (target, what) in log_targets(&loaded) {
        if target == "/dev/stdout" || target == "/dev/stderr" {
            continue;
        }
        let opened = match target.strip_prefix('|') {
            Some(command) => {
                named.loggers.insert(command.to_string());
                crate::piped_log::spawn(command)
            }
            None => std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&target),
        };
        match opened {
            Ok(file) => send_named(channel, LOG, &target, &file)?,
            Err(e) => return failed(&format!("htaccel: could not open {what}: {e}")),
        }
    }
    // Which TLS files: those of the servers the engine builds from this
    // configuration (its messages are the server's to write).
    let engine = match Engine::new(&loaded, Arc::new(Silent)) {
        Ok(e) => e,
        Err(e) => return failed(&e),
    };
    // Those the directives name (checked when the configuration is read,
    // in any server), then those the handshakes read (CA directories'
    // files too).
    let mut paths = opened_elsewhere::named_files(&engine);
    for path in htaccel_server::tls::TlsSetup::files(&engine.tls_ports()) {
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    for path in paths {
        // One that cannot be opened is the server's to report, when it
        // reads it.
        if let Ok(file) = std::fs::File::open(&path) {
            send_named(channel, TLS_FILE, &path.to_string_lossy(), &file)?;
        }
    }
    channel.send(&[DONE], None)
}

/// Start a logger a configuration named again.
fn restart_logger(
    channel: &Channel,
    command: &str,
    loggers: &HashSet<String>,
) -> std::io::Result<()> {
    let result = if loggers.contains(command) {
        crate::piped_log::spawn(command)
    } else {
        Err(std::io::Error::other(
            "no configuration names this piped logger",
        ))
    };
    match result {
        Ok(pipe) => send_named(channel, LOG, &format!("|{command}"), &pipe),
        Err(e) => {
            let mut m = vec![FAILED];
            m.extend_from_slice(e.to_string().as_bytes());
            channel.send(&m, None)
        }
    }
}

fn send_named(
    channel: &Channel,
    kind: u8,
    name: &str,
    file: &std::fs::File,
) -> std::io::Result<()> {
    let mut m = vec![kind];
    m.extend_from_slice(name.as_bytes());
    channel.send(&m, Some(file.as_fd()))
}

/// Run `f` with standard error sent to /dev/null (the broker is a single
/// thread while it reads).
fn silenced<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: dup, open and dup2 on descriptor 2 and descriptors owned
    // here; descriptor 2 is restored before returning.
    unsafe {
        let saved = libc::dup(2);
        if saved < 0 {
            return f();
        }
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if null < 0 {
            libc::close(saved);
            return f();
        }
        libc::dup2(null, 2);
        libc::close(null);
        let out = f();
        libc::dup2(saved, 2);
        libc::close(saved);
        out
    }
}

/// The log of the engine the broker builds only to learn the TLS files.
struct Silent;

impl Log for Silent {
    fn access(&self, _: &AccessEntry<'_>) {}
    fn error(&self, _: &str, _: &str, _: Option<std::net::SocketAddr>, _: &str) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_a_configuration_named_is_done() {
        let dir = std::env::temp_dir().join(format!("htaccel-broker-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let named_path = dir.join("named.pid");
        let other = dir.join("other.pid");
        let named = HashSet::from([named_path.clone()]);
        // A path no configuration named is neither written nor removed.
        std::fs::write(&other, "77\n").unwrap();
        assert!(pid_file(&other, false, 42, &named).is_err());
        assert!(pid_file(&other, true, 77, &named).is_err());
        assert_eq!(std::fs::read_to_string(&other).unwrap(), "77\n");
        // The named one: written with the server's ID, removed only while
        // it holds it.
        pid_file(&named_path, false, 42, &named).unwrap();
        assert_eq!(std::fs::read_to_string(&named_path).unwrap(), "42\n");
        pid_file(&named_path, true, 43, &named).unwrap();
        assert!(named_path.exists(), "another server's pid file is kept");
        pid_file(&named_path, true, 42, &named).unwrap();
        assert!(!named_path.exists());

        // A logger command no configuration named is not started.
        let (server, broker) = super::super::wire::pair().unwrap();
        restart_logger(&broker, "/bin/sh -c 'id > /tmp/x'", &HashSet::new()).unwrap();
        let (answer, fd) = server.recv().unwrap().unwrap();
        assert_eq!((answer[0], fd.is_none()), (FAILED, true));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
