//! HTTPS end to end on 127.0.0.1: the TLS transport under the HTTP/1.1
//! loop, with a small handler, a rustls client and certificates made by
//! `openssl` for the test. Apache cannot be asked about the transport's
//! own properties (records, a 1 MiB file in bounded chunks, keep-alive
//! and pipelining inside one session, the handshake time limit, which
//! certificate SNI selects among two built here): the differential
//! `https/` cases compare what Apache does with mod_ssl.

use htaccel_engine::http::tls::{KeyPairSpec, TlsPortSpec, TlsSiteSpec, SUITES};
use htaccel_engine::http::{AccessEntry, Body, Handler, Log, ProtocolError, Request, Response};
use htaccel_server::tls::TlsSetup;
use htaccel_server::{Listeners, ReqTimeout, Server, ServerOptions, Timeouts};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct NoLog;
impl Log for NoLog {
    fn access(&self, _: &AccessEntry<'_>) {}
    fn error(&self, _: &str, _: &str, _: Option<SocketAddr>, _: &str) {}
}

/// Answers `/big` with a 1 MiB file, anything else with what it saw of TLS.
struct TlsHandler {
    big: Arc<std::fs::File>,
}

impl Handler for TlsHandler {
    fn handle(&self, req: &Request) -> Response {
        let mut r = Response::new(200);
        r.add_header("Content-Type", "text/plain");
        if req.target == "/big" {
            r.add_header("Content-Length", (1u64 << 20).to_string());
            r.body = Body::file(self.big.clone(), 0, 1 << 20);
            return r;
        }
        let tls = req.tls.as_deref();
        r.body = Body::bytes(format!(
            "{} secure={} sni={:?} proto={} site={:?} subject={} resumed={}\n",
            req.target,
            req.secure,
            tls.and_then(|t| t.sni.clone()),
            tls.map_or("", |t| t.protocol),
            tls.and_then(|t| t.handshake_site),
            tls.map_or("", |t| t.server_subject.as_str()),
            tls.is_some_and(|t| t.resumed),
        ));
        r
    }
    fn protocol_error(&self, e: &ProtocolError<'_>) -> Response {
        let mut r = Response::new(e.status);
        r.add_header("Content-Type", "text/html");
        r.body = Body::bytes(format!("E{}:{}", e.status, e.note.unwrap_or("")));
        r.close = true;
        r
    }
    fn log(&self) -> &dyn Log {
        &NoLog
    }
}

/// A self-signed certificate for `cn` (RSA or ECDSA) in `dir`.
fn make_cert(dir: &Path, cn: &str, ecdsa: bool) -> KeyPairSpec {
    let cert = dir.join(format!("{cn}.crt"));
    let key = dir.join(format!("{cn}.key"));
    let algo: &[&str] = if ecdsa {
        &["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
    } else {
        &["-newkey", "rsa:2048"]
    };
    let ok = std::process::Command::new("openssl")
        .args(["req", "-x509", "-nodes", "-days", "30"])
        .args(algo)
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .args(["-subj", &format!("/O=Test/CN={cn}")])
        .stderr(std::process::Stdio::null())
        .status()
        .expect("openssl")
        .success();
    assert!(ok, "openssl req failed");
    KeyPairSpec {
        cert,
        key: Some(key),
    }
}

fn temp_dir() -> PathBuf {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("htaccel-tls-test-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn site(index: Option<usize>, names: &[&str], keys: Vec<KeyPairSpec>) -> TlsSiteSpec {
    TlsSiteSpec {
        site: index,
        names: names.iter().map(|s| s.to_string()).collect(),
        keys,
        chain: None,
        tls12: true,
        tls13: true,
        suites12: SUITES.iter().filter(|s| !s.1).map(|s| s.0).collect(),
        suites13: SUITES.iter().filter(|s| s.1).map(|s| s.0).collect(),
        honor_cipher_order: false,
        session_tickets: true,
        session_cache: 0,
        session_timeout: 300,
        client_auth: None,
        protocols: Default::default(),
        h2: None,
        h3: None,
        managed: None,
        stapling: None,
        server_id: "localhost:443".into(),
        groups: None,
    }
}

fn start(sites: Vec<TlsSiteSpec>, header_timeout: Duration) -> (Server, SocketAddr) {
    let setup = TlsSetup::build(&[TlsPortSpec {
        addr: "*".into(),
        sites,
    }])
    .unwrap();
    let path = temp_dir().join("big");
    let data: Vec<u8> = (0..1u32 << 20).map(|i| (i % 251) as u8).collect();
    std::fs::write(&path, &data).unwrap();
    let big = Arc::new(std::fs::File::open(&path).unwrap());
    let opts = ServerOptions {
        listen: vec!["127.0.0.1:0".parse().unwrap()],
        threads: 1,
        server_header: "Apache".into(),
        shutdown_timeout: Duration::from_secs(3),
        timeouts: Timeouts {
            header: ReqTimeout {
                timeout: header_timeout,
                max_timeout: Duration::ZERO,
                min_rate: 0,
            },
            keepalive: Duration::from_secs(2),
            ..Timeouts::default()
        },
        tls: Some(Arc::new(setup)),
        ..ServerOptions::default()
    };
    let l = Listeners::bind(&opts).unwrap();
    let addr = l.local_addrs()[0];
    (l.serve(Arc::new(TlsHandler { big }), &opts).unwrap(), addr)
}

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

fn client_config(
    versions: &[&'static rustls::SupportedProtocolVersion],
    alpn: &[&[u8]],
) -> Arc<rustls::ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(versions)
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCert(provider)))
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Arc::new(config)
}

/// A TLS client session to `addr`, with SNI `sni` (or none for an IP).
fn connect(
    addr: SocketAddr,
    sni: &str,
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> rustls::StreamOwned<rustls::ClientConnection, TcpStream> {
    connect_with(addr, sni, client_config(versions, &[]))
}

fn connect_with(
    addr: SocketAddr,
    sni: &str,
    config: Arc<rustls::ClientConfig>,
) -> rustls::StreamOwned<rustls::ClientConnection, TcpStream> {
    let name = ServerName::try_from(sni.to_string()).unwrap();
    let conn = rustls::ClientConnection::new(config, name).unwrap();
    let tcp = TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    rustls::StreamOwned::new(conn, tcp)
}

/// Read until the server closes the session.
fn read_to_close(s: &mut impl Read) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return out,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return out,
            Err(e) => panic!("read: {e} after {} bytes", out.len()),
        }
    }
}

