//! mod_dir: what a request for a directory gets — the trailing-slash
//! redirect (`DirectorySlash`), the first existing `DirectoryIndex`
//! candidate, or the `FallbackResource` for paths that do not exist.
//!
//! The fixup runs index candidates as sub-requests exactly as Apache does
//! (`Ctx::sub_request`), so a candidate denied by access control answers
//! 403 rather than being skipped, and becomes the one it finds
//! (`Ctx::fast_redirect`).

use crate::fs::Kind;
use crate::registry::{Args, Directive, Module, Run, ACCESS_CONF, OR_INDEXES, RSRC_CONF};
use crate::request::{Ctx, Status};

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
        run: Run::Handler(|_w, inv, c| {
            c.dir.fallback = Some(inv.words[0].clone());
            Ok(())
        }),
    },
    Directive {
        name: "DirectoryIndex",
        args: Args::Argv,
        req_override: PERMS,
        about: "a list of file names",
        run: Run::Handler(|_w, inv, c| {
            let list = c.dir.index_names.get_or_insert_with(Vec::new);
            if inv.words.len() == 1 && inv.words[0].eq_ignore_ascii_case("disabled") {
                list.clear();
            } else {
                list.extend(inv.words.iter().cloned());
            }
            Ok(())
        }),
    },
    Directive {
        name: "DirectorySlash",
        // A flag in 2.4 (only the first word counts); `NotFound` came later.
        args: Args::Flag,
        req_override: PERMS,
        about: "On or Off",
        run: Run::Handler(|_w, inv, c| {
            c.dir.slash = Some(if crate::registry::flag(&inv.words) {
                Slash::On
            } else {
                Slash::Off
            });
            Ok(())
        }),
    },
    Directive {
        name: "DirectoryCheckHandler",
        args: Args::Flag,
        req_override: PERMS,
        about: "On or Off",
        run: Run::Handler(|_w, inv, c| {
            c.dir.check_handler = Some(crate::registry::flag(&inv.words));
            Ok(())
        }),
    },
    Directive {
        name: "DirectoryIndexRedirect",
        args: Args::Take1,
        req_override: PERMS,
        about: "On, Off, or a 3xx status code.",
        run: Run::Handler(|_w, inv, c| {
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
        }),
    },
];

pub static MODULE: Module = Module {
    source: "mod_dir.c",
    identifier: "dir_module",
    builtin: false,
    directives: DIRECTIVES,
};

/// mod_dir's fixup (in [`crate::modules::hooks::FIXUPS`]): a directory's slash and index, or the fallback
/// resource of a request that names nothing.
pub(crate) fn fixup(ctx: &mut Ctx<'_>) -> Result<(), Status> {
    if !ctx.site.dir_loaded {
        return Ok(());
    }
    match ctx.finfo.map(|f| f.kind) {
        Some(Kind::Dir) => directory(ctx),
        None if ctx.handler.is_none() => fallback(ctx),
        _ => Ok(()),
    }
}

/// mod_dir for a directory: 301 to add the slash, or the first index
/// candidate that a sub-request finds as a regular file.
fn directory(ctx: &mut Ctx<'_>) -> Result<(), Status> {
    if !ctx.path_info.is_empty() {
        return Ok(());
    }
    if !ctx.uri.ends_with('/') {
        match ctx.conf.dir.slash.unwrap_or(Slash::On) {
            Slash::Off => return Ok(()),
            Slash::On => {}
        }
        // Clients that follow no redirect of another method than GET
        // (Debian's setenvif.conf names WebDAV clients) get none.
        if !crate::http::conditional::is_get(&ctx.method) && ctx.env.contains("redirect-carefully")
        {
            return Ok(());
        }
        let mut target = crate::uri::escape_path(&crate::path_text::bytes(&ctx.uri)).into_owned();
        target.push('/');
        if let Some(q) = &ctx.args {
            target.push('?');
            target.push_str(q);
        }
        let location = ctx.construct_url(&target);
        ctx.headers_out.push(("Location".into(), location));
        return Err(301);
    }
    // A rewrite scheduled an internal redirect: mod_dir steps aside.
    if ctx.modules.rewrite.redirect.is_some() {
        return Ok(());
    }
    // Apache 2.4 looks for the index whatever the method (trunk skips
    // all but GET and POST); an OPTIONS answer shows the index's type.
    let names = ctx.conf.dir.index_names();
    let count = names.len();
    let mut error = None;
    for name in names {
        let target = match &ctx.args {
            Some(q) => format!("{name}?{q}"),
            None => name.clone(),
        };
        let (sub, r) = ctx.sub_request(&target);
        match r {
            Ok(()) if sub.finfo.map(|f| f.kind) == Some(Kind::File) => {
                if let Some(code) = ctx.conf.dir.index_redirect.filter(|c| *c != 0) {
                    let location = ctx.construct_url(&sub.uri);
                    ctx.headers_out.push(("Location".into(), location));
                    return Err(code);
                }
                ctx.fast_redirect(sub);
                return Ok(());
            }
            Ok(()) => {}
            Err(s) if (300..400).contains(&s) || ((s == 401 || s == 406) && count == 1) => {
                // mod_negotiation leaves its list on the main request.
                if sub.variant_list.is_some() {
                    ctx.variant_list = sub.variant_list;
                }
                ctx.headers_out.extend(sub.headers_out);
                // mod_dir overlays the sub-request's error headers too
                // (a 401's challenge).
                ctx.err_headers_out.extend(sub.err_headers_out);
                return Err(s);
            }
            Err(404) => {}
            Err(s) => error = Some(s),
        }
    }
    match error {
        Some(s) => Err(s),
        None => Ok(()),
    }
}

/// `FallbackResource` for a path that does not exist.
fn fallback(ctx: &mut Ctx<'_>) -> Result<(), Status> {
    let Some(fallback) = ctx.conf.dir.fallback().map(str::to_string) else {
        return Ok(());
    };
    if ctx.finfo.is_some() {
        return Ok(());
    }
    let target = match &ctx.args {
        Some(q) => format!("{fallback}?{q}"),
        None => fallback,
    };
    let (sub, r) = ctx.sub_request(&target);
    match r {
        Ok(()) if sub.finfo.map(|f| f.kind) == Some(Kind::File) => {
            ctx.fast_redirect(sub);
            Ok(())
        }
        Err(s) if (300..400).contains(&s) => {
            ctx.headers_out.extend(sub.headers_out);
            Err(s)
        }
        Err(s) if s != 404 => Err(s),
        _ => Ok(()),
    }
}
