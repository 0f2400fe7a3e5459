//! Piped logs (`ErrorLog "|program"`, `CustomLog "|$command" …`): a logger
//! program reading the lines on its standard input, started with the
//! configuration generation that names it, as Apache's piped logs.
//!
//! Apache restarts a logger that dies. Here a logger found dead by a write
//! (the pipe is broken) is started again and the line written to the new
//! one, so every line written after a logger died reaches its successor;
//! lines the dead logger had received but not processed are lost, as in
//! Apache.

use std::fs::File;
use std::io::Write;
use std::os::fd::{FromRawFd, IntoRawFd};
use std::sync::Mutex;

/// A running logger and how to start it again.
pub struct PipedLog {
    command: String,
    pipe: Mutex<File>,
}

impl PipedLog {
    /// Start `command` (the target without its leading `|`).
    pub fn start(command: &str) -> std::io::Result<PipedLog> {
        Ok(PipedLog {
            command: command.to_string(),
            pipe: Mutex::new(spawn(command)?),
        })
    }

    /// A logger started elsewhere (by the privileged broker): `pipe` is
    /// the write end of its standard input.
    pub fn adopt(command: &str, pipe: File) -> PipedLog {
        PipedLog {
            command: command.to_string(),
            pipe: Mutex::new(pipe),
        }
    }

    /// Write one line; a broken pipe starts the logger again first (by
    /// the privileged broker when there is one, so that it runs as root
    /// as its predecessor did).
    pub fn write_line(&self, line: &[u8]) {
        let mut pipe = self.pipe.lock().unwrap_or_else(|e| e.into_inner());
        match pipe.write_all(line) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                let fresh = crate::privsep::restart_logger(&self.command)
                    .unwrap_or_else(|| spawn(&self.command));
                if let Ok(fresh) = fresh {
                    *pipe = fresh;
                    let _ = pipe.write_all(line);
                }
            }
            _ => {}
        }
    }
}

/// Start a logger: `program args` or `|program args` run directly (no
/// shell, no PATH search, as Apache's), `$command` by `/bin/sh -c`; the
/// write end of its standard input.
pub(crate) fn spawn(command: &str) -> std::io::Result<File> {
    let mut cmd = if let Some(shell) = command.strip_prefix('$') {
        let mut c = std::process::Command::new("/bin/sh");
        c.arg("-c").arg(shell.trim());
        c
    } else {
        let words = htaccel_conf::split_args(command.strip_prefix('|').unwrap_or(command));
        let Some((program, args)) = words.split_first() else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "empty piped log command",
            ));
        };
        if !program.contains('/') {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("(2)No such file or directory: AH00104: unable to start piped log program '{command}'"),
            ));
        }
        let mut c = std::process::Command::new(program);
        c.args(args);
        c
    };
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("{e}: AH00104: unable to start piped log program '{command}'"),
            )
        })?;
    let stdin = child.stdin.take().expect("piped");
    // The logger ends when its pipe closes (its generation was replaced,
    // the server stopped) or by itself; reap it then.
    std::thread::Builder::new()
        .name("htaccel-logger".into())
        .spawn(move || {
            let _ = child.wait();
        })?;
    // SAFETY: the descriptor is the pipe's write end, owned from here on.
    Ok(unsafe { File::from_raw_fd(stdin.into_raw_fd()) })
}
