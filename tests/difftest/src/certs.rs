//! Certificates for the cases that need `https`, made with `openssl` in
//! the sandbox (`@CERTS@` in `server.conf`), the same files for both
//! servers: `localhost` (RSA), `one.test` (RSA), `two.test` (ECDSA P-256,
//! also `*.two.test`), each with its key beside it (`NAME.crt`,
//! `NAME.key`), `localhost-ec` (ECDSA) for a server with both kinds, and
//! as a certificate authority issues them, `example.com` (ECDSA, also
//! `www.example.com`) signed by `ca.crt`, with `example.com-fullchain.pem`
//! holding the leaf and the CA as certbot's `fullchain.pem` does; client
//! certificates `alice` (issued by the CA) and `mallory` (self-signed).
//!
//! For the verification depth, an intermediate CA `int.crt` issued by the
//! CA, and `carol`, a client certificate the intermediate issued:
//! `carol.crt` holds the leaf alone, `carol-chain.crt` the leaf and the
//! intermediate (the client then sends both; same key); `ca-int.crt`
//! holds the CA and the intermediate, for an `SSLCACertificateFile` that
//! knows both, and `int-only.crt` the intermediate alone. `dave` is a
//! self-signed client certificate that is no CA, for a CA file naming the
//! client certificate itself.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where a sandbox keeps its certificates.
pub fn dir(sandbox: &Path) -> PathBuf {
    sandbox.join("stage").join("certs")
}

/// Make the certificates (once per sandbox).
pub fn make(sandbox: &Path) -> Result<(), String> {
    let d = dir(sandbox);
    std::fs::create_dir_all(&d).map_err(|e| e.to_string())?;
    for (name, cn, ec, san) in [
        ("localhost", "localhost", false, "DNS:localhost"),
        ("localhost-ec", "localhost", true, "DNS:localhost"),
        ("one.test", "one.test", false, "DNS:one.test"),
        ("two.test", "two.test", true, "DNS:two.test,DNS:*.two.test"),
    ] {
        let algo: &[&str] = if ec {
            &["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
        } else {
            &["-newkey", "rsa:2048"]
        };
        let out = Command::new("openssl")
            .args(["req", "-x509", "-nodes", "-days", "365"])
            .args(algo)
            .arg("-keyout")
            .arg(d.join(format!("{name}.key")))
            .arg("-out")
            .arg(d.join(format!("{name}.crt")))
            .args(["-subj", &format!("/C=DE/O=htaccel tests/CN={cn}")])
            .args(["-addext", &format!("subjectAltName={san}")])
            .output()
            .map_err(|e| format!("openssl: {e}"))?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
    }
    issued(&d)
}

fn openssl(d: &Path, args: &[&str]) -> Result<(), String> {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(d)
        .output()
        .map_err(|e| format!("openssl: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// A CA and `example.com` signed by it, with certbot's `fullchain.pem` shape.
fn issued(d: &Path) -> Result<(), String> {
    openssl(
        d,
        &[
            "req",
            "-x509",
            "-nodes",
            "-days",
            "365",
            "-newkey",
            "rsa:2048",
            "-keyout",
            "ca.key",
            "-out",
            "ca.crt",
            "-subj",
            "/O=htaccel tests/CN=htaccel test CA",
        ],
    )?;
    let ca = ("ca.crt", "ca.key");
    issue(
        d,
        "example.com",
        "/CN=example.com",
        "subjectAltName=DNS:example.com,DNS:www.example.com\n",
        ca,
    )?;
    // `localhost` issued by the CA: the HTTPS upstream's
    // (`crate::upstream::start_tls`), which SSLProxyVerify require accepts
    // with ca.crt.
    issue(
        d,
        "localhost-ca",
        "/CN=localhost",
        "subjectAltName=DNS:localhost\n",
        ca,
    )?;
    // Client certificates: alice issued by the CA, mallory self-signed.
    issue(
        d,
        "alice",
        "/C=DE/O=htaccel tests/CN=alice",
        CLIENT_AUTH,
        ca,
    )?;
    openssl(
        d,
        &[
            "req",
            "-x509",
            "-nodes",
            "-days",
            "90",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-keyout",
            "mallory.key",
            "-out",
            "mallory.crt",
            "-subj",
            "/CN=mallory",
            "-addext",
            "extendedKeyUsage=clientAuth",
        ],
    )?;
    // dave: self-signed but no CA (mallory, as `req -x509` makes it, is
    // marked a CA), for a CA file listing the client certificate itself.
    openssl(
        d,
        &[
            "req",
            "-x509",
            "-nodes",
            "-days",
            "90",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-keyout",
            "dave.key",
            "-out",
            "dave.crt",
            "-subj",
            "/CN=dave",
            "-addext",
            "basicConstraints=critical,CA:FALSE",
            "-addext",
            "extendedKeyUsage=clientAuth",
        ],
    )?;
    concat(
        d,
        &["example.com.crt", "ca.crt"],
        "example.com-fullchain.pem",
    )?;
    intermediate(d)
}

/// The extensions of a client certificate.
const CLIENT_AUTH: &str = "extendedKeyUsage=clientAuth\n";

/// `NAME.key` (EC P-256) and `NAME.crt` with `subject` and the extensions
/// `ext`, issued by the CA `(certificate, key)`.
fn issue(d: &Path, name: &str, subject: &str, ext: &str, ca: (&str, &str)) -> Result<(), String> {
    let (key, csr, crt, ext_file) = (
        format!("{name}.key"),
        format!("{name}.csr"),
        format!("{name}.crt"),
        format!("{name}.ext"),
    );
    openssl(
        d,
        &[
            "req",
            "-new",
            "-nodes",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-keyout",
            &key,
            "-out",
            &csr,
            "-subj",
            subject,
        ],
    )?;
    std::fs::write(d.join(&ext_file), ext).map_err(|e| e.to_string())?;
    openssl(
        d,
        &[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            ca.0,
            "-CAkey",
            ca.1,
            "-CAcreateserial",
            "-days",
            "90",
            "-extfile",
            &ext_file,
            "-out",
            &crt,
        ],
    )
}

/// The files `names` one after the other, as `out`.
fn concat(d: &Path, names: &[&str], out: &str) -> Result<(), String> {
    let mut all = Vec::new();
    for name in names {
        all.extend(std::fs::read(d.join(name)).map_err(|e| e.to_string())?);
    }
    std::fs::write(d.join(out), all).map_err(|e| e.to_string())
}

/// The intermediate CA and `carol`, the client certificate it issued.
fn intermediate(d: &Path) -> Result<(), String> {
    issue(
        d,
        "int",
        "/O=htaccel tests/CN=htaccel intermediate CA",
        "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n",
        ("ca.crt", "ca.key"),
    )?;
    issue(
        d,
        "carol",
        "/C=DE/O=htaccel tests/CN=carol",
        CLIENT_AUTH,
        ("int.crt", "int.key"),
    )?;
    concat(d, &["carol.crt", "int.crt"], "carol-chain.crt")?;
    concat(d, &["carol.key"], "carol-chain.key")?;
    concat(d, &["ca.crt", "int.crt"], "ca-int.crt")?;
    concat(d, &["int.crt"], "int-only.crt")
}
