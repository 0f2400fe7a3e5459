//! mod_mime: what a file is, from its name. `TypesConfig` (the system's
//! `mime.types`) plus `AddType`, `AddCharset`, `AddEncoding`,
//! `AddLanguage`, `AddHandler` and their `Remove*` counterparts.
//!
//! Apache looks at every dot-separated part of the basename after the
//! first dot: the last part with a type decides the type, the last with a
//! handler decides the handler, wherever it sits in the name.

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::fs::{FileInfo, Kind};
use crate::registry::{Args, Directive, Module, Run, ACCESS_CONF, OR_FILEINFO, RSRC_CONF};
use crate::request::{Ctx, Status};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// What one extension maps to. `None` fields are not set by this mapping.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExtInfo {
    pub forced_type: Option<String>,
    pub charset: Option<String>,
    pub encoding: Option<String>,
    pub language: Option<String>,
    pub handler: Option<String>,
    pub output_filters: Option<String>,
    pub input_filters: Option<String>,
}

/// Which attribute of an extension mapping a `Remove*` directive drops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attribute {
    Charset,
    Encoding,
    Language,
    Handler,
    OutputFilter,
    InputFilter,
}

#[derive(Clone, Debug, Default)]
pub struct MimeDir {
    pub extensions: Arc<HashMap<String, ExtInfo>>,
    pub removals: Vec<(String, Attribute)>,
    pub default_language: Option<String>,
    /// `MultiviewsMatch` bits ([`MULTIMATCH_ANY`] …); 0: not set here.
    pub multimatch: u8,
}

/// `MultiviewsMatch Any`: every extension counts for MultiViews.
pub const MULTIMATCH_ANY: u8 = 1;
/// `MultiviewsMatch NegotiatedOnly`: only type, charset, language, encoding.
pub const MULTIMATCH_NEGOTIATED: u8 = 2;
/// `MultiviewsMatch Handlers`: a handler's extension counts too.
pub const MULTIMATCH_HANDLERS: u8 = 4;
/// `MultiviewsMatch Filters`: a filter's extension counts too.
pub const MULTIMATCH_FILTERS: u8 = 8;

impl MimeDir {
    pub fn merge(base: &MimeDir, new: &MimeDir) -> MimeDir {
        let multimatch = if new.multimatch != 0 {
            new.multimatch
        } else {
            base.multimatch
        };
        if new.extensions.is_empty() && new.removals.is_empty() && new.default_language.is_none() {
            return MimeDir {
                multimatch,
                ..base.clone()
            };
        }
        // This context's own mappings overlay the inherited ones, then its
        // removals drop attributes from the result: a `RemoveHandler` also
        // undoes an `AddHandler` of the same context, wherever each stands in
        // the file (mod_mime's merge_mime_dir_configs). `RemoveType` is not
        // among them: it is a mapping of its own (see `remove_type`).
        let mut map = (*base.extensions).clone();
        for (ext, info) in new.extensions.iter() {
            let e = map.entry(ext.clone()).or_default();
            macro_rules! overlay {
                ($($f:ident),*) => { $( if info.$f.is_some() { e.$f = info.$f.clone(); } )* };
            }
            overlay!(
                forced_type,
                charset,
                encoding,
                language,
                handler,
                output_filters,
                input_filters
            );
        }
        for (ext, attr) in &new.removals {
            if let Some(e) = map.get_mut(ext) {
                match attr {
                    Attribute::Charset => e.charset = None,
                    Attribute::Encoding => e.encoding = None,
                    Attribute::Language => e.language = None,
                    Attribute::Handler => e.handler = None,
                    Attribute::OutputFilter => e.output_filters = None,
                    Attribute::InputFilter => e.input_filters = None,
                }
            }
        }
        MimeDir {
            extensions: Arc::new(map),
            removals: Vec::new(),
            default_language: new
                .default_language
                .clone()
                .or_else(|| base.default_language.clone()),
            multimatch,
        }
    }
}

/// The system's extension → type table (`TypesConfig`). Looked up for
/// every file served: a seeded foldhash map, much cheaper than SipHash on
/// these short keys, still unpredictable to clients.
#[derive(Clone, Debug, Default)]
pub struct TypesTable {
    pub types: foldhash::HashMap<String, String>,
}

