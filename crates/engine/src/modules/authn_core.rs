//! mod_authn_core (`AuthType`, `AuthName`) and the access part of
//! Apache's `ap_process_request_internal`, which ties the access modules
//! together:
//!
//! ```text
//! Satisfy All (default)          Satisfy Any
//!   Order/Allow/Deny must pass     Order/Allow/Deny passing ends here
//!   Require without a user         otherwise as on the left
//!     granted   → done
//!     needs one → authenticate (AuthType), Require again with the user
//!     else      → 403
//! ```
//!
//! The hooks keep Apache's answers for the odd combinations: a
//! `Require valid-user` with no `AuthType` is a 500 (nothing could
//! authenticate), an `AuthType` without any `Require` is a 500, a failed
//! `Require` after a successful login is a 401 unless
//! `AuthzSendForbiddenOnFailure On`.

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::expr::StrExpr;
use crate::modules::access_compat::{self, Satisfy};
use crate::modules::auth_basic::{self, Outcome};
use crate::modules::authz_core::{self, AuthzRequest, AuthzResult, Logic};
use crate::modules::core::method_bit;
use crate::registry::{Args, Directive, Module, Run, ACCESS_CONF, OR_AUTHCFG};
use crate::request::{Ctx, Status};
use std::sync::Arc;

#[derive(Clone, Debug, Default)]
pub struct AuthnCoreDir {
    /// `AuthType`: `None` unset, `Some(None)` for `AuthType None`.
    pub auth_type: Option<Option<String>>,
    /// `AuthName`, a string expression.
    pub name: Option<Arc<StrExpr>>,
}

impl AuthnCoreDir {
    pub fn merge(base: &AuthnCoreDir, new: &AuthnCoreDir) -> AuthnCoreDir {
        AuthnCoreDir {
            auth_type: new.auth_type.clone().or_else(|| base.auth_type.clone()),
            name: new.name.clone().or_else(|| base.name.clone()),
        }
    }

    /// `ap_auth_type`.
    pub fn auth_type(&self) -> Option<&str> {
        self.auth_type.as_ref().and_then(|t| t.as_deref())
    }
}

/// `ap_escape_quotes`: `"` becomes `\"` unless already escaped.
fn escape_quotes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            out.push(c);
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else if c == '"' {
            out.push_str("\\\"");
        } else {
            out.push(c);
        }
    }
    out
}

/// `ap_auth_name`: the realm, evaluated for the request, quotes escaped.
pub fn auth_name(ctx: &Ctx<'_>) -> Option<String> {
    let expr = ctx.conf.authn_core.name.clone()?;
    let value = match expr.constant() {
        Some(v) => v.to_vec(),
        None => expr
            .eval(&crate::expr::request_ctx::RequestExpr::new(ctx))
            .value
            .ok()?,
    };
    Some(escape_quotes(&String::from_utf8_lossy(&value)))
}

fn fail(ctx: &mut Ctx<'_>, status: Status, module: &'static str, message: String) -> Status {
    if ctx.reason.is_none() && !ctx.is_subreq {
        ctx.reason = Some(crate::request::Reason::new("error", module, message));
    }
    status
}

fn denied_what(ctx: &Ctx<'_>) -> String {
    if ctx.filename.is_empty() {
        format!("uri {}", ctx.uri)
    } else {
        ctx.filename.clone()
    }
}

