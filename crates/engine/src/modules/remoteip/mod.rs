//! mod_remoteip: the client address behind trusted proxies.
//!
//! With `RemoteIPHeader X-Forwarded-For`, the address access control sees
//! (`r->useragent_ip`: `Allow from`, `Require ip`, `%{REMOTE_ADDR}`) is
//! taken from the header instead of the connection, walking the header's
//! list from the right (the hop nearest to us) for as long as each hop is
//! a proxy we trust. The rules are Apache's, including the surprising ones:
//!
//! * with no proxy list at all, every peer is an *external* trusted proxy,
//!   and external proxies may not present private or loopback addresses
//!   (10/8, 127/8, 169.254/16, 172.16/12, 192.168/16; outside 2000::/3);
//! * an internal proxy (`RemoteIPInternalProxy`) may present anything;
//!   once a trusted (external) proxy was crossed, internal ones count as
//!   external;
//! * the header keeps what was not consumed, and is removed when all was.
//!
//! This runs in `post_read_request`, with the server's configuration only.
//!
//! `RemoteIPProxyProtocol` (the PROXY protocol) works on connections, not
//! requests: Apache keeps one process-wide list of the addresses where it
//! is on and one where it is off, each `RemoteIPProxyProtocol` line adding
//! every address of the server it is in (the main server's is
//! `0.0.0.0:0`, which matches any local address; a `<VirtualHost *:80>`'s
//! matches any address on port 80) and taking them off the other list.
//! A connection whose local address is on the first list and not on the
//! second, from a peer outside `RemoteIPProxyProtocolExceptions`, must
//! begin with a header ([`proxy_header`], read by the server before
//! anything else, TLS included). The client the header names is then the
//! request's client for everything (access control, logs, the CGI
//! environment), and `RemoteIPHeader` is not consulted on that
//! connection.

pub mod proxy_header;

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::ipset::{Subnet, SubnetError};
use crate::registry::{Args, Directive, Module, Run, RSRC_CONF};
use crate::request::Ctx;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

/// One `RemoteIPInternalProxy`/`RemoteIPTrustedProxy` entry.
#[derive(Clone, Debug)]
struct ProxyMatch {
    subnet: Subnet,
    internal: bool,
}

/// The module's server configuration.
#[derive(Clone, Debug, Default)]
pub struct RemoteIpServer {
    header: Option<String>,
    proxies_header: Option<String>,
    proxies: Option<Arc<Vec<ProxyMatch>>>,
}

impl RemoteIpServer {
    /// A `<VirtualHost>` over the main server: each setting it lacks is
    /// the main server's.
    pub fn merge(main: &RemoteIpServer, vhost: &RemoteIpServer) -> RemoteIpServer {
        RemoteIpServer {
            header: vhost.header.clone().or_else(|| main.header.clone()),
            proxies_header: vhost
                .proxies_header
                .clone()
                .or_else(|| main.proxies_header.clone()),
            proxies: vhost.proxies.clone().or_else(|| main.proxies.clone()),
        }
    }
}

fn contains(s: &Subnet, addr: IpAddr) -> bool {
    crate::ipset::IpSet::from_subnets([*s]).contains(addr)
}

/// Addresses an external proxy may not hand us.
fn private_or_nonsense(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(a) => {
            let o = a.octets();
            o[0] == 10
                || o[0] == 127
                || (o[0] == 169 && o[1] == 254)
                || (o[0] == 172 && (o[1] & 0xf0) == 16)
                || (o[0] == 192 && o[1] == 168)
        }
        IpAddr::V6(a) => (a.octets()[0] & 0xe0) != 0x20,
    }
}

/// `apr_sockaddr_info_get(…, APR_UNSPEC, APR_IPV4_ADDR_OK)` for one hop:
/// a literal, or a name resolved with IPv4 preferred.
fn parse_hop(hop: &str) -> Option<IpAddr> {
    if let Ok(a) = hop.parse::<IpAddr>() {
        return Some(match a {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(a, IpAddr::V4),
            v4 => v4,
        });
    }
    let addrs = crate::dns::resolve(hop);
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or_else(|| addrs.first())
        .copied()
}

