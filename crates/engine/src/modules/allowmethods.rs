//! mod_allowmethods: `AllowMethods GET POST OPTIONS` in a `<Directory>` or
//! `<Location>` answers every other method with 405, before any other
//! access check (its hook runs first). Hardening guides put it in server
//! configurations; without it those configurations did not start.
//!
//! As the module: methods go by Apache's method numbers (`HEAD` is `GET`,
//! every unregistered method shares one number that no `AllowMethods`
//! line can name), `reset` turns the check off again below, and the
//! innermost setting wins whole. `TRACE` is answered before the access
//! phase (`TraceEnable` decides it), so it is never refused here. The
//! 405's `Allow` names what the handler would allow, and no handler ran:
//! `TRACE` alone when it is enabled, as Apache's `make_allow` gives it.
//!
//! Where `Satisfy Any` lets a user in whom the access checks refuse, the
//! refusal of a method counts as one of those checks
//! ([`crate::modules::authn_core`] asks [`denies`]).

use crate::http::method;
use crate::modules::access_compat::{self, Satisfy};
use crate::registry::{Args, Directive, Module, Run, ACCESS_CONF};
use crate::request::Ctx;

/// The per-directory slot: the allowed methods' mask, once set (`reset`
/// sets it to none, which checks nothing).
#[derive(Clone, Debug, Default)]
pub struct AllowMethodsDir {
    pub allowed: Option<u64>,
}

impl AllowMethodsDir {
    pub fn merge(base: &AllowMethodsDir, new: &AllowMethodsDir) -> AllowMethodsDir {
        AllowMethodsDir {
            allowed: new.allowed.or(base.allowed),
        }
    }
}

pub static DIRECTIVES: &[Directive] = &[Directive {
    name: "AllowMethods",
    args: Args::Argv,
    req_override: ACCESS_CONF,
    about: "only allow specific methods",
    run: Run::Handler(|_w, inv, c| {
        // Lines in one section add up; `reset` starts again from none.
        let more = mask(&inv.words)?;
        let so_far = c.allowmethods.allowed.unwrap_or(0);
        c.allowmethods.allowed = Some(if more == 0 { 0 } else { so_far | more });
        Ok(())
    }),
}];

pub static MODULE: Module = Module {
    source: "mod_allowmethods.c",
    identifier: "allowmethods_module",
    builtin: false,
    directives: DIRECTIVES,
};

/// The mask an `AllowMethods` line sets (0 for `reset`).
fn mask(words: &[String]) -> Result<u64, String> {
    match words {
        [] => Err("AllowMethods: No method or 'reset' keyword given".into()),
        [one] if one.eq_ignore_ascii_case("reset") => Ok(0),
        _ => words.iter().try_fold(0, |mask, m| {
            if method::is_registered(m) {
                Ok(mask | method::bit(m))
            } else {
                Err(format!("AllowMethods: Invalid Method '{m}'"))
            }
        }),
    }
}

/// Whether the request's method is one its directory does not allow.
pub fn denies(ctx: &Ctx<'_>) -> bool {
    let allowed = ctx.conf.allowmethods.allowed.unwrap_or(0);
    allowed != 0 && allowed & method::bit(&ctx.method) == 0
}

/// The access checker, first of all: 405 for a method not allowed. Under
/// `Satisfy Any` it leaves the refusal to [`crate::modules::authn_core`],
/// where a user who authenticates gets in anyway, as in Apache.
pub fn check_access(ctx: &mut Ctx<'_>) -> Result<(), u16> {
    if !denies(ctx) {
        return Ok(());
    }
    let bit = method::bit(&ctx.method);
    if access_compat::satisfies(&ctx.conf, bit) == Some(Satisfy::Any) {
        return Ok(());
    }
    if ctx.reason.is_none() && !ctx.is_subreq {
        let to = if ctx.filename.is_empty() {
            format!("uri {}", ctx.uri)
        } else {
            ctx.filename.clone()
        };
        ctx.reason = Some(crate::request::Reason::new(
            "error",
            "allowmethods",
            format!(
                "AH01623: client method denied by server configuration: '{}' to {to}",
                ctx.method
            ),
        ));
    }
    ctx.allow_no_method();
    Err(405)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_support::strings as words;

    #[test]
    fn masks_as_the_module_reads_them() {
        let get_post = mask(&words(&["GET", "POST"])).unwrap();
        assert_eq!(get_post, method::bit("GET") | method::bit("POST"));
        assert_eq!(mask(&words(&["HEAD"])).unwrap(), method::bit("GET"));
        assert_eq!(mask(&words(&["Reset"])).unwrap(), 0);
        assert_eq!(
            mask(&words(&["GET", "get"])).unwrap_err(),
            "AllowMethods: Invalid Method 'get'"
        );
        assert!(mask(&[]).is_err());
        assert!(mask(&words(&["GET", "reset"])).is_err());
    }
}