fn body_of(resp: &[u8]) -> &[u8] {
    let at = resp.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    &resp[at + 4..]
}

const ALL: &[&rustls::SupportedProtocolVersion] =
    &[&rustls::version::TLS13, &rustls::version::TLS12];

#[test]
fn keep_alive_pipelining_and_a_large_file_over_tls() {
    let dir = temp_dir();
    let (server, addr) = start(
        vec![site(
            None,
            &["localhost"],
            vec![make_cert(&dir, "localhost", false)],
        )],
        Duration::from_secs(20),
    );
    let mut s = connect(addr, "localhost", ALL);
    // Two pipelined requests, then a third after the answers: one session.
    s.write_all(
        b"GET /a HTTP/1.1\r\nHost: localhost\r\n\r\nGET /b HTTP/1.1\r\nHost: localhost\r\n\r\n",
    )
    .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while got.windows(6).filter(|w| w == b"secure").count() < 2 {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0);
        got.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&got);
    assert!(
        text.contains("/a secure=true sni=Some(\"localhost\") proto=TLSv1.3"),
        "{text}"
    );
    assert!(text.contains("/b secure=true"), "{text}");
    assert!(text.contains("subject=CN=localhost,O=Test"), "{text}");
    s.write_all(b"GET /big HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    let resp = read_to_close(&mut s);
    let body = body_of(&resp);
    assert_eq!(body.len(), 1 << 20);
    assert!(body.iter().enumerate().all(|(i, b)| *b == (i % 251) as u8));
    server.shutdown();
    server.wait().unwrap();
}

