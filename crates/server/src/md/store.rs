//! The store on disk, in mod_md's layout where it is practical:
//! `domains/NAME/privkey.pem` and `pubcert.pem` (the first key type; the
//! others as `privkey.TYPE.pem`, `pubcert.TYPE.pem`), the temporary
//! certificate as `domains/NAME/fallback-privkey.pem` and
//! `fallback-pubcert.pem`, the ACME account under `accounts/`, and the
//! answers to `http-01` challenges under `challenges/HOST/`. Keys and
//! account files are written with mode 0600 in directories of mode 0700,
//! each by a write to a temporary file and a rename, so a reader never
//! sees half a file.

use super::{live, Live};
use htaccel_engine::http::md::{Curve, KeySpec, ManagedDomain};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The names of a key type's files, as mod_md names them.
fn file_names(key: &KeySpec) -> (String, String) {
    (key.file_name("privkey"), key.file_name("pubcert"))
}

pub(super) fn domain_dir(md: &ManagedDomain) -> PathBuf {
    md.store_dir.join("domains").join(&md.name)
}

/// The stored certificate of `md` for `key`, if it is there, readable,
/// not expired, and covers every name of the domain.
pub(super) fn load(md: &ManagedDomain, key: &KeySpec) -> Option<Live> {
    let (key_file, cert_file) = file_names(key);
    let dir = domain_dir(md);
    let chain = std::fs::read(dir.join(cert_file)).ok()?;
    let key_pem = std::fs::read(dir.join(key_file)).ok()?;
    let live = live(&chain, &key_pem, false).ok()?;
    (live.facts.not_after > super::now()).then_some(live)
}

/// Keep a new certificate and its key in the store.
pub(super) fn save(
    md: &ManagedDomain,
    key: &KeySpec,
    chain: &str,
    key_pem: &str,
) -> Result<(), String> {
    let (key_file, cert_file) = file_names(key);
    let dir = domain_dir(md);
    private_dir(&dir)?;
    write_private(&dir.join(key_file), key_pem.as_bytes())?;
    write_private(&dir.join(cert_file), chain.as_bytes())
}

/// A new temporary self-signed certificate for `md` (kept in the store
/// for the record; a new one is made at each start while no real one
/// exists), as mod_md serves until the CA's arrives.
pub(super) fn fallback(md: &ManagedDomain, key: &KeySpec) -> Result<Live, String> {
    let pair = new_key(key.curve)?;
    let mut params = rcgen::CertificateParams::new(md.domains.clone())
        .map_err(|e| format!("fallback certificate for {}: {e}", md.name))?;
    let mut dn = rcgen::DistinguishedName::new();
    dn.push(rcgen::DnType::CommonName, "Temporary Certificate");
    params.distinguished_name = dn;
    let cert = params
        .self_signed(&pair)
        .map_err(|e| format!("fallback certificate for {}: {e}", md.name))?;
    let chain = cert.pem();
    let key_pem = pair.serialize_pem();
    let dir = domain_dir(md);
    if super::store_writable() && private_dir(&dir).is_ok() {
        let (key_file, cert_file) = file_names(key);
        let _ = write_private(
            &dir.join(format!("fallback-{key_file}")),
            key_pem.as_bytes(),
        );
        let _ = write_private(&dir.join(format!("fallback-{cert_file}")), chain.as_bytes());
    }
    live(chain.as_bytes(), key_pem.as_bytes(), true)
}

/// A new private key of the given type.
pub(super) fn new_key(curve: Curve) -> Result<rcgen::KeyPair, String> {
    let alg = match curve {
        Curve::P256 => &rcgen::PKCS_ECDSA_P256_SHA256,
        Curve::P384 => &rcgen::PKCS_ECDSA_P384_SHA384,
    };
    rcgen::KeyPair::generate_for(alg).map_err(|e| format!("key generation: {e}"))
}

/// A directory only the server's user can enter.
pub(super) fn private_dir(dir: &Path) -> Result<(), String> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))
}

/// Write a file only the server's user can read, atomically.
pub(super) fn write_private(path: &Path, data: &[u8]) -> Result<(), String> {
    write_mode(path, data, 0o600)
}

/// Write a file with `mode`, through a temporary file and a rename.
pub(super) fn write_mode(path: &Path, data: &[u8], mode: u32) -> Result<(), String> {
    let tmp = path.with_extension("tmp");
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(mode)
            .open(&tmp)?;
        f.write_all(data)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| format!("{}: {e}", path.display()))
}
