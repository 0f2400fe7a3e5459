//! mod_autoindex's per-directory configuration: the `IndexOptions` bits
//! with their incremental (`+`/`-`) bookkeeping, the icon, alt and
//! description lists, and the merge that combines them across directories
//! and `.htaccess` files exactly as Apache's `merge_autoindex_configs`
//! does (a level with non-incremental options starts afresh; a level with
//! only `+`/`-` options edits what it inherits; lists of the nearer level
//! come first).
//!
//! The lookups (`find_item`, `find_desc`, `ignore_entry`) live here too,
//! since their matching rules are fixed by the shape the directives gave
//! the lists.

pub use crate::http::autoindex::opts::Adjust;
use crate::http::autoindex::opts::*;
use htaccel_conf::fnmatch::{fnmatch, strcmp_match, Flags};
use std::sync::Arc;

/// Which lookup an icon or alt entry takes part in (`BY_PATH`, `BY_TYPE`,
/// `BY_ENCODING`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemKind {
    Path,
    Type,
    Encoding,
}

/// One `AddIcon*`/`AddAlt*`/`IndexIgnore` word, as Apache's `push_item`
/// keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    pub kind: ItemKind,
    /// The name, type or encoding pattern (a path word without wildcards
    /// gets a leading `*`, so it matches as a suffix).
    pub apply_to: String,
    /// The directory the directive was written for, followed by `*`.
    pub apply_path: String,
    /// The icon URL or alt text.
    pub data: String,
}

/// One `AddDescription` word (Apache's `ai_desc_t`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Description {
    pub pattern: String,
    pub text: String,
    /// The pattern has a `/`: matched against the full path.
    pub full_path: bool,
    /// Matched with `fnmatch` (else as a substring).
    pub wildcards: bool,
}

/// One `IndexIgnore` word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ignore {
    /// The directory the pattern was written for, followed by `*`
    /// (just `*` at server level).
    pub apply_path: String,
    /// The pattern's last `/`-separated part, matched against a name.
    pub name: String,
}

#[derive(Clone, Debug)]
pub struct AutoindexDir {
    pub default_icon: Option<String>,
    pub style_sheet: Option<String>,
    pub head_insert: Option<String>,
    pub header: Option<String>,
    pub readme: Option<String>,
    /// `IndexOptions` bits ([`OPTION_UNSET`] when none were set here).
    pub opts: u32,
    pub incremented: u32,
    pub decremented: u32,
    pub name_width: i32,
    pub name_adjust: Adjust,
    pub desc_width: i32,
    pub desc_adjust: Adjust,
    /// 0: not set.
    pub icon_width: i32,
    pub icon_height: i32,
    /// `IndexOrderDefault`: `N`, `M`, `S` or `D`, and `A` or `D`.
    pub default_key: Option<u8>,
    pub default_direction: Option<u8>,
    /// Nearest directory's entries first, as Apache appends them.
    pub icons: Arc<Vec<Item>>,
    pub alts: Arc<Vec<Item>>,
    pub descriptions: Arc<Vec<Description>>,
    pub ignore: Arc<Vec<Ignore>>,
    /// `IndexIgnoreReset`: `Some(true)` drops the inherited list.
    pub ignore_reset: Option<bool>,
    /// `IndexOptions Type=`.
    pub content_type: Option<String>,
    /// `IndexOptions Charset=`.
    pub charset: Option<String>,
    /// `IndexOptions UseOldDateFormat`.
    pub old_date_format: bool,
}

impl Default for AutoindexDir {
    fn default() -> Self {
        AutoindexDir {
            default_icon: None,
            style_sheet: None,
            head_insert: None,
            header: None,
            readme: None,
            opts: OPTION_UNSET,
            incremented: 0,
            decremented: 0,
            name_width: DEFAULT_NAME_WIDTH,
            name_adjust: Adjust::Unset,
            desc_width: DEFAULT_DESC_WIDTH,
            desc_adjust: Adjust::Unset,
            icon_width: 0,
            icon_height: 0,
            default_key: None,
            default_direction: None,
            icons: Arc::default(),
            alts: Arc::default(),
            descriptions: Arc::default(),
            ignore: Arc::default(),
            ignore_reset: None,
            content_type: None,
            charset: None,
            old_date_format: false,
        }
    }
}

/// `add` then `base`, sharing either when the other is empty.
fn append<T: Clone>(add: &Arc<Vec<T>>, base: &Arc<Vec<T>>) -> Arc<Vec<T>> {
    if base.is_empty() {
        add.clone()
    } else if add.is_empty() {
        base.clone()
    } else {
        Arc::new(add.iter().chain(base.iter()).cloned().collect())
    }
}

