//! Reading and compiling one directory's access file, bounded.
//!
//! The first of the `AccessFileName` candidates that exists is read, as
//! Apache reads it; a candidate that exists but cannot be read stops the
//! request with 403, one that fails to compile with 500. "Exists" is
//! Apache's test (`ap_parse_htaccess`): only `ENOENT` and `ENOTDIR` mean
//! absent. Every other failure to open it (a symlink loop, a name too
//! long, no permission, not a regular file) fails closed, since the file
//! may hold rules that deny access. The read is
//! bounded (`AccessFileMaxSize`, then `AccessFileMaxDirectives` after
//! parsing) and cannot block: the file is opened non-blocking and must be a
//! regular file, so neither a huge file nor a FIFO named `.htaccess` can
//! stall the server or make it allocate without limit.
//!
//! The parsed file is kept ([`Loaded`]) so that a change of the override
//! settings above it recompiles it without reading the disk again, and so
//! that a file being rewritten keeps its previous version in force.

use crate::config::{Context, Environment, Walker};
use crate::dirconf::DirConf;
use crate::http::Log;
use crate::open_writers::Writers;
use htaccel_conf::Node;
use std::collections::HashSet;
use std::io::Read as _;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bounds on one access file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HtaccessLimits {
    /// `AccessFileMaxSize`, in bytes.
    pub max_bytes: u64,
    /// `AccessFileMaxDirectives`: directives and sections, nested ones included.
    pub max_directives: usize,
}

impl Default for HtaccessLimits {
    fn default() -> Self {
        HtaccessLimits {
            max_bytes: 1 << 20,
            max_directives: 20_000,
        }
    }
}

/// What a broken access file says is wrong, for the error log and `check`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub file: String,
    /// Line of the offending directive, when there is one.
    pub line: Option<u32>,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: {}", self.file, l, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// An access file as read from the disk.
#[derive(Debug)]
pub struct Loaded {
    pub path: PathBuf,
    /// Bytes read (at most the size limit plus one).
    pub bytes: u64,
    /// The parsed file, or why it cannot be compiled at all.
    pub nodes: Result<Vec<Node>, Problem>,
    /// The file's status-change time when it was read (`None` for text
    /// that did not come from the disk).
    pub changed: Option<std::time::SystemTime>,
    /// Whether a writer had the file open just after it was read.
    pub writers: Writers,
}

/// An access file that is there but cannot be read: what Apache logs on
/// every request it stops (403).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreadable {
    /// `AH00554` (level `error`, no client): the file is not a regular file.
    pub not_regular: Option<String>,
    /// `AH00529` (level `crit`), led by the OS error as Apache prints it.
    pub message: String,
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// What the access-file candidates of a directory hold.
#[derive(Clone, Debug)]
pub enum Found {
    Absent,
    /// Present but unreadable (403).
    Unreadable(Unreadable),
    Loaded(Arc<Loaded>),
}

/// Whether an error opening an access file means there is none, as
/// Apache decides it (`APR_STATUS_IS_ENOENT` or `APR_STATUS_IS_ENOTDIR`).
fn means_absent(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOENT) | Some(libc::ENOTDIR))
}

/// The override settings a file is compiled under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overrides {
    pub mask: u32,
    pub opts: u32,
    pub list: Option<Arc<HashSet<String>>>,
}

impl Overrides {
    pub fn of(conf: &DirConf) -> Overrides {
        Overrides {
            mask: conf.core.allow_override,
            opts: conf.core.override_opts,
            list: conf.core.override_list.clone(),
        }
    }

    /// Whether Apache would look for an access file at all.
    pub fn reads(&self) -> bool {
        self.mask != 0 || self.list.as_ref().is_some_and(|l| !l.is_empty())
    }
}

