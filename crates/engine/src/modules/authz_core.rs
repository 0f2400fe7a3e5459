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
use crate::modules::core::method_bit;
use crate::registry::{Args, Directive, Module, ACCESS_CONF, OR_AUTHCFG};
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
}

/// What a provider checks.
#[derive(Clone, Debug)]
pub enum Provider {
    All(bool),
    Env(Vec<String>),
    Method(u64),
    Ip(Vec<IpRange>),
    Local,
}

/// An address block of `Require ip`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpRange {
    pub net: IpAddr,
    pub prefix: u8,
}

impl IpRange {
    pub fn contains(&self, addr: IpAddr) -> bool {
        let addr = match (self.net, addr) {
            (IpAddr::V4(_), IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => return false,
            },
            (_, a) => a,
        };
        match (self.net, addr) {
            (IpAddr::V4(n), IpAddr::V4(a)) => {
                let mask = if self.prefix == 0 {
                    0
                } else {
                    u32::MAX << (32 - u32::from(self.prefix))
                };
                u32::from(n) & mask == u32::from(a) & mask
            }
            (IpAddr::V6(n), IpAddr::V6(a)) => {
                let mask = if self.prefix == 0 {
                    0
                } else {
                    u128::MAX << (128 - u32::from(self.prefix))
                };
                u128::from(n) & mask == u128::from(a) & mask
            }
            _ => false,
        }
    }

    /// One address argument as Apache accepts it: a full or partial IPv4
    /// address (`10.1`), `net/bits`, `net/mask`, or IPv6 with `/bits`.
    pub fn parse(arg: &str) -> Option<IpRange> {
        let (addr, mask) = match arg.split_once('/') {
            Some((a, m)) => (a, Some(m)),
            None => (arg, None),
        };
        if addr.contains(':') {
            let net: std::net::Ipv6Addr = addr.parse().ok()?;
            let prefix = match mask {
                Some(m) => m.parse::<u8>().ok().filter(|p| *p <= 128)?,
                None => 128,
            };
            return Some(IpRange {
                net: IpAddr::V6(net),
                prefix,
            });
        }
        let (net, implied) = if mask.is_none() {
            let parts: Vec<&str> = addr.trim_end_matches('.').split('.').collect();
            if parts.is_empty() || parts.len() > 4 {
                return None;
            }
            let mut octets = [0u8; 4];
            for (i, p) in parts.iter().enumerate() {
                if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                octets[i] = p.parse().ok()?;
            }
            (std::net::Ipv4Addr::from(octets), (parts.len() * 8) as u8)
        } else {
            (addr.parse::<std::net::Ipv4Addr>().ok()?, 32)
        };
        let prefix = match mask {
            None => implied,
            Some(m) if m.contains('.') => {
                let m: std::net::Ipv4Addr = m.parse().ok()?;
                let bits = u32::from(m);
                if bits.leading_ones() + bits.trailing_zeros() != 32 {
                    return None;
                }
                bits.leading_ones() as u8
            }
            Some(m) => m.parse::<u8>().ok().filter(|p| *p <= 32)?,
        };
        Some(IpRange {
            net: IpAddr::V4(net),
            prefix,
        })
    }
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
            AuthzResult::Neutral => AuthzResult::Neutral,
        };
    }
    result
}

fn check(p: &Provider, req: &AuthzRequest<'_>) -> AuthzResult {
    let granted = match p {
        Provider::All(g) => *g,
        Provider::Env(names) => names.iter().any(|n| (req.env)(n)),
        Provider::Method(bits) => bits & req.method_bit != 0,
        Provider::Ip(ranges) => ranges.iter().any(|r| r.contains(req.remote)),
        Provider::Local => req.remote.is_loopback() || req.remote == req.local,
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

fn limited(w: &Walker<'_>) -> u64 {
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
                return Err("'Require ip' requires an argument".into());
            }
            args.iter()
                .map(|a| {
                    IpRange::parse(a)
                        .ok_or_else(|| format!("ip address '{a}' appears to be invalid"))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Provider::Ip)
        }
        "local" => Ok(Provider::Local),
        "host" | "forward-dns" | "user" | "valid-user" | "group" | "file-owner" | "file-group"
        | "expr" => Err(format!("Require {name} is not supported by htaccel yet")),
        _ => Err(format!("Unknown Authz provider: {name}")),
    }
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
    let provider = parse_provider(&name, &args)?;
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
    Directive { name: "Require", args: Args::Argv, req_override: OR_AUTHCFG | ACCESS_CONF, about: "specifies authorization directives which one must pass (or not) for a request to suceeed", run: run_require },
    Directive { name: "<RequireAll", args: Args::Section, req_override: OR_AUTHCFG | ACCESS_CONF, about: "container for grouping authorization directives of which none must fail and at least one must pass for a request to succeed", run: run_require_section },
    Directive { name: "<RequireAny", args: Args::Section, req_override: OR_AUTHCFG | ACCESS_CONF, about: "container for grouping authorization directives of which one must pass for a request to succeed", run: run_require_section },
    Directive { name: "<RequireNone", args: Args::Section, req_override: OR_AUTHCFG | ACCESS_CONF, about: "container for grouping authorization directives of which none must pass for a request to succeed", run: run_require_section },
    Directive { name: "AuthMerging", args: Args::Take1, req_override: OR_AUTHCFG | ACCESS_CONF, about: "controls how a <Directory>, <Location>, or similar directive's authorization directives are combined with those of its predecessor", run: |_w, inv, c| {
        c.authz.merging = Some(match inv.words[0].to_ascii_lowercase().as_str() {
            "off" => None,
            "and" => Some(Logic::And),
            "or" => Some(Logic::Or),
            _ => return Err("AuthMerging must be one of: Off | And | Or".into()),
        });
        Ok(())
    } },
    Directive { name: "AuthzSendForbiddenOnFailure", args: Args::Flag, req_override: OR_AUTHCFG | ACCESS_CONF, about: "Controls if an authorization failure should result in a '403 FORBIDDEN' response instead of the HTTP-conforming '401 UNAUTHORIZED'", run: |_w, inv, c| { c.authz.forbidden_on_failure = Some(crate::registry::flag(&inv.words)); Ok(()) } },
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
    fn partial_and_masked_addresses() {
        let lo: IpAddr = "127.0.0.1".parse().unwrap();
        assert!(IpRange::parse("127").unwrap().contains(lo));
        assert!(IpRange::parse("127.0.0.0/255.0.0.0").unwrap().contains(lo));
        assert!(!IpRange::parse("10.0.0.0/8").unwrap().contains(lo));
        assert!(!IpRange::parse("192.168").unwrap().contains(lo));
        assert!(IpRange::parse("::1")
            .unwrap()
            .contains("::1".parse().unwrap()));
        assert!(IpRange::parse("10.0.0.0/255.0.255.0").is_none());
    }

    #[test]
    fn negation_turns_denial_into_neutral() {
        let req = AuthzRequest {
            method_bit: 1,
            remote: "127.0.0.1".parse().unwrap(),
            local: "127.0.0.1".parse().unwrap(),
            env: &|_| false,
        };
        let not_ip = Section {
            op: Logic::Or,
            negate: true,
            limited: ALL_METHODS,
            provider: Some((
                "ip".into(),
                Provider::Ip(vec![IpRange::parse("10.0.0.1").unwrap()]),
            )),
            children: vec![],
        };
        assert_eq!(apply(&not_ip, &req, Logic::And), AuthzResult::Neutral);
    }
}
