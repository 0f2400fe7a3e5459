//! From a server's TLS settings ([`TlsSiteSpec`]) to rustls configurations:
//! certificates and keys read and checked (a missing, unreadable or
//! mismatched file is an error naming it), protocol versions, cipher
//! suites by their OpenSSL names, session resumption (bounded by
//! `SSLSessionCacheTimeout`, see `super::sessions`).
//!
//! A server with both an RSA and an ECDSA certificate gets one rustls
//! configuration per certificate; the handshake picks one by what the
//! client can verify, as OpenSSL picks among a server's keys.

use super::der;
use super::sessions::{TimedSessions, TimedTickets};
use super::stapling::Stapler;
use htaccel_engine::http::tls::{ClientAuthSpec, KeyPairSpec, KxGroup, TlsSiteSpec};
use rustls::crypto::{ring, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::ResolvesServerCert;
use rustls::server::{NoServerSessionStorage, ServerSessionMemoryCache};
use rustls::sign::CertifiedKey;
use rustls::{CipherSuite, ServerConfig, SignatureScheme, SupportedCipherSuite};
use std::path::Path;
use std::sync::Arc;

/// One certificate of a server, ready for handshakes.
pub(crate) struct KeyConfig {
    /// Selects `http/1.1` by ALPN when the client offers it, as Apache does.
    pub config: Arc<ServerConfig>,
    /// The same without ALPN, for a client whose ALPN list lacks
    /// `http/1.1` (rustls would refuse it; Apache answers anyway).
    pub config_no_alpn: Arc<ServerConfig>,
    /// The same selecting `h2`, when the server may speak HTTP/2.
    pub config_h2: Option<Arc<ServerConfig>>,
    /// The key is ECDSA (else RSA, or Ed25519).
    pub ecdsa: bool,
    /// The signature schemes the key can make.
    pub schemes: Vec<SignatureScheme>,
    /// The certificate, for what `SSL_SERVER_*` shows of it.
    pub source: CertSource,
    /// A file's chain and key (a managed domain's are in its cell).
    fixed_key: Option<Arc<CertifiedKey>>,
    /// Its OCSP stapling, when on and possible for it.
    pub stapler: Option<Arc<super::stapling::Stapler>>,
}

/// Where a configuration's certificate comes from.
pub(crate) enum CertSource {
    /// A file read at start: its facts and `SSL_SERVER_CERT`.
    Fixed(Arc<(der::CertFacts, Arc<str>)>),
    /// A managed domain's (mod_md), replaced while the server runs.
    Managed(Arc<crate::md::CertCell>),
}

impl KeyConfig {
    /// A managed domain's certificate (else a file's).
    pub(crate) fn is_managed(&self) -> bool {
        matches!(&self.source, CertSource::Managed(_))
    }

    /// A managed domain's temporary certificate, used now.
    pub(crate) fn is_temporary(&self) -> bool {
        matches!(&self.source, CertSource::Managed(cell) if cell.get().fallback)
    }

    /// The chain and key handshakes use now (for the QUIC handshake's
    /// resolver, `super::quic`).
    pub(crate) fn certified(&self) -> Arc<CertifiedKey> {
        match (&self.source, &self.fixed_key) {
            (CertSource::Managed(cell), _) => cell.get().key.clone(),
            (CertSource::Fixed(_), _) if self.stapler.is_some() => {
                self.stapler.as_ref().map(|s| s.current()).expect("checked")
            }
            (CertSource::Fixed(_), Some(key)) => key.clone(),
            (CertSource::Fixed(_), None) => unreachable!("a file's configuration keeps its key"),
        }
    }

    /// The facts and PEM of the certificate handshakes send now.
    pub(crate) fn shown(&self) -> Arc<(der::CertFacts, Arc<str>)> {
        match &self.source {
            CertSource::Fixed(f) => f.clone(),
            CertSource::Managed(cell) => {
                let live = cell.get();
                Arc::new((live.facts.clone(), live.pem.clone()))
            }
        }
    }
}

/// The ALPN name of HTTP/1.1, the protocol htaccel speaks over TLS.
pub(crate) const ALPN_HTTP11: &[u8] = b"http/1.1";
/// The ALPN name of HTTP/2 over TLS.
pub(crate) const ALPN_H2: &[u8] = b"h2";

/// OpenSSL's name of a rustls suite.
pub(crate) fn openssl_name(suite: CipherSuite) -> Option<&'static str> {
    Some(match suite {
        CipherSuite::TLS13_AES_256_GCM_SHA384 => "TLS_AES_256_GCM_SHA384",
        CipherSuite::TLS13_AES_128_GCM_SHA256 => "TLS_AES_128_GCM_SHA256",
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256 => "TLS_CHACHA20_POLY1305_SHA256",
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 => "ECDHE-ECDSA-AES256-GCM-SHA384",
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 => "ECDHE-ECDSA-AES128-GCM-SHA256",
        CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 => {
            "ECDHE-ECDSA-CHACHA20-POLY1305"
        }
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => "ECDHE-RSA-AES256-GCM-SHA384",
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => "ECDHE-RSA-AES128-GCM-SHA256",
        CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 => "ECDHE-RSA-CHACHA20-POLY1305",
        _ => return None,
    })
}

