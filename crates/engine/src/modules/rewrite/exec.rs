//! The rule loop (Apache's `apply_rewrite_list` and `apply_rewrite_rule`),
//! pure over a [`State`] (what the rules change: file name, path info,
//! query string) and a [`Host`] (what they read).
//!
//! The same loop serves both contexts. In a directory context the subject
//! is the file name plus path info with the directory prefix removed, and
//! a relative substitution gets the prefix back; in server context the
//! subject is the URL-path. What the caller does with the result — an
//! external redirect, an internal redirect, a status — is decided by the
//! hooks, as Apache decides it in `hook_fixup` and `hook_uri2file`.

use super::parse::{cflag, flag, Cond, CondKind, Rule};
use super::variable::Var;
use super::vars::{self, Current, EnvSpec, Fact, Host, Qmark, Scope, Template, VaryNote};
use std::borrow::Cow;
use std::sync::Arc;

/// The parts of the request the rules change.
#[derive(Clone, Debug, Default)]
pub struct State {
    /// `r->filename`: the URL-path in server context, a file name in a
    /// directory context; after a rule, whatever it produced.
    pub filename: String,
    pub path_info: String,
    pub args: Option<String>,
    /// `r->status` as a rule set it (`[R=…]`, `[F]`, …).
    pub status: u16,
    /// `[T=]`, `[H=]` remembered for the end of the fixups.
    pub forced_type: Option<String>,
    pub forced_handler: Option<String>,
    /// Request headers the applied rules depended on (`Vary`).
    pub vary: Vec<String>,
    /// An `[END]` rule applied.
    pub end: bool,
    /// An absolute URL naming this server was cut down to its path.
    pub uri_reduced: bool,
}

/// The directory context of a per-directory rule list.
#[derive(Clone, Copy, Debug)]
pub struct PerDir<'a> {
    /// The directory with its trailing slash (or a pseudo directory for
    /// rules inside `<Files>`/`<If>`).
    pub directory: &'a str,
    pub base: Option<&'a str>,
}

/// What a whole list did (Apache's `ACTION_*` result).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// No rule with a substitution applied.
    Unchanged,
    /// The file name (and perhaps the query) changed; `noescape` when the
    /// last such rule had `[NE]`.
    Changed { noescape: bool },
    /// Answer with this status; `log` is the error-log line to write.
    /// `reset`: Apache set `r->status` back to 200 before answering (every
    /// status rule but the `%3f` refusal), which makes the answer a new
    /// error even inside an `ErrorDocument` request.
    Status {
        code: u16,
        log: Option<String>,
        reset: bool,
    },
}

/// The result of a list: the outcome and the last rule whose substitution
/// applied (server context uses it to decide whether a path is a file
/// system path).
pub struct ListResult {
    pub outcome: Outcome,
    pub lastsub: Option<Arc<Rule>>,
}

enum RuleRc {
    NoMatch,
    Match,
    NoSub,
    StatusSet(String),
}

/// Captures of one regex match: the subject (lent by the rule loop, or
/// the expanded test string of a condition) and the spans.
#[derive(Default)]
struct Backrefs<'a> {
    source: Cow<'a, [u8]>,
    spans: Vec<Option<(usize, usize)>>,
}

impl Backrefs<'_> {
    fn get(&self, n: usize) -> Option<&[u8]> {
        match self.spans.get(n) {
            Some(Some((s, e))) if e > s => Some(&self.source[*s..*e]),
            _ => None,
        }
    }
}

/// Everything an expansion inside one rule can see.
struct Eval<'a> {
    host: &'a mut dyn Host,
    filename: &'a str,
    path_info: &'a str,
    args: Option<&'a str>,
    subject: &'a str,
    perdir: Option<PerDir<'a>>,
    rule_refs: Option<Backrefs<'a>>,
    cond_refs: Option<Backrefs<'a>>,
    vary: VaryNote,
    /// Headers `expr` conditions read (added to Vary whatever the rule does).
    expr_vary: Vec<String>,
}

