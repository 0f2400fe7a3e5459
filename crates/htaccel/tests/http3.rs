//! HTTP/3 (htaccel_http3, htaccel's own module). Apache httpd has no
//! HTTP/3, so it cannot be the oracle here: each HTTP/3 answer is
//! compared with htaccel's own HTTP/2 answer to the same request (curl
//! over TLS with ALPN h2), whose equality with Apache's is what the
//! differential cases check. The HTTP/3 client is quinn with h3.
//!
//! Also checked: `Alt-Svc` on HTTP/1.1, HTTP/2 and HTTP/3 answers (kept
//! when the answer has its own), a handshake whose SNI names a server
//! without HTTP/3 refused, the stream limit (`H3MaxStreams`), connection migration
//! (quinn's default, allowed: a client whose address changes keeps its
//! connection), GOAWAY and a clean close when the server stops, no UDP
//! socket for a TLS server without `H3Engine on`, the refusal of
//! `H3Engine on` without TLS, and Apache loading the same configuration
//! (the directives inside `<IfModule htaccel_http3_module>`).

mod common;

use bytes::{Buf, Bytes};
use common::TempDir;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

/// What a client sees of an answer (`date` left out: it moves).
#[derive(Debug, PartialEq, Eq)]
struct Answer {
    /// The interim answers before it (`103 Early Hints`): status and fields.
    interim: Vec<(u16, Vec<(String, String)>)>,
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn make_cert(dir: &Path) {
    let out = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-days",
            "30",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost",
        ])
        .arg("-keyout")
        .arg(dir.join("c.key"))
        .arg("-out")
        .arg(dir.join("c.crt"))
        .output()
        .unwrap();
    assert!(out.status.success(), "openssl: {out:?}");
}

/// An HTTP/1.1 upstream for `ProxyPass`: answers with what it received
/// of the request body (method, framing, length, checksum).
fn echo_backend() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            std::thread::spawn(move || {
                let mut r = BufReader::new(s.try_clone().unwrap());
                let mut line = String::new();
                r.read_line(&mut line).unwrap();
                let method = line.split(' ').next().unwrap_or("").to_string();
                let (mut length, mut chunked) = (None, false);
                loop {
                    let mut h = String::new();
                    r.read_line(&mut h).unwrap();
                    let h = h.trim_end();
                    if h.is_empty() {
                        break;
                    }
                    let lower = h.to_ascii_lowercase();
                    if let Some(v) = lower.strip_prefix("content-length:") {
                        length = v.trim().parse::<usize>().ok();
                    }
                    chunked |= lower.starts_with("transfer-encoding:") && lower.contains("chunked");
                }
                let mut body = Vec::new();
                if chunked {
                    loop {
                        let mut size = String::new();
                        r.read_line(&mut size).unwrap();
                        let n = usize::from_str_radix(size.trim(), 16).unwrap();
                        let mut chunk = vec![0; n + 2];
                        r.read_exact(&mut chunk).unwrap();
                        if n == 0 {
                            break;
                        }
                        body.extend_from_slice(&chunk[..n]);
                    }
                } else if let Some(n) = length {
                    body.resize(n, 0);
                    r.read_exact(&mut body).unwrap();
                }
                let sum = body
                    .iter()
                    .fold(0u32, |a, b| a.wrapping_mul(31).wrapping_add(*b as u32));
                let text = format!("{method} {} bytes, sum {sum}\n", body.len());
                let mut s = s;
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                    text.len()
                );
            });
        }
    });
    port
}

