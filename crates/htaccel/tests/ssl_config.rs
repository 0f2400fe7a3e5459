//! mod_ssl's configuration at start-up (`htaccel -t -f`): what htaccel
//! refuses or warns about that Apache (OpenSSL) would accept, and the
//! certificate errors that name their file. Apache's own answers differ by
//! design here (it speaks TLSv1/1.1, asks for pass phrases, lets
//! SSLEngine optional upgrade), so these are checked on htaccel alone; the
//! https/ differential cases compare what both serve.

mod common;

use common::TempDir;
use std::process::Command;

fn configtest(dir: &TempDir, body: &str) -> (bool, String) {
    let conf = format!(
        "ServerRoot /usr/lib/apache2\nLoadModule mime_module modules/mod_mime.so\nTypesConfig /etc/mime.types\nLoadModule ssl_module modules/mod_ssl.so\nListen 127.0.0.1:0\nServerName localhost\nDocumentRoot {d}\n{body}\n",
        d = dir.path().display()
    );
    dir.write("httpd.conf", &conf);
    let out = Command::new(env!("CARGO_BIN_EXE_htaccel"))
        .arg("-t")
        .arg("-f")
        .arg(dir.path().join("httpd.conf"))
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

fn make_cert(dir: &TempDir, name: &str, encrypted: bool) {
    let key = dir.path().join(format!("{name}.key"));
    let cert = dir.path().join(format!("{name}.crt"));
    let mut cmd = Command::new("openssl");
    cmd.args([
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-days",
        "30",
        "-subj",
        "/CN=localhost",
    ])
    .arg("-keyout")
    .arg(&key)
    .arg("-out")
    .arg(&cert);
    if encrypted {
        cmd.args(["-passout", "pass:secret"]);
    } else {
        cmd.arg("-nodes");
    }
    assert!(cmd.output().unwrap().status.success());
}

#[test]
fn certificate_problems_name_the_file() {
    let dir = TempDir::new("ssl-certs");
    make_cert(&dir, "a", false);
    make_cert(&dir, "b", false);
    make_cert(&dir, "locked", true);
    let d = dir.path().display().to_string();
    let (ok, out) = configtest(
        &dir,
        &format!("SSLEngine on\nSSLCertificateFile {d}/a.crt\nSSLCertificateKeyFile {d}/a.key"),
    );
    assert!(ok, "{out}");
    let (ok, out) = configtest(
        &dir,
        &format!("SSLEngine on\nSSLCertificateFile {d}/a.crt\nSSLCertificateKeyFile {d}/b.key"),
    );
    assert!(
        !ok && out.contains(&format!("{d}/b.key does not match")),
        "{out}"
    );
    let (ok, out) = configtest(
        &dir,
        &format!("SSLEngine on\nSSLCertificateFile {d}/none.crt"),
    );
    assert!(
        !ok && out.contains(&format!(
            "SSLCertificateFile: file '{d}/none.crt' does not exist or is empty"
        )),
        "{out}"
    );
    let (ok, out) = configtest(
        &dir,
        &format!("SSLEngine on\nSSLPassPhraseDialog builtin\nSSLCertificateFile {d}/locked.crt\nSSLCertificateKeyFile {d}/locked.key"),
    );
    assert!(
        !ok && out.contains("locked.key: the key is encrypted"),
        "{out}"
    );
    let (ok, out) = configtest(&dir, "SSLEngine on");
    assert!(!ok && out.contains("no SSLCertificateFile"), "{out}");
}

#[test]
fn what_rustls_cannot_speak_is_said() {
    let dir = TempDir::new("ssl-protocols");
    make_cert(&dir, "a", false);
    let d = dir.path().display().to_string();
    let certs =
        format!("SSLEngine on\nSSLCertificateFile {d}/a.crt\nSSLCertificateKeyFile {d}/a.key\n");
    let (ok, out) = configtest(&dir, &format!("{certs}SSLProtocol TLSv1 +TLSv1.2"));
    assert!(ok && out.contains("TLSv1 not offered"), "{out}");
    let (ok, out) = configtest(&dir, &format!("{certs}SSLProtocol all -SSLv3"));
    assert!(ok && !out.contains("not offered"), "{out}");
    let (ok, out) = configtest(&dir, &format!("{certs}SSLProtocol -all +TLSv1.1"));
    assert!(!ok && out.contains("enables neither"), "{out}");
    let (ok, out) = configtest(&dir, &format!("{certs}SSLCipherSuite RC4:3DES"));
    assert!(
        !ok && out.contains("selects none of the TLSv1.2 suites"),
        "{out}"
    );
    let (ok, out) = configtest(&dir, &format!("{certs}SSLEngine optional"));
    assert!(!ok && out.contains("SSLEngine optional"), "{out}");
    let (ok, out) = configtest(&dir, &format!("{certs}SSLCompression on"));
    assert!(!ok && out.contains("Compression"), "{out}");
    let (ok, out) = configtest(&dir, &format!("{certs}SSLVerifyClient require"));
    assert!(
        !ok && out.contains("SSLVerifyClient needs SSLCACertificateFile"),
        "{out}"
    );
    let (ok, out) = configtest(
        &dir,
        &format!("{certs}<Directory /srv>\nSSLVerifyClient require\n</Directory>"),
    );
    assert!(!ok && out.contains("needs a renegotiation"), "{out}");
    let (ok, out) = configtest(&dir, &format!("{certs}SSLVerifyClient optional_no_ca"));
    assert!(!ok && out.contains("optional_no_ca"), "{out}");
    let (ok, out) = configtest(&dir, &format!("{certs}SSLOptions +FakeBasicAuth"));
    assert!(
        !ok && out.contains("FakeBasicAuth is not supported"),
        "{out}"
    );
    // mod_ssl checks the stapling cache only at start; `htaccel -t`
    // reads the certificates, and says it then.
    let (ok, out) = configtest(&dir, &format!("{certs}SSLUseStapling on"));
    assert!(!ok && out.contains("AH01958"), "{out}");
    let (ok, out) = configtest(
        &dir,
        &format!("{certs}SSLOpenSSLConfCmd Curves X25519:prime256v1:secp384r1"),
    );
    assert!(ok, "{out}");
    let (ok, out) = configtest(
        &dir,
        &format!("{certs}SSLOpenSSLConfCmd Groups X25519:x448"),
    );
    assert!(
        !ok && out.contains("x448 is not one htaccel offers"),
        "{out}"
    );
    let (ok, out) = configtest(
        &dir,
        &format!("{certs}SSLOpenSSLConfCmd MinProtocol TLSv1.2"),
    );
    assert!(!ok && out.contains("use SSLProtocol"), "{out}");
}

/// A session cache's provider is looked up among every module the file
/// loads, wherever its `LoadModule` stands (Apache loads modules as it
/// reads, before it runs `SSLSessionCache`); without the module, Apache's
/// message.
#[test]
fn session_cache_provider_loaded_later_in_the_file() {
    let dir = TempDir::new("ssl-socache-order");
    let d = dir.path().display().to_string();
    let cache = format!("SSLSessionCache shmcb:{d}/scache(512000)\n");
    let load = "LoadModule socache_shmcb_module modules/mod_socache_shmcb.so\n";
    let (ok, out) = configtest(&dir, &format!("{cache}{load}"));
    assert!(ok, "{out}");
    let (ok, out) = configtest(&dir, &cache);
    assert!(
        !ok && out.contains("'shmcb' session cache not supported"),
        "{out}"
    );
}

/// `Listen [::]:PORT` with TLS: IPv6 and (dual-stack) IPv4 clients both get
/// HTTPS. The differential harness listens on 127.0.0.1 only, hence here.
#[test]
fn listen_on_ipv6_with_tls() {
    let dir = TempDir::new("ssl-ipv6");
    make_cert(&dir, "a", false);
    dir.write("site/index.html", "over tls\n");
    let d = dir.path().display().to_string();
    let conf = format!(
        "ServerRoot /usr/lib/apache2\nLoadModule mime_module modules/mod_mime.so\nLoadModule dir_module modules/mod_dir.so\nTypesConfig /etc/mime.types\nLoadModule ssl_module modules/mod_ssl.so\nListen [::]:@PORT@\nServerName localhost\nDocumentRoot {d}/site\nSSLEngine on\nSSLCertificateFile {d}/a.crt\nSSLCertificateKeyFile {d}/a.key\n"
    );
    let server = common::Server::with_config(&conf, dir.path());
    for host in ["[::1]", "127.0.0.1"] {
        let out = Command::new("curl")
            .args(["-sk", "--max-time", "10"])
            .arg(format!("https://{host}:{}/", server.port))
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "over tls\n",
            "{host}: {}",
            server.error_log()
        );
    }
}

