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
//! Values are format strings (`%{VAR}e`, `%t`, `%D`, `%%`, …) evaluated at
//! the time the edit runs. Edits marked `early` run when the request has
//! just been read, from the server-level configuration only; elsewhere
//! Apache accepts and never runs them, and so does this module.

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::env::Env;
use crate::header_table::{is_protected, Output, Table};
use crate::regex_engine::Regex;
use crate::registry::{Args, Directive, Module, OR_FILEINFO};
use crate::regsub::pregsub;
use crate::request::Ctx;
use htaccel_conf::getword_conf;
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

    pub fn is_empty(&self) -> bool {
        self.input.is_empty() && self.onsuccess.is_empty() && self.always.is_empty()
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

#[derive(Clone, Debug, PartialEq, Eq)]
enum Condition {
    None,
    Early,
    Env(String),
    NotEnv(String),
}

/// One piece of a format string.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Tag {
    Text(String),
    /// `%D`: `D=` and the microseconds since the request arrived.
    Duration,
    /// `%t`: `t=` and the request time in microseconds since the epoch.
    Time,
    /// `%{VAR}e`.
    Env(String),
    /// `%{VAR}s`: an SSL variable.
    Ssl(String),
    /// `%l`: the load averages.
    LoadAvg,
}

/// One `Header` or `RequestHeader` line.
#[derive(Debug)]
pub struct Edit {
    action: Action,
    header: String,
    /// The value, or for `edit` the replacement; `note`: the note's name.
    format: Vec<Tag>,
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
    let edit = parse_edit(which, &action, hdr, value, subs, envclause)?;
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
        Some(e) if e.len() >= 5 && e[..5].eq_ignore_ascii_case("expr=") => {
            return Err(
                "Header and RequestHeader conditions \"expr=…\" are not supported by htaccel yet"
                    .into(),
            );
        }
        Some(e) => return Err(format!("Unknown parameter: {e}")),
    };
    let header = match hdr.find(':') {
        Some(i) => hdr[..i].to_string(),
        None => hdr,
    };
    let format = match format_src {
        Some(s) if s.starts_with("expr=") => {
            return Err(
                "Header and RequestHeader values \"expr=…\" are not supported by htaccel yet"
                    .into(),
            )
        }
        Some(s) => parse_format(&s)?,
        None => Vec::new(),
    };
    Ok(Edit {
        action,
        header,
        format,
        regex,
        condition,
    })
}

/// Split a value into literal text and `%` specifiers (Apache's
/// `parse_format_string`). In text, `\\`, `\r`, `\n` and `\t` are escapes;
/// any other backslash stays.
fn parse_format(s: &str) -> Result<Vec<Tag>, String> {
    let b = s.as_bytes();
    let mut tags = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            let mut text = Vec::new();
            while i < b.len() && b[i] != b'%' {
                if b[i] != b'\\' {
                    text.push(b[i]);
                    i += 1;
                    continue;
                }
                i += 1;
                match b.get(i) {
                    Some(b'\\') => text.push(b'\\'),
                    Some(b'r') => text.push(b'\r'),
                    Some(b'n') => text.push(b'\n'),
                    Some(b't') => text.push(b'\t'),
                    _ => {
                        text.push(b'\\');
                        continue;
                    }
                }
                i += 1;
            }
            tags.push(Tag::Text(String::from_utf8_lossy(&text).into_owned()));
            continue;
        }
        i += 1;
        if i >= b.len() || b[i] == b'%' {
            tags.push(Tag::Text("%".into()));
            i += 1;
            continue;
        }
        let mut arg = String::new();
        if b[i] == b'{' {
            i += 1;
            let start = i;
            while i < b.len() && b[i] != b'}' {
                i += 1;
            }
            arg = String::from_utf8_lossy(&b[start..i]).into_owned();
            // `ap_getword` skips every stop character that follows.
            while i < b.len() && b[i] == b'}' {
                i += 1;
            }
        }
        let letter = b.get(i).copied();
        i += 1;
        tags.push(match letter {
            Some(b'D') => Tag::Duration,
            Some(b't') => Tag::Time,
            Some(b'e') => Tag::Env(arg),
            Some(b's') => Tag::Ssl(arg),
            Some(b'l') => Tag::LoadAvg,
            Some(c @ (b'i' | b'b')) => return Err(format!(
                "Header format %{} (worker counts of the scoreboard) is not supported by htaccel",
                char::from(c)
            )),
            Some(c) => {
                let shown = s[i - 1..].chars().next().unwrap_or(char::from(c));
                return Err(format!("Unrecognized header format %{shown}"));
            }
            None => return Err("Unrecognized header format %".into()),
        });
    }
    Ok(tags)
}

/// What format specifiers read.
struct Vars<'a> {
    env: &'a Env,
    request_time_us: i64,
    now_us: i64,
    secure: bool,
}

