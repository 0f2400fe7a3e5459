//! A new connection to a TLS address, up to the first request: plain HTTP
//! answered as mod_ssl answers it, the ClientHello read, the server chosen
//! by SNI (the address's default without one), the handshake finished, all
//! within the handshake time limit; then the connection loop.

use super::config::openssl_name;
use super::stream::{write_records, SockIo, TlsStream};
use super::TlsSetup;
use crate::conn::{self, Local, Shared};
use crate::transport::Plain;
use crate::transport::Transport;
use htaccel_engine::http::http2::H2Settings;
use htaccel_engine::http::TlsInfo;
use rustls::server::Acceptor;
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::time::Instant;

/// The handshake's time limit, from accept to the client's Finished:
/// mod_reqtimeout's `handshake` stage when it is set, else its header stage
/// (Apache's handshake happens within the first request's read, under the
/// header stage), each by its first limit; without either, `Timeout` alone,
/// as Apache without mod_reqtimeout. At most `Timeout`.
pub(crate) fn handshake_limit(shared: &Shared, local_addr: SocketAddr) -> Duration {
    let stages = conn::read_timeouts(shared, local_addr);
    let timeout = conn::address_settings(shared, local_addr).timeout;
    let limit = if stages.enabled && !stages.handshake.is_off() {
        stages.handshake.timeout
    } else if !stages.header.is_off() {
        stages.header.timeout
    } else {
        timeout
    };
    limit.min(timeout)
}

/// Whether the first bytes are an HTTP request OpenSSL recognises (its
/// `SSL_R_HTTP_REQUEST`: `GET `, `POST `, `HEAD `, `PUT `), which mod_ssl
/// answers with a 400; anything else that is not TLS is dropped.
fn is_plain_http(first: &[u8]) -> bool {
    [&b"GET "[..], b"POST ", b"HEAD ", b"PUT "]
        .iter()
        .any(|m| first.starts_with(m))
}

/// Serve a connection to a TLS address (`port` of `setup`).
pub(crate) async fn serve(
    tcp: TcpStream,
    remote: crate::proxy_protocol::Client,
    local_addr: SocketAddr,
    setup: Arc<TlsSetup>,
    port: usize,
    shared: Arc<Shared>,
    local: Rc<Local>,
) {
    let deadline = Instant::now() + handshake_limit(&shared, local_addr);
    let mut first = [0u8; 5];
    let n = loop {
        let n = match tokio::time::timeout_at(deadline, tcp.peek(&mut first)).await {
            Ok(Ok(n)) => n,
            _ => return,
        };
        // A TLS record (0x16) or not a letter: decided by the first byte;
        // a method needs its five bytes.
        if n == 0 || n == first.len() || !first[0].is_ascii_uppercase() {
            break n;
        }
        if tokio::time::timeout_at(deadline, tokio::time::sleep(Duration::from_millis(10)))
            .await
            .is_err()
        {
            break n;
        }
    };
    if n == 0 {
        return;
    }
    if is_plain_http(&first[..n]) {
        conn::refuse_plain_http(Plain(tcp), remote, local_addr, shared, local).await;
        return;
    }
    let Some((stream, h2)) = handshake(
        tcp,
        remote.addr,
        &setup,
        port,
        deadline,
        conn::address_settings(&shared, local_addr).timeout,
    )
    .await
    else {
        return;
    };
    match h2 {
        None => conn::serve(stream, remote, local_addr, shared, local).await,
        Some(settings) => {
            let info = stream.tls().cloned();
            crate::h2::serve(stream, info, remote, local_addr, settings, shared, local).await
        }
    }
}

/// What ALPN answers a client.
enum Alpn {
    H2,
    Http11,
    /// No protocol named: the client offered no ALPN, or nothing htaccel
    /// can select (Apache names `http/1.1` regardless, which a client that
    /// did not offer it must refuse; rustls cannot, so it names none and
    /// the connection speaks HTTP/1.1 all the same).
    Unnamed,
}

/// The protocol Apache's ALPN callback selects for the server SNI chose:
/// `ap_select_protocol` over the client's list (`Protocols`,
/// `ProtocolsHonorOrder`), `h2` available when the server may speak it.
fn alpn_choice<'a>(site: &super::Site, offered: Option<impl Iterator<Item = &'a [u8]>>) -> Alpn {
    let Some(offered) = offered else {
        return Alpn::Unnamed;
    };
    let choices: Vec<&str> = offered
        .filter_map(|p| std::str::from_utf8(p).ok())
        .collect();
    let available: &[&str] = if site.h2.is_some() { &["h2"] } else { &[] };
    match site.protocols.select(&choices, available) {
        Some("h2") if site.h2.is_some() => Alpn::H2,
        _ if choices.contains(&"http/1.1") => Alpn::Http11,
        _ => Alpn::Unnamed,
    }
}

/// Wait until the socket is readable, at most until `deadline`.
async fn readable(tcp: &TcpStream, deadline: Instant) -> bool {
    matches!(
        tokio::time::timeout_at(deadline, tcp.readable()).await,
        Ok(Ok(()))
    )
}