/// A site whose TLS virtual host speaks h2 and, when `h3` is given, HTTP/3.
fn site(dir: &TempDir, port: u16, echo: u16, h3: &str) -> std::path::PathBuf {
    let d = dir.path().display();
    dir.write("www/index.html", "<h1>hello over QUIC</h1>\n");
    dir.write("www/own.html", "its own Alt-Svc\n");
    dir.write("www/hinted.html", "with an early hint\n");
    let big: Vec<u8> = (0..3_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    std::fs::write(dir.path().join("www/big.bin"), big).unwrap();
    // Older than a second: strong ETags on both protocols.
    let touched = Command::new("touch")
        .args(["-d", "2020-01-01 00:00:00"])
        .arg(dir.path().join("www/index.html"))
        .arg(dir.path().join("www/own.html"))
        .arg(dir.path().join("www/hinted.html"))
        .arg(dir.path().join("www/big.bin"))
        .status()
        .unwrap();
    assert!(touched.success());
    let conf = format!(
        "ServerRoot /usr/lib/apache2
LoadModule mpm_event_module modules/mod_mpm_event.so
LoadModule mime_module modules/mod_mime.so
LoadModule authz_core_module modules/mod_authz_core.so
LoadModule ssl_module modules/mod_ssl.so
LoadModule http2_module modules/mod_http2.so
LoadModule proxy_module modules/mod_proxy.so
LoadModule proxy_http_module modules/mod_proxy_http.so
LoadModule headers_module modules/mod_headers.so
TypesConfig /etc/mime.types
ServerName localhost
PidFile {d}/httpd.pid
ErrorLog {d}/error.log
Listen 127.0.0.1:{port}
DocumentRoot {d}/www
<Directory {d}/www>
    Require all granted
    <Files own.html>
        Header set Alt-Svc clear
    </Files>
    Header always set X-Always a
    <Files hinted.html>
        H2EarlyHint Link \"</style.css>; rel=preload\"
    </Files>
</Directory>
<VirtualHost 127.0.0.1:{port}>
    ServerName localhost
    SSLEngine on
    SSLCertificateFile {d}/c.crt
    SSLCertificateKeyFile {d}/c.key
    Protocols h2 http/1.1
    H2EarlyHints on
    ProxyPass /echo http://127.0.0.1:{echo}/echo
    {h3}
</VirtualHost>
<VirtualHost 127.0.0.1:{port}>
    ServerName other.test
    SSLEngine on
    SSLCertificateFile {d}/c.crt
    SSLCertificateKeyFile {d}/c.key
</VirtualHost>
"
    );
    dir.write("httpd.conf", &conf);
    dir.path().join("httpd.conf")
}

const H3_ON: &str = "<IfModule htaccel_http3_module>
        H3Engine on
        H3MaxStreams 20
    </IfModule>";

/// Whether process `pid` holds a UDP socket on `port`.
fn has_udp(pid: u32, port: u16) -> bool {
    let mut inodes = Vec::new();
    for table in ["udp", "udp6"] {
        let text = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")).unwrap_or_default();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            let local = f.get(1).and_then(|a| a.rsplit(':').next());
            if local.and_then(|p| u16::from_str_radix(p, 16).ok()) == Some(port) {
                inodes.push(format!("socket:[{}]", f[9]));
            }
        }
    }
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
        .any(|fd| {
            std::fs::read_link(fd.path())
                .is_ok_and(|l| inodes.iter().any(|i| l.to_string_lossy() == *i))
        })
}

/// A request body, and whether its length is declared (`content-length`).
type Upload<'a> = (&'a [u8], bool);

/// Request fields a case adds (`Range`).
type Fields<'a> = &'a [(&'a str, &'a str)];

/// The same request over HTTP/2, by curl.
fn h2_answer(
    dir: &TempDir,
    port: u16,
    method: &str,
    path: &str,
    body: Option<Upload>,
    fields: Fields,
) -> Answer {
    let head = dir.path().join("h2.head");
    let out = dir.path().join("h2.body");
    let mut cmd = Command::new("curl");
    cmd.args(["-sk", "--http2", "--resolve"])
        .arg(format!("localhost:{port}:127.0.0.1"))
        .arg("-D")
        .arg(&head)
        .arg("-o")
        .arg(&out);
    match method {
        "HEAD" => {
            cmd.arg("-I");
        }
        m => {
            cmd.args(["-X", m]);
        }
    }
    if let Some((data, declared)) = body {
        let file = dir.path().join("h2.upload");
        std::fs::write(&file, data).unwrap();
        if declared {
            cmd.arg("--data-binary").arg(format!("@{}", file.display()));
        } else {
            // From a pipe: no length known, sent without content-length.
            cmd.args(["-T", "-"])
                .stdin(std::fs::File::open(&file).unwrap());
        }
        cmd.args(["-H", "content-type: application/octet-stream"]);
    }
    for (name, value) in fields {
        cmd.arg("-H").arg(format!("{name}: {value}"));
    }
    cmd.arg(format!("https://localhost:{port}{path}"));
    let status = cmd.status().unwrap();
    assert!(status.success(), "curl failed for {method} {path}");
    let text = std::fs::read_to_string(&head).unwrap();
    // curl writes every head it received, interim ones first, each
    // ended by an empty line.
    let mut heads: Vec<(u16, Vec<(String, String)>)> = text
        .split("\r\n\r\n")
        .filter(|h| !h.trim().is_empty())
        .map(|h| {
            let mut lines = h.lines();
            let code = common::status_code(lines.next().unwrap());
            let fields = lines
                .filter_map(|l| l.split_once(": "))
                .filter(|(n, _)| *n != "date")
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect();
            (code, fields)
        })
        .collect();
    let (code, headers) = heads.pop().unwrap();
    Answer {
        interim: heads,
        status: code,
        headers,
        // curl -I writes the head where the body would go.
        body: match method {
            "HEAD" => Vec::new(),
            _ => std::fs::read(&out).unwrap_or_default(),
        },
    }
}

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