/// The suites of `names` (OpenSSL names) among those ring offers, in that order.
pub(crate) fn suites(names: &[&str]) -> Vec<SupportedCipherSuite> {
    names
        .iter()
        .filter_map(|n| {
            ring::ALL_CIPHER_SUITES
                .iter()
                .find(|s| openssl_name(s.suite()) == Some(n))
                .copied()
        })
        .collect()
}

/// The key exchange groups `SSLOpenSSLConfCmd Curves` lists, in its
/// order (`None`: ring's defaults).
pub(super) fn kx_groups(
    groups: Option<&[KxGroup]>,
) -> Vec<&'static dyn rustls::crypto::SupportedKxGroup> {
    match groups {
        Some(groups) => groups
            .iter()
            .map(|g| match g {
                KxGroup::X25519 => ring::kx_group::X25519,
                KxGroup::Secp256r1 => ring::kx_group::SECP256R1,
                KxGroup::Secp384r1 => ring::kx_group::SECP384R1,
            })
            .collect(),
        None => ring::default_provider().kx_groups,
    }
}

/// One certificate of a server before its configuration is built: its
/// resolver, whether its key is ECDSA, the schemes it signs with, and
/// where it comes from.
type Entry = (
    Arc<dyn ResolvesServerCert>,
    bool,
    Vec<SignatureScheme>,
    CertSource,
    Option<Arc<CertifiedKey>>,
    Option<Arc<Stapler>>,
);

