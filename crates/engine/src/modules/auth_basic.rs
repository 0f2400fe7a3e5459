//! mod_auth_basic: the `Basic` scheme of RFC 7617 — reading the
//! credentials, asking the providers, and the challenge.
//!
//! Apache reads the header leniently (the scheme word compared without
//! case, base64 decoded up to the first character outside the alphabet,
//! the user name up to the first `:`), and so do we: a client that works
//! against Apache works here.

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::expr::{RequestExpr, StrExpr};
use crate::http::digest::base64_decode_lenient;
use crate::modules::authn_file::{self, Authn};
use crate::registry::{Args, Directive, Module, Run, ACCESS_CONF, OR_AUTHCFG};
use crate::request::{Ctx, Status};
use std::sync::Arc;

#[derive(Clone, Debug, Default)]
pub struct AuthBasicDir {
    /// `AuthBasicProvider` names, in order (only `file` exists here).
    pub providers: Option<Vec<String>>,
    pub authoritative: Option<bool>,
    /// `AuthBasicFake`: the user and password expressions (`Some(None)`:
    /// `off`).
    pub fake: Option<Option<Arc<FakeCredentials>>>,
}

/// `AuthBasicFake`'s expressions.
#[derive(Debug)]
pub struct FakeCredentials {
    user: StrExpr,
    password: StrExpr,
}

impl AuthBasicDir {
    pub fn merge(base: &AuthBasicDir, new: &AuthBasicDir) -> AuthBasicDir {
        AuthBasicDir {
            providers: new.providers.clone().or_else(|| base.providers.clone()),
            authoritative: new.authoritative.or(base.authoritative),
            fake: new.fake.clone().or_else(|| base.fake.clone()),
        }
    }
}

/// `AuthBasicFake off`, or `AuthBasicFake USER [PASSWORD]` (string
/// expressions; the password `password` when none is given).
fn run_fake(_w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    let user = &inv.words[0];
    if user.eq_ignore_ascii_case("off") {
        c.auth_basic.fake = Some(None);
        return Ok(());
    }
    let password = inv.words.get(1).map_or("password", String::as_str);
    let user_expr = StrExpr::parse(user)
        .map_err(|e| format!("Could not parse fake username expression '{user}': {e}"))?;
    let password_expr = StrExpr::parse(password).map_err(|e| {
        format!("Could not parse fake password expression associated to user '{user}': {e}")
    })?;
    c.auth_basic.fake = Some(Some(Arc::new(FakeCredentials {
        user: user_expr,
        password: password_expr,
    })));
    Ok(())
}

/// mod_auth_basic's last fixup (`authenticate_basic_fake`): with
/// `AuthBasicFake`, the request's `Authorization` becomes `Basic` with the
/// evaluated user and password, for the back-end and the filters after
/// it; an empty one removes the header instead.
pub fn fake_fixup(ctx: &mut Ctx<'_>) -> Result<(), Status> {
    let Some(Some(fake)) = ctx.conf.auth_basic.fake.clone() else {
        return Ok(());
    };
    let evaluate =
        |ctx: &mut Ctx<'_>, expr: &StrExpr, what: &str, code: &str| -> Result<Vec<u8>, Status> {
            let out = expr.eval(&RequestExpr::new(ctx)).value;
            out.map_err(|e| {
                let line = format!(
                    "{code}: AuthBasicFake: could not evaluate {what} expression for URI '{}': {e}",
                    ctx.uri
                );
                ctx.site
                    .log
                    .error("error", "auth_basic", Some(ctx.req.remote()), &line);
                500
            })
        };
    let user = evaluate(ctx, &fake.user, "user", "AH02455")?;
    let empty = |ctx: &mut Ctx<'_>, what: &str, code: &str| {
        let line = format!(
            "{code}: AuthBasicFake: empty {what} expression for URI '{}', ignoring",
            ctx.uri
        );
        ctx.site
            .log
            .error("info", "auth_basic", Some(ctx.req.remote()), &line);
        ctx.headers_in.to_mut().remove("Authorization");
    };
    if user.is_empty() {
        empty(ctx, "username", "AH02458");
        return Ok(());
    }
    let password = evaluate(ctx, &fake.password, "password", "AH02456")?;
    if password.is_empty() {
        empty(ctx, "password", "AH02459");
        return Ok(());
    }
    let mut pair = user;
    pair.push(b':');
    pair.extend_from_slice(&password);
    let line = format!("Basic {}", crate::http::digest::base64(&pair));
    ctx.log_error(
        "info",
        "auth_basic",
        &format!("AH02457: AuthBasicFake: \"Authorization: {line}\""),
    );
    ctx.headers_in
        .to_mut()
        .set("Authorization", line.into_bytes());
    Ok(())
}

