//! mod_actions: `Action TYPE /cgi-bin/script [virtual]` hands every
//! request whose handler (or, without one, whose content type) is `TYPE`
//! to a CGI script, and `Script METHOD /cgi-bin/script` every request of a
//! method. Shared hosts run PHP as CGI this way (`Action
//! application/x-httpd-php /cgi-bin/php-cgi` with `AddHandler
//! application/x-httpd-php .php`); without the module such a `.php` file
//! would be sent as its source.
//!
//! As the module: its handler runs after every handler that answers by
//! name, before the default handler. An action is an internal redirect
//! (`ap_internal_redirect_handler`) to the script with the request's URI,
//! escaped, as its path info and the query kept; the script sees
//! `REDIRECT_HANDLER`, `REDIRECT_URL`, `REDIRECT_STATUS` and
//! `PATH_TRANSLATED` (the file). Without `virtual` a missing file is a 404
//! before the script runs. An action overrides a method script; a method
//! script for `GET` applies only to a request with a query, and declines
//! two redirects deep (a script that is its own target). `Action` lines
//! of one section accumulate and a nearer section's line for the same
//! type replaces the farther one (`apr_table_overlay`); `Script` is per
//! method, the nearest setting winning.

use crate::http::method;
use crate::http::Response;
use crate::registry::{Args, Directive, Module, Run, ACCESS_CONF, OR_FILEINFO, RSRC_CONF};
use crate::request::{Ctx, Status};

/// One `Action`: the handler or type, the script, and `virtual`.
#[derive(Clone, Debug)]
struct Action {
    name: String,
    script: String,
    virtual_script: bool,
}

/// The per-directory slot.
#[derive(Clone, Debug, Default)]
pub struct ActionsDir {
    /// Nearest first (a nearer section's line hides a farther one's).
    actions: Vec<Action>,
    /// `(method, script)` of each `Script` line, nearest first.
    scripted: Vec<(String, String)>,
}

impl ActionsDir {
    pub fn merge(base: &ActionsDir, new: &ActionsDir) -> ActionsDir {
        if base.actions.is_empty() && base.scripted.is_empty() {
            return new.clone();
        }
        ActionsDir {
            actions: new.actions.iter().chain(&base.actions).cloned().collect(),
            scripted: new.scripted.iter().chain(&base.scripted).cloned().collect(),
        }
    }

    fn configured(&self) -> bool {
        !self.actions.is_empty() || !self.scripted.is_empty()
    }

    fn action(&self, name: &str) -> Option<&Action> {
        self.actions.iter().find(|a| a.name == name)
    }

    /// The script of `method` (`HEAD` is `GET`; a method Apache does not
    /// know goes by its name).
    fn script_for(&self, m: &str) -> Option<&str> {
        let wanted = method::number(m);
        self.scripted
            .iter()
            .find(|(name, _)| {
                if method::is_registered(name) {
                    method::number(name) == wanted
                } else {
                    name == m
                }
            })
            .map(|(_, script)| script.as_str())
    }
}

pub static DIRECTIVES: &[Directive] = &[
    Directive {
        name: "Action",
        args: Args::Take23,
        req_override: OR_FILEINFO,
        about: "a media type followed by a script name",
        run: Run::Handler(|_w, inv, c| {
            let (name, script) = (&inv.words[0], &inv.words[1]);
            let virtual_script = match inv.words.get(2) {
                None => false,
                Some(o) if o.eq_ignore_ascii_case("virtual") => true,
                Some(o) => return Err(format!("unrecognized option '{o}'")),
            };
            // A later line for the same type in the same section replaces it.
            c.actions.actions.retain(|a| a.name != *name);
            c.actions.actions.insert(
                0,
                Action {
                    name: name.clone(),
                    script: script.clone(),
                    virtual_script,
                },
            );
            Ok(())
        }),
    },
    Directive {
        name: "Script",
        args: Args::Take2,
        req_override: ACCESS_CONF | RSRC_CONF,
        about: "a method followed by a script name",
        run: Run::Handler(|_w, inv, c| {
            let (m, script) = (&inv.words[0], &inv.words[1]);
            if method::number(m) == method::number("TRACE") {
                return Err("TRACE not allowed for Script".into());
            }
            c.actions.scripted.retain(|(name, _)| name != m);
            c.actions.scripted.insert(0, (m.clone(), script.clone()));
            Ok(())
        }),
    },
];

