//! mod_authn_file: `AuthUserFile`, the `file` provider of Basic
//! authentication, and the password check behind it.
//!
//! The file is looked up as Apache does (first line whose name is exactly
//! the user's; `#` lines and blank lines skipped; the hash is the text
//! between the first and second `:`), but kept parsed in
//! [`cache::FileCache`] until it changes.

pub mod cache;
pub mod passwd;

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::registry::{Args, Directive, Module, Run, ACCESS_CONF, OR_AUTHCFG};
use cache::FileCache;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Apache's `MAX_STRING_LEN`: longer password-file lines end the reading.
const MAX_LINE: usize = 8192;

#[derive(Clone, Debug, Default)]
pub struct AuthnFileDir {
    pub user_file: Option<PathBuf>,
}

impl AuthnFileDir {
    pub fn merge(base: &AuthnFileDir, new: &AuthnFileDir) -> AuthnFileDir {
        AuthnFileDir {
            user_file: new.user_file.clone().or_else(|| base.user_file.clone()),
        }
    }
}

/// A provider's answer (`authn_status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Authn {
    Granted,
    Denied,
    UserNotFound,
    GeneralError,
}

/// user → hash, first occurrence kept.
type Users = HashMap<Vec<u8>, String>;

fn parse_users(bytes: &[u8]) -> Users {
    let mut users = Users::new();
    for line in cache::config_lines(bytes, Some(MAX_LINE)) {
        if line.is_empty() || line[0] == b'#' {
            continue;
        }
        let mut parts = line.splitn(3, |&b| b == b':');
        let name = parts.next().unwrap_or_default();
        let hash = parts.next().unwrap_or_default();
        users
            .entry(name.to_vec())
            .or_insert_with(|| String::from_utf8_lossy(hash).into_owned());
    }
    users
}

static USERS: FileCache<Users> = FileCache::new(parse_users);

/// `authn_check_password` of the `file` provider. `log` receives the
/// error-log line of a failure that is the provider's own (AH01620).
pub fn check_password(
    conf: &AuthnFileDir,
    user: &[u8],
    password: &[u8],
    log: &mut dyn FnMut(String),
) -> Authn {
    let Some(path) = &conf.user_file else {
        log("AH01619: AuthUserFile not specified in the configuration".into());
        return Authn::GeneralError;
    };
    let users = match USERS.get(path) {
        Ok(u) => u,
        Err(e) => {
            log(format!(
                "({}){}: AH01620: Could not open password file: {}",
                e.raw_os_error().unwrap_or(0),
                crate::modules::authn_file::strerror(&e),
                path.display()
            ));
            return Authn::GeneralError;
        }
    };
    let Some(hash) = users.get(user) else {
        return Authn::UserNotFound;
    };
    if passwd::validate(password, hash) {
        Authn::Granted
    } else {
        Authn::Denied
    }
}

/// The text Apache prints for an errno.
pub fn strerror(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// `ap_set_file_slot`: a path relative to ServerRoot.
pub fn server_relative(w: &Walker<'_>, arg: &str) -> PathBuf {
    let p = Path::new(arg);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        w.env.server_root.join(p)
    }
}

fn run_user_file(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    c.authn_file.user_file = Some(server_relative(w, &inv.words[0]));
    Ok(())
}

pub static DIRECTIVES: &[Directive] = &[Directive {
    name: "AuthUserFile",
    args: Args::Take1,
    req_override: OR_AUTHCFG | ACCESS_CONF,
    about: "text file containing user IDs and passwords",
    run: Run::Handler(run_user_file),
}];

pub static MODULE: Module = Module {
    source: "mod_authn_file.c",
    identifier: "authn_file_module",
    builtin: false,
    directives: DIRECTIVES,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_entry_wins_and_comments_skip() {
        let u = parse_users(b"# c\n  dup:first  \ndup:second\nx:h:extra\n\n");
        assert_eq!(u.get(&b"dup"[..]).map(String::as_str), Some("first"));
        assert_eq!(u.get(&b"x"[..]).map(String::as_str), Some("h"));
        assert!(!u.contains_key(&b"# c"[..]));
    }
}