/// The certificate a server presents on 127.0.0.1:`port` (its SHA-256
/// fingerprint line).
fn served_fingerprint(port: u16) -> String {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "openssl s_client -connect 127.0.0.1:{port} -servername localhost </dev/null 2>/dev/null | openssl x509 -noout -fingerprint -sha256"
        ))
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn fingerprint(cert: &std::path::Path) -> String {
    let out = Command::new("openssl")
        .args(["x509", "-noout", "-fingerprint", "-sha256", "-in"])
        .arg(cert)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A graceful reload (SIGUSR1, what certbot's deploy hook and logrotate
/// send) serves renewed certificate files, as Apache's graceful restart
/// does; Apache cannot be asked through the harness, which sends no
/// signals.
#[test]
fn graceful_reload_serves_renewed_certificates() {
    let dir = TempDir::new("ssl-renew");
    make_cert(&dir, "old", false);
    make_cert(&dir, "new", false);
    let d = dir.path().display().to_string();
    std::fs::copy(dir.path().join("old.crt"), dir.path().join("cur.crt")).unwrap();
    std::fs::copy(dir.path().join("old.key"), dir.path().join("cur.key")).unwrap();
    dir.write("site/index.html", "over tls\n");
    let conf = format!(
        "ServerRoot /usr/lib/apache2\nLoadModule mime_module modules/mod_mime.so\nTypesConfig /etc/mime.types\nLoadModule ssl_module modules/mod_ssl.so\nListen 127.0.0.1:@PORT@\nServerName localhost\nDocumentRoot {d}/site\nErrorLog {d}/error.log\nSSLEngine on\nSSLCertificateFile {d}/cur.crt\nSSLCertificateKeyFile {d}/cur.key\n"
    );
    let server = common::Server::with_config(&conf, dir.path());
    let (old, new) = (
        fingerprint(&dir.path().join("old.crt")),
        fingerprint(&dir.path().join("new.crt")),
    );
    assert_ne!(old, new);
    assert_eq!(served_fingerprint(server.port), old);
    std::fs::copy(dir.path().join("new.crt"), dir.path().join("cur.crt")).unwrap();
    std::fs::copy(dir.path().join("new.key"), dir.path().join("cur.key")).unwrap();
    // SAFETY: signalling the server this test started.
    unsafe { libc::kill(server.pid() as i32, libc::SIGUSR1) };
    let start = std::time::Instant::now();
    while served_fingerprint(server.port) != new {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(10),
            "still the old certificate: {}",
            std::fs::read_to_string(dir.path().join("error.log")).unwrap_or_default()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
