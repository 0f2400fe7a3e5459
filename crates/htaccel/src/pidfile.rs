//! `PidFile`: the file holding the server's process ID, written at start
//! and removed at stop as Apache does, so that `htaccel -k …` (and
//! apachectl-style scripts, logrotate's `postrotate`) find the running
//! server.

use std::path::{Path, PathBuf};

/// A pid file written by this process, removed on drop.
pub struct PidFile {
    path: PathBuf,
}

/// The pid file's path: `PidFile` relative to `ServerRoot`.
pub fn path(configured: &str, server_root: &Path) -> PathBuf {
    server_root.join(configured)
}

/// The process ID recorded in the file at `path`, if it holds one.
pub fn read(path: &Path) -> Option<i32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

impl PidFile {
    /// Write this process's ID to `path`. A file left behind by a process
    /// that is gone is replaced with a warning, as Apache's AH00098 says.
    pub fn write(path: PathBuf, warn: &mut dyn FnMut(&str)) -> Result<PidFile, String> {
        if read(&path).is_some() {
            warn(&format!(
                "AH00098: pid file {} overwritten -- Unclean shutdown of previous Apache run?",
                path.display()
            ));
        }
        // Through the privileged broker when there is one: the server's
        // user may not write where root keeps pid files (`/run/apache2`).
        match crate::privsep::pid_file(&path, false) {
            Some(written) => written?,
            None => std::fs::write(&path, format!("{}\n", std::process::id()))
                .map_err(|e| format!("AH00099: could not create {}: {e}", path.display()))?,
        }
        Ok(PidFile { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for PidFile {
    fn drop(&mut self) {
        // Only our own: another server may have taken the path since.
        if crate::privsep::pid_file(&self.path, true).is_some() {
            return;
        }
        if read(&self.path) == Some(std::process::id() as i32) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
