//! Finding the cases: every directory under the cases root that holds a
//! `requests` file is one case, named by its path (`static/mime`). Its
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
    /// What the case needs besides the two servers (a `needs` file, one
    /// word a line): `php-fpm` starts a private PHP-FPM pool whose socket
    /// `server.conf` names as `@PHP_FPM@`; `upstream` starts
    /// `tests/difftest/upstream.py`, named `@UPSTREAM@` (`127.0.0.1:PORT`);
    /// `flask` starts `tests/difftest/flaskapp.py` under gunicorn, `@FLASK@`;
    /// `wordpress` installs WordPress with a private MariaDB and starts a
    /// PHP-FPM pool for it, `@PHP_FPM@` (`wordpress.rs`).
    pub needs: Vec<String>,
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
    if dir.join("requests").is_file() {
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
    let requests = match read("requests") {
        Some(text) => requests::parse(&text).map_err(|e| format!("{name}/requests: {e}")),
        None => Err(format!("{name}/requests: not readable as UTF-8")),
    };
    Case {
        readme: read("README").map(|r| r.lines().next().unwrap_or_default().trim().to_string()),
        server_conf: read("server.conf"),
        needs: read("needs")
            .map(|t| t.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
        pending: read("PENDING").map(|r| r.lines().next().unwrap_or_default().trim().to_string()),
        dir: dir.to_path_buf(),
        name,
        requests,
    }
}