/// Read the first present candidate of `dir` (a path with trailing slash).
pub fn read_first(dir: &str, names: &[String], limits: HtaccessLimits) -> Found {
    for name in names {
        let path = Path::new(dir).join(name);
        let shown = path.display().to_string();
        let opened = crate::fs::open_nonblocking(&path);
        let unreadable = |errno: i32, text: &str, not_regular: Option<String>| {
            Found::Unreadable(Unreadable {
                not_regular,
                message: format!(
                    "({errno}){text}: AH00529: {shown} pcfg_openfile: unable to check htaccess file, ensure it is readable and that '{dir}' is executable",
                ),
            })
        };
        let os_error = |e: &std::io::Error| {
            unreadable(
                e.raw_os_error().unwrap_or(0),
                &crate::modules::authn_file::strerror(e),
                None,
            )
        };
        let (file, meta) = match opened {
            Ok(x) => x,
            Err(e) if means_absent(&e) => continue,
            Err(e) => return os_error(&e),
        };
        if !meta.file_type().is_file() {
            // Apache's pcfg_openfile refuses it, then reports EBADF.
            return unreadable(
                libc::EBADF,
                "Bad file descriptor",
                Some(format!(
                    "AH00554: Access to file {shown} denied by server: not a regular file"
                )),
            );
        }
        let changed = status_change_time(&meta);
        let mut bytes = Vec::new();
        if let Err(e) = (&file).take(limits.max_bytes + 1).read_to_end(&mut bytes) {
            return os_error(&e);
        }
        let writers = crate::open_writers::of(&file);
        let mut loaded = parse(path, &bytes, limits);
        loaded.changed = changed;
        loaded.writers = writers;
        return Found::Loaded(Arc::new(loaded));
    }
    Found::Absent
}

/// `st_ctime` as a time (`None` before the epoch).
fn status_change_time(m: &std::fs::Metadata) -> Option<std::time::SystemTime> {
    let secs = u64::try_from(m.ctime()).ok()?;
    let nanos = u32::try_from(m.ctime_nsec()).ok()?;
    Some(std::time::UNIX_EPOCH + std::time::Duration::new(secs, nanos))
}

/// Parse file contents under the limits.
pub fn parse(path: PathBuf, bytes: &[u8], limits: HtaccessLimits) -> Loaded {
    let shown = path.display().to_string();
    let problem = |line: Option<u32>, message: String| Problem {
        file: shown.clone(),
        line,
        message,
    };
    let nodes = if bytes.len() as u64 > limits.max_bytes {
        Err(problem(
            None,
            format!(
                "file is larger than the limit of {} bytes (AccessFileMaxSize)",
                limits.max_bytes
            ),
        ))
    } else {
        htaccel_conf::parse_bytes(bytes, &shown, &htaccel_conf::ParseOptions::htaccess())
            .map_err(|e| problem(Some(e.origin.line), e.message))
            .and_then(|nodes| {
                if count_nodes(&nodes) > limits.max_directives {
                    Err(problem(
                        None,
                        format!(
                            "more than {} directives (AccessFileMaxDirectives)",
                            limits.max_directives
                        ),
                    ))
                } else {
                    Ok(nodes)
                }
            })
    };
    Loaded {
        path,
        bytes: bytes.len() as u64,
        nodes,
        changed: None,
        writers: Writers::None,
    }
}

fn count_nodes(nodes: &[Node]) -> usize {
    nodes
        .iter()
        .map(|n| match n {
            Node::Directive(_) => 1,
            Node::Section(s) => 1 + count_nodes(&s.children),
        })
        .sum()
}

/// Compile a loaded file under the override settings in force, logging
/// its warnings (a failure is logged by each request it stops:
/// `tree::LevelError`).
pub fn compile(
    env: &Environment,
    loaded: &Loaded,
    overrides: &Overrides,
    log: &dyn Log,
) -> Result<DirConf, Problem> {
    let shown = loaded.path.display().to_string();
    let nodes = loaded.nodes.as_ref().map_err(Problem::clone)?;
    let mut env = env.clone();
    let ctx = Context {
        override_mask: overrides.mask,
        override_opts: overrides.opts,
        override_list: overrides.list.clone(),
        htaccess: true,
        sections: Vec::new(),
        parent: None,
        limit: None,
        path: loaded
            .path
            .parent()
            .map(|d| format!("{}/", d.display()).replace("//", "/")),
    };
    let mut walker = Walker::new(&mut env, None, ctx);
    let mut own = DirConf::for_section();
    let result = walker.walk(nodes, &mut own);
    for n in &walker.notices {
        log.error("warn", "core", None, &format!("{shown}: {}", n.message));
    }
    result.map_err(|e| Problem {
        file: shown.clone(),
        line: Some(e.origin.line),
        message: e.message,
    })?;
    Ok(own)
}

/// The identity of an access file as `stat` sees it, for directories that
/// are revalidated by `stat` rather than watched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stamp {
    Absent,
    Present {
        dev: u64,
        ino: u64,
        size: u64,
        mtime: (i64, i64),
        ctime: (i64, i64),
        mode: u32,
    },
    Other(i32),
}