pub static MODULE: Module = Module {
    source: "mod_actions.c",
    identifier: "actions_module",
    builtin: false,
    directives: DIRECTIVES,
};

/// The handler, as an internal redirect the handler phase follows (the
/// script's request may go to a CGI backend): `None` declines.
#[allow(clippy::type_complexity)]
pub fn redirect_next<'a>(
    ctx: &mut Ctx<'a>,
) -> Option<Result<(Ctx<'a>, Result<(), Status>), Response>> {
    let conf = &ctx.conf.actions;
    if !conf.configured() {
        return None;
    }
    // `ap_invoke_handler` names the handler after the content type when no
    // directive set one, and `default-handler` when there is neither.
    let name = ctx.handler_name().unwrap_or("default-handler");
    if crate::modules::hooks::claimed_by_name(name) {
        return None;
    }
    let method_script = if ctx.method == "GET" || ctx.method == "HEAD" {
        ctx.args.as_ref().and_then(|_| conf.script_for("GET"))
    } else {
        conf.script_for(&ctx.method)
    };
    // A method script for a request two redirects deep is its own target
    // (a script that is not a CGI): the module declines altogether.
    if method_script.is_some() && ctx.redirects >= 2 {
        return None;
    }
    let script = match conf.action(name) {
        Some(action) => {
            if !action.virtual_script && ctx.finfo.is_none() {
                ctx.reason = Some(crate::request::Reason::new(
                    "info",
                    "actions",
                    format!("AH00652: File does not exist: {}", ctx.filename),
                ));
                return Some(Err(crate::errors::die(ctx, 404)));
            }
            let (script, name) = (action.script.clone(), name.to_string());
            // The script sees it as `REDIRECT_HANDLER`.
            ctx.env.set("HANDLER", name);
            script
        }
        None => method_script?.to_string(),
    };
    let mut url = script;
    url.push_str(&crate::uri::escape_path(ctx.uri.as_bytes()));
    if let Some(args) = &ctx.args {
        url.push('?');
        url.push_str(args);
    }
    let content_type = ctx.content_type.clone();
    Some(ctx.redirect_to_url(&url, |new| {
        // `ap_internal_redirect_handler` hands the type on.
        new.content_type = content_type;
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn action(name: &str, script: &str) -> Action {
        Action {
            name: name.into(),
            script: script.into(),
            virtual_script: false,
        }
    }

    #[test]
    fn nearer_sections_win_per_type_and_method() {
        let base = ActionsDir {
            actions: vec![action("a", "/base-a"), action("b", "/base-b")],
            scripted: vec![("PUT".into(), "/put".into()), ("GET".into(), "/get".into())],
        };
        let new = ActionsDir {
            actions: vec![action("a", "/new-a")],
            scripted: vec![("HEAD".into(), "/head".into())],
        };
        let merged = ActionsDir::merge(&base, &new);
        assert_eq!(merged.action("a").unwrap().script, "/new-a");
        assert_eq!(merged.action("b").unwrap().script, "/base-b");
        assert!(merged.action("c").is_none());
        // `HEAD` is `GET`'s number: the nearer `HEAD` line is `GET`'s script.
        assert_eq!(merged.script_for("GET"), Some("/head"));
        assert_eq!(merged.script_for("PUT"), Some("/put"));
        assert_eq!(merged.script_for("FOO"), None);
        assert!(!ActionsDir::default().configured());
    }
}
