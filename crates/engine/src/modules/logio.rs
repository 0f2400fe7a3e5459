//! mod_logio: the byte counts `%I`, `%O`, `%S` of the access log (counted
//! by the connection layer, rendered by [`crate::log_format`]) and
//! `LogIOTrackTTFB`, which makes `%^FB` the time from the request's start
//! to the first output of its answer.
//!
//! Debian compiles the module into its Apache, so `<IfModule logio_module>`
//! holds there without a `LoadModule`; Red Hat's layout loads it from a
//! file, which htaccel accepts as well ([`MODULE`] is built in).
//!
//! Apache takes the time when the handler's first output passes a
//! resource-level filter. htaccel takes it when the answer's head is ready
//! to be written: for a file at once, for a back-end when its head came.

use crate::registry::{Args, Directive, Module, Run, OR_ALL};
use crate::request::Ctx;

/// The per-directory slot: `LogIOTrackTTFB`, once set.
#[derive(Clone, Debug, Default)]
pub struct LogIoDir {
    pub track_ttfb: Option<bool>,
}

impl LogIoDir {
    pub fn merge(base: &LogIoDir, new: &LogIoDir) -> LogIoDir {
        LogIoDir {
            track_ttfb: new.track_ttfb.or(base.track_ttfb),
        }
    }
}

pub static DIRECTIVES: &[Directive] = &[Directive {
    name: "LogIOTrackTTFB",
    args: Args::Flag,
    req_override: OR_ALL,
    about: "Set to 'ON' to enable tracking time to first byte",
    run: Run::Handler(|_w, inv, c| {
        c.logio.track_ttfb = Some(crate::registry::flag(&inv.words));
        Ok(())
    }),
}];

pub static MODULE: Module = Module {
    source: "mod_logio.c",
    identifier: "logio_module",
    builtin: true,
    directives: DIRECTIVES,
};

/// Whether the request's directory asks for its time to first byte.
pub fn tracks_ttfb(ctx: &Ctx<'_>) -> bool {
    ctx.conf.logio.track_ttfb == Some(true)
}
