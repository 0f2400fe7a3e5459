//! `htaccel check`: compile every access file of a site exactly as a
//! request would (same configuration, same compiled-config tree, same
//! override settings from the levels above), and report each file's
//! errors, the directives htaccel does not implement, the directives whose
//! meaning differs from Apache's (with their `docs/deviations.md` row), and
//! what Apache would pay per request on the deepest path of the tree.
//!
//! `htaccel check DOCROOT [-f FILE]` checks one document root;
//! `htaccel check -d SERVERROOT [-f FILE]` (or `-f` alone) is the
//! migration report of a whole server: the configuration as `-t` reads it,
//! then every site (the main server and each `<VirtualHost>`) with its own
//! document root and `AllowOverride`, each with a verdict. `--json` writes
//! the same findings for programs (`migration::to_json`).
//!
//! The exit status is 1 when anything needs attention (a file that would
//! answer 500 or 403, a configuration that does not load), so the command
//! fits a deployment pipeline.

use crate::cli::Start;
use htaccel_conf::{Node, ParseOptions};
use htaccel_engine::engine::{self, Engine, Loaded};
use htaccel_engine::http::{AccessEntry, Log};
use htaccel_engine::modules::core::server_directives;
use htaccel_engine::modules::unsupported;
use htaccel_engine::registry;
use htaccel_engine::site::Site;
use htaccel_engine::tree::{Level, LevelError};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Directories visited at most (a bound on a hostile or enormous tree).
const MAX_DIRS: usize = 1_000_000;
/// Depth below the document root visited at most.
const MAX_DEPTH: usize = 256;

/// The compile errors are reported by `check` itself, not logged.
pub struct Quiet;

impl Log for Quiet {
    fn access(&self, _entry: &AccessEntry<'_>) {}
    fn error(&self, _l: &str, _m: &str, _c: Option<std::net::SocketAddr>, _msg: &str) {}
}

/// What to check and how to say it.
#[derive(Debug)]
pub struct Options {
    /// One document root (`None`: every site of the configuration).
    pub docroot: Option<PathBuf>,
    /// `-d`, `-f`, `-D`: the configuration, as the server reads it.
    pub start: Start,
    pub json: bool,
}

pub fn execute(opts: Options) -> i32 {
    let mut out = std::io::stdout();
    let result = match &opts.docroot {
        Some(root) => check_docroot(root, &opts.start, opts.json, &mut out),
        None => crate::migration::run(&opts.start, opts.json, &mut out),
    };
    match result {
        Ok(clean) => i32::from(!clean),
        Err(e) => {
            eprintln!("htaccel check: {e}");
            2
        }
    }
}

fn load(docroot: &Path, start: &Start) -> Result<Loaded, String> {
    let nodes = match &start.file {
        Some(f) => {
            htaccel_conf::parse_file(f, &ParseOptions::default()).map_err(|e| e.to_string())?
        }
        None => {
            let text = include_str!("serve.conf")
                .replace("@DOCROOT@", &docroot.to_string_lossy())
                .replace("@LISTEN@", "127.0.0.1:0");
            htaccel_conf::parse_str(&text, "serve.conf", &ParseOptions::default())
                .map_err(|e| e.to_string())?
        }
    };
    engine::load(&nodes, PathBuf::from("/etc/htaccel"), start.defines.clone())
        .map_err(|e| e.to_string())
}

/// `htaccel check DOCROOT`: the site of the configuration serving that
/// document root (the main server's settings when none does).
fn check_docroot(
    docroot: &Path,
    start: &Start,
    json: bool,
    out: &mut dyn std::io::Write,
) -> Result<bool, String> {
    let root = std::fs::canonicalize(docroot).map_err(|e| format!("{}: {e}", docroot.display()))?;
    let loaded = load(&root, start)?;
    let engine = Engine::new(&loaded, Arc::new(Quiet))?;
    let site = std::iter::once(&engine.main)
        .chain(engine.vhosts.iter())
        .find(|s| std::path::Path::new(&s.document_root) == root)
        .unwrap_or(&engine.main)
        .clone();
    let report = site_report(&site, &root);
    let w = |out: &mut dyn std::io::Write, s: &str| writeln!(out, "{s}").map_err(|e| e.to_string());
    if json {
        let doc = crate::migration::site_json(&site, &report);
        w(
            out,
            &serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?,
        )?;
    } else {
        for line in report.text_lines() {
            w(out, &line)?;
        }
    }
    Ok(report.failed() == 0)
}

/// One access file's findings.
pub struct FileReport {
    /// The file's path (the first `AccessFileName` where none exists).
    pub path: String,
    /// `AllowOverride None` here: the file is never read.
    pub not_read: bool,
    /// Why it fails (it answers 500 or 403 for its subtree).
    pub errors: Vec<String>,
    /// Directives htaccel refuses as not implemented, by line.
    pub unsupported: Vec<(u32, String)>,
    /// Directives accepted with no effect: line, name, and the row of
    /// `docs/deviations.md` that says why, if one names it.
    pub deviations: Vec<(u32, String, Option<&'static str>)>,
}

impl FileReport {
    pub fn failed(&self) -> bool {
        !self.errors.is_empty()
    }
}

/// What Apache does on every request for the deepest directory of a tree.
pub struct Cost {
    pub path: String,
    /// Directory levels walked.
    pub levels: usize,
    /// Access files it tries to open.
    pub opens: usize,
    /// Access files it finds and reads.
    pub reads: usize,
    /// Bytes it parses.
    pub bytes: u64,
}

impl Cost {
    /// System calls for the access files: an `open` per name tried, and
    /// for each file found `fstat`, a `read` per 8 KiB block plus the one
    /// that meets the end, and `close` (Apache's `ap_pcfg_openfile`).
    pub fn syscalls(&self) -> u64 {
        self.opens as u64 + 3 * self.reads as u64 + self.bytes.div_ceil(8192)
    }
}

/// A site's findings.
pub struct SiteReport {
    pub files: Vec<FileReport>,
    pub cost: Option<Cost>,
}

impl SiteReport {
    pub fn failed(&self) -> usize {
        self.files.iter().filter(|f| f.failed()).count()
    }

