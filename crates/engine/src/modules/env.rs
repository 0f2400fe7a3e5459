//! mod_env: `SetEnv`, `UnsetEnv`, `PassEnv` — variables every request of a
//! directory carries in its environment.
//!
//! The variables are applied in the fixups phase, after per-directory
//! rewriting, so `RewriteCond %{ENV:…}` in the same directory does not see
//! them while handlers, `Header … env=` and `%{…}e` do. Apache lays the
//! configured table *under* the request's environment (`apr_table_overlay`
//! with the request first, and lookups take the first entry), so a variable
//! `SetEnvIf` or `RewriteRule [E=]` already set keeps its value. `UnsetEnv`
//! only edits the configuration: it removes a variable inherited from a
//! parent's `SetEnv`/`PassEnv` (or an earlier line of the same section), not
//! one a request got elsewhere.

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::registry::{Args, Directive, Module, Run, OR_FILEINFO};
use crate::request::{Ctx, Status};

/// The module's per-directory slot.
#[derive(Clone, Debug, Default)]
pub struct EnvDir {
    /// `SetEnv`/`PassEnv` values in force, in order. Names compare without
    /// case, as in the APR table Apache keeps them in.
    vars: Vec<(String, String)>,
    /// `UnsetEnv` names of this section: removed from what the section
    /// inherits. Apache forgets them once merged.
    unset: Vec<String>,
}

impl EnvDir {
    /// The parent's variables without this section's `UnsetEnv` names, then
    /// this section's own variables on top.
    pub fn merge(base: &EnvDir, add: &EnvDir) -> EnvDir {
        if add.vars.is_empty() && add.unset.is_empty() {
            return EnvDir {
                vars: base.vars.clone(),
                unset: Vec::new(),
            };
        }
        let mut res = EnvDir {
            vars: base.vars.clone(),
            unset: Vec::new(),
        };
        for name in &add.unset {
            res.remove(name);
        }
        for (name, value) in &add.vars {
            res.set(name, value);
        }
        res
    }

    /// `apr_table_setn`: the first entry of that name takes the value (and
    /// keeps its spelling), later ones go.
    fn set(&mut self, name: &str, value: &str) {
        match self
            .vars
            .iter()
            .position(|(n, _)| n.eq_ignore_ascii_case(name))
        {
            Some(i) => {
                self.vars[i].1 = value.to_string();
                let mut j = i + 1;
                while j < self.vars.len() {
                    if self.vars[j].0.eq_ignore_ascii_case(name) {
                        self.vars.remove(j);
                    } else {
                        j += 1;
                    }
                }
            }
            None => self.vars.push((name.to_string(), value.to_string())),
        }
    }

    fn remove(&mut self, name: &str) {
        self.vars.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    }

    /// The variables this configuration adds to a request.
    pub fn vars(&self) -> impl Iterator<Item = (&str, &str)> {
        self.vars.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }
}

/// The fixup: add the configured variables the request does not have yet.
pub fn fixup(ctx: &mut Ctx<'_>) -> Result<(), Status> {
    let conf = ctx.conf.clone();
    for (name, value) in conf.env.vars() {
        if !ctx.env.contains(name) {
            ctx.env.set(name, value);
        }
    }
    Ok(())
}

fn set_env(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    let name = &inv.words[0];
    if let Some((var, rest)) = name.split_once('=') {
        w.warn(
            inv.origin,
            format!(
                "AH10032: Spurious usage of '=' in an environment variable name. 'SetEnv {} {}' expected instead?",
                var, rest.trim_start_matches('=')
            ),
        );
    }
    let value = inv.words.get(1).map(String::as_str).unwrap_or("");
    c.env.set(name, value);
    Ok(())
}

fn pass_env(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    for name in &inv.words {
        match std::env::var(name) {
            Ok(value) => c.env.set(name, &value),
            Err(_) => w.warn(
                inv.origin,
                format!("AH01506: PassEnv variable {name} was undefined"),
            ),
        }
    }
    Ok(())
}

fn unset_env(_w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    for name in &inv.words {
        if !c.env.unset.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            c.env.unset.push(name.clone());
        }
        c.env.remove(name);
    }
    Ok(())
}

pub static DIRECTIVES: &[Directive] = &[
    Directive {
        name: "PassEnv",
        args: Args::Iterate,
        req_override: OR_FILEINFO,
        about: "a list of environment variables to pass to CGI.",
        run: Run::Handler(pass_env),
    },
    Directive {
        name: "SetEnv",
        args: Args::Take12,
        req_override: OR_FILEINFO,
        about: "an environment variable name and optional value to pass to CGI.",
        run: Run::Handler(set_env),
    },
    Directive {
        name: "UnsetEnv",
        args: Args::Iterate,
        req_override: OR_FILEINFO,
        about: "a list of variables to remove from the CGI environment.",
        run: Run::Handler(unset_env),
    },
];

pub static MODULE: Module = Module {
    source: "mod_env.c",
    identifier: "env_module",
    builtin: false,
    directives: DIRECTIVES,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(set: &[(&str, &str)], unset: &[&str]) -> EnvDir {
        let mut c = EnvDir::default();
        for (n, v) in set {
            c.set(n, v);
        }
        c.unset = unset.iter().map(|s| s.to_string()).collect();
        c
    }

    fn names(c: &EnvDir) -> Vec<(String, String)> {
        c.vars()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn child_overlays_parent() {
        let parent = conf(&[("A", "1"), ("B", "2")], &[]);
        let child = conf(&[("b", "3"), ("C", "4")], &[]);
        let m = EnvDir::merge(&parent, &child);
        assert_eq!(
            names(&m),
            vec![
                ("A".into(), "1".into()),
                ("B".into(), "3".into()),
                ("C".into(), "4".into())
            ]
        );
    }

    #[test]
    fn child_unset_removes_inherited_then_sets_its_own() {
        let parent = conf(&[("A", "1"), ("B", "2")], &[]);
        let child = conf(&[("B", "own")], &["a", "B"]);
        let m = EnvDir::merge(&parent, &child);
        assert_eq!(names(&m), vec![("B".into(), "own".into())]);
        // Forgotten once merged: a grandchild inherits the result as is.
        assert!(m.unset.is_empty());
    }
}
