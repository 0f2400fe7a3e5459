//! `tls-alpn-01` (RFC 8737): while a challenge is open for a name, a
//! handshake for that name offering only the ALPN protocol `acme-tls/1`
//! is answered with a self-signed certificate carrying the challenge's
//! digest in its `acmeIdentifier` extension, and the connection ends.

use rustls::sign::CertifiedKey;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The ALPN protocol of the challenge.
pub(crate) const ACME_TLS_ALPN: &[u8] = b"acme-tls/1";

fn open() -> &'static Mutex<HashMap<String, Arc<CertifiedKey>>> {
    static OPEN: OnceLock<Mutex<HashMap<String, Arc<CertifiedKey>>>> = OnceLock::new();
    OPEN.get_or_init(Default::default)
}

/// Answer `host`'s challenge with a certificate for `digest`.
pub(super) fn insert(host: &str, digest: &[u8]) -> Result<(), String> {
    let pair = super::store::new_key(htaccel_engine::http::md::Curve::P256)?;
    let mut params =
        rcgen::CertificateParams::new(vec![host.to_string()]).map_err(|e| e.to_string())?;
    params
        .custom_extensions
        .push(rcgen::CustomExtension::new_acme_identifier(digest));
    let cert = params.self_signed(&pair).map_err(|e| e.to_string())?;
    // Built directly: the checks of `super::live` parse the certificate
    // with webpki, which refuses the critical `acmeIdentifier` extension.
    let der = rustls::pki_types::PrivateKeyDer::try_from(pair.serialize_der())
        .map_err(|e| format!("tls-alpn-01 key: {e}"))?;
    let key = rustls::crypto::ring::default_provider()
        .key_provider
        .load_private_key(der)
        .map_err(|e| format!("tls-alpn-01 key: {e}"))?;
    let certified = CertifiedKey::new(vec![cert.der().clone()], key);
    open()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(host.to_ascii_lowercase(), Arc::new(certified));
    Ok(())
}

pub(super) fn remove(host: &str) {
    open()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&host.to_ascii_lowercase());
}

/// The challenge certificate for `host`, while its challenge is open.
pub(crate) fn get(host: &str) -> Option<Arc<CertifiedKey>> {
    open()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(host)
        .cloned()
}