/// One address of a server, as `RemoteIPProxyProtocol` records it: an IP
/// (`0.0.0.0` for `*` and `_default_`, which match any) and a port (0 for
/// any).
#[derive(Clone, Debug, PartialEq, Eq)]
struct ServerAddr {
    ip: IpAddr,
    port: u16,
}

impl ServerAddr {
    fn wildcard(&self) -> bool {
        self.ip.is_unspecified()
    }

    /// `remoteip_sockaddr_compat`: the same address (either port 0 or
    /// both equal), or a wildcard on the other's port (or any port).
    fn covers(&self, other: &ServerAddr) -> bool {
        (self.ip == other.ip && (self.port == other.port || self.port == 0 || other.port == 0))
            || (self.wildcard() && (self.port == 0 || self.port == other.port))
            || (other.wildcard() && (other.port == 0 || other.port == self.port))
    }
}

impl std::fmt::Display for ServerAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.ip, self.port)
    }
}

/// The PROXY protocol's process-wide settings (Apache keeps them in the
/// main server's configuration whatever server names them).
#[derive(Clone, Debug, Default)]
pub struct ProxyProtocol {
    /// Newest first, as Apache's lists.
    /// Each with the server that named it (`name:port in file`).
    enabled: Vec<(ServerAddr, String)>,
    disabled: Vec<(ServerAddr, String)>,
    exceptions: Vec<Subnet>,
    /// Lines for the error log at start-up (`AH03491`).
    overridden: Vec<String>,
}

impl ProxyProtocol {
    /// Whether a connection from `peer` to `local` must begin with a PROXY
    /// header (`remoteip_hook_pre_connection`).
    pub fn required(&self, local: SocketAddr, peer: SocketAddr) -> bool {
        let local = ServerAddr {
            ip: unmap(local.ip()),
            port: local.port(),
        };
        self.enabled.iter().any(|(a, _)| a.covers(&local))
            && !self.disabled.iter().any(|(a, _)| a.covers(&local))
            && !self
                .exceptions
                .iter()
                .any(|s| contains(s, unmap(peer.ip())))
    }

    /// Whether any address has it on.
    pub fn in_use(&self) -> bool {
        !self.enabled.is_empty()
    }

    /// The notices Apache writes at start-up: overridden settings, then
    /// where it is on and where off.
    pub fn notices(&self) -> Vec<String> {
        let mut lines = self.overridden.clone();
        lines.extend(
            self.enabled
                .iter()
                .map(|(a, _)| format!("AH03492: RemoteIPProxyProtocol: enabled on {a}")),
        );
        lines.extend(
            self.disabled
                .iter()
                .map(|(a, _)| format!("AH03494: RemoteIPProxyProtocol: disabled on {a}")),
        );
        lines
    }
}

