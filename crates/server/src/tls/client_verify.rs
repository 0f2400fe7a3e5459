//! Client certificates verified as mod_ssl verifies them with OpenSSL
//! (`SSLVerifyClient`, `SSLCACertificateFile`/`Path`, `SSLVerifyDepth`).
//!
//! rustls's WebPKI verifier checks the signatures, the validity dates and
//! the purpose, and accepts a path ending at any certificate of the CA
//! files. OpenSSL, as mod_ssl uses it, refuses more, and this verifier
//! adds what it refuses on top of the WebPKI verdict:
//!
//! - the chain must end at a self-signed certificate of the CA files: an
//!   intermediate CA listed there whose own CA is not listed verifies
//!   nothing (mod_ssl does not set `X509_V_FLAG_PARTIAL_CHAIN`);
//! - `SSLVerifyDepth` bounds the chain: mod_ssl's verify callback refuses
//!   any certificate found deeper than the depth, counting the client's
//!   certificate as 0 and the self-signed CA at the top too. The default,
//!   1, thus accepts only a certificate a configured CA issued directly.
//!
//! The chain counted is the one OpenSSL builds, trusted certificates
//! first: each certificate's issuer is looked for by name among the CA
//! files' certificates, then among those the client sent; above a
//! certificate of the CA files, only among the CA files. (A name names one
//! CA here; two CAs of one name would need OpenSSL's key identifier
//! matching as well.)
//!
//! OpenSSL answers a chain that is too long with an `internal_error`
//! alert (mod_ssl refuses it without setting an X.509 error); rustls
//! sends `certificate_unknown` for it, so a TLS 1.2 handshake's alert,
//! still unencrypted, is written as OpenSSL writes it
//! ([`plain_alert_for`]); a TLS 1.3 alert is encrypted and stays rustls's.

use super::der;
use htaccel_engine::http::tls::ClientAuthSpec;
use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{CertificateError, DigitallySignedStruct, DistinguishedName, OtherError};
use std::path::Path;
use std::sync::Arc;

/// OpenSSL's own bound on a chain (its default verify depth, 100), which
/// also ends a loop of certificates naming each other as issuer.
const OPENSSL_MAX_DEPTH: usize = 100;

/// The TLS 1.2 record of a fatal `internal_error` alert, unencrypted.
const TLS12_INTERNAL_ERROR_ALERT: [u8; 7] = [0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x50];

/// `SSLVerifyClient optional|require`: client certificates verified
/// against the CAs of `SSLCACertificateFile` and `SSLCACertificatePath`
/// (every certificate file in that directory), within `SSLVerifyDepth`.
pub(crate) fn verifier(
    auth: &ClientAuthSpec,
    provider: &Arc<CryptoProvider>,
    read_file: &super::ReadFile<'_>,
) -> Result<Arc<dyn ClientCertVerifier>, String> {
    let cas = read_cas(auth.ca_file.as_deref(), auth.ca_path.as_deref(), read_file)?;
    if cas.is_empty() {
        return Err("SSLVerifyClient needs SSLCACertificateFile or SSLCACertificatePath with at least one CA certificate".into());
    }
    let mut roots = rustls::RootCertStore::empty();
    for (file, cert) in &cas {
        roots
            .add(cert.clone())
            .map_err(|e| format!("CA certificate file {}: {e}", file.display()))?;
    }
    let builder = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    );
    let builder = if auth.required {
        builder
    } else {
        builder.allow_unauthenticated()
    };
    let webpki = builder
        .build()
        .map_err(|e| format!("SSLVerifyClient: {e}"))?;
    Ok(Arc::new(ModSslVerifier {
        webpki,
        cas: cas.into_iter().map(|(_, c)| c).collect(),
        depth: auth.depth,
    }))
}

