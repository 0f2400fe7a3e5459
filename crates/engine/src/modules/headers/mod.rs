//! mod_headers: `Header` and `RequestHeader`.
//!
//! Each directive becomes one edit — `set`, `append`, `add`, `merge`,
//! `setifempty`, `unset`, `echo`, `edit`, `edit*`, `note` — of one of
//! three lists: request headers (`RequestHeader`, applied in the fixups
//! phase, after per-directory rewriting and access control), the normal
//! response table (`Header` / `Header onsuccess`) and the error table
//! (`Header always`). Lists merge by appending the child's edits to the
//! parent's, so the deepest `set` or `unset` wins.
//!
//! Which edits reach a response follows from the two tables Apache keeps
//! (see `crate::header_table`): a response a handler produced (200, 304,
//! 412, …) gets the `always` edits, then the `onsuccess` ones; a response
//! from the error path (404 from the core, 403, redirects) gets only the
//! `always` edits, made on a fresh error table — so `Header always unset`
//! cannot remove what a handler put in the normal table. `Header set
//! Content-Type` changes the response's content type itself; `echo` copies
//! request headers whose name matches a regex into the normal table.
//!
//! Values are format strings (`%{VAR}e`, `%t`, `%D`, `%%`, …) or `expr=`
//! string expressions, evaluated when the edit runs; a condition is
//! `env=[!]VAR` or an `expr=` expression. Edits marked `early` run when the request has
//! just been read, from the server-level configuration only; elsewhere
//! Apache accepts and never runs them, and so does this module.

mod edit;
mod format;

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::expr::Expr;
use crate::header_table::{Output, Table};
use crate::regex_engine::Regex;
use crate::registry::{Args, Directive, Module, Run, OR_FILEINFO};
use crate::request::{Ctx, Status};
use edit::{Target, Work};
use format::{Value, Vars};
use htaccel_conf::getword_conf;
use std::borrow::Cow;
use std::sync::Arc;

/// The module's per-directory slot: the three edit lists.
#[derive(Clone, Debug, Default)]
pub struct HeadersDir {
    /// `RequestHeader`.
    pub input: Vec<Arc<Edit>>,
    /// `Header` / `Header onsuccess`.
    pub onsuccess: Vec<Arc<Edit>>,
    /// `Header always`.
    pub always: Vec<Arc<Edit>>,
}

impl HeadersDir {
    /// The parent's edits, then the child's.
    pub fn merge(base: &HeadersDir, add: &HeadersDir) -> HeadersDir {
        let cat = |a: &Vec<Arc<Edit>>, b: &Vec<Arc<Edit>>| {
            if b.is_empty() {
                a.clone()
            } else {
                a.iter().chain(b).cloned().collect()
            }
        };
        HeadersDir {
            input: cat(&base.input, &add.input),
            onsuccess: cat(&base.onsuccess, &add.onsuccess),
            always: cat(&base.always, &add.always),
        }
    }

    /// Whether `Header` edits are configured.
    pub fn has_output(&self) -> bool {
        !self.onsuccess.is_empty() || !self.always.is_empty()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    Add,
    Set,
    Append,
    Merge,
    Unset,
    Echo,
    Edit,
    EditAll,
    SetIfEmpty,
    Note,
}

#[derive(Debug)]
enum Condition {
    None,
    Early,
    Env(String),
    NotEnv(String),
    Expr(Expr),
}

impl PartialEq for Condition {
    /// Only to tell `early` edits apart.
    fn eq(&self, other: &Self) -> bool {
        matches!(
            (self, other),
            (Condition::Early, Condition::Early) | (Condition::None, Condition::None)
        )
    }
}

/// One `Header` or `RequestHeader` line.
#[derive(Debug)]
pub struct Edit {
    action: Action,
    header: String,
    /// The value, or for `edit` the replacement; `note`: the note's name.
    value: Value,
    /// `edit`: the pattern on values; `echo`: the pattern on names.
    regex: Option<Regex>,
    condition: Condition,
}

/// Which list a directive adds to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Which {
    Input,
    OnSuccess,
    Always,
}

const ACTIONS: &str = "first argument must be 'add', 'set', 'setifempty', 'append', 'merge', 'unset', 'echo', 'note', 'edit', or 'edit*'.";

