//! Which `<VirtualHost>` answers a request: the first, in configuration
//! order, of those listening on the connection's local address whose
//! `ServerName` or a `ServerAlias` matches the client's host, else the
//! first of them (the address's default), else the main server.
//!
//! Apache walks the name-based list of the address for every request. That
//! costs nothing with a few virtual hosts, but a shared host with
//! thousands pays a pass over all of them on each request (bench group G:
//! 0.19 µs per virtual host passed, 1.9 ms a request with 10,000). With
//! more than [`SCAN_MAX`] virtual hosts the candidates of each local
//! address are listed once, with a map from every exact name to the first
//! candidate that has it; only the candidates with a wildcard alias
//! (`*.example.com`) before that one are still tried in order. The answer
//! is the one the walk gives.

use crate::site::Site;
use foldhash::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, RwLock};

/// Up to this many virtual hosts, each request walks them.
const SCAN_MAX: usize = 16;

/// Local addresses whose candidates are kept at most (connections come to
/// a handful of them; past this the walk answers).
const ADDRESSES_MAX: usize = 256;

/// The virtual hosts of one local address.
struct Candidates {
    /// Indices into the engine's virtual hosts, in configuration order.
    order: Vec<usize>,
    /// A lower-cased exact name to the first position in `order` with it.
    exact: HashMap<String, usize>,
    /// Positions in `order` of the virtual hosts with a wildcard alias.
    wildcards: Vec<usize>,
}

/// The candidates of each local address seen, built on first use.
#[derive(Default)]
pub(crate) struct VhostIndex {
    by_local: RwLock<HashMap<SocketAddr, Arc<Candidates>>>,
}

impl VhostIndex {
    /// The virtual host for a connection to `local` asking for `host`
    /// (lower-cased, without its port), or `None` for the main server.
    pub(crate) fn site<'e>(
        &self,
        vhosts: &'e [Arc<Site>],
        local: SocketAddr,
        host: Option<&str>,
    ) -> Option<&'e Site> {
        if vhosts.len() <= SCAN_MAX {
            return walk(vhosts, local, host);
        }
        let Some(candidates) = self.candidates(vhosts, local) else {
            return walk(vhosts, local, host);
        };
        let first = *candidates.order.first()?;
        let Some(host) = host else {
            return Some(&vhosts[first]);
        };
        let lowered;
        let key = if host.bytes().any(|b| b.is_ascii_uppercase()) {
            lowered = host.to_ascii_lowercase();
            lowered.as_str()
        } else {
            host
        };
        let exact = candidates.exact.get(key).copied();
        let wildcard = candidates
            .wildcards
            .iter()
            .take_while(|&&at| exact.is_none_or(|e| at < e))
            .find(|&&at| vhosts[candidates.order[at]].answers_to(host))
            .copied();
        let at = match (exact, wildcard) {
            (_, Some(w)) => w,
            (Some(e), None) => e,
            (None, None) => 0,
        };
        Some(&vhosts[candidates.order[at]])
    }

    fn candidates(&self, vhosts: &[Arc<Site>], local: SocketAddr) -> Option<Arc<Candidates>> {
        if let Some(c) = self
            .by_local
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&local)
        {
            return Some(Arc::clone(c));
        }
        let mut map = self.by_local.write().unwrap_or_else(|e| e.into_inner());
        if map.len() >= ADDRESSES_MAX {
            return None;
        }
        let built = Arc::new(build(vhosts, local));
        map.insert(local, Arc::clone(&built));
        Some(built)
    }
}

/// `StrictHostCheck`'s question (`update_server_from_aliases`): whether
/// `host` (lower-cased, without its port) is named by a `ServerName` or
/// `ServerAlias` of the virtual hosts listening on `local`, or is the name
/// one of them was declared with (`<VirtualHost host:port>`); where none
/// listens there, by the main server's names.
pub(crate) fn names_host(vhosts: &[Arc<Site>], main: &Site, local: SocketAddr, host: &str) -> bool {
    let mut listening = vhosts.iter().filter(|v| listens_on(v, local));
    let Some(first) = listening.next() else {
        return main.answers_to(host);
    };
    std::iter::once(first).chain(listening).any(|v| {
        v.answers_to(host)
            || v.addrs.iter().any(|a| {
                crate::engine::addr_matches(a, local) && declared_host(a).eq_ignore_ascii_case(host)
            })
    })
}

/// Whether one of a virtual host's addresses is the connection's `local`.
fn listens_on(site: &Site, local: SocketAddr) -> bool {
    site.addrs
        .iter()
        .any(|a| crate::engine::addr_matches(a, local))
}

/// The host part of a `<VirtualHost>` address (`www.example.com` of
/// `www.example.com:80`, `[::1]` of `[::1]:443`).
fn declared_host(addr: &str) -> &str {
    match addr.rsplit_once(':') {
        Some((h, p))
            if (p == "*" || p.bytes().all(|b| b.is_ascii_digit()))
                && (!addr.starts_with('[') || h.ends_with(']')) =>
        {
            h
        }
        _ => addr,
    }
}

