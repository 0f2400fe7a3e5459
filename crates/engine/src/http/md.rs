//! The contract between mod_md's meaning (the engine,
//! `modules::md`) and the certificate manager (the server): the managed
//! domains with everything needed to obtain, store, renew and serve their
//! certificates.

use std::path::PathBuf;
use std::time::Duration;

/// A private key type a managed domain's certificates are made for
/// (`MDPrivateKeys`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeySpec {
    /// `secp256r1` / `P-256`.
    P256,
    /// `secp384r1` / `P-384`.
    P384,
}

impl KeySpec {
    /// mod_md's name of the key type (the store's file names use it).
    pub fn name(self) -> &'static str {
        match self {
            KeySpec::P256 => "secp256r1",
            KeySpec::P384 => "secp384r1",
        }
    }
}

/// An ACME challenge type (`MDCAChallenges`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Challenge {
    Http01,
    TlsAlpn01,
}

impl Challenge {
    pub fn name(self) -> &'static str {
        match self {
            Challenge::Http01 => "http-01",
            Challenge::TlsAlpn01 => "tls-alpn-01",
        }
    }
}

/// A span before a certificate's end (`MDRenewWindow`, `MDWarnWindow`):
/// a fixed duration, or a share of the certificate's lifetime given as a
/// percentage (mod_md's `md_timeslice_t`: `len` of a 100-day `norm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    Fixed(Duration),
    Percent(u32),
}

impl Window {
    /// The window's length for a certificate valid `lifetime` long.
    pub fn length(self, lifetime: Duration) -> Duration {
        match self {
            Window::Fixed(d) => d,
            Window::Percent(p) => lifetime.mul_f64(f64::from(p) / 100.0),
        }
    }
}

/// `MDRequireHttps`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RequireHttps {
    #[default]
    Off,
    Temporary,
    Permanent,
}

/// One managed domain: an `MDomain` line or `<MDomain>` section with the
/// settings in force for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManagedDomain {
    /// The first name given, the domain's name in the store.
    pub name: String,
    /// Every name the certificate covers, lower-case, the first first
    /// (the `MDomain` names, then with `MDMembers auto` the `ServerName`
    /// and `ServerAlias` of the virtual hosts it covers).
    pub domains: Vec<String>,
    /// `MDCertificateAuthority`: the ACME directory URL.
    pub ca_url: String,
    /// `MDCACertificateFile`: roots to trust for the CA's HTTPS (else the
    /// system's).
    pub ca_cert_file: Option<PathBuf>,
    /// `MDContactEmail` (else the main server's `ServerAdmin`).
    pub contact: Option<String>,
    /// `MDCertificateAgreement accepted` (or a URL): the CA's terms of
    /// service are agreed to when the account is made.
    pub agreement: bool,
    /// `MDPrivateKeys`: one certificate per key type.
    pub keys: Vec<KeySpec>,
    /// `MDCAChallenges`, in order of preference, among those the server
    /// can answer (a listener on the port public 80 or 443 reaches).
    pub challenges: Vec<Challenge>,
    /// Whether `/.well-known/acme-challenge/` is this domain's to answer:
    /// no `MDCAChallenges`, or one that names `http-01`.
    pub answers_http01: bool,
    pub renew_window: Window,
    pub warn_window: Window,
    /// `MDRenewMode auto` (else `manual`: certificates in the store are
    /// used, none is ordered).
    pub renew_auto: bool,
    pub require_https: RequireHttps,
    /// `MDExternalAccountBinding KEYID HMAC` (the key base64url-encoded).
    pub eab: Option<(String, String)>,
    /// `MDStoreDir`, resolved against `ServerRoot`.
    pub store_dir: PathBuf,
    /// `MDRetryDelay`: the first wait after a failure, doubled each time.
    pub retry_delay: Duration,
    /// `MDCheckInterval`: how often certificates are checked for renewal.
    pub check_interval: Duration,
    /// `MDNotifyCmd`: run with the domain's name after a renewal.
    pub notify_cmd: Option<Vec<String>>,
    /// `MDMessageCmd`: run with a reason (`renewed`, `errored`,
    /// `expiring`) and the domain's name.
    pub message_cmd: Option<Vec<String>>,
}

impl ManagedDomain {
    /// Whether `host` is one of the domain's names (a `*.example.org`
    /// name covers one label).
    pub fn covers(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.');
        self.domains.iter().any(|d| {
            d.eq_ignore_ascii_case(host)
                || d.strip_prefix("*.").is_some_and(|rest| {
                    host.split_once('.')
                        .is_some_and(|(_, h)| h.eq_ignore_ascii_case(rest))
                })
        })
    }

    /// Where the store keeps the answer to an `http-01` challenge for
    /// `host` (mod_md's `challenges/HOST/acme-http-01.txt`).
    pub fn http01_file(&self, host: &str) -> PathBuf {
        self.store_dir
            .join("challenges")
            .join(host)
            .join("acme-http-01.txt")
    }
}

/// What the certificate manager reports of one certificate.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CertState {
    /// Seconds since the epoch.
    pub valid_from: i64,
    pub valid_until: i64,
    /// Upper-case hex.
    pub serial: String,
    /// The temporary self-signed certificate.
    pub fallback: bool,
}

/// What the certificate manager reports of one managed domain, for
/// `md-status`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DomainState {
    /// By key type name (`secp256r1`).
    pub certs: Vec<(&'static str, CertState)>,
    /// Failed attempts since the last success.
    pub errors: u32,
    /// The last failure's description.
    pub last_error: Option<String>,
    /// When the next attempt or check is due, seconds since the epoch.
    pub next_run: Option<i64>,
    /// A renewal is under way or waiting to be retried.
    pub renewing: bool,
}

/// The managed domains' states, by name: written by the certificate
/// manager, read by the `md-status` handler.
pub fn states() -> &'static std::sync::RwLock<std::collections::HashMap<String, DomainState>> {
    static STATES: std::sync::OnceLock<
        std::sync::RwLock<std::collections::HashMap<String, DomainState>>,
    > = std::sync::OnceLock::new();
    STATES.get_or_init(Default::default)
}

/// Change the state of `name`.
pub fn update_state(name: &str, change: impl FnOnce(&mut DomainState)) {
    let mut all = states().write().unwrap_or_else(|e| e.into_inner());
    change(all.entry(name.to_string()).or_default());
}