/// `Header` and `RequestHeader`: words taken one by one as Apache does, so
/// the same lines are refused with the same messages.
fn header_cmd(
    name: &str,
    which: Which,
    w: &Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
) -> Result<(), String> {
    let mut args = inv.raw.as_str();
    let mut which = which;
    let mut action = getword_conf(&mut args);
    if which == Which::OnSuccess {
        if action.eq_ignore_ascii_case("always") {
            which = Which::Always;
            action = getword_conf(&mut args);
        } else if action.eq_ignore_ascii_case("onsuccess") {
            action = getword_conf(&mut args);
        }
    }
    let next = |args: &mut &str| (!args.is_empty()).then(|| getword_conf(args));
    let hdr = getword_conf(&mut args);
    let value = next(&mut args);
    let subs = next(&mut args);
    let envclause = next(&mut args);
    if !args.is_empty() {
        return Err(format!("{name} has too many arguments"));
    }
    let edit = parse_edit(which, &action, hdr, value, subs, envclause, w.ctx.htaccess)?;
    let list = match which {
        Which::Input => &mut c.headers.input,
        Which::OnSuccess => &mut c.headers.onsuccess,
        Which::Always => &mut c.headers.always,
    };
    list.push(Arc::new(edit));
    Ok(())
}

fn parse_edit(
    which: Which,
    action: &str,
    hdr: String,
    mut value: Option<String>,
    subs: Option<String>,
    mut envclause: Option<String>,
    restricted: bool,
) -> Result<Edit, String> {
    let action = match action.to_ascii_lowercase().as_str() {
        "set" => Action::Set,
        "setifempty" => Action::SetIfEmpty,
        "add" => Action::Add,
        "append" => Action::Append,
        "merge" => Action::Merge,
        "unset" => Action::Unset,
        "echo" => Action::Echo,
        "edit" => Action::Edit,
        "edit*" => Action::EditAll,
        "note" => Action::Note,
        _ => return Err(ACTIONS.into()),
    };
    let mut regex = None;
    let mut format_src = value.clone();
    if matches!(action, Action::Edit | Action::EditAll) {
        let Some(subs) = subs else {
            return Err("Header edit requires a match and a substitution".into());
        };
        let pattern = value.as_deref().unwrap_or("");
        regex = Some(
            Regex::new(pattern, false)
                .map_err(|_| "Header edit regex could not be compiled".to_string())?,
        );
        format_src = Some(subs);
    } else {
        if envclause.is_some() {
            return Err("Too many arguments to directive".into());
        }
        envclause = subs;
    }
    match action {
        Action::Unset | Action::Echo => {
            if let Some(v) = value.take() {
                if envclause.is_some() {
                    return Err(if action == Action::Unset {
                        "header unset takes two arguments".into()
                    } else {
                        "Header echo takes two arguments".into()
                    });
                }
                envclause = Some(v);
            }
            format_src = None;
            if action == Action::Echo {
                if which == Which::Input {
                    return Err("Header echo only valid on Header directives".into());
                }
                regex = Some(
                    Regex::new(&hdr, false)
                        .map_err(|_| "Header echo regex could not be compiled".to_string())?,
                );
            }
        }
        _ if value.is_none() => return Err("Header requires three arguments".into()),
        _ => {}
    }
    let condition = match envclause {
        None => Condition::None,
        Some(e) if e.eq_ignore_ascii_case("early") => Condition::Early,
        Some(e) if e.len() >= 4 && e[..4].eq_ignore_ascii_case("env=") => {
            let var = &e[4..];
            if var.is_empty() || var == "!" {
                return Err("error: missing environment variable name. envclause should be in the form env=envar ".into());
            }
            match var.strip_prefix('!') {
                Some(v) => Condition::NotEnv(v.to_string()),
                None => Condition::Env(var.to_string()),
            }
        }
        Some(e) if e.len() >= 5 && e[..5].eq_ignore_ascii_case("expr=") => Condition::Expr(
            Expr::parse_restricted(&e[5..], restricted)
                .map_err(|err| format!("Can't parse envclause/expression: {err}"))?,
        ),
        Some(e) => return Err(format!("Unknown parameter: {e}")),
    };
    let header = match hdr.find(':') {
        Some(i) => hdr[..i].to_string(),
        None => hdr,
    };
    let value = match format_src {
        Some(s) => Value::parse(&s, restricted)?,
        None => Value::None,
    };
    Ok(Edit {
        action,
        header,
        value,
        regex,
        condition,
    })
}