/// Apache's walk: every virtual host of the address, in order.
fn walk<'e>(vhosts: &'e [Arc<Site>], local: SocketAddr, host: Option<&str>) -> Option<&'e Site> {
    let mut candidates = vhosts.iter().filter(|v| listens_on(v, local));
    let first = candidates.next()?;
    if let Some(h) = host {
        if first.answers_to(h) {
            return Some(first);
        }
        if let Some(s) = candidates.find(|s| s.answers_to(h)) {
            return Some(s);
        }
    }
    Some(first)
}

fn build(vhosts: &[Arc<Site>], local: SocketAddr) -> Candidates {
    let order: Vec<usize> = vhosts
        .iter()
        .enumerate()
        .filter(|(_, v)| listens_on(v, local))
        .map(|(i, _)| i)
        .collect();
    let mut exact = HashMap::default();
    let mut wildcards = Vec::new();
    for (at, &i) in order.iter().enumerate() {
        let site = &vhosts[i];
        // `ServerName` is compared as it is, an alias as a pattern when it
        // has `*` or `?` (Apache's `ap_is_matchexp`).
        exact
            .entry(site.server_name.to_ascii_lowercase())
            .or_insert(at);
        let mut wild = false;
        for alias in &site.aliases {
            if htaccel_conf::fnmatch::is_matchexp(alias) {
                wild = true;
            } else {
                exact.entry(alias.to_ascii_lowercase()).or_insert(at);
            }
        }
        if wild {
            wildcards.push(at);
        }
    }
    Candidates {
        order,
        exact,
        wildcards,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;

    fn engine() -> Engine {
        let mut text =
            String::from("LoadModule mime_module m.so\nTypesConfig /dev/null\nDocumentRoot /tmp\n");
        for i in 0..40 {
            let alias = match i % 4 {
                0 => format!("ServerAlias *.w{}.test other{}.test\n", i / 8, i % 3),
                1 => format!("ServerAlias v{}.test\n", i + 1),
                2 => "ServerAlias ALIAS.test\n".to_string(),
                _ => String::new(),
            };
            let addr = if i % 5 == 4 { "127.0.0.2:80" } else { "*:80" };
            text.push_str(&format!(
                "<VirtualHost {addr}>\nServerName v{}.test\n{alias}DocumentRoot /tmp\n</VirtualHost>\n",
                i % 30
            ));
        }
        crate::test_support::engine(&text)
    }

    #[test]
    fn the_index_answers_as_the_walk() {
        let e = engine();
        assert!(e.vhosts.len() > SCAN_MAX);
        let index = VhostIndex::default();
        let mut hosts: Vec<String> = (0..45).map(|i| format!("v{i}.test")).collect();
        hosts.extend((0..6).map(|i| format!("x.w{i}.test")));
        hosts.extend((0..4).map(|i| format!("other{i}.test")));
        hosts.extend(["alias.test", "ALIAS.TEST", "V3.Test", "none.test"].map(String::from));
        for local in ["127.0.0.1:80", "127.0.0.2:80", "127.0.0.1:81"] {
            let local: SocketAddr = local.parse().unwrap();
            for host in hosts.iter().map(|h| Some(h.as_str())).chain([None]) {
                let by_index = index.site(&e.vhosts, local, host).map(|s| s as *const Site);
                let by_walk = walk(&e.vhosts, local, host).map(|s| s as *const Site);
                assert_eq!(by_index, by_walk, "{local} {host:?}");
            }
        }
    }

    #[test]
    fn strict_host_check_names() {
        assert_eq!(declared_host("www.example.com:80"), "www.example.com");
        assert_eq!(declared_host("127.0.0.1:*"), "127.0.0.1");
        assert_eq!(declared_host("[::1]:443"), "[::1]");
        assert_eq!(declared_host("[::1]"), "[::1]");
        assert_eq!(declared_host("*"), "*");
        let e = engine();
        let local: SocketAddr = "127.0.0.1:80".parse().unwrap();
        for (host, named) in [
            ("v3.test", true),
            ("a.w0.test", true),
            ("alias.test", true),
            ("none.test", false),
            ("*", true),
        ] {
            assert_eq!(names_host(&e.vhosts, &e.main, local, host), named, "{host}");
        }
        // No virtual host listens there: the main server's name.
        let elsewhere: SocketAddr = "127.0.0.1:81".parse().unwrap();
        let main_name = e.main.server_name.to_ascii_lowercase();
        assert!(names_host(&e.vhosts, &e.main, elsewhere, &main_name));
        assert!(!names_host(&e.vhosts, &e.main, elsewhere, "v3.test"));
    }
}