impl Vars<'_> {
    fn expand(&self, tags: &[Tag]) -> Vec<u8> {
        let mut out = Vec::new();
        for tag in tags {
            match tag {
                Tag::Text(t) => out.extend_from_slice(t.as_bytes()),
                Tag::Duration => out.extend_from_slice(
                    format!("D={}", self.now_us - self.request_time_us).as_bytes(),
                ),
                Tag::Time => {
                    out.extend_from_slice(format!("t={}", self.request_time_us).as_bytes())
                }
                Tag::Env(name) => match self.env.get(name) {
                    Some(v) => out.extend(unwrap_header(v.as_bytes())),
                    None => out.extend_from_slice(b"(null)"),
                },
                // Without TLS there are no SSL variables; with it only
                // `HTTPS` is known here.
                Tag::Ssl(name) if self.secure && name == "HTTPS" => out.extend_from_slice(b"on"),
                Tag::Ssl(_) => out.extend_from_slice(b"(null)"),
                Tag::LoadAvg => out.extend_from_slice(load_average().as_bytes()),
            }
        }
        out
    }
}

/// Line breaks in a variable become spaces, so a value cannot split a header.
fn unwrap_header(v: &[u8]) -> impl Iterator<Item = u8> + '_ {
    v.iter()
        .map(|&c| if c == b'\r' || c == b'\n' { b' ' } else { c })
}

fn load_average() -> String {
    let mut l = [0f64; 3];
    // SAFETY: getloadavg writes at most the 3 elements it is given.
    let n = unsafe { libc::getloadavg(l.as_mut_ptr(), 3) };
    if n < 3 {
        l = [-1.0; 3];
    }
    format!("l={:.2}/{:.2}/{:.2}", l[0], l[1], l[2])
}

/// The tables an edit list works on, moved in for the run and out after.
#[derive(Default)]
struct Work {
    target: Target,
    /// The request headers, joined as Apache holds them.
    input: Table,
    err: Table,
    out: Table,
    /// `r->content_type`; followed only for response tables.
    content_type: Option<String>,
    type_changed: bool,
    notes: Vec<(String, String)>,
}

#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum Target {
    #[default]
    In,
    Err,
    Out,
}

impl Work {
    fn table(&mut self) -> &mut Table {
        match self.target {
            Target::In => &mut self.input,
            Target::Err => &mut self.err,
            Target::Out => &mut self.out,
        }
    }

    fn set_type(&mut self, value: Option<Vec<u8>>) {
        self.content_type = value.map(|v| String::from_utf8_lossy(&v).into_owned());
        self.type_changed = true;
    }

    /// Run `edits` on the target table (Apache's `do_headers_fixup`).
    /// `early` selects the edits marked `early` and nothing else. Returns
    /// `false` when a replacement failed (too long), which ends the list.
    fn run(&mut self, edits: &[Arc<Edit>], vars: &Vars<'_>, early: bool) -> bool {
        for e in edits {
            if (e.condition == Condition::Early) != early {
                continue;
            }
            match &e.condition {
                Condition::Env(v) if !vars.env.contains(v) => continue,
                Condition::NotEnv(v) if vars.env.contains(v) => continue,
                _ => {}
            }
            let response = self.target != Target::In;
            if response
                && is_protected(&e.header)
                && !matches!(e.action, Action::Echo | Action::Note)
            {
                continue;
            }
            let is_type = response && e.header.eq_ignore_ascii_case("Content-Type");
            match e.action {
                Action::Add => {
                    let v = vars.expand(&e.format);
                    self.table().add(&e.header, v);
                }
                Action::Append => {
                    let v = vars.expand(&e.format);
                    self.table().merge(&e.header, &v);
                }
                Action::Merge => {
                    let new = vars.expand(&e.format);
                    let table = self.table();
                    match table.get(&e.header) {
                        None => table.add(&e.header, new),
                        Some(old) if !has_token(old, &new) => table.merge(&e.header, &new),
                        Some(_) => {}
                    }
                }
                Action::Set => self.set(e, vars, is_type),
                Action::SetIfEmpty => {
                    if self.table().get(&e.header).is_none() {
                        self.set(e, vars, is_type);
                    }
                }
                Action::Unset => {
                    self.table().unset(&e.header);
                    if is_type {
                        self.set_type(None);
                    }
                }
                Action::Echo => {
                    let re = e.regex.as_ref().expect("echo has a regex");
                    let Work { input, out, .. } = self;
                    for (name, value) in &input.entries {
                        if re.is_match(name.as_bytes()) && !is_protected(name) {
                            out.add(name, value.clone());
                        }
                    }
                }
                Action::Edit | Action::EditAll => {
                    if e.header.eq_ignore_ascii_case("Content-Type") {
                        if let Some(t) = self.content_type.clone() {
                            let Some(new) = edit_value(e, t.as_bytes(), vars) else {
                                return false;
                            };
                            if response {
                                self.set_type(Some(new));
                            }
                        }
                    }
                    let table = self.table();
                    if table.get(&e.header).is_some() {
                        let mut edited = Vec::new();
                        for (name, value) in &table.entries {
                            if name.eq_ignore_ascii_case(&e.header) {
                                let Some(new) = edit_value(e, value, vars) else {
                                    return false;
                                };
                                edited.push((name.clone(), new));
                            }
                        }
                        table.unset(&e.header);
                        table.entries.extend(edited);
                    }
                }
                Action::Note => {
                    let name = String::from_utf8_lossy(&vars.expand(&e.format)).into_owned();
                    let value = self
                        .table()
                        .get(&e.header)
                        .map(|v| String::from_utf8_lossy(v).into_owned());
                    self.notes.retain(|(n, _)| !n.eq_ignore_ascii_case(&name));
                    if let Some(v) = value {
                        self.notes.push((name, v));
                    }
                }
            }
        }
        true
    }

