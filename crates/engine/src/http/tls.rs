//! The contract between mod_ssl's meaning (the engine) and the TLS
//! transport (the server): which local addresses speak TLS with which
//! certificates and settings ([`TlsPortSpec`], read before privileges are
//! dropped), and what a request sees of its session ([`TlsInfo`]).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// How a TLS connection ends when the server closes it (mod_ssl's
/// `ssl-unclean-shutdown` and `ssl-accurate-shutdown`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlsShutdown {
    /// `close_notify` sent, the client's not waited for.
    Standard,
    /// No `close_notify` at all.
    Unclean,
    /// `close_notify` sent and the client's waited for.
    Accurate,
}

/// What a request sees of its connection's TLS session: the facts behind
/// mod_ssl's `SSL_*` variables, and the virtual host the handshake chose
/// (for mod_ssl's check that the request's host has a compatible TLS setup).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsInfo {
    /// `SSL_PROTOCOL`: `TLSv1.2`, `TLSv1.3`.
    pub protocol: &'static str,
    /// `SSL_CIPHER`: the suite's OpenSSL name (`ECDHE-RSA-AES128-GCM-SHA256`,
    /// `TLS_AES_256_GCM_SHA384`).
    pub cipher: &'static str,
    /// `SSL_CIPHER_USEKEYSIZE` and `SSL_CIPHER_ALGKEYSIZE`.
    pub cipher_bits: u32,
    /// `SSL_TLS_SNI`: the name the client sent, if any.
    pub sni: Option<String>,
    /// `SSL_SERVER_S_DN` and `SSL_SERVER_I_DN` of the certificate sent.
    pub server_subject: String,
    pub server_issuer: String,
    /// `SSL_SERVER_M_SERIAL` (upper-case hex), `SSL_SERVER_M_VERSION`.
    pub server_serial: String,
    pub server_version: u32,
    /// `SSL_SERVER_A_KEY`: `rsaEncryption`, `id-ecPublicKey`.
    pub server_key_alg: &'static str,
    /// `SSL_SESSION_RESUMED`: `Initial` or `Resumed`.
    pub resumed: bool,
    /// The virtual host whose TLS settings made the handshake: an index
    /// into the engine's virtual hosts, `None` for the main server.
    pub handshake_site: Option<usize>,
    /// The client's verified certificate (`SSLVerifyClient`).
    pub client: Option<ClientCert>,
    /// `SSL_SERVER_CERT`: the certificate sent, in PEM (`+ExportCertData`).
    pub server_cert_pem: Option<Arc<str>>,
    /// The `SSLVerifyDepth` mod_ssl remembers for the connection, set by
    /// its requests under client verification (see
    /// `modules::ssl::check_access`).
    pub verify_depth: RememberedDepth,
}

/// mod_ssl's `sslconn->verify_depth`: unset until a request of the
/// connection sets it; shared by the connection's requests.
#[derive(Debug, Default)]
pub struct RememberedDepth(AtomicU32);

impl RememberedDepth {
    /// The depth a request of the connection last set.
    pub fn get(&self) -> Option<u32> {
        self.0.load(Ordering::Relaxed).checked_sub(1)
    }

    pub fn set(&self, depth: u32) {
        self.0.store(depth.saturating_add(1), Ordering::Relaxed);
    }
}

impl Clone for RememberedDepth {
    fn clone(&self) -> Self {
        RememberedDepth(AtomicU32::new(self.0.load(Ordering::Relaxed)))
    }
}

impl PartialEq for RememberedDepth {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Eq for RememberedDepth {}

/// A certificate in PEM as OpenSSL's `PEM_write_bio_X509` writes it
/// (`SSL_SERVER_CERT`, `SSL_CLIENT_CERT`).
pub fn pem(der: &[u8]) -> String {
    let b64 = crate::http::digest::base64(der);
    let mut out = String::with_capacity(b64.len() + b64.len() / 64 + 60);
    out.push_str("-----BEGIN CERTIFICATE-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).unwrap_or_default());
        out.push('\n');
    }
    out.push_str("-----END CERTIFICATE-----\n");
    out
}

/// What `SSL_CLIENT_*` shows of a client certificate the handshake verified.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientCert {
    pub subject: String,
    pub issuer: String,
    pub serial: String,
    pub version: u32,
    pub key_alg: &'static str,
    /// `SSL_CLIENT_CERT` (PEM).
    pub pem: String,
}

/// One certificate and its key (`SSLCertificateFile` with the
/// `SSLCertificateKeyFile` at the same position; no key file: the key is
/// in the certificate's file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyPairSpec {
    pub cert: PathBuf,
    pub key: Option<PathBuf>,
}

