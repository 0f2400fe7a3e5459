//! Which local addresses speak TLS, and with which servers' settings: the
//! server's input for its handshakes ([`TlsPortSpec`]), and mod_ssl's
//! per-request checks of the host a request names against the server its
//! handshake chose (`ssl_hook_ReadReq`).
//!
//! As in Apache, a connection speaks TLS when the default server of its
//! address (the first `<VirtualHost>` listing it, or the main server) has
//! TLS on: `SSLEngine on`, or, for a virtual host, certificates and no
//! `SSLEngine` on an IP address and port that are exactly a `Listen`
//! address whose protocol is `https` (named, or port 443). The SNI name then chooses
//! among the address's servers with TLS on.

use super::{protocol::Protocols, SslEngine, SslServer, VerifyClient};
use crate::engine::Engine;
use crate::http::tls::{ClientAuthSpec, KeyPairSpec, TlsPortSpec, TlsSiteSpec};
use crate::request::{Ctx, Status};
use crate::site::Site;

/// Sessions kept for resumption by ID when `SSLSessionCache` is set.
const SESSION_CACHE_ENTRIES: usize = 4096;

/// Whether a `<VirtualHost>` address is a listener's address exactly
/// (`apr_sockaddr_equal` in `ap_setup_listeners`). Observed with Apache
/// 2.4.71: `<VirtualHost 127.0.0.1:P>` on `Listen 127.0.0.1:P https`
/// speaks TLS, while `<VirtualHost *:P>` on `Listen P https` or on
/// `Listen 0.0.0.0:P https` does not: a wildcard vhost never takes a
/// listener's protocol.
fn is_listener(spec: &str, listeners: &[(Option<std::net::IpAddr>, u16)]) -> bool {
    let Some((host, port)) = spec.rsplit_once(':') else {
        return false;
    };
    let Ok(port) = port.parse::<u16>() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let Ok(ip) = host.parse::<std::net::IpAddr>() else {
        return false;
    };
    listeners.iter().any(|(l, p)| *p == port && *l == Some(ip))
}

/// Whether a virtual host listening on `addrs` has TLS on.
fn enabled(
    ssl: &SslServer,
    addrs: &[String],
    listeners: &[(Option<std::net::IpAddr>, u16)],
) -> bool {
    match ssl.engine {
        Some(SslEngine::On) => true,
        Some(SslEngine::Off) => false,
        None => !ssl.cert_files.is_empty() && addrs.iter().any(|a| is_listener(a, listeners)),
    }
}

fn site_spec(engine: &Engine, site: &Site, index: Option<usize>) -> TlsSiteSpec {
    let ssl = &site.modules.ssl;
    let protocols = ssl.protocols.unwrap_or(Protocols::DEFAULT);
    let mut names = vec![site.server_name.clone()];
    names.extend(site.aliases.iter().cloned());
    TlsSiteSpec {
        site: index,
        server_id: format!("{}:{}", site.server_name, site.port.unwrap_or(443)),
        names,
        keys: ssl
            .cert_files
            .iter()
            .enumerate()
            .map(|(i, cert)| KeyPairSpec {
                cert: cert.clone(),
                key: ssl.key_files.get(i).cloned(),
            })
            .collect(),
        chain: ssl.chain_file.clone(),
        tls12: protocols.tls1_2,
        tls13: protocols.tls1_3,
        suites12: ssl
            .suites12
            .clone()
            .unwrap_or_else(super::ciphers::tls12_default),
        suites13: ssl
            .suites13
            .clone()
            .unwrap_or_else(super::ciphers::tls13_default),
        honor_cipher_order: ssl.honor_cipher_order.unwrap_or(false),
        session_tickets: ssl.session_tickets.unwrap_or(true),
        session_timeout: ssl
            .session_cache_timeout
            .unwrap_or(super::DEFAULT_SESSION_CACHE_TIMEOUT),
        session_cache: if ssl.session_cache == Some(true) {
            SESSION_CACHE_ENTRIES
        } else {
            0
        },
        client_auth: match ssl.verify_client {
            Some(mode @ (VerifyClient::Optional | VerifyClient::Require)) => Some(ClientAuthSpec {
                required: mode == VerifyClient::Require,
                ca_file: ssl.ca_file.clone(),
                ca_path: ssl.ca_path.clone(),
                depth: ssl.verify_depth.unwrap_or(super::DEFAULT_VERIFY_DEPTH),
            }),
            _ => None,
        },
        protocols: site.modules.protocols.clone(),
        h2: site
            .http2
            .as_ref()
            .filter(|_| site.modules.protocols.lists("h2"))
            .map(|h| h.settings()),
        h3: site.http3,
        // The main server is managed only with `MDBaseServer on`.
        managed: (index.is_some() || engine.modules.md.base_server)
            .then(|| {
                crate::modules::md::domain_of(
                    &engine.modules.md.domains,
                    &site.server_name,
                    &site.aliases,
                )
            })
            .flatten()
            .cloned(),
        stapling: ssl.stapling.spec(ssl.stapling_cache),
        groups: ssl.groups.clone(),
    }
}

