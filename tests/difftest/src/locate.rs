//! Finding what the run needs on this machine: the repository, Apache, the
//! htaccel binary and the oracle config. Every miss explains how to fix it.

use std::env;
use std::path::{Path, PathBuf};

/// The repository this program was built from.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
}

/// `apache2` from PATH or Debian's place for it.
pub fn apache() -> Result<PathBuf, String> {
    let from_path = env::var_os("PATH")
        .map(|p| {
            env::split_paths(&p)
                .map(|d| d.join("apache2"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    from_path
        .into_iter()
        .chain([PathBuf::from("/usr/sbin/apache2")])
        .find(|p| p.is_file())
        .ok_or_else(|| {
            "apache2 not found. Install Apache (the oracle) with:\n  \
             apt-get update && apt-get install -y apache2 apache2-utils\n\
             (scripts/test.sh does this)"
                .to_string()
        })
}

/// The htaccel binary: option, `$HTACCEL_BIN`, next to this program (same
/// cargo target directory and profile), or the repository's debug build.
pub fn htaccel(option: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(p) = option {
        return if p.is_file() {
            Ok(p.to_path_buf())
        } else {
            Err(format!("--htaccel {}: no such file", p.display()))
        };
    }
    let mut tried = Vec::new();
    let candidates = env::var_os("HTACCEL_BIN")
        .map(PathBuf::from)
        .into_iter()
        .chain(
            env::current_exe()
                .ok()
                .and_then(|e| e.parent().map(|d| d.join("htaccel"))),
        )
        .chain([repo_root().join("target/debug/htaccel")]);
    for c in candidates {
        if c.is_file() {
            return Ok(c);
        }
        tried.push(c.display().to_string());
    }
    Err(format!(
        "htaccel binary not found (tried: {}).\nBuild it with `cargo build -p htaccel`, or pass --htaccel PATH; \
         --apache-only runs Apache alone.",
        tried.join(", ")
    ))
}

/// The repository's copy of the Apache config that `htaccel serve` is
/// specified to equal, so that a fresh clone tests itself. It is kept
/// identical to the project's shared reference (`oracle_copy_is_current`
/// in `tests/oracle.rs` checks it wherever that reference is beside the
/// repository).
pub fn repo_oracle_conf() -> PathBuf {
    repo_root().join("tests/oracle/serve-equivalent.conf")
}

/// The Apache config that `htaccel serve` is specified to equal.
pub fn oracle_conf(option: Option<&Path>) -> Result<(PathBuf, String), String> {
    let path = option
        .map(Path::to_path_buf)
        .or_else(|| env::var_os("DIFFTEST_ORACLE_CONF").map(PathBuf::from))
        .unwrap_or_else(repo_oracle_conf);
    let path = path.canonicalize().unwrap_or(path);
    std::fs::read_to_string(&path)
        .map(|text| (path.clone(), text))
        .map_err(|e| {
            format!(
                "cannot read the oracle config {}: {e}\n(pass --oracle-conf or set DIFFTEST_ORACLE_CONF)",
                path.display()
            )
        })
}

/// Whether this process runs as root (Apache needs it to switch to www-data,
/// cases need it to chown).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        })
        .unwrap_or(false)
}
