//! The compiled-config tree: for every directory a request has walked
//! through, the merged configuration in force there (the `<Directory>`
//! sections and `.htaccess` files from `/` down, in Apache's order),
//! shared behind an `Arc`.
//!
//! A level stays valid while its parent is the same object and its
//! `.htaccess` candidates are unchanged. Today that is checked with one
//! `stat` per candidate (the revalidation mode); the watcher mode drops
//! entries on change notifications instead.

use crate::config::{Context, Environment, Walker};
use crate::dirconf::DirConf;
use crate::http::Log;
use crate::site::Site;
use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::{Arc, RwLock};

/// Why a level stops every request below it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LevelError {
    /// A `.htaccess` that failed to compile: 500.
    Config,
    /// A `.htaccess` that exists but cannot be read: 403.
    Unreadable(String),
}

/// The identity of an access file as last seen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stamp {
    Absent,
    Present {
        dev: u64,
        ino: u64,
        size: u64,
        mtime: i64,
        mtime_ns: i64,
        ctime: i64,
        ctime_ns: i64,
    },
    Unreadable(String),
}

/// One directory level of the walk.
#[derive(Debug)]
pub struct Level {
    pub path: String,
    pub depth: usize,
    /// Configuration in force at this level, `.htaccess` included.
    pub conf: Arc<DirConf>,
    pub error: Option<LevelError>,
    /// The parent this level was computed from.
    parent: Option<Arc<Level>>,
    /// The access files seen, in `AccessFileName` order, with the override
    /// mask they were compiled under.
    seen: Vec<Stamp>,
    mask: (u32, u32),
    /// The `.htaccess` as compiled (its own settings, before merging).
    own: Option<Arc<DirConf>>,
}

/// Merged configuration per directory, for one site.
#[derive(Default)]
pub struct ConfigTree {
    levels: RwLock<HashMap<String, Arc<Level>>>,
}

impl std::fmt::Debug for ConfigTree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ConfigTree")
    }
}

fn stamp_of(path: &Path) -> Stamp {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Stamp::Present {
            dev: m.dev(),
            ino: m.ino(),
            size: m.len(),
            mtime: m.mtime(),
            mtime_ns: m.mtime_nsec(),
            ctime: m.ctime(),
            ctime_ns: m.ctime_nsec(),
        },
        Ok(_) => Stamp::Unreadable(format!(
            "Access to file {} denied by server: not a regular file",
            path.display()
        )),
        Err(e)
            if e.kind() == std::io::ErrorKind::NotFound
                || e.raw_os_error() == Some(libc::ENOTDIR) =>
        {
            Stamp::Absent
        }
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => Stamp::Absent,
        Err(e) => Stamp::Unreadable(format!(
            "{}: unable to check htaccess file, ensure it is readable: {e}",
            path.display()
        )),
    }
}

impl ConfigTree {
    pub fn root(&self, site: &Site) -> Arc<Level> {
        self.level(site, None, "/", 0)
    }

    pub fn child(&self, site: &Site, parent: &Arc<Level>, path: &str, depth: usize) -> Arc<Level> {
        self.level(site, Some(parent), path, depth)
    }

    /// Drop every cached level (configuration reload, watch overflow).
    pub fn clear(&self) {
        self.levels.write().expect("tree lock").clear();
    }

    fn level(
        &self,
        site: &Site,
        parent: Option<&Arc<Level>>,
        path: &str,
        depth: usize,
    ) -> Arc<Level> {
        let cached = self.levels.read().expect("tree lock").get(path).cloned();
        // Configuration from sections, before this level's access file.
        let base = parent
            .map(|p| p.conf.clone())
            .unwrap_or_else(|| site.base.clone());
        let sections_conf = apply_sections(site, &base, path, depth);
        let mask = (
            sections_conf.core.allow_override,
            sections_conf.core.override_opts,
        );
        let reads = mask.0 != 0
            || sections_conf
                .core
                .override_list
                .as_ref()
                .is_some_and(|l| !l.is_empty());
        let seen: Vec<Stamp> = if reads {
            site.access_file_names
                .iter()
                .map(|n| stamp_of(&Path::new(path).join(n)))
                .collect()
        } else {
            Vec::new()
        };
        if let Some(c) = &cached {
            let same_parent = match (&c.parent, parent) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                (None, None) => true,
                _ => false,
            };
            if same_parent && c.seen == seen && c.mask == mask {
                return c.clone();
            }
        }
        let reuse = cached
            .as_ref()
            .filter(|c| c.seen == seen && c.mask == mask)
            .map(|c| (c.own.clone(), c.error.clone()));
        let (own, error) = match reuse {
            Some(r) => r,
            None => compile_level(site, path, &seen, &sections_conf),
        };
        let conf = match &own {
            Some(ht) => Arc::new(DirConf::merge(&sections_conf, ht)),
            None => sections_conf,
        };
        let level = Arc::new(Level {
            path: path.to_string(),
            depth,
            conf,
            error,
            parent: parent.cloned(),
            seen,
            mask,
            own,
        });
        self.levels
            .write()
            .expect("tree lock")
            .insert(path.to_string(), level.clone());
        level
    }
}