/// Build the configurations of one server: one per certificate. What
/// mod_ssl logs at start and goes on (a certificate that cannot be
/// stapled) is added to `notices`.
pub(crate) fn build(
    spec: &TlsSiteSpec,
    read: &super::ReadFile<'_>,
    notices: &mut Vec<String>,
) -> Result<Vec<KeyConfig>, String> {
    if spec.keys.is_empty() && spec.managed.is_none() {
        return Err("SSLEngine on but no SSLCertificateFile".into());
    }
    if spec.stapling.as_ref().is_some_and(|s| !s.cache) {
        return Err("AH01958: SSLStapling: no stapling cache available (SSLStaplingCache)".into());
    }
    let mut versions: Vec<&'static rustls::SupportedProtocolVersion> = Vec::new();
    if spec.tls13 {
        versions.push(&rustls::version::TLS13);
    }
    if spec.tls12 {
        versions.push(&rustls::version::TLS12);
    }
    if versions.is_empty() {
        return Err("SSLProtocol leaves no protocol htaccel can speak (TLSv1.2, TLSv1.3)".into());
    }
    let mut chosen = suites(&spec.suites13);
    chosen.extend(suites(&spec.suites12));
    if spec.tls12 && !spec.tls13 && suites(&spec.suites12).is_empty() {
        return Err("SSLCipherSuite leaves no cipher suite for TLSv1.2".into());
    }
    let provider = Arc::new(CryptoProvider {
        cipher_suites: chosen,
        kx_groups: kx_groups(spec.groups.as_deref()),
        ..ring::default_provider()
    });
    let chain = match &spec.chain {
        Some(p) => read_certs(p, read)?,
        None => Vec::new(),
    };
    let storage: Arc<dyn rustls::server::StoresServerSessions + Send + Sync> =
        if spec.session_cache > 0 {
            TimedSessions::new(
                ServerSessionMemoryCache::new(spec.session_cache),
                spec.session_timeout,
            )
        } else {
            Arc::new(NoServerSessionStorage {})
        };
    let ticketer: Option<Arc<dyn rustls::server::ProducesTickets>> = if spec.session_tickets {
        let keys = ring::Ticketer::new().map_err(|e| format!("session tickets: {e}"))?;
        Some(TimedTickets::new(keys, spec.session_timeout))
    } else {
        None
    };
    let client_verifier = match &spec.client_auth {
        Some(auth) => Some(super::client_verify::verifier(auth, &provider, read)?),
        None => None,
    };
    // A managed domain's certificates come first, then the files: mod_md
    // adds its certificates to the server's (they win over a file's of the
    // same key type), and while it has none the files are used, its
    // temporary certificate only when there are none (`Site::pick_key`).
    let mut entries: Vec<Entry> = Vec::new();
    if let Some(md) = &spec.managed {
        for key in &md.keys {
            let cell = crate::md::cell(md, key)?;
            entries.push((
                Arc::new(crate::md::CellResolver(cell.clone())),
                true,
                crate::md::schemes(key.curve),
                CertSource::Managed(cell),
                None,
                None,
            ));
        }
        if spec.stapling.is_some() {
            notices.push(format!(
                "SSLUseStapling on: the certificates of the managed domain {} are not stapled (htaccel staples certificate files only)",
                md.name
            ));
        }
    }
    let more_issuers = match (&spec.stapling, &spec.client_auth) {
        (
            Some(_),
            Some(ClientAuthSpec {
                ca_file: Some(f), ..
            }),
        ) => read_certs(f, read)?,
        _ => Vec::new(),
    };
    for pair in &spec.keys {
        let (key, mut certs) = load_pair(pair, &provider, read)?;
        certs.extend(chain.iter().cloned());
        let cert = der::CertFacts::of(&certs[0]);
        let pem: Arc<str> = htaccel_engine::http::tls::pem(&certs[0]).into();
        let ecdsa = key.algorithm() == rustls::SignatureAlgorithm::ECDSA;
        let schemes = signable(&key);
        let certified = Arc::new(CertifiedKey::new(certs, key));
        let index = entries.len();
        let stapler = spec.stapling.as_ref().and_then(|stapling| {
            match super::stapling::stapler(stapling, certified.clone(), &more_issuers) {
                Ok(s) => Some(Arc::new(s)),
                Err(why) => {
                    notices.push(why);
                    notices.push(format!(
                        "AH02604: Unable to configure certificate {}:{index} for stapling",
                        spec.server_id
                    ));
                    None
                }
            }
        });
        let resolver: Arc<dyn ResolvesServerCert> = match &stapler {
            Some(s) => Arc::new(Stapled(s.clone())),
            None => Arc::new(Fixed(certified.clone())),
        };
        entries.push((
            resolver,
            ecdsa,
            schemes,
            CertSource::Fixed(Arc::new((cert, pem))),
            Some(certified),
            stapler,
        ));
    }
    let mut out = Vec::new();
    for (resolver, ecdsa, schemes, source, fixed_key, stapler) in entries {
        let builder = ServerConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&versions)
            .map_err(|e| format!("SSLProtocol/SSLCipherSuite: {e}"))?;
        let builder = match &client_verifier {
            Some(v) => builder.with_client_cert_verifier(v.clone()),
            None => builder.with_no_client_auth(),
        };
        let mut config = builder.with_cert_resolver(resolver);
        config.ignore_client_order = spec.honor_cipher_order;
        config.session_storage = storage.clone();
        match &ticketer {
            Some(t) => config.ticketer = t.clone(),
            // Without tickets, TLS 1.3 still resumes by the session cache
            // (stateful tickets naming a cached session, as OpenSSL sends
            // with SSLSessionTickets off); with neither, nothing is sent.
            None if spec.session_cache > 0 => {}
            None => config.send_tls13_tickets = 0,
        }
        let config_no_alpn = Arc::new(config.clone());
        let config_h2 = spec.h2.is_some().then(|| {
            let mut h2 = config.clone();
            h2.alpn_protocols = vec![ALPN_H2.to_vec()];
            Arc::new(h2)
        });
        config.alpn_protocols = vec![ALPN_HTTP11.to_vec()];
        out.push(KeyConfig {
            config: Arc::new(config),
            config_no_alpn,
            config_h2,
            ecdsa,
            schemes,
            source,
            fixed_key,
            stapler,
        });
    }
    Ok(out)
}

/// A stapled certificate: with the response its stapler holds now.
#[derive(Debug)]
struct Stapled(Arc<Stapler>);

