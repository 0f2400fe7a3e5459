//! mod_autoindex: a directory listing for a directory without an index,
//! when `Options Indexes` allows it, with all of the module's directives:
//! `IndexOptions` (fancy and table listings, their columns and widths,
//! icons, sorting, `Type=`/`Charset=`, `TrackModified`, …, with `+`/`-`
//! merged across directories and `.htaccess` files), the icon and alt
//! tables (`AddIcon*`, `AddAlt*`, `DefaultIcon`), `AddDescription`,
//! `HeaderName`/`ReadmeName`, `IndexOrderDefault`, `IndexStyleSheet`,
//! `IndexHeadInsert`, `IndexIgnore` and `IndexIgnoreReset`.
//!
//! Debian enables the module with `autoindex.conf` (fancy table listings
//! with icons, `HEADER.html` and `README.html`), so a stock installation
//! depends on every one of them. Each directive parses its words as
//! Apache's `add_opts`, `add_icon`, `add_desc` … do, with their error
//! texts; the configuration and its merge are in [`config`], the request
//! in [`handler`], the page itself in `http::autoindex`.

pub mod config;
pub mod handler;

pub use config::{AutoindexDir, Ignore};
pub use handler::{claims, handler, listing};

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::http::autoindex::opts::*;
use crate::registry::{Args, Directive, Module, Run, ACCESS_CONF, OR_ALL, OR_INDEXES, RSRC_CONF};
use config::{Adjust, Description, Item, ItemKind};
use htaccel_conf::fnmatch::{has_wildcard, is_matchexp};
use std::sync::Arc;

/// The directory a directive was written for, as a pattern prefix
/// (Apache's `cmd->path` followed by `*`).
fn apply_path(w: &Walker<'_>) -> String {
    format!("{}*", w.ctx.path.as_deref().unwrap_or(""))
}

/// Apache's `push_item`: a path word without wildcards matches as a suffix.
fn item(kind: ItemKind, to: &str, apply_path: &str, data: &str) -> Item {
    let apply_to = if kind == ItemKind::Path && !is_matchexp(to) {
        format!("*{to}")
    } else {
        to.to_string()
    };
    Item {
        kind,
        apply_to,
        apply_path: apply_path.to_string(),
        data: data.to_string(),
    }
}

/// The target word as `add_icon`/`add_alt` normalise it.
fn target(kind: ItemKind, to: &str) -> String {
    match kind {
        ItemKind::Path if to == "**DIRECTORY**" => "^^DIRECTORY^^".into(),
        ItemKind::Encoding => to.to_ascii_lowercase(),
        _ => to.to_string(),
    }
}

fn add_alt(path: &str, c: &mut DirConf, kind: ItemKind, alt: &str, targets: &[String]) {
    let list = Arc::make_mut(&mut c.autoindex.alts);
    for to in targets {
        list.push(item(kind, &target(kind, to), path, alt));
    }
}

/// `AddIcon*`: an icon URL, or `(ALT,URL)` which also adds the alt text.
fn add_icon(path: &str, c: &mut DirConf, kind: ItemKind, words: &[String]) -> Result<(), String> {
    let icon = words[0].as_str();
    let mut url = icon.to_string();
    if icon.starts_with('(') {
        let close = icon.find(')').ok_or("missing closing paren")?;
        // `ap_getword_nc` up to the first comma (the whole word without
        // one); the URL is what follows the comma and its repeats, cut
        // where the closing parenthesis stood.
        let (alt, rest_start) = match icon.find(',') {
            Some(i) => (
                &icon[..i],
                i + 1 + icon[i + 1..].bytes().take_while(|&b| b == b',').count(),
            ),
            None => (icon, icon.len()),
        };
        url = if close >= rest_start {
            icon[rest_start..close].to_string()
        } else {
            icon[rest_start..].to_string()
        };
        add_alt(path, c, kind, &alt[1..], &words[1..]);
    }
    let list = Arc::make_mut(&mut c.autoindex.icons);
    for to in &words[1..] {
        list.push(item(kind, &target(kind, to), path, &url));
    }
    Ok(())
}

