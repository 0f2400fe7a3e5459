//! `<If>`, `<ElseIf>` and `<Else>`: per-directory configuration that
//! applies when an expression holds for the request.
//!
//! Reading: the condition is compiled when the file is read (a bad
//! expression fails the file with `Cannot parse condition clause: …`),
//! the body becomes a configuration of its own, and the section is
//! appended to the enclosing configuration's list (Apache's `sec_if`),
//! which merging appends level after level. `<ElseIf>`/`<Else>` must
//! follow an `<If>`/`<ElseIf>` of the same list.
//!
//! Serving: after the `<Location>` walk, [`if_walk`] goes through the
//! list of the request's merged configuration as Apache's `ap_if_walk`
//! does: an `<ElseIf>`/`<Else>` is skipped once an earlier branch of its
//! chain matched; the matching sections are merged together and then onto
//! the request's configuration; the `<If>`s nested in them are walked the
//! same way, level by level.

use crate::config::{Invocation, SectionKind, Walker};
use crate::dirconf::DirConf;
use crate::expr::{Expr, RequestExpr};
use crate::registry::{ACCESS_CONF, OR_ALL};
use crate::request::Ctx;
use htaccel_conf::Origin;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IfKind {
    If,
    ElseIf,
    Else,
}

impl IfKind {
    fn name(self) -> &'static str {
        match self {
            IfKind::If => "If",
            IfKind::ElseIf => "ElseIf",
            IfKind::Else => "Else",
        }
    }

    /// Apache's `AP_CONDITION_IF` bit: a condition is evaluated.
    fn has_condition(self) -> bool {
        self != IfKind::Else
    }

    /// Apache's `AP_CONDITION_ELSE` bit: part of a chain.
    fn continues_chain(self) -> bool {
        self != IfKind::If
    }
}

/// One `<If>`/`<ElseIf>`/`<Else>` with what it configures.
#[derive(Clone, Debug)]
pub struct IfSection {
    pub kind: IfKind,
    /// `None` for `<Else>`.
    pub condition: Option<Expr>,
    pub conf: Arc<DirConf>,
    pub origin: Origin,
}

pub fn run_if(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    section(w, inv, c, IfKind::If)
}

pub fn run_else_if(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
) -> Result<(), String> {
    section(w, inv, c, IfKind::ElseIf)
}

pub fn run_else(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    section(w, inv, c, IfKind::Else)
}

fn section(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    target: &mut DirConf,
    kind: IfKind,
) -> Result<(), String> {
    let name = kind.name();
    if w.ctx.within(SectionKind::Limit) {
        return Err(format!(
            "<{name}> cannot occur within <Limit> or <LimitExcept> section"
        ));
    }
    if !inv.closed {
        return Err(format!(
            "{}:{}: <{}> was not closed.",
            inv.origin.file, inv.origin.line, inv.name
        ));
    }
    let condition = match kind {
        IfKind::Else => {
            if !inv.raw.trim().is_empty() {
                return Err("<Else> does not take an argument".into());
            }
            None
        }
        _ => {
            let Some(text) = inv.words.first() else {
                return Err(format!("<{name}> directive requires additional arguments"));
            };
            let expr = Expr::parse_restricted(text, w.ctx.htaccess)
                .map_err(|e| format!("Cannot parse condition clause: {e}"))?;
            Some(expr)
        }
    };
    let mut conf = DirConf::for_section();
    let saved = w.ctx.override_mask;
    // Apache's `cmd->path` inside the body: a pseudo path that tells
    // directives they are in a section (and matches no file name).
    let saved_path = w.ctx.path.replace("*If".to_string());
    if !w.ctx.htaccess {
        w.ctx.override_mask = OR_ALL | ACCESS_CONF;
    }
    let walked = w.walk_nested(inv.children, &mut conf, SectionKind::If, inv.name);
    w.ctx.override_mask = saved;
    w.ctx.path = saved_path;
    walked.map_err(|e| w.nested(e))?;
    if kind.continues_chain() {
        let follows_if = target
            .core
            .if_sections
            .last()
            .is_some_and(|last| last.kind.has_condition());
        if !follows_if {
            return Err("<Else> or <ElseIf> section without previous <If> or <ElseIf> section in same scope".into());
        }
    }
    target.core.if_sections.push(Arc::new(IfSection {
        kind,
        condition,
        conf: Arc::new(conf),
        origin: inv.origin.clone(),
    }));
    if condition_words(kind, inv) > 1 {
        return Err(format!("Multiple <{name}> arguments not supported."));
    }
    Ok(())
}

