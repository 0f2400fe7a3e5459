//! `SSLOpenSSLConfCmd`: OpenSSL's configuration commands (`SSL_CONF_cmd`,
//! file form, server side), as Mozilla's generated configurations and
//! many guides use them.
//!
//! What can be done on rustls is done: the key exchange groups
//! (`Curves`, `Groups`, `ECDHParameters`). `DHParameters` is accepted
//! with its file checked: it only acts on DHE cipher suites, which htaccel
//! never negotiates (rustls offers ECDHE suites only, see
//! docs/deviations.md). Every other command OpenSSL knows is refused with
//! the directive that does its work in htaccel, or the reason; a name
//! OpenSSL does not know is refused as mod_ssl refuses it.

use super::SslServer;
use crate::http::tls::KxGroup;

/// The commands of OpenSSL 3's `SSL_CONF` table in file form that a
/// server takes, and whether their value is a file (`Some(false)`), a
/// directory (`Some(true)`) or neither.
const COMMANDS: &[(&str, Option<bool>)] = &[
    ("SignatureAlgorithms", None),
    ("ClientSignatureAlgorithms", None),
    ("Curves", None),
    ("Groups", None),
    ("ECDHParameters", None),
    ("CipherString", None),
    ("Ciphersuites", None),
    ("Protocol", None),
    ("MinProtocol", None),
    ("MaxProtocol", None),
    ("Options", None),
    ("VerifyMode", None),
    ("Certificate", Some(false)),
    ("PrivateKey", Some(false)),
    ("ServerInfoFile", Some(false)),
    ("ChainCAPath", Some(true)),
    ("ChainCAFile", Some(false)),
    ("VerifyCAPath", Some(true)),
    ("VerifyCAFile", Some(false)),
    ("RequestCAFile", Some(false)),
    ("ClientCAFile", Some(false)),
    ("RequestCAPath", Some(true)),
    ("ClientCAPath", Some(true)),
    ("DHParameters", Some(false)),
    ("RecordPadding", None),
    ("NumTickets", None),
];

/// What a command's value must be, for the file check `SSLOpenSSLConfCmd`
/// makes when it is read (`ssl_cmd_check_file`, `ssl_cmd_check_dir`).
#[derive(Debug)]
pub enum ValueKind {
    File,
    Directory,
    Text,
}

/// The command OpenSSL knows by `name` (case-insensitive, as in a file),
/// with its canonical name and value kind.
pub fn lookup(name: &str) -> Result<(&'static str, ValueKind), String> {
    let (canonical, kind) = COMMANDS
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .ok_or_else(|| format!("'{name}': invalid OpenSSL configuration command"))?;
    let kind = match kind {
        Some(false) => ValueKind::File,
        Some(true) => ValueKind::Directory,
        None => ValueKind::Text,
    };
    Ok((canonical, kind))
}

/// Apply one command to the server's settings.
pub fn apply(ssl: &mut SslServer, command: &str, value: &str) -> Result<(), String> {
    let instead = match command {
        "Curves" | "Groups" => {
            ssl.groups = Some(groups(command, value)?);
            return Ok(());
        }
        "ECDHParameters" => {
            // `auto`/`automatic`: OpenSSL's default list again.
            ssl.groups =
                if value.eq_ignore_ascii_case("auto") || value.eq_ignore_ascii_case("automatic") {
                    None
                } else {
                    Some(groups(command, value)?)
                };
            return Ok(());
        }
        "DHParameters" => return Ok(()),
        "Options" => return options(ssl, value),
        "CipherString" | "Ciphersuites" => "use SSLCipherSuite",
        "Protocol" | "MinProtocol" | "MaxProtocol" => "use SSLProtocol",
        "Certificate" | "PrivateKey" => "use SSLCertificateFile and SSLCertificateKeyFile",
        "VerifyCAFile" | "VerifyCAPath" | "ClientCAFile" | "ClientCAPath" => {
            "use SSLCACertificateFile or SSLCACertificatePath"
        }
        "NumTickets" => "rustls sends the TLS 1.3 tickets SSLSessionTickets asks for",
        _ => "not supported by htaccel yet",
    };
    Err(format!("SSLOpenSSLConfCmd {command}: {instead}"))
}

