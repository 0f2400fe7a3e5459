//! The QUIC handshake of an address whose servers include one with
//! HTTP/3 on (`htaccel_http3`): TLS 1.3 only, ALPN `h3`, the same
//! certificates as the address's TCP handshakes, the server chosen by SNI
//! among the address's servers exactly as there ([`Port::choose`]), then
//! its certificate by what the client can verify ([`Site::pick_key`]). A
//! client whose SNI chooses a server without HTTP/3 fails the handshake.
//!
//! One rustls configuration serves the address (quinn takes it before the
//! ClientHello is read): its TLS 1.3 suites, cipher order and the QUIC
//! transport's stream limit are those of the address's first server with
//! HTTP/3 on. Early data (0-RTT) is off: a replayed request could repeat
//! a side effect.

use super::{Port, Site, TlsSetup};
use htaccel_engine::http::http3::H3Settings;
use htaccel_engine::http::TlsInfo;
use rustls::crypto::{ring, CryptoProvider};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// The receive window of each request stream (its body in flight).
const STREAM_WINDOW: u32 = 256 * 1024;
/// The receive window of a whole connection.
const CONNECTION_WINDOW: u32 = 4 * 1024 * 1024;

/// The ALPN name of HTTP/3.
pub(crate) const ALPN_H3: &[u8] = b"h3";

/// The certificate of the server SNI chooses, if it has HTTP/3 on.
struct SniResolver(Arc<Port>);

impl std::fmt::Debug for SniResolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SniResolver({})", self.0.addr)
    }
}

impl ResolvesServerCert for SniResolver {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let sni = hello.server_name().map(str::to_ascii_lowercase);
        let site = self.0.choose(sni.as_deref());
        site.h3?;
        Some(site.pick_key(hello.signature_schemes()).certified())
    }
}

/// The first server of the address with HTTP/3 on.
fn h3_site(port: &Port) -> Option<(&Site, H3Settings)> {
    port.sites.iter().find_map(|s| Some((s, s.h3?)))
}

/// The QUIC handshake configuration of an address (`None`: none of its
/// servers has HTTP/3 on).
pub(super) fn server_config(port: &Arc<Port>) -> Result<Option<Arc<quinn::ServerConfig>>, String> {
    let Some((site, _)) = h3_site(port) else {
        return Ok(None);
    };
    let provider = Arc::new(CryptoProvider {
        cipher_suites: super::config::suites(&site.suites13),
        kx_groups: super::config::kx_groups(site.groups.as_deref()),
        ..ring::default_provider()
    });
    let mut tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| format!("HTTP/3 on {}: {e}", port.addr))?
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(SniResolver(port.clone())));
    tls.alpn_protocols = vec![ALPN_H3.to_vec()];
    tls.ignore_client_order = site.honor_cipher_order;
    tls.max_early_data_size = 0;
    let quic = quinn::crypto::rustls::QuicServerConfig::try_from(tls)
        .map_err(|e| format!("HTTP/3 on {}: {e}", port.addr))?;
    Ok(Some(Arc::new(quinn::ServerConfig::with_crypto(Arc::new(
        quic,
    )))))
}

impl TlsSetup {
    /// The UDP port HTTP/3 listens on beside the TCP address `listen`
    /// (`None`: no server there has HTTP/3 on): `H3Port` of the first
    /// such server, else the TCP port. A wildcard address (`Listen 443`)
    /// serves every TLS address with its port.
    pub fn h3_port(&self, listen: SocketAddr) -> Option<u16> {
        self.ports
            .iter()
            .filter(|p| covers(&p.addr, listen))
            .find_map(|p| h3_site(p))
            .map(|(_, h3)| h3.port.unwrap_or(listen.port()))
    }