type Requests = h3::client::SendRequest<h3_quinn::OpenStreams, Bytes>;

struct H3Client {
    endpoint: quinn::Endpoint,
    send: Requests,
    /// The connection's end, as the client saw it.
    closed: tokio::task::JoinHandle<h3::error::ConnectionError>,
    port: u16,
}

async fn h3_connect(port: u16) -> H3Client {
    h3_connect_to(port, "localhost").await.unwrap()
}

async fn h3_connect_to(port: u16, name: &str) -> Result<H3Client, quinn::ConnectionError> {
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
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let conn = endpoint.connect(addr, name).unwrap().await?;
    let (mut driver, send) = h3::client::new(h3_quinn::Connection::new(conn))
        .await
        .unwrap();
    let closed = tokio::spawn(async move { driver.wait_idle().await });
    Ok(H3Client {
        endpoint,
        send,
        closed,
        port,
    })
}

fn request(
    port: u16,
    method: &str,
    path: &str,
    declared: Option<usize>,
    fields: Fields,
) -> http::Request<()> {
    let mut b = http::Request::builder()
        .method(method)
        .uri(format!("https://localhost:{port}{path}"));
    for (name, value) in fields {
        b = b.header(*name, *value);
    }
    if let Some(n) = declared {
        b = b
            .header("content-length", n)
            .header("content-type", "application/octet-stream");
    } else if method == "POST" {
        b = b.header("content-type", "application/octet-stream");
    }
    b.body(()).unwrap()
}

