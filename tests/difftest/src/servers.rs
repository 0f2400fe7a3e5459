//! Launching the two servers of a case on free ports of 127.0.0.1 and
//! waiting until they answer: Apache with the oracle config (plus the case's
//! `server.conf`), and htaccel either in `serve` mode or with `-f` on the
//! same config text. A port taken by someone else between choosing and
//! binding is retried with another one.

use crate::cases::Case;
use crate::procs::{free_port, Process};
use crate::sandbox::{render_conf, Sandbox, Side};
use std::fs::{self, File};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

const START_TIMEOUT: Duration = Duration::from_secs(20);
const PORT_TRIES: usize = 3;

/// What runs on the "other" side.
#[derive(Clone, Debug)]
pub enum Other {
    Htaccel(PathBuf),
    /// A second Apache: checks the harness itself (everything must agree).
    Apache,
}

/// A running server.
pub struct Server {
    pub port: u16,
    /// The second port, speaking TLS, of a case that needs `https`.
    pub tls_port: Option<u16>,
    /// Files worth showing when something goes wrong (error log, output).
    pub logs: Vec<PathBuf>,
    proc: Process,
}

impl Server {
    pub fn stop(&mut self) {
        self.proc.stop();
    }
}

/// Starts Apache for `side` of the sandbox.
pub fn start_apache(
    apache: &Path,
    oracle: &str,
    case: &Case,
    sb: &Sandbox,
    side: Side,
) -> Result<Server, String> {
    let rundir = sb.rundir(side);
    let error_log = rundir.join("error.log");
    let output = rundir.join("apache.out");
    with_free_port(case, |port, tls_port| {
        let conf = write_conf(oracle, case, sb, side, port, tls_port)?;
        if case.needs.iter().any(|n| n == "mod_php") {
            use_prefork(&conf)?;
        }
        let mut cmd = Command::new(apache);
        cmd.arg("-f").arg(&conf).arg("-DFOREGROUND");
        let proc = spawn(cmd, &output)?;
        let logs = vec![error_log.clone(), output.clone()];
        // Listening is not enough: the port is bound before the workers run.
        // "resuming normal operations" (AH00489) says they do; a case whose
        // server.conf moves the error log gets a fixed grace period instead.
        let started = Instant::now();
        let ready = || {
            fs::read_to_string(&error_log).is_ok_and(|t| t.contains("AH00489"))
                || started.elapsed() > Duration::from_secs(3)
        };
        wait_ready(proc, port, tls_port, logs, ready)
    })
}

/// Starts htaccel (`serve`, or `-f` when the case has a `server.conf`).
pub fn start_htaccel(
    bin: &Path,
    oracle: &str,
    case: &Case,
    sb: &Sandbox,
) -> Result<Server, String> {
    let output = sb.rundir(Side::Other).join("htaccel.out");
    with_free_port(case, |port, tls_port| {
        let mut cmd = Command::new(bin);
        if case.server_conf.is_some() {
            let conf = write_conf(oracle, case, sb, Side::Other, port, tls_port)?;
            cmd.arg("-f").arg(conf);
        } else {
            cmd.arg("serve")
                .arg(sb.docroot(Side::Other))
                .arg("--listen")
                .arg(format!("127.0.0.1:{port}"));
        }
        let proc = spawn(cmd, &output)?;
        let error_log = sb.rundir(Side::Other).join("error.log");
        wait_ready(
            proc,
            port,
            tls_port,
            vec![output.clone(), error_log],
            || true,
        )
    })
}

/// `needs mod_php`: Apache runs Debian's mod_php, which refuses a threaded
/// MPM, so its config loads prefork instead of the oracle's event MPM.
/// htaccel reads the case's config unchanged (it has no MPMs).
fn use_prefork(conf: &Path) -> Result<(), StartError> {
    const EVENT: &str = "LoadModule mpm_event_module   modules/mod_mpm_event.so";
    const PREFORK: &str = "LoadModule mpm_prefork_module modules/mod_mpm_prefork.so";
    let fail = |e: String| StartError::Failed(format!("needs mod_php: {e}"));
    let text = fs::read_to_string(conf).map_err(|e| fail(e.to_string()))?;
    if !text.contains(EVENT) {
        return Err(fail(format!("the oracle config has no `{EVENT}` line")));
    }
    fs::write(conf, text.replace(EVENT, PREFORK)).map_err(|e| fail(e.to_string()))
}

/// Why a start failed: only a busy port is worth another try.
enum StartError {
    PortBusy(String),
    Failed(String),
}