/// The handshake, with the server the ClientHello chooses; `None` when it
/// fails (the alert sent if it can be) or runs out of time.
async fn handshake(
    tcp: TcpStream,
    client: SocketAddr,
    setup: &TlsSetup,
    port: usize,
    deadline: Instant,
    timeout: Duration,
) -> Option<(TlsStream, Option<H2Settings>)> {
    let mut acceptor = Acceptor::default();
    let accepted = loop {
        match acceptor.read_tls(&mut SockIo(&tcp)) {
            Ok(0) => return None,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if !readable(&tcp, deadline).await {
                    return None;
                }
                continue;
            }
            Err(_) => return None,
        }
        match acceptor.accept() {
            Ok(Some(a)) => break a,
            Ok(None) => {}
            Err((_, mut alert)) => {
                let _ = alert.write(&mut SockIo(&tcp));
                return None;
            }
        }
    };
    let hello = accepted.client_hello();
    let sni = hello.server_name().map(str::to_ascii_lowercase);
    // mod_md's tls-alpn-01: a handshake that offers only `acme-tls/1`
    // for a name with an open challenge gets the challenge's certificate,
    // and nothing more.
    let acme_only = hello.alpn().is_some_and(|mut a| {
        a.next() == Some(crate::md::alpn::ACME_TLS_ALPN) && a.next().is_none()
    });
    if acme_only {
        if let Some(cert) = sni.as_deref().and_then(crate::md::alpn::get) {
            let config = super::config::acme_tls_alpn(cert);
            if let Ok(mut conn) = accepted.into_connection(config) {
                while conn.is_handshaking() {
                    if conn.wants_write() {
                        if write_records(&tcp, &mut conn, timeout).await.is_err() {
                            break;
                        }
                        continue;
                    }
                    if !readable(&tcp, deadline).await {
                        break;
                    }
                    match conn.read_tls(&mut SockIo(&tcp)) {
                        Ok(0) | Err(_) => break,
                        Ok(_) if conn.process_new_packets().is_err() => break,
                        Ok(_) => {}
                    }
                }
                conn.send_close_notify();
                let _ = write_records(&tcp, &mut conn, Duration::from_secs(1)).await;
            }
            return None;
        }
    }
    let site = setup.ports[port].choose(sni.as_deref());
    let key = site.pick_key(hello.signature_schemes());
    if let Some(stapler) = &key.stapler {
        // mod_ssl's status callback, before the handshake's answer.
        let _ = tokio::time::timeout_at(deadline, stapler.prepare(client)).await;
    }
    let config = match alpn_choice(site, hello.alpn()) {
        Alpn::H2 => key.config_h2.clone().unwrap_or_else(|| key.config.clone()),
        Alpn::Http11 => key.config.clone(),
        Alpn::Unnamed => key.config_no_alpn.clone(),
    };
    let mut conn = match accepted.into_connection(config) {
        Ok(c) => c,
        Err((_, mut alert)) => {
            let _ = alert.write(&mut SockIo(&tcp));
            return None;
        }
    };
    while conn.is_handshaking() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        if conn.wants_write() {
            write_records(&tcp, &mut conn, left.min(timeout))
                .await
                .ok()?;
            continue;
        }
        match conn.read_tls(&mut SockIo(&tcp)) {
            Ok(0) => return None,
            Ok(_) => {
                if let Err(e) = conn.process_new_packets() {
                    match super::client_verify::plain_alert_for(&e, conn.protocol_version()) {
                        Some(alert) => {
                            let _ = tcp.try_write(alert);
                        }
                        None => {
                            let _ = write_records(&tcp, &mut conn, Duration::from_secs(1)).await;
                        }
                    }
                    return None;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if !readable(&tcp, deadline).await {
                    return None;
                }
            }
            Err(_) => return None,
        }
    }
    // TLS 1.3 session tickets, sent now rather than with the first answer.
    write_records(&tcp, &mut conn, timeout).await.ok()?;
    let suite = conn.negotiated_cipher_suite()?;
    let cipher_bits = match suite.suite() {
        rustls::CipherSuite::TLS13_AES_128_GCM_SHA256
        | rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
        | rustls::CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => 128,
        _ => 256,
    };
    let shown = key.shown();
    let info = TlsInfo {
        protocol: match conn.protocol_version() {
            Some(rustls::ProtocolVersion::TLSv1_3) => "TLSv1.3",
            _ => "TLSv1.2",
        },
        cipher: openssl_name(suite.suite()).unwrap_or(""),
        cipher_bits,
        sni,
        server_subject: shown.0.subject.clone(),
        server_issuer: shown.0.issuer.clone(),
        server_serial: shown.0.serial.clone(),
        server_version: shown.0.version,
        server_key_alg: shown.0.key_alg,
        resumed: conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed),
        client: conn
            .peer_certificates()
            .and_then(|c| c.first())
            .map(|cert| {
                let f = super::der::CertFacts::of(cert);
                htaccel_engine::http::tls::ClientCert {
                    subject: f.subject,
                    issuer: f.issuer,
                    serial: f.serial,
                    version: f.version,
                    key_alg: f.key_alg,
                    pem: htaccel_engine::http::tls::pem(cert),
                }
            }),
        server_cert_pem: Some(shown.1.clone()),
        handshake_site: site.site,
        verify_depth: Default::default(),
    };
    // The client chose HTTP/2 by ALPN.
    let h2 = site
        .h2
        .filter(|_| conn.alpn_protocol() == Some(super::config::ALPN_H2));
    Some((TlsStream::new(tcp, conn, Arc::new(info)), h2))
}