impl Scope for Eval<'_> {
    fn variable(&mut self, var: &Var) -> Cow<'_, str> {
        let cur = Current {
            filename: self.filename,
            path_info: self.path_info,
            args: self.args,
            subject: Some(self.subject),
            perdir: self.perdir.map(|p| (p.directory, p.base)),
        };
        super::variable::lookup(var, &cur, self.host, &mut self.vary)
    }
    fn backref(&self, rule: bool, n: usize) -> Option<&[u8]> {
        let refs = if rule {
            &self.rule_refs
        } else {
            &self.cond_refs
        };
        refs.as_ref()?.get(n)
    }
    fn map(&mut self, name: &str, key: &str) -> Option<String> {
        self.host.map(name, key)
    }
}

impl<'a> Eval<'a> {
    /// A variable whose value the rule loop holds (file name, path info,
    /// query string), lent without copying.
    fn lent(&self, var: &Var) -> Option<&'a str> {
        let cur = Current {
            filename: self.filename,
            path_info: self.path_info,
            args: self.args,
            subject: Some(self.subject),
            perdir: None,
        };
        super::variable::lent(var, &cur)
    }

    fn expand(&mut self, t: &Template, escape: Option<&Rule>, q: Option<&mut Qmark>) -> String {
        vars::expand(t, self, escape, q)
    }
}

/// The length of the scheme part if `uri` is an absolute URL mod_rewrite
/// knows (`is_absolute_uri`), and whether a query string makes sense for
/// that scheme.
pub fn absolute_uri(uri: &str) -> Option<(usize, bool)> {
    let b = uri.as_bytes();
    if b.first() == Some(&b'/') || b.len() <= 5 {
        return None;
    }
    let has = |p: &str| b.len() >= p.len() && b[..p.len()].eq_ignore_ascii_case(p.as_bytes());
    const SCHEMES: &[(&str, bool)] = &[
        ("ajp://", true),
        ("balancer://", true),
        ("ftp://", false),
        ("fcgi://", true),
        ("gopher://", false),
        ("http://", true),
        ("https://", true),
        ("h2://", true),
        ("h2c://", true),
        ("ldap://", false),
        ("mailto:", true),
        ("news:", false),
        ("nntp://", false),
        ("scgi://", true),
        ("ws://", true),
        ("wss://", true),
    ];
    for (s, qs) in SCHEMES {
        if has(s) {
            return Some((s.len(), *qs));
        }
    }
    if has("unix:") {
        let slashes = b.get(5) == Some(&b'/') && b.get(6) == Some(&b'/');
        return Some((if slashes { 7 } else { 5 }, true));
    }
    None
}

/// Split a query string off the new file name (Apache's
/// `splitout_queryargs`).
fn split_query(st: &mut State, flags: u32) {
    if flags & flag::QSNONE != 0 {
        st.args = None;
        return;
    }
    let skip = match absolute_uri(&st.filename) {
        Some((_, false)) => {
            st.args = None;
            return;
        }
        Some((n, true)) => n,
        None => 0,
    };
    if flags & flag::QSDISCARD != 0 {
        st.args = None;
    }
    let tail = &st.filename[skip..];
    let q = if flags & flag::QSLAST != 0 {
        tail.rfind('?')
    } else {
        tail.find('?')
    };
    let Some(q) = q else {
        return;
    };
    let at = skip + q;
    let new = st.filename[at + 1..].to_string();
    st.filename.truncate(at);
    if flags & flag::QSAPPEND != 0 {
        if !new.is_empty() {
            st.args = Some(match &st.args {
                Some(old) => format!("{new}&{old}"),
                None => format!("{new}&"),
            });
        }
    } else {
        st.args = Some(new);
    }
    if let Some(a) = &mut st.args {
        if a.is_empty() {
            st.args = None;
        } else if a.ends_with('&') {
            a.pop();
        }
    }
}