/// What `check_user_id` ended with.
pub enum Outcome {
    /// Authenticated: `r->user`.
    User(String),
    /// Not this module's business, or not authoritative.
    Declined,
    Fail(Status),
}

/// User and password of an `Authorization` value, read as Apache's
/// `get_basic_auth` reads it: the scheme word compared without case,
/// blanks skipped, base64 decoded leniently up to the first byte outside
/// the alphabet, cut at a NUL, split at the first colon (no colon: an
/// empty password). `None` when the scheme is not `Basic`.
pub fn basic_credentials(line: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    let (scheme, rest) = match line.iter().position(|&b| b == b' ') {
        Some(i) => (&line[..i], &line[i..]),
        None => (line, &b""[..]),
    };
    if !scheme.eq_ignore_ascii_case(b"Basic") {
        return None;
    }
    let start = rest
        .iter()
        .position(|&b| b != b' ' && b != b'\t')
        .unwrap_or(rest.len());
    let mut decoded = base64_decode_lenient(&rest[start..]);
    // A C string: everything after a NUL is gone.
    if let Some(i) = decoded.iter().position(|&b| b == 0) {
        decoded.truncate(i);
    }
    Some(match decoded.iter().position(|&b| b == b':') {
        Some(i) => (decoded[..i].to_vec(), decoded[i + 1..].to_vec()),
        None => (decoded, Vec::new()),
    })
}

/// The realm as sent in the challenge, or `None` without `AuthName`.
pub fn note_failure(ctx: &mut Ctx<'_>) {
    let Some(realm) = crate::modules::authn_core::auth_name(ctx) else {
        return;
    };
    let value = format!("Basic realm=\"{realm}\"");
    ctx.err_headers_out
        .retain(|(n, _)| !n.eq_ignore_ascii_case("WWW-Authenticate"));
    ctx.err_headers_out.push(("WWW-Authenticate".into(), value));
}

fn log(ctx: &mut Ctx<'_>, message: String) {
    if ctx.reason.is_none() && !ctx.is_subreq {
        ctx.reason = Some(crate::request::Reason::new("error", "auth_basic", message));
    }
}

/// `authenticate_basic_user` (a `check_user_id` hook).
pub fn authenticate(ctx: &mut Ctx<'_>) -> Outcome {
    let conf = ctx.conf.clone();
    match conf.authn_core.auth_type() {
        Some(t) if t.eq_ignore_ascii_case("Basic") => {}
        _ => return Outcome::Declined,
    }
    if conf.authn_core.name.is_none() {
        log(ctx, format!("AH01615: need AuthName: {}", ctx.uri));
        return Outcome::Fail(500);
    }
    ctx.auth_type = conf.authn_core.auth_type().map(str::to_string);
    let Some(line) = ctx.headers_in.get("Authorization").map(|v| v.to_vec()) else {
        note_failure(ctx);
        return Outcome::Fail(401);
    };
    let Some((user, pw)) = basic_credentials(&line) else {
        log(
            ctx,
            format!(
                "AH01614: client used wrong authentication scheme: {}",
                ctx.uri
            ),
        );
        note_failure(ctx);
        return Outcome::Fail(401);
    };
    let (user, pw) = (&user[..], &pw[..]);
    let user_s = String::from_utf8_lossy(user).into_owned();
    // Apache sets r->user to the claimed name before checking it.
    ctx.user = Some(user_s.clone());
    let mut messages = Vec::new();
    let mut result = Authn::UserNotFound;
    let providers = conf
        .auth_basic
        .providers
        .clone()
        .unwrap_or_else(|| vec!["file".into()]);
    for _provider in &providers {
        result = authn_file::check_password(&conf.authn_file, user, pw, &mut |m| messages.push(m));
        if result != Authn::UserNotFound {
            break;
        }
    }
    for m in messages {
        log(ctx, m);
    }
    if result == Authn::Granted {
        return Outcome::User(user_s);
    }
    if !conf.auth_basic.authoritative.unwrap_or(true) && result != Authn::Denied {
        return Outcome::Declined;
    }
    let status = match result {
        Authn::Denied => {
            log(
                ctx,
                format!(
                    "AH01617: user {user_s}: authentication failure for \"{}\": Password Mismatch",
                    ctx.uri
                ),
            );
            401
        }
        Authn::UserNotFound => {
            log(
                ctx,
                format!("AH01618: user {user_s} not found: {}", ctx.uri),
            );
            401
        }
        _ => 500,
    };
    if status == 401 {
        note_failure(ctx);
    }
    Outcome::Fail(status)
}