/// Every certificate of the CA file and of the CA directory's files, with
/// the file it came from.
pub(crate) fn read_cas(
    ca_file: Option<&Path>,
    ca_path: Option<&Path>,
    read_file: &super::ReadFile<'_>,
) -> Result<Vec<(std::path::PathBuf, CertificateDer<'static>)>, String> {
    let mut files = Vec::new();
    if let Some(f) = ca_file {
        files.push(f.to_path_buf());
    }
    if let Some(dir) = ca_path {
        files.extend(ca_path_files(dir)?);
    }
    let mut cas = Vec::new();
    for f in files {
        let pem = read_file(&f).map_err(|e| format!("CA certificate file {}: {e}", f.display()))?;
        for cert in CertificateDer::pem_slice_iter(&pem).flatten() {
            cas.push((f.clone(), cert));
        }
    }
    Ok(cas)
}

/// The certificate files of an `SSLCACertificatePath`, in name order.
pub(crate) fn ca_path_files(dir: &Path) -> Result<Vec<std::path::PathBuf>, String> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| format!("SSLCACertificatePath {}: {e}", dir.display()))?;
    let mut found: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    found.sort();
    Ok(found.into_iter().filter(|p| p.is_file()).collect())
}

/// The WebPKI verifier, then OpenSSL's chain and mod_ssl's depth.
#[derive(Debug)]
struct ModSslVerifier {
    webpki: Arc<dyn ClientCertVerifier>,
    /// The certificates of the CA files (OpenSSL's trust store).
    cas: Vec<CertificateDer<'static>>,
    /// `SSLVerifyDepth`.
    depth: u32,
}

/// mod_ssl's refusal of a chain deeper than `SSLVerifyDepth`.
#[derive(Debug)]
struct ChainTooLong {
    /// The depth of the chain's top certificate (the client's is 0).
    found: usize,
    allowed: u32,
}

impl std::fmt::Display for ChainTooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Certificate Chain too long (chain has {} certificates, but maximum allowed are only {})",
            self.found, self.allowed
        )
    }
}

impl std::error::Error for ChainTooLong {}