/// `scheme://host[:port]` of this server as the client named it
/// (`fully_qualify_uri`).
pub fn self_url(host: &mut dyn Host) -> String {
    let scheme = host
        .fact(Fact::RequestScheme)
        .unwrap_or_else(|| "http".into());
    let name = host.fact(Fact::ServerName).unwrap_or_default();
    let port: u16 = host
        .fact(Fact::ServerPort)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    let default = if scheme == "https" { 443 } else { 80 };
    if port == default {
        format!("{scheme}://{name}")
    } else {
        format!("{scheme}://{name}:{port}")
    }
}

fn fully_qualify(st: &mut State, host: &mut dyn Host) {
    if absolute_uri(&st.filename).is_none() {
        let slash = if st.filename.starts_with('/') {
            ""
        } else {
            "/"
        };
        st.filename = format!("{}{slash}{}", self_url(host), st.filename);
    }
}

/// Cut `http[s]://this-server[:port]` off an absolute URL that names this
/// virtual host (`reduce_uri`).
fn reduce(st: &mut State, host: &mut dyn Host) {
    let scheme = host
        .fact(Fact::RequestScheme)
        .unwrap_or_else(|| "http".into());
    let f = &st.filename;
    let l = scheme.len();
    if f.len() <= l + 3
        || !f.as_bytes()[..l].eq_ignore_ascii_case(scheme.as_bytes())
        || &f[l..l + 3] != "://"
    {
        return;
    }
    let rest = &f[l + 3..];
    let host_end = rest.find(['/', ':']).unwrap_or(rest.len());
    let hostname = &rest[..host_end];
    let default_port: u16 = if scheme == "https" { 443 } else { 80 };
    let (port, url) = if rest[host_end..].starts_with(':') {
        let after = &rest[host_end + 1..];
        let pend = after.find('/').unwrap_or(after.len());
        let port = super::parse::atoi(&after[..pend]) as u16;
        let url = &after[pend..];
        (port, if url.is_empty() { "/" } else { url })
    } else if rest[host_end..].starts_with('/') {
        (default_port, &rest[host_end..])
    } else {
        (default_port, "/")
    };
    if host.matches_vhost(hostname, port) {
        st.filename = url.to_string();
        st.uri_reduced = true;
    }
}

