//! Which files `Include` and `IncludeOptional` read, and in which order.
//!
//! The order of included files is the order their directives take effect,
//! so it has to be Apache's: byte-wise sorted names, directories read
//! recursively (dotfiles included, which surprises people), wildcards
//! allowed in any path component (only directories match where more
//! components follow, and a symlink is not a directory there), and the same
//! error texts. Paths are handled as bytes: Apache never decodes them.
//!
//! This module only selects files. Reading them, the include depth limit
//! and `Include` being main-config only are the caller's business.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use crate::fnmatch::{fnmatch, has_wildcard, Flags};
use crate::text::string_to_bytes;

const PREFIX: &str = "Include/IncludeOptional: ";
/// Apache's `AP_MAX_FNMATCH_DIR_DEPTH`.
const MAX_DIR_DEPTH: usize = 128;

/// The files an `Include` (or, with `optional`, `IncludeOptional`) of
/// `pattern` reads, in the order Apache reads them.
///
/// * A relative `pattern` is taken relative to `server_root`; `.`, `..` and
///   repeated slashes are resolved textually, as `apr_filepath_merge` does.
/// * Without wildcards: a directory means every entry in it, recursively,
///   sorted byte-wise, dotfiles included; anything else is returned as is.
///   A missing file is returned too (for `Include`; reading it then gives
///   Apache's `Could not open configuration file ...`); `IncludeOptional`
///   leaves out names that do not exist.
/// * With wildcards (`*`, `?`, `[...]`) in any component: each wildcard
///   component is matched against the directory's entries (a leading `.`
///   must be matched literally), matches are sorted byte-wise, a match of
///   the last component that is a directory is read recursively.
/// * Errors carry Apache's text, e.g. `Include/IncludeOptional: No matches
///   for the wildcard '*.conf' in '/etc/x', failing` (not for
///   `IncludeOptional`) and `Include/IncludeOptional: Could not open
///   directory /etc/x: No such file or directory` (not for
///   `IncludeOptional` when the directory does not exist).
pub fn include_paths(
    pattern: &str,
    server_root: &Path,
    optional: bool,
) -> Result<Vec<PathBuf>, String> {
    let full = merge(
        server_root.as_os_str().as_bytes(),
        &string_to_bytes(pattern),
    );
    let mut walk = Walk {
        optional,
        depth: 0,
        found: Vec::new(),
    };
    if !has_wildcard(&full) {
        walk.plain(full)?;
    } else {
        let Some(rest) = full.strip_prefix(b"/") else {
            return Err(format!(
                "Include must have an absolute path, {}",
                show(&full)
            ));
        };
        let start = rest.iter().position(|&b| b != b'/').unwrap_or(rest.len());
        walk.wild(b"/".to_vec(), &rest[start..])?;
    }
    Ok(walk
        .found
        .into_iter()
        .map(|p| PathBuf::from(OsString::from_vec(p)))
        .collect())
}

struct Walk {
    optional: bool,
    depth: usize,
    found: Vec<Vec<u8>>,
}

impl Walk {
    /// Apache's `ap_dir_nofnmatch`: a directory is read recursively, any
    /// other path is a result.
    fn plain(&mut self, path: Vec<u8>) -> Result<(), String> {
        let fs_path = Path::new(OsStr::from_bytes(&path));
        let meta = fs::metadata(fs_path);
        if meta.as_ref().is_ok_and(|m| m.is_dir()) {
            self.depth += 1;
            if self.depth > MAX_DIR_DEPTH {
                return Err(format!(
                    "{PREFIX}Directory '{}' exceeds the maximum include directory nesting level of \
                     {MAX_DIR_DEPTH}. You have probably a recursion somewhere.",
                    show(&path)
                ));
            }
            let entries = fs::read_dir(fs_path).map_err(|e| cannot_open_dir(&path, &e))?;
            let mut names: Vec<Vec<u8>> = entries
                .map_while(Result::ok)
                .map(|e| full_path(&path, e.file_name().as_bytes()))
                .collect();
            names.sort();
            for name in names {
                self.plain(name)?;
            }
            self.depth -= 1;
            return Ok(());
        }
        if self.optional && meta.is_err() {
            return Ok(());
        }
        self.found.push(path);
        Ok(())
    }