impl TypesTable {
    /// Read a `mime.types` file: `type ext ext …` per line, `#` comments.
    pub fn load(path: &Path) -> Result<TypesTable, String> {
        let text = std::fs::read(path).map_err(|e| {
            format!(
                "could not open mime types config file {}: {e}",
                path.display()
            )
        })?;
        Ok(Self::parse(&String::from_utf8_lossy(&text)))
    }

    pub fn parse(text: &str) -> TypesTable {
        let mut types = foldhash::HashMap::default();
        for line in text.lines() {
            let line = line.trim();
            if line.starts_with('#') || line.is_empty() {
                continue;
            }
            let mut words = line.split_whitespace();
            let Some(ty) = words.next() else { continue };
            for ext in words {
                types.insert(ext.to_ascii_lowercase(), ty.to_string());
            }
        }
        TypesTable { types }
    }
}

/// What mod_mime decided for one file name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MimeInfo {
    pub content_type: Option<String>,
    pub charset: Option<String>,
    pub encodings: Vec<String>,
    pub languages: Vec<String>,
    pub handler: Option<String>,
}

/// The entry for an extension, matched case-insensitively (keys are
/// lower case); lowers a copy only for a name that has capitals.
pub fn ext_get<'m, V, S: std::hash::BuildHasher>(
    map: &'m HashMap<String, V, S>,
    ext: &str,
) -> Option<&'m V> {
    if ext.bytes().any(|c| c.is_ascii_uppercase()) {
        map.get(&ext.to_ascii_lowercase())
    } else {
        map.get(ext)
    }
}

/// mod_mime's type checker: a directory is `httpd/unix-directory`, a file
/// gets the type, charset, handler, encodings and languages its name's
/// extensions give ([`resolve`]). It always types the request.
pub fn type_checker(ctx: &mut Ctx<'_>) -> Result<bool, Status> {
    if let Some(FileInfo {
        kind: Kind::Dir, ..
    }) = ctx.finfo
    {
        ctx.content_type = Some(crate::http::DIR_MAGIC_TYPE.into());
        return Ok(true);
    }
    let basename = match memchr::memrchr(b'/', ctx.filename.as_bytes()) {
        Some(i) => &ctx.filename[i + 1..],
        None => &ctx.filename[..],
    };
    let info = resolve(basename, &ctx.conf.mime, &ctx.engine.modules.mime);
    ctx.content_type = info.content_type.map(|t| match info.charset {
        Some(cs) if !t.contains("charset=") => format!("{t}; charset={cs}"),
        _ => t,
    });
    // A handler chosen in translate_name (ScriptAlias) stays unless an
    // extension names one.
    if info.handler.is_some() {
        ctx.handler = info.handler;
    }
    ctx.encodings = info.encodings;
    ctx.languages = info.languages;
    // Without a type, mod_mime declines and mod_mime_magic may look.
    Ok(ctx.content_type.is_some())
}

/// The pieces of `basename` after each dot (the part before the first dot
/// is never an extension), found by a byte search: `.` is ASCII, so every
/// piece is whole characters.
fn extensions(basename: &str) -> impl Iterator<Item = &str> {
    let mut rest = memchr::memchr(b'.', basename.as_bytes()).map(|i| &basename[i + 1..]);
    std::iter::from_fn(move || {
        let piece = rest?;
        match memchr::memchr(b'.', piece.as_bytes()) {
            Some(i) => {
                rest = Some(&piece[i + 1..]);
                Some(&piece[..i])
            }
            None => {
                rest = None;
                Some(piece)
            }
        }
    })
}