fn compare_lexicography(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

fn strcasecmp(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let la = a.iter().map(u8::to_ascii_lowercase);
    let lb = b.iter().map(u8::to_ascii_lowercase);
    la.cmp(lb)
}

/// Apply one condition (Apache's `apply_rewrite_cond`).
fn apply_cond(c: &Cond, ev: &mut Eval<'_>) -> bool {
    // An `expr` condition has no test string to expand.
    let expanded;
    let input: &str = if c.kind == CondKind::Expr {
        ""
    } else if let Some(v) = c.input.single_var().and_then(|v| ev.lent(v)) {
        v
    } else {
        expanded = ev.expand(&c.input, None, None);
        &expanded
    };
    let nocase = c.flags & cflag::NOCASE != 0;
    let ord = |cmp: std::cmp::Ordering| cmp as i32;
    let rc = match c.kind {
        CondKind::FileExists => ev
            .host
            .stat(input)
            .is_some_and(|f| f.kind == crate::fs::Kind::File),
        CondKind::FileSize => ev
            .host
            .stat(input)
            .is_some_and(|f| f.kind == crate::fs::Kind::File && f.size > 0),
        CondKind::FileLink => ev
            .host
            .lstat(input)
            .is_some_and(|f| f.kind == crate::fs::Kind::Symlink),
        CondKind::FileDir => ev
            .host
            .stat(input)
            .is_some_and(|f| f.kind == crate::fs::Kind::Dir),
        CondKind::FileXbit => ev.host.stat(input).is_some_and(|f| f.mode & 0o111 != 0),
        CondKind::LookupUrl => {
            !input.is_empty() && ev.host.subreq_ok() && ev.host.subreq_uri_status(input) < 400
        }
        CondKind::LookupFile => {
            !input.is_empty() && ev.host.subreq_ok() && {
                let (status, exists) = ev.host.subreq_file(input);
                status < 300 && exists
            }
        }
        CondKind::StrGe | CondKind::StrGt => {
            let basis = if c.kind == CondKind::StrGe { 0 } else { 1 };
            let cmp = if nocase {
                strcasecmp(input.as_bytes(), c.operand.as_bytes())
            } else {
                compare_lexicography(input.as_bytes(), c.operand.as_bytes())
            };
            ord(cmp) >= basis
        }
        CondKind::StrLe | CondKind::StrLt => {
            let basis = if c.kind == CondKind::StrLe { 0 } else { -1 };
            let cmp = if nocase {
                strcasecmp(input.as_bytes(), c.operand.as_bytes())
            } else {
                compare_lexicography(input.as_bytes(), c.operand.as_bytes())
            };
            ord(cmp) <= basis
        }
        CondKind::StrEq => {
            if nocase {
                input.eq_ignore_ascii_case(&c.operand)
            } else {
                input == c.operand
            }
        }
        CondKind::IntGe => super::parse::atoi(input) >= super::parse::atoi(&c.operand),
        CondKind::IntGt => super::parse::atoi(input) > super::parse::atoi(&c.operand),
        CondKind::IntLe => super::parse::atoi(input) <= super::parse::atoi(&c.operand),
        CondKind::IntLt => super::parse::atoi(input) < super::parse::atoi(&c.operand),
        CondKind::IntEq => super::parse::atoi(input) == super::parse::atoi(&c.operand),
        CondKind::Expr => {
            let e = c.expr.as_ref().expect("expr conditions are compiled");
            let cur = Current {
                filename: ev.filename,
                path_info: ev.path_info,
                args: ev.args,
                subject: Some(ev.subject),
                perdir: ev.perdir.map(|p| (p.directory, p.base)),
            };
            let out = ev.host.expr(e, &cur);
            if c.flags & cflag::NOVARY == 0 {
                // ap_expr adds the headers it read to Vary at once,
                // whether or not the rule goes on to apply.
                if let Some(v) = &out.vary {
                    ev.expr_vary.extend(
                        v.split(',')
                            .map(|n| n.trim().to_string())
                            .filter(|n| !n.is_empty()),
                    );
                }
            }
            let rc = matches!(out.value, Ok(true));
            if rc && c.flags & cflag::NOTMATCH == 0 {
                if let Some(src) = out.captures.source {
                    ev.cond_refs = Some(Backrefs {
                        source: Cow::Owned(src),
                        spans: out.captures.spans,
                    });
                } else {
                    ev.cond_refs = None;
                }
            }
            rc
        }
        CondKind::Regex => {
            let re = c.regex.as_ref().expect("regex conditions are compiled");
            let input_bytes = crate::path_text::bytes(input);
            match re.captures(&input_bytes) {
                Some(spans) => {
                    if c.flags & cflag::NOTMATCH == 0 {
                        ev.cond_refs = Some(Backrefs {
                            source: Cow::Owned(input_bytes.into_owned()),
                            spans,
                        });
                    }
                    true
                }
                None => false,
            }
        }
    };
    let rc = rc != (c.flags & cflag::NOTMATCH != 0);
    if ev.host.tracing() {
        let line = format!(
            "    RewriteCond {}:{} '{}' (= '{}') '{}'{} -> {}",
            c.origin.file,
            c.origin.line,
            c.input_text,
            input,
            c.pattern_text,
            if nocase { " [NC]" } else { "" },
            if rc { "true" } else { "false" }
        );
        ev.host.trace(line);
    }
    rc
}

/// Apply one rule (Apache's `apply_rewrite_rule`). The subject, the
/// captures and what the conditions read are lent from `st` until the
/// rule's result replaces the file name.
fn apply_rule(
    rule: &Rule,
    perdir: Option<PerDir<'_>>,
    st: &mut State,
    host: &mut dyn Host,
) -> RuleRc {
    let joined;
    let mut subject: &str = &st.filename;
    if let Some(pd) = perdir {
        if !st.path_info.is_empty() {
            joined = format!("{}{}", st.filename, st.path_info);
            subject = &joined;
        }
        if let Some(rest) = subject.strip_prefix(pd.directory) {
            subject = rest;
        }
    }
    let negate = rule.flags & flag::NOTMATCH != 0;
    // Patterns match the bytes the path stands for (borrowed for UTF-8).
    let subject_bytes = crate::path_text::bytes(subject);
    let caps = if rule.needs_captures {
        rule.regex.captures(&subject_bytes)
    } else {
        rule.regex.is_match(&subject_bytes).then(Vec::new)
    };
    let matched = caps.is_some() != negate;
    if host.tracing() {
        host.trace(format!(
            "  RewriteRule {}:{} '{}{}' against '{}' -> {}",
            rule.origin.file,
            rule.origin.line,
            if negate { "!" } else { "" },
            rule.pattern,
            subject,
            if matched { "matched" } else { "no match" }
        ));
    }
    if !matched {
        return RuleRc::NoMatch;
    }
    let rule_refs = match caps {
        Some(spans) if !negate && rule.needs_captures => Some(Backrefs {
            source: Cow::Borrowed(&*subject_bytes),
            spans,
        }),
        _ => None,
    };
    let mut ev = Eval {
        host: &mut *host,
        filename: &st.filename,
        path_info: &st.path_info,
        args: st.args.as_deref(),
        subject,
        perdir,
        rule_refs,
        cond_refs: None,
        vary: VaryNote::default(),
        expr_vary: Vec::new(),
    };

    // Conditions, with [OR] groups and the Vary bookkeeping: header names
    // count only from conditions that decided the outcome.
    let conds = &rule.conds;
    let mut vary = Vec::new();
    let mut i = 0;
    while i < conds.len() {
        let c = &conds[i];
        let rc = apply_cond(c, &mut ev);
        if c.flags & cflag::NOVARY != 0 {
            ev.vary.names.clear();
        }
        if c.flags & cflag::ORNEXT != 0 {
            if !rc {
                ev.vary.names.clear();
                i += 1;
                continue;
            }
            // Skip the rest of this OR group (the last member included).
            while i < conds.len() && conds[i].flags & cflag::ORNEXT != 0 {
                i += 1;
            }
        } else if !rc {
            st.vary.append(&mut ev.expr_vary);
            return RuleRc::NoMatch;
        }
        vary.append(&mut ev.vary.names);
        i += 1;
    }
    st.vary.append(&mut vary);
    st.vary.append(&mut ev.expr_vary);

    let mut newuri = String::new();
    if rule.flags & flag::NOSUB == 0 {
        if rule.flags & flag::UNSAFE_ALLOW3F != 0 {
            newuri = ev.expand(&rule.subst, Some(rule), None);
        } else {
            let mut q = Qmark::new(rule.flags & flag::QSLAST != 0);
            newuri = ev.expand(&rule.subst, Some(rule), Some(&mut q));
            if q.is_unsafe() {
                st.status = 403;
                return RuleRc::StatusSet(
                    "AH10508: Unsafe URL with %3f URL rewritten without UnsafeAllow3F".into(),
                );
            }
        }
        if ev.host.tracing() {
            let line = format!("    rewrite '{subject}' -> '{newuri}'");
            ev.host.trace(line);
        }
    }

    for e in &rule.env {
        match e {
            EnvSpec::Set { name, value } => {
                let value = ev.expand(value, None, None);
                ev.host.set_env(name, value);
            }
            EnvSpec::Expanded(t) => {
                let spec = ev.expand(t, None, None);
                if let Some(name) = spec.strip_prefix('!') {
                    ev.host.unset_env(name);
                } else {
                    let (name, value) = spec.split_once(':').unwrap_or((&spec, ""));
                    ev.host.set_env(name, value.to_string());
                }
            }
        }
    }
    for c in &rule.cookies {
        let spec = ev.expand(c, None, None);
        ev.host.add_cookie(&spec);
    }

    if rule.flags & flag::NOSUB != 0 {
        force_type_handler(rule, &mut ev, &mut st.forced_type, &mut st.forced_handler);
        if rule.flags & flag::STATUS != 0 {
            st.status = rule.status;
        }
        return RuleRc::NoSub;
    }
    drop(ev);
    // `[T=]`/`[H=]` are expanded after the substitution took effect, with
    // the subject the rule matched.
    let forces = rule.forced_type.is_some() || rule.forced_handler.is_some();
    let kept_subject = forces.then(|| subject.to_string());

    let mut prefix_added = false;
    if !newuri.starts_with('/') && absolute_uri(&newuri).is_none() {
        if let Some(pd) = perdir {
            newuri = format!("{}{newuri}", pd.directory);
            prefix_added = true;
        } else if rule.flags & (flag::PROXY | flag::FORCEREDIRECT) == 0 {
            newuri = format!("/{newuri}");
            prefix_added = true;
        }
    }
    st.filename = newuri;
    if perdir.is_some() && rule.flags & flag::DISCARDPATHINFO != 0 {
        st.path_info.clear();
    }
    split_query(st, rule.flags);

    if rule.flags & flag::PROXY != 0 {
        fully_qualify(st, host);
        st.filename = format!("proxy:{}", st.filename);
        return RuleRc::Match;
    }
    if rule.flags & flag::FORCEREDIRECT != 0 {
        fully_qualify(st, host);
        st.status = rule.status;
        return RuleRc::Match;
    }
    reduce(st, host);
    if absolute_uri(&st.filename).is_some() {
        st.status = rule.status;
        return RuleRc::Match;
    }
    if rule.flags & flag::UNC == 0 && !prefix_added && !rule.output.starts_with("//") {
        let trimmed = st.filename.len() - st.filename.trim_start_matches('/').len();
        if trimmed > 1 {
            st.filename.drain(..trimmed - 1);
        }
    }
    if let Some(subject) = kept_subject {
        let mut ev = Eval {
            host,
            filename: &st.filename,
            path_info: &st.path_info,
            args: st.args.as_deref(),
            subject: &subject,
            perdir,
            rule_refs: None,
            cond_refs: None,
            vary: VaryNote::default(),
            expr_vary: Vec::new(),
        };
        force_type_handler(rule, &mut ev, &mut st.forced_type, &mut st.forced_handler);
    }
    RuleRc::Match
}

/// Remember `[T=]`/`[H=]` (expanded, lower-cased) for the end of fixups.
fn force_type_handler(
    rule: &Rule,
    ev: &mut Eval<'_>,
    forced_type: &mut Option<String>,
    forced_handler: &mut Option<String>,
) {
    if let Some(t) = &rule.forced_type {
        let v = ev.expand(t, Some(rule), None);
        if !v.is_empty() {
            *forced_type = Some(v.to_ascii_lowercase());
        }
    }
    if let Some(h) = &rule.forced_handler {
        let v = ev.expand(h, Some(rule), None);
        if !v.is_empty() {
            *forced_handler = Some(v.to_ascii_lowercase());
        }
    }
}

/// How much one rule list may do for one request: the bytes of subject
/// each rule and condition is applied to, summed. Real rule sets use a few
/// kilobytes; Apache has no such bound, and `[N]` rules growing their
/// subject over 32000 rounds would otherwise keep a worker busy for
/// seconds.
pub const WORK_LIMIT: usize = 4 << 20;

/// Run a rule list (Apache's `apply_rewrite_list`). `max_len` bounds the
/// rewritten file name (twice `LimitRequestLine` in Apache).
pub fn apply_list(
    rules: &[Arc<Rule>],
    perdir: Option<PerDir<'_>>,
    st: &mut State,
    host: &mut dyn Host,
    max_len: usize,
) -> ListResult {
    let mut changed: Option<bool> = None;
    let mut lastsub: Option<Arc<Rule>> = None;
    let mut round = 1;
    let result = |changed: Option<bool>| match changed {
        Some(noescape) => Outcome::Changed { noescape },
        None => Outcome::Unchanged,
    };
    let mut work = 0usize;
    'rounds: loop {
        let mut i = 0;
        while i < rules.len() {
            let p = &rules[i];
            if host.is_subreq() && p.flags & (flag::IGNOREONSUBREQ | flag::FORCEREDIRECT) != 0 {
                i += 1;
                continue;
            }
            let subject_len = st.filename.len() + st.path_info.len() + 64;
            work = work.saturating_add(subject_len.saturating_mul(1 + p.conds.len()));
            if work > WORK_LIMIT {
                return ListResult {
                    outcome: Outcome::Status {
                        code: 500,
                        reset: true,
                        log: Some(format!(
                            "RewriteRule '{}' and URI '{}': the rules exceeded htaccel's work bound for one request ({WORK_LIMIT} bytes matched)",
                            p.pattern,
                            host.fact(Fact::RequestUri).unwrap_or_default()
                        )),
                    },
                    lastsub,
                };
            }
            let rc = apply_rule(p, perdir, st, host);
            if let RuleRc::NoMatch = rc {
                while i < rules.len() && rules[i].flags & flag::CHAIN != 0 {
                    i += 1;
                }
                i += 1;
                continue;
            }
            if p.flags & flag::NOSUB == 0 {
                lastsub = Some(p.clone());
            }
            if st.filename.len() > max_len {
                return ListResult {
                    outcome: Outcome::Status {
                        code: 500,
                        reset: true,
                        log: Some(format!(
                            "RewriteRule '{}' and URI '{}' exceeded maximum length ({max_len})",
                            p.pattern,
                            host.fact(Fact::RequestUri).unwrap_or_default()
                        )),
                    },
                    lastsub,
                };
            }
            if let RuleRc::StatusSet(log) = rc {
                return ListResult {
                    outcome: Outcome::Status {
                        code: st.status,
                        log: Some(log),
                        reset: false,
                    },
                    lastsub,
                };
            }
            if p.flags & flag::STATUS != 0 {
                return ListResult {
                    outcome: Outcome::Status {
                        code: p.status,
                        log: None,
                        reset: true,
                    },
                    lastsub,
                };
            }
            if let RuleRc::Match = rc {
                changed = Some(p.flags & flag::NOESCAPE != 0);
            }
            if p.flags & flag::PASSTHROUGH != 0 {
                st.filename = format!("passthrough:{}", st.filename);
                changed = Some(false);
                break 'rounds;
            }
            if p.flags & flag::END != 0 {
                st.end = true;
                break 'rounds;
            }
            if p.flags & (flag::PROXY | flag::LASTRULE) != 0 {
                break 'rounds;
            }
            if p.flags & flag::NEWROUND != 0 {
                round += 1;
                if round >= p.max_rounds {
                    return ListResult {
                        outcome: Outcome::Status {
                            code: 500,
                            reset: true,
                            log: Some(format!(
                                "AH02596: RewriteRule '{}' and URI '{}' exceeded maximum number of rounds ({}) via the [N] flag",
                                p.pattern,
                                host.fact(Fact::RequestUri).unwrap_or_default(),
                                p.max_rounds
                            )),
                        },
                        lastsub,
                    };
                }
                continue 'rounds;
            }
            if p.skip > 0 {
                i = i.saturating_add(p.skip as usize).min(rules.len());
            }
            i += 1;
        }
        break;
    }
    ListResult {
        outcome: result(changed),
        lastsub,
    }
}
