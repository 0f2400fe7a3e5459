//! mod_autoindex: a directory listing for a directory without an index,
//! when `Options Indexes` allows it, and the `IndexIgnore` list that keeps
//! names out of it. Each entry is looked up as a sub-request, as Apache
//! does, so files the configuration denies (`.htaccess` under the stock
//! `<FilesMatch "^\.ht">`) are not listed.
//!
//! `IndexIgnore` is everywhere in real `.htaccess` files (`IndexIgnore *`
//! beside `Options -Indexes` in Joomla, OpenCart, Nextcloud's data
//! directory), so it is read with Apache's exact rules: a pattern applies
//! below the directory it was written for, lists append from the nearest
//! directory outwards unless `IndexIgnoreReset On`, and `*`/`?` match as
//! Apache's `ap_strcmp_match` does (a `*` crosses `/`; no escapes). The
//! listing's other directives (`IndexOptions`, icons, descriptions) are
//! still refused loudly.

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::http::autoindex::{self, DirEntryInfo, ListingOptions};
use crate::http::Response;
use crate::modules::unsupported::refuse;
use crate::registry::{Args, Directive, Module, ACCESS_CONF, OR_INDEXES, RSRC_CONF};
use crate::request::Ctx;
use std::sync::Arc;

/// One `IndexIgnore` word, as Apache's `push_item` keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ignore {
    /// The directory the pattern was written for, followed by `*`
    /// (just `*` at server level).
    pub apply_path: String,
    /// The pattern's last `/`-separated part, matched against a name.
    pub name: String,
}

#[derive(Clone, Debug, Default)]
pub struct AutoindexDir {
    /// Nearest directory's patterns first, as Apache appends them.
    pub ignore: Arc<Vec<Ignore>>,
    /// `IndexIgnoreReset`: `Some(true)` drops the inherited list.
    pub ignore_reset: Option<bool>,
}

impl AutoindexDir {
    pub fn merge(base: &AutoindexDir, add: &AutoindexDir) -> AutoindexDir {
        let ignore = if add.ignore_reset == Some(true) || base.ignore.is_empty() {
            add.ignore.clone()
        } else if add.ignore.is_empty() {
            base.ignore.clone()
        } else {
            Arc::new(
                add.ignore
                    .iter()
                    .chain(base.ignore.iter())
                    .cloned()
                    .collect(),
            )
        };
        AutoindexDir {
            ignore,
            // Apache's merge leaves the flag as the added level has it.
            ignore_reset: add.ignore_reset,
        }
    }

    /// Whether the file at `path` (a full file-system path) is left out
    /// of a listing (Apache's `ignore_entry`).
    pub fn ignores(&self, path: &str) -> bool {
        let tail = path.rsplit('/').next().unwrap_or(path);
        self.ignore.iter().any(|i| {
            strcmp_match(path.as_bytes(), i.apply_path.as_bytes())
                && strcmp_match(tail.as_bytes(), i.name.as_bytes())
        })
    }
}