impl AutoindexDir {
    pub fn merge(base: &AutoindexDir, add: &AutoindexDir) -> AutoindexDir {
        let pick = |a: &Option<String>, b: &Option<String>| a.clone().or_else(|| b.clone());
        let (opts, incremented, decremented) = if add.opts == NO_OPTIONS {
            (NO_OPTIONS, 0, 0)
        } else {
            let (opts, inc, dec) = if add.opts == OPTION_UNSET {
                let inc = (base.incremented | add.incremented) & !add.decremented;
                let dec = base.decremented | add.decremented;
                (base.opts & !NO_OPTIONS, inc, dec)
            } else {
                // Apache keeps the counters as they were zeroed at creation.
                (add.opts, 0, 0)
            };
            ((opts | inc) & !dec, inc, dec)
        };
        let (name_width, name_adjust) = if add.name_adjust == Adjust::Unset {
            (base.name_width, base.name_adjust)
        } else {
            (add.name_width, add.name_adjust)
        };
        let (desc_width, desc_adjust) = if add.desc_adjust == Adjust::Unset {
            (base.desc_width, base.desc_adjust)
        } else {
            (add.desc_width, add.desc_adjust)
        };
        AutoindexDir {
            default_icon: pick(&add.default_icon, &base.default_icon),
            style_sheet: pick(&add.style_sheet, &base.style_sheet),
            head_insert: pick(&add.head_insert, &base.head_insert),
            header: pick(&add.header, &base.header),
            readme: pick(&add.readme, &base.readme),
            opts,
            incremented,
            decremented,
            name_width,
            name_adjust,
            desc_width,
            desc_adjust,
            icon_width: if add.icon_width != 0 {
                add.icon_width
            } else {
                base.icon_width
            },
            icon_height: if add.icon_height != 0 {
                add.icon_height
            } else {
                base.icon_height
            },
            default_key: add.default_key.or(base.default_key),
            default_direction: add.default_direction.or(base.default_direction),
            icons: append(&add.icons, &base.icons),
            alts: append(&add.alts, &base.alts),
            descriptions: append(&add.descriptions, &base.descriptions),
            ignore: if add.ignore_reset == Some(true) {
                add.ignore.clone()
            } else {
                append(&add.ignore, &base.ignore)
            },
            // Apache's merge leaves the flag as the added level has it.
            ignore_reset: add.ignore_reset,
            content_type: pick(&add.content_type, &base.content_type),
            charset: pick(&add.charset, &base.charset),
            old_date_format: add.old_date_format || base.old_date_format,
        }
    }

    /// Whether the file at `path` (a full file-system path) is left out
    /// of a listing (Apache's `ignore_entry`).
    pub fn ignores(&self, path: &str) -> bool {
        let tail = path.rsplit('/').next().unwrap_or(path);
        self.ignore.iter().any(|i| {
            strcmp_match(path.as_bytes(), i.apply_path.as_bytes(), false)
                && strcmp_match(tail.as_bytes(), i.name.as_bytes(), false)
        })
    }

    /// The icon for a file (Apache's `find_icon`).
    pub fn find_icon(&self, file: &EntryFacts<'_>) -> Option<&str> {
        find_item(&self.icons, file)
    }

    /// The alt text for a file (Apache's `find_alt`).
    pub fn find_alt(&self, file: &EntryFacts<'_>) -> Option<&str> {
        find_item(&self.alts, file)
    }

    /// The icon named by path alone, for the parent entry and the
    /// `^^DIRECTORY^^`/`^^BLANKICON^^` pseudo-names.
    pub fn find_default_icon(&self, path: &str) -> Option<&str> {
        find_item(&self.icons, &EntryFacts::path_only(path))
    }

    pub fn find_default_alt(&self, path: &str) -> Option<&str> {
        find_item(&self.alts, &EntryFacts::path_only(path))
    }

    /// The first `AddDescription` matching `path` (Apache's `find_desc`).
    pub fn find_desc(&self, path: &str) -> Option<&str> {
        let name_only = path.rsplit('/').next().unwrap_or(path);
        self.descriptions.iter().find_map(|d| {
            let subject = if d.full_path { path } else { name_only };
            let found = if d.wildcards {
                fnmatch(d.pattern.as_bytes(), subject.as_bytes(), Flags::default())
            } else {
                subject.contains(d.pattern.as_str())
            };
            found.then_some(d.text.as_str())
        })
    }
}

/// What an icon or alt lookup knows about a file.
#[derive(Clone, Copy, Debug)]
pub struct EntryFacts<'a> {
    /// The file-system path (or a `^^…^^` pseudo-name).
    pub path: &'a str,
    /// The content type without parameters.
    pub content_type: Option<&'a str>,
    pub content_encoding: Option<&'a str>,
    /// Consult the by-path entries only (directories, the parent).
    pub path_only: bool,
}