    /// Apache's `ap_dir_fnmatch`: `pattern` is what is left of the path
    /// below the directory `path`.
    fn wild(&mut self, path: Vec<u8>, pattern: &[u8]) -> Result<(), String> {
        let (component, rest) = match pattern.iter().position(|&b| b == b'/') {
            Some(slash) => (&pattern[..slash], Some(&pattern[slash + 1..])),
            None => (pattern, None),
        };
        if !has_wildcard(component) {
            let next = full_path(&path, component);
            return match rest {
                None => self.plain(next),
                Some(rest) => self.wild(next, rest),
            };
        }
        let entries = match fs::read_dir(Path::new(OsStr::from_bytes(&path))) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound && self.optional => return Ok(()),
            Err(e) => return Err(cannot_open_dir(&path, &e)),
        };
        let mut matches = Vec::new();
        for entry in entries.map_while(Result::ok) {
            let name = entry.file_name();
            if !fnmatch(component, name.as_bytes(), Flags::PERIOD) {
                continue;
            }
            // Inside the path only directories can match; the entry's own
            // type is used, so a symlink to a directory does not.
            if rest.is_some() && !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            matches.push(full_path(&path, name.as_bytes()));
        }
        if matches.is_empty() {
            if self.optional {
                return Ok(());
            }
            return Err(format!(
                "{PREFIX}No matches for the wildcard '{}' in '{}', failing",
                show(component),
                show(&path)
            ));
        }
        matches.sort();
        for m in matches {
            match rest {
                None => self.plain(m)?,
                Some(rest) => self.wild(m, rest)?,
            }
        }
        Ok(())
    }
}

/// Apache's `apr_filepath_merge` for Unix, without the flags Apache does not
/// pass here: `add` replaces `root` when absolute; empty and `.` segments
/// vanish; `..` removes the previous segment (also one of `root`) but never
/// goes above `/`; a trailing slash is kept.
fn merge(root: &[u8], add: &[u8]) -> Vec<u8> {
    let mut path;
    let mut rest = add;
    if rest.first() == Some(&b'/') {
        path = b"/".to_vec();
        while let Some(r) = rest.strip_prefix(b"/") {
            rest = r;
        }
    } else {
        path = root.to_vec();
        if !path.is_empty() && path.last() != Some(&b'/') {
            path.push(b'/');
        }
    }
    while !rest.is_empty() {
        let len = rest.iter().position(|&b| b == b'/').unwrap_or(rest.len());
        let has_slash = len < rest.len();
        match &rest[..len] {
            b"" | b"." => {}
            b".." => {
                if path == b"/" {
                    // Above the root is the root.
                } else if path.is_empty() || path == b"../" || path.ends_with(b"/../") {
                    path.extend_from_slice(b"../");
                } else {
                    while path.pop().is_some() && !path.is_empty() && path.last() != Some(&b'/') {}
                }
            }
            segment => {
                path.extend_from_slice(segment);
                if has_slash {
                    path.push(b'/');
                }
            }
        }
        rest = if has_slash { &rest[len + 1..] } else { &[] };
    }
    path
}

/// Apache's `ap_make_full_path`.
fn full_path(dir: &[u8], name: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(dir.len() + name.len() + 1);
    out.extend_from_slice(dir);
    if dir.last() != Some(&b'/') {
        out.push(b'/');
    }
    out.extend_from_slice(name);
    out
}

fn cannot_open_dir(path: &[u8], e: &io::Error) -> String {
    format!(
        "{PREFIX}Could not open directory {}: {}",
        show(path),
        os_error_text(e)
    )
}

