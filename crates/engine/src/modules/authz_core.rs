//! mod_authz_core (with the `ip`/`local` providers of mod_authz_host):
//! `Require`, `<RequireAll>`, `<RequireAny>`, `<RequireNone>`,
//! `AuthMerging`, and the evaluation of the resulting tree.
//!
//! The tree, its merge and its three-valued evaluation (granted, denied,
//! neutral) follow Apache's authz_core closely, because the surprising
//! cases users hit (`<Limit POST>` replacing an inherited denial, negated
//! requirements being neutral) all come from those exact rules.

use crate::config::{Invocation, SectionKind, Walker};
use crate::dirconf::DirConf;
use crate::ipset::{IpSet, Subnet, SubnetError};
use crate::modules::core::method_bit;
use crate::registry::{Args, Directive, Module, Run, ACCESS_CONF, OR_AUTHCFG, RSRC_CONF};
use std::net::IpAddr;
use std::sync::Arc;

/// Every method bit set: a requirement outside any `<Limit>`.
pub const ALL_METHODS: u64 = u64::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Logic {
    And,
    Or,
}

/// The outcome of one requirement or section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthzResult {
    Granted,
    Denied,
    /// Denied, but a user might change the answer (401 rather than 403).
    DeniedNoUser,
    Neutral,
    /// A provider could not decide (`Require expr` failed to evaluate): 500.
    GeneralError,
}

/// What a provider checks.
#[derive(Clone, Debug)]
pub enum Provider {
    All(bool),
    Env(Vec<String>),
    Method(u64),
    Ip(IpSet),
    Local,
    /// `Require user` (mod_authz_user).
    User(Vec<String>),
    /// `Require valid-user` (mod_authz_user).
    ValidUser,
    /// `Require group` (mod_authz_groupfile).
    Group(Vec<String>),
    /// `Require host`: the double-reverse DNS name ends with one of these.
    Host(Vec<String>),
    /// `Require forward-dns`: one of these names resolves to the client.
    ForwardDns(Vec<String>),
    /// `Require expr`: the condition, and whether it reads `REMOTE_USER`
    /// (then a false result asks for a user rather than denying).
    Expr(Arc<crate::expr::Expr>, bool),
}

/// A node of the requirement tree.
#[derive(Clone, Debug)]
pub struct Section {
    pub op: Logic,
    pub negate: bool,
    /// Methods this node applies to (bits from [`method_bit`]).
    pub limited: u64,
    pub provider: Option<(String, Provider)>,
    pub children: Vec<Section>,
}