/// mod_authz_core's `authorize_user_core`: `Ok(true)` granted,
/// `Ok(false)` a user is needed (DECLINED), `Err` the status.
fn authorize(ctx: &mut Ctx<'_>, user: Option<&str>, after_authn: bool) -> Result<bool, Status> {
    let conf = ctx.conf.clone();
    let Some(section) = conf.authz.section.clone() else {
        if conf.authn_core.auth_type().is_some() {
            return Err(fail(
                ctx,
                500,
                "authz_core",
                "AH01627: AuthType configured with no corresponding authorization directives"
                    .into(),
            ));
        }
        return Ok(true);
    };
    let messages = std::cell::RefCell::new(Vec::new());
    let vary = std::cell::RefCell::new(Vec::new());
    let result = {
        let env = |n: &str| ctx.env.contains(n);
        let groups = |u: &str, g: &[String]| {
            if crate::modules::authz_groupfile::in_groups(&conf.authz_groupfile, u, g, &mut |m| {
                messages.borrow_mut().push(m)
            }) {
                AuthzResult::Granted
            } else {
                AuthzResult::Denied
            }
        };
        let expr = |e: &crate::expr::Expr| {
            let out = e.eval(&crate::expr::request_ctx::RequestExpr::new(ctx));
            match out.value {
                Ok(v) => {
                    vary.borrow_mut().extend(out.vary);
                    Some(v)
                }
                Err(err) => {
                    messages.borrow_mut().push(format!(
                        "AH02320: Error evaluating expression in 'Require expr': {err}"
                    ));
                    None
                }
            }
        };
        let areq = AuthzRequest {
            method_bit: method_bit(&ctx.method),
            remote: ctx.useragent_ip_unrecorded(),
            local: ctx.req.local.ip(),
            env: &env,
            user,
            groups: &groups,
            expr: &expr,
        };
        authz_core::apply(&section, &areq, Logic::And)
    };
    for v in vary.into_inner() {
        crate::modules::core::if_section::merge_vary(&mut ctx.headers_out, &v);
    }
    if let Some(m) = messages.into_inner().pop() {
        if result != AuthzResult::Granted {
            fail(ctx, 0, "authz_core", m);
        }
    }
    match result {
        AuthzResult::Granted => Ok(true),
        AuthzResult::GeneralError => Err(fail(
            ctx,
            500,
            "authz_core",
            "an authorization provider failed".into(),
        )),
        AuthzResult::DeniedNoUser if !after_authn => Ok(false),
        AuthzResult::DeniedNoUser => {
            let uri = ctx.uri.clone();
            if user.is_some() {
                auth_basic::note_failure(ctx);
            }
            Err(fail(
                ctx,
                401,
                "authz_core",
                format!("AH01629: authorization failure (no authenticated user): {uri}"),
            ))
        }
        AuthzResult::Denied | AuthzResult::Neutral => {
            if !after_authn || conf.authn_core.auth_type().is_none() {
                let what = denied_what(ctx);
                return Err(fail(
                    ctx,
                    403,
                    "authz_core",
                    format!("AH01630: client denied by server configuration: {what}"),
                ));
            }
            let message = format!(
                "AH01631: user {}: authorization failure for \"{}\": ",
                user.unwrap_or(""),
                ctx.uri
            );
            if conf.authz.forbidden_on_failure == Some(true) {
                return Err(fail(ctx, 403, "authz_core", message));
            }
            if user.is_some() {
                auth_basic::note_failure(ctx);
            }
            Err(fail(ctx, 401, "authz_core", message))
        }
    }
}

/// The `check_user_id` hooks: mod_auth_basic, then mod_authn_core's
/// fallback (no `AuthType`: nobody to authenticate; an unknown one: 500).
fn check_user_id(ctx: &mut Ctx<'_>) -> Result<Option<String>, Status> {
    match auth_basic::authenticate(ctx) {
        Outcome::User(u) => return Ok(Some(u)),
        Outcome::Fail(s) => return Err(s),
        Outcome::Declined => {}
    }
    match ctx.conf.authn_core.auth_type().map(str::to_string) {
        None => Ok(None),
        Some(t) => Err(fail(
            ctx,
            500,
            "authn_core",
            format!("AH01796: AuthType {t} configured without corresponding module"),
        )),
    }
}

/// What a sub-request or internal redirect inherits from the request it
/// comes from.
#[derive(Clone, Debug)]
pub struct AuthPrev {
    conf: Arc<DirConf>,
    user: Option<String>,
    auth_type: Option<String>,
}

/// The configuration, user and auth type of the request an internal
/// redirect or a sub-request comes from (`r->prev`, `r->main`): access
/// control is skipped when the configuration is the same object.
impl crate::request::RequestSlot for Option<AuthPrev> {
    fn for_redirect(from: &Ctx<'_>) -> Self {
        Some(AuthPrev::of(from))
    }