    /// The QUIC configuration for a connection to the TLS address `port`,
    /// with the transport's limits: the first HTTP/3 server's
    /// `H3MaxStreams`, `idle` (`Timeout`) as QUIC's idle timeout, and
    /// receive windows of 256 KiB per stream and 4 MiB per connection.
    /// Connection migration is quinn's default: allowed (a client whose
    /// address changes keeps its connection once the new path is
    /// validated).
    pub(crate) fn quic_config(&self, port: usize, idle: Duration) -> Option<quinn::ServerConfig> {
        let base = self.quic.get(port)?.as_ref()?;
        let (_, h3) = h3_site(&self.ports[port])?;
        let mut transport = quinn::TransportConfig::default();
        transport.max_concurrent_bidi_streams(quinn::VarInt::from_u32(h3.max_streams));
        transport.max_idle_timeout(quinn::IdleTimeout::try_from(idle).ok());
        // What a client can make the server hold of its request bodies:
        // quinn's defaults would let one connection fill 1.25 MB per
        // stream with no bound on their sum.
        transport.stream_receive_window(quinn::VarInt::from_u32(STREAM_WINDOW));
        transport.receive_window(quinn::VarInt::from_u32(CONNECTION_WINDOW));
        let mut config = (**base).clone();
        config.transport_config(Arc::new(transport));
        Some(config)
    }

    /// Any QUIC configuration (an endpoint needs one to read the first
    /// packet of a connection; each connection then gets its address's).
    pub(crate) fn any_quic_config(&self) -> Option<Arc<quinn::ServerConfig>> {
        self.quic.iter().flatten().next().cloned()
    }

    /// The HTTP/3 settings of the server a handshake on `port` with
    /// `sni` chose.
    pub(crate) fn quic_settings(
        &self,
        port: usize,
        sni: Option<&str>,
    ) -> Option<htaccel_engine::http::http3::H3Settings> {
        let sni = sni.map(str::to_ascii_lowercase);
        self.ports[port].choose(sni.as_deref()).h3
    }

    /// What a request on an HTTP/3 connection sees of its TLS session.
    /// quinn does not report the negotiated suite nor a resumption:
    /// `SSL_CIPHER` is empty and `SSL_SESSION_RESUMED` says `Initial`.
    pub(crate) fn quic_info(&self, port: usize, sni: Option<String>) -> TlsInfo {
        let sni = sni.map(|s| s.to_ascii_lowercase());
        let site = self.ports[port].choose(sni.as_deref());
        // The certificate the resolver chose for a client that verifies
        // every scheme (what QUIC clients, TLS 1.3 only, do).
        let key = site.pick_key(&ALL_SCHEMES);
        let shown = key.shown();
        TlsInfo {
            protocol: "TLSv1.3",
            cipher: "",
            cipher_bits: 0,
            sni,
            server_subject: shown.0.subject.clone(),
            server_issuer: shown.0.issuer.clone(),
            server_serial: shown.0.serial.clone(),
            server_version: shown.0.version,
            server_key_alg: shown.0.key_alg,
            resumed: false,
            client: None,
            server_cert_pem: Some(shown.1.clone()),
            handshake_site: site.site,
            verify_depth: Default::default(),
        }
    }
}

const ALL_SCHEMES: [rustls::SignatureScheme; 7] = [
    rustls::SignatureScheme::ECDSA_NISTP256_SHA256,
    rustls::SignatureScheme::ECDSA_NISTP384_SHA384,
    rustls::SignatureScheme::ED25519,
    rustls::SignatureScheme::RSA_PSS_SHA256,
    rustls::SignatureScheme::RSA_PSS_SHA384,
    rustls::SignatureScheme::RSA_PSS_SHA512,
    rustls::SignatureScheme::ECDSA_NISTP521_SHA512,
];

/// Whether the TLS address `spec` is served through the listening
/// address `listen`: the same address, or any address with its port when
/// `listen` is a wildcard.
fn covers(spec: &str, listen: SocketAddr) -> bool {
    if htaccel_engine::engine::addr_matches(spec, listen) {
        return true;
    }
    listen.ip().is_unspecified()
        && spec
            .rsplit_once(':')
            .is_some_and(|(_, p)| p == "*" || p.parse::<u16>().ok() == Some(listen.port()))
}