/// mod_mime's `find_ct` for a basename.
pub fn resolve(basename: &str, conf: &MimeDir, table: &TypesTable) -> MimeInfo {
    let mut info = MimeInfo::default();
    let (mut content_type, mut charset, mut handler) = (None, None, None);
    for ext in extensions(basename) {
        if ext.is_empty() {
            continue;
        }
        let mapping = ext_get(&conf.extensions, ext);
        // A mapping's own type hides the system table's, even when it is
        // the empty type `RemoveType` leaves: that one names no type at all.
        let ty = match mapping.and_then(|m| m.forced_type.as_ref()) {
            Some(forced) => Some(forced).filter(|t| !t.is_empty()),
            None => ext_get(&table.types, ext),
        };
        if ty.is_some() {
            content_type = ty;
        }
        if let Some(m) = mapping {
            if let Some(l) = &m.language {
                info.languages.push(l.clone());
            }
            if m.charset.is_some() {
                charset = m.charset.as_ref();
            }
            if let Some(e) = &m.encoding {
                info.encodings.push(e.clone());
            }
            if m.handler.is_some() {
                handler = m.handler.as_ref();
            }
        }
    }
    // The last extension that names each wins: copied once, at the end.
    info.content_type = content_type.cloned();
    info.charset = charset.cloned();
    info.handler = handler.cloned();
    if info.languages.is_empty() {
        if let Some(l) = &conf.default_language {
            info.languages.push(l.clone());
        }
    }
    info
}

/// mod_mime's `ap-mime-exceptions-list` for a basename, which mod_negotiation
/// reads: the base name (leading dots belong to it) and then every part of
/// the name that no mapping recognised, in order; `None` when no part was
/// recognised at all. A type, charset, language or encoding recognises a
/// part; a handler or a filter only as `MultiviewsMatch` says, and with
/// `MultiviewsMatch Any` every part does.
pub fn exceptions(basename: &str, conf: &MimeDir, table: &TypesTable) -> Option<Vec<String>> {
    let lead = basename.len() - basename.trim_start_matches('.').len();
    let (base, rest) = match basename[lead..].find('.') {
        Some(i) => (&basename[..lead + i], &basename[lead + i + 1..]),
        None => (basename, ""),
    };
    let mut list = vec![base.to_string()];
    let mut found_any = false;
    for ext in rest.split('.').filter(|e| !e.is_empty()) {
        let mapping = ext_get(&conf.extensions, ext);
        let system_type =
            mapping.is_none_or(|m| m.forced_type.is_none()) && ext_get(&table.types, ext).is_some();
        let mm = conf.multimatch;
        let found = system_type
            || mm & MULTIMATCH_ANY != 0
            || mapping.is_some_and(|m| {
                m.forced_type.as_deref().is_some_and(|t| !t.is_empty())
                    || m.charset.is_some()
                    || m.language.is_some()
                    || m.encoding.is_some()
                    || (m.handler.is_some() && mm & MULTIMATCH_HANDLERS != 0)
                    || ((m.input_filters.is_some() || m.output_filters.is_some())
                        && mm & MULTIMATCH_FILTERS != 0)
            });
        if found {
            found_any = true;
        } else {
            list.push(ext.to_string());
        }
    }
    found_any.then_some(list)
}

fn ext_key(ext: &str) -> String {
    ext.trim_start_matches('.').to_ascii_lowercase()
}

fn add(conf: &mut DirConf, inv: &Invocation<'_>, set: fn(&mut ExtInfo, String)) {
    let value = inv.words[0].clone();
    let map = Arc::make_mut(&mut conf.mime.extensions);
    for ext in &inv.words[1..] {
        set(map.entry(ext_key(ext)).or_default(), value.clone());
    }
}

fn remove(conf: &mut DirConf, inv: &Invocation<'_>, attr: Attribute) {
    for ext in &inv.words {
        conf.mime.removals.push((ext_key(ext), attr));
    }
}

/// `RemoveType` is an `AddType` of the empty type, in directive order with
/// the context's other mappings: unlike the other `Remove*` directives it
/// must also hide the `TypesConfig` entry, which an absent mapping would
/// let through (mod_mime's `remove_extension_type`).
fn remove_type(conf: &mut DirConf, inv: &Invocation<'_>) {
    let map = Arc::make_mut(&mut conf.mime.extensions);
    for ext in &inv.words {
        map.entry(ext_key(ext)).or_default().forced_type = Some(String::new());
    }
}

