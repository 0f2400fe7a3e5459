//! Applying a list of edits to a header table: Apache's
//! `do_headers_fixup`, with the content type following `Content-Type`
//! edits of a response and `expr=` conditions seeing the tables as they
//! stand.

use super::format::Vars;
use super::{Action, Condition, Edit};
use crate::expr::{ExprContext, RequestExpr, Var};
use crate::header_table::{is_protected, Table};
use crate::regsub::pregsub;
use std::borrow::Cow;
use std::net::IpAddr;
use std::sync::Arc;

/// Which table a list edits.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Target {
    /// The request headers (`RequestHeader`).
    #[default]
    In,
    /// `r->err_headers_out` (`Header always`).
    Err,
    /// `r->headers_out` (`Header`).
    Out,
}

/// The tables an edit list works on, moved in for the run and out after.
#[derive(Default)]
pub(super) struct Work {
    pub target: Target,
    /// The request headers, as Apache holds them.
    pub input: Table,
    pub err: Table,
    pub out: Table,
    /// `r->content_type`; followed only for response tables.
    pub content_type: Option<String>,
    pub type_changed: bool,
    pub notes: Vec<(String, String)>,
    /// Request headers `expr=` conditions read, for `Vary` (merged into
    /// `r->headers_out` by the caller).
    pub vary: Vec<String>,
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

    /// Whether `e`'s condition lets it run now.
    fn applies(&mut self, e: &Edit, vars: &Vars<'_, '_>) -> bool {
        match &e.condition {
            Condition::Env(v) => vars.ctx.env.contains(v),
            Condition::NotEnv(v) => !vars.ctx.env.contains(v),
            Condition::Expr(expr) => {
                let outcome = expr.eval(&vars.view(self));
                match outcome.value {
                    // Apache logs the failure and makes the edit anyway.
                    Err(err) => {
                        vars.log(&format!(
                            "AH01501: Failed to evaluate expression ({err}) - ignoring"
                        ));
                        true
                    }
                    Ok(yes) => {
                        self.vary.extend(outcome.vary);
                        yes
                    }
                }
            }
            Condition::None | Condition::Early => true,
        }
    }

    /// Run `edits` on the target table. `early` selects the edits marked
    /// `early` and nothing else. Returns `false` when a replacement failed
    /// (too long), which ends the list.
    pub fn run(&mut self, edits: &[Arc<Edit>], vars: &Vars<'_, '_>, early: bool) -> bool {
        for e in edits {
            if (e.condition == Condition::Early) != early || !self.applies(e, vars) {
                continue;
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
                    let v = vars.expand(&e.value, self);
                    self.table().add(&e.header, v);
                }
                Action::Append => {
                    let v = vars.expand(&e.value, self);
                    self.table().merge(&e.header, &v);
                }
                Action::Merge => {
                    let new = vars.expand(&e.value, self);
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
                    let template = vars.expand(&e.value, self);
                    if e.header.eq_ignore_ascii_case("Content-Type") {
                        if let Some(t) = self.content_type.clone() {
                            let Some(new) = edit_value(e, t.as_bytes(), &template) else {
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
                                let Some(new) = edit_value(e, value, &template) else {
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
                    let name = String::from_utf8_lossy(&vars.expand(&e.value, self)).into_owned();
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
    fn set(&mut self, e: &Edit, vars: &Vars<'_, '_>, is_type: bool) {
        let v = vars.expand(&e.value, self);
        if is_type {
            self.set_type(Some(v.clone()));
        }
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

/// `edit`/`edit*` on one value: the first match replaced by `template`
/// with `$N` filled in; for `edit*` the same again on what follows the
/// match, as a string of its own (Apache 2.4 recurses, so `^` matches again
/// there). `None` when a result would be too long.
fn edit_value(e: &Edit, value: &[u8], template: &[u8]) -> Option<Vec<u8>> {
    let re = e.regex.as_ref()?;
    let mut out = Vec::new();
    let mut rest = value;
    while let Some(caps) = re.captures(rest) {
        let (start, end) = caps[0]?;
        out.extend_from_slice(&rest[..start]);
        out.extend(pregsub(template, rest, &caps)?);
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

/// The request as an `expr=` of mod_headers sees it: the content type and
/// the header tables as the edits so far left them.
pub(super) struct View<'w, 'r, 'c> {
    pub base: RequestExpr<'r, 'c>,
    pub work: &'w Work,
}

impl ExprContext for View<'_, '_, '_> {
    fn ssl_var(&self, name: &str) -> Option<String> {
        self.base.ssl_var(name)
    }

    fn var(&self, var: Var) -> Option<Cow<'_, [u8]>> {
        if var == Var::ContentType && self.work.target != Target::In {
            return self
                .work
                .content_type
                .as_deref()
                .map(|t| Cow::Borrowed(t.as_bytes()));
        }
        self.base.var(var)
    }

    fn request_header(&self, name: &str) -> Option<Cow<'_, [u8]>> {
        self.work.input.get(name).map(Cow::Borrowed)
    }

    fn response_header(&self, name: &str) -> Option<Cow<'_, [u8]>> {
        self.work
            .out
            .get(name)
            .or_else(|| self.work.err.get(name))
            .map(Cow::Borrowed)
    }

    fn env(&self, name: &str) -> Option<Cow<'_, [u8]>> {
        self.base.env(name)
    }

    fn note(&self, name: &str) -> Option<Cow<'_, [u8]>> {
        self.work
            .notes
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| Cow::Borrowed(v.as_bytes()))
    }

    fn remote_ip(&self) -> Option<IpAddr> {
        self.base.remote_ip()
    }

    fn url_accessible(&self, url: &str) -> bool {
        self.base.url_accessible(url)
    }

    fn file_accessible(&self, path: &str) -> bool {
        self.base.file_accessible(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_tokens() {
        assert!(has_token(b"a, b", b"b"));
        assert!(!has_token(b"a , b", b"a"));
        assert!(has_token(b"\"x,y\", z", b"\"x,y\""));
        assert!(!has_token(b"\"x,y\", z", b"y\""));
        assert!(!has_token(b"", b""));
    }
}
