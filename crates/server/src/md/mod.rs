//! mod_md's certificates: each managed domain's live certificate, one per
//! key type, in a cell the handshakes read and the certificate manager
//! replaces ([`CertCell`]): a new certificate is used by the next
//! handshake, with no restart.
//!
//! At start, a cell holds the certificate of the store (`MDStoreDir`,
//! mod_md's layout: `domains/NAME/pubcert.pem` and `privkey.pem`) when
//! there is one, else a temporary self-signed certificate made on the
//! spot (`fallback`), as mod_md starts a domain it has no certificate for
//! yet. The cells live for the whole process, so a configuration reload
//! keeps what was obtained meanwhile. [`start`] runs the certificate
//! manager (`acme`) on a thread of its own.

mod acme;
pub(crate) mod alpn;
mod store;

pub use acme::start;

use crate::tls::der::CertFacts;
use htaccel_engine::http::md::{Curve, KeySpec, ManagedDomain};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

/// What a handshake sends and a request sees of one certificate.
pub(crate) struct Live {
    pub key: Arc<CertifiedKey>,
    pub facts: CertFacts,
    /// `SSL_SERVER_CERT`.
    pub pem: Arc<str>,
    /// The temporary self-signed certificate (no real one yet).
    pub fallback: bool,
}

/// One managed domain's certificate for one key type, replaced in place.
pub struct CertCell {
    live: RwLock<Arc<Live>>,
}

impl std::fmt::Debug for CertCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CertCell")
    }
}

impl CertCell {
    pub(crate) fn get(&self) -> Arc<Live> {
        self.live.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn set(&self, live: Live) {
        *self.live.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(live);
    }
}

/// The handshake's certificate: the cell's current one.
#[derive(Debug)]
pub(crate) struct CellResolver(pub Arc<CertCell>);

impl rustls::server::ResolvesServerCert for CellResolver {
    fn resolve(&self, _hello: rustls::server::ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.0.get().key.clone())
    }
}

/// Whether the store may be written (not under `htaccel -t`, which, as
/// `apache2 -t`, checks the configuration and changes nothing).
static WRITE_STORE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Check configurations only: temporary certificates are made in memory
/// and not kept in the store.
pub fn config_test_only() {
    WRITE_STORE.store(false, std::sync::atomic::Ordering::Relaxed);
}

fn store_writable() -> bool {
    WRITE_STORE.load(std::sync::atomic::Ordering::Relaxed)
}

/// The process's cells, by domain name and key type.
type Cells = Mutex<HashMap<(String, KeySpec), Arc<CertCell>>>;

fn cells() -> &'static Cells {
    static CELLS: OnceLock<Cells> = OnceLock::new();
    CELLS.get_or_init(Default::default)
}

/// The cell of `md`'s certificate for `key`: made on first use from the
/// store, else from a new fallback certificate.
pub(crate) fn cell(md: &ManagedDomain, key: &KeySpec) -> Result<Arc<CertCell>, String> {
    let mut all = cells().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(c) = all.get(&(md.name.clone(), key.clone())) {
        return Ok(c.clone());
    }
    let live = match store::load(md, key) {
        Some(live) => live,
        None => store::fallback(md, key)?,
    };
    let c = Arc::new(CertCell {
        live: RwLock::new(Arc::new(live)),
    });
    all.insert((md.name.clone(), key.clone()), c.clone());
    Ok(c)
}

/// A live certificate from a PEM chain and a PEM key.
fn live(chain_pem: &[u8], key_pem: &[u8], fallback: bool) -> Result<Live, String> {
    use rustls::pki_types::pem::PemObject;
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(chain_pem)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("certificate: {e}"))?;
    let first = certs.first().ok_or("no certificate")?;
    let facts = CertFacts::of(first);
    let pem: Arc<str> = htaccel_engine::http::tls::pem(first).into();
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| format!("private key: {e}"))?;
    let key = rustls::crypto::ring::default_provider()
        .key_provider
        .load_private_key(key)
        .map_err(|e| format!("private key: {e}"))?;
    let certified = CertifiedKey::new(certs, key);
    if let Err(e) = certified.keys_match() {
        if !matches!(
            e,
            rustls::Error::InconsistentKeys(rustls::InconsistentKeys::Unknown)
        ) {
            return Err("the private key does not match the certificate".into());
        }
    }
    Ok(Live {
        key: Arc::new(certified),
        facts,
        pem,
        fallback,
    })
}

