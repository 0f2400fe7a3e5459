//! mod_include as far as htaccel goes: where a configuration that loads
//! the module attaches its `INCLUDES` filter (`AddOutputFilter INCLUDES
//! .shtml`, Red Hat's stock line; `SetOutputFilter INCLUDES`; the
//! `server-parsed` handler, which becomes the default handler with the
//! filter), htaccel does what Apache does when `Options` allows no
//! includes there, and refuses the file where it does.
//!
//! Without `Options +Includes` (or `IncludesNoExec`), Apache's filter
//! removes itself as its first data passes, with warning AH01374, and the
//! file goes out as it is. Its set-up has run by then, so the answer has
//! no `ETag` and is never a 304 (`no-etag`, `no_local_copy`: the filter
//! could have included anything); `Last-Modified` and the length stay.
//! `XBitHack` and `SSIETag`, which would change that, are mod_include's
//! directives and unknown here.
//!
//! With includes allowed Apache parses the server-side includes, in a
//! file or in a script's output. htaccel does not: it answers 403 with an
//! error-log line (for a script, before its back-end is asked) rather than
//! send the directives unparsed (an `exec` element names a command, an
//! `include` leaves a hole in the page), as for the files of other
//! modules it does not have ([`crate::modules::unsupported::RUNNERS`]).

use crate::modules::core::options::OPT_INCLUDES;
use crate::request::{Ctx, Status};

/// The handler name `AddHandler server-parsed .shtml` gives.
const HANDLER: &str = "server-parsed";

/// Whether the configuration loads mod_include.
fn loaded(ctx: &Ctx<'_>) -> bool {
    ctx.site.env.read.runners.has("include_module")
}

/// Whether `name` is mod_include's filter and the configuration loads it.
pub fn is_filter(ctx: &Ctx<'_>, name: &str) -> bool {
    name.eq_ignore_ascii_case("INCLUDES") && loaded(ctx)
}

/// `fixups`: the `server-parsed` handler is the default handler with the
/// filter (a file without a type becomes `text/html`). mod_include's
/// `XBitHack` is not accepted, so the execute bit attaches nothing.
pub fn fixup(ctx: &mut Ctx<'_>) -> Result<(), Status> {
    if ctx.handler.as_deref() == Some(HANDLER) && loaded(ctx) {
        if ctx.content_type.as_deref().is_none_or(str::is_empty) {
            ctx.content_type = Some("text/html".into());
        }
        ctx.handler = Some("default-handler".into());
        ctx.includes_filter = true;
    }
    Ok(())
}

/// Whether the filter is attached where includes are allowed: Apache
/// would parse what the handler gives.
fn would_parse(ctx: &Ctx<'_>) -> bool {
    ctx.includes_filter && ctx.conf.core.opts() & OPT_INCLUDES != 0
}

fn refuse(ctx: &mut Ctx<'_>, what: &str) {
    ctx.reason = Some(crate::request::Reason::new(
        "error",
        "include",
        format!(
            "{}: not sent: Options +Includes asks mod_include (include_module) to parse {what}, and htaccel does not parse server-side includes",
            ctx.filename
        ),
    ));
}

/// The default handler's refusal of a file the filter would parse.
pub fn refuses_as_file(ctx: &mut Ctx<'_>) -> bool {
    if !would_parse(ctx) || ctx.finfo.map(|f| f.kind) != Some(crate::fs::Kind::File) {
        return false;
    }
    refuse(ctx, "it");
    true
}

/// A back-end's answer (a PHP or CGI script's output) the filter would
/// parse is refused too, before the back-end is asked: 403.
pub fn refuses_backend(ctx: &mut Ctx<'_>) -> Option<Status> {
    // The filters are looked at only where the module is loaded and
    // includes are allowed: most back-end requests stop at the first test.
    if !loaded(ctx) || ctx.conf.core.opts() & OPT_INCLUDES == 0 {
        return None;
    }
    ctx.includes_filter |= crate::modules::filter::includes_attached(ctx);
    if !would_parse(ctx) {
        return None;
    }
    refuse(ctx, "the script's output");
    Some(403)
}

/// What the default handler does for a file the filter is attached to
/// without includes allowed: no `ETag`, no 304.
pub fn passes_unparsed(ctx: &Ctx<'_>) -> bool {
    ctx.includes_filter
}

/// The warning Apache's filter writes as it removes itself, once the
/// default handler sent the file.
pub fn note_removed(ctx: &Ctx<'_>) {
    ctx.log_error(
        "warn",
        "include",
        &format!(
            "AH01374: mod_include: Options +Includes (or IncludesNoExec) wasn't set, INCLUDES filter removed: {}",
            ctx.uri
        ),
    );
}