/// `MultiviewsMatch`: which extensions MultiViews counts as recognised.
fn run_multiviews_match(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
) -> Result<(), String> {
    if w.ctx.within(crate::config::SectionKind::Location) {
        let section = match &w.ctx.parent {
            Some(p) if p.eq_ignore_ascii_case("LocationMatch") => "<LocationMatch>",
            _ => "<Location>",
        };
        return Err(format!(
            "MultiviewsMatch cannot occur within {section} section"
        ));
    }
    let m = &mut c.mime.multimatch;
    for word in &inv.words {
        let (bit, incompatible, message) = if word.eq_ignore_ascii_case("Any") {
            (
                MULTIMATCH_ANY,
                !MULTIMATCH_ANY,
                "Any is incompatible with NegotiatedOnly, Filters and Handlers",
            )
        } else if word.eq_ignore_ascii_case("NegotiatedOnly") {
            (
                MULTIMATCH_NEGOTIATED,
                !MULTIMATCH_NEGOTIATED,
                "NegotiatedOnly is incompatible with Any, Filters and Handlers",
            )
        } else if word.eq_ignore_ascii_case("Filters") {
            (
                MULTIMATCH_FILTERS,
                MULTIMATCH_NEGOTIATED | MULTIMATCH_ANY,
                "Filters is incompatible with Any and NegotiatedOnly",
            )
        } else if word.eq_ignore_ascii_case("Handlers") {
            (
                MULTIMATCH_HANDLERS,
                MULTIMATCH_NEGOTIATED | MULTIMATCH_ANY,
                "Handlers is incompatible with Any and NegotiatedOnly",
            )
        } else {
            return Err(format!("Unrecognized option '{word}'"));
        };
        if *m & incompatible != 0 {
            return Err(message.into());
        }
        *m |= bit;
    }
    Ok(())
}

fn run_types_config(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    let path = w.env.server_root.join(&inv.words[0]);
    w.server
        .as_deref_mut()
        .ok_or("TypesConfig not allowed here")?
        .global
        .types_config = Some(path);
    Ok(())
}

const FI: u32 = OR_FILEINFO | ACCESS_CONF | RSRC_CONF;

