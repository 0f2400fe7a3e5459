//! A small HTTP/3 load generator for bench/http3.md (no HTTP/3 load tool
//! is installed here: h2load is built without QUIC). Opens `CONNS` QUIC
//! connections to `ADDR` (SNI `NAME`), keeps `STREAMS` requests for
//! `PATH` in flight on each for `SECONDS`, and prints the requests
//! completed, the failures and the rate.
//!
//! `cargo run --release -p htaccel --example h3load -- 127.0.0.1:8443 localhost /index.html 4 16 5`

use bytes::Buf;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug)]
struct AnyCert(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AnyCert {
    fn verify_server_cert(
        &self,
        _: &rustls::pki_types::CertificateDer<'_>,
        _: &[rustls::pki_types::CertificateDer<'_>],
        _: &rustls::pki_types::ServerName<'_>,
        _: &[u8],
        _: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        m: &[u8],
        c: &rustls::pki_types::CertificateDer<'_>,
        d: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(m, c, d, &self.0.signature_verification_algorithms)
    }
    fn verify_tls13_signature(
        &self,
        m: &[u8],
        c: &rustls::pki_types::CertificateDer<'_>,
        d: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(m, c, d, &self.0.signature_verification_algorithms)
    }
    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [addr, name, path, conns, streams, seconds] = &args[..] else {
        eprintln!("usage: h3load ADDR NAME PATH CONNS STREAMS SECONDS");
        std::process::exit(2);
    };
    let addr: SocketAddr = addr.parse().expect("ADDR");
    let (conns, streams): (usize, usize) = (conns.parse().unwrap(), streams.parse().unwrap());
    let duration = Duration::from_secs(seconds.parse().unwrap());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();
    let (done, failed) = local.block_on(&rt, async move {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut tls = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .unwrap()
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCert(provider)))
            .with_no_client_auth();
        tls.alpn_protocols = vec![b"h3".to_vec()];
        let quic = quinn::crypto::rustls::QuicClientConfig::try_from(tls).unwrap();
        let mut endpoint = quinn::Endpoint::client("127.0.0.1:0".parse().unwrap()).unwrap();
        endpoint.set_default_client_config(quinn::ClientConfig::new(Arc::new(quic)));
        let uri = format!("https://{name}:{}{path}", addr.port());
        let counts = Rc::new((std::cell::Cell::new(0u64), std::cell::Cell::new(0u64)));
        let end = Instant::now() + duration;
        let mut tasks = Vec::new();
        for _ in 0..conns {
            let conn = endpoint.connect(addr, name).unwrap().await.unwrap();
            let (mut driver, send) = h3::client::new(h3_quinn::Connection::new(conn))
                .await
                .unwrap();
            tokio::task::spawn_local(async move { driver.wait_idle().await });
            for _ in 0..streams {
                let mut send = send.clone();
                let uri = uri.clone();
                let counts = counts.clone();
                tasks.push(tokio::task::spawn_local(async move {
                    while Instant::now() < end {
                        let req = http::Request::get(&uri).body(()).unwrap();
                        let ok = async {
                            let mut s = send.send_request(req).await.ok()?;
                            s.finish().await.ok()?;
                            let status = s.recv_response().await.ok()?.status();
                            while let Some(mut d) = s.recv_data().await.ok()? {
                                d.advance(d.remaining());
                            }
                            status.is_success().then_some(())
                        }
                        .await;
                        match ok {
                            Some(()) => counts.0.set(counts.0.get() + 1),
                            None => counts.1.set(counts.1.get() + 1),
                        }
                    }
                }));
            }
        }
        for t in tasks {
            let _ = t.await;
        }
        (counts.0.get(), counts.1.get())
    });
    let secs = duration.as_secs_f64();
    println!(
        "requests {done} failed {failed} seconds {secs} req/s {:.0}",
        done as f64 / secs
    );
}
