//! Privilege separation: when htaccel starts as root with a `User` to
//! become, a small broker process stays root and the server runs as
//! `User`, so that a graceful reload opens the log files and reads the
//! TLS keys as Apache's root parent does (Debian's `root:adm 640` logs
//! after logrotate, `root:ssl-cert 640` keys), while the process that
//! talks to clients never has those rights.
//!
//! The broker is forked at start, before the configuration is read and
//! before any other thread exists, so it is a copy of the program holding
//! only the way to read the configuration (it ends at once if the
//! configuration names no `User` after all). It answers these requests,
//! and never opens a path the server names unless a configuration it
//! read names it too:
//!
//! - *prepare*: read the configuration again (as root, from the files the
//!   server started with), open every log file it names (appending,
//!   created if missing), start its piped loggers (as root, as Apache's
//!   parent does), open every certificate, key and CA file its TLS
//!   servers name, and pass the descriptors back (`SCM_RIGHTS`); or the
//!   reason the configuration does not load;
//! - *restart logger*: start again a piped logger whose command a
//!   configuration it read names (one that died);
//! - *write* or *remove the pid file*: a `PidFile` a configuration it
//!   read names, holding the server's process ID (removed only while it
//!   still holds it), since `/run/apache2` is root's.
//!
//! Why not Apache's design, a root parent starting new children on each
//! reload: configuration generations live inside the one serving process
//! (requests in flight finish on theirs; sockets, caches and watches are
//! kept), and opening files is all a reload needs root for.
//!
//! The server then reads the configuration itself to build the engine
//! and takes each log and TLS file from what the broker passed
//! ([`Files`]). A file the broker did not open (the configuration changed
//! between the two readings) is opened by the server with its own rights,
//! which gives it nothing it could not do alone.
//!
//! The broker ends when the server does (end of file on the channel, or
//! the parent-death signal), and ignores the signals meant for the server.
//! Not used under `-X` or when started as another user than root: the one
//! process then does everything, as before.

mod broker;
mod wire;

use crate::logs::{self, Target};
use crate::piped_log::PipedLog;
use crate::reload::ReadConfig;
use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Request: read the configuration and open what it names.
const PREPARE: u8 = b'R';
/// Request: start this piped logger again (the command follows).
const RESTART_LOGGER: u8 = b'P';
/// Request: write the server's process ID to this `PidFile` (follows).
const WRITE_PID_FILE: u8 = b'W';
/// Request: remove this `PidFile` (follows) if it holds the server's ID.
const REMOVE_PID_FILE: u8 = b'U';
/// Reply: a log target (follows), its descriptor attached.
const LOG: u8 = b'L';
/// Reply: a TLS file's path (follows), its descriptor attached.
const TLS_FILE: u8 = b'T';
/// Reply: the request failed, for the reason that follows.
const FAILED: u8 = b'E';
/// Reply: the end of a prepared configuration's files.
const DONE: u8 = b'D';

/// The server's end of the channel, while a broker runs.
static BROKER: Mutex<Option<wire::Channel>> = Mutex::new(None);

/// Fork the broker. Call before any thread exists and before anything is
/// opened that the broker should not hold: it keeps a copy of `read`.
pub fn start(read: &mut ReadConfig) -> Result<(), String> {
    let (server, broker) = wire::pair().map_err(|e| format!("htaccel: privileged broker: {e}"))?;
    // SAFETY: the process has one thread (see above), so the child is a
    // whole copy of it.
    match unsafe { libc::fork() } {
        -1 => Err(format!(
            "htaccel: privileged broker: fork: {}",
            io::Error::last_os_error()
        )),
        0 => {
            drop(server);
            broker::run(broker, read)
        }
        pid => {
            drop(broker);
            *lock() = Some(server);
            BROKER_PID.store(pid, std::sync::atomic::Ordering::Relaxed);
            Ok(())
        }
    }
}

/// The broker's process ID (0: none was started).
static BROKER_PID: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// The server will not switch users after all: the broker is not needed.
/// It ends when its channel closes; it is waited for here.
pub fn dismiss() {
    if lock().take().is_some() {
        let pid = BROKER_PID.swap(0, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: waits for our own child; no status is read.
        unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
    }
}

fn lock() -> std::sync::MutexGuard<'static, Option<wire::Channel>> {
    BROKER.lock().unwrap_or_else(|e| e.into_inner())
}

/// Where a configuration generation's log files and TLS files come from.
pub enum Files {
    /// Opened and read by this process, with its own rights.
    Own,
    /// Opened by the broker, as root, for the configuration it read.
    Brokered {
        logs: HashMap<String, VecDeque<OwnedFd>>,
        tls: HashMap<PathBuf, OwnedFd>,
    },
}