/// Merge the non-regex `<Directory>` sections of this level onto `base`.
fn apply_sections(site: &Site, base: &Arc<DirConf>, path: &str, depth: usize) -> Arc<DirConf> {
    let mut conf = base.clone();
    for sec in &site.dir_sections {
        if let crate::config::server::DirSectionMatcher::Path {
            path: p,
            components,
            fnmatch,
        } = &sec.matcher
        {
            if *components != depth {
                continue;
            }
            let hit = if *fnmatch {
                crate::modules::core::sections::fnmatch(p.as_bytes(), path.as_bytes())
            } else {
                p == path
            };
            if hit {
                conf = Arc::new(DirConf::merge(&conf, &sec.conf));
            }
        }
    }
    conf
}

/// Read and compile the first present access file of a level.
fn compile_level(
    site: &Site,
    dir: &str,
    seen: &[Stamp],
    conf: &DirConf,
) -> (Option<Arc<DirConf>>, Option<LevelError>) {
    for (name, stamp) in site.access_file_names.iter().zip(seen) {
        let path = Path::new(dir).join(name);
        match stamp {
            Stamp::Absent => continue,
            Stamp::Unreadable(msg) => {
                site.log.error("crit", "core", None, msg);
                return (None, Some(LevelError::Unreadable(msg.clone())));
            }
            Stamp::Present { .. } => {
                return match compile_htaccess(&site.env, &path, conf, &*site.log, site.limits) {
                    Ok(c) => (Some(Arc::new(c)), None),
                    Err(Compiled::Unreadable(msg)) => (None, Some(LevelError::Unreadable(msg))),
                    Err(Compiled::Broken) => (None, Some(LevelError::Config)),
                };
            }
        }
    }
    (None, None)
}

/// Bounds on one access file.
#[derive(Clone, Copy, Debug)]
pub struct HtaccessLimits {
    pub max_bytes: u64,
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

enum Compiled {
    Unreadable(String),
    Broken,
}

fn count_nodes(nodes: &[htaccel_conf::Node]) -> usize {
    nodes
        .iter()
        .map(|n| match n {
            htaccel_conf::Node::Directive(_) => 1,
            htaccel_conf::Node::Section(s) => 1 + count_nodes(&s.children),
        })
        .sum()
}

/// Compile one `.htaccess` under the override settings in force.
fn compile_htaccess(
    env: &Environment,
    path: &Path,
    conf: &DirConf,
    log: &dyn Log,
    limits: HtaccessLimits,
) -> Result<DirConf, Compiled> {
    let shown = path.display().to_string();
    let bytes = match std::fs::File::open(path).and_then(|f| {
        use std::io::Read;
        let mut buf = Vec::new();
        f.take(limits.max_bytes + 1).read_to_end(&mut buf)?;
        Ok(buf)
    }) {
        Ok(b) => b,
        Err(e) => {
            let msg = format!("({}){}: {shown} pcfg_openfile: unable to check htaccess file, ensure it is readable and that '{}' is executable",
                e.raw_os_error().unwrap_or(0), e, path.parent().map(|p| p.display().to_string()).unwrap_or_default());
            log.error("crit", "core", None, &msg);
            return Err(Compiled::Unreadable(msg));
        }
    };
    let fail = |message: String| {
        log.error("alert", "core", None, &format!("{shown}: {message}"));
        Compiled::Broken
    };
    if bytes.len() as u64 > limits.max_bytes {
        return Err(fail(format!(
            "file is larger than the limit of {} bytes (HtaccessMaxSize)",
            limits.max_bytes
        )));
    }
    let nodes = htaccel_conf::parse_bytes(&bytes, &shown, &htaccel_conf::ParseOptions::htaccess())
        .map_err(|e| fail(e.message.clone()))?;
    if count_nodes(&nodes) > limits.max_directives {
        return Err(fail(format!(
            "more than {} directives (HtaccessMaxDirectives)",
            limits.max_directives
        )));
    }
    let mut env = env.clone();
    let ctx = Context {
        override_mask: conf.core.allow_override,
        override_opts: conf.core.override_opts,
        override_list: conf.core.override_list.clone(),
        htaccess: true,
        sections: Vec::new(),
        parent: None,
        limit: None,
    };
    let mut walker = Walker::new(&mut env, None, ctx);
    let mut own = DirConf::for_section();
    let result = walker.walk(&nodes, &mut own);
    for n in &walker.notices {
        log.error("warn", "core", None, &format!("{}: {}", shown, n.message));
    }
    result.map_err(|e| fail(e.message))?;
    Ok(own)
}