impl Section {
    fn default_root() -> Section {
        Section {
            op: Logic::Or,
            negate: false,
            limited: 0,
            provider: None,
            children: Vec::new(),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct AuthzDir {
    pub section: Option<Arc<Section>>,
    /// `AuthMerging`: `None` unset, `Some(None)` Off, `Some(Some(op))` And/Or.
    pub merging: Option<Option<Logic>>,
    pub forbidden_on_failure: Option<bool>,
}

impl AuthzDir {
    pub fn merge(base: &AuthzDir, new: &AuthzDir) -> AuthzDir {
        let mut conf = if new.merging.is_none() && new.section.is_none() && base.section.is_some() {
            base.clone()
        } else if matches!(new.merging, None | Some(None))
            || (base.section.is_none() && new.section.is_none())
        {
            new.clone()
        } else {
            let op = new.merging.flatten().unwrap_or(Logic::Or);
            let section = match (&base.section, &new.section) {
                (Some(b), Some(n)) => Arc::new(Section {
                    op,
                    negate: false,
                    limited: b.limited | n.limited,
                    provider: None,
                    children: vec![(**b).clone(), (**n).clone()],
                }),
                (Some(b), None) => b.clone(),
                (None, Some(n)) => n.clone(),
                (None, None) => unreachable!("handled above"),
            };
            AuthzDir {
                section: Some(section),
                merging: new.merging,
                forbidden_on_failure: None,
            }
        };
        conf.forbidden_on_failure = new.forbidden_on_failure.or(base.forbidden_on_failure);
        conf
    }
}

/// What a provider can look at.
pub struct AuthzRequest<'a> {
    pub method_bit: u64,
    pub remote: IpAddr,
    pub local: IpAddr,
    pub env: &'a dyn Fn(&str) -> bool,
    /// `r->user`: the name a client claimed and authentication accepted.
    pub user: Option<&'a str>,
    /// `Require group`: whether the user is in one of the groups.
    pub groups: &'a dyn Fn(&str, &[String]) -> AuthzResult,
    /// `Require expr`: the condition's value, `None` when it failed.
    pub expr: &'a dyn Fn(&crate::expr::Expr) -> Option<bool>,
}

/// Apache's `apply_authz_sections`.
pub fn apply(section: &Section, req: &AuthzRequest<'_>, parent: Logic) -> AuthzResult {
    if section.limited & req.method_bit == 0 {
        return if parent == Logic::And {
            AuthzResult::Granted
        } else {
            AuthzResult::Neutral
        };
    }
    let mut result = if let Some((_, p)) = &section.provider {
        check(p, req)
    } else {
        let mut result = AuthzResult::Neutral;
        for child in &section.children {
            let r = apply(child, req, section.op);
            if r == AuthzResult::Neutral {
                continue;
            }
            match section.op {
                Logic::And => {
                    if r == AuthzResult::Denied {
                        result = r;
                        break;
                    }
                    if (r == AuthzResult::DeniedNoUser && result != AuthzResult::Denied)
                        || result == AuthzResult::Neutral
                    {
                        result = r;
                    }
                }
                Logic::Or => {
                    if r == AuthzResult::Granted {
                        result = r;
                        break;
                    }
                    if (r == AuthzResult::DeniedNoUser && result == AuthzResult::Denied)
                        || result == AuthzResult::Neutral
                    {
                        result = r;
                    }
                }
            }
        }
        result
    };
    if section.negate {
        result = match result {
            AuthzResult::Granted => AuthzResult::Denied,
            AuthzResult::Denied | AuthzResult::DeniedNoUser => AuthzResult::Neutral,
            other => other,
        };
    }
    result
}

fn check(p: &Provider, req: &AuthzRequest<'_>) -> AuthzResult {
    if let Provider::Expr(e, want_user) = p {
        return match (req.expr)(e) {
            Some(true) => AuthzResult::Granted,
            Some(false) if *want_user => AuthzResult::DeniedNoUser,
            Some(false) => AuthzResult::Denied,
            None => AuthzResult::GeneralError,
        };
    }
    let user_needed = matches!(
        p,
        Provider::User(_) | Provider::ValidUser | Provider::Group(_)
    );
    let Some(user) = req.user.or(if user_needed { None } else { Some("") }) else {
        return AuthzResult::DeniedNoUser;
    };
    let granted = match p {
        Provider::All(g) => *g,
        Provider::Env(names) => names.iter().any(|n| (req.env)(n)),
        Provider::Method(bits) => bits & req.method_bit != 0,
        // The client's address is read here, not where the request is
        // built: an answer depends on it only when a rule looks at it.
        Provider::Ip(set) => {
            crate::answer_memo::note_remote_ip();
            set.contains(req.remote)
        }
        Provider::Local => {
            crate::answer_memo::note_remote_ip();
            req.remote.is_loopback() || req.remote == req.local
        }
        Provider::User(names) => names.iter().any(|n| n == user),
        Provider::ValidUser => true,
        Provider::Group(groups) => return (req.groups)(user, groups),
        Provider::Host(names) => match crate::dns::double_reverse(req.remote) {
            Some(host) => names.iter().any(|n| crate::dns::in_domain(n, &host)),
            None => false,
        },
        Provider::Expr(..) => unreachable!("answered above"),
        Provider::ForwardDns(names) => names.iter().any(|n| {
            crate::dns::resolve(n)
                .into_iter()
                .any(|a| crate::dns::same_host(a, req.remote))
        }),
    };
    if granted {
        AuthzResult::Granted
    } else {
        AuthzResult::Denied
    }
}

/// Build the current `<Require…>` section while its body is read.
fn current_section(c: &mut DirConf) -> &mut Section {
    Arc::make_mut(
        c.authz
            .section
            .get_or_insert_with(|| Arc::new(Section::default_root())),
    )
}

fn describe(s: &Section) -> &'static str {
    match (s.op, s.negate) {
        (Logic::And, false) => "<RequireAll>",
        (Logic::Or, false) => "<RequireAny>",
        (Logic::And, true) => "<RequireNotAll>",
        (Logic::Or, true) => "<RequireNone>",
    }
}

/// The methods the enclosing `<Limit>`/`<LimitExcept>` names (all outside one).
pub fn limited(w: &Walker<'_>) -> u64 {
    match &w.ctx.limit {
        None => ALL_METHODS,
        Some(l) => {
            let bits = l.methods.iter().fold(0u64, |acc, m| acc | method_bit(m));
            if l.except {
                !bits
            } else {
                bits
            }
        }
    }
}

fn parse_provider(name: &str, args: &[String]) -> Result<Provider, String> {
    match name.to_ascii_lowercase().as_str() {
        "all" => match args.first().map(|a| a.to_ascii_lowercase()).as_deref() {
            Some("granted") => Ok(Provider::All(true)),
            Some("denied") => Ok(Provider::All(false)),
            _ => Err("Argument for 'Require all' must be 'granted' or 'denied'".into()),
        },
        "env" => Ok(Provider::Env(args.to_vec())),
        "method" => {
            if args.is_empty() {
                return Err(
                    "The 'method' authorization provider requires a list of methods".into(),
                );
            }
            Ok(Provider::Method(
                args.iter().fold(0u64, |acc, m| acc | method_bit(m)),
            ))
        }
        "ip" => {
            if args.is_empty() {
                return Err("'require ip' requires an argument".into());
            }
            args.iter()
                .map(|a| match Subnet::parse_word(a) {
                    Ok(s) => Ok(s),
                    Err(SubnetError::NotAnAddress) => {
                        Err(format!("ip address '{a}' appears to be invalid"))
                    }
                    Err(e) => Err(format!(
                        "ip address '{a}' appears to be invalid: {}",
                        e.message()
                    )),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(IpSet::from_subnets)
                .map(Provider::Ip)
        }
        "local" => Ok(Provider::Local),
        "user" => user_words(args).map(Provider::User),
        "valid-user" => Ok(Provider::ValidUser),
        "group" => user_words(args).map(Provider::Group),
        "host" => {
            // Text from a `#` on is a comment (the whole line: Apache
            // truncates the joined arguments there).
            let words = user_words(args)?;
            let line = words.join(" ");
            let line = line.split('#').next().unwrap_or("");
            Ok(Provider::Host(
                line.split_whitespace().map(str::to_string).collect(),
            ))
        }
        "forward-dns" => {
            let mut names = Vec::new();
            for w in user_words(args)? {
                match w.split_once('#') {
                    Some((before, _)) => {
                        if !before.is_empty() {
                            names.push(before.to_string());
                        }
                        break;
                    }
                    None => names.push(w),
                }
            }
            Ok(Provider::ForwardDns(names))
        }
        "file-owner" | "file-group" => {
            Err(format!("Require {name} is not supported by htaccel yet"))
        }
        _ => Err(format!("Unknown Authz provider: {name}")),
    }
}

/// Names after `Require user`/`group`/`host`/`forward-dns`. Apache reads
/// them as an expression string; one that uses `%{…}` is refused rather
/// than taken literally.
fn user_words(args: &[String]) -> Result<Vec<String>, String> {
    if let Some(a) = args.iter().find(|a| a.contains("%{")) {
        return Err(format!(
            "expressions in Require user/group ('{a}') are not supported by htaccel yet"
        ));
    }
    Ok(args.to_vec())
}

/// `Require expr …`: the rest of the line after the provider word is the
/// condition, without its surrounding quotes if it has both.
fn parse_expr(raw: &str, negate: bool, restricted: bool) -> Result<Provider, String> {
    let mut rest = raw.trim_start();
    let skip = if negate { 2 } else { 1 };
    for _ in 0..skip {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        rest = rest[end..].trim_start();
    }
    let rest = rest.trim_end();
    let text = match rest.strip_prefix('"') {
        Some(inner) if rest.len() >= 2 && rest.ends_with('"') => &inner[..inner.len() - 1],
        _ => rest,
    };
    let expr = crate::expr::Expr::parse_restricted(text, restricted)
        .map_err(|e| format!("Cannot parse expression in require line: {e}"))?;
    // Apache notes a lookup of REMOTE_USER while parsing; the text is
    // searched for it here.
    let want_user = text.to_ascii_lowercase().contains("remote_user");
    Ok(Provider::Expr(Arc::new(expr), want_user))
}

fn run_require(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    let mut words = inv.words.iter();
    let mut name = words.next().cloned().unwrap_or_default();
    let mut negate = false;
    if name.eq_ignore_ascii_case("not") {
        negate = true;
        name = words.next().cloned().unwrap_or_default();
    }
    let args: Vec<String> = words.cloned().collect();
    let provider = if name.eq_ignore_ascii_case("expr") {
        parse_expr(&inv.raw, negate, w.ctx.htaccess)?
    } else {
        parse_provider(&name, &args)?
    };
    let limited = limited(w);
    let section = current_section(c);
    if negate && section.op == Logic::Or {
        return Err(format!(
            "negative Require directive has no effect in {} directive",
            describe(section)
        ));
    }
    section.limited |= limited;
    section.children.push(Section {
        op: Logic::Or,
        negate,
        limited,
        provider: Some((name, provider)),
        children: Vec::new(),
    });
    Ok(())
}

fn run_require_section(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
) -> Result<(), String> {
    if !inv.raw.trim().is_empty() {
        return Err(format!(
            "<{}> directive doesn't take additional arguments",
            inv.name
        ));
    }
    let (op, negate) = match inv.name.to_ascii_lowercase().as_str() {
        "requireall" => (Logic::And, false),
        "requireany" => (Logic::Or, false),
        _ => (Logic::Or, true),
    };
    let old = c.authz.section.take();
    c.authz.section = Some(Arc::new(Section {
        op,
        negate,
        limited: 0,
        provider: None,
        children: Vec::new(),
    }));
    let saved_mask = w.ctx.override_mask;
    w.ctx.override_mask = OR_AUTHCFG;
    let result = w.walk_nested(inv.children, c, SectionKind::Authz, inv.name);
    w.ctx.override_mask = saved_mask;
    let built = c.authz.section.take();
    c.authz.section = old;
    result.map_err(|e| w.nested(e))?;
    let built = built.map(|s| (*s).clone()).expect("section set above");
    if built.children.is_empty() {
        return Err(format!(
            "{} directive contains no authorization directives",
            describe(&built)
        ));
    }
    let parent = current_section(c);
    if built.negate && parent.op == Logic::Or {
        return Err(format!(
            "{} directive has no effect in {} directive",
            describe(&built),
            describe(parent)
        ));
    }
    parent.limited |= built.limited;
    if !built.negate && built.op == parent.op {
        parent.children.extend(built.children);
    } else {
        parent.children.push(built);
    }
    Ok(())
}

pub static DIRECTIVES: &[Directive] = &[
    Directive { name: "Require", args: Args::Argv, req_override: OR_AUTHCFG | ACCESS_CONF, about: "specifies authorization directives which one must pass (or not) for a request to suceeed", run: Run::Handler(run_require) },
    Directive { name: "<RequireAll", args: Args::Section, req_override: OR_AUTHCFG | ACCESS_CONF, about: "container for grouping authorization directives of which none must fail and at least one must pass for a request to succeed", run: Run::Handler(run_require_section) },
    Directive { name: "<RequireAny", args: Args::Section, req_override: OR_AUTHCFG | ACCESS_CONF, about: "container for grouping authorization directives of which one must pass for a request to succeed", run: Run::Handler(run_require_section) },
    Directive { name: "<AuthzProviderAlias", args: Args::Section, req_override: RSRC_CONF, about: "container for grouping an authorization provider's directives under a provider alias", run: Run::Unsupported },
    Directive { name: "<RequireNone", args: Args::Section, req_override: OR_AUTHCFG | ACCESS_CONF, about: "container for grouping authorization directives of which none must pass for a request to succeed", run: Run::Handler(run_require_section) },
    Directive { name: "AuthMerging", args: Args::Take1, req_override: OR_AUTHCFG | ACCESS_CONF, about: "controls how a <Directory>, <Location>, or similar directive's authorization directives are combined with those of its predecessor", run: Run::Handler(|_w, inv, c| {
        c.authz.merging = Some(match inv.words[0].to_ascii_lowercase().as_str() {
            "off" => None,
            "and" => Some(Logic::And),
            "or" => Some(Logic::Or),
            _ => return Err("AuthMerging must be one of: Off | And | Or".into()),
        });
        Ok(())
    }) },
    Directive { name: "AuthzSendForbiddenOnFailure", args: Args::Flag, req_override: OR_AUTHCFG | ACCESS_CONF, about: "Controls if an authorization failure should result in a '403 FORBIDDEN' response instead of the HTTP-conforming '401 UNAUTHORIZED'", run: Run::Handler(|_w, inv, c| { c.authz.forbidden_on_failure = Some(crate::registry::flag(&inv.words)); Ok(()) }) },
];

pub static MODULE: Module = Module {
    source: "mod_authz_core.c",
    identifier: "authz_core_module",
    builtin: false,
    directives: DIRECTIVES,
};

/// mod_authz_host registers the `ip`, `host`, `forward-dns` and `local`
/// providers; `Require` itself belongs to authz_core.
pub static HOST_MODULE: Module = Module {
    source: "mod_authz_host.c",
    identifier: "authz_host_module",
    builtin: false,
    directives: &[],
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negation_turns_denial_into_neutral() {
        let req = AuthzRequest {
            method_bit: 1,
            remote: "127.0.0.1".parse().unwrap(),
            local: "127.0.0.1".parse().unwrap(),
            env: &|_| false,
            user: None,
            groups: &|_, _| AuthzResult::Denied,
            expr: &|_| None,
        };
        let not_ip = Section {
            op: Logic::Or,
            negate: true,
            limited: ALL_METHODS,
            provider: Some((
                "ip".into(),
                Provider::Ip(IpSet::from_subnets([
                    Subnet::parse_word("10.0.0.1").unwrap()
                ])),
            )),
            children: vec![],
        };
        assert_eq!(apply(&not_ip, &req, Logic::And), AuthzResult::Neutral);
    }
}
