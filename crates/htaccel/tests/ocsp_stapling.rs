//! mod_ssl's OCSP stapling (`SSLUseStapling`, `SSLStaplingCache` and the
//! other `SSLStapling*` settings), compared with Debian's apache2 on the
//! same configuration. The differential harness cannot run these cases:
//! they need a certificate authority whose certificates name an OCSP
//! responder on a port known only when the test runs, the responder
//! itself (`openssl ocsp`), and a client that shows the stapled response
//! (`openssl s_client -status`). So this test runs both servers itself
//! and compares what the client sees of the stapled response (its status
//! lines, never its bytes: the responder signs a new `producedAt` on each
//! fetch) and the error log lines that tell an administrator why nothing
//! or an error was stapled.

mod common;

use common::TempDir;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

const APACHE: &str = "/usr/sbin/apache2";
const HTACCEL: &str = env!("CARGO_BIN_EXE_htaccel");

/// Run `openssl ARGS` in `dir`; a failure shows its error output.
fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run openssl");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A certificate authority with leaf certificates for `localhost`, and the
/// `openssl ca` database its OCSP responder answers from. EC P-256 keys:
/// they are made in milliseconds where RSA keys take a noticeable while.
struct Pki {
    dir: TempDir,
}

impl Pki {
    fn new() -> Pki {
        let dir = TempDir::new("ocsp-pki");
        // The CA signs the OCSP responses itself (no delegated responder
        // certificate), as small CAs do; both servers find it as the
        // issuer in the chain of the certificate file.
        openssl(
            dir.path(),
            &[
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
                "/CN=ocsp-test-ca",
                "-keyout",
                "ca.key",
                "-out",
                "ca.crt",
                "-addext",
                "basicConstraints=critical,CA:true",
                "-addext",
                "keyUsage=critical,keyCertSign,cRLSign",
            ],
        );
        // Every leaf has the subject CN=localhost: the database must not
        // insist on unique subjects (`openssl ocsp` refuses to load it
        // otherwise).
        dir.write("index.txt.attr", "unique_subject = no\n");
        dir.write("index.txt", "");
        Pki { dir }
    }

    fn path(&self, file: &str) -> PathBuf {
        self.dir.path().join(file)
    }

    /// Issue `NAME.crt` (the leaf followed by the CA certificate: Apache
    /// finds the issuer it asks the responder about in the chain of the
    /// certificate file) and `NAME.key`, with serial number `serial`,
    /// naming the responder `ocsp_url` in its Authority Information Access
    /// extension (none when `None`), and record it in the responder's
    /// database, revoked when `revoked`.
    fn issue(&self, name: &str, serial: u32, ocsp_url: Option<&str>, revoked: bool) {
        let mut ext = String::from(
            "basicConstraints = CA:false\n\
             keyUsage = critical, digitalSignature\n\
             extendedKeyUsage = serverAuth\n\
             subjectAltName = DNS:localhost\n",
        );
        if let Some(url) = ocsp_url {
            ext.push_str(&format!("authorityInfoAccess = OCSP;URI:{url}\n"));
        }
        self.dir.write(&format!("{name}.ext"), &ext);
        let (csr, leaf) = (format!("{name}.csr"), format!("{name}.leaf"));
        openssl(
            self.dir.path(),
            &[
                "req",
                "-new",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-subj",
                "/CN=localhost",
                "-keyout",
                &format!("{name}.key"),
                "-out",
                &csr,
            ],
        );
        openssl(
            self.dir.path(),
            &[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-set_serial",
                &format!("{serial:#x}"),
                "-days",
                "30",
                "-extfile",
                &format!("{name}.ext"),
                "-out",
                &leaf,
            ],
        );
        let chain = std::fs::read_to_string(self.path(&leaf)).unwrap()
            + &std::fs::read_to_string(self.path("ca.crt")).unwrap();
        self.dir.write(&format!("{name}.crt"), &chain);
        // An `openssl ca` database line: status, expiry, revocation time
        // (and reason), serial in upper-case hex, file name, subject. The
        // responder looks certificates up by serial and reads only the
        // status and revocation fields, so the expiry is a fixed date.
        let (status, revocation) = if revoked {
            ("R", "260101000000Z,keyCompromise")
        } else {
            ("V", "")
        };
        let line =
            format!("{status}\t491231235959Z\t{revocation}\t{serial:X}\tunknown\t/CN=localhost\n");
        let index = self.path("index.txt");
        let mut text = std::fs::read_to_string(&index).unwrap();
        text.push_str(&line);
        std::fs::write(index, text).unwrap();
    }
}