#[test]
fn request_bodies_and_tls12() {
    let dir = temp_dir();
    let (server, addr) = start(
        vec![site(
            None,
            &["localhost"],
            vec![make_cert(&dir, "localhost", true)],
        )],
        Duration::from_secs(20),
    );
    let mut s = connect(addr, "localhost", &[&rustls::version::TLS12]);
    let body = vec![b'x'; 200_000];
    let mut req = format!(
        "POST /form HTTP/1.1\r\nHost: localhost\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    req.extend_from_slice(&body);
    req.extend_from_slice(b"GET /after HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    s.write_all(&req).unwrap();
    let text = String::from_utf8_lossy(&read_to_close(&mut s)).into_owned();
    assert!(text.contains("/form secure=true"), "{text}");
    assert!(
        text.contains("/after secure=true sni=Some(\"localhost\") proto=TLSv1.2"),
        "{text}"
    );
    server.shutdown();
    server.wait().unwrap();
}

#[test]
fn sni_chooses_the_server_and_no_sni_gets_the_first() {
    let dir = temp_dir();
    let (server, addr) = start(
        vec![
            site(
                Some(0),
                &["one.test"],
                vec![make_cert(&dir, "one.test", false)],
            ),
            site(
                Some(1),
                &["two.test", "*.two.test"],
                vec![make_cert(&dir, "two.test", true)],
            ),
        ],
        Duration::from_secs(20),
    );
    for (sni, want) in [
        ("two.test", "site=Some(1) subject=CN=two.test,O=Test"),
        ("www.two.test", "site=Some(1)"),
        ("one.test", "site=Some(0) subject=CN=one.test,O=Test"),
        ("other.test", "site=Some(0)"),
        // An IP address is never sent as SNI.
        ("127.0.0.1", "sni=None proto=TLSv1.3 site=Some(0)"),
    ] {
        let mut s = connect(addr, sni, ALL);
        s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .unwrap();
        let text = String::from_utf8_lossy(&read_to_close(&mut s)).into_owned();
        assert!(text.contains(want), "{sni}: {text}");
    }
    server.shutdown();
    server.wait().unwrap();
}

#[test]
fn plain_http_on_the_tls_port_and_the_handshake_limit() {
    let dir = temp_dir();
    let (server, addr) = start(
        vec![site(
            None,
            &["localhost"],
            vec![make_cert(&dir, "localhost", false)],
        )],
        Duration::from_secs(1),
    );
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let text = String::from_utf8_lossy(&read_to_close(&mut s)).into_owned();
    assert!(text.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{text}");
    assert!(
        text.contains("E400:Reason: You're speaking plain HTTP to an SSL-enabled server port."),
        "{text}"
    );
    // A client that never finishes its handshake is dropped at the limit.
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(&[0x16, 0x03, 0x01]).unwrap();
    let started = Instant::now();
    let rest = read_to_close(&mut s);
    assert!(rest.is_empty());
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(800) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    server.shutdown();
    server.wait().unwrap();
}

#[test]
fn der_certificates_and_keys_as_mod_ssl_accepts_them() {
    let dir = temp_dir();
    let pem = make_cert(&dir, "der.test", false);
    let der = KeyPairSpec {
        cert: dir.join("der.test.der"),
        key: Some(dir.join("der.test.key.der")),
    };
    for (what, from, to) in [
        ("x509", &pem.cert, &der.cert),
        ("pkey", pem.key.as_ref().unwrap(), der.key.as_ref().unwrap()),
    ] {
        let ok = std::process::Command::new("openssl")
            .args([what, "-outform", "DER", "-in"])
            .arg(from)
            .arg("-out")
            .arg(to)
            .status()
            .unwrap()
            .success();
        assert!(ok);
    }
    let (server, addr) = start(
        vec![site(None, &["der.test"], vec![der])],
        Duration::from_secs(20),
    );
    let mut s = connect(addr, "der.test", ALL);
    s.write_all(b"GET / HTTP/1.1\r\nHost: der.test\r\nConnection: close\r\n\r\n")
        .unwrap();
    let text = String::from_utf8_lossy(&read_to_close(&mut s)).into_owned();
    assert!(text.contains("subject=CN=der.test,O=Test"), "{text}");
    server.shutdown();
    server.wait().unwrap();
}

#[test]
fn a_missing_or_mismatched_key_is_an_error_naming_the_file() {
    let dir = temp_dir();
    let a = make_cert(&dir, "a.test", false);
    let b = make_cert(&dir, "b.test", false);
    let mismatched = KeyPairSpec {
        cert: a.cert.clone(),
        key: b.key.clone(),
    };
    let err = TlsSetup::build(&[TlsPortSpec {
        addr: "*:443".into(),
        sites: vec![site(None, &["a.test"], vec![mismatched])],
    }])
    .unwrap_err();
    assert!(
        err.contains("does not match") && err.contains("b.test.key"),
        "{err}"
    );
    let missing = KeyPairSpec {
        cert: dir.join("nothere.crt"),
        key: None,
    };
    let err = TlsSetup::build(&[TlsPortSpec {
        addr: "*:443".into(),
        sites: vec![site(None, &["a.test"], vec![missing])],
    }])
    .unwrap_err();
    assert!(err.contains("nothere.crt"), "{err}");
}

#[test]
fn resumption_and_alpn() {
    let dir = temp_dir();
    // SSLSessionTickets off with a session cache (certbot's options with
    // Debian's ssl.conf): resumption by the cache, for 1.3 and 1.2.
    let mut cached = site(
        None,
        &["localhost"],
        vec![make_cert(&dir, "localhost", false)],
    );
    cached.session_cache = 64;
    cached.session_tickets = false;
    let (server, addr) = start(vec![cached], Duration::from_secs(20));
    for versions in [ALL, &[&rustls::version::TLS12][..]] {
        // One client configuration keeps the session: the second
        // handshake resumes it (tickets for 1.3, tickets or IDs for 1.2).
        let config = client_config(versions, &[b"h2", b"http/1.1"]);
        for round in 0..2 {
            let mut s = connect_with(addr, "localhost", config.clone());
            s.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                .unwrap();
            let text = String::from_utf8_lossy(&read_to_close(&mut s)).into_owned();
            // As Apache, http/1.1 is selected when the client offers it.
            assert_eq!(s.conn.alpn_protocol(), Some(&b"http/1.1"[..]));
            assert!(
                text.contains(&format!("resumed={}", round == 1)),
                "{versions:?} round {round}: {text}"
            );
        }
    }
    // A client offering only h2 is still served HTTP/1.1 (no ALPN answer)
    // rather than refused.
    let mut s = connect_with(addr, "localhost", client_config(ALL, &[b"h2"]));
    s.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    let text = String::from_utf8_lossy(&read_to_close(&mut s)).into_owned();
    assert!(text.starts_with("HTTP/1.1 200 OK"), "{text}");
    assert_eq!(s.conn.alpn_protocol(), None);
    server.shutdown();
    server.wait().unwrap();
}

/// `SSLSessionCacheTimeout`: a session resumes while it is younger than
/// the timeout, by ticket or by the session cache, and not after (the
/// client drops a ticket past its announced lifetime; the server refuses a
/// cached session past the timeout). What Apache does, checked against it
/// with `openssl s_client -sess_out/-sess_in` (the difftest client does
/// not resume sessions across requests).
#[test]
fn session_timeout_bounds_resumption() {
    let dir = temp_dir();
    let cert = make_cert(&dir, "localhost", false);
    for tickets in [true, false] {
        let mut spec = site(None, &["localhost"], vec![cert.clone()]);
        spec.session_tickets = tickets;
        spec.session_cache = if tickets { 0 } else { 64 };
        spec.session_timeout = 1;
        let (server, addr) = start(vec![spec], Duration::from_secs(20));
        for versions in [ALL, &[&rustls::version::TLS12][..]] {
            let config = client_config(versions, &[b"http/1.1"]);
            let resumed = || {
                let mut s = connect_with(addr, "localhost", config.clone());
                s.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                    .unwrap();
                let text = String::from_utf8_lossy(&read_to_close(&mut s)).into_owned();
                text.contains("resumed=true")
            };
            assert!(!resumed(), "tickets {tickets}, {versions:?}: first");
            assert!(resumed(), "tickets {tickets}, {versions:?}: at once");
            std::thread::sleep(Duration::from_millis(2100));
            assert!(!resumed(), "tickets {tickets}, {versions:?}: after 2 s");
        }
        server.shutdown();
        server.wait().unwrap();
    }
}

#[test]
fn timeouts_over_tls() {
    let dir = temp_dir();
    let (server, addr) = start(
        vec![site(
            None,
            &["localhost"],
            vec![make_cert(&dir, "localhost", false)],
        )],
        Duration::from_secs(2),
    );
    // A head cut short after its request line: 408 when the header stage
    // (2 s here) runs out, through the TLS session.
    let mut s = connect(addr, "localhost", ALL);
    s.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n")
        .unwrap();
    let started = Instant::now();
    let text = String::from_utf8_lossy(&read_to_close(&mut s)).into_owned();
    assert!(text.starts_with("HTTP/1.1 408 "), "{text}");
    assert!(started.elapsed() < Duration::from_secs(6));
    // An idle keep-alive session is closed after KeepAliveTimeout (2 s).
    let mut s = connect(addr, "localhost", ALL);
    s.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let started = Instant::now();
    let text = String::from_utf8_lossy(&read_to_close(&mut s)).into_owned();
    assert!(text.starts_with("HTTP/1.1 200 OK"), "{text}");
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(1500) && waited < Duration::from_secs(6),
        "{waited:?}"
    );
    server.shutdown();
    server.wait().unwrap();
}