    pub fn unsupported(&self) -> usize {
        self.files.iter().map(|f| f.unsupported.len()).sum()
    }

    pub fn deviations(&self) -> usize {
        self.files.iter().map(|f| f.deviations.len()).sum()
    }

    /// The human-readable report.
    pub fn text_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for f in &self.files {
            if f.not_read {
                lines.push(format!("{}: not read (AllowOverride None here)", f.path));
                continue;
            }
            for e in &f.errors {
                lines.push(e.clone());
            }
            for (line, name) in &f.unsupported {
                lines.push(format!("{}:{line}: unsupported by htaccel: {name}", f.path));
            }
            for (line, name, row) in &f.deviations {
                lines.push(format!(
                    "{}:{line}: {name}: {}",
                    f.path,
                    crate::migration::row_summary(*row)
                ));
            }
            if f.errors.is_empty() && f.unsupported.is_empty() && f.deviations.is_empty() {
                lines.push(format!("{}: ok", f.path));
            }
        }
        let files = self.files.len();
        let unsupported = self.unsupported();
        lines.push(format!(
            "{files} access file{} checked: {} with errors, {unsupported} unsupported directive{}",
            plural(files),
            self.failed(),
            plural(unsupported)
        ));
        if let Some(c) = &self.cost {
            lines.push(format!(
                "deepest path {} ({} levels): Apache opens {} access file{} and parses {} bytes on every request there; htaccel: 0 and 0 (compiled once, recompiled on change)",
                c.path,
                c.levels,
                c.opens,
                plural(c.opens),
                c.bytes
            ));
        }
        lines
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Check every access file under `root` with `site`'s configuration.
pub fn site_report(site: &Site, root: &Path) -> SiteReport {
    let (dirs, deepest) = scan(root, &site.access_file_names);
    let files = dirs
        .iter()
        .map(|dir| report(site, &level_of(site, dir), dir))
        .collect();
    SiteReport {
        files,
        cost: deepest.map(|d| apache_cost(site, &d)),
    }
}

/// Directories (with trailing slash) that hold an access file, sorted, and
/// the deepest directory of the tree. Symlinks are not followed.
fn scan(root: &Path, names: &[String]) -> (Vec<String>, Option<String>) {
    let mut found = Vec::new();
    let mut deepest: Option<(usize, String)> = None;
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    let mut visited = 0;
    while let Some((dir, depth)) = stack.pop() {
        visited += 1;
        if visited > MAX_DIRS {
            break;
        }
        let slash = format!("{}/", dir.display()).replace("//", "/");
        if deepest.as_ref().is_none_or(|(d, _)| depth > *d) {
            deepest = Some((depth, slash.clone()));
        }
        if names.iter().any(|n| dir.join(n).symlink_metadata().is_ok()) {
            found.push(slash);
        }
        if depth >= MAX_DEPTH {
            continue;
        }
        if let Ok(rd) = std::fs::read_dir(&dir) {
            for e in rd.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push((e.path(), depth + 1));
                }
            }
        }
    }
    found.sort();
    (found, deepest.map(|(_, d)| d))
}

/// The level of `dir` as a request computes it: from `/` down, each level
/// merged onto its parent (continuing below a broken level, which a request
/// would not reach, so that every file is checked).
fn level_of(site: &Site, dir: &str) -> Arc<Level> {
    let mut level = site.tree.root(site);
    let mut path = String::from("/");
    for (i, comp) in dir.split('/').filter(|c| !c.is_empty()).enumerate() {
        path.push_str(comp);
        path.push('/');
        level = site.tree.child(site, &level, &path, i + 1);
    }
    level
}

fn report(site: &Site, level: &Level, dir: &str) -> FileReport {
    let path = level
        .access_file()
        .map(|l| l.path.display().to_string())
        .unwrap_or_else(|| {
            format!(
                "{dir}{}",
                site.access_file_names
                    .first()
                    .map(String::as_str)
                    .unwrap_or(".htaccess")
            )
        });
    let mut r = FileReport {
        path,
        not_read: !level.reads_access_files(),
        errors: Vec::new(),
        unsupported: Vec::new(),
        deviations: Vec::new(),
    };
    if r.not_read {
        return r;
    }
    match (&level.error, level.problem()) {
        (_, Some(p)) => r.errors.push(p.to_string()),
        (Some(LevelError::Unreadable(u)), None) => {
            r.errors.push(format!("{}: {}", r.path, u.message))
        }
        (Some(LevelError::Config(_)), None) => {
            r.errors.push(format!("{}: fails to compile", r.path))
        }
        (None, None) => {}
    }
    if let Some(Ok(nodes)) = level.access_file().map(|l| &l.nodes) {
        directives_in(site, nodes, &mut |line, name, kind| match kind {
            Kind::Unsupported => r.unsupported.push((line, name.to_string())),
            Kind::WithoutEffect => r.deviations.push((
                line,
                name.to_string(),
                crate::migration::deviation_row(name),
            )),
            Kind::Honoured => {}
        });
    }
    r
}

/// What htaccel does with a directive it knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Honoured,
    /// Accepted with no effect (Apache's process tuning).
    WithoutEffect,
    /// Refused as not implemented.
    Unsupported,
}