/// `openssl ocsp` answering from the CA's database, killed on drop (also
/// when an assertion fails, so that no responder outlives the test).
struct Responder(Child);

impl Responder {
    /// Start the responder on `port` once every certificate it is to know
    /// is in the database (it reads the database when it starts), and
    /// return once it listens. `-port` takes a number only: it listens on
    /// the wildcard address; the certificates name 127.0.0.1.
    fn start(pki: &Pki, port: u16) -> Responder {
        let child = Command::new("openssl")
            .args(["ocsp", "-index", "index.txt", "-port", &port.to_string()])
            .args(["-rsigner", "ca.crt", "-rkey", "ca.key", "-CA", "ca.crt"])
            // Responses valid for an hour: fresh for the whole test.
            .args(["-nmin", "60"])
            .current_dir(pki.dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start openssl ocsp");
        let mut responder = Responder(child);
        let start = Instant::now();
        while !common::listening(responder.0.id(), port) {
            assert!(
                responder.0.try_wait().unwrap().is_none(),
                "openssl ocsp exited at start"
            );
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "openssl ocsp did not start"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        responder
    }
}

impl Drop for Responder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The configuration both servers are started on: TLS with `cert` (a
/// `Pki` name) and stapling on, followed by `extra` lines. `cache` adds
/// `SSLStaplingCache` (without it Apache refuses to start).
fn conf(root: &Path, port: u16, pki: &Pki, cert: &str, cache: bool, extra: &str) -> String {
    let r = root.display();
    let crt = pki.path(&format!("{cert}.crt"));
    let key = pki.path(&format!("{cert}.key"));
    let cache = if cache {
        format!("SSLStaplingCache \"shmcb:{r}/ocsp(128000)\"\n")
    } else {
        String::new()
    };
    format!(
        "ServerRoot {r}\n\
         LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so\n\
         LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so\n\
         LoadModule mime_module /usr/lib/apache2/modules/mod_mime.so\n\
         LoadModule socache_shmcb_module /usr/lib/apache2/modules/mod_socache_shmcb.so\n\
         LoadModule ssl_module /usr/lib/apache2/modules/mod_ssl.so\n\
         TypesConfig /etc/mime.types\n\
         Listen 127.0.0.1:{port}\n\
         ServerName localhost\n\
         PidFile {r}/server.pid\n\
         ErrorLog {r}/error.log\n\
         LogLevel warn\n\
         DocumentRoot {r}/site\n\
         <Directory {r}/site>\n  Require all granted\n</Directory>\n\
         {cache}\
         SSLEngine on\n\
         SSLCertificateFile {crt}\n\
         SSLCertificateKeyFile {key}\n\
         SSLUseStapling on\n\
         {extra}\n",
        crt = crt.display(),
        key = key.display(),
    )
}

/// A server [`common::start_program`] started, stopped as `apachectl stop`
/// would when dropped (also when an assertion fails: Apache in the
/// foreground would otherwise outlive the test).
struct Running(Option<Child>);

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(child) = self.0.take() {
            common::stop_program(child);
        }
    }
}

/// What one server showed in one scenario: the summary of each handshake
/// (see [`PROBES`]) and its error log, read once it stopped.
#[derive(Debug)]
struct Outcome {
    handshakes: Vec<Vec<String>>,
    error_log: String,
}

impl Outcome {
    /// How many lines of the error log carry `code` (`AH01974`).
    fn count(&self, code: &str) -> usize {
        self.error_log
            .lines()
            .filter(|l| l.contains(&format!("{code}:")))
            .count()
    }