    /// `set`; for `Content-Type` on a response also the content type.
    fn set(&mut self, e: &Edit, vars: &Vars<'_>, is_type: bool) {
        if is_type {
            self.set_type(Some(vars.expand(&e.format)));
        }
        let v = vars.expand(&e.format);
        self.table().set(&e.header, v);
    }
}

/// Whether the comma-separated list `old` has `new` as one of its items,
/// compared exactly; quoted strings may hold commas.
fn has_token(old: &[u8], new: &[u8]) -> bool {
    let mut i = 0;
    while i < old.len() {
        while i < old.len() && old[i].is_ascii_whitespace() || i < old.len() && old[i] == 0x0b {
            i += 1;
        }
        let start = i;
        while i < old.len() && old[i] != b',' {
            let c = old[i];
            i += 1;
            if c == b'"' {
                while i < old.len() {
                    let q = old[i];
                    i += 1;
                    if q == b'"' {
                        break;
                    }
                }
            }
        }
        if &old[start..i] == new {
            return true;
        }
        if i < old.len() {
            i += 1;
        }
    }
    false
}

/// `edit`/`edit*` on one value: the first match replaced by the expanded
/// replacement with `$N` filled in; for `edit*` the same again on what
/// follows the match, as a string of its own (Apache 2.4 recurses, so `^`
/// matches again there). `None` when a result would be too long.
fn edit_value(e: &Edit, value: &[u8], vars: &Vars<'_>) -> Option<Vec<u8>> {
    let re = e.regex.as_ref()?;
    let template = vars.expand(&e.format);
    let mut out = Vec::new();
    let mut rest = value;
    while let Some(caps) = re.captures(rest) {
        let (start, end) = caps[0]?;
        out.extend_from_slice(&rest[..start]);
        out.extend(pregsub(&template, rest, &caps)?);
        rest = &rest[end..];
        // An empty match would make Apache recurse without end (the child
        // process crashes); stop instead.
        if e.action == Action::Edit || start == end {
            break;
        }
        if out.len() >= crate::regsub::MAX_LEN {
            return None;
        }
    }
    out.extend_from_slice(rest);
    (out.len() < crate::regsub::MAX_LEN).then_some(out)
}

fn vars<'a>(ctx: &'a Ctx<'_>) -> Vars<'a> {
    Vars {
        env: &ctx.env,
        request_time_us: ctx.request_time_us,
        now_us: ctx.engine.request_time_us(),
        secure: ctx.req.secure,
    }
}

/// The fixup: `RequestHeader` edits on the request headers.
pub fn fixup(ctx: &mut Ctx<'_>) {
    let conf = ctx.conf.clone();
    if conf.headers.input.is_empty() {
        return;
    }
    let mut work = Work {
        input: Table::of(&ctx.headers_in),
        notes: std::mem::take(&mut ctx.notes),
        ..Default::default()
    };
    work.run(&conf.headers.input, &vars(ctx), false);
    ctx.notes = work.notes;
    ctx.headers_in = work.input.into_request();
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
    let v = vars(ctx);
    for (list, target) in [
        (&h.input, Target::In),
        (&h.always, Target::Err),
        (&h.onsuccess, Target::Out),
    ] {
        work.target = target;
        if !work.run(list, &v, true) {
            break;
        }
    }
    ctx.notes = work.notes;
    ctx.headers_in = work.input.into_request();
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
    };
    let v = vars(ctx);
    if work.run(&h.always, &v, false) && !o.error {
        work.target = Target::Out;
        work.run(&h.onsuccess, &v, false);
    }
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
        run: |_w: &mut Walker<'_>, inv, c| header_cmd("Header", Which::OnSuccess, inv, c),
    },
    Directive {
        name: "RequestHeader",
        args: Args::Raw,
        req_override: OR_FILEINFO,
        about: "an action, header and value followed by optional env clause",
        run: |_w: &mut Walker<'_>, inv, c| header_cmd("RequestHeader", Which::Input, inv, c),
    },
];

pub static MODULE: Module = Module {
    source: "mod_headers.c",
    identifier: "headers_module",
    builtin: false,
    directives: DIRECTIVES,
};
