//! TLS on rustls, as a transport under the HTTP/1.1 framing.
//!
//! Which local addresses speak TLS, and with which certificates and
//! settings, comes from mod_ssl's configuration ([`TlsPortSpec`], built by
//! the engine). [`TlsSetup::build`] reads every certificate and key with
//! each configuration generation ([`TlsSetup::build_reading`]: through
//! the binary's privileged broker when the server runs as `User`, since
//! keys are root's). A connection to a TLS
//! address goes through `accept` (plain HTTP refused as mod_ssl refuses
//! it, the ClientHello read, the server chosen by SNI, the handshake
//! finished within the handshake time limit) and is then served by the
//! same connection loop as plain HTTP over a `stream::TlsStream`.
//!
//! The crypto provider is *ring*: it builds with a C compiler alone
//! (aws-lc-rs needs cmake and a longer build), and for what a web server
//! spends (ECDHE, AES-GCM and ChaCha20, ECDSA and RSA signatures) the two
//! are close. Renegotiation does not exist in rustls; TLS 1.2 and 1.3 are
//! all it speaks.

mod accept;
mod async_io;
pub(crate) mod client_verify;
pub(crate) mod config;
pub(crate) mod der;
pub(crate) mod quic;
mod sessions;
pub(crate) mod stapling;
mod stream;

pub(crate) use accept::{handshake_limit, serve};

use htaccel_engine::http::tls::TlsPortSpec;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How certificate, key and CA files are read.
pub type ReadFile<'a> = dyn Fn(&Path) -> std::io::Result<Vec<u8>> + 'a;

/// Every TLS address of the server with its servers, ready for handshakes.
pub struct TlsSetup {
    ports: Vec<Arc<Port>>,
    /// Each address's QUIC handshake configuration, when one of its
    /// servers has HTTP/3 on (`htaccel_http3`).
    quic: Vec<Option<Arc<quinn::ServerConfig>>>,
    /// What mod_ssl logs at start without stopping (certificates that
    /// cannot be stapled), for [`TlsSetup::log_to`].
    notices: Vec<String>,
}

impl std::fmt::Debug for TlsSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.ports.iter().map(|p| &p.addr))
            .finish()
    }
}

/// The servers a connection to one address may use, its default first.
pub(crate) struct Port {
    addr: String,
    sites: Vec<Site>,
}

/// One server's certificates (one configuration each) and names.
pub(crate) struct Site {
    site: Option<usize>,
    names: Vec<String>,
    keys: Vec<config::KeyConfig>,
    /// `Protocols`, for ALPN.
    protocols: htaccel_engine::modules::http2::ProtocolsConf,
    /// The HTTP/2 settings when ALPN may select `h2`.
    h2: Option<htaccel_engine::http::http2::H2Settings>,
    /// The HTTP/3 settings (`H3Engine on`).
    h3: Option<htaccel_engine::http::http3::H3Settings>,
    /// `SSLHonorCipherOrder` (after the default server's, as applied).
    honor_cipher_order: bool,
    /// The TLS 1.3 suites by OpenSSL name (`SSLCipherSuite TLSv1.3`).
    suites13: Vec<&'static str>,
    /// The key exchange groups (`SSLOpenSSLConfCmd Curves`).
    groups: Option<Vec<htaccel_engine::http::tls::KxGroup>>,
}

impl TlsSetup {
    /// Read every certificate and key and build the configurations; an
    /// error names the file (or setting) at fault.
    pub fn build(specs: &[TlsPortSpec]) -> Result<TlsSetup, String> {
        Self::build_reading(specs, &|p: &Path| std::fs::read(p))
    }

