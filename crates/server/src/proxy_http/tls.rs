//! HTTPS upstreams: mod_ssl's proxy side (`SSLProxyEngine on`,
//! `ProxyPass … https://`), on rustls's client.
//!
//! What a handshake checks is what mod_ssl checks: with `SSLProxyVerify
//! require` the chain, against the CAs of `SSLProxyCACertificateFile`/
//! `Path` within `SSLProxyVerifyDepth` (the files read when a connection
//! first needs them, and again once they changed); then, after it (`ssl_io_filter_handshake`), whatever
//! `SSLProxyVerify` says (`none` is the default), the certificate's dates
//! (`SSLProxyCheckPeerExpire`) and so is its name against the request's
//! host (`SSLProxyCheckPeerName`: the subjectAltName's DNS names and the
//! subject's CNs, a leading `*.` matching one label, as
//! `modssl_X509_match_name` does; or the CN alone with `SSLProxyCheckPeerCN
//! on`). The handshake's own signatures are verified as always. SNI names
//! the request's host unless it is an IP address.
//!
//! A failed handshake is mod_proxy_http's 500 "Error during SSL Handshake
//! with remote server".

use crate::tls::der;
use htaccel_engine::http::backend::{BackendError, TlsUpstream, UpstreamVerify};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{ring, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use std::sync::Arc;
use tokio::net::TcpStream;

/// A TLS connection to an upstream.
pub(crate) type Stream = tokio_rustls::client::TlsStream<TcpStream>;

/// Secure `tcp` to `upstream` (within the caller's connect timeout).
pub(crate) async fn handshake(
    tcp: TcpStream,
    upstream: &TlsUpstream,
) -> Result<Stream, BackendError> {
    let provider = Arc::new(CryptoProvider {
        cipher_suites: crate::tls::config::suites(&upstream.suites),
        ..ring::default_provider()
    });
    let checks = PeerChecks {
        upstream: upstream.clone(),
        provider: provider.clone(),
    };
    let mut versions: Vec<&'static rustls::SupportedProtocolVersion> = Vec::new();
    if upstream.tls13 {
        versions.push(&rustls::version::TLS13);
    }
    if upstream.tls12 {
        versions.push(&rustls::version::TLS12);
    }
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&versions)
        .map_err(|e| failed(upstream, &e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(checks))
        .with_no_client_auth();
    let host = upstream.hostname.as_str();
    let name = match host.parse::<std::net::IpAddr>() {
        Ok(ip) => ServerName::IpAddress(ip.into()),
        Err(_) => {
            ServerName::try_from(host.to_string()).map_err(|e| failed(upstream, &e.to_string()))?
        }
    };
    tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .map_err(|e| failed(upstream, &e.to_string()))
}

/// mod_proxy_http's answer to a handshake that failed.
fn failed(upstream: &TlsUpstream, why: &str) -> BackendError {
    BackendError::Proxy {
        status: 500,
        message: format!(
            "AH01084: pass request body failed to {} ({}): {why}",
            upstream.addr, upstream.hostname
        ),
        reason: "Error during SSL Handshake with remote server",
    }
}

/// The checks of `SSLProxyVerify none`.
#[derive(Debug)]
struct PeerChecks {
    upstream: TlsUpstream,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for PeerChecks {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Some(verify) = &self.upstream.verify {
            self.verify_chain(verify, end_entity, intermediates, now)?;
        }
        let facts = der::CertFacts::of(end_entity);
        let now = now.as_secs() as i64;
        if self.upstream.check_peer_expire && (now < facts.not_before || now > facts.not_after) {
            return Err(rustls::Error::General(
                "AH02004: SSL Proxy: Peer certificate is expired".into(),
            ));
        }
        let host = &self.upstream.hostname;
        if self.upstream.checks_name() && !matches_name(&facts, host) {
            return Err(rustls::Error::General(format!(
                "AH02411: SSL Proxy: Peer certificate does not match for hostname {host}"
            )));
        }
        if self.upstream.checks_cn_only() {
            let cn = facts.common_names.first().map_or("", String::as_str);
            if !matches_id(cn, host) {
                return Err(rustls::Error::General(format!(
                    "AH02005: SSL Proxy: Peer certificate CN mismatch: Certificate CN: {cn} Requested hostname: {host}"
                )));
            }
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

impl PeerChecks {
    /// `SSLProxyVerify require`: the chain ends at a CA of the CA file or
    /// directory, within `SSLProxyVerifyDepth` as OpenSSL counts it.
    fn verify_chain(
        &self,
        verify: &UpstreamVerify,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<(), rustls::Error> {
        let fail = |why: String| {
            rustls::Error::General(format!("SSL Proxy: certificate verification failed: {why}"))
        };
        let cas = trusted(verify).map_err(fail)?;
        let parsed = rustls::server::ParsedCertificate::try_from(end_entity)?;
        rustls::client::verify_server_cert_signed_by_trust_anchor(
            &parsed,
            &cas.roots,
            intermediates,
            now,
            self.provider.signature_verification_algorithms.all,
        )?;
        match crate::tls::client_verify::openssl_chain_depth(end_entity, intermediates, &cas.certs)
        {
            Some(depth) if depth <= verify.depth as usize => Ok(()),
            found => Err(fail(format!(
                "chain depth {} over SSLProxyVerifyDepth {}",
                found.map_or_else(|| "unknown".into(), |d| d.to_string()),
                verify.depth
            ))),
        }
    }
}

/// The CAs of a proxy's verification, parsed once and kept while their
/// files stay as they were.
struct Trusted {
    /// Each file's path, modification time and length when read.
    stamps: Vec<(std::path::PathBuf, Option<std::time::SystemTime>, u64)>,
    roots: rustls::RootCertStore,
    certs: Vec<CertificateDer<'static>>,
}

/// The CAs `verify` names: kept per setting, read again when one of their
/// files changed (a stat per file and connection, not a parse).
fn trusted(verify: &UpstreamVerify) -> Result<Arc<Trusted>, String> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static KEPT: OnceLock<Mutex<HashMap<UpstreamVerify, Arc<Trusted>>>> = OnceLock::new();
    let mut files = Vec::new();
    if let Some(f) = &verify.ca_file {
        files.push(f.clone());
    }
    if let Some(dir) = &verify.ca_path {
        files.extend(crate::tls::client_verify::ca_path_files(dir)?);
    }
    let stamps: Vec<_> = files
        .into_iter()
        .map(|f| {
            let m = std::fs::metadata(&f).ok();
            let (modified, len) = (
                m.as_ref().and_then(|m| m.modified().ok()),
                m.map_or(0, |m| m.len()),
            );
            (f, modified, len)
        })
        .collect();
    let kept = KEPT.get_or_init(Default::default);
    if let Some(t) = kept.lock().unwrap_or_else(|e| e.into_inner()).get(verify) {
        if t.stamps == stamps {
            return Ok(t.clone());
        }
    }
    let read = |p: &std::path::Path| std::fs::read(p);
    let cas = crate::tls::client_verify::read_cas(
        verify.ca_file.as_deref(),
        verify.ca_path.as_deref(),
        &read,
    )?;
    let mut roots = rustls::RootCertStore::empty();
    for (_, ca) in &cas {
        let _ = roots.add(ca.clone());
    }
    let t = Arc::new(Trusted {
        stamps,
        roots,
        certs: cas.into_iter().map(|(_, c)| c).collect(),
    });
    kept.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(verify.clone(), t.clone());
    Ok(t)
}

/// `modssl_X509_match_name`: a DNS name or CN of the certificate names
/// `host`.
fn matches_name(facts: &der::CertFacts, host: &str) -> bool {
    facts
        .dns_names
        .iter()
        .chain(&facts.common_names)
        .any(|id| matches_id(id, host))
}

/// One ID against `host`: equal without case, or `*.rest` matching the
/// host's labels after its first.
fn matches_id(id: &str, host: &str) -> bool {
    if id.eq_ignore_ascii_case(host) {
        return true;
    }
    match (id.strip_prefix('*'), host.find('.')) {
        (Some(rest), Some(dot)) if rest.starts_with('.') => rest.eq_ignore_ascii_case(&host[dot..]),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_as_mod_ssl_matches_them() {
        assert!(matches_id("LocalHost", "localhost"));
        assert!(matches_id("*.two.test", "a.two.test"));
        assert!(!matches_id("*.two.test", "a.b.two.test"));
        assert!(!matches_id("*.two.test", "two.test"));
        assert!(!matches_id("localhost", "127.0.0.1"));
        let facts = der::CertFacts {
            dns_names: vec!["www.example.com".into()],
            common_names: vec!["example.com".into()],
            ..Default::default()
        };
        assert!(matches_name(&facts, "example.com"));
        assert!(matches_name(&facts, "WWW.example.com"));
        assert!(!matches_name(&facts, "other.example.com"));
    }

    #[test]
    fn the_checks_that_apply() {
        let up = |name, cn| TlsUpstream {
            addr: "127.0.0.1:443".into(),
            hostname: "localhost".into(),
            check_peer_name: name,
            check_peer_cn: cn,
            check_peer_expire: true,
            verify: None,
            tls12: true,
            tls13: true,
            suites: Vec::new(),
        };
        assert!(up(None, None).checks_name());
        assert!(!up(None, Some(false)).checks_name());
        assert!(up(Some(true), Some(false)).checks_name());
        assert!(!up(Some(false), None).checks_name() && !up(Some(false), None).checks_cn_only());
        assert!(up(Some(false), Some(true)).checks_cn_only());
    }
}