async fn h3_answer(
    c: &mut H3Client,
    method: &str,
    path: &str,
    body: Option<Upload<'_>>,
    fields: Fields<'_>,
) -> Answer {
    let declared = body.and_then(|(b, d)| d.then_some(b.len()));
    let mut stream = c
        .send
        .send_request(request(c.port, method, path, declared, fields))
        .await
        .unwrap();
    if let Some((data, _)) = body {
        // In pieces, as a client streaming an upload sends it.
        for piece in data.chunks(10_000) {
            stream
                .send_data(Bytes::copy_from_slice(piece))
                .await
                .unwrap();
        }
    }
    stream.finish().await.unwrap();
    let fields = |resp: &http::Response<()>| -> Vec<(String, String)> {
        resp.headers()
            .iter()
            .filter(|(n, _)| n.as_str() != "date")
            .map(|(n, v)| (n.to_string(), v.to_str().unwrap().to_string()))
            .collect()
    };
    let mut interim = Vec::new();
    let mut resp = stream.recv_response().await.unwrap();
    while resp.status().is_informational() {
        interim.push((resp.status().as_u16(), fields(&resp)));
        resp = stream.recv_response().await.unwrap();
    }
    let mut out = Vec::new();
    while let Some(mut d) = stream.recv_data().await.unwrap() {
        out.extend_from_slice(&d.copy_to_bytes(d.remaining()));
    }
    Answer {
        interim,
        status: resp.status().as_u16(),
        headers: fields(&resp),
        body: out,
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// The server a test started, stopped when the test ends (or fails).
struct Running(Option<std::process::Child>);

impl Running {
    fn start(conf: &Path, port: u16) -> Running {
        Running(Some(common::start_program(
            env!("CARGO_BIN_EXE_htaccel"),
            conf,
            &[],
            port,
        )))
    }

    fn pid(&self) -> u32 {
        self.0.as_ref().unwrap().id()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(child) = self.0.take() {
            common::stop_program(child);
        }
    }
}

#[test]
fn http3_answers_equal_http2_answers() {
    let dir = TempDir::new("http3");
    make_cert(dir.path());
    let port = common::free_port();
    let conf = site(&dir, port, echo_backend(), H3_ON);
    let child = Running::start(&conf, port);
    assert!(
        has_udp(child.pid(), port),
        "no UDP socket for HTTP/3 on {port}"
    );
    let upload: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let cases: Vec<(&str, &str, Option<Upload>, Fields)> = vec![
        ("GET", "/index.html", None, &[]),
        ("HEAD", "/index.html", None, &[]),
        ("GET", "/hinted.html", None, &[]),
        ("HEAD", "/hinted.html", None, &[]),
        ("GET", "/missing", None, &[]),
        ("GET", "/big.bin", None, &[]),
        ("GET", "/big.bin", None, &[("range", "bytes=10-19")]),
        // A 416 after the headers were made: its `Header always` results
        // twice over HTTP/2 (as Apache's mod_http2 answers it), and the
        // same over HTTP/3.
        ("GET", "/index.html", None, &[("range", "bytes=500-")]),
        ("POST", "/echo", Some((&upload, true)), &[]),
        ("POST", "/echo", Some((&upload, false)), &[]),
        ("POST", "/echo", Some((b"", true)), &[]),
    ];
    let rt = runtime();
    rt.block_on(async {
        let mut c = h3_connect(port).await;
        for (method, path, body, fields) in &cases {
            let h3 = h3_answer(&mut c, method, path, *body, fields).await;
            let h2 = h2_answer(&dir, port, method, path, *body, fields);
            assert_eq!(h3, h2, "{method} {path}: HTTP/3 and HTTP/2 answers differ");
            // The advertisement both carry.
            assert!(
                h3.headers
                    .contains(&("alt-svc".into(), format!("h3=\":{port}\"; ma=86400"))),
                "{method} {path}: no Alt-Svc in {:?}",
                h3.headers
            );
        }
        // `H2EarlyHint`'s 103 comes before the page on both (HTTP/3
        // follows mod_http2, whose answer difftest compares with Apache's).
        let hinted = h3_answer(&mut c, "GET", "/hinted.html", None, &[]).await;
        assert_eq!(
            hinted.interim,
            [(
                103,
                vec![("link".to_string(), "</style.css>; rel=preload".to_string())]
            )]
        );
        // An answer with its own Alt-Svc keeps it, alone, on both.
        let own = h3_answer(&mut c, "GET", "/own.html", None, &[]).await;
        assert_eq!(own, h2_answer(&dir, port, "GET", "/own.html", None, &[]));
        let alt: Vec<_> = own.headers.iter().filter(|(n, _)| n == "alt-svc").collect();
        assert_eq!(alt, [&("alt-svc".to_string(), "clear".to_string())]);
        // SNI naming the address's other server, which has no HTTP/3:
        // the handshake fails.
        assert!(h3_connect_to(port, "other.test").await.is_err());
        let big = h3_answer(&mut c, "GET", "/big.bin", None, &[]).await;
        assert_eq!(big.body.len(), 3_000_000);
        let echo = h3_answer(&mut c, "POST", "/echo", Some((&upload, false)), &[]).await;
        assert!(
            String::from_utf8_lossy(&echo.body).starts_with("POST 200000 bytes"),
            "{:?}",
            String::from_utf8_lossy(&echo.body)
        );
    });
    // HTTP/1.1 answers advertise HTTP/3 too.
    let h1 = Command::new("curl")
        .args(["-sk", "--http1.1", "-o", "/dev/null", "-D", "-"])
        .arg(format!("https://127.0.0.1:{port}/index.html"))
        .output()
        .unwrap();
    let head = String::from_utf8_lossy(&h1.stdout).into_owned();
    assert!(
        head.contains(&format!("Alt-Svc: h3=\":{port}\"; ma=86400\r\n")),
        "{head}"
    );
    drop(child);
}

#[test]
fn streams_beyond_the_limit_wait_migration_keeps_the_connection_reload_and_stop_close_it() {
    let dir = TempDir::new("http3-streams");
    make_cert(dir.path());
    let port = common::free_port();
    let conf = site(&dir, port, echo_backend(), H3_ON);
    let mut child = Running::start(&conf, port);
    let rt = runtime();
    rt.block_on(async {
        let c = h3_connect(port).await;
        // Many concurrent streams on one connection, more than
        // `H3MaxStreams 20`: all answered.
        let mut tasks = Vec::new();
        for i in 0..60 {
            let mut send = c.send.clone();
            let path = if i % 10 == 0 {
                "/big.bin"
            } else {
                "/index.html"
            };
            let req = request(port, "GET", path, None, &[]);
            tasks.push(tokio::spawn(async move {
                let mut s = send.send_request(req).await.unwrap();
                s.finish().await.unwrap();
                let status = s.recv_response().await.unwrap().status().as_u16();
                let mut n = 0;
                while let Some(d) = s.recv_data().await.unwrap() {
                    n += d.remaining();
                }
                (status, n)
            }));
        }
        for (i, t) in tasks.into_iter().enumerate() {
            let (status, n) = t.await.unwrap();
            assert_eq!(status, 200);
            assert_eq!(n, if i % 10 == 0 { 3_000_000 } else { 25 });
        }
        // On a new connection (whose stream credit is the whole limit),
        // 20 answers the client does not read (each larger than the
        // stream window it grants) hold the 20 streams the server allows:
        // a 21st request cannot start until one of them ends.
        let mut c = h3_connect(port).await;
        let mut open = Vec::new();
        for _ in 0..20 {
            let mut s = c
                .send
                .send_request(request(port, "GET", "/big.bin", None, &[]))
                .await
                .unwrap();
            s.finish().await.unwrap();
            open.push(s);
        }
        let mut send = c.send.clone();
        let extra = tokio::spawn(async move {
            let mut s = send
                .send_request(request(port, "GET", "/index.html", None, &[]))
                .await
                .unwrap();
            s.finish().await.unwrap();
            s.recv_response().await.unwrap().status().as_u16()
        });
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(
            !extra.is_finished(),
            "a 21st stream was answered beyond H3MaxStreams 20"
        );
        // Three of them read to their end: quinn announces new stream
        // credit once more than an eighth of the limit is free again.
        for _ in 0..3 {
            let mut done = open.remove(0);
            assert_eq!(done.recv_response().await.unwrap().status(), 200);
            let mut n = 0;
            while let Some(d) = done.recv_data().await.unwrap() {
                n += d.remaining();
            }
            assert_eq!(n, 3_000_000);
        }
        let status = tokio::time::timeout(Duration::from_secs(20), extra)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(status, 200);
        for mut s in open {
            s.stop_sending(h3::error::Code::H3_REQUEST_CANCELLED);
        }
        // Migration: the client moves to another UDP port; the server
        // (quinn's default) validates the new path and answers there.
        let before = c.endpoint.local_addr().unwrap();
        c.endpoint
            .rebind(std::net::UdpSocket::bind("127.0.0.1:0").unwrap())
            .unwrap();
        assert_ne!(c.endpoint.local_addr().unwrap(), before);
        let after = h3_answer(&mut c, "GET", "/index.html", None, &[]).await;
        assert_eq!(after.status, 200);
        assert_eq!(after.body, b"<h1>hello over QUIC</h1>\n");
        // A graceful reload (SIGUSR1): a new connection is served by the
        // new configuration; the old one answers its next request whole,
        // then sends GOAWAY and is closed without error.
        let pid = child.pid();
        // SAFETY: signalling the server this test started.
        unsafe { libc::kill(pid as i32, libc::SIGUSR1) };
        tokio::time::sleep(Duration::from_secs(2)).await;
        let mut c = {
            let mut fresh = h3_connect(port).await;
            assert_eq!(
                h3_answer(&mut fresh, "GET", "/index.html", None, &[])
                    .await
                    .status,
                200
            );
            let old = h3_answer(&mut c, "GET", "/big.bin", None, &[]).await;
            assert_eq!((old.status, old.body.len()), (200, 3_000_000));
            let end = tokio::time::timeout(Duration::from_secs(10), &mut c.closed)
                .await
                .expect("the old connection was not closed after the reload")
                .unwrap();
            assert!(end.is_h3_no_error(), "closed with an error: {end:?}");
            fresh
        };
        // A stop: GOAWAY, then the connection closed without error.
        // SAFETY: signalling the server this test started.
        unsafe { libc::kill(pid as i32, libc::SIGTERM) };
        let end = tokio::time::timeout(Duration::from_secs(10), &mut c.closed)
            .await
            .expect("the connection was not closed on stop")
            .unwrap();
        assert!(end.is_h3_no_error(), "closed with an error: {end:?}");
    });
    if let Some(mut child) = child.0.take() {
        let _ = child.wait();
    }
}

#[test]
fn a_tls_server_without_http3_opens_no_udp_socket() {
    let dir = TempDir::new("http3-off");
    make_cert(dir.path());
    let port = common::free_port();
    let conf = site(&dir, port, echo_backend(), "");
    let child = Running::start(&conf, port);
    assert!(
        !has_udp(child.pid(), port),
        "a UDP socket without H3Engine on"
    );
    let udp = std::fs::read_to_string(format!("/proc/{}/net/udp", child.pid())).unwrap();
    let fds: Vec<_> = std::fs::read_dir(format!("/proc/{}/fd", child.pid()))
        .unwrap()
        .flatten()
        .filter_map(|f| std::fs::read_link(f.path()).ok())
        .collect();
    let inodes: Vec<&str> = udp
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(9))
        .collect();
    assert!(
        !fds.iter().any(|l| inodes
            .iter()
            .any(|i| l.to_string_lossy() == format!("socket:[{i}]"))),
        "htaccel holds a UDP socket"
    );
    drop(child);
}

#[test]
fn the_configuration_stays_apaches_and_h3_without_tls_is_refused() {
    let dir = TempDir::new("http3-conf");
    make_cert(dir.path());
    let port = common::free_port();
    let conf = site(&dir, port, 9, H3_ON);
    // Apache loads it: the module is unknown there, the section skipped.
    if Path::new("/usr/sbin/apache2").exists() {
        let out = Command::new("/usr/sbin/apache2")
            .arg("-t")
            .arg("-f")
            .arg(&conf)
            .output()
            .unwrap();
        assert!(out.status.success(), "Apache refused: {out:?}");
    }
    // H3Engine on where there is no TLS: refused, saying why.
    let text = std::fs::read_to_string(&conf).unwrap();
    let plain = text.replace(
        "</VirtualHost>\n",
        "</VirtualHost>\nListen 127.0.0.1:1\n<VirtualHost 127.0.0.1:1>\n    ServerName plain\n    H3Engine on\n</VirtualHost>\n",
    );
    dir.write("plain.conf", &plain);
    let out = Command::new(env!("CARGO_BIN_EXE_htaccel"))
        .arg("-t")
        .arg("-f")
        .arg(dir.path().join("plain.conf"))
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "accepted: {said}");
    assert!(
        said.contains("H3Engine on in virtual host plain: HTTP/3 needs TLS"),
        "{said}"
    );
}

#[test]
fn h3port_moves_the_udp_socket_and_the_advertisement() {
    let dir = TempDir::new("http3-port");
    make_cert(dir.path());
    let port = common::free_port();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let h3 = format!("<IfModule htaccel_http3_module>\n        H3Engine on\n        H3Port {udp}\n    </IfModule>");
    let conf = site(&dir, port, echo_backend(), &h3);
    let child = Running::start(&conf, port);
    assert!(has_udp(child.pid(), udp), "no UDP socket on H3Port {udp}");
    assert!(!has_udp(child.pid(), port), "a UDP socket on the TLS port");
    runtime().block_on(async {
        let mut c = h3_connect(udp).await;
        // The origin is the TLS address; QUIC runs on H3Port.
        c.port = port;
        let answer = h3_answer(&mut c, "GET", "/index.html", None, &[]).await;
        assert_eq!(answer.status, 200);
        assert!(
            answer
                .headers
                .contains(&("alt-svc".into(), format!("h3=\":{udp}\"; ma=86400"))),
            "{:?}",
            answer.headers
        );
    });
    drop(child);
}
