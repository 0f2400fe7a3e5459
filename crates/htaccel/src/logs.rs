//! The error log and the access logs: where lines go. Line formats come
//! from the engine (`log_format`), so `explain` and tests share them.

use crate::piped_log::PipedLog;
use htaccel_engine::config::server::LogCondition;
use htaccel_engine::error_log_format::{ErrorLogFormat, LineFacts};
use htaccel_engine::http::{AccessEntry, ErrorEvent, Log};
use htaccel_engine::log_format::LEVELS;
use htaccel_engine::log_format::{self, LogFormat};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::net::SocketAddr;
use std::os::fd::FromRawFd;
use std::sync::Arc;

/// A level's rank, most severe first (an unknown name ranks last).
fn severity(level: &str) -> usize {
    LEVELS
        .iter()
        .position(|l| l.eq_ignore_ascii_case(level))
        .unwrap_or(LEVELS.len())
}

/// Open a log target: a path (appended to), `/dev/stdout`, `/dev/stderr`,
/// or a piped logger (`|program args`, `||program args`: run directly;
/// `|$command`: run by `/bin/sh -c`; see `piped_log.rs`), whose standard
/// input receives the lines, as Apache's piped logs.
pub fn open_target(target: &str) -> std::io::Result<Target> {
    if let Some(command) = target.strip_prefix('|') {
        return Ok(Target::Pipe(PipedLog::start(command)?));
    }
    Ok(Target::File(match target {
        // SAFETY: descriptors 1 and 2 are open for the life of the process;
        // `dup` gives this File its own descriptor to own and close.
        "/dev/stdout" => unsafe { File::from_raw_fd(libc::dup(1)) },
        "/dev/stderr" => unsafe { File::from_raw_fd(libc::dup(2)) },
        path => OpenOptions::new().create(true).append(true).open(path)?,
    }))
}

/// Where a log's lines go.
pub enum Target {
    File(File),
    Pipe(PipedLog),
    /// The system logger (`ErrorLog syslog…`, opened by `syslog::open`).
    Syslog,
}

impl Target {
    /// Write one line, in one write (`O_APPEND` and pipes keep lines of
    /// up to a page whole across threads).
    fn write_line(&self, line: &[u8]) {
        match self {
            Target::File(f) => {
                let _ = (&*f).write_all(line);
            }
            Target::Pipe(p) => p.write_line(line),
            // Lines for syslog are sent with their level (`Logs`); an
            // access log is never one.
            Target::Syslog => {}
        }
    }
}

/// One access log: where, in which format, and for which requests.
pub type AccessLog = (Arc<Target>, LogFormat, Option<LogCondition>);

pub struct Logs {
    error: Target,
    /// `ErrorLogFormat`, else Apache's default line.
    format: Option<ErrorLogFormat>,
    /// The server's `ServerName` (`%v` of a line about no request).
    server_name: String,
    threshold: usize,
    /// `LogLevel module:level` (later entries win).
    module_thresholds: Vec<(String, usize)>,
    access: Vec<AccessLog>,
}

impl Logs {
    pub fn new(error: Target, level: &str, access: Vec<AccessLog>) -> Self {
        Logs {
            error,
            format: None,
            server_name: String::new(),
            threshold: severity(level),
            module_thresholds: Vec::new(),
            access,
        }
    }

    /// `ErrorLogFormat` (parsed when the configuration was read) and the
    /// server's name.
    pub fn with_format(mut self, format: Option<&ErrorLogFormat>, server_name: &str) -> Self {
        self.format = format.cloned();
        self.server_name = server_name.to_string();
        self
    }

    /// One error-log line (without its newline) to its target.
    fn write_error(&self, level: &str, mut line: String) {
        if matches!(self.error, Target::Syslog) {
            crate::syslog::send(severity(level), &line);
        } else {
            line.push('\n');
            self.error.write_line(line.as_bytes());
        }
    }

    /// Per-module levels (`LogLevel rewrite:info`).
    pub fn with_module_levels(mut self, modules: &[(String, String)]) -> Self {
        self.module_thresholds = modules
            .iter()
            .map(|(m, l)| (m.clone(), severity(l)))
            .collect();
        self
    }

    /// Compile the access-log format for a `CustomLog` (nickname or format string).
    pub fn format(
        spec: &str,
        nicknames: &std::collections::HashMap<String, String>,
        ssl_loaded: bool,
    ) -> Result<LogFormat, String> {
        let text = nicknames
            .get(spec)
            .map(String::as_str)
            .unwrap_or(if spec.is_empty() {
                "%h %l %u %t \"%r\" %>s %b"
            } else {
                spec
            });
        log_format::LogFormat::compile_for(text, ssl_loaded)
    }
}

impl Log for Logs {
    fn access(&self, entry: &AccessEntry<'_>) {
        self.access_with(entry, &log_format::AccessDetails::default());
    }

    fn access_with(&self, entry: &AccessEntry<'_>, details: &log_format::AccessDetails<'_>) {
        if self.access.is_empty() {
            return;
        }
        let mut buf = Vec::with_capacity(256);
        for (file, format, condition) in &self.access {
            match condition.as_ref().map(|c| c.holds(entry)) {
                None | Some(Ok(true)) => {}
                Some(Ok(false)) => continue,
                Some(Err(reason)) => {
                    self.error(
                        "warn",
                        "log_config",
                        Some(entry.remote),
                        &format!("AH00644: Error evaluating log condition: {reason}"),
                    );
                    continue;
                }
            }
            buf.clear();
            format.render_with(entry, details, &mut buf);
            if buf.last() != Some(&b'\n') {
                buf.push(b'\n');
            }
            file.write_line(&buf);
        }
    }

    fn error(&self, level: &str, module: &str, client: Option<SocketAddr>, message: &str) {
        self.error_event(&ErrorEvent::without_request(level, module, client, message));
    }

    fn error_event(&self, event: &ErrorEvent<'_>) {
        let (level, module) = (event.level, event.module);
        // Apache writes `notice` lines whatever `LogLevel` says (its
        // start, reload and stop messages are notices), except to syslog.
        let to_syslog = matches!(self.error, Target::Syslog);
        let notice = level.eq_ignore_ascii_case("notice") && !to_syslog;
        let threshold = self
            .module_thresholds
            .iter()
            .rev()
            .find(|(m, _)| m == module)
            .map_or(self.threshold, |(_, t)| *t);
        if severity(level) > threshold && !notice {
            return;
        }
        // SAFETY: getpid and gettid have no preconditions.
        let (pid, tid) = unsafe { (libc::getpid() as u32, libc::gettid() as u64) };
        let time = std::time::SystemTime::now();
        if let Some(format) = &self.format {
            let facts = LineFacts {
                time,
                pid,
                tid,
                thread: log_format::current_tid(),
                server_name: &self.server_name,
            };
            if let Some(line) = format.render(event, &facts) {
                self.write_error(level, line);
            }
            return;
        }
        let time = (!to_syslog).then_some(time);
        let line = log_format::error_event_line(time, pid, Some(tid), event);
        self.write_error(level, line);
    }
}
