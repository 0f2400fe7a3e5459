//! mod_dir: what a request for a directory gets — the trailing-slash
//! redirect (`DirectorySlash`), the first existing `DirectoryIndex`
//! candidate, or the `FallbackResource` for paths that do not exist.
//!
//! The request-time part lives in `crate::request::dir_fixup`, which runs
//! index candidates as sub-requests exactly as Apache does, so a candidate
//! denied by access control answers 403 rather than being skipped.

use crate::registry::{Args, Directive, Module, ACCESS_CONF, OR_INDEXES, RSRC_CONF};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slash {
    On,
    Off,
}

#[derive(Clone, Debug, Default)]
pub struct DirDir {
    /// `None`: not set here (Apache's default is `index.html`);
    /// `Some(empty)`: `DirectoryIndex disabled`.
    pub index_names: Option<Vec<String>>,
    pub slash: Option<Slash>,
    pub check_handler: Option<bool>,
    /// `DirectoryIndexRedirect`: `Some(0)` is Off.
    pub index_redirect: Option<u16>,
    /// `FallbackResource`; `disabled` is kept as written and means none.
    pub fallback: Option<String>,
}

impl DirDir {
    pub fn merge(base: &DirDir, add: &DirDir) -> DirDir {
        DirDir {
            index_names: add.index_names.clone().or_else(|| base.index_names.clone()),
            slash: add.slash.or(base.slash),
            check_handler: add.check_handler.or(base.check_handler),
            index_redirect: add.index_redirect.or(base.index_redirect),
            fallback: add.fallback.clone().or_else(|| base.fallback.clone()),
        }
    }

    /// The candidates tried for a directory request.
    pub fn index_names(&self) -> Vec<String> {
        self.index_names
            .clone()
            .unwrap_or_else(|| vec!["index.html".to_string()])
    }

    /// The fallback resource in force, if any.
    pub fn fallback(&self) -> Option<&str> {
        self.fallback
            .as_deref()
            .filter(|f| !f.eq_ignore_ascii_case("disabled"))
    }
}

const PERMS: u32 = OR_INDEXES | ACCESS_CONF | RSRC_CONF;

pub static DIRECTIVES: &[Directive] = &[
    Directive {
        name: "FallbackResource",
        args: Args::Take1,
        req_override: PERMS,
        about: "Set a default handler",
        run: |_w, inv, c| {
            c.dir.fallback = Some(inv.words[0].clone());
            Ok(())
        },
    },
    Directive {
        name: "DirectoryIndex",
        args: Args::Argv,
        req_override: PERMS,
        about: "a list of file names",
        run: |_w, inv, c| {
            let list = c.dir.index_names.get_or_insert_with(Vec::new);
            if inv.words.len() == 1 && inv.words[0].eq_ignore_ascii_case("disabled") {
                list.clear();
            } else {
                list.extend(inv.words.iter().cloned());
            }
            Ok(())
        },
    },
    Directive {
        name: "DirectorySlash",
        // A flag in 2.4 (only the first word counts); `NotFound` came later.
        args: Args::Flag,
        req_override: PERMS,
        about: "On or Off",
        run: |_w, inv, c| {
            c.dir.slash = Some(if crate::registry::flag(&inv.words) {
                Slash::On
            } else {
                Slash::Off
            });
            Ok(())
        },
    },
    Directive {
        name: "DirectoryCheckHandler",
        args: Args::Flag,
        req_override: PERMS,
        about: "On or Off",
        run: |_w, inv, c| {
            c.dir.check_handler = Some(crate::registry::flag(&inv.words));
            Ok(())
        },
    },
    Directive {
        name: "DirectoryIndexRedirect",
        args: Args::Take1,
        req_override: PERMS,
        about: "On, Off, or a 3xx status code.",
        run: |_w, inv, c| {
            let a = inv.words[0].to_ascii_lowercase();
            c.dir.index_redirect = Some(match a.as_str() {
                "on" | "temp" => 302,
                "off" => 0,
                "permanent" => 301,
                "seeother" => 303,
                _ => match a.parse::<u16>() {
                    Ok(s) if (300..400).contains(&s) => s,
                    Ok(_) => {
                        return Err(
                            "DirectoryIndexRedirect only accepts values between 300 and 399".into(),
                        )
                    }
                    Err(_) => {
                        return Err(
                            "DirectoryIndexRedirect ON|OFF|permanent|temp|seeother|3xx".into()
                        )
                    }
                },
            });
            Ok(())
        },
    },
];

pub static MODULE: Module = Module {
    source: "mod_dir.c",
    identifier: "dir_module",
    builtin: false,
    directives: DIRECTIVES,
};
