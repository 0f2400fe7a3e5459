//! mod_access_compat: `Order`, `Allow from`, `Deny from`, `Satisfy`.
//!
//! Apache 2.2's host-based access control, still what most hardening
//! snippets and old applications ship. Two rules make it surprising, and
//! both are kept:
//!
//! * the module has no merge: a context naming any of its directives
//!   starts from the defaults (`Order Deny,Allow`, no entries, `Satisfy`
//!   unset) instead of inheriting, so a child's lone `Allow from x` undoes
//!   a parent's `Deny from all`;
//! * every setting is per method: inside `<Limit>`/`<LimitExcept>` it only
//!   touches the methods named there, and the other methods keep the
//!   defaults.
//!
//! Entries are tested as "does any entry match", so the order inside a
//! list never matters; each list is compiled into an address set
//! ([`crate::ipset`]) plus the few entries that are not addresses. Host
//! names are matched as Apache does, against the double-reverse DNS name of
//! the client ([`crate::dns`]), looked up only when no cheaper
//! entry decided.

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::dns;
use crate::ipset::{IpSet, IpSetBuilder, Subnet, SubnetError};
use crate::modules::authz_core::limited;
#[cfg(test)]
use crate::modules::authz_core::ALL_METHODS;
use crate::registry::{Args, Directive, Module, Run, ACCESS_CONF, OR_AUTHCFG, OR_LIMIT};
use std::net::IpAddr;
use std::sync::{Arc, OnceLock};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    DenyAllow,
    AllowDeny,
    MutualFailure,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Satisfy {
    All,
    Any,
}

/// The entries of one `Allow`/`Deny` list that share a method mask.
#[derive(Clone, Debug, Default)]
struct Group {
    limited: u64,
    all: bool,
    ips: IpSetBuilder,
    env: Vec<String>,
    not_env: Vec<String>,
    hosts: Vec<String>,
}

#[derive(Clone, Debug, Default)]
struct CompiledGroup {
    limited: u64,
    all: bool,
    ips: IpSet,
    env: Vec<String>,
    not_env: Vec<String>,
    hosts: Vec<String>,
}

/// One list (`Allow` or `Deny`) as read, then as compiled. The compiled
/// form is built on first use, once per configuration object: building it
/// after every directive would cost the square of a long list's length.
#[derive(Clone, Debug, Default)]
pub struct List {
    building: Vec<Group>,
    groups: OnceLock<Arc<Vec<CompiledGroup>>>,
}

impl List {
    fn group(&mut self, limited: u64) -> &mut Group {
        if let Some(i) = self.building.iter().position(|g| g.limited == limited) {
            return &mut self.building[i];
        }
        self.building.push(Group {
            limited,
            ..Default::default()
        });
        self.building.last_mut().expect("pushed above")
    }

    /// The list was changed: what was compiled is stale.
    fn changed(&mut self) {
        self.groups = OnceLock::new();
    }

    fn compiled(&self) -> &Arc<Vec<CompiledGroup>> {
        self.groups.get_or_init(|| Arc::new(self.compile()))
    }

    fn compile(&self) -> Vec<CompiledGroup> {
        self.building
            .iter()
            .map(|g| CompiledGroup {
                limited: g.limited,
                all: g.all,
                ips: g.ips.clone().build(),
                env: g.env.clone(),
                not_env: g.not_env.clone(),
                hosts: g.hosts.clone(),
            })
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.building.is_empty()
    }
}

/// The module's per-directory slot. `None` in [`DirConf`] means the
/// context named none of the directives (the parent's slot is kept).
#[derive(Clone, Debug, Default)]
pub struct AccessDir {
    /// `Order` assignments in file order: (methods, order).
    order: Vec<(u64, Order)>,
    satisfy: Vec<(u64, Satisfy)>,
    allow: List,
    deny: List,
}

/// The field in [`DirConf`]: set by the first directive of the module in a
/// context, which then replaces whatever was inherited.
#[derive(Clone, Debug, Default)]
pub struct AccessCompatDir(pub Option<Arc<AccessDir>>);

impl AccessCompatDir {
    pub fn merge(base: &AccessCompatDir, new: &AccessCompatDir) -> AccessCompatDir {
        match &new.0 {
            Some(_) => new.clone(),
            None => base.clone(),
        }
    }