    /// The lines of the error log that carry `code`, each once, without
    /// what differs from run to run: the date, the process and thread ids
    /// and the client's port. (`[ssl:error] (111)Connection refused:
    /// [client 127.0.0.1] AH01974: …`.) Each once: Apache reads its
    /// configuration twice at start, and so says twice what it finds wrong
    /// with a certificate.
    fn said(&self, code: &str) -> Vec<String> {
        let mut said = Vec::new();
        for line in self.error_log.lines() {
            if !line.contains(&format!("{code}:")) {
                continue;
            }
            // "[date] [module:level] [pid P:tid T] message".
            let rest = line.split_once("] ").map_or(line, |(_, r)| r);
            let (level, rest) = rest.split_once(' ').unwrap_or(("", rest));
            let message = rest
                .strip_prefix("[pid ")
                .and_then(|r| r.split_once("] "))
                .map_or(rest, |(_, m)| m);
            let mut line = format!("{level} {message}");
            if let Some(at) = line.find("[client ") {
                let end = at + line[at..].find(']').unwrap_or(0);
                if let Some(colon) = line[at..end].rfind(':') {
                    line.replace_range(at + colon..end, "");
                }
            }
            if !said.contains(&line) {
                said.push(line);
            }
        }
        said
    }
}

/// The handshakes of a scenario, in order, as (the protocol expected,
/// `s_client` arguments): TLS 1.3 first (the response is fetched during
/// that very handshake), TLS 1.2 (where the response travels in its own
/// CertificateStatus message rather than in TLS 1.3's certificate entry),
/// then TLS 1.3 again (what the cache keeps).
const PROBES: [(&str, &[&str]); 3] = [
    ("TLSv1.3", &[]),
    ("TLSv1.2", &["-tls1_2"]),
    ("TLSv1.3", &[]),
];

/// Serve `cert` with `extra` configuration lines by `program` and shake
/// hands with it once per [`PROBES`] entry.
fn stapled(program: &str, pki: &Pki, cert: &str, extra: &str) -> Outcome {
    let root = TempDir::new("ocsp-server");
    root.write("site/index.html", "stapled\n");
    let port = common::free_port();
    let file = root.path().join("server.conf");
    std::fs::write(&file, conf(root.path(), port, pki, cert, true, extra)).unwrap();
    let error_log = || std::fs::read_to_string(root.path().join("error.log")).unwrap_or_default();
    let started =
        std::panic::catch_unwind(|| common::start_program(program, &file, &["-DFOREGROUND"], port));
    let server = Running(Some(started.unwrap_or_else(|_| {
        panic!("{program} did not start; its error log:\n{}", error_log())
    })));
    let handshakes = PROBES
        .iter()
        .map(|(_, args)| handshake(port, args))
        .collect();
    drop(server);
    Outcome {
        handshakes,
        error_log: error_log(),
    }
}

/// `openssl s_client -status` on `port`, summed up: the protocol it
/// negotiated, then `OCSP response: no response sent`, or the status lines
/// of the stapled response (the response status, the certificate's, and
/// when revoked the time and reason). Standard input closed: the client
/// shakes hands and leaves. Under coreutils' `timeout`, so that a server
/// that never finishes the handshake fails the test instead of hanging it.
fn handshake(port: u16, args: &[&str]) -> Vec<String> {
    let out = Command::new("timeout")
        .args(["10", "openssl", "s_client", "-connect"])
        .arg(format!("127.0.0.1:{port}"))
        .args(["-servername", "localhost", "-status"])
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .expect("run openssl s_client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    // "New, TLSv1.3, Cipher is …" ("New, (NONE), …" on a failed
    // handshake); the cipher is left out: which one is chosen is not what
    // this test is about.
    let protocol = stdout
        .lines()
        .find_map(|l| l.strip_prefix("New, "))
        .and_then(|l| l.split(',').next())
        .unwrap_or("no handshake")
        .to_string();
    let mut summary = vec![protocol];
    let lines = stdout.lines().map(str::trim);
    if let Some(none) = lines
        .clone()
        .find(|l| *l == "OCSP response: no response sent")
    {
        summary.push(none.to_string());
    } else {
        summary.extend(
            lines
                .filter(|l| {
                    [
                        "OCSP Response Status:",
                        "Cert Status:",
                        "Revocation Time:",
                        "Revocation Reason:",
                    ]
                    .iter()
                    .any(|p| l.starts_with(p))
                })
                .map(String::from),
        );
    }
    summary
}

/// What a handshake shows of a good certificate's stapled response.
const GOOD: &[&str] = &[
    "OCSP Response Status: successful (0x0)",
    "Cert Status: good",
];

/// What a handshake shows when nothing is stapled.
const NONE: &[&str] = &["OCSP response: no response sent"];

/// The summaries of a scenario whose every handshake shows `status`.
fn each(status: &[&str]) -> Vec<Vec<String>> {
    PROBES
        .iter()
        .map(|(p, _)| {
            std::iter::once(*p)
                .chain(status.iter().copied())
                .map(String::from)
                .collect()
        })
        .collect()
}

/// Apache's outcome, which must show `expected` on every handshake (so
/// that the comparison cannot pass with both servers failing alike), then
/// htaccel's on the same configuration, whose handshakes must be the same.
fn both(pki: &Pki, cert: &str, extra: &str, expected: &[&str]) -> (Outcome, Outcome) {
    let apache = stapled(APACHE, pki, cert, extra);
    assert_eq!(
        apache.handshakes,
        each(expected),
        "Apache's error log:\n{}",
        apache.error_log
    );
    let ours = stapled(HTACCEL, pki, cert, extra);
    assert_eq!(
        ours.handshakes, apache.handshakes,
        "htaccel's error log:\n{}",
        ours.error_log
    );
    (apache, ours)
}

#[test]
fn good_and_revoked_certificates_are_stapled_as_in_apache() {
    let pki = Pki::new();
    let ocsp = common::free_port();
    let url = format!("http://127.0.0.1:{ocsp}/");
    pki.issue("good", 0x1001, Some(&url), false);
    pki.issue("revoked", 0x1002, Some(&url), true);
    let _responder = Responder::start(&pki, ocsp);

    // The response is about the certificate asked for: a response for
    // another `CertID` would be stapled all the same (the client shows its
    // status), but logged (AH01935, AH01943); neither server logs an error.
    let (apache, ours) = both(&pki, "good", "", GOOD);
    for outcome in [&apache, &ours] {
        assert!(
            !outcome.error_log.contains("[ssl:error]"),
            "{}",
            outcome.error_log
        );
    }

    // A revoked status is stapled all the same
    // (SSLStaplingReturnResponderErrors on), and logged once: the response
    // is cached like a good one.
    let (apache, ours) = both(
        &pki,
        "revoked",
        "",
        &[
            "OCSP Response Status: successful (0x0)",
            "Cert Status: revoked",
            "Revocation Time: Jan  1 00:00:00 2026 GMT",
            "Revocation Reason: keyCompromise (0x1)",
        ],
    );
    assert_eq!(
        apache.said("AH02969"),
        ["[ssl:error] AH02969: stapling_check_response: response has certificate status revoked (reason: keyCompromise) for serial number 1002"],
        "{}",
        apache.error_log
    );
    assert_eq!(
        ours.said("AH02969"),
        apache.said("AH02969"),
        "{}",
        ours.error_log
    );
    assert_eq!(apache.count("AH02969"), 1, "{}", apache.error_log);
    assert_eq!(ours.count("AH02969"), 1, "{}", ours.error_log);
}

/// A port on 127.0.0.1 that is bound (for as long as the descriptor is
/// kept) but never listened on: a connection to it is refused at once, well
/// within SSLStaplingResponderTimeout, and no server another test starts
/// meanwhile can take it, as it could a port merely found free.
fn dead_port() -> (OwnedFd, u16) {
    // SAFETY: socket calls on a descriptor this function creates and
    // hands over, with addresses of the size given.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
        let fd = OwnedFd::from_raw_fd(fd);
        let mut addr: libc::sockaddr_in = std::mem::zeroed();
        addr.sin_family = libc::AF_INET as libc::sa_family_t;
        addr.sin_addr.s_addr = u32::from_ne_bytes([127, 0, 0, 1]);
        let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        let at = &mut addr as *mut libc::sockaddr_in as *mut libc::sockaddr;
        assert_eq!(libc::bind(fd.as_raw_fd(), at, len), 0, "bind");
        assert_eq!(libc::getsockname(fd.as_raw_fd(), at, &mut len), 0);
        (fd, u16::from_be(addr.sin_port))
    }
}

#[test]
fn an_unreachable_responder_staples_trylater_or_nothing() {
    let pki = Pki::new();
    let (_reserved, dead) = dead_port();
    pki.issue(
        "down",
        0x2001,
        Some(&format!("http://127.0.0.1:{dead}/")),
        false,
    );
    let quick = "SSLStaplingResponderTimeout 2";

    // SSLStaplingFakeTryLater on (the default): a tryLater response made
    // up by the server is stapled and cached as an error
    // (SSLStaplingErrorCacheTimeout), so the responder is tried once.
    let (apache, ours) = both(
        &pki,
        "down",
        quick,
        &["OCSP Response Status: trylater (0x3)"],
    );
    let refused = [
        format!("[ssl:error] (111)Connection refused: [client 127.0.0.1] AH01974: could not connect to OCSP responder '127.0.0.1:{dead}'"),
        "[ssl:error] AH01941: stapling_renew_response: responder error".to_string(),
    ];
    // Both servers log the failure alike, `times` times in all.
    let logged_alike = |apache: &Outcome, ours: &Outcome, times: usize| {
        for (code, line) in ["AH01974", "AH01941"].iter().zip(&refused) {
            assert_eq!(
                apache.said(code),
                std::slice::from_ref(line),
                "{}",
                apache.error_log
            );
            assert_eq!(ours.said(code), apache.said(code), "{}", ours.error_log);
            assert_eq!(apache.count(code), times, "{}", apache.error_log);
            assert_eq!(ours.count(code), times, "{code}: {}", ours.error_log);
        }
    };
    logged_alike(&apache, &ours, 1);

    // Off: nothing is stapled, and nothing is cached either, so every
    // handshake tries the responder again.
    let off = format!("{quick}\nSSLStaplingFakeTryLater off");
    let (apache, ours) = both(&pki, "down", &off, NONE);
    logged_alike(&apache, &ours, PROBES.len());
}

#[test]
fn a_certificate_naming_no_responder_is_served_without_stapling() {
    let pki = Pki::new();
    let ocsp = common::free_port();
    pki.issue("noaia", 0x3001, None, false);
    let _responder = Responder::start(&pki, ocsp);

    // The server starts and serves, staples nothing, and says why at
    // start (the certificate described as modssl_log_cert_error does),
    // then that the certificate is served without stapling (as
    // SERVER_NAME:PORT:INDEX, the port 443 where none is set).
    let (apache, ours) = both(&pki, "noaia", "", NONE);
    let no_uri = apache.said("AH02218");
    assert!(
        no_uri.len() == 1
            && no_uri[0].starts_with(
                "[ssl:error] AH02218: ssl_stapling_init_cert: no OCSP URI in certificate and no SSLStaplingForceURL set [subject: CN=localhost / issuer: CN=ocsp-test-ca / serial: 3001 / notbefore: "
            ),
        "{}",
        apache.error_log
    );
    assert_eq!(
        apache.said("AH02604"),
        ["[ssl:error] AH02604: Unable to configure certificate localhost:443:0 for stapling"],
        "{}",
        apache.error_log
    );
    for code in ["AH02218", "AH02604"] {
        assert_eq!(ours.said(code), apache.said(code), "{}", ours.error_log);
    }

    // SSLStaplingForceURL names the responder the certificate does not.
    let force = format!("SSLStaplingForceURL http://127.0.0.1:{ocsp}/");
    let (apache, ours) = both(&pki, "noaia", &force, GOOD);
    for outcome in [&apache, &ours] {
        assert_eq!(outcome.count("AH02218"), 0, "{}", outcome.error_log);
    }
}

/// Start `program` on `conf` in the foreground and wait (10 s at most) for
/// it to exit: its exit status and what it wrote to standard error and to
/// its error log.
fn exit_at_start(program: &str, root: &Path, conf: &Path) -> (ExitStatus, String) {
    let stderr = std::fs::File::create(root.join("stderr")).unwrap();
    let child = Command::new(program)
        .arg("-f")
        .arg(conf)
        .arg("-DFOREGROUND")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap_or_else(|e| panic!("start {program}: {e}"));
    // Stopped (with its children) should it serve after all.
    let mut running = Running(Some(child));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = running.0.as_mut().unwrap().try_wait().unwrap() {
            running.0 = None;
            break status;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{program} kept running"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let said = ["stderr", "error.log"]
        .iter()
        .map(|f| std::fs::read_to_string(root.join(f)).unwrap_or_default())
        .collect();
    (status, said)
}

/// `SSLUseStapling on` without `SSLStaplingCache`: Apache's configuration
/// test passes (`apache2 -t`: Syntax OK), but the server refuses to start
/// once mod_ssl initialises: AH01958: SSLStapling: no stapling cache
/// available, then AH02312: Fatal error initialising mod_ssl, exiting.
#[test]
fn stapling_without_a_cache_refuses_to_start() {
    let pki = Pki::new();
    // Never asked: neither server gets as far as serving.
    pki.issue("good", 0x4001, Some("http://127.0.0.1:9/"), false);
    for program in [APACHE, HTACCEL] {
        let root = TempDir::new("ocsp-nocache");
        root.write("site/index.html", "stapled\n");
        let file = root.path().join("server.conf");
        let port = common::free_port();
        std::fs::write(&file, conf(root.path(), port, &pki, "good", false, "")).unwrap();
        let (status, said) = exit_at_start(program, root.path(), &file);
        assert!(!status.success(), "{program}: {status}\n{said}");
        assert!(said.contains("AH01958"), "{program}: {said}");
    }
}