/// The TLS settings of one server (a `<VirtualHost>` with `SSLEngine on`,
/// or the main server), as the handshake needs them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsSiteSpec {
    /// The virtual host (index into the engine's list), `None`: the main server.
    pub site: Option<usize>,
    /// `ServerName` and `ServerAlias` patterns, matched against SNI.
    pub names: Vec<String>,
    /// How mod_ssl's log names the server (`ssl_util_vhostid`): its name
    /// and the port of its `ServerName`, else 443.
    pub server_id: String,
    /// One or more certificates (RSA and ECDSA may both be given).
    pub keys: Vec<KeyPairSpec>,
    /// `SSLCertificateChainFile`: more certificates sent after each leaf.
    pub chain: Option<PathBuf>,
    pub tls12: bool,
    pub tls13: bool,
    /// TLS 1.2 suites by OpenSSL name, in preference order.
    pub suites12: Vec<&'static str>,
    /// TLS 1.3 suites by OpenSSL name, in preference order.
    pub suites13: Vec<&'static str>,
    /// `SSLHonorCipherOrder`: the server's order wins.
    pub honor_cipher_order: bool,
    /// `SSLSessionTickets`.
    pub session_tickets: bool,
    /// `SSLSessionCache`: sessions kept for resumption by ID (0: none).
    pub session_cache: usize,
    /// `SSLSessionCacheTimeout`: seconds a session (cached or in a ticket)
    /// can be resumed for, and the lifetime a ticket announces.
    pub session_timeout: u32,
    /// `SSLVerifyClient optional|require` with its CAs.
    pub client_auth: Option<ClientAuthSpec>,
    /// `Protocols`: what ALPN may choose.
    pub protocols: crate::modules::http2::ProtocolsConf,
    /// The HTTP/2 session settings, when ALPN may choose `h2` (mod_http2
    /// loaded and `h2` listed).
    pub h2: Option<crate::http::http2::H2Settings>,
    /// The HTTP/3 settings (`H3Engine on`).
    pub h3: Option<crate::http::http3::H3Settings>,
    /// The managed domain (mod_md) whose certificates this server uses:
    /// they take the place of `keys`, which may then be empty.
    pub managed: Option<Arc<crate::http::md::ManagedDomain>>,
    /// `SSLUseStapling on`: OCSP responses fetched and stapled.
    pub stapling: Option<StaplingSpec>,
    /// `SSLOpenSSLConfCmd Curves|Groups|ECDHParameters`: the key exchange
    /// groups offered, in order (`None`: the TLS library's defaults).
    pub groups: Option<Vec<KxGroup>>,
}

/// A key exchange group htaccel's TLS offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KxGroup {
    X25519,
    Secp256r1,
    Secp384r1,
}

/// OCSP stapling as mod_ssl's `SSLStapling*` directives set it, with
/// mod_ssl's defaults (`modssl_init_stapling`) applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaplingSpec {
    /// `SSLStaplingCache` is configured: mod_ssl refuses to start
    /// stapling without one.
    pub cache: bool,
    /// `SSLStaplingResponseTimeSkew`: seconds of clock difference
    /// allowed around a response's validity (300).
    pub time_skew: u32,
    /// `SSLStaplingResponseMaxAge`: the oldest `thisUpdate` accepted, in
    /// seconds (unset: any).
    pub max_age: Option<u32>,
    /// `SSLStaplingStandardCacheTimeout`: seconds a valid response is
    /// kept (3600).
    pub cache_timeout: u32,
    /// `SSLStaplingErrorCacheTimeout`: seconds an invalid response is
    /// kept (600).
    pub error_cache_timeout: u32,
    /// `SSLStaplingResponderTimeout`: seconds to wait for the responder (10).
    pub responder_timeout: u32,
    /// `SSLStaplingReturnResponderErrors`: invalid responses are stapled too (on).
    pub return_errors: bool,
    /// `SSLStaplingFakeTryLater`: a responder that cannot be reached
    /// yields a `tryLater` response to staple (on).
    pub fake_try_later: bool,
    /// `SSLStaplingForceURL`: the responder, whatever the certificate names.
    pub force_url: Option<String>,
}

/// Client certificates asked for in the handshake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientAuthSpec {
    /// `require` (else `optional`).
    pub required: bool,
    /// `SSLCACertificateFile`, `SSLCACertificatePath`.
    pub ca_file: Option<PathBuf>,
    pub ca_path: Option<PathBuf>,
    /// `SSLVerifyDepth`: how many certificates may stand above the
    /// client's in the chain OpenSSL builds, up to and including the
    /// self-signed CA (0: only a self-signed certificate of the CA file
    /// itself; 1, the default: a certificate a configured CA issued).
    pub depth: u32,
}

/// The servers whose TLS settings a connection to a local address may use:
/// the first is the address's default (no SNI, or SNI naming none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsPortSpec {
    /// Apache's address form, as in `<VirtualHost>` (`*:443`, `[::1]:8443`,
    /// `_default_:443`); `*` for the main server's listeners.
    pub addr: String,
    pub sites: Vec<TlsSiteSpec>,
}

/// OpenSSL's name of each suite rustls offers, its protocol and its key bits.
pub const SUITES: &[(&str, bool, u32)] = &[
    ("TLS_AES_256_GCM_SHA384", true, 256),
    ("TLS_CHACHA20_POLY1305_SHA256", true, 256),
    ("TLS_AES_128_GCM_SHA256", true, 128),
    ("ECDHE-ECDSA-AES256-GCM-SHA384", false, 256),
    ("ECDHE-RSA-AES256-GCM-SHA384", false, 256),
    ("ECDHE-ECDSA-CHACHA20-POLY1305", false, 256),
    ("ECDHE-RSA-CHACHA20-POLY1305", false, 256),
    ("ECDHE-ECDSA-AES128-GCM-SHA256", false, 128),
    ("ECDHE-RSA-AES128-GCM-SHA256", false, 128),
];

impl crate::engine::Engine {
    /// The addresses that speak TLS, with the settings of their servers
    /// (mod_ssl), for the server's handshakes.
    pub fn tls_ports(&self) -> Vec<TlsPortSpec> {
        crate::modules::ssl::ports::tls_ports(self)
    }
}
