//! A small HTTP/1.1 application behind the reverse-proxy cases (a `needs`
//! file naming `upstream`): `tests/difftest/upstream.py` (Python's
//! standard library only) on a free port of 127.0.0.1, which
//! `server.conf` names as `@UPSTREAM@` (`127.0.0.1:PORT`). Both servers
//! of the case talk to the same process. It runs in the case's sandbox
//! (`@SANDBOX@` in `server.conf`), so that a file both servers may send
//! for it (X-Sendfile) can live in `stage/`, beside the two sites.
//! `upstream-tls` starts the same application over TLS, named
//! `@UPSTREAM_TLS@` (and its port `@UPSTREAM_TLS_PORT@`).

use crate::procs::{free_port, Process};
use crate::sandbox::mkdir;
use std::fs::{self, File};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// `127.0.0.1:PORT` of the upstream started for the sandbox at `dir`.
pub fn address(dir: &Path) -> Option<String> {
    fs::read_to_string(dir.join("upstream").join("address")).ok()
}

/// Starts the application for the sandbox at `dir`.
pub fn start(dir: &Path, repo_root: &Path) -> Result<Process, String> {
    let app = repo_root.join("tests/difftest/upstream.py");
    launch(dir, "upstream", |port| {
        let mut cmd = Command::new("python3");
        cmd.arg(&app).arg(port.to_string());
        cmd
    })
}

/// `127.0.0.1:PORT` of the HTTPS upstream started for the sandbox at `dir`.
pub fn tls_address(dir: &Path) -> Option<String> {
    fs::read_to_string(dir.join("upstream-tls").join("address")).ok()
}

/// Starts the application over TLS (`upstream-tls`), with the case's
/// `localhost` certificate issued by its CA (`crate::certs`, made before).
pub fn start_tls(dir: &Path, repo_root: &Path) -> Result<Process, String> {
    let app = repo_root.join("tests/difftest/upstream.py");
    let certs = crate::certs::dir(dir);
    launch(dir, "upstream-tls", |port| {
        let mut cmd = Command::new("python3");
        cmd.arg(&app)
            .arg(port.to_string())
            .arg("--tls")
            .arg(certs.join("localhost-ca.crt"))
            .arg(certs.join("localhost-ca.key"));
        cmd
    })
}

/// Runs the command `make(port)` in the sandbox at `dir` (its output in
/// `dir/SUB/SUB.out`), waits until it listens on 127.0.0.1:PORT and writes
/// that address to `dir/SUB/address`.
pub fn launch(dir: &Path, sub: &str, make: impl FnOnce(u16) -> Command) -> Result<Process, String> {
    let up_dir = dir.join(sub);
    mkdir(&up_dir)?;
    let port = free_port().map_err(|e| format!("no free port: {e}"))?;
    let log = up_dir.join(format!("{sub}.out"));
    let out = File::create(&log).map_err(|e| e.to_string())?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let mut cmd = make(port);
    let shown = format!("{cmd:?}");
    cmd.current_dir(dir)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    let mut proc = Process::spawn(cmd).map_err(|e| format!("cannot run {shown}: {e}"))?;
    let until = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if proc.exited().is_some() || Instant::now() > until {
            return Err(format!(
                "{shown} did not listen on port {port}: {}",
                fs::read_to_string(&log).unwrap_or_default()
            ));
        }
        sleep(Duration::from_millis(20));
    }
    fs::write(up_dir.join("address"), format!("127.0.0.1:{port}")).map_err(|e| e.to_string())?;
    Ok(proc)
}