/// Apache's `ap_strcmp_match`: `*` matches any run of bytes (`/` too), `?`
/// any one byte, everything else itself. Greedy with one back-track point,
/// so the cost stays linear in the text for each pattern.
pub fn strcmp_match(text: &[u8], pattern: &[u8]) -> bool {
    let (mut t, mut p) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(b'*') => {
                p += 1;
                star = Some((p, t));
            }
            Some(&c) if c == b'?' || c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

fn add_ignore(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    let apply_path = format!("{}*", w.ctx.path.as_deref().unwrap_or(""));
    let list = Arc::make_mut(&mut c.autoindex.ignore);
    for word in &inv.words {
        let name = word.rsplit('/').next().unwrap_or(word).to_string();
        list.push(Ignore {
            apply_path: apply_path.clone(),
            name,
        });
    }
    Ok(())
}

fn ignore_reset(_w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    c.autoindex.ignore_reset = Some(inv.words[0].eq_ignore_ascii_case("on"));
    Ok(())
}

const IX: u32 = OR_INDEXES | ACCESS_CONF | RSRC_CONF;

/// A listing directive htaccel does not implement yet: refused loudly.
macro_rules! refused {
    ($name:literal) => {
        Directive {
            name: $name,
            args: Args::Raw,
            req_override: IX,
            about: "",
            run: refuse,
        }
    };
}

pub static DIRECTIVES: &[Directive] = &[
    Directive {
        name: "IndexIgnore",
        args: Args::Iterate,
        req_override: IX,
        about: "one or more file extensions",
        run: add_ignore,
    },
    Directive {
        name: "IndexIgnoreReset",
        args: Args::Flag,
        req_override: IX,
        about: "Reset the inherited list of IndexIgnore filenames",
        run: ignore_reset,
    },
    refused!("IndexOptions"),
    refused!("IndexOrderDefault"),
    refused!("IndexStyleSheet"),
    refused!("IndexHeadInsert"),
    refused!("HeaderName"),
    refused!("ReadmeName"),
    refused!("DefaultIcon"),
    refused!("AddIcon"),
    refused!("AddIconByType"),
    refused!("AddIconByEncoding"),
    refused!("AddAlt"),
    refused!("AddAltByType"),
    refused!("AddAltByEncoding"),
    refused!("AddDescription"),
];

pub static MODULE: Module = Module {
    source: "mod_autoindex.c",
    identifier: "autoindex_module",
    builtin: false,
    directives: DIRECTIVES,
};

pub fn listing(ctx: &mut Ctx<'_>) -> Response {
    // A listing reads the directory itself, which no cache holds: it is
    // never kept (`answer_memo`).
    crate::answer_memo::note_volatile();
    let mut entries = Vec::new();
    let ignore = ctx.conf.autoindex.clone();
    if let Ok(rd) = std::fs::read_dir(crate::path_text::os_path(ctx.filename.as_ref())) {
        for e in rd.flatten() {
            use std::os::unix::ffi::OsStrExt;
            let name = e.file_name().as_bytes().to_vec();
            let full = format!(
                "{}/{}",
                ctx.filename.trim_end_matches('/'),
                crate::path_text::from_slice(&name)
            );
            if ignore.ignores(&full) {
                continue;
            }
            let is_dir = std::fs::metadata(e.path())
                .map(|m| m.is_dir())
                .unwrap_or(false);
            entries.push(DirEntryInfo { name, is_dir });
        }
    }
    let visible = |entry: &DirEntryInfo| {
        let name = crate::path_text::from_slice(&entry.name);
        let (sub, result) = ctx.sub_request_dirent(&name);
        let kind_ok = matches!(
            sub.finfo.map(|f| f.kind),
            Some(crate::fs::Kind::File) | Some(crate::fs::Kind::Dir)
        );
        kind_ok && matches!(result, Ok(()) | Err(300..=399))
    };
    // Apache tests the parent link as "<directory>/..".
    let parent = format!("{}/..", ctx.filename.trim_end_matches('/'));
    let opts = ListingOptions {
        query: ctx.args.as_deref(),
        signature: None,
        head: ctx.req.method == "HEAD",
        hide_parent: ignore.ignores(&parent),
    };
    autoindex::listing(crate::path_text::bytes(&ctx.uri), &entries, visible, &opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strcmp_match_as_apache() {
        assert!(strcmp_match(b"abc", b"*"));
        assert!(strcmp_match(b"", b"*"));
        assert!(strcmp_match(b"/a/b/c", b"/a/*"));
        assert!(strcmp_match(b"x.txt", b"*.txt"));
        assert!(!strcmp_match(b"x.txt", b"*.tx"));
        assert!(strcmp_match(b"a.b", b"a?b"));
        assert!(!strcmp_match(b"ab", b"a?b"));
        assert!(strcmp_match(b"aXbXc", b"a*b*c"));
        assert!(!strcmp_match(b"README", b"readme"));
        assert!(strcmp_match(&[b'a'; 10_000], b"*a*a*a*a*a*a*a*"));
    }

    fn ign(path: &str, name: &str) -> Ignore {
        Ignore {
            apply_path: format!("{path}*"),
            name: name.into(),
        }
    }

    #[test]
    fn ignore_applies_below_its_directory() {
        let d = AutoindexDir {
            ignore: Arc::new(vec![ign("/srv/a/", "*.bak"), ign("/srv/b/", "*")]),
            ignore_reset: None,
        };
        assert!(d.ignores("/srv/a/x.bak"));
        assert!(d.ignores("/srv/a/sub/x.bak"));
        assert!(!d.ignores("/srv/c/x.bak"));
        assert!(d.ignores("/srv/b/.."));
        assert!(!d.ignores("/srv/a/x.txt"));
    }

    #[test]
    fn merge_appends_unless_reset() {
        let base = AutoindexDir {
            ignore: Arc::new(vec![ign("/", "a")]),
            ignore_reset: None,
        };
        let add = AutoindexDir {
            ignore: Arc::new(vec![ign("/x/", "b")]),
            ignore_reset: None,
        };
        let m = AutoindexDir::merge(&base, &add);
        assert_eq!(m.ignore.len(), 2);
        assert_eq!(m.ignore[0].name, "b");
        let reset = AutoindexDir {
            ignore_reset: Some(true),
            ..add
        };
        assert_eq!(AutoindexDir::merge(&base, &reset).ignore.len(), 1);
    }
}