    /// [`TlsSetup::build`], with every certificate, key and CA file read
    /// by `read` (the binary's privileged broker hands over files only
    /// root may read).
    pub fn build_reading(specs: &[TlsPortSpec], read: &ReadFile<'_>) -> Result<TlsSetup, String> {
        let mut ports = Vec::new();
        let mut notices = Vec::new();
        for p in specs {
            let mut sites = Vec::new();
            let default = p.sites.first();
            for s in &p.sites {
                // mod_ssl switches to the SNI server's settings by
                // SSL_set_options, which adds options and never clears
                // them: the address's default server's server cipher order
                // and its refusal of tickets stay in force.
                let mut s = s.clone();
                // Sessions are made by the address's first context
                // (OpenSSL's `session_ctx`), so their timeout is the
                // default server's too.
                if let Some(d) = default {
                    s.honor_cipher_order |= d.honor_cipher_order;
                    s.session_tickets &= d.session_tickets;
                    s.session_timeout = d.session_timeout;
                }
                let s = &s;
                let keys = config::build(s, read, &mut notices).map_err(|e| {
                    let server = s.names.first().map_or("the main server", String::as_str);
                    format!("SSL setup of {server} ({}): {e}", p.addr)
                })?;
                sites.push(Site {
                    site: s.site,
                    names: s.names.iter().map(|n| n.to_ascii_lowercase()).collect(),
                    keys,
                    protocols: s.protocols.clone(),
                    h2: s.h2,
                    h3: s.h3,
                    honor_cipher_order: s.honor_cipher_order,
                    suites13: s.suites13.clone(),
                    groups: s.groups.clone(),
                });
            }
            if !sites.is_empty() {
                ports.push(Arc::new(Port {
                    addr: p.addr.clone(),
                    sites,
                }));
            }
        }
        let quic = ports
            .iter()
            .map(quic::server_config)
            .collect::<Result<_, _>>()?;
        Ok(TlsSetup {
            ports,
            quic,
            notices,
        })
    }

    /// Log what the setup found wrong without stopping, and send the
    /// OCSP fetches' errors to `log` (the main server's error log).
    pub fn log_to(&self, log: &Arc<dyn htaccel_engine::http::Log>) {
        for n in &self.notices {
            log.error("error", "ssl", None, n);
        }
        let keys = self
            .ports
            .iter()
            .flat_map(|p| &p.sites)
            .flat_map(|s| &s.keys);
        for stapler in keys.filter_map(|k| k.stapler.as_ref()) {
            stapler.set_log(log.clone());
        }
    }

    /// Every file [`TlsSetup::build`] reads for `specs`: certificates,
    /// keys, chains, CA files and the files of CA directories.
    pub fn files(specs: &[TlsPortSpec]) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let mut add = |p: &Path| {
            if !out.iter().any(|o: &PathBuf| o == p) {
                out.push(p.to_path_buf());
            }
        };
        for s in specs.iter().flat_map(|p| &p.sites) {
            for pair in &s.keys {
                add(&pair.cert);
                add(pair.key.as_deref().unwrap_or(&pair.cert));
            }
            if let Some(c) = &s.chain {
                add(c);
            }
            if let Some(auth) = &s.client_auth {
                if let Some(f) = &auth.ca_file {
                    add(f);
                }
                if let Some(dir) = &auth.ca_path {
                    for f in client_verify::ca_path_files(dir).unwrap_or_default() {
                        add(&f);
                    }
                }
            }
        }
        out
    }

    /// Whether no address speaks TLS.
    pub fn is_empty(&self) -> bool {
        self.ports.is_empty()
    }

    /// The TLS servers of a connection to `local`, if it speaks TLS.
    pub(crate) fn port_for(&self, local: SocketAddr) -> Option<usize> {
        self.ports
            .iter()
            .position(|p| htaccel_engine::engine::addr_matches(&p.addr, local))
    }
}

impl Port {
    /// The server the client's SNI names, else the address's default.
    fn choose(&self, sni: Option<&str>) -> &Site {
        sni.and_then(|name| {
            self.sites.iter().find(|s| {
                s.names.iter().any(|n| {
                    htaccel_conf::fnmatch::strcmp_match(name.as_bytes(), n.as_bytes(), true)
                })
            })
        })
        .unwrap_or(&self.sites[0])
    }
}

impl Site {
    /// Among the server's certificates, the one the client can verify:
    /// ECDSA first when it can, as OpenSSL prefers it with the usual
    /// cipher orders.
    ///
    /// A managed domain's temporary certificate counts only when the
    /// server has no certificate file (mod_md's fallback).
    fn pick_key(&self, schemes: &[rustls::SignatureScheme]) -> &config::KeyConfig {
        let files = self.keys.iter().any(|k| !k.is_managed());
        let usable = |k: &&config::KeyConfig| {
            k.schemes.iter().any(|s| schemes.contains(s)) && !(files && k.is_temporary())
        };
        self.keys
            .iter()
            .filter(usable)
            .find(|k| k.ecdsa)
            .or_else(|| self.keys.iter().find(usable))
            .or_else(|| self.keys.iter().find(|k| !(files && k.is_temporary())))
            .unwrap_or(&self.keys[0])
    }
}

/// Shared so that a `ServerOptions` can be cloned.
pub type SharedTlsSetup = Arc<TlsSetup>;
