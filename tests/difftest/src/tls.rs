//! The clients' TLS (rustls with *ring*): a session to the server's TLS
//! port with the SNI name a request asks for (`# sni NAME`, `# https` for
//! `localhost`, `# no-sni` for none) and, with `# tls1.2`, TLS 1.2 only.
//! The client offers `h2` and `http/1.1` by ALPN, as browsers do. The
//! server's certificate is not verified (both servers use the case's own
//! self-signed certificates); it is described instead, with the protocol,
//! the cipher suite and the ALPN protocol selected, and compared: which certificate a
//! server chose is what a browser would see.

use crate::requests::TlsOptions;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, StreamOwned};
use std::hash::{Hash, Hasher};
use std::net::TcpStream;
use std::sync::Arc;

#[derive(Debug)]
struct AnyCert(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for AnyCert {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &rustls::DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(m, c, d, &self.0.signature_verification_algorithms)
    }
    fn verify_tls13_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &rustls::DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(m, c, d, &self.0.signature_verification_algorithms)
    }
    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// The client's TLS settings for one request: versions, SNI, client
/// certificate and the ALPN protocols offered (`h2` and `http/1.1`, as
/// browsers do). Shared by the HTTP/1.1 client below and the HTTP/2 client
/// (`h2client.rs`), so that both offer the same handshake.
pub fn client_config(
    opts: &TlsOptions,
    certs: &std::path::Path,
) -> Result<(Arc<ClientConfig>, ServerName<'static>), String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let versions: &[&rustls::SupportedProtocolVersion] = if opts.tls12_only {
        &[&rustls::version::TLS12]
    } else {
        &[&rustls::version::TLS13, &rustls::version::TLS12]
    };
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(versions)
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCert(provider)));
    let mut config = match &opts.client_cert {
        None => builder.with_no_client_auth(),
        Some(name) => {
            use rustls::pki_types::pem::PemObject;
            let chain = CertificateDer::pem_file_iter(certs.join(format!("{name}.crt")))
                .and_then(|i| i.collect::<Result<Vec<_>, _>>())
                .map_err(|e| format!("client certificate {name}: {e}"))?;
            let key =
                rustls::pki_types::PrivateKeyDer::from_pem_file(certs.join(format!("{name}.key")))
                    .map_err(|e| format!("client key {name}: {e}"))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| e.to_string())?
        }
    };
    config.enable_sni = opts.sni.is_some();
    // What browsers offer: the protocol the server selects is compared.
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let name = opts.sni.clone().unwrap_or_else(|| "localhost".into());
    let name = ServerName::try_from(name).map_err(|e| e.to_string())?;
    Ok((Arc::new(config), name))
}

/// A TLS session over `tcp`, handshake done, with a description of it:
/// the protocol and the certificate chain the server sent (hashed).
pub fn handshake(
    tcp: TcpStream,
    opts: &TlsOptions,
    certs: &std::path::Path,
) -> Result<(StreamOwned<ClientConnection, TcpStream>, String), String> {
    let (config, name) = client_config(opts, certs)?;
    let conn = ClientConnection::new(config, name).map_err(|e| e.to_string())?;
    let mut session = StreamOwned::new(conn, tcp);
    while session.conn.is_handshaking() {
        session
            .conn
            .complete_io(&mut session.sock)
            .map_err(|e| e.to_string())?;
    }
    let described = describe(&session.conn);
    Ok((session, described))
}

/// What a client sees of a finished handshake: protocol version, cipher
/// suite, the ALPN protocol selected and the certificate chain (hashed).
pub fn describe(c: &rustls::CommonState) -> String {
    let chain: Vec<String> = c
        .peer_certificates()
        .unwrap_or_default()
        .iter()
        .map(|cert| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            cert.as_ref().hash(&mut h);
            format!("{:016x}", h.finish())
        })
        .collect();
    format!(
        "{:?}, {:?}, ALPN {}, certificates {}",
        c.protocol_version(),
        c.negotiated_cipher_suite().map(|s| s.suite()),
        c.alpn_protocol()
            .map_or("none".into(), |p| String::from_utf8_lossy(p).into_owned()),
        chain.join(" ")
    )
}
