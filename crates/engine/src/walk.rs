//! The directory walk (Apache's `ap_directory_walk`) over a cache of
//! compiled, merged per-directory configuration.
//!
//! Apache walks from `/` to the requested file on every request, applying
//! the `<Directory>` sections of each level and parsing each level's
//! `.htaccess` again. We walk the same levels, but each level's merged
//! configuration is computed once and kept in [`crate::tree::ConfigTree`];
//! the walk itself only checks the path components that the response
//! depends on (existence, type, symlink policy).

use crate::dirconf::DirConf;
use crate::fs::{self, Kind};
use crate::modules::core::options::{OPT_SYM_LINKS, OPT_SYM_OWNER};
use crate::site::Site;
use crate::tree::{Level, LevelError};
use crate::walk_memo;
use std::sync::Arc;

/// Why a walk stopped the request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WalkError {
    /// 500: a broken `.htaccess`, with the error-log line.
    Config(std::sync::Arc<str>),
    /// 403 with an explanation for the error log.
    Forbidden { log: String },
    /// 403: an access file on the way exists but cannot be read.
    AccessFile(crate::htaccess::Unreadable),
}

/// What the walk found.
#[derive(Clone)]
pub struct Walked {
    /// `r->filename`: the deepest existing path (file, or directory with
    /// the trailing slash the request had).
    pub filename: String,
    pub path_info: String,
    pub finfo: Option<fs::FileInfo>,
    /// Configuration after `<Directory>` sections, `.htaccess` files and
    /// `<DirectoryMatch>`; before `<Files>`, `<Location>`.
    pub conf: Arc<DirConf>,
}

/// Remove `.`/`..` segments and repeated slashes from an absolute path.
pub fn clean_path(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            s => out.push(s),
        }
    }
    let mut s = String::from("/");
    s.push_str(&out.join("/"));
    if path.ends_with('/') && s.len() > 1 {
        s.push('/');
    }
    s
}

/// Walk `filename` (absolute, normalised; a trailing slash kept if the
/// request had one) through the site's levels.
pub fn directory_walk(site: &Site, filename: &str) -> Result<Walked, WalkError> {
    // Read before the walk: see `walk_memo` for why this order is safe.
    let stamp = crate::watch::changes();
    let tree = site.tree.id();
    if let Some(w) = walk_memo::get(tree, filename, stamp) {
        return Ok(w);
    }
    crate::statcache::take_unwatched();
    let mut all_watched = true;
    let walked = walk(site, filename, (tree, stamp), &mut all_watched);
    if let Ok(w) = &walked {
        if !crate::statcache::take_unwatched() && all_watched {
            walk_memo::put(tree, filename, stamp, w);
        } else {
            crate::answer_memo::note_volatile();
        }
    }
    walked
}

/// The walk itself; `all_watched` is cleared when a level on the way is
/// revalidated by time rather than kept true by the watcher. `memo` is the
/// tree and change stamp that the directory levels reached are kept under.
fn walk(
    site: &Site,
    filename: &str,
    memo: (u64, u64),
    all_watched: &mut bool,
) -> Result<Walked, WalkError> {
    let trailing_slash = filename.ends_with('/') && filename.len() > 1;
    let comps = components(filename);
    let full = fs::stat(filename).ok();
    // One buffer for the walk: the directory reached so far (with its
    // trailing slash), extended by the next component to test it.
    let mut dir_path = String::with_capacity(filename.len() + 1);
    dir_path.push('/');
    let mut walked_to = 0;
    // The levels above the last component, as a walk of another name in
    // the same directory left them: when the whole path exists and every
    // level on the way follows symlinks freely, those levels need no
    // lstat, so they depend on nothing but the tree the stamp vouches for.
    let parent_depth = comps.len().saturating_sub(1);
    let mut level = None;
    if full.is_some() && parent_depth > 0 {
        for c in &comps[..parent_depth] {
            dir_path.push_str(c);
            dir_path.push('/');
        }
        level = walk_memo::get_dir(memo.0, &dir_path, memo.1);
        if level.is_some() {
            walked_to = parent_depth;
        } else {
            dir_path.truncate(1);
        }
    }
    let mut level = level.unwrap_or_else(|| site.tree.root(site));
    // Every level so far was passed without an lstat.
    let mut freely = true;
    let mut finfo = None;
    let mut path_info = String::new();
    loop {
        *all_watched &= level.is_watched();
        if let Some(err) = &level.error {
            return Err(match err {
                LevelError::Config(line) => WalkError::Config(line.clone()),
                LevelError::Unreadable(u) => WalkError::AccessFile(u.clone()),
            });
        }
        if walked_to == comps.len() {
            if full.map(|f| f.kind) == Some(Kind::Dir) || comps.is_empty() {
                finfo = full;
            }
            break;
        }
        let comp = comps[walked_to];
        dir_path.push_str(comp);
        let candidate = dir_path.as_str();
        let opts = level.conf.core.opts();
        let is_last = walked_to + 1 == comps.len();
        // Apache skips the lstat when the whole path exists and symlinks
        // are followed unconditionally.
        let follow_freely = opts & OPT_SYM_LINKS != 0 && opts & OPT_SYM_OWNER == 0;
        freely &= follow_freely && full.is_some();
        let info = match full {
            Some(f) if follow_freely && !is_last => Ok(fs::FileInfo {
                kind: Kind::Dir,
                ..f
            }),
            // The last component names the whole path: what `stat` found
            // there is what following a symlink in its place finds, so a
            // second lookup of the same path (lstat, then stat again for a
            // symlink) would answer the same.
            Some(f) if follow_freely => Ok(f),
            _ => fs::lstat(candidate),
        };
        let info = match info {
            Ok(i) => i,
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    || e.raw_os_error() == Some(libc::ENOTDIR) =>
            {
                path_info = rest_of(&comps[walked_to + 1..], trailing_slash);
                return finish(site, level, dir_path, path_info, None);
            }
            Err(e) if e.raw_os_error() == Some(libc::EACCES) => {
                return Err(WalkError::Forbidden {
                    log: format!("access to {} denied (filesystem path '{candidate}') because search permissions are missing on a component of the path", filename),
                });
            }
            Err(e) => {
                return Err(WalkError::Forbidden {
                    log: format!("access to {filename} failed: {e}"),
                })
            }
        };
        let info = if info.kind == Kind::Symlink {
            resolve_symlink(candidate, &info, opts, filename)?
        } else {
            info
        };
        match info.kind {
            Kind::File => {
                finfo = Some(info);
                path_info = rest_of(&comps[walked_to + 1..], trailing_slash);
                return finish(site, level, dir_path, path_info, finfo);
            }
            Kind::Dir => {
                dir_path.push('/');
                walked_to += 1;
                level = site.tree.child(site, &level, &dir_path, walked_to);
                if walked_to == parent_depth
                    && freely
                    && level.is_watched()
                    && level.error.is_none()
                {
                    walk_memo::put_dir(memo.0, &dir_path, memo.1, &level);
                }
            }
            _ => {
                return Err(WalkError::Forbidden {
                    log: format!("Object {candidate} doesn't point to a file or directory"),
                })
            }
        }
    }
    let name = if trailing_slash || comps.is_empty() {
        dir_path
    } else {
        dir_path.trim_end_matches('/').to_string()
    };
    finish(site, level, name, path_info, finfo)
}

