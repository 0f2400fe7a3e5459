//! mod_negotiation: content negotiation. With `Options MultiViews`, a
//! request for a file that does not exist is answered by the best of the
//! files named `NAME.*` beside it, chosen from the client's `Accept`,
//! `Accept-Language`, `Accept-Charset` and `Accept-Encoding` with
//! Apache's own algorithm (`multiviews.rs` finds the variants, `select.rs`
//! chooses, `accept.rs` reads the headers). `LanguagePriority` and
//! `ForceLanguagePriority` break ties and rescue requests no language
//! satisfies.
//!
//! Type maps (`.var` files: the `type-map` handler, or a file of type
//! `application/x-type-map`) list the variants themselves (`typemap.rs`),
//! whether asked for directly or found among MultiViews' candidates.
//! `CacheNegotiatedDocs` decides whether a type map's answer to an
//! HTTP/1.0 client expires at once; a MultiViews answer never does, since
//! Apache's fast redirect to the chosen variant undoes the mark.

pub mod accept;
mod multiviews;
pub mod select;
mod typemap;

use crate::registry::{Args, Directive, Module, Run, OR_FILEINFO, RSRC_CONF};
use crate::request::{Ctx, Status};
use std::sync::Arc;

pub use multiviews::handle_multi;

/// The type of a type map file (`application/x-type-map`).
pub const MAP_FILE_MAGIC_TYPE: &str = "application/x-type-map";

/// `ForceLanguagePriority None`: a 406 when no language is acceptable.
pub const FLP_NONE: u8 = 1;
/// `Prefer`: `LanguagePriority` breaks ties between acceptable languages.
pub const FLP_PREFER: u8 = 2;
/// `Fallback`: `LanguagePriority` chooses when no language is acceptable.
pub const FLP_FALLBACK: u8 = 4;

/// The module's per-directory slot.
#[derive(Clone, Debug, Default)]
pub struct NegotiationDir {
    /// `ForceLanguagePriority` bits; 0: not set here (Prefer applies).
    pub force_priority: u8,
    /// `LanguagePriority`, as written.
    pub language_priority: Option<Arc<Vec<String>>>,
    /// `CacheNegotiatedDocs` (server-wide).
    pub cache_negotiated: Option<bool>,
}

impl NegotiationDir {
    /// The deeper context's setting wins, each field on its own.
    pub fn merge(base: &NegotiationDir, add: &NegotiationDir) -> NegotiationDir {
        NegotiationDir {
            force_priority: if add.force_priority != 0 {
                add.force_priority
            } else {
                base.force_priority
            },
            language_priority: add
                .language_priority
                .clone()
                .or_else(|| base.language_priority.clone()),
            cache_negotiated: add.cache_negotiated.or(base.cache_negotiated),
        }
    }
}

/// Whether the configuration loads the module (MultiViews does nothing
/// without it, as in Apache).
pub fn loaded(ctx: &Ctx<'_>) -> bool {
    ctx.site.env.is_loaded("negotiation_module")
}

fn set_force_priority(words: &[String], conf: &mut NegotiationDir) -> Result<(), String> {
    for w in words {
        let n = &mut conf.force_priority;
        if w.eq_ignore_ascii_case("None") {
            if *n & !FLP_NONE != 0 {
                return Err("Cannot combine ForceLanguagePriority options with None".into());
            }
            *n = FLP_NONE;
        } else if w.eq_ignore_ascii_case("Prefer") {
            if *n & FLP_NONE != 0 {
                return Err("Cannot combine ForceLanguagePriority options None and Prefer".into());
            }
            *n |= FLP_PREFER;
        } else if w.eq_ignore_ascii_case("Fallback") {
            if *n & FLP_NONE != 0 {
                return Err(
                    "Cannot combine ForceLanguagePriority options None and Fallback".into(),
                );
            }
            *n |= FLP_FALLBACK;
        } else {
            return Err(format!("Invalid ForceLanguagePriority option {w}"));
        }
    }
    Ok(())
}

pub static DIRECTIVES: &[Directive] = &[
    Directive {
        name: "CacheNegotiatedDocs",
        args: Args::Flag,
        req_override: RSRC_CONF,
        about: "Either 'on' or 'off' (default)",
        run: Run::Handler(|_w, inv, c| {
            c.negotiation.cache_negotiated = Some(crate::registry::flag(&inv.words));
            Ok(())
        }),
    },
    Directive {
        name: "LanguagePriority",
        args: Args::Iterate,
        req_override: OR_FILEINFO,
        about: "space-delimited list of MIME language abbreviations",
        run: Run::Handler(|_w, inv, c| {
            let list = c
                .negotiation
                .language_priority
                .get_or_insert_with(|| Arc::new(Vec::new()));
            Arc::make_mut(list).extend(inv.words.iter().cloned());
            Ok(())
        }),
    },
    Directive {
        name: "ForceLanguagePriority",
        args: Args::Iterate,
        req_override: OR_FILEINFO,
        about: "Force LanguagePriority elections, either None, or Fallback and/or Prefer",
        run: Run::Handler(|_w, inv, c| set_force_priority(&inv.words, &mut c.negotiation)),
    },
];

pub static MODULE: Module = Module {
    source: "mod_negotiation.c",
    identifier: "negotiation_module",
    builtin: false,
    directives: DIRECTIVES,
};

/// `fix_encoding` (fixups): the answer's `Content-Encoding` is spelt as the
/// client's `Accept-Encoding` spells it (`x-gzip` or `gzip`).
pub fn fix_encoding(ctx: &mut Ctx<'_>) -> Result<(), Status> {
    if ctx.encodings.is_empty() || !loaded(ctx) {
        return Ok(());
    }
    let joined = ctx.encodings.join(", ");
    let enc = joined.strip_prefix("x-").unwrap_or(&joined);
    let Some(list) = accept::parse_line(ctx.headers_in.get("Accept-Encoding").map(|v| &v[..]))
    else {
        return Ok(());
    };
    let mut x_enc = None;
    for rec in &list {
        if rec.name == enc {
            ctx.encodings = vec![rec.name.clone()];
            return Ok(());
        }
        if rec.name.strip_prefix("x-") == Some(enc) {
            x_enc = Some(rec.name.clone());
        }
    }
    if let Some(x) = x_enc {
        ctx.encodings = vec![x];
    }
    Ok(())
}

/// Whether the handler `name` is the type-map handler's.
pub fn claims(name: &str) -> bool {
    name == "type-map" || name == MAP_FILE_MAGIC_TYPE
}

/// The `type-map` handler (see `typemap.rs`); `None` when the request is
/// not for a type map.
pub fn type_map_handler(ctx: &mut Ctx<'_>) -> Option<Result<crate::http::Response, Status>> {
    typemap::handle(ctx)
}