fn unmap(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// A `<VirtualHost>` address as Apache parses it: `*` and `_default_` are
/// the wildcard, a missing or `*` port is 0, a name is resolved (each of
/// its addresses).
fn server_addrs(spec: &str) -> Vec<ServerAddr> {
    let (host, port) = match spec.rsplit_once(':') {
        Some((h, p))
            if !h.ends_with(':') && !spec.starts_with('[')
                || spec.starts_with('[') && h.ends_with(']') =>
        {
            (h, p)
        }
        _ => (spec, "*"),
    };
    let port = port.parse::<u16>().unwrap_or(0);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let ips = if host == "*" || host == "_default_" {
        vec![IpAddr::V4(Ipv4Addr::UNSPECIFIED)]
    } else if let Ok(ip) = host.parse::<IpAddr>() {
        vec![ip]
    } else {
        crate::dns::resolve(host)
    };
    ips.into_iter()
        .map(|ip| ServerAddr {
            ip: unmap(ip),
            port,
        })
        .collect()
}

/// `RemoteIPProxyProtocol On|Off`: every address of the current server
/// goes on one list and off the other.
fn run_proxy_protocol(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    let on = crate::registry::flag(&inv.words);
    let server = w.server()?;
    let addrs: Vec<ServerAddr> = if server.addrs.is_empty() {
        vec![ServerAddr {
            ip: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            port: 0,
        }]
    } else {
        server.addrs.iter().flat_map(|a| server_addrs(a)).collect()
    };
    let here = describe_server(server);
    let Some(build) = w.server.as_deref_mut() else {
        return Err("not allowed here".into());
    };
    let pp = &mut build.global.modules.proxy_protocol;
    let (add, remove) = if on {
        (&mut pp.enabled, &mut pp.disabled)
    } else {
        (&mut pp.disabled, &mut pp.enabled)
    };
    for addr in addrs {
        if let Some(i) = remove.iter().position(|(a, _)| *a == addr) {
            let (_, prev) = remove.remove(i);
            pp.overridden.push(format!(
                "AH03491: RemoteIPProxyProtocol: previous setting for {addr} from virtual host {{{prev}}} is being overridden by virtual host {{{here}}}; new setting is '{}'",
                if on { "On" } else { "Off" }
            ));
        }
        if !add.iter().any(|(a, _)| a.covers(&addr)) {
            add.insert(0, (addr, here.clone()));
        }
    }
    Ok(())
}

/// `name:port in file` as Apache's `AH03491` names a server: its
/// `ServerName` so far (`(null)` before one), the port of its first
/// address (0 for any) and the file that defines it.
fn describe_server(server: &crate::config::server::ServerConf) -> String {
    format!(
        "{}:{} in {}",
        server.server_name.as_deref().unwrap_or("(null)"),
        server
            .addrs
            .first()
            .and_then(|a| server_addrs(a).first().map(|s| s.port))
            .unwrap_or(0),
        server
            .origin
            .as_ref()
            .map_or_else(String::new, |o| o.file.to_string())
    )
}

/// `RemoteIPProxyProtocolExceptions`: peers that connect without a header.
fn run_exceptions(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    if inv.words.is_empty() {
        return Err(format!("{} requires an argument", inv.name));
    }
    let mut subnets = Vec::new();
    for word in &inv.words {
        let (ip, mask) = match word.split_once('/') {
            Some((i, m)) => (i, Some(m)),
            None => (word.as_str(), None),
        };
        match Subnet::parse(ip, mask) {
            Ok(s) => subnets.push(s),
            Err(SubnetError::NotAnAddress) => {
                return Err(format!("ip address '{ip}' appears to be invalid"))
            }
            Err(e) => {
                return Err(format!(
                    "ip address '{ip}' appears to be invalid: {}",
                    e.message()
                ))
            }
        }
    }
    let Some(build) = w.server.as_deref_mut() else {
        return Err("not allowed here".into());
    };
    build
        .global
        .modules
        .proxy_protocol
        .exceptions
        .extend(subnets);
    Ok(())
}

/// mod_remoteip's start: the PROXY protocol settings of every address,
/// its notices (settings one virtual host overrode) logged.
pub(crate) fn start(
    loaded: &crate::engine::Loaded,
    log: &Arc<dyn crate::http::Log>,
) -> Result<ProxyProtocol, String> {
    let pp = &loaded.build.global.modules.proxy_protocol;
    for line in pp.notices() {
        log.error("notice", "remoteip", None, &line);
    }
    Ok(pp.clone())
}

/// Whether a connection to `local` from `peer` must begin with a PROXY
/// header (the server's question, `Handler::proxy_protocol`).
pub fn proxy_header_required(
    engine: &crate::engine::Engine,
    local: SocketAddr,
    peer: SocketAddr,
) -> bool {
    engine.modules.proxy_protocol.required(local, peer)
}

/// `remoteip_modify_request`.
pub fn post_read_request(ctx: &mut Ctx<'_>) {
    // A connection that began with a PROXY header already has its client
    // (the server put it in place); Apache then skips the header.
    if ctx.req.proxied_by.is_some() {
        return;
    }
    let conf = ctx.site.modules.remoteip.clone();
    let Some(header) = &conf.header else {
        return;
    };
    let Some(value) = ctx.headers_in.get_str(header).map(str::to_string) else {
        return;
    };
    let mut internal = conf.proxies.is_some();
    let mut remote: Option<&str> = Some(&value);
    let mut current = ctx.useragent_ip();
    let mut found: Option<IpAddr> = None;
    let mut proxy_ips: Vec<String> = Vec::new();
    let mut rest_end = value.len();
    while let Some(list) = remote {
        if let Some(proxies) = &conf.proxies {
            match proxies.iter().find(|m| contains(&m.subnet, current)) {
                Some(m) => {
                    if internal {
                        internal = m.internal;
                    }
                }
                None => break,
            }
        }
        let (before, hop) = match list.rfind(',') {
            Some(i) => (Some(&list[..i]), &list[i + 1..]),
            None => (None, list),
        };
        let hop = hop.trim_matches(' ');
        if hop.is_empty() {
            break;
        }
        let Some(addr) = parse_hop(hop) else {
            break;
        };
        if !internal && private_or_nonsense(addr) {
            break;
        }
        if !internal {
            proxy_ips.push(found.unwrap_or(ctx.useragent_ip()).to_string());
        }
        found = Some(addr);
        current = addr;
        remote = before;
        rest_end = before.map_or(0, str::len);
    }
    let Some(addr) = found else {
        return;
    };
    match remote {
        Some(_) => ctx
            .headers_in
            .to_mut()
            .set(header, value[..rest_end].to_string()),
        None => ctx.headers_in.to_mut().remove(header),
    }
    if !proxy_ips.is_empty() {
        let list = proxy_ips.join(", ");
        ctx.notes
            .push(("remoteip-proxy-ip-list".into(), list.clone()));
        if let Some(h) = &conf.proxies_header {
            ctx.headers_in.to_mut().set(h, list);
        }
    }
    ctx.set_useragent_ip(addr);
}

fn add_proxy(w: &mut Walker<'_>, name: &str, arg: &str, internal: bool) -> Result<(), String> {
    let (ip, mask) = match arg.split_once('/') {
        Some((i, m)) => (i, Some(m)),
        None => (arg, None),
    };
    let mut subnets = Vec::new();
    match Subnet::parse(ip, mask) {
        Ok(s) => subnets.push(s),
        Err(SubnetError::NotAnAddress) => {
            if let Some(m) = mask {
                return Err(format!(
                    "RemoteIP: Error parsing IP {arg} the subnet /{m} is invalid for {name}"
                ));
            }
            let addrs = crate::dns::resolve(ip);
            if addrs.is_empty() {
                return Err(format!(
                    "RemoteIP: Error parsing IP {arg} (Name or service not known error) for {name}"
                ));
            }
            for a in addrs {
                let prefix = if a.is_ipv4() { 32 } else { 128 };
                subnets.push(Subnet { net: a, prefix });
            }
        }
        Err(e) => {
            return Err(format!(
                "RemoteIP: Error parsing IP {arg} ({} error) for {name}",
                e.message()
            ))
        }
    }
    let server = w.server()?;
    let list = Arc::make_mut(
        server
            .modules
            .remoteip
            .proxies
            .get_or_insert_with(Default::default),
    );
    list.extend(
        subnets
            .into_iter()
            .map(|subnet| ProxyMatch { subnet, internal }),
    );
    Ok(())
}

fn run_proxy(w: &mut Walker<'_>, inv: &Invocation<'_>, _c: &mut DirConf) -> Result<(), String> {
    let internal = inv.name.to_ascii_lowercase().contains("internal");
    for arg in &inv.words {
        add_proxy(w, inv.name, arg, internal)?;
    }
    Ok(())
}

fn run_proxy_list(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    let internal = inv.name.to_ascii_lowercase().contains("internal");
    let path = crate::modules::authn_file::server_relative(w, &inv.words[0]);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "{} {} failed to open: {}",
            inv.name,
            path.display(),
            crate::modules::authn_file::strerror(&e)
        )
    })?;
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("");
        for word in line.split_whitespace() {
            add_proxy(w, inv.name, word, internal)?;
        }
    }
    Ok(())
}