    fn slot(&mut self) -> &mut AccessDir {
        Arc::make_mut(self.0.get_or_insert_with(Default::default))
    }
}

impl AccessDir {
    fn order_for(&self, bit: u64) -> Order {
        self.order
            .iter()
            .rev()
            .find(|(m, _)| m & bit != 0)
            .map_or(Order::DenyAllow, |(_, o)| *o)
    }
}

/// `ap_satisfies` for the method: `None` when unspecified (treated as All).
pub fn satisfies(conf: &DirConf, bit: u64) -> Option<Satisfy> {
    let a = conf.access_compat.0.as_ref()?;
    a.satisfy
        .iter()
        .rev()
        .find(|(m, _)| m & bit != 0)
        .map(|(_, s)| *s)
}

/// What an access check can look at.
pub struct Client<'a> {
    pub method_bit: u64,
    pub addr: IpAddr,
    pub env: &'a crate::env::Env,
}

/// Lazily resolved double-reverse name of the client, shared by both lists.
enum Host {
    Unknown,
    None,
    Name(String),
}

fn find(list: &List, c: &Client<'_>, host: &mut Host) -> bool {
    let compiled = list.compiled();
    let groups = || compiled.iter().filter(|g| g.limited & c.method_bit != 0);
    let cheap = groups().any(|g| {
        g.all
            || {
                // The client's address is an input of the answer from here.
                crate::answer_memo::note_remote_ip();
                g.ips.contains(c.addr)
            }
            || g.env.iter().any(|n| c.env.contains(n))
            || g.not_env.iter().any(|n| !c.env.contains(n))
    });
    if cheap {
        return true;
    }
    for g in groups().filter(|g| !g.hosts.is_empty()) {
        if let Host::Unknown = host {
            *host = match dns::double_reverse(c.addr) {
                Some(name) => Host::Name(name),
                None => Host::None,
            };
        }
        if let Host::Name(name) = host {
            if g.hosts.iter().any(|d| dns::in_domain(d, name)) {
                return true;
            }
        }
    }
    false
}

/// `check_dir_access`: whether Order/Allow/Deny let the client in.
pub fn allowed(conf: &DirConf, c: &Client<'_>) -> bool {
    let Some(a) = conf.access_compat.0.as_ref() else {
        return true;
    };
    let mut host = Host::Unknown;
    match a.order_for(c.method_bit) {
        Order::AllowDeny => find(&a.allow, c, &mut host) && !find(&a.deny, c, &mut host),
        Order::DenyAllow => !find(&a.deny, c, &mut host) || find(&a.allow, c, &mut host),
        Order::MutualFailure => find(&a.allow, c, &mut host) && !find(&a.deny, c, &mut host),
    }
}

fn run_order(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    let o = match inv.words[0].to_ascii_lowercase().as_str() {
        "allow,deny" => Order::AllowDeny,
        "deny,allow" => Order::DenyAllow,
        "mutual-failure" => Order::MutualFailure,
        _ => return Err("unknown order".into()),
    };
    let m = limited(w);
    c.access_compat.slot().order.push((m, o));
    Ok(())
}

fn run_satisfy(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    let s = match inv.words[0].to_ascii_lowercase().as_str() {
        "all" => Satisfy::All,
        "any" => Satisfy::Any,
        _ => return Err("Satisfy either 'any' or 'all'.".into()),
    };
    let m = limited(w);
    c.access_compat.slot().satisfy.push((m, s));
    Ok(())
}

/// One host spec of `Allow`/`Deny` into its group (Apache's `allow_cmd`).
fn add_entry(g: &mut Group, word: &str) -> Result<(), String> {
    let lower = word.to_ascii_lowercase();
    if lower.starts_with("env=!") {
        g.not_env.push(word[5..].to_string());
    } else if lower.starts_with("env=") {
        g.env.push(word[4..].to_string());
    } else if lower == "all" {
        g.all = true;
    } else if let Some((ip, mask)) = word.split_once('/') {
        match Subnet::parse(ip, Some(mask)) {
            Ok(s) => g.ips.add(s),
            Err(SubnetError::NotAnAddress) => return Err("An IP address was expected".into()),
            Err(e) => return Err(e.message().into()),
        }
    } else {
        match Subnet::parse(word, None) {
            Ok(s) => g.ips.add(s),
            Err(SubnetError::NotAnAddress) if word.contains('#') => {
                return Err("No comments are allowed here".into())
            }
            Err(SubnetError::NotAnAddress) => g.hosts.push(word.to_string()),
            Err(e) => return Err(e.message().into()),
        }
    }
    Ok(())
}