/// The depth of the top of the chain OpenSSL builds from `leaf` (0: the
/// leaf is a self-signed certificate of the CA files), or `None` when the
/// chain does not end at a self-signed certificate of the CA files.
pub(crate) fn openssl_chain_depth(
    leaf: &CertificateDer<'_>,
    sent: &[CertificateDer<'_>],
    cas: &[CertificateDer<'_>],
) -> Option<usize> {
    let mut current: &[u8] = leaf.as_ref();
    let mut trusted = cas.iter().any(|c| c.as_ref() == current);
    let mut depth = 0;
    loop {
        let der::Names {
            issuer, subject, ..
        } = der::names(current)?;
        if issuer == subject {
            return trusted.then_some(depth);
        }
        if depth > OPENSSL_MAX_DEPTH {
            return None;
        }
        let names_issuer =
            |c: &&CertificateDer<'_>| der::names(c).is_some_and(|n| n.subject == issuer);
        current = match cas.iter().find(names_issuer) {
            Some(ca) => {
                trusted = true;
                ca.as_ref()
            }
            None if !trusted => sent.iter().find(names_issuer)?.as_ref(),
            None => return None,
        };
        depth += 1;
    }
}

impl ClientCertVerifier for ModSslVerifier {
    fn offer_client_auth(&self) -> bool {
        self.webpki.offer_client_auth()
    }

    fn client_auth_mandatory(&self) -> bool {
        self.webpki.client_auth_mandatory()
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.webpki.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        let verified = self
            .webpki
            .verify_client_cert(end_entity, intermediates, now)?;
        let Some(found) = openssl_chain_depth(end_entity, intermediates, &self.cas) else {
            return Err(CertificateError::UnknownIssuer.into());
        };
        if found > self.depth as usize {
            let too_long = ChainTooLong {
                found,
                allowed: self.depth,
            };
            return Err(CertificateError::Other(OtherError(Arc::new(too_long))).into());
        }
        Ok(verified)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

/// The alert record OpenSSL would send for a handshake that failed with
/// `error`, where rustls's differs and can be replaced: a chain too long
/// for `SSLVerifyDepth` in TLS 1.2 (still unencrypted there).
pub(crate) fn plain_alert_for(
    error: &rustls::Error,
    version: Option<rustls::ProtocolVersion>,
) -> Option<&'static [u8]> {
    let rustls::Error::InvalidCertificate(CertificateError::Other(other)) = error else {
        return None;
    };
    let too_long = other.0.downcast_ref::<ChainTooLong>().is_some();
    (too_long && version == Some(rustls::ProtocolVersion::TLSv1_2))
        .then_some(&TLS12_INTERNAL_ERROR_ALERT[..])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal certificate: only the names matter to the chain builder.
    fn cert(issuer: &str, subject: &str) -> CertificateDer<'static> {
        fn seq(tag: u8, body: &[u8]) -> Vec<u8> {
            let mut out = vec![tag, body.len() as u8];
            out.extend_from_slice(body);
            out
        }
        let name = |cn: &str| {
            let atv = seq(
                0x30,
                &[
                    &[0x06, 0x03, 0x55, 0x04, 0x03][..],
                    &seq(0x0c, cn.as_bytes()),
                ]
                .concat(),
            );
            seq(0x30, &seq(0x31, &atv))
        };
        let tbs = [
            seq(0xa0, &[0x02, 0x01, 0x02]),
            vec![0x02, 0x01, 0x01],
            seq(0x30, &[]),
            name(issuer),
            seq(0x30, &[]),
            name(subject),
            seq(0x30, &[]),
        ]
        .concat();
        CertificateDer::from(seq(0x30, &seq(0x30, &tbs)))
    }

    #[test]
    fn counts_the_chain_as_openssl_builds_it() {
        let root = cert("root", "root");
        let int = cert("root", "int");
        let leaf_of_root = cert("root", "alice");
        let leaf_of_int = cert("int", "carol");
        let ca_root = [root.clone()];
        let ca_both = [root.clone(), int.clone()];
        let ca_int = [int.clone()];
        assert_eq!(openssl_chain_depth(&leaf_of_root, &[], &ca_root), Some(1));
        assert_eq!(openssl_chain_depth(&leaf_of_int, &[], &ca_root), None);
        assert_eq!(
            openssl_chain_depth(&leaf_of_int, std::slice::from_ref(&int), &ca_root),
            Some(2)
        );
        assert_eq!(openssl_chain_depth(&leaf_of_int, &[], &ca_both), Some(2));
        // An intermediate alone in the CA file is no anchor.
        assert_eq!(
            openssl_chain_depth(&leaf_of_int, std::slice::from_ref(&int), &ca_int),
            None
        );
        // Nor does a root the client sends make it one.
        assert_eq!(
            openssl_chain_depth(&leaf_of_int, &[int.clone(), root.clone()], &ca_int),
            None
        );
        // A self-signed certificate of the CA file is its own chain.
        assert_eq!(openssl_chain_depth(&root, &[], &ca_root), Some(0));
        // Certificates naming each other end at OpenSSL's bound.
        let a = cert("b", "a");
        let b = cert("a", "b");
        assert_eq!(openssl_chain_depth(&a, &[a.clone(), b], &ca_root), None);
    }

    #[test]
    fn only_a_tls12_chain_too_long_gets_openssl_alert() {
        let too_long = rustls::Error::from(CertificateError::Other(OtherError(Arc::new(
            ChainTooLong {
                found: 2,
                allowed: 1,
            },
        ))));
        let v12 = Some(rustls::ProtocolVersion::TLSv1_2);
        let v13 = Some(rustls::ProtocolVersion::TLSv1_3);
        assert_eq!(
            plain_alert_for(&too_long, v12),
            Some(&TLS12_INTERNAL_ERROR_ALERT[..])
        );
        assert_eq!(plain_alert_for(&too_long, v13), None);
        let unknown = rustls::Error::from(CertificateError::UnknownIssuer);
        assert_eq!(plain_alert_for(&unknown, v12), None);
    }
}