impl<'a> EntryFacts<'a> {
    pub fn path_only(path: &'a str) -> Self {
        EntryFacts {
            path,
            content_type: None,
            content_encoding: None,
            path_only: true,
        }
    }
}

/// Apache's `find_item`: the first entry whose directory covers the path
/// and whose name, type or encoding pattern matches.
fn find_item<'l>(list: &'l [Item], f: &EntryFacts<'_>) -> Option<&'l str> {
    let pseudo = f.path.starts_with('^');
    list.iter()
        .find(|p| {
            if !(pseudo || strcmp_match(f.path.as_bytes(), p.apply_path.as_bytes(), false)) {
                return false;
            }
            if p.apply_to.is_empty() {
                return true;
            }
            if p.kind == ItemKind::Path || pseudo {
                return strcmp_match(f.path.as_bytes(), p.apply_to.as_bytes(), false);
            }
            if f.path_only {
                return false;
            }
            match f.content_encoding {
                None => {
                    p.kind == ItemKind::Type
                        && f.content_type.is_some_and(|t| {
                            strcmp_match(t.as_bytes(), p.apply_to.as_bytes(), true)
                        })
                }
                Some(e) => {
                    p.kind == ItemKind::Encoding
                        && strcmp_match(e.as_bytes(), p.apply_to.as_bytes(), true)
                }
            }
        })
        .map(|p| p.data.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

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
            ..Default::default()
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
            ..Default::default()
        };
        let add = AutoindexDir {
            ignore: Arc::new(vec![ign("/x/", "b")]),
            ..Default::default()
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

    #[test]
    fn incremental_options_edit_what_is_inherited() {
        let base = AutoindexDir {
            opts: OPTION_UNSET | FANCY_INDEXING | SUPPRESS_SIZE,
            ..Default::default()
        };
        let plus = AutoindexDir {
            incremented: FOLDERS_FIRST,
            decremented: SUPPRESS_SIZE,
            ..Default::default()
        };
        let m = AutoindexDir::merge(&base, &plus);
        assert_eq!(
            m.opts & !OPTION_UNSET,
            FANCY_INDEXING | FOLDERS_FIRST,
            "{:x}",
            m.opts
        );
        // A level with plain options starts afresh.
        let plain = AutoindexDir {
            opts: OPTION_UNSET | SUPPRESS_ICON,
            ..Default::default()
        };
        let m2 = AutoindexDir::merge(&m, &plain);
        assert_eq!(m2.opts & !OPTION_UNSET, SUPPRESS_ICON);
        // None clears the increments for further levels too.
        let none = AutoindexDir {
            opts: NO_OPTIONS,
            ..Default::default()
        };
        let m3 = AutoindexDir::merge(&m, &none);
        assert_eq!(m3.opts, NO_OPTIONS);
        let m4 = AutoindexDir::merge(&m3, &AutoindexDir::default());
        assert_eq!(m4.opts, 0);
    }

    fn item(kind: ItemKind, to: &str, data: &str) -> Item {
        Item {
            kind,
            apply_to: to.into(),
            apply_path: "*".into(),
            data: data.into(),
        }
    }

    #[test]
    fn icons_by_path_type_and_encoding() {
        let d = AutoindexDir {
            icons: Arc::new(vec![
                item(ItemKind::Encoding, "x-gzip", "/z.gif"),
                item(ItemKind::Type, "text/*", "/t.gif"),
                item(ItemKind::Path, "*.bin", "/b.gif"),
                item(ItemKind::Path, "*^^DIRECTORY^^", "/d.gif"),
            ]),
            ..Default::default()
        };
        let f = |path, ct, enc| EntryFacts {
            path,
            content_type: ct,
            content_encoding: enc,
            path_only: false,
        };
        assert_eq!(
            d.find_icon(&f("/a/x.txt", Some("TEXT/plain"), None)),
            Some("/t.gif")
        );
        // An encoded file is looked up by its encoding, never its type.
        assert_eq!(
            d.find_icon(&f("/a/x.txt.gz", Some("text/plain"), Some("x-gzip"))),
            Some("/z.gif")
        );
        assert_eq!(
            d.find_icon(&f("/a/x.txt.Z", Some("text/plain"), Some("x-compress"))),
            None
        );
        assert_eq!(d.find_icon(&f("/a/x.bin", None, None)), Some("/b.gif"));
        assert_eq!(d.find_default_icon("^^DIRECTORY^^"), Some("/d.gif"));
        assert_eq!(d.find_default_icon("/a/sub"), None);
    }
}