pub static DIRECTIVES: &[Directive] = &[
    Directive {
        name: "ModMimeUsePathInfo",
        args: Args::Flag,
        req_override: ACCESS_CONF,
        about: "Set to 'yes' to allow mod_mime to use path info for type checking",
        run: Run::DefaultOnly {
            default: "Off",
            missing: "the extensions of the path info in the type, handler and filter choice",
        },
    },
    Directive {
        name: "TypesConfig",
        args: Args::Take1,
        req_override: RSRC_CONF,
        about: "the MIME types config file",
        run: Run::Handler(run_types_config),
    },
    Directive {
        name: "AddType",
        args: Args::Iterate2,
        req_override: FI,
        about: "a mime type followed by one or more file extensions",
        run: Run::Handler(|_w, inv, c| {
            add(c, inv, |e, v| e.forced_type = Some(v.to_ascii_lowercase()));
            Ok(())
        }),
    },
    Directive {
        name: "AddCharset",
        args: Args::Iterate2,
        req_override: FI,
        about: "a charset (e.g., iso-2022-jp), followed by one or more file extensions",
        run: Run::Handler(|_w, inv, c| {
            add(c, inv, |e, v| e.charset = Some(v.to_ascii_lowercase()));
            Ok(())
        }),
    },
    Directive {
        name: "AddEncoding",
        args: Args::Iterate2,
        req_override: FI,
        about: "an encoding (e.g., gzip), followed by one or more file extensions",
        run: Run::Handler(|_w, inv, c| {
            add(c, inv, |e, v| e.encoding = Some(v.to_ascii_lowercase()));
            Ok(())
        }),
    },
    Directive {
        name: "AddLanguage",
        args: Args::Iterate2,
        req_override: FI,
        about: "a language (e.g., fr), followed by one or more file extensions",
        run: Run::Handler(|_w, inv, c| {
            add(c, inv, |e, v| e.language = Some(v.to_ascii_lowercase()));
            Ok(())
        }),
    },
    Directive {
        name: "AddHandler",
        args: Args::Iterate2,
        req_override: FI,
        about: "a handler name followed by one or more file extensions",
        run: Run::Handler(|_w, inv, c| {
            add(c, inv, |e, v| e.handler = Some(v.to_ascii_lowercase()));
            Ok(())
        }),
    },
    Directive {
        name: "AddOutputFilter",
        args: Args::Iterate2,
        req_override: FI,
        about: "output filter name followed by one or more file extensions",
        run: Run::Handler(|_w, inv, c| {
            add(c, inv, |e, v| e.output_filters = Some(v));
            Ok(())
        }),
    },
    Directive {
        name: "AddInputFilter",
        args: Args::Iterate2,
        req_override: FI,
        about: "input filter name followed by one or more file extensions",
        run: Run::Handler(|_w, inv, c| {
            add(c, inv, |e, v| e.input_filters = Some(v));
            Ok(())
        }),
    },
    Directive {
        name: "RemoveType",
        args: Args::Iterate,
        req_override: FI,
        about: "one or more file extensions",
        run: Run::Handler(|_w, inv, c| {
            remove_type(c, inv);
            Ok(())
        }),
    },
    Directive {
        name: "RemoveCharset",
        args: Args::Iterate,
        req_override: FI,
        about: "one or more file extensions",
        run: Run::Handler(|_w, inv, c| {
            remove(c, inv, Attribute::Charset);
            Ok(())
        }),
    },
    Directive {
        name: "RemoveEncoding",
        args: Args::Iterate,
        req_override: FI,
        about: "one or more file extensions",
        run: Run::Handler(|_w, inv, c| {
            remove(c, inv, Attribute::Encoding);
            Ok(())
        }),
    },
    Directive {
        name: "RemoveLanguage",
        args: Args::Iterate,
        req_override: FI,
        about: "one or more file extensions",
        run: Run::Handler(|_w, inv, c| {
            remove(c, inv, Attribute::Language);
            Ok(())
        }),
    },
    Directive {
        name: "RemoveHandler",
        args: Args::Iterate,
        req_override: FI,
        about: "one or more file extensions",
        run: Run::Handler(|_w, inv, c| {
            remove(c, inv, Attribute::Handler);
            Ok(())
        }),
    },
    Directive {
        name: "RemoveOutputFilter",
        args: Args::Iterate,
        req_override: FI,
        about: "one or more file extensions",
        run: Run::Handler(|_w, inv, c| {
            remove(c, inv, Attribute::OutputFilter);
            Ok(())
        }),
    },
    Directive {
        name: "RemoveInputFilter",
        args: Args::Iterate,
        req_override: FI,
        about: "one or more file extensions",
        run: Run::Handler(|_w, inv, c| {
            remove(c, inv, Attribute::InputFilter);
            Ok(())
        }),
    },
    Directive {
        name: "MultiviewsMatch",
        args: Args::Iterate,
        req_override: OR_FILEINFO,
        about: "NegotiatedOnly (default), Handlers and/or Filters, or Any",
        run: Run::Handler(run_multiviews_match),
    },
    Directive {
        name: "DefaultLanguage",
        args: Args::Take1,
        req_override: FI,
        about: "language to use for documents with no other language file extension",
        run: Run::Handler(|_w, inv, c| {
            c.mime.default_language = Some(inv.words[0].to_ascii_lowercase());
            Ok(())
        }),
    },
];

pub static MODULE: Module = Module {
    source: "mod_mime.c",
    identifier: "mime_module",
    builtin: false,
    directives: DIRECTIVES,
};

/// mod_mime's start: the `TypesConfig` table (`conf/mime.types` under the
/// server root unless set).
pub(crate) fn start(
    loaded: &crate::engine::Loaded,
    _log: &Arc<dyn crate::http::Log>,
) -> Result<TypesTable, String> {
    // mod_mime reads the file in its post_config hook: without the module,
    // nothing is read (and nothing is typed by extension).
    if !loaded.env.is_loaded("mime_module") {
        return Ok(TypesTable::parse(""));
    }
    let path = loaded
        .build
        .global
        .types_config
        .clone()
        .unwrap_or_else(|| loaded.env.server_root.join("conf/mime.types"));
    TypesTable::load(&path)
}

#[cfg(test)]
mod tests {
    #[test]
    fn extensions_are_the_pieces_after_each_dot() {
        for name in [
            "",
            "a",
            "a.b",
            ".htaccess",
            "a..b",
            "a.b.",
            "x.tar.gz",
            "é.ü.€",
            "..",
            "a.b.c.d",
        ] {
            let split: Vec<&str> = name.split('.').skip(1).collect();
            assert_eq!(extensions(name).collect::<Vec<_>>(), split, "{name:?}");
        }
    }

    use super::*;