pub fn stamp_of(path: &Path) -> Stamp {
    match std::fs::metadata(path) {
        Ok(m) => Stamp::Present {
            dev: m.dev(),
            ino: m.ino(),
            size: m.len(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
            mode: m.mode(),
        },
        Err(e) if means_absent(&e) => Stamp::Absent,
        Err(e) => Stamp::Other(e.raw_os_error().unwrap_or(0)),
    }
}

/// The stamps of every candidate of `dir`.
pub fn stamps(dir: &str, names: &[String]) -> Vec<Stamp> {
    names
        .iter()
        .map(|n| stamp_of(&Path::new(dir).join(n)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(tag: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!("htaccel-ht-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        p
    }

    fn dir_of(p: &Path) -> String {
        format!("{}/", p.display())
    }

    #[test]
    fn first_present_candidate_wins() {
        let d = tmp("first");
        std::fs::write(d.join("b"), "Options None\n").unwrap();
        let names = vec!["a".to_string(), "b".to_string()];
        match read_first(&dir_of(&d), &names, HtaccessLimits::default()) {
            Found::Loaded(l) => assert!(l.path.ends_with("b") && l.nodes.is_ok()),
            other => panic!("{other:?}"),
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn size_and_count_limits() {
        let d = tmp("limits");
        let names = vec![".htaccess".to_string()];
        let limits = HtaccessLimits {
            max_bytes: 64,
            max_directives: 3,
        };
        std::fs::write(d.join(".htaccess"), "#".repeat(10_000)).unwrap();
        match read_first(&dir_of(&d), &names, limits) {
            Found::Loaded(l) => {
                assert_eq!(l.bytes, 65, "reading stops past the limit");
                let e = l.nodes.as_ref().unwrap_err();
                assert!(e.message.contains("AccessFileMaxSize"));
            }
            other => panic!("{other:?}"),
        }
        std::fs::write(d.join(".htaccess"), "A 1\nB 2\nC 3\nD 4\n").unwrap();
        match read_first(&dir_of(&d), &names, limits) {
            Found::Loaded(l) => {
                let e = l.nodes.as_ref().unwrap_err();
                assert!(e.message.contains("AccessFileMaxDirectives"))
            }
            other => panic!("{other:?}"),
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn fifo_and_directory_are_refused_without_blocking() {
        let d = tmp("fifo");
        let names = vec![".htaccess".to_string()];
        let c = std::ffi::CString::new(format!("{}/.htaccess", d.display())).unwrap();
        // SAFETY: valid path; mkfifo has no other preconditions.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        assert!(matches!(
            read_first(&dir_of(&d), &names, HtaccessLimits::default()),
            Found::Unreadable(u) if u.not_regular.as_ref().is_some_and(|l| l.contains("not a regular file"))
                && u.message.starts_with("(9)Bad file descriptor: AH00529: ")
        ));
        std::fs::remove_file(d.join(".htaccess")).unwrap();
        std::fs::create_dir(d.join(".htaccess")).unwrap();
        assert!(matches!(
            read_first(&dir_of(&d), &names, HtaccessLimits::default()),
            Found::Unreadable(_)
        ));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn only_enoent_and_enotdir_mean_absent() {
        let d = tmp("errors");
        let names = vec![".htaccess".to_string()];
        let dir = dir_of(&d);
        let read = || read_first(&dir, &names, HtaccessLimits::default());
        let ht = d.join(".htaccess");
        std::fs::write(d.join("file"), "x").unwrap();
        // Dangling, and a path through a regular file: there is no file.
        std::os::unix::fs::symlink("nowhere", &ht).unwrap();
        assert!(matches!(read(), Found::Absent));
        assert_eq!(stamp_of(&ht), Stamp::Absent);
        std::fs::remove_file(&ht).unwrap();
        std::os::unix::fs::symlink("file/x", &ht).unwrap();
        assert!(matches!(read(), Found::Absent));
        assert_eq!(stamp_of(&ht), Stamp::Absent);
        // A loop may hide rules: it fails closed, and its stamp is not
        // that of an absent file (a polled directory must notice it).
        std::fs::remove_file(&ht).unwrap();
        std::os::unix::fs::symlink(".htaccess", &ht).unwrap();
        match read() {
            Found::Unreadable(u) => assert_eq!(
                u.message,
                format!(
                    "(40)Too many levels of symbolic links: AH00529: {dir}.htaccess pcfg_openfile: unable to check htaccess file, ensure it is readable and that '{dir}' is executable"
                )
            ),
            other => panic!("{other:?}"),
        }
        assert_eq!(stamp_of(&ht), Stamp::Other(libc::ELOOP));
        std::fs::remove_file(&ht).unwrap();
        std::os::unix::fs::symlink("n".repeat(300), &ht).unwrap();
        assert!(
            matches!(read(), Found::Unreadable(u) if u.message.starts_with("(36)File name too long: "))
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}