    fn for_subrequest(from: &Ctx<'_>) -> Self {
        Some(AuthPrev::of(from))
    }
}

impl AuthPrev {
    pub fn of(ctx: &Ctx<'_>) -> AuthPrev {
        AuthPrev {
            conf: ctx.conf.clone(),
            user: ctx.user.clone(),
            auth_type: ctx.auth_type.clone(),
        }
    }
}

/// Access control, authentication and authorization of a request, in
/// Apache's order. Sets `ctx.user` (`r->user`, read as
/// `%{REMOTE_USER}`) when a user was authenticated.
pub fn check_access(ctx: &mut Ctx<'_>) -> Result<(), Status> {
    // Apache skips the checks for a sub-request or internal redirect whose
    // configuration is the very same as its origin's (an ErrorDocument in
    // the protected directory is served); the user carries over.
    if let Some(prev) = &ctx.modules.auth_prev {
        if Arc::ptr_eq(&prev.conf, &ctx.conf) {
            ctx.user = prev.user.clone();
            ctx.auth_type = prev.auth_type.clone();
            return Ok(());
        }
    }
    let bit = method_bit(&ctx.method);
    let compat_ok = access_compat::allowed(
        &ctx.conf,
        &access_compat::Client {
            method_bit: bit,
            addr: ctx.useragent_ip_unrecorded(),
            env: &ctx.env,
        },
    );
    let compat_denied = || {
        format!(
            "AH01797: client denied by server configuration: {}",
            denied_what(ctx)
        )
    };
    match access_compat::satisfies(&ctx.conf, bit) {
        Some(Satisfy::Any) => {
            // mod_allowmethods' refusal is one of the access checks a
            // user who authenticates gets past.
            if compat_ok && !crate::modules::allowmethods::denies(ctx) {
                return Ok(());
            }
        }
        _ => {
            if !compat_ok {
                let m = compat_denied();
                return Err(fail(ctx, 403, "access_compat", m));
            }
        }
    }
    if authorize(ctx, None, false)? {
        return Ok(());
    }
    let Some(user) = check_user_id(ctx)? else {
        let uri = ctx.uri.clone();
        return Err(fail(ctx, 500, "core", format!(
            "AH00027: No authentication done but request not allowed without authentication for {uri}. Authentication not configured?"
        )));
    };
    authorize(ctx, Some(&user), true)?;
    Ok(())
}

fn run_auth_type(_w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    let t = &inv.words[0];
    c.authn_core.auth_type = Some((!t.eq_ignore_ascii_case("None")).then(|| t.clone()));
    Ok(())
}

fn run_auth_name(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    let text = &inv.words[0];
    let expr = StrExpr::parse_restricted(text, w.ctx.htaccess)
        .map_err(|e| format!("Cannot parse expression '{text}' in AuthName: {e}"))?;
    c.authn_core.name = Some(Arc::new(expr));
    Ok(())
}

pub static DIRECTIVES: &[Directive] = &[
    Directive {
        name: "AuthType",
        args: Args::Take1,
        req_override: OR_AUTHCFG | ACCESS_CONF,
        about: "an HTTP authorization type (e.g., \"Basic\")",
        run: Run::Handler(run_auth_type),
    },
    Directive {
        name: "AuthName",
        args: Args::Take1,
        req_override: OR_AUTHCFG | ACCESS_CONF,
        about: "the authentication realm (e.g. \"Members Only\")",
        run: Run::Handler(run_auth_name),
    },
    Directive {
        name: "<AuthnProviderAlias",
        args: Args::Section,
        req_override: crate::registry::RSRC_CONF,
        about:
            "container for grouping an authentication provider's directives under a provider alias",
        run: Run::Unsupported,
    },
];

pub static MODULE: Module = Module {
    source: "mod_authn_core.c",
    identifier: "authn_core_module",
    builtin: false,
    directives: DIRECTIVES,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_escaped_once() {
        assert_eq!(escape_quotes(r#"a "b" \"c\""#), r#"a \"b\" \"c\""#);
    }
}