fn run_provider(_w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    let list = c.auth_basic.providers.get_or_insert_with(Vec::new);
    for name in &inv.words {
        if name != "file" {
            return Err(format!("Unknown Authn provider: {name}"));
        }
        list.push(name.clone());
    }
    Ok(())
}

fn run_digest_algorithm(
    _w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    let v = &inv.words[0];
    if v.eq_ignore_ascii_case("off") {
        Ok(())
    } else if v.eq_ignore_ascii_case("MD5") {
        Err("AuthBasicUseDigestAlgorithm MD5 is not supported by htaccel yet".into())
    } else {
        Err(format!(
            "Invalid algorithm in AuthBasicUseDigestAlgorithm: {v}"
        ))
    }
}

pub static DIRECTIVES: &[Directive] = &[
    Directive { name: "AuthBasicProvider", args: Args::Iterate, req_override: OR_AUTHCFG | ACCESS_CONF, about: "specify the auth providers for a directory or location", run: Run::Handler(run_provider) },
    Directive { name: "AuthBasicAuthoritative", args: Args::Flag, req_override: OR_AUTHCFG | ACCESS_CONF, about: "Set to 'Off' to allow access control to be passed along to lower modules if the UserID is not known to this module", run: Run::Handler(|_w, inv, c| { c.auth_basic.authoritative = Some(crate::registry::flag(&inv.words)); Ok(()) }) },
    Directive { name: "AuthBasicFake", args: Args::Take12, req_override: OR_AUTHCFG | ACCESS_CONF, about: "Fake basic authentication using the given expressions for username and password, 'off' to disable. Password defaults to 'password' if missing.", run: Run::Handler(run_fake) },
    Directive { name: "AuthBasicUseDigestAlgorithm", args: Args::Take1, req_override: OR_AUTHCFG | ACCESS_CONF, about: "Set to 'MD5' to use the auth provider's authentication check for digest auth, using a hash of 'user:realm:pass'", run: Run::Handler(run_digest_algorithm) },
];

pub static MODULE: Module = Module {
    source: "mod_auth_basic.c",
    identifier: "auth_basic_module",
    builtin: false,
    directives: DIRECTIVES,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_panic_and_round_trip() {
        let mut state = 0x1234_5678_9abc_def1u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..20_000 {
            // Garbage of any shape: no panic.
            let len = (next() % 64) as usize;
            let garbage: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let _ = basic_credentials(&garbage);
            let mut prefixed = b"Basic ".to_vec();
            prefixed.extend_from_slice(&garbage);
            let _ = basic_credentials(&prefixed);
            // A well-formed header gives back what was encoded.
            let user: Vec<u8> = (0..(next() % 12))
                .map(|_| b'a' + (next() % 26) as u8)
                .collect();
            let pass: Vec<u8> = (0..(next() % 20))
                .map(|_| 1 + (next() % 255) as u8)
                .collect();
            let mut plain = user.clone();
            plain.push(b':');
            plain.extend_from_slice(&pass);
            let header = format!("basic  {}", crate::http::digest::base64(&plain));
            assert_eq!(basic_credentials(header.as_bytes()), Some((user, pass)));
        }
        assert_eq!(basic_credentials(b"Bearer xyz"), None);
    }

    #[test]
    fn lenient_base64() {
        assert_eq!(base64_decode_lenient(b"dTpwdw=="), b"u:pw");
        assert_eq!(base64_decode_lenient(b"dTpwdw"), b"u:pw");
        assert_eq!(base64_decode_lenient(b"dTpw!!!"), b"u:p");
        assert_eq!(base64_decode_lenient(b"!"), b"");
    }
}