fn with_free_port(
    case: &Case,
    mut start: impl FnMut(u16, Option<u16>) -> Result<Server, StartError>,
) -> Result<Server, String> {
    let mut last = String::new();
    for _ in 0..PORT_TRIES {
        let port = free_port().map_err(|e| format!("no free port: {e}"))?;
        let tls_port = if case.needs.iter().any(|n| n == "https") {
            let mut p = free_port().map_err(|e| format!("no free port: {e}"))?;
            while p == port {
                p = free_port().map_err(|e| format!("no free port: {e}"))?;
            }
            Some(p)
        } else {
            None
        };
        match start(port, tls_port) {
            Ok(s) => return Ok(s),
            Err(StartError::PortBusy(e)) => last = e,
            Err(StartError::Failed(e)) => return Err(e),
        }
    }
    Err(last)
}

fn write_conf(
    oracle: &str,
    case: &Case,
    sb: &Sandbox,
    side: Side,
    port: u16,
    tls_port: Option<u16>,
) -> Result<PathBuf, StartError> {
    let rundir = sb.rundir(side);
    let text = render_conf(
        oracle,
        case.server_conf.as_deref(),
        port,
        &sb.docroot(side),
        &rundir,
    );
    let text = text
        .replace("@PHP_FPM@", &crate::fpm::socket(&sb.dir).to_string_lossy())
        .replace(
            "@UPSTREAM_TLS_PORT@",
            crate::upstream::tls_address(&sb.dir)
                .as_deref()
                .and_then(|a| a.rsplit(':').next())
                .unwrap_or_default(),
        )
        .replace(
            "@UPSTREAM_TLS@",
            &crate::upstream::tls_address(&sb.dir).unwrap_or_default(),
        )
        .replace(
            "@UPSTREAM@",
            &crate::upstream::address(&sb.dir).unwrap_or_default(),
        )
        .replace(
            "@FLASK@",
            &crate::flask::address(&sb.dir).unwrap_or_default(),
        )
        .replace("@SANDBOX@", &sb.dir.to_string_lossy())
        .replace("@CERTS@", &crate::certs::dir(&sb.dir).to_string_lossy());
    let text = match tls_port {
        Some(p) => text
            .replace("@LISTEN_TLS@", &format!("127.0.0.1:{p}"))
            .replace("@TLS_PORT@", &p.to_string()),
        None => text,
    };
    let path = rundir.join("httpd.conf");
    fs::write(&path, text).map_err(|e| StartError::Failed(format!("writing config: {e}")))?;
    Ok(path)
}

fn spawn(mut cmd: Command, output: &Path) -> Result<Process, StartError> {
    let out = File::create(output).map_err(|e| StartError::Failed(e.to_string()))?;
    let err = out
        .try_clone()
        .map_err(|e| StartError::Failed(e.to_string()))?;
    cmd.stdin(Stdio::null()).stdout(out).stderr(err);
    let shown = format!("{cmd:?}");
    Process::spawn(cmd).map_err(|e| StartError::Failed(format!("cannot run {shown}: {e}")))
}

/// Waits until the port accepts connections and `ready()` holds, the
/// process staying alive all along.
fn wait_ready(
    mut proc: Process,
    port: u16,
    tls_port: Option<u16>,
    logs: Vec<PathBuf>,
    ready: impl Fn() -> bool,
) -> Result<Server, StartError> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let until = Instant::now() + START_TIMEOUT;
    loop {
        if let Some(status) = proc.exited() {
            let text = tails(&logs);
            let msg = format!("exited ({status}) before listening on port {port}:\n{text}");
            return Err(if text.contains("Address already in use") {
                StartError::PortBusy(msg)
            } else {
                StartError::Failed(msg)
            });
        }
        if ready()
            && proc.listens_on(port)
            && TcpStream::connect_timeout(&addr, Duration::from_millis(500)).is_ok()
        {
            // a process that listens and dies at once is not ready
            sleep(Duration::from_millis(50));
            if proc.exited().is_none() {
                return Ok(Server {
                    port,
                    tls_port,
                    logs,
                    proc,
                });
            }
            continue;
        }
        if Instant::now() > until {
            proc.stop();
            return Err(StartError::Failed(format!(
                "not listening on port {port} after {START_TIMEOUT:?}:\n{}",
                tails(&logs)
            )));
        }
        sleep(Duration::from_millis(25));
    }
}

/// The last lines of each log, for messages.
pub fn tails(logs: &[PathBuf]) -> String {
    let mut out = String::new();
    for p in logs {
        let Ok(text) = fs::read_to_string(p) else {
            continue;
        };
        if text.trim().is_empty() {
            continue;
        }
        let lines: Vec<&str> = text.lines().collect();
        let from = lines.len().saturating_sub(40);
        out.push_str(&format!("  --- {} ---\n", p.display()));
        for l in &lines[from..] {
            out.push_str("  ");
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}