fn show(path: &[u8]) -> String {
    String::from_utf8_lossy(path).into_owned()
}

/// The C library's text for an error (what Apache's `%pm` prints), without
/// Rust's ` (os error N)` suffix.
pub(crate) fn os_error_text(e: &io::Error) -> String {
    let text = e.to_string();
    match e.raw_os_error() {
        Some(code) => text
            .strip_suffix(&format!(" (os error {code})"))
            .map(str::to_owned)
            .unwrap_or(text),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    struct TempDir(PathBuf);

    impl TempDir {
        fn new(tag: &str) -> TempDir {
            let base =
                std::env::temp_dir().join(format!("htaccel-conf-{tag}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&base);
            fs::create_dir_all(&base).expect("create temp dir");
            TempDir(base)
        }
        fn file(&self, rel: &str) {
            let p = self.0.join(rel);
            if let Some(parent) = p.parent() {
                fs::create_dir_all(parent).expect("create parent");
            }
            fs::write(&p, format!("# {rel}\n")).expect("write file");
        }
        fn rel(&self, paths: Vec<PathBuf>) -> Vec<String> {
            paths
                .into_iter()
                .map(|p| {
                    p.strip_prefix(&self.0)
                        .map(|r| r.display().to_string())
                        .unwrap_or_else(|_| p.display().to_string())
                })
                .collect()
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    /// The tree used for the observations on Apache 2.4 quoted below.
    fn tree(tag: &str) -> TempDir {
        let t = TempDir::new(tag);
        for f in [
            "d/b.conf",
            "d/a.conf",
            "d/.dot",
            "d/B.conf",
            "d/sub/z.conf",
            "d/.hid/h.conf",
            "w1/x.conf",
            "w2/x.conf",
            "w2/y.txt",
            "wx/x.conf",
        ] {
            t.file(f);
        }
        symlink("../w1", t.0.join("d/link")).expect("symlink");
        symlink(t.0.join("w2"), t.0.join("wlink")).expect("symlink");
        t
    }

    fn inc(t: &TempDir, pattern: &str, optional: bool) -> Result<Vec<String>, String> {
        include_paths(pattern, &t.0, optional).map(|p| t.rel(p))
    }

    #[test]
    fn directory_is_read_recursively_sorted_with_dotfiles() {
        let t = tree("dir");
        assert_eq!(
            inc(&t, "d", false).unwrap(),
            [
                "d/.dot",
                "d/.hid/h.conf",
                "d/B.conf",
                "d/a.conf",
                "d/b.conf",
                "d/link/x.conf",
                "d/sub/z.conf"
            ]
        );
        // A trailing slash changes nothing.
        assert_eq!(inc(&t, "d/sub/", false).unwrap(), ["d/sub/z.conf"]);
    }

    #[test]
    fn wildcard_in_last_component() {
        let t = tree("last");
        // Dotfiles are not matched by '*'; a matching directory (here a
        // symlink to one) is read recursively.
        assert_eq!(
            inc(&t, "d/*", false).unwrap(),
            [
                "d/B.conf",
                "d/a.conf",
                "d/b.conf",
                "d/link/x.conf",
                "d/sub/z.conf"
            ]
        );
        assert_eq!(inc(&t, "d/.*", false).unwrap(), ["d/.dot", "d/.hid/h.conf"]);
        assert_eq!(
            inc(&t, "d/[!b].conf", false).unwrap(),
            ["d/B.conf", "d/a.conf"]
        );
        assert_eq!(inc(&t, "d/\\.d*", false).unwrap(), ["d/.dot"]);
    }

    #[test]
    fn wildcard_in_directory_component_skips_symlinks() {
        let t = tree("mid");
        assert_eq!(
            inc(&t, "w*/x.conf", false).unwrap(),
            ["w1/x.conf", "w2/x.conf", "wx/x.conf"]
        );
        assert_eq!(
            inc(&t, "w[12]/", false).unwrap(),
            ["w1/x.conf", "w2/x.conf", "w2/y.txt"]
        );
    }

    #[test]
    fn no_match_is_an_error_only_for_include() {
        let t = tree("nomatch");
        let dir = t.0.join("d");
        assert_eq!(
            inc(&t, "d/*.none", false),
            Err(format!(
                "Include/IncludeOptional: No matches for the wildcard '*.none' in '{}', failing",
                dir.display()
            ))
        );
        assert_eq!(inc(&t, "d/*.none", true), Ok(vec![]));
    }

    #[test]
    fn missing_directory() {
        let t = tree("nodir");
        let dir = t.0.join("nodir");
        assert_eq!(
            inc(&t, "nodir/*.conf", false),
            Err(format!(
                "Include/IncludeOptional: Could not open directory {}: No such file or directory",
                dir.display()
            ))
        );
        assert_eq!(inc(&t, "nodir/*.conf", true), Ok(vec![]));
    }

    #[test]
    fn missing_plain_file() {
        let t = tree("nofile");
        // Include passes it on (opening it fails later, in order);
        // IncludeOptional leaves it out.
        assert_eq!(inc(&t, "nofile.conf", false).unwrap(), ["nofile.conf"]);
        assert_eq!(inc(&t, "nofile.conf", true), Ok(vec![]));
    }

    #[test]
    fn absolute_pattern_ignores_server_root() {
        let t = tree("abs");
        let pattern = format!("{}/w1/x.conf", t.0.display());
        assert_eq!(
            include_paths(&pattern, Path::new("/nowhere"), false),
            Ok(vec![t.0.join("w1/x.conf")])
        );
    }

    #[test]
    fn dot_segments_are_resolved() {
        let t = tree("dots");
        assert_eq!(inc(&t, "./d/../w1//x.conf", false).unwrap(), ["w1/x.conf"]);
    }

    #[test]
    fn deep_directories_hit_the_depth_limit() {
        let t = TempDir::new("deep");
        t.file(&format!("{}f.conf", "d/".repeat(128)));
        assert_eq!(inc(&t, "d", false).map(|v| v.len()), Ok(1));
        t.file(&format!("{}f.conf", "d/".repeat(129)));
        let err = inc(&t, "d", false).unwrap_err();
        assert!(
            err.contains("exceeds the maximum include directory nesting level of 128"),
            "{err}"
        );
    }

    #[test]
    fn symlink_loop_ends_in_a_path_that_cannot_be_opened() {
        // The kernel gives up resolving first (ELOOP); like Apache, the path
        // is then no directory and is passed on, and opening it fails.
        let t = TempDir::new("loop");
        t.file("a/f.conf");
        symlink("..", t.0.join("a/up")).expect("symlink");
        let found = inc(&t, "a", false).unwrap();
        let last = found.last().cloned().unwrap_or_default();
        assert!(last.ends_with("/up"), "{last}");
        assert!(fs::metadata(t.0.join(&last)).is_err());
    }

    #[test]
    fn merge_follows_apr() {
        let m = |r: &str, a: &str| String::from_utf8(merge(r.as_bytes(), a.as_bytes())).unwrap();
        assert_eq!(
            m("/etc/apache2", "conf.d/*.conf"),
            "/etc/apache2/conf.d/*.conf"
        );
        assert_eq!(m("/etc/apache2/", "x"), "/etc/apache2/x");
        assert_eq!(m("/etc/apache2", "/abs//p/"), "/abs/p/");
        assert_eq!(m("/etc/apache2", "../x"), "/etc/x");
        assert_eq!(m("/etc", "../../../x"), "/x");
        assert_eq!(m("/etc", "a/./b/.."), "/etc/a/");
        assert_eq!(m("", "../x"), "../x");
        assert_eq!(m("rel", "../../x"), "../x");
    }

    #[test]
    fn error_text_has_no_rust_suffix() {
        let e = io::Error::from_raw_os_error(2);
        assert_eq!(os_error_text(&e), "No such file or directory");
    }
}
