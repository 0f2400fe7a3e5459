//! The contract between mod_md's meaning (the engine,
//! `modules::md`) and the certificate manager (the server): the managed
//! domains with everything needed to obtain, store, renew and serve their
//! certificates.

use std::path::PathBuf;
use std::time::Duration;

/// An elliptic curve htaccel makes a managed domain's keys on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Curve {
    /// `secp256r1` / `P-256`.
    P256,
    /// `secp384r1` / `P-384`.
    P384,
}

impl Curve {
    /// The curve's name in mod_md's status.
    pub fn name(self) -> &'static str {
        match self {
            Curve::P256 => "secp256r1",
            Curve::P384 => "secp384r1",
        }
    }
}

/// A private key type a managed domain's certificates are made for
/// (`MDPrivateKeys`): the curve, and the word that named it, which mod_md
/// keeps as the type's name (the store's file names and the status pages
/// use it, so a store Apache filled is found under the same names).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KeySpec {
    pub curve: Curve,
    /// As `MDPrivateKeys` wrote it; `None` without `MDPrivateKeys`:
    /// mod_md's default type, whose files are `privkey.pem` and
    /// `pubcert.pem`.
    written: Option<String>,
}

impl KeySpec {
    /// The type `MDPrivateKeys` names by `word`.
    pub fn named(curve: Curve, word: &str) -> KeySpec {
        KeySpec {
            curve,
            written: Some(word.to_string()),
        }
    }

    /// The type used without `MDPrivateKeys` (mod_md's is RSA 2048;
    /// htaccel makes P-256 keys, kept under the default type's files).
    pub fn unnamed() -> KeySpec {
        KeySpec {
            curve: Curve::P256,
            written: None,
        }
    }

    /// mod_md's name of the key type (`md_pkey_spec_name`): the word as
    /// written, else the curve's name.
    pub fn name(&self) -> &str {
        self.written.as_deref().unwrap_or(self.curve.name())
    }

    /// A store file's name for this type (`pk_filename`): `privkey.pem`
    /// for the default type, `privkey.secp384r1.pem` (the written name,
    /// lower-case) for the others.
    pub fn file_name(&self, base: &str) -> String {
        match &self.written {
            None => format!("{base}.pem"),
            Some(w) => format!("{base}.{}.pem", w.to_ascii_lowercase()),
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
    /// The names `tls-alpn-01` may be used for: those whose HTTPS server
    /// (on the port public 443 reaches) lists `acme-tls/1` in `Protocols`,
    /// as mod_md requires.
    pub acme_tls_1: Vec<String>,
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
    /// What the status pages show of the configuration and nothing uses.
    pub shown: Shown,
}

/// The settings mod_md's status pages show as they were written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shown {
    /// `MDMembers auto` (the virtual hosts' names are added).
    pub transitive: bool,
    /// Some virtual host (or, with `MDBaseServer on`, the main server)
    /// has one of the domain's names.
    pub used: bool,
    /// mod_md drives the domain: it is used, or its renewal is manual (a
    /// domain it would renew by itself that nothing uses is left alone).
    pub watched: bool,
    /// `MDCertificateAgreement` as given.
    pub agreement: Option<String>,
    /// `MDCAChallenges` as given (empty: not given).
    pub challenges: Vec<Challenge>,
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
    /// The issuer as OpenSSL's one-line form prints it (`/C=US/CN=R11`).
    pub issuer_name: String,
    /// The Authority Information Access extension's CA issuers URI.
    pub issuer_uri: Option<String>,
    /// Lower-case hex of the SHA-256 of the certificate's DER.
    pub sha256_fingerprint: String,
    /// RFC 9773's certificate identifier (`keyIdentifier.serial`, each
    /// base64url), when the certificate names its issuer's key.
    pub ari_cert_id: Option<String>,
    /// The temporary self-signed certificate.
    pub fallback: bool,
}

/// What the certificate manager reports of one managed domain, for
/// `md-status`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DomainState {
    /// By key type name (`secp256r1`).
    pub certs: Vec<(String, CertState)>,
    /// Failed attempts since the last success.
    pub errors: u32,
    /// The last failure's description.
    pub last_error: Option<String>,
    /// The last failure as mod_md records it: an APR status and the ACME
    /// problem type, if the CA sent one ([`Failure::of`]).
    pub last_failure: Option<Failure>,
    /// When the last attempt began, seconds since the epoch.
    pub last_run: Option<i64>,
    /// When the next attempt or check is due, seconds since the epoch.
    pub next_run: Option<i64>,
    /// A renewal is under way or waiting to be retried.
    pub renewing: bool,
}

