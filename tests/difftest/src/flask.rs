//! A Flask application behind the reverse-proxy cases that name `flask` in
//! their `needs` file: `tests/difftest/flaskapp.py`, run by gunicorn (a real
//! WSGI server, Debian's `gunicorn` and `python3-flask`) with one worker of
//! four threads, on a free port of 127.0.0.1 that `server.conf` names as
//! `@FLASK@`. Like the `upstream` application it runs in the case's
//! sandbox, and both servers of the case talk to the same process, so the
//! files it names in `X-Sendfile` (under `stage/shared/`) are the same for
//! both.

use crate::procs::Process;
use std::path::Path;
use std::process::Command;

/// `127.0.0.1:PORT` of the application started for the sandbox at `dir`.
pub fn address(dir: &Path) -> Option<String> {
    std::fs::read_to_string(dir.join("flask").join("address")).ok()
}

/// The Python that has Debian's Flask and gunicorn (another `python3`
/// earlier in `PATH` may lack them).
fn python() -> &'static str {
    if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

/// Starts the application for the sandbox at `dir`.
pub fn start(dir: &Path, repo_root: &Path) -> Result<Process, String> {
    let app_dir = repo_root.join("tests/difftest");
    crate::upstream::launch(dir, "flask", |port| {
        let mut cmd = Command::new(python());
        cmd.args(["-m", "gunicorn", "--workers", "1", "--threads", "4"])
            .arg("--bind")
            .arg(format!("127.0.0.1:{port}"))
            .arg("--pythonpath")
            .arg(&app_dir)
            .arg("flaskapp:app");
        cmd
    })
}