pub static DIRECTIVES: &[Directive] = &[
    Directive { name: "RemoteIPHeader", args: Args::Take1, req_override: RSRC_CONF, about: "Specifies a request header to trust as the client IP, e.g. X-Forwarded-For", run: Run::Handler(|w, inv, _| { w.server()?.modules.remoteip.header = Some(inv.words[0].clone()); Ok(()) }) },
    Directive { name: "RemoteIPProxiesHeader", args: Args::Take1, req_override: RSRC_CONF, about: "Specifies a request header to record proxy IP's, e.g. X-Forwarded-By; if not given then do not record", run: Run::Handler(|w, inv, _| { w.server()?.modules.remoteip.proxies_header = Some(inv.words[0].clone()); Ok(()) }) },
    Directive { name: "RemoteIPTrustedProxy", args: Args::Iterate, req_override: RSRC_CONF, about: "Specifies one or more proxies which are trusted to present IP headers", run: Run::Handler(run_proxy) },
    Directive { name: "RemoteIPInternalProxy", args: Args::Iterate, req_override: RSRC_CONF, about: "Specifies one or more internal (transparent) proxies which are trusted to present IP headers", run: Run::Handler(run_proxy) },
    Directive { name: "RemoteIPTrustedProxyList", args: Args::Take1, req_override: RSRC_CONF, about: "The filename to read the list of trusted proxies, see the RemoteIPTrustedProxy directive", run: Run::Handler(run_proxy_list) },
    Directive { name: "RemoteIPInternalProxyList", args: Args::Take1, req_override: RSRC_CONF, about: "The filename to read the list of internal proxies, see the RemoteIPInternalProxy directive", run: Run::Handler(run_proxy_list) },
    Directive { name: "RemoteIPProxyProtocol", args: Args::Flag, req_override: RSRC_CONF, about: "Enable PROXY protocol handling ('on', 'off')", run: Run::Handler(run_proxy_protocol) },
    Directive { name: "RemoteIPProxyProtocolExceptions", args: Args::Argv, req_override: RSRC_CONF, about: "Disable PROXY protocol handling for this list of networks in CIDR format", run: Run::Handler(run_exceptions) },
];

