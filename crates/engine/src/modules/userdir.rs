//! mod_userdir: `/~user/…` served from a directory of that user's
//! (`UserDir public_html`: `~user/public_html`, the home directory read
//! from the system's user database; `UserDir /srv/users/*/www`: the `*`
//! replaced by the name; `UserDir /srv/www`: `/srv/www/user`; a URL
//! redirects). `UserDir disabled [users…]` and `UserDir enabled users…`
//! choose whose; several directories are tried in order, each but the last
//! only if it exists.
//!
//! Its translation runs after mod_alias's, before mod_vhost_alias's and
//! the core's. Answers it gives are not kept by the answer memo: they
//! depend on the user database and on directories outside the caches.

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::registry::{Args, Directive, Module, Run, RSRC_CONF};
use crate::request::{Ctx, Status};
use std::collections::HashSet;

/// One server's `UserDir` settings (`userdir_config`).
#[derive(Clone, Debug, Default)]
pub struct UserDirServer {
    /// `UserDir disabled`/`enabled` with no names (`None`: neither).
    pub globally_disabled: Option<bool>,
    /// The directories, as written (`None`: no `UserDir` with one).
    pub dirs: Option<String>,
    /// Not merged: a virtual host's own lists only.
    pub enabled_users: HashSet<String>,
    pub disabled_users: HashSet<String>,
    /// A `UserDir` was read here: Apache creates a virtual host's module
    /// configuration only then, and otherwise uses the main server's whole.
    pub configured: bool,
}

impl UserDirServer {
    /// `merge_userdir_config`.
    pub fn merge(main: &UserDirServer, vhost: &UserDirServer) -> UserDirServer {
        if !vhost.configured {
            return main.clone();
        }
        UserDirServer {
            configured: true,
            globally_disabled: vhost.globally_disabled.or(main.globally_disabled),
            dirs: vhost.dirs.clone().or_else(|| main.dirs.clone()),
            enabled_users: vhost.enabled_users.clone(),
            disabled_users: vhost.disabled_users.clone(),
        }
    }
}

/// `set_user_dir`.
fn run_user_dir(w: &mut Walker<'_>, inv: &Invocation<'_>, _c: &mut DirConf) -> Result<(), String> {
    let conf = &mut w.server()?.modules.userdir;
    conf.configured = true;
    let Some(keyword) = inv.words.first() else {
        return Err("UserDir requires an argument.".into());
    };
    let names = &inv.words[1..];
    let lower = keyword.to_ascii_lowercase();
    let table = match lower.as_str() {
        "disable" | "disabled" if names.is_empty() => {
            conf.globally_disabled = Some(true);
            return Ok(());
        }
        "enable" | "enabled" if names.is_empty() => {
            conf.globally_disabled = Some(false);
            return Ok(());
        }
        "disable" | "disabled" => &mut conf.disabled_users,
        "enable" | "enabled" => &mut conf.enabled_users,
        _ => {
            conf.dirs = Some(inv.words.join(" "));
            return Ok(());
        }
    };
    table.extend(names.iter().cloned());
    Ok(())
}

/// `translate_userdir`.
pub fn translate(ctx: &mut Ctx<'_>) -> Result<bool, Status> {
    let Some(rest) = ctx.uri.strip_prefix("/~") else {
        return Ok(false);
    };
    let conf = &ctx.site.modules.userdir;
    let Some(dirs) = conf.dirs.as_deref() else {
        return Ok(false);
    };
    let (user, dname) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    // No name, and (as the module tests it) a second character `.` that
    // ends the name or is followed by another that does.
    let b = user.as_bytes();
    if b.is_empty() || (b.get(1) == Some(&b'.') && (b.len() == 2 || (b.len() == 3 && b[2] == b'.')))
    {
        return Ok(false);
    }
    if conf.disabled_users.contains(user) {
        return Ok(false);
    }
    if conf.globally_disabled == Some(true) && !conf.enabled_users.contains(user) {
        return Ok(false);
    }
    crate::answer_memo::note_volatile();
    let words: Vec<&str> = dirs.split_whitespace().collect();
    for (i, &userdir) in words.iter().enumerate() {
        let last = i + 1 == words.len();
        let absolute = userdir.starts_with('/');
        let (prefix, after) = match userdir.split_once('*') {
            Some((p, a)) => (Some(p), a),
            None => (None, userdir),
        };
        let filename = if after.is_empty() || absolute {
            match prefix {
                // A URL with `*`: a redirect.
                Some(p) if p.contains(':') && !absolute => {
                    return redirect(ctx, format!("{p}{user}{after}{dname}"));
                }
                Some(p) => Some(format!("{p}{user}{after}")),
                None => Some(format!("{userdir}/{user}")),
            }
        } else if let Some(p) = prefix.filter(|p| p.contains(':')) {
            return redirect(ctx, format!("{p}{user}{dname}"));
        } else {
            home_dir(user).map(|home| format!("{home}/{userdir}"))
        };
        let Some(filename) = filename else {
            continue;
        };
        if last || crate::fs::stat(&filename).is_ok() {
            ctx.filename = format!("{filename}{dname}");
            ctx.context_prefix = Some(format!("/~{user}"));
            ctx.context_document_root = Some(filename);
            return Ok(true);
        }
    }
    Ok(false)
}

/// A `302` to `location` (a `UserDir` URL).
fn redirect(ctx: &mut Ctx<'_>, location: String) -> Result<bool, Status> {
    ctx.headers_out.push(("Location".into(), location));
    Err(302)
}

/// `apr_uid_homepath_get`: the user's home directory, from the system's
/// user database.
fn home_dir(user: &str) -> Option<String> {
    let name = std::ffi::CString::new(user).ok()?;
    let mut buf = vec![0u8; 16 * 1024];
    // SAFETY: `pwd` and `buf` outlive the call; getpwnam_r writes only
    // within them and sets `result` to `&pwd` or null.
    unsafe {
        let mut pwd: libc::passwd = std::mem::zeroed();
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwnam_r(
            name.as_ptr(),
            &mut pwd,
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut result,
        );
        if rc != 0 || result.is_null() || pwd.pw_dir.is_null() {
            return None;
        }
        Some(
            std::ffi::CStr::from_ptr(pwd.pw_dir)
                .to_string_lossy()
                .into_owned(),
        )
    }
}

static DIRECTIVES: &[Directive] = &[Directive {
    name: "UserDir",
    args: Args::Argv,
    req_override: RSRC_CONF,
    about: "the public subdirectory in users' home directories, or 'disabled', or 'disabled username username...', or 'enabled username username...'",
    run: Run::Handler(run_user_dir),
}];

pub static MODULE: Module = Module {
    source: "mod_userdir.c",
    identifier: "userdir_module",
    builtin: false,
    directives: DIRECTIVES,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_has_a_home() {
        assert_eq!(home_dir("root").as_deref(), Some("/root"));
        assert_eq!(home_dir("no-such-user-htaccel"), None);
    }
}