/// `Options`: OpenSSL's comma-separated option names, each set or (with
/// `-`) cleared. Those with a mod_ssl directive of their own act as it
/// does; the ones that hold whatever rustls does are accepted; any other
/// is refused.
fn options(ssl: &mut SslServer, value: &str) -> Result<(), String> {
    for item in value.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (on, name) = match item.strip_prefix('-') {
            Some(name) => (false, name),
            None => (true, item.strip_prefix('+').unwrap_or(item)),
        };
        match (name.to_ascii_lowercase().as_str(), on) {
            ("sessionticket", _) => ssl.session_tickets = Some(on),
            ("serverpreference", _) => ssl.honor_cipher_order = Some(on),
            // rustls compresses nothing and never renegotiates.
            ("compression", false) | ("unsafelegacyrenegotiation", false) | ("norenegotiation", true) | ("noresumptiononrenegotiation", _) => {}
            _ => {
                return Err(format!(
                    "SSLOpenSSLConfCmd Options {item}: not supported by htaccel yet (Options it has: SessionTicket, ServerPreference, -Compression, -UnsafeLegacyRenegotiation, NoRenegotiation, NoResumptionOnRenegotiation)"
                ))
            }
        }
    }
    Ok(())
}

/// An OpenSSL group list (`X25519:prime256v1:secp384r1`), every group
/// one rustls offers.
fn groups(command: &str, value: &str) -> Result<Vec<KxGroup>, String> {
    let mut out = Vec::new();
    for name in value.split(':') {
        let group = match name.to_ascii_lowercase().as_str() {
            "x25519" => KxGroup::X25519,
            "secp256r1" | "p-256" | "prime256v1" => KxGroup::Secp256r1,
            "secp384r1" | "p-384" => KxGroup::Secp384r1,
            "secp521r1" | "p-521" | "x448" | "ffdhe2048" | "ffdhe3072" | "ffdhe4096"
            | "ffdhe6144" | "ffdhe8192" => {
                return Err(format!(
                    "SSLOpenSSLConfCmd {command} {value}: the group {name} is not one htaccel offers (X25519, prime256v1, secp384r1)"
                ))
            }
            _ => {
                return Err(format!(
                    "\"SSLOpenSSLConfCmd {command} {value}\" failed: unknown group {name}"
                ))
            }
        };
        if !out.contains(&group) {
            out.push(group);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mozilla_groups_are_taken_in_order() {
        let mut ssl = SslServer::default();
        apply(&mut ssl, "Curves", "X25519:prime256v1:secp384r1").unwrap();
        assert_eq!(
            ssl.groups,
            Some(vec![
                KxGroup::X25519,
                KxGroup::Secp256r1,
                KxGroup::Secp384r1
            ])
        );
        apply(&mut ssl, "ECDHParameters", "secp384r1").unwrap();
        assert_eq!(ssl.groups, Some(vec![KxGroup::Secp384r1]));
        apply(&mut ssl, "ECDHParameters", "Automatic").unwrap();
        assert_eq!(ssl.groups, None);
    }

    #[test]
    fn what_cannot_be_done_is_refused_with_the_reason() {
        let mut ssl = SslServer::default();
        assert!(apply(&mut ssl, "Groups", "x25519:x448")
            .unwrap_err()
            .contains("x448 is not one htaccel offers"));
        assert!(apply(&mut ssl, "Groups", "P-256:foo")
            .unwrap_err()
            .contains("unknown group foo"));
        assert!(apply(&mut ssl, "MinProtocol", "TLSv1.2")
            .unwrap_err()
            .contains("use SSLProtocol"));
        assert!(lookup("Bogus")
            .unwrap_err()
            .contains("'Bogus': invalid OpenSSL configuration command"));
        assert_eq!(lookup("curves").unwrap().0, "Curves");
        assert!(matches!(lookup("dhparameters").unwrap().1, ValueKind::File));
    }
}