/// The TLS addresses of the configuration, most specific first.
pub fn tls_ports(engine: &Engine) -> Vec<TlsPortSpec> {
    let https = &engine.https_listeners;
    let mut specs: Vec<&String> = Vec::new();
    for v in &engine.vhosts {
        for a in &v.addrs {
            if !specs.contains(&a) {
                specs.push(a);
            }
        }
    }
    // An address with an IP before the wildcards that also cover it.
    specs.sort_by_key(|a| a.starts_with('*') || a.starts_with("_default_"));
    let mut out = Vec::new();
    for addr in specs {
        let candidates: Vec<(usize, &Site)> = engine
            .vhosts
            .iter()
            .enumerate()
            .filter(|(_, v)| v.addrs.contains(addr))
            .map(|(i, v)| (i, &**v))
            .collect();
        let default_on = candidates
            .first()
            .is_some_and(|(_, s)| enabled(&s.modules.ssl, &s.addrs, https));
        if !default_on {
            continue;
        }
        out.push(TlsPortSpec {
            addr: addr.clone(),
            sites: candidates
                .into_iter()
                .filter(|(_, s)| enabled(&s.modules.ssl, &s.addrs, https))
                .map(|(i, s)| site_spec(engine, s, Some(i)))
                .collect(),
        });
    }
    // The main server has no address of its own: only `SSLEngine on`
    // turns TLS on there, for the addresses no virtual host lists.
    let main = &engine.main;
    if main.modules.ssl.enabled() {
        out.push(TlsPortSpec {
            addr: "*".into(),
            sites: vec![site_spec(engine, main, None)],
        });
    }
    out
}

/// `ssl_server_compatible`: the same protocols, the same client
/// verification and the same certificates.
fn compatible(a: &SslServer, b: &SslServer) -> bool {
    a.protocols == b.protocols
        && a.cert_files == b.cert_files
        && a.key_files == b.key_files
        && a.verify_client.unwrap_or(VerifyClient::None)
            == b.verify_client.unwrap_or(VerifyClient::None)
        && a.verify_depth.unwrap_or(super::DEFAULT_VERIFY_DEPTH)
            == b.verify_depth.unwrap_or(super::DEFAULT_VERIFY_DEPTH)
        && a.ca_file == b.ca_file
        && a.ca_path == b.ca_path
}

/// `ssl_hook_ReadReq`'s checks on the initial request of a TLS
/// connection: an SNI name and no host is a 400; a host whose server has
/// other TLS settings than the handshake's (chosen by SNI, or the
/// address's default without) is a 421; no SNI where
/// `SSLStrictSNIVHostCheck` asks for it is a 403.
pub fn check_request(ctx: &mut Ctx<'_>) -> Result<(), Status> {
    // Read without marking the answer volatile: the answer memo keys its
    // answers by these two facts (`answer_memo`).
    let Some(tls) = ctx.req.tls.as_deref() else {
        return Ok(());
    };
    let engine = ctx.engine;
    let here = engine
        .vhosts
        .iter()
        .position(|v| std::ptr::eq(&**v, ctx.site));
    let handshake = |i: Option<usize>| match i {
        Some(i) => &engine.vhosts[i],
        None => &engine.main,
    };
    let hs = handshake(tls.handshake_site);
    if let (Some(sni), None) = (&tls.sni, crate::engine::request_host(ctx.req)) {
        ctx.reason = Some(crate::request::Reason::new(
            "error",
            "ssl",
            format!(
                "AH02031: Hostname {sni} provided via SNI, but no hostname provided in HTTP request"
            ),
        ));
        return Err(400);
    }
    // Apache 2.4.71 checks the host against the handshake's server with
    // or without SNI (without: the address's default server).
    if here != tls.handshake_site && !compatible(&hs.modules.ssl, &ctx.site.modules.ssl) {
        let host = crate::engine::request_host(ctx.req).map(|h| h.0);
        let via = match &tls.sni {
            Some(sni) => format!("{sni} provided via SNI"),
            None => format!("{} (default host as no SNI was provided)", hs.server_name),
        };
        ctx.reason = Some(crate::request::Reason::new("error", "ssl",
            format!(
                "AH02032: Hostname {via} and hostname {} provided via HTTP have no compatible SSL setup",
                host.unwrap_or_default()
            ),
        ));
        return Err(421);
    }
    if tls.sni.is_none()
        && (ctx.site.modules.ssl.strict_sni == Some(true)
            || hs.modules.ssl.strict_sni == Some(true))
        && engine
            .vhosts
            .iter()
            .filter(|v| {
                v.addrs
                    .iter()
                    .any(|a| crate::engine::addr_matches(a, ctx.req.local))
            })
            .count()
            > 1
    {
        ctx.reason = Some(crate::request::Reason::new(
            "info",
            "ssl",
            "AH02033: No hostname was provided via SNI for a name based virtual host",
        ));
        ctx.error_note = Some("Reason: The client software did not provide a hostname using Server Name Indication (SNI), which is required to access this server.<br />\n".into());
        return Err(403);
    }
    Ok(())
}