/// Every directive (at any depth, in the branches a start-up conditional
/// takes) that the configuration knows: its line, its name, and what
/// htaccel does with it.
pub fn directives_in(site: &Site, nodes: &[Node], found: &mut dyn FnMut(u32, &str, Kind)) {
    for n in nodes {
        let (lookup, origin) = match n {
            Node::Directive(d) => (d.name.clone(), &d.origin),
            Node::Section(s) => (format!("<{}", s.name), &s.origin),
        };
        if let Some((_, d)) = registry::find(&site.env.modules, &lookup) {
            let kind = if unsupported::is_unsupported(d) {
                Kind::Unsupported
            } else if server_directives::is_without_effect(d) {
                Kind::WithoutEffect
            } else {
                Kind::Honoured
            };
            found(origin.line, d.name, kind);
        }
        if let Node::Section(s) = n {
            if branch_taken(site, &s.name, &s.args) {
                directives_in(site, &s.children, found);
            }
        }
    }
}

/// Whether a start-up conditional's body is read (`<IfModule>`,
/// `<IfDefine>`); every other section's body counts.
pub fn branch_taken(site: &Site, name: &str, args: &[String]) -> bool {
    let Some(arg) = args.first() else {
        return true;
    };
    let (negated, arg) = match arg.strip_prefix('!') {
        Some(a) => (true, a),
        None => (false, arg.as_str()),
    };
    let present = if name.eq_ignore_ascii_case("IfModule") {
        site.env.is_loaded(arg)
    } else if name.eq_ignore_ascii_case("IfDefine") {
        site.env.defines.contains_key(arg)
    } else {
        return true;
    };
    present != negated
}

/// What Apache does on every request for `dir`: levels walked, access
/// files it tries to open and finds, bytes it parses.
fn apache_cost(site: &Site, dir: &str) -> Cost {
    let mut cost = Cost {
        path: dir.to_string(),
        levels: 0,
        opens: 0,
        reads: 0,
        bytes: 0,
    };
    let mut path = String::from("/");
    let mut level = site.tree.root(site);
    let mut account = |level: &Level, path: &str| {
        cost.levels += 1;
        if !level.reads_access_files() {
            return;
        }
        for name in &site.access_file_names {
            cost.opens += 1;
            if Path::new(path).join(name).is_file() {
                cost.reads += 1;
                break;
            }
        }
        cost.bytes += level.access_file().map_or(0, |l| l.bytes);
    };
    account(&level, &path);
    for (i, comp) in dir.split('/').filter(|c| !c.is_empty()).enumerate() {
        path.push_str(comp);
        path.push('/');
        level = site.tree.child(site, &level, &path, i + 1);
        account(&level, &path);
    }
    cost
}
