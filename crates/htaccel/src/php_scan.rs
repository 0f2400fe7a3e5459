//! `htaccel serve`'s look for PHP files in the document root, so that
//! serving a PHP site without a PHP backend is said out loud at start-up:
//! its scripts would be sent as files, source (and passwords) included.
//!
//! Bounded: symbolic links are not followed, and the walk stops after
//! [`MAX_ENTRIES`] directory entries (a huge tree is not read for a
//! warning); what was not looked at is not reported.

use htaccel_engine::modules::php::handler::looks_like_php;
use std::path::{Path, PathBuf};

/// Directory entries looked at, at most.
const MAX_ENTRIES: usize = 200_000;

/// The first PHP file (by name: `.php`, `.phtml`, …) found under `root`.
pub fn first_php_file(root: &Path) -> Option<PathBuf> {
    let mut pending = vec![root.to_path_buf()];
    let mut seen = 0;
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return None;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                pending.push(path);
            } else if kind.is_file() && looks_like_php(&path.to_string_lossy()) {
                return Some(path);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::first_php_file;

    #[test]
    fn finds_nested_php_and_ignores_others() {
        let root = std::env::temp_dir().join(format!("htaccel-phpscan-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("index.html"), "x").unwrap();
        std::fs::write(root.join("a/readme.txt"), "x").unwrap();
        assert_eq!(first_php_file(&root), None);
        std::fs::write(root.join("a/b/wp-config.php"), "<?php").unwrap();
        assert_eq!(first_php_file(&root), Some(root.join("a/b/wp-config.php")));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