impl ResolvesServerCert for Stapled {
    fn resolve(&self, _hello: rustls::server::ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.0.current())
    }
}

/// The one certificate of a configuration (the choice among a server's
/// certificates is made before, see `super::accept`).
#[derive(Debug)]
struct Fixed(Arc<CertifiedKey>);

impl ResolvesServerCert for Fixed {
    fn resolve(&self, _hello: rustls::server::ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.0.clone())
    }
}

/// The schemes a key can sign with.
fn signable(key: &Arc<dyn rustls::sign::SigningKey>) -> Vec<SignatureScheme> {
    use SignatureScheme::*;
    let all = [
        ECDSA_NISTP256_SHA256,
        ECDSA_NISTP384_SHA384,
        ECDSA_NISTP521_SHA512,
        ED25519,
        RSA_PSS_SHA256,
        RSA_PSS_SHA384,
        RSA_PSS_SHA512,
        RSA_PKCS1_SHA256,
        RSA_PKCS1_SHA384,
        RSA_PKCS1_SHA512,
    ];
    all.iter()
        .copied()
        .filter(|s| key.choose_scheme(&[*s]).is_some())
        .collect()
}

fn read_file(path: &Path, what: &str, read: &super::ReadFile<'_>) -> Result<Vec<u8>, String> {
    read(path).map_err(|e| format!("{what} {}: {e}", path.display()))
}

/// Every certificate of a PEM file, the leaf first.
fn read_certs(
    path: &Path,
    read: &super::ReadFile<'_>,
) -> Result<Vec<CertificateDer<'static>>, String> {
    let pem = read_file(path, "certificate file", read)?;
    let certs: Vec<_> = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("certificate file {}: {e}", path.display()))?;
    if certs.is_empty() && pem.first() == Some(&0x30) {
        // DER, as mod_ssl also accepts: one certificate.
        return Ok(vec![CertificateDer::from(pem)]);
    }
    if certs.is_empty() {
        return Err(format!(
            "certificate file {}: no certificate in it",
            path.display()
        ));
    }
    Ok(certs)
}

/// A certificate file and its key (from the key file, else the same file),
/// checked to belong together.
fn load_pair(
    pair: &KeyPairSpec,
    provider: &CryptoProvider,
    read: &super::ReadFile<'_>,
) -> Result<
    (
        Arc<dyn rustls::sign::SigningKey>,
        Vec<CertificateDer<'static>>,
    ),
    String,
> {
    let certs = read_certs(&pair.cert, read)?;
    let key_path = pair.key.as_deref().unwrap_or(&pair.cert);
    let pem = read_file(key_path, "private key file", read)?;
    if contains(&pem, b"ENCRYPTED") {
        return Err(format!(
            "private key file {}: the key is encrypted, and htaccel cannot ask for its pass phrase (SSLPassPhraseDialog builtin is not supported): store it decrypted (openssl pkey -in KEY -out KEY.plain), readable by root only",
            key_path.display()
        ));
    }
    let key = match PrivateKeyDer::from_pem_slice(&pem) {
        Ok(k) => k,
        // DER (PKCS#8, PKCS#1 or SEC1), as mod_ssl also accepts.
        Err(_) if pem.first() == Some(&0x30) => PrivateKeyDer::try_from(pem.as_slice())
            .map_err(|e| format!("private key file {}: {e}", key_path.display()))?
            .clone_key(),
        Err(e) => return Err(format!("private key file {}: {e}", key_path.display())),
    };
    let key = provider
        .key_provider
        .load_private_key(key)
        .map_err(|e| format!("private key file {}: {e}", key_path.display()))?;
    let certified = CertifiedKey::new(certs.clone(), key.clone());
    match certified.keys_match() {
        Ok(()) | Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::Unknown)) => {}
        Err(_) => {
            return Err(format!(
                "private key file {} does not match the certificate of {}",
                key_path.display(),
                pair.cert.display()
            ))
        }
    }
    Ok((key, certs))
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// The configuration of a `tls-alpn-01` answer: the challenge's
/// certificate, `acme-tls/1` selected, TLS 1.2 and 1.3.
pub(crate) fn acme_tls_alpn(cert: Arc<CertifiedKey>) -> Arc<ServerConfig> {
    let mut config = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("ring's defaults")
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(Fixed(cert)));
    config.alpn_protocols = vec![crate::md::alpn::ACME_TLS_ALPN.to_vec()];
    Arc::new(config)
}
