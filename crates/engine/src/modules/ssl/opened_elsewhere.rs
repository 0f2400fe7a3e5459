//! Certificate and key files opened for this reading of the configuration
//! by a process with more rights: the binary's privileged broker reads
//! the configuration as root, opens the files its TLS servers name and
//! hands them over, then the server, running as `User`, reads the same
//! configuration to build its engine. mod_ssl's check that a certificate
//! or key file exists and is not empty (`ssl_cmd_check_file`) is made, as
//! in Apache, on what root sees: on the file the broker opened (its
//! metadata, taken from the descriptor), since `User` may not even reach
//! `/etc/ssl/private`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::Metadata;
use std::path::{Path, PathBuf};

thread_local! {
    static OPENED: RefCell<HashMap<PathBuf, Metadata>> = RefCell::new(HashMap::new());
}

/// Run `read` (a reading of the configuration on this thread) with the
/// metadata of files opened for it elsewhere, by path.
pub fn reading_with<R>(opened: HashMap<PathBuf, Metadata>, read: impl FnOnce() -> R) -> R {
    let before = OPENED.with(|o| std::mem::replace(&mut *o.borrow_mut(), opened));
    let out = read();
    OPENED.with(|o| *o.borrow_mut() = before);
    out
}

/// A file's metadata: that of the file opened for this reading, else the
/// file system's.
pub(super) fn metadata(path: &Path) -> std::io::Result<Metadata> {
    match OPENED.with(|o| o.borrow().get(path).cloned()) {
        Some(m) => Ok(m),
        None => std::fs::metadata(path),
    }
}

/// Every file mod_ssl's directives name in any server of `engine`, TLS
/// on or not (each is checked when the configuration is read):
/// certificates, keys, chains, CA files.
pub fn named_files(engine: &crate::engine::Engine) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for site in std::iter::once(&engine.main).chain(&engine.vhosts) {
        let ssl = &site.modules.ssl;
        let named = ssl.cert_files.iter().chain(&ssl.key_files);
        for p in named.chain(&ssl.chain_file).chain(&ssl.ca_file) {
            if !out.contains(p) {
                out.push(p.clone());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_opened_elsewhere_is_judged_by_its_descriptor() {
        let here = std::env::temp_dir().join(format!("htaccel-opened-{}", std::process::id()));
        std::fs::write(&here, "pem").unwrap();
        let meta = std::fs::metadata(&here).unwrap();
        let elsewhere = PathBuf::from("/nonexistent/private/server.key");
        assert!(metadata(&elsewhere).is_err());
        let opened = HashMap::from([(elsewhere.clone(), meta)]);
        let len = reading_with(opened, || metadata(&elsewhere).map(|m| m.len()));
        assert_eq!(len.unwrap(), 3);
        assert!(metadata(&elsewhere).is_err(), "only for that reading");
        let _ = std::fs::remove_file(here);
    }
}