/// The signature schemes a key of this type makes.
pub(crate) fn schemes(curve: Curve) -> Vec<rustls::SignatureScheme> {
    match curve {
        Curve::P256 => vec![rustls::SignatureScheme::ECDSA_NISTP256_SHA256],
        Curve::P384 => vec![rustls::SignatureScheme::ECDSA_NISTP384_SHA384],
    }
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use htaccel_engine::http::md::{Challenge, RequireHttps, Window};
    use std::time::Duration;

    fn domain(store: &std::path::Path) -> ManagedDomain {
        ManagedDomain {
            name: "cell.test".into(),
            domains: vec!["cell.test".into(), "www.cell.test".into()],
            ca_url: "https://127.0.0.1:9/dir".into(),
            ca_cert_file: None,
            contact: None,
            agreement: true,
            keys: vec![
                KeySpec::named(Curve::P256, "P-256"),
                KeySpec::named(Curve::P384, "secp384r1"),
            ],
            challenges: vec![Challenge::Http01],
            acme_tls_1: Vec::new(),
            answers_http01: true,
            renew_window: Window::Percent(33),
            warn_window: Window::Percent(10),
            renew_auto: true,
            require_https: RequireHttps::Off,
            eab: None,
            store_dir: store.to_path_buf(),
            retry_delay: Duration::from_secs(5),
            check_interval: Duration::from_secs(60),
            notify_cmd: None,
            message_cmd: None,
            shown: Default::default(),
        }
    }

    #[test]
    fn a_domain_without_a_certificate_starts_with_a_temporary_one_per_key_type() {
        let store = std::env::temp_dir().join(format!("htaccel-md-cell-{}", std::process::id()));
        let md = domain(&store);
        let (p256_type, p384_type) = (&md.keys[0], &md.keys[1]);
        let p256 = cell(&md, p256_type).unwrap();
        let again = cell(&md, p256_type).unwrap();
        assert!(
            Arc::ptr_eq(&p256, &again),
            "one cell per domain and key type"
        );
        let live = p256.get();
        assert!(live.fallback);
        assert!(live.facts.subject.contains("Temporary Certificate"));
        assert_eq!(live.facts.key_alg, "id-ecPublicKey");
        let p384 = cell(&md, p384_type).unwrap().get();
        assert!(p384.key.key.choose_scheme(&schemes(Curve::P384)).is_some());
        // The temporary key is kept with mode 0600, under the name mod_md
        // gives the type (its word in MDPrivateKeys, lower-case).
        use std::os::unix::fs::PermissionsExt;
        let key = store::domain_dir(&md).join("fallback-privkey.p-256.pem");
        let mode = std::fs::metadata(key).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // Nothing in the store yet; once a certificate is saved there, it is
        // what the next start loads.
        assert!(store::load(&md, p256_type).is_none());
        let pair = store::new_key(Curve::P256).unwrap();
        let cert = rcgen::CertificateParams::new(md.domains.clone())
            .unwrap()
            .self_signed(&pair)
            .unwrap();
        store::save(&md, p256_type, &cert.pem(), &pair.serialize_pem()).unwrap();
        let dir = store::domain_dir(&md);
        assert!(dir.join("privkey.p-256.pem").is_file());
        assert!(dir.join("pubcert.p-256.pem").is_file());
        let loaded = store::load(&md, p256_type).expect("the saved certificate");
        assert!(!loaded.fallback);
        assert_eq!(
            loaded.pem.as_ref(),
            htaccel_engine::http::tls::pem(cert.der())
        );
        // Without MDPrivateKeys, the files of mod_md's default type.
        assert!(store::load(&md, &KeySpec::unnamed()).is_none());
        store::save(&md, &KeySpec::unnamed(), &cert.pem(), &pair.serialize_pem()).unwrap();
        assert!(dir.join("privkey.pem").is_file());
        assert!(store::load(&md, &KeySpec::unnamed()).is_some());
        let _ = std::fs::remove_dir_all(&store);
    }
}