pub static MODULE: Module = Module {
    source: "mod_remoteip.c",
    identifier: "remoteip_module",
    builtin: false,
    directives: DIRECTIVES,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_ranges() {
        for a in [
            "10.1.2.3",
            "127.0.0.1",
            "169.254.1.1",
            "172.31.0.1",
            "192.168.0.1",
            "::1",
            "fe80::1",
        ] {
            assert!(private_or_nonsense(a.parse().unwrap()), "{a}");
        }
        for a in ["172.32.0.1", "8.8.8.8", "2001:db8::1"] {
            assert!(!private_or_nonsense(a.parse().unwrap()), "{a}");
        }
    }

    fn addr(spec: &str) -> (ServerAddr, String) {
        (server_addrs(spec).remove(0), String::new())
    }

    #[test]
    fn proxy_protocol_addresses_cover_as_apache_compares_them() {
        // The main server's 0.0.0.0:0 covers every local address.
        let mut pp = ProxyProtocol {
            enabled: vec![(
                ServerAddr {
                    ip: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
                    port: 0,
                },
                String::new(),
            )],
            ..Default::default()
        };
        let peer: SocketAddr = "192.0.2.1:5000".parse().unwrap();
        assert!(pp.required("127.0.0.1:80".parse().unwrap(), peer));
        assert!(pp.required("[::ffff:10.0.0.1]:443".parse().unwrap(), peer));
        // A `*:443` that is off wins over it for port 443 only.
        pp.disabled.push(addr("*:443"));
        assert!(!pp.required("127.0.0.1:443".parse().unwrap(), peer));
        assert!(pp.required("127.0.0.1:80".parse().unwrap(), peer));
        // An exception is about the peer.
        pp.exceptions
            .push(Subnet::parse("192.0.2.0", Some("24")).unwrap());
        assert!(!pp.required("127.0.0.1:80".parse().unwrap(), peer));
        // A specific address with a port; without a port (0) any port.
        let pp = ProxyProtocol {
            enabled: vec![addr("127.0.0.1:8080"), addr("[::1]")],
            ..Default::default()
        };
        assert!(pp.required("127.0.0.1:8080".parse().unwrap(), peer));
        assert!(!pp.required("127.0.0.2:8080".parse().unwrap(), peer));
        assert!(!pp.required("127.0.0.1:8081".parse().unwrap(), peer));
        assert!(pp.required("[::1]:9".parse().unwrap(), peer));
    }

    #[test]
    fn hops_are_literals_first() {
        assert_eq!(
            parse_hop("::ffff:1.2.3.4"),
            Some("1.2.3.4".parse().unwrap())
        );
        assert_eq!(
            parse_hop("203.0.113.9"),
            Some("203.0.113.9".parse().unwrap())
        );
    }
}