fn run_allow_deny(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    let is_allow = inv.name.eq_ignore_ascii_case("allow");
    let m = limited(w);
    let slot = c.access_compat.slot();
    let list = if is_allow {
        &mut slot.allow
    } else {
        &mut slot.deny
    };
    // ITERATE2: the handler runs once per host spec; the first error stops
    // the directive, after the specs before it were taken.
    let mut result = Ok(());
    for word in &inv.words[1..] {
        if !inv.words[0].eq_ignore_ascii_case("from") {
            result = Err("allow and deny must be followed by 'from'".to_string());
            break;
        }
        if let Err(e) = add_entry(list.group(m), word) {
            result = Err(e);
            break;
        }
    }
    list.changed();
    result
}

pub static DIRECTIVES: &[Directive] = &[
    Directive {
        name: "order",
        args: Args::Take1,
        req_override: OR_LIMIT | ACCESS_CONF,
        about: "'allow,deny', 'deny,allow', or 'mutual-failure'",
        run: Run::Handler(run_order),
    },
    Directive {
        name: "allow",
        args: Args::Iterate2,
        req_override: OR_LIMIT | ACCESS_CONF,
        about: "'from' followed by hostnames or IP-address wildcards",
        run: Run::Handler(run_allow_deny),
    },
    Directive {
        name: "deny",
        args: Args::Iterate2,
        req_override: OR_LIMIT | ACCESS_CONF,
        about: "'from' followed by hostnames or IP-address wildcards",
        run: Run::Handler(run_allow_deny),
    },
    Directive {
        name: "Satisfy",
        args: Args::Take1,
        req_override: OR_AUTHCFG | ACCESS_CONF,
        about: "access policy if both allow and require used ('all' or 'any')",
        run: Run::Handler(run_satisfy),
    },
];

pub static MODULE: Module = Module {
    source: "mod_access_compat.c",
    identifier: "access_compat_module",
    builtin: false,
    directives: DIRECTIVES,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(order: Order, allow: &[&str], deny: &[&str]) -> DirConf {
        let mut a = AccessDir {
            order: vec![(ALL_METHODS, order)],
            ..Default::default()
        };
        for w in allow {
            add_entry(a.allow.group(ALL_METHODS), w).unwrap();
        }
        for w in deny {
            add_entry(a.deny.group(ALL_METHODS), w).unwrap();
        }
        DirConf {
            access_compat: AccessCompatDir(Some(Arc::new(a))),
            ..Default::default()
        }
    }

    #[test]
    fn orders() {
        let env = crate::env::Env::default();
        let c = Client {
            method_bit: 1,
            addr: "127.0.0.1".parse().unwrap(),
            env: &env,
        };
        assert!(!allowed(&dir(Order::AllowDeny, &[], &[]), &c));
        assert!(allowed(&dir(Order::DenyAllow, &[], &[]), &c));
        assert!(allowed(&dir(Order::DenyAllow, &["127"], &["all"]), &c));
        assert!(!allowed(
            &dir(Order::AllowDeny, &["all"], &["127.0.0.1"]),
            &c
        ));
        assert!(!allowed(
            &dir(Order::MutualFailure, &["all"], &["127.0.0.0/8"]),
            &c
        ));
        assert!(allowed(
            &dir(Order::MutualFailure, &["all"], &["env=nope"]),
            &c
        ));
        assert!(allowed(&dir(Order::AllowDeny, &["env=!nope"], &[]), &c));
    }

    #[test]
    fn comments_refused() {
        let mut g = Group::default();
        assert_eq!(
            add_entry(&mut g, "#bad").unwrap_err(),
            "No comments are allowed here"
        );
        assert_eq!(
            add_entry(&mut g, "host/8").unwrap_err(),
            "An IP address was expected"
        );
    }
}
