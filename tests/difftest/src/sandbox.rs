//! The file-system side of a case: one private directory per case under the
//! run's temporary root, readable by `www-data` (Apache's workers).
//!
//! The case's `site/` is copied with `cp -a` into a staging tree, modes are
//! normalised (git keeps only the executable bit, so the checkout's umask
//! must not decide what Apache may read), `setup.sh` runs there once, and the
//! staging tree is copied with `cp -a` again for each server. Both servers
//! thus see the same names, modes, owners, symlinks and time stamps
//! (`Last-Modified` and `ETag` come from them).

use crate::cases::Case;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Which server a tree belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Apache,
    Other,
}

impl Side {
    fn dir(self) -> &'static str {
        match self {
            Side::Apache => "a",
            Side::Other => "h",
        }
    }
}

/// A case's private directory, removed on drop unless kept.
pub struct Sandbox {
    pub dir: PathBuf,
    keep: bool,
}

impl Sandbox {
    /// Builds both trees for `case` under `root`.
    pub fn create(root: &Path, case: &Case, keep: bool) -> Result<Sandbox, String> {
        let dir = root.join(case.slug());
        let _ = fs::remove_dir_all(&dir);
        let sb = Sandbox { dir, keep };
        mkdir(&sb.dir)?;
        let stage = sb.dir.join("stage");
        mkdir(&stage)?;
        let site = stage.join("site");
        if case.dir.join("site").is_dir() {
            run(Command::new("cp")
                .arg("-a")
                .arg(case.dir.join("site"))
                .arg(&site))?;
            run(Command::new("chmod").args(["-R", "u=rwX,go=rX"]).arg(&site))?;
        } else {
            mkdir(&site)?;
        }
        let setup = case.dir.join("setup.sh");
        if setup.is_file() {
            let out = Command::new("sh")
                .arg(&setup)
                .current_dir(&site)
                .env("CASE_DIR", &case.dir)
                .output()
                .map_err(|e| format!("setup.sh: {e}"))?;
            if !out.status.success() {
                return Err(format!(
                    "setup.sh failed ({}):\n{}{}",
                    out.status,
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
        for side in [Side::Apache, Side::Other] {
            run(Command::new("cp")
                .arg("-a")
                .arg(&stage)
                .arg(sb.dir.join(side.dir())))?;
            mkdir(&sb.rundir(side))?;
        }
        Ok(sb)
    }

    pub fn docroot(&self, side: Side) -> PathBuf {
        self.dir.join(side.dir()).join("site")
    }

    /// Where the server keeps its pid file, mutexes, logs and config.
    pub fn rundir(&self, side: Side) -> PathBuf {
        self.dir.join(format!("run-{}", side.dir()))
    }

    /// Newest modification time in the staged tree.
    pub fn newest_mtime(&self) -> Option<std::time::SystemTime> {
        newest(&self.dir.join("stage"), 0)
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if !self.keep {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

/// Newest modification time of the regular files below `p` (only files get
/// an ETag).
fn newest(p: &Path, depth: usize) -> Option<std::time::SystemTime> {
    let meta = fs::symlink_metadata(p).ok()?;
    if meta.is_file() {
        return meta.modified().ok();
    }
    let mut best = None;
    if meta.is_dir() && depth < 32 {
        for e in fs::read_dir(p).ok()?.flatten() {
            best = best.max(newest(&e.path(), depth + 1));
        }
    }
    best
}

/// Creates a directory that `www-data` can enter.
pub fn mkdir(p: &Path) -> Result<(), String> {
    fs::create_dir_all(p).map_err(|e| format!("mkdir {}: {e}", p.display()))?;
    fs::set_permissions(p, fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("chmod {}: {e}", p.display()))
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// The configuration text for one server: the oracle config plus the case's
/// `server.conf`, with the placeholders filled in.
pub fn render_conf(
    oracle: &str,
    extra: Option<&str>,
    port: u16,
    docroot: &Path,
    rundir: &Path,
) -> String {
    let mut text = oracle.to_string();
    if let Some(extra) = extra {
        text.push_str("\n# ---- case server.conf ----\n");
        text.push_str(extra);
        text.push('\n');
    }
    text.replace("@LISTEN@", &format!("127.0.0.1:{port}"))
        .replace("@PORT@", &port.to_string())
        .replace("@DOCROOT@", &docroot.to_string_lossy())
        .replace("@RUNDIR@", &rundir.to_string_lossy())
}