/// `Vary` for what `expr=` conditions read, merged into the normal table.
fn add_vary(work: &mut Work) {
    for v in std::mem::take(&mut work.vary) {
        work.out.merge("Vary", v.as_bytes());
    }
}

/// The fixup: `RequestHeader` edits on the request headers.
pub fn fixup(ctx: &mut Ctx<'_>) -> Result<(), Status> {
    let conf = ctx.conf.clone();
    if conf.headers.input.is_empty() {
        return Ok(());
    }
    let mut work = Work {
        input: Table::of(&ctx.headers_in),
        notes: std::mem::take(&mut ctx.notes),
        ..Default::default()
    };
    work.run(&conf.headers.input, &Vars::new(ctx, None), false);
    ctx.notes = std::mem::take(&mut work.notes);
    ctx.headers_in = Cow::Owned(std::mem::take(&mut work.input).into_request());
    if !work.vary.is_empty() {
        work.out = Table::from_strings(std::mem::take(&mut ctx.headers_out));
        add_vary(&mut work);
        ctx.headers_out = work.out.into_strings().collect();
    }
    Ok(())
}

/// `post_read_request`: the `early` edits of the server-level configuration.
pub fn early(ctx: &mut Ctx<'_>) {
    let base = ctx.site.base.clone();
    let h = &base.headers;
    let has_early = |l: &[Arc<Edit>]| l.iter().any(|e| e.condition == Condition::Early);
    if !has_early(&h.input) && !has_early(&h.onsuccess) && !has_early(&h.always) {
        return;
    }
    let mut work = Work {
        input: Table::of(&ctx.headers_in),
        err: Table::from_strings(std::mem::take(&mut ctx.err_headers_out)),
        out: Table::from_strings(std::mem::take(&mut ctx.headers_out)),
        notes: std::mem::take(&mut ctx.notes),
        ..Default::default()
    };
    let vars = Vars::new(ctx, None);
    for (list, target) in [
        (&h.input, Target::In),
        (&h.always, Target::Err),
        (&h.onsuccess, Target::Out),
    ] {
        work.target = target;
        if !work.run(list, &vars, true) {
            break;
        }
    }
    add_vary(&mut work);
    ctx.notes = work.notes;
    ctx.headers_in = Cow::Owned(work.input.into_request());
    ctx.err_headers_out = work.err.into_strings().collect();
    ctx.headers_out = work.out.into_strings().collect();
}

/// The output filter: `Header always` edits on the error table, then — for
/// a response a handler produced — `Header` edits on the normal table.
pub fn output(ctx: &mut Ctx<'_>, o: &mut Output) {
    let conf = ctx.conf.clone();
    let h = &conf.headers;
    if h.always.is_empty() && (o.error || h.onsuccess.is_empty()) {
        return;
    }
    let mut work = Work {
        input: Table::of(&ctx.headers_in),
        err: std::mem::take(&mut o.err),
        out: std::mem::take(&mut o.out),
        content_type: o.content_type.take(),
        type_changed: o.content_type_changed,
        notes: std::mem::take(&mut ctx.notes),
        target: Target::Err,
        vary: Vec::new(),
    };
    let vars = Vars::new(ctx, Some(o.status));
    if work.run(&h.always, &vars, false) && !o.error {
        work.target = Target::Out;
        work.run(&h.onsuccess, &vars, false);
    }
    add_vary(&mut work);
    ctx.notes = work.notes;
    o.err = work.err;
    o.out = work.out;
    o.content_type = work.content_type;
    o.content_type_changed = work.type_changed;
}

pub static DIRECTIVES: &[Directive] = &[
    Directive {
        name: "Header",
        args: Args::Raw,
        req_override: OR_FILEINFO,
        about: "an optional condition, an action, header and value followed by optional env clause",
        run: Run::Handler(|w, inv, c| header_cmd("Header", Which::OnSuccess, w, inv, c)),
    },
    Directive {
        name: "RequestHeader",
        args: Args::Raw,
        req_override: OR_FILEINFO,
        about: "an action, header and value followed by optional env clause",
        run: Run::Handler(|w, inv, c| header_cmd("RequestHeader", Which::Input, w, inv, c)),
    },
];

pub static MODULE: Module = Module {
    source: "mod_headers.c",
    identifier: "headers_module",
    builtin: false,
    directives: DIRECTIVES,
};