/// How many words the section line has where one is expected.
fn condition_words(kind: IfKind, inv: &Invocation<'_>) -> usize {
    match kind {
        IfKind::Else => 0,
        _ => inv.words.len(),
    }
}

/// Apache's `ap_if_walk`: merge the sections whose conditions hold onto
/// the request's configuration, then walk the `<If>`s nested in them.
pub fn if_walk(ctx: &mut Ctx<'_>) {
    let mut sections = ctx.conf.core.if_sections.clone();
    while !sections.is_empty() {
        let mut merged: Option<DirConf> = None;
        // Apache's prev_result: 1 matched, 0 not, -1 after an `<Else>`.
        let mut prev: i8 = -1;
        for sec in &sections {
            if sec.kind.continues_chain() && prev == 1 {
                continue;
            }
            if let Some(cond) = &sec.condition {
                if !holds(ctx, cond, &sec.origin) {
                    prev = 0;
                    continue;
                }
                prev = 1;
            } else {
                prev = -1;
            }
            merged = Some(match merged {
                None => (*sec.conf).clone(),
                Some(m) => DirConf::merge(&m, &sec.conf),
            });
        }
        let Some(m) = merged else {
            return;
        };
        ctx.conf = Arc::new(DirConf::merge(&ctx.conf, &m));
        sections = m.core.if_sections;
    }
}

/// Evaluate one condition for the walk: an evaluation error is logged and
/// counts as false; the headers it read go into `Vary`.
fn holds(ctx: &mut Ctx<'_>, cond: &Expr, origin: &Origin) -> bool {
    let out = cond.eval(&RequestExpr::new(ctx));
    match out.value {
        Ok(v) => {
            if let Some(vary) = out.vary {
                merge_vary(&mut ctx.headers_out, &vary);
            }
            v
        }
        Err(e) => {
            let log = &ctx.site.log;
            let client = Some(ctx.req.remote());
            log.error(
                "error",
                "core",
                client,
                &format!(
                    "Evaluation of expression from {}:{} failed: {e}",
                    origin.file, origin.line
                ),
            );
            log.error(
                "error",
                "core",
                client,
                &format!("AH00039: Failed to evaluate <If > condition: {e}"),
            );
            false
        }
    }
}

/// `apr_table_merge(headers_out, "Vary", value)`, on any header list
/// (the request's tables, a [`crate::http::Response`]'s).
pub fn merge_vary<N: AsRef<str> + From<&'static str>>(headers: &mut Vec<(N, String)>, value: &str) {
    match headers
        .iter_mut()
        .find(|(n, _)| n.as_ref().eq_ignore_ascii_case("Vary"))
    {
        Some((_, v)) => {
            v.push_str(", ");
            v.push_str(value);
        }
        None => headers.push(("Vary".into(), value.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vary_merges_into_one_field() {
        let mut h = vec![("X".to_string(), "1".to_string())];
        merge_vary(&mut h, "User-Agent");
        merge_vary(&mut h, "Accept");
        assert_eq!(h[1], ("Vary".to_string(), "User-Agent, Accept".to_string()));
    }

    #[test]
    fn chain_bits() {
        assert!(IfKind::If.has_condition() && !IfKind::If.continues_chain());
        assert!(IfKind::ElseIf.has_condition() && IfKind::ElseIf.continues_chain());
        assert!(!IfKind::Else.has_condition() && IfKind::Else.continues_chain());
    }
}
