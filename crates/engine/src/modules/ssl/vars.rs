//! mod_ssl's variables: `%{HTTPS}`, `%{SSL:…}` in mod_rewrite, `SSL_*` in
//! expressions, and the environment a script gets (`HTTPS=on` and
//! `SSL_TLS_SNI` always on TLS, the rest with `SSLOptions +StdEnvVars`),
//! from the facts the server keeps of the session ([`TlsInfo`]).
//!
//! Reading them marks the answer as not to be kept by the answer memo
//! ([`Request::tls_info`]): they differ between connections.

use crate::http::{Request, TlsInfo};
use crate::request::Ctx;

/// What `SSL_VERSION_LIBRARY` says.
const LIBRARY: &str = "rustls/0.23";

/// Short names mod_ssl gives the components of a DN (`SSL_SERVER_S_DN_CN`).
const DN_PARTS: &[(&str, &str)] = &[
    ("C", "C"),
    ("ST", "ST"),
    ("L", "L"),
    ("O", "O"),
    ("OU", "OU"),
    ("CN", "CN"),
    ("emailAddress", "Email"),
    ("UID", "UID"),
];

/// The RDNs of an RFC 2253 string in certificate order, unescaped.
fn components(dn: &str) -> Vec<(String, String)> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut escaped = false;
    for c in dn.chars() {
        if escaped {
            cur.push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == ',' || c == '+' {
            parts.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        parts.push(cur);
    }
    parts.reverse();
    parts
        .into_iter()
        .filter_map(|p| {
            let (k, v) = p.split_once('=')?;
            Some((k.to_string(), v.to_string()))
        })
        .collect()
}

fn dn_part(dn: &str, part: &str) -> Option<String> {
    let long = DN_PARTS.iter().find(|(_, short)| *short == part)?.0;
    components(dn)
        .into_iter()
        .find(|(k, _)| k == long)
        .map(|(_, v)| v)
}

/// mod_log_config's `%{…}c` as mod_ssl registers it
/// (`ssl_var_log_handler_c`): a short name for one of its variables, on a
/// TLS connection only.
pub fn log_connection_var(req: &Request, name: &str) -> Option<String> {
    let var = match name {
        "version" => "SSL_PROTOCOL",
        "cipher" => "SSL_CIPHER",
        "subjectdn" => "SSL_CLIENT_S_DN",
        "issuerdn" => "SSL_CLIENT_I_DN",
        _ => return None,
    };
    if !req.secure {
        return None;
    }
    lookup(req, var)
}

/// `ssl_var_lookup` for the facts htaccel has; `None` when unset (Apache's
/// NULL: empty in mod_rewrite).
pub fn lookup(req: &Request, name: &str) -> Option<String> {
    if name.eq_ignore_ascii_case("HTTPS") {
        return Some(if req.secure { "on" } else { "off" }.into());
    }
    let t = req.tls_info()?;
    lookup_in(t, name)
}

fn lookup_in(t: &TlsInfo, name: &str) -> Option<String> {
    let v = match name {
        "SSL_PROTOCOL" => t.protocol.to_string(),
        "SSL_CIPHER" => t.cipher.to_string(),
        "SSL_CIPHER_EXPORT" => "false".into(),
        "SSL_CIPHER_USEKEYSIZE" | "SSL_CIPHER_ALGKEYSIZE" => t.cipher_bits.to_string(),
        "SSL_TLS_SNI" => t.sni.clone()?,
        "SSL_SESSION_RESUMED" => if t.resumed { "Resumed" } else { "Initial" }.into(),
        "SSL_SECURE_RENEG" => "false".into(),
        "SSL_COMPRESS_METHOD" => "NULL".into(),
        "SSL_CLIENT_VERIFY" => if t.client.is_some() {
            "SUCCESS"
        } else {
            "NONE"
        }
        .into(),
        "SSL_CLIENT_S_DN" => t.client.as_ref()?.subject.clone(),
        "SSL_CLIENT_I_DN" => t.client.as_ref()?.issuer.clone(),
        "SSL_CLIENT_M_SERIAL" => t.client.as_ref()?.serial.clone(),
        "SSL_CLIENT_M_VERSION" => t.client.as_ref()?.version.to_string(),
        "SSL_CLIENT_A_KEY" => t.client.as_ref()?.key_alg.to_string(),
        "SSL_CLIENT_CERT" => t.client.as_ref()?.pem.clone(),
        "SSL_SERVER_CERT" => t.server_cert_pem.as_deref()?.to_string(),
        "SSL_VERSION_LIBRARY" => LIBRARY.into(),
        "SSL_SERVER_S_DN" => t.server_subject.clone(),
        "SSL_SERVER_I_DN" => t.server_issuer.clone(),
        "SSL_SERVER_M_SERIAL" => t.server_serial.clone(),
        "SSL_SERVER_M_VERSION" => t.server_version.to_string(),
        "SSL_SERVER_A_KEY" => t.server_key_alg.to_string(),
        _ => {
            if let Some(part) = name.strip_prefix("SSL_SERVER_S_DN_") {
                return dn_part(&t.server_subject, part);
            }
            if let Some(part) = name.strip_prefix("SSL_SERVER_I_DN_") {
                return dn_part(&t.server_issuer, part);
            }
            if let Some(part) = name.strip_prefix("SSL_CLIENT_S_DN_") {
                return dn_part(&t.client.as_ref()?.subject, part);
            }
            if let Some(part) = name.strip_prefix("SSL_CLIENT_I_DN_") {
                return dn_part(&t.client.as_ref()?.issuer, part);
            }
            return None;
        }
    };
    (!v.is_empty()).then_some(v)
}

/// `ssl_hook_Fixup_vars`: what `+StdEnvVars` exports, in mod_ssl's order.
const STD_ENV_VARS: &[&str] = &[
    "SSL_VERSION_INTERFACE",
    "SSL_VERSION_LIBRARY",
    "SSL_PROTOCOL",
    "SSL_SECURE_RENEG",
    "SSL_COMPRESS_METHOD",
    "SSL_CIPHER",
    "SSL_CIPHER_EXPORT",
    "SSL_CIPHER_USEKEYSIZE",
    "SSL_CIPHER_ALGKEYSIZE",
    "SSL_CLIENT_VERIFY",
    "SSL_CLIENT_M_VERSION",
    "SSL_CLIENT_M_SERIAL",
    "SSL_CLIENT_S_DN",
    "SSL_CLIENT_I_DN",
    "SSL_CLIENT_A_KEY",
    "SSL_SERVER_M_VERSION",
    "SSL_SERVER_M_SERIAL",
    "SSL_SERVER_S_DN",
    "SSL_SERVER_I_DN",
    "SSL_SERVER_A_KEY",
    "SSL_SESSION_RESUMED",
];

/// `ssl_hook_Fixup`: the variables a TLS request's environment gets, in
/// order: `HTTPS=on` and `SSL_TLS_SNI` always (read without marking the
/// answer volatile: the answer memo keys kept answers by the SNI name),
/// the `+StdEnvVars` list when the directory asks for it.
pub fn fixup_env(ctx: &Ctx<'_>) -> Vec<(String, String)> {
    let Some(t) = ctx.req.tls.as_deref() else {
        return Vec::new();
    };
    let mut out = vec![("HTTPS".to_string(), "on".to_string())];
    if let Some(sni) = &t.sni {
        out.push(("SSL_TLS_SNI".into(), sni.clone()));
    }
    if ctx.conf.ssl.has(super::OPT_STD_ENV_VARS) {
        let Some(t) = ctx.req.tls_info() else {
            return out;
        };
        let client = t.client.as_ref();
        let mut dns = vec![
            ("SSL_SERVER_S_DN_", t.server_subject.as_str()),
            ("SSL_SERVER_I_DN_", t.server_issuer.as_str()),
        ];
        if let Some(c) = client {
            dns.push(("SSL_CLIENT_S_DN_", c.subject.as_str()));
            dns.push(("SSL_CLIENT_I_DN_", c.issuer.as_str()));
        }
        for (prefix, dn) in dns {
            for (k, v) in components(dn) {
                if let Some((_, short)) = DN_PARTS.iter().find(|(long, _)| *long == k) {
                    let name = format!("{prefix}{short}");
                    if !out.iter().any(|(n, _)| *n == name) {
                        out.push((name, v));
                    }
                }
            }
        }
        for name in STD_ENV_VARS {
            if let Some(v) = lookup_in(t, name) {
                out.push((name.to_string(), v));
            }
        }
    }
    if ctx.conf.ssl.has(super::OPT_EXPORT_CERT_DATA) {
        let Some(t) = ctx.req.tls_info() else {
            return out;
        };
        // Both set, empty when there is no such certificate.
        for name in ["SSL_SERVER_CERT", "SSL_CLIENT_CERT"] {
            out.push((name.to_string(), lookup_in(t, name).unwrap_or_default()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dn_components_in_certificate_order() {
        let dn = "CN=www.example.com,O=Example\\, Inc.,C=DE";
        assert_eq!(
            components(dn),
            vec![
                ("C".to_string(), "DE".to_string()),
                ("O".into(), "Example, Inc.".into()),
                ("CN".into(), "www.example.com".into())
            ]
        );
        assert_eq!(dn_part(dn, "CN").as_deref(), Some("www.example.com"));
    }
}