/// The non-empty components of a path. Split at the bytes (`/` is ASCII,
/// so every piece ends on a character boundary): `str::split('/')` with a
/// filter cost about as much as the rest of a walk answered from the caches.
fn components(path: &str) -> Vec<&str> {
    let mut out = Vec::with_capacity(16);
    let mut start = 0;
    for i in memchr::memchr_iter(b'/', path.as_bytes()) {
        if i > start {
            out.push(&path[start..i]);
        }
        start = i + 1;
    }
    if start < path.len() {
        out.push(&path[start..]);
    }
    out
}

fn rest_of(comps: &[&str], trailing_slash: bool) -> String {
    if comps.is_empty() {
        return if trailing_slash {
            "/".to_string()
        } else {
            String::new()
        };
    }
    let mut s = String::new();
    for c in comps {
        s.push('/');
        s.push_str(c);
    }
    if trailing_slash {
        s.push('/');
    }
    s
}

/// Apply `<DirectoryMatch>` sections and package the result.
fn finish(
    site: &Site,
    level: Arc<Level>,
    filename: String,
    path_info: String,
    finfo: Option<fs::FileInfo>,
) -> Result<Walked, WalkError> {
    let mut conf = level.conf.clone();
    for sec in &site.regex_dir_sections {
        if let crate::config::server::DirSectionMatcher::Regex(re) = &sec.matcher {
            if re.is_match(&crate::path_text::bytes(&filename)) {
                conf = Arc::new(DirConf::merge(&conf, &sec.conf));
            }
        }
    }
    Ok(Walked {
        filename,
        path_info,
        finfo,
        conf,
    })
}

/// A symlink on the path is followed only as the options in force allow.
fn resolve_symlink(
    path: &str,
    link: &fs::FileInfo,
    opts: u32,
    filename: &str,
) -> Result<fs::FileInfo, WalkError> {
    let denied = || WalkError::Forbidden {
        log: format!("Symbolic link not allowed or link target not accessible: {path}, referer: -"),
    };
    let _ = filename;
    if opts & (OPT_SYM_LINKS | OPT_SYM_OWNER) == 0 {
        return Err(denied());
    }
    let target = fs::stat(path).map_err(|_| denied())?;
    if opts & OPT_SYM_LINKS == 0 && target.uid != link.uid {
        return Err(denied());
    }
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::components;

    #[test]
    fn components_are_the_non_empty_pieces_between_slashes() {
        for p in [
            "",
            "/",
            "//",
            "/a",
            "a",
            "/a/",
            "/a//b/",
            "/srv/www/wp-content/x.jpg",
            "a/b",
            "/é/ü€/\u{10FE80}x/",
            "/a/b/c//",
        ] {
            let split: Vec<&str> = p.split('/').filter(|c| !c.is_empty()).collect();
            assert_eq!(components(p), split, "{p:?}");
        }
    }
}