/// `AddDescription`: a pattern with a `/` or wildcards is matched with
/// `fnmatch` inside `*…*` (`*/…*` for one with a `/`, matched against the
/// full path), a plain word as a substring of the name.
fn add_desc(c: &mut DirConf, words: &[String]) {
    let text = &words[0];
    let list = Arc::make_mut(&mut c.autoindex.descriptions);
    for to in &words[1..] {
        let full_path = to.contains('/');
        let wildcards = full_path || has_wildcard(to.as_bytes());
        let pattern = if wildcards {
            format!("{}{to}*", if full_path { "*/" } else { "*" })
        } else {
            to.clone()
        };
        list.push(Description {
            pattern,
            text: text.clone(),
            full_path,
            wildcards,
        });
    }
}

/// C's `atoi`: leading blanks, a sign, then digits; anything else is 0.
fn atoi(s: &str) -> i32 {
    let s = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut v: i64 = 0;
    for b in digits.bytes().take_while(u8::is_ascii_digit) {
        v = (v * 10 + i64::from(b - b'0')).min(i64::from(i32::MAX) + 1);
    }
    let v = if neg { -v } else { v };
    v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}

fn starts_with_ci(w: &str, prefix: &str) -> bool {
    w.len() >= prefix.len() && w.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

/// `IndexOptions`, as Apache's `add_opts`: keywords set bits; `+`/`-`
/// keywords are kept apart so that the merge can apply them to what the
/// directory inherits; a plain keyword drops the pending `+`/`-` ones.
fn add_opts(c: &mut DirConf, words: &[String]) -> Result<(), String> {
    let d = &mut c.autoindex;
    let mut opts = d.opts;
    let mut add = d.incremented;
    let mut remove = d.decremented;
    for word in words {
        let (action, w) = match word.as_bytes().first() {
            Some(b'+') => (Some('+'), &word[1..]),
            Some(b'-') => (Some('-'), &word[1..]),
            _ => (None, word.as_str()),
        };
        let mut option = 0;
        if let Some(bit) = keyword(w) {
            option = bit;
        } else if w.eq_ignore_ascii_case("None") {
            if action.is_some() {
                return Err("Cannot combine '+' or '-' with 'None' keyword".into());
            }
            opts = NO_OPTIONS;
            add = 0;
            remove = 0;
        } else if w.eq_ignore_ascii_case("IconWidth") {
            d.icon_width = if action == Some('-') {
                0
            } else {
                DEFAULT_ICON_WIDTH
            };
        } else if starts_with_ci(w, "IconWidth=") {
            if action == Some('-') {
                return Err("Cannot combine '-' with IconWidth=n".into());
            }
            d.icon_width = atoi(&w[10..]);
        } else if w.eq_ignore_ascii_case("IconHeight") {
            d.icon_height = if action == Some('-') {
                0
            } else {
                DEFAULT_ICON_HEIGHT
            };
        } else if starts_with_ci(w, "IconHeight=") {
            if action == Some('-') {
                return Err("Cannot combine '-' with IconHeight=n".into());
            }
            d.icon_height = atoi(&w[11..]);
        } else if w.eq_ignore_ascii_case("NameWidth") {
            if action != Some('-') {
                return Err("NameWidth with no value may only appear as '-NameWidth'".into());
            }
            d.name_width = DEFAULT_NAME_WIDTH;
            d.name_adjust = Adjust::Fixed;
        } else if starts_with_ci(w, "NameWidth=") {
            if action == Some('-') {
                return Err("Cannot combine '-' with NameWidth=n".into());
            }
            if w.as_bytes().get(10) == Some(&b'*') {
                d.name_adjust = Adjust::Fit;
            } else {
                let width = atoi(&w[10..]);
                if width != 0 && width < 5 {
                    return Err("NameWidth value must be greater than 5".into());
                }
                d.name_width = width;
                d.name_adjust = Adjust::Fixed;
            }
        } else if w.eq_ignore_ascii_case("DescriptionWidth") {
            if action != Some('-') {
                return Err(
                    "DescriptionWidth with no value may only appear as '-DescriptionWidth'".into(),
                );
            }
            d.desc_width = DEFAULT_DESC_WIDTH;
            d.desc_adjust = Adjust::Fixed;
        } else if starts_with_ci(w, "DescriptionWidth=") {
            if action == Some('-') {
                return Err("Cannot combine '-' with DescriptionWidth=n".into());
            }
            if w.as_bytes().get(17) == Some(&b'*') {
                d.desc_adjust = Adjust::Fit;
            } else {
                let width = atoi(&w[17..]);
                if width != 0 && width < 12 {
                    return Err("DescriptionWidth value must be greater than 12".into());
                }
                d.desc_width = width;
                d.desc_adjust = Adjust::Fixed;
            }
        } else if starts_with_ci(w, "Type=") {
            d.content_type = Some(w[5..].to_string());
        } else if starts_with_ci(w, "Charset=") {
            d.charset = Some(w[8..].to_string());
        } else if w.eq_ignore_ascii_case("UseOldDateFormat") {
            d.old_date_format = true;
        } else {
            return Err("Invalid directory indexing option".into());
        }
        match action {
            None => {
                opts |= option;
                add = 0;
                remove = 0;
            }
            Some('+') => {
                add |= option;
                remove &= !option;
            }
            _ => {
                remove |= option;
                add &= !option;
            }
        }
    }
    if opts & NO_OPTIONS != 0 && opts & !NO_OPTIONS != 0 {
        return Err("Cannot combine other IndexOptions keywords with 'None'".into());
    }
    d.incremented = add;
    d.decremented = remove;
    d.opts = opts;
    Ok(())
}

fn set_default_order(c: &mut DirConf, words: &[String]) -> Result<(), String> {
    let direction = match words[0].to_ascii_lowercase().as_str() {
        "ascending" => b'A',
        "descending" => b'D',
        _ => return Err("First keyword must be 'Ascending' or 'Descending'".into()),
    };
    let key = match words[1].to_ascii_lowercase().as_str() {
        "name" => b'N',
        "date" => b'M',
        "size" => b'S',
        "description" => b'D',
        _ => return Err("Second keyword must be 'Name', 'Date', 'Size', or 'Description'".into()),
    };
    c.autoindex.default_direction = Some(direction);
    c.autoindex.default_key = Some(key);
    Ok(())
}

fn add_ignore(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    let apply_path = apply_path(w);
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

/// A directive that stores its one word in a string slot.
macro_rules! string_slot {
    ($name:literal, $field:ident, $about:literal) => {
        Directive {
            name: $name,
            args: Args::Take1,
            req_override: IX,
            about: $about,
            run: Run::Handler(|_w, inv, c| {
                c.autoindex.$field = Some(inv.words[0].clone());
                Ok(())
            }),
        }
    };
}

pub static DIRECTIVES: &[Directive] = &[
    Directive {
        name: "AddIcon",
        args: Args::Iterate2,
        req_override: IX,
        about: "an icon URL followed by one or more filenames",
        run: Run::Handler(|w, inv, c| add_icon(&apply_path(w), c, ItemKind::Path, &inv.words)),
    },
    Directive {
        name: "AddIconByType",
        args: Args::Iterate2,
        req_override: IX,
        about: "an icon URL followed by one or more MIME types",
        run: Run::Handler(|w, inv, c| add_icon(&apply_path(w), c, ItemKind::Type, &inv.words)),
    },
    Directive {
        name: "AddIconByEncoding",
        args: Args::Iterate2,
        req_override: IX,
        about: "an icon URL followed by one or more content encodings",
        run: Run::Handler(|w, inv, c| add_icon(&apply_path(w), c, ItemKind::Encoding, &inv.words)),
    },
    Directive {
        name: "AddAlt",
        args: Args::Iterate2,
        req_override: IX,
        about: "alternate descriptive text followed by one or more filenames",
        run: Run::Handler(|w, inv, c| {
            add_alt(
                &apply_path(w),
                c,
                ItemKind::Path,
                &inv.words[0],
                &inv.words[1..],
            );
            Ok(())
        }),
    },
    Directive {
        name: "AddAltByType",
        args: Args::Iterate2,
        req_override: IX,
        about: "alternate descriptive text followed by one or more MIME types",
        run: Run::Handler(|w, inv, c| {
            add_alt(
                &apply_path(w),
                c,
                ItemKind::Type,
                &inv.words[0],
                &inv.words[1..],
            );
            Ok(())
        }),
    },
    Directive {
        name: "AddAltByEncoding",
        args: Args::Iterate2,
        req_override: IX,
        about: "alternate descriptive text followed by one or more content encodings",
        run: Run::Handler(|w, inv, c| {
            add_alt(
                &apply_path(w),
                c,
                ItemKind::Encoding,
                &inv.words[0],
                &inv.words[1..],
            );
            Ok(())
        }),
    },
    Directive {
        name: "IndexOptions",
        args: Args::Argv,
        req_override: IX,
        about: "one or more index options [+|-][]",
        run: Run::Handler(|_w, inv, c| add_opts(c, &inv.words)),
    },
    Directive {
        name: "IndexOrderDefault",
        args: Args::Take2,
        req_override: IX,
        about: "{Ascending,Descending} {Name,Size,Description,Date}",
        run: Run::Handler(|_w, inv, c| set_default_order(c, &inv.words)),
    },
    Directive {
        name: "IndexIgnore",
        args: Args::Iterate,
        req_override: IX,
        about: "one or more file extensions",
        run: Run::Handler(add_ignore),
    },
    Directive {
        name: "IndexIgnoreReset",
        args: Args::Flag,
        req_override: IX,
        about: "Reset the inherited list of IndexIgnore filenames",
        run: Run::Handler(ignore_reset),
    },
    Directive {
        name: "AddDescription",
        args: Args::Iterate2,
        req_override: IX,
        about: "Descriptive text followed by one or more filenames",
        run: Run::Handler(|_w, inv, c| {
            add_desc(c, &inv.words);
            Ok(())
        }),
    },
    string_slot!("HeaderName", header, "a filename"),
    string_slot!("ReadmeName", readme, "a filename"),
    Directive {
        name: "FancyIndexing",
        args: Args::Raw,
        req_override: OR_ALL | ACCESS_CONF | RSRC_CONF,
        about: "",
        run: Run::Handler(|_w, _inv, _c| {
            Err("The FancyIndexing directive is no longer supported. Use IndexOptions FancyIndexing."
                .into())
        }),
    },
    string_slot!("DefaultIcon", default_icon, "an icon URL"),
    string_slot!("IndexStyleSheet", style_sheet, "URL to style sheet"),
    string_slot!(
        "IndexHeadInsert",
        head_insert,
        "String to insert in HTML HEAD section"
    ),
];

pub static MODULE: Module = Module {
    source: "mod_autoindex.c",
    identifier: "autoindex_module",
    builtin: false,
    directives: DIRECTIVES,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(words: &[&str]) -> Result<AutoindexDir, String> {
        let mut c = DirConf::default();
        add_opts(
            &mut c,
            &words.iter().map(|w| w.to_string()).collect::<Vec<_>>(),
        )?;
        Ok(c.autoindex)
    }

    #[test]
    fn index_options_words() {
        let d = opts(&[
            "FancyIndexing",
            "VersionSort",
            "HTMLTable",
            "NameWidth=*",
            "DescriptionWidth=*",
            "Charset=UTF-8",
        ])
        .unwrap();
        assert_eq!(
            d.opts & !OPTION_UNSET,
            FANCY_INDEXING | VERSION_SORT | TABLE_INDEXING
        );
        assert_eq!((d.name_adjust, d.desc_adjust), (Adjust::Fit, Adjust::Fit));
        assert_eq!(d.charset.as_deref(), Some("UTF-8"));
        let d = opts(&["+FoldersFirst", "-SuppressSize"]).unwrap();
        assert_eq!(d.opts, OPTION_UNSET);
        assert_eq!(
            (d.incremented, d.decremented),
            (FOLDERS_FIRST, SUPPRESS_SIZE)
        );
        // A plain keyword drops the pending increments (Apache's add_opts).
        let d = opts(&["+FoldersFirst", "IconWidth"]).unwrap();
        assert_eq!((d.incremented, d.icon_width), (0, DEFAULT_ICON_WIDTH));
        assert_eq!(
            opts(&["Bogus"]).unwrap_err(),
            "Invalid directory indexing option"
        );
        assert_eq!(
            opts(&["None", "FancyIndexing"]).unwrap_err(),
            "Cannot combine other IndexOptions keywords with 'None'"
        );
        assert!(opts(&["NameWidth"]).is_err());
        assert!(opts(&["NameWidth=4"]).is_err());
        assert_eq!(opts(&["NameWidth=0"]).unwrap().name_width, 0);
        assert!(opts(&["DescriptionWidth=11"]).is_err());
        assert!(opts(&["-IconWidth=3"]).is_err());
        assert_eq!(opts(&["IconHeight=12x"]).unwrap().icon_height, 12);
    }

    #[test]
    fn icon_words() {
        let mut c = DirConf::default();
        let w = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        add_icon(
            "*",
            &mut c,
            ItemKind::Type,
            &w(&["(TXT,/icons/text.gif)", "text/*"]),
        )
        .unwrap();
        add_icon(
            "/srv/*",
            &mut c,
            ItemKind::Path,
            &w(&["/icons/c.gif", ".c", "**DIRECTORY**"]),
        )
        .unwrap();
        add_icon(
            "*",
            &mut c,
            ItemKind::Encoding,
            &w(&["(Z,,/z.gif)", "X-GZIP"]),
        )
        .unwrap();
        assert_eq!(
            add_icon("*", &mut c, ItemKind::Path, &w(&["(X/x.gif", ".x"])).unwrap_err(),
            "missing closing paren"
        );
        let icons = &c.autoindex.icons;
        assert_eq!(icons[0].data, "/icons/text.gif");
        assert_eq!(icons[0].apply_to, "text/*");
        assert_eq!(icons[1].apply_to, "*.c");
        assert_eq!(icons[1].apply_path, "/srv/*");
        assert_eq!(icons[2].apply_to, "*^^DIRECTORY^^");
        assert_eq!(
            (icons[3].data.as_str(), icons[3].apply_to.as_str()),
            ("/z.gif", "x-gzip")
        );
        assert_eq!(c.autoindex.alts[0].data, "TXT");
        assert_eq!(c.autoindex.alts[1].data, "Z");
    }

    #[test]
    fn descriptions() {
        let mut c = DirConf::default();
        add_desc(
            &mut c,
            &[
                "Text files".into(),
                "*.txt".into(),
                "README".into(),
                "sub/x".into(),
            ],
        );
        let d = &c.autoindex;
        assert_eq!(d.descriptions[0].pattern, "**.txt*");
        assert_eq!(d.descriptions[1].pattern, "README");
        assert!(!d.descriptions[1].wildcards);
        assert_eq!(d.descriptions[2].pattern, "*/sub/x*");
        assert_eq!(d.find_desc("/srv/a/notes.txt"), Some("Text files"));
        assert_eq!(d.find_desc("/srv/a/OLDREADME.md"), Some("Text files"));
        assert_eq!(d.find_desc("/srv/sub/xy"), Some("Text files"));
        assert_eq!(d.find_desc("/srv/other"), None);
    }

    #[test]
    fn default_order() {
        let mut c = DirConf::default();
        set_default_order(&mut c, &["Descending".into(), "date".into()]).unwrap();
        assert_eq!(
            (c.autoindex.default_direction, c.autoindex.default_key),
            (Some(b'D'), Some(b'M'))
        );
        assert!(set_default_order(&mut c, &["Up".into(), "Name".into()]).is_err());
        assert!(set_default_order(&mut c, &["Ascending".into(), "Owner".into()]).is_err());
    }
}
