//! Finding the cases: every directory under the cases root that holds a
//! `requests` file (or a `generate` program that prints one) is one case,
//! named by its path (`static/mime`). Its
//! `site/` (the document root), `setup.sh`, `server.conf` and `README` are
//! optional; a `PENDING` file keeps it out of the default run. A case whose files do not parse still appears, as a failure,
//! so that one broken file does not hide the others.

use crate::requests::{self, Request};
use std::fs;
use std::path::{Path, PathBuf};

/// One differential test case.
pub struct Case {
    /// Path below the cases root, with `/`.
    pub name: String,
    pub dir: PathBuf,
    /// Extra main-config lines; when present the other server runs with `-f`.
    pub server_conf: Option<String>,
    /// One line saying what the case checks.
    pub readme: Option<String>,
    /// Why the case is not run by default (a `PENDING` file: behaviour that
    /// a later milestone implements).
    pub pending: Option<String>,
    /// Why the case is not run over HTTP/2 (`--http2`): an `HTTP1-ONLY`
    /// file, one line, for a case whose every request is about HTTP/1.x
    /// itself or whose oracle cannot speak HTTP/2.
    pub http1_only: Option<String>,
    /// What the case needs besides the two servers (a `needs` file, one
    /// word a line): `php-fpm` starts a private PHP-FPM pool whose socket
    /// `server.conf` names as `@PHP_FPM@`; `upstream` starts
    /// `tests/difftest/upstream.py`, named `@UPSTREAM@` (`127.0.0.1:PORT`);
    /// `flask` starts `tests/difftest/flaskapp.py` under gunicorn, `@FLASK@`;
    /// `wordpress` installs WordPress with a private MariaDB and starts a
    /// PHP-FPM pool for it, `@PHP_FPM@` (`wordpress.rs`).
    pub needs: Vec<String>,
    /// Marker strings planted in files no client may ever read (a
    /// `secrets` file, one a line): an answer of the compared server that
    /// carries one fails its request whatever Apache answered.
    pub secrets: Vec<String>,
    pub requests: Result<Vec<Request>, String>,
}

impl Case {
    /// A file-name-safe form of the name.
    pub fn slug(&self) -> String {
        self.name.replace('/', "__")
    }
}

/// All cases below `root`, sorted by name.
pub fn discover(root: &Path) -> Result<Vec<Case>, String> {
    let mut out = Vec::new();
    walk(root, root, 0, &mut out)?;
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

fn walk(root: &Path, dir: &Path, depth: usize, out: &mut Vec<Case>) -> Result<(), String> {
    if depth > 8 {
        return Ok(());
    }
    if dir.join("requests").is_file() || dir.join(GENERATOR).is_file() {
        out.push(load(root, dir));
        return Ok(());
    }
    let entries = fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut subdirs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    subdirs.sort();
    for d in subdirs {
        walk(root, &d, depth + 1, out)?;
    }
    Ok(())
}

fn load(root: &Path, dir: &Path) -> Case {
    let name = dir
        .strip_prefix(root)
        .unwrap_or(dir)
        .to_string_lossy()
        .into_owned();
    let read = |f: &str| fs::read_to_string(dir.join(f)).ok();
    let text = if dir.join(GENERATOR).is_file() {
        generated(dir).map_err(|e| format!("{name}/{GENERATOR}: {e}"))
    } else {
        read("requests").ok_or(format!("{name}/requests: not readable as UTF-8"))
    };
    let requests =
        text.and_then(|t| requests::parse(&t).map_err(|e| format!("{name}/requests: {e}")));
    Case {
        readme: read("README").map(|r| r.lines().next().unwrap_or_default().trim().to_string()),
        server_conf: read("server.conf"),
        needs: read("needs")
            .map(|t| t.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
        secrets: read("secrets")
            .map(|t| {
                t.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with('#'))
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
        pending: read("PENDING").map(|r| r.lines().next().unwrap_or_default().trim().to_string()),
        http1_only: read("HTTP1-ONLY")
            .map(|r| r.lines().next().unwrap_or_default().trim().to_string()),
        dir: dir.to_path_buf(),
        name,
        requests,
    }
}

/// A case's program that prints its requests (in the `requests` format),
/// for sets too large to keep as text: hostile paths, seeded random
/// requests. Run with `python3`, in the case's directory, with
/// `DIFFTEST_SCALE` (a whole number, default 1: the CI size; larger runs
/// send proportionally more) and `DIFFTEST_SEED` (default 1) in its
/// environment, so that a run is reproduced by its seed.
pub const GENERATOR: &str = "generate";

fn generated(dir: &Path) -> Result<String, String> {
    let scale = std::env::var("DIFFTEST_SCALE").unwrap_or_else(|_| "1".into());
    let seed = std::env::var("DIFFTEST_SEED").unwrap_or_else(|_| "1".into());
    let out = std::process::Command::new("python3")
        .arg(GENERATOR)
        .current_dir(dir)
        .env("DIFFTEST_SCALE", scale)
        .env("DIFFTEST_SEED", seed)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run python3: {e}"))?;
    if !out.status.success() {
        return Err(format!("exited with {}", out.status));
    }
    String::from_utf8(out.stdout).map_err(|_| "printed text that is not UTF-8".into())
}