impl Files {
    /// The files for the next generation: the broker's when one runs
    /// (an error: the configuration it read does not load, or a log
    /// could not be opened), else this process's own.
    pub fn for_next_generation() -> Result<Files, String> {
        let guard = lock();
        let Some(channel) = guard.as_ref() else {
            return Ok(Files::Own);
        };
        let broken = |e: io::Error| format!("htaccel: privileged broker: {e}");
        channel.send(&[PREPARE], None).map_err(broken)?;
        let mut logs: HashMap<String, VecDeque<OwnedFd>> = HashMap::new();
        let mut tls = HashMap::new();
        loop {
            let Some((message, fd)) = channel.recv().map_err(broken)? else {
                return Err("htaccel: privileged broker: it has ended".into());
            };
            let text = || String::from_utf8_lossy(&message[1..]).into_owned();
            match (message[0], fd) {
                (LOG, Some(fd)) => logs.entry(text()).or_default().push_back(fd),
                (TLS_FILE, Some(fd)) => {
                    tls.insert(PathBuf::from(text()), fd);
                }
                (FAILED, None) => return Err(text()),
                (DONE, None) => return Ok(Files::Brokered { logs, tls }),
                _ => return Err("htaccel: privileged broker: unexpected answer".into()),
            }
        }
    }

    /// Open a log target (see [`logs::open_target`]).
    pub fn open_log(&mut self, target: &str) -> io::Result<Target> {
        if let Files::Brokered { logs, .. } = self {
            if let Some(fd) = logs.get_mut(target).and_then(VecDeque::pop_front) {
                return Ok(match target.strip_prefix('|') {
                    Some(command) => Target::Pipe(PipedLog::adopt(command, File::from(fd))),
                    None => Target::File(File::from(fd)),
                });
            }
        }
        logs::open_target(target)
    }

    /// The metadata of the TLS files the broker opened, by path, for
    /// mod_ssl's checks when the configuration is read
    /// (`htaccel_engine::modules::ssl::opened_elsewhere`).
    pub fn tls_metadata(&self) -> HashMap<PathBuf, std::fs::Metadata> {
        let Files::Brokered { tls, .. } = self else {
            return HashMap::new();
        };
        tls.iter()
            .filter_map(|(path, fd)| {
                let meta = File::from(fd.try_clone().ok()?).metadata().ok()?;
                Some((path.clone(), meta))
            })
            .collect()
    }

    /// The whole content of a certificate, key or CA file.
    pub fn read_tls(&self, path: &Path) -> io::Result<Vec<u8>> {
        if let Files::Brokered { tls, .. } = self {
            if let Some(fd) = tls.get(path) {
                return read_whole(&File::from(fd.try_clone()?));
            }
        }
        std::fs::read(path)
    }
}

/// A file's content from its start, whatever the descriptor's offset.
fn read_whole(file: &File) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read_at(&mut buf, out.len() as u64)?;
        if n == 0 {
            return Ok(out);
        }
        out.extend_from_slice(&buf[..n]);
    }
}

/// Write (`remove`: false) or remove the pid file at `path` through the
/// broker, when one runs; `None` without a broker.
pub fn pid_file(path: &Path, remove: bool) -> Option<Result<(), String>> {
    let guard = lock();
    let channel = guard.as_ref()?;
    let mut request = vec![if remove {
        REMOVE_PID_FILE
    } else {
        WRITE_PID_FILE
    }];
    request.extend_from_slice(path.as_os_str().as_encoded_bytes());
    let answer = channel.send(&request, None).and_then(|()| channel.recv());
    Some(match answer {
        Ok(Some((m, None))) if m.first() == Some(&DONE) => Ok(()),
        Ok(Some((m, None))) if m.first() == Some(&FAILED) => {
            Err(String::from_utf8_lossy(&m[1..]).into_owned())
        }
        Ok(_) => Err("privileged broker: unexpected answer".into()),
        Err(e) => Err(format!("privileged broker: {e}")),
    })
}

/// Start a piped logger again through the broker, when one runs: the
/// write end of its standard input. `None` without a broker.
pub fn restart_logger(command: &str) -> Option<io::Result<File>> {
    let guard = lock();
    let channel = guard.as_ref()?;
    let mut request = vec![RESTART_LOGGER];
    request.extend_from_slice(command.as_bytes());
    let answer = channel.send(&request, None).and_then(|()| channel.recv());
    Some(match answer {
        Ok(Some((m, Some(fd)))) if m.first() == Some(&LOG) => Ok(File::from(fd)),
        Ok(Some((m, None))) if m.first() == Some(&FAILED) => Err(io::Error::other(
            String::from_utf8_lossy(&m[1..]).into_owned(),
        )),
        Ok(_) => Err(io::Error::other("privileged broker: unexpected answer")),
        Err(e) => Err(e),
    })
}
