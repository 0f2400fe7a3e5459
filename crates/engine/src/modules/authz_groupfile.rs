//! mod_authz_groupfile: `AuthGroupFile` and the `group` provider of
//! `Require`.
//!
//! A group file has lines `group: user user …` (names split as Apache
//! splits configuration words, so quoted names work). The file is kept
//! parsed, per user, in a [`FileCache`] until it changes.

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::modules::authn_file::cache::{config_lines, FileCache};
use crate::modules::authn_file::server_relative;
use crate::registry::{Args, Directive, Module, Run, ACCESS_CONF, OR_AUTHCFG};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

#[derive(Clone, Debug, Default)]
pub struct GroupFileDir {
    pub group_file: Option<PathBuf>,
}

impl GroupFileDir {
    pub fn merge(base: &GroupFileDir, new: &GroupFileDir) -> GroupFileDir {
        GroupFileDir {
            group_file: new.group_file.clone().or_else(|| base.group_file.clone()),
        }
    }
}

/// user → the groups that list them.
type Members = HashMap<String, HashSet<String>>;

/// `ap_getword_conf`: a word, or a quoted string without its quotes.
pub fn conf_words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line.trim_start();
    while !rest.is_empty() {
        let q = rest.as_bytes()[0];
        let (word, next) = if q == b'"' || q == b'\'' {
            let body = &rest[1..];
            let mut end = body.len();
            let mut i = 0;
            let b = body.as_bytes();
            while i < b.len() {
                if b[i] == b'\\' && i + 1 < b.len() && b[i + 1] == q {
                    i += 2;
                    continue;
                }
                if b[i] == q {
                    end = i;
                    break;
                }
                i += 1;
            }
            let word = body[..end].replace(&format!("\\{}", q as char), &(q as char).to_string());
            (word, body.get(end + 1..).unwrap_or(""))
        } else {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            (rest[..end].to_string(), &rest[end..])
        };
        out.push(word);
        rest = next.trim_start();
    }
    out
}

fn parse_groups(bytes: &[u8]) -> Members {
    let mut m = Members::new();
    for line in config_lines(bytes, None) {
        if line.is_empty() || line[0] == b'#' {
            continue;
        }
        let line = String::from_utf8_lossy(line);
        let (group, users) = line.split_once(':').unwrap_or((&line, ""));
        let group = group.trim_end();
        for user in conf_words(users) {
            m.entry(user).or_default().insert(group.to_string());
        }
    }
    m
}

static GROUPS: FileCache<Members> = FileCache::new(parse_groups);

/// The `group` provider: whether `user` is in one of `groups`. Failures
/// (no file configured, unreadable file) deny, as in Apache; `log` gets
/// the error-log line.
pub fn in_groups(
    conf: &GroupFileDir,
    user: &str,
    groups: &[String],
    log: &mut dyn FnMut(String),
) -> bool {
    let Some(path) = &conf.group_file else {
        log("AH01664: No group file was specified in the configuration".into());
        return false;
    };
    let members = match GROUPS.get(path) {
        Ok(m) => m,
        Err(_) => {
            log(format!(
                "AH01665: Could not open group file: {}",
                path.display()
            ));
            return false;
        }
    };
    let Some(mine) = members.get(user) else {
        return false;
    };
    groups
        .iter()
        .flat_map(|g| conf_words(g))
        .any(|g| mine.contains(&g))
}

fn run_group_file(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    c.authz_groupfile.group_file = Some(server_relative(w, &inv.words[0]));
    Ok(())
}

pub static DIRECTIVES: &[Directive] = &[Directive {
    name: "AuthGroupFile",
    args: Args::Take1,
    req_override: OR_AUTHCFG | ACCESS_CONF,
    about: "text file containing group names and member user IDs",
    run: Run::Handler(run_group_file),
}];

pub static MODULE: Module = Module {
    source: "mod_authz_groupfile.c",
    identifier: "authz_groupfile_module",
    builtin: false,
    directives: DIRECTIVES,
};

/// mod_authz_user registers the `user` and `valid-user` providers.
pub static USER_MODULE: Module = Module {
    source: "mod_authz_user.c",
    identifier: "authz_user_module",
    builtin: false,
    directives: &[],
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_lines() {
        let m = parse_groups(b"admins: alice bob\n# x\nstaff :\"carol d\" alice\n");
        assert!(m["alice"].contains("admins") && m["alice"].contains("staff"));
        assert!(m["carol d"].contains("staff"));
        assert!(!m.contains_key("# x"));
    }
}