/// A failed renewal as mod_md's job records it (`md_result_t`): an APR
/// status and, from an ACME problem document, the problem's type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub status: i32,
    pub problem: Option<String>,
}

/// APR's statuses mod_md gives ACME problems (`apr_errno.h`).
const APR_EGENERAL: i32 = 20014;
const APR_BADARG: i32 = 70013;

impl Failure {
    /// The failure a message describes: the operating system's error
    /// number where one is quoted (`(os error 111)`), else the status
    /// mod_md maps the ACME problem type to (`md_acme.c`'s table), else
    /// APR's general error.
    pub fn of(message: &str) -> Failure {
        let os_error = message.rsplit_once("(os error ").and_then(|(_, rest)| {
            rest.split_once(')')
                .and_then(|(n, _)| n.parse::<i32>().ok())
        });
        let problem = message.find("urn:ietf:params:acme:error:").map(|at| {
            message[at..]
                .split(|c: char| c == ')' || c.is_whitespace())
                .next()
                .unwrap_or_default()
                .to_string()
        });
        let status = os_error.unwrap_or_else(|| match &problem {
            Some(p) => problem_status(p.trim_start_matches("urn:ietf:params:")),
            None => APR_EGENERAL,
        });
        Failure { status, problem }
    }

    /// `apr_strerror`'s text for the status.
    pub fn description(&self) -> String {
        match self.status {
            APR_EGENERAL => "Internal error (specific information not available)".into(),
            APR_BADARG => "Missing parameter for the specified command line option".into(),
            n => {
                let text = std::io::Error::from_raw_os_error(n).to_string();
                match text.rsplit_once(" (os error ") {
                    Some((t, _)) => t.to_string(),
                    None => text,
                }
            }
        }
    }
}

/// mod_md's status for an ACME problem type (`acme:error:…`).
fn problem_status(kind: &str) -> i32 {
    const EINVAL: i32 = libc::EINVAL;
    let table: &[(&str, i32)] = &[
        ("acme:error:badCSR", EINVAL),
        ("acme:error:badNonce", libc::EAGAIN),
        ("acme:error:badSignatureAlgorithm", EINVAL),
        ("acme:error:externalAccountRequired", EINVAL),
        ("acme:error:invalidContact", APR_BADARG),
        ("acme:error:malformed", EINVAL),
        ("acme:error:rateLimited", APR_BADARG),
        ("acme:error:rejectedIdentifier", APR_BADARG),
        ("acme:error:unauthorized", libc::EACCES),
        ("acme:error:unsupportedIdentifier", APR_BADARG),
        ("acme:error:badRevocationReason", EINVAL),
    ];
    table
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(kind))
        .map_or(APR_EGENERAL, |(_, v)| *v)
}

/// The managed domains' states, by name: written by the certificate
/// manager, read by the `md-status` handler.
pub fn states() -> &'static std::sync::RwLock<std::collections::HashMap<String, DomainState>> {
    static STATES: std::sync::OnceLock<
        std::sync::RwLock<std::collections::HashMap<String, DomainState>>,
    > = std::sync::OnceLock::new();
    STATES.get_or_init(Default::default)
}

/// The earliest moment a renewal of `md` is due (`md_reg_renew_at`):
/// now when a certificate is missing (or only the temporary one is
/// there), else the start of the renew window of the certificate whose
/// window opens first.
pub fn renew_at(md: &ManagedDomain, state: &DomainState, now: i64) -> i64 {
    let real: Vec<&CertState> = state
        .certs
        .iter()
        .filter(|(_, c)| !c.fallback)
        .map(|(_, c)| c)
        .collect();
    if real.len() < md.keys.len() {
        return now;
    }
    real.iter()
        .map(|c| {
            let life = Duration::from_secs((c.valid_until - c.valid_from).max(0) as u64);
            c.valid_until - md.renew_window.length(life).as_secs() as i64
        })
        .min()
        .unwrap_or(now)
}

/// Change the state of `name`.
pub fn update_state(name: &str, change: impl FnOnce(&mut DomainState)) {
    let mut all = states().write().unwrap_or_else(|e| e.into_inner());
    change(all.entry(name.to_string()).or_default());
}

impl crate::engine::Engine {
    /// The domains mod_md manages for this configuration (what the
    /// certificate manager renews).
    pub fn managed_domains(&self) -> &[std::sync::Arc<ManagedDomain>] {
        &self.modules.md.domains
    }
}
