//! CGI scripts run as child processes: how the server performs the
//! exchange the engine's mod_cgi asks for (`BackendRequest::Cgi`).
//!
//! * here: starting the script (its environment exactly as the engine
//!   built it, `argv` as Apache builds it, the script's directory as the
//!   working directory, three pipes), and a task apart from the
//!   connection that sends its standard error to the error log line by
//!   line as mod_cgi logs it (`AH01215: stderr from …`) and sees to its
//!   end: a script still running three seconds after its standard error
//!   closed gets `SIGTERM`, then `SIGKILL` three seconds later (mod_cgid's
//!   clean-up gives the same grace), and is always waited for (no
//!   zombies); one whose exchange is over is killed when the server stops
//!   (`kill_on_drop`).
//! * `exchange` (a step of the request's exchange, `crate::exchange`, as
//!   FastCGI's is, reading the client's body and writing through the
//!   connection's buffers): the request body to the script's standard input as it
//!   arrives (never held whole), then its standard output read as a CGI
//!   answer: the header block is parsed as FastCGI's is
//!   (`fastcgi::head_end`) and goes to the engine, the rest streams to the
//!   client; an `nph-` script's output goes to the client untouched.
//!
//! Like Apache, the whole body is written before the output is read; a
//! script's standard error is read all along so that a script writing
//! much of it never blocks. Every wait on the script is bounded by
//! `CGIDScriptTimeout` or else `Timeout`: no output in time before the
//! header block is a 504, after it the connection is cut.

pub(crate) mod exchange;

use htaccel_engine::http::backend::CgiRequest;
use htaccel_engine::http::{Handler, Log};
use std::ffi::OsStr;
use std::io;
use std::net::SocketAddr;
use std::os::unix::ffi::OsStrExt;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, ChildStderr, Command};

/// How long a script may go on after its exchange before `SIGKILL`.
const TERM_GRACE: Duration = Duration::from_secs(3);

/// The longest standard-error line logged as one (mod_cgi's
/// `HUGE_STRING_LEN`); longer lines are logged in pieces.
const ERR_LINE_MAX: usize = 8192;

/// Start the script.
pub(crate) fn spawn(req: &CgiRequest) -> io::Result<Child> {
    let mut cmd = Command::new(&req.program);
    if let Some(argv0) = req.argv.first() {
        cmd.arg0(OsStr::from_bytes(argv0));
    }
    cmd.args(req.argv.iter().skip(1).map(|a| OsStr::from_bytes(a)))
        .env_clear()
        .envs(
            req.env
                .iter()
                .map(|(n, v)| (OsStr::new(n.as_str()), OsStr::from_bytes(v))),
        )
        .current_dir(&req.dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Whatever happens to the exchange, the script does not outlive
        // its Child unwaited: tokio reaps what it kills.
        .kill_on_drop(true);
    if !req.rlimits.is_empty() {
        let limits = req.rlimits.clone();
        // SAFETY: between fork and exec only setrlimit(2), which is
        // async-signal-safe, runs; nothing is allocated.
        unsafe {
            cmd.pre_exec(move || {
                for &(resource, soft, hard) in &limits {
                    let l = libc::rlimit {
                        rlim_cur: soft,
                        rlim_max: hard,
                    };
                    if libc::setrlimit(resource as libc::__rlimit_resource_t, &l) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
    }
    cmd.spawn()
}

/// The error-log line for a script that could not be started.
pub(crate) fn spawn_error(req: &CgiRequest, e: &io::Error) -> String {
    format!(
        "{}: AH01241: exec of '{}' failed",
        htaccel_engine::log_format::os_error(e),
        req.script
    )
}

/// Log the script's standard error until it ends.
async fn log_stderr(err: ChildStderr, log: &dyn Log, client: SocketAddr, script: &CgiRequest) {
    let mut reader = BufReader::new(err);
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = match (&mut reader)
            .take(ERR_LINE_MAX as u64)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(n) => n,
            Err(_) => return,
        };
        if n == 0 {
            return;
        }
        let text = String::from_utf8_lossy(&line);
        let text = text
            .strip_suffix('\n')
            .map(|t| t.strip_suffix('\r').unwrap_or(t))
            .unwrap_or(&text);
        log.error(
            "error",
            script.module,
            Some(client),
            &format!("AH01215: stderr from {}: {text}", script.script),
        );
        // mod_cgi's ScriptLog gets each line too (with the status a
        // request has until its script says otherwise).
        if let Some(script_log) = &script.script_log {
            script_log.error(200, text);
        }
    }
}

/// A script's life apart from the connection, from its start: its
/// standard error logged as it comes, and the script waited for. Once its
/// exchange is over (`over` dropped), a script that has not exited
/// [`TERM_GRACE`] later gets `SIGTERM`, then `SIGKILL` after as long
/// again; what is left of its standard error (held open by a process it
/// started) is read for as long again at most.
pub(crate) async fn finish(
    mut child: Child,
    over: tokio::sync::oneshot::Receiver<()>,
    handler: Arc<dyn Handler>,
    client: SocketAddr,
    script: CgiRequest,
) {
    let stderr = child.stderr.take();
    let errors = async {
        if let Some(err) = stderr {
            log_stderr(err, handler.log(), client, &script).await;
        }
    };
    let life = async move {
        let _ = over.await;
        if tokio::time::timeout(TERM_GRACE, child.wait()).await.is_ok() {
            return;
        }
        if let Some(pid) = child.id() {
            // SAFETY: kill(2) with a pid this Child owns and has not reaped.
            unsafe {
                libc::kill(pid as libc::pid_t, libc::SIGTERM);
            }
        }
        if tokio::time::timeout(TERM_GRACE, child.wait())
            .await
            .is_err()
        {
            let _ = child.start_kill();
            let _ = child.wait().await;
        }
    };
    tokio::pin!(errors);
    tokio::pin!(life);
    let mut logged = false;
    loop {
        tokio::select! {
            () = &mut life => break,
            () = &mut errors, if !logged => logged = true,
        }
    }
    if !logged {
        let _ = tokio::time::timeout(TERM_GRACE, errors).await;
    }
}
