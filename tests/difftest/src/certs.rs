//! Certificates for the cases that need `https`, made with `openssl` in
//! the sandbox (`@CERTS@` in `server.conf`), the same files for both
//! servers: `localhost` (RSA), `one.test` (RSA), `two.test` (ECDSA P-256,
//! also `*.two.test`), each with its key beside it (`NAME.crt`,
//! `NAME.key`), and `localhost-ec` (ECDSA) for a server with both kinds.

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
    Ok(())
}