    #[test]
    fn last_extension_with_a_type_wins_and_handlers_anywhere() {
        let table = TypesTable::parse("text/plain txt\ntext/html html htm\n# c\n");
        let mut conf = MimeDir::default();
        Arc::make_mut(&mut conf.extensions).insert(
            "cgi".into(),
            ExtInfo {
                handler: Some("cgi-script".into()),
                ..Default::default()
            },
        );
        let i = resolve("t.cgi.txt", &conf, &table);
        assert_eq!(i.content_type.as_deref(), Some("text/plain"));
        assert_eq!(i.handler.as_deref(), Some("cgi-script"));
        assert_eq!(resolve(".htaccess", &conf, &table).content_type, None);
        assert_eq!(
            resolve("a.TXT", &conf, &table).content_type.as_deref(),
            Some("text/plain")
        );
    }

    #[test]
    fn remove_type_hides_the_system_table_and_a_later_add_type_wins() {
        let table = TypesTable::parse("text/x-perl pl\ntext/plain txt\n");
        let mut parent = MimeDir::default();
        Arc::make_mut(&mut parent.extensions).insert(
            "pl".into(),
            ExtInfo {
                forced_type: Some("text/x-script".into()),
                handler: Some("cgi-script".into()),
                ..Default::default()
            },
        );
        let mut child = MimeDir::default();
        Arc::make_mut(&mut child.extensions).insert(
            "pl".into(),
            ExtInfo {
                forced_type: Some(String::new()),
                ..Default::default()
            },
        );
        let merged = MimeDir::merge(&parent, &child);
        let i = resolve("a.pl", &merged, &table);
        assert_eq!(i.content_type, None);
        assert_eq!(i.handler.as_deref(), Some("cgi-script"));
        // An earlier extension's type stays when a later one is removed.
        let i = resolve("a.txt.pl", &merged, &table);
        assert_eq!(i.content_type.as_deref(), Some("text/plain"));
        assert_eq!(
            resolve("a.pl", &MimeDir::default(), &table)
                .content_type
                .as_deref(),
            Some("text/x-perl")
        );
    }

    #[test]
    fn exceptions_list_names_what_nothing_recognised() {
        let table = TypesTable::parse("text/html html\n");
        let mut conf = MimeDir::default();
        Arc::make_mut(&mut conf.extensions).insert(
            "en".into(),
            ExtInfo {
                language: Some("en".into()),
                ..Default::default()
            },
        );
        let ex = |n: &str| exceptions(n, &conf, &table);
        assert_eq!(ex("index.html.en"), Some(vec!["index".to_string()]));
        assert_eq!(
            ex("index.html.foo"),
            Some(vec!["index".into(), "foo".into()])
        );
        assert_eq!(ex("readme.bak"), None);
        assert_eq!(ex(".html"), None);
        assert_eq!(ex("..a.html"), Some(vec!["..a".to_string()]));
    }

    #[test]
    fn remove_also_undoes_an_add_of_the_same_context() {
        let mut conf = MimeDir::default();
        Arc::make_mut(&mut conf.extensions).insert(
            "txt".into(),
            ExtInfo {
                charset: Some("utf-8".into()),
                language: Some("fr".into()),
                ..Default::default()
            },
        );
        conf.removals.push(("txt".into(), Attribute::Charset));
        let merged = MimeDir::merge(&MimeDir::default(), &conf);
        let e = &merged.extensions["txt"];
        assert_eq!(e.charset, None);
        assert_eq!(e.language.as_deref(), Some("fr"));
        assert!(merged.removals.is_empty());
    }

    #[test]
    fn remove_drops_only_the_inherited_attribute() {
        let mut parent = MimeDir::default();
        Arc::make_mut(&mut parent.extensions).insert(
            "cgi".into(),
            ExtInfo {
                handler: Some("cgi-script".into()),
                charset: Some("utf-8".into()),
                ..Default::default()
            },
        );
        let child = MimeDir {
            removals: vec![("cgi".into(), Attribute::Handler)],
            ..Default::default()
        };
        let merged = MimeDir::merge(&parent, &child);
        let e = &merged.extensions["cgi"];
        assert_eq!(e.handler, None);
        assert_eq!(e.charset.as_deref(), Some("utf-8"));
    }
}
