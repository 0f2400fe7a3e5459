//! `SSLCipherSuite`: OpenSSL cipher strings over the suites rustls offers.
//!
//! The string is read as OpenSSL reads it: words separated by `:` (or `,`
//! and spaces); a word is a suite name or an alias, or aliases joined by
//! `+` (suites matching all of them); a leading `!` removes for good, `-`
//! removes, `+` moves to the end, none adds what is not in the list yet;
//! `@STRENGTH` sorts by key length; `@SECLEVEL=n` is accepted. The suites
//! it can reach are the nine rustls offers with *ring*
//! ([`crate::http::tls::SUITES`]):
//!
//! | OpenSSL name | matched by (besides `ALL`, `DEFAULT`, `HIGH`, `AEAD`) |
//! | --- | --- |
//! | `ECDHE-ECDSA-AES256-GCM-SHA384` | `TLSv1.2` `ECDHE` `EECDH` `kECDHE` `kEECDH` `ECDH` `aECDSA` `ECDSA` `AES` `AESGCM` `AES256` `SHA384` |
//! | `ECDHE-RSA-AES256-GCM-SHA384` | the same with `aRSA` for `aECDSA`/`ECDSA` |
//! | `ECDHE-ECDSA-CHACHA20-POLY1305`, `ECDHE-RSA-CHACHA20-POLY1305` | `CHACHA20` `SHA256` and the key exchange and authentication aliases |
//! | `ECDHE-ECDSA-AES128-GCM-SHA256`, `ECDHE-RSA-AES128-GCM-SHA256` | `AES` `AESGCM` `AES128` `SHA256` and the same |
//! | `TLS_AES_256_GCM_SHA384`, `TLS_CHACHA20_POLY1305_SHA256`, `TLS_AES_128_GCM_SHA256` | TLS 1.3: only `SSLCipherSuite TLSv1.3 …`, by name |
//!
//! Every other name or alias (`DHE-…`, `RSA`/`kRSA` key exchange, CBC,
//! `3DES`, `RC4`, `MEDIUM`, `LOW`, `eNULL`, `aNULL`, …) matches nothing
//! htaccel offers, as OpenSSL's list would hold suites rustls does not
//! implement: they are skipped. A string that leaves no suite at all for
//! TLS 1.2 is a start-up error. As in Apache, `SSLCipherSuite` without a
//! protocol word sets the TLS 1.2 suites only; TLS 1.3 keeps all three.
//!
//! `PROFILE=SYSTEM` at the start of a string (Red Hat's stock `ssl.conf`:
//! Fedora, RHEL and their rebuilds patch OpenSSL for it) stands for the
//! system's crypto policy: the first line of
//! [`SYSTEM_CIPHERS_FILE`], what follows the keyword appended to it, and
//! `DEFAULT` where the file is missing or empty, as their OpenSSL reads it.

use crate::http::tls::SUITES;
use std::borrow::Cow;

/// Where Red Hat's crypto policies write OpenSSL's cipher string.
pub const SYSTEM_CIPHERS_FILE: &str = "/etc/crypto-policies/back-ends/openssl.config";

/// `spec` with a leading `PROFILE=SYSTEM` replaced by the system's cipher
/// string, read from `policy` (the contents of [`SYSTEM_CIPHERS_FILE`]).
pub fn expand_system_profile<'s>(spec: &'s str, policy: Option<&str>) -> Cow<'s, str> {
    let Some(rest) = spec.strip_prefix("PROFILE=SYSTEM") else {
        return Cow::Borrowed(spec);
    };
    let first = policy
        .and_then(|text| text.lines().next())
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .unwrap_or("DEFAULT");
    Cow::Owned(format!("{first}{rest}"))
}

/// The TLS 1.2 suites OpenSSL's `DEFAULT` (and `ALL`, `HIGH`) list, in its order.
pub fn tls12_default() -> Vec<&'static str> {
    SUITES.iter().filter(|s| !s.1).map(|s| s.0).collect()
}

/// The TLS 1.3 suites, in OpenSSL's default order.
pub fn tls13_default() -> Vec<&'static str> {
    SUITES.iter().filter(|s| s.1).map(|s| s.0).collect()
}

fn bits(name: &str) -> u32 {
    SUITES.iter().find(|s| s.0 == name).map_or(0, |s| s.2)
}

/// Whether OpenSSL's alias `alias` covers the TLS 1.2 suite `suite`.
fn covers(alias: &str, suite: &str) -> bool {
    if alias == suite {
        return true;
    }
    let ecdsa = suite.contains("-ECDSA-");
    match alias {
        "ALL" | "DEFAULT" | "HIGH" | "AEAD" | "TLSv1.2" | "ECDHE" | "EECDH" | "kECDHE"
        | "kEECDH" | "ECDH" | "kECDH" => true,
        "aECDSA" | "ECDSA" => ecdsa,
        "aRSA" => !ecdsa,
        "AES" | "AESGCM" => suite.contains("-AES"),
        "AES128" => suite.contains("-AES128-"),
        "AES256" => suite.contains("-AES256-"),
        "CHACHA20" => suite.contains("CHACHA20"),
        "SHA256" => suite.ends_with("SHA256") || suite.contains("CHACHA20"),
        "SHA384" => suite.ends_with("SHA384"),
        _ => false,
    }
}

/// The TLS 1.2 suites a cipher string selects, in its order.
pub fn parse_tls12(spec: &str) -> Result<Vec<&'static str>, String> {
    let policy = spec
        .starts_with("PROFILE=SYSTEM")
        .then(|| std::fs::read_to_string(SYSTEM_CIPHERS_FILE).ok())
        .flatten();
    let spec = expand_system_profile(spec, policy.as_deref());
    let all = tls12_default();
    let mut list: Vec<&'static str> = Vec::new();
    let mut banned: Vec<&'static str> = Vec::new();
    for word in spec
        .split([':', ',', ' '])
        .map(str::trim)
        .filter(|w| !w.is_empty())
    {
        if word == "@STRENGTH" {
            list.sort_by_key(|s| std::cmp::Reverse(bits(s)));
            continue;
        }
        if word.starts_with("@SECLEVEL=") {
            continue;
        }
        if word.starts_with('@') {
            return Err(format!("SSLCipherSuite: unknown keyword '{word}'"));
        }
        let (op, body) = match word.as_bytes()[0] {
            b @ (b'!' | b'-' | b'+') => (Some(b), &word[1..]),
            _ => (None, word),
        };
        let matching: Vec<&'static str> = all
            .iter()
            .copied()
            .filter(|s| body.split('+').all(|alias| covers(alias, s)))
            .collect();
        match op {
            Some(b'!') => {
                list.retain(|s| !matching.contains(s));
                banned.extend(matching);
            }
            Some(b'-') => list.retain(|s| !matching.contains(s)),
            Some(_) => {
                let (moved, kept): (Vec<_>, Vec<_>) =
                    list.iter().partition(|s| matching.contains(s));
                list = kept;
                list.extend(moved);
            }
            None => {
                for s in matching {
                    if !list.contains(&s) && !banned.contains(&s) {
                        list.push(s);
                    }
                }
            }
        }
    }
    Ok(list)
}

/// The TLS 1.3 suites of `SSLCipherSuite TLSv1.3 …`: names only.
pub fn parse_tls13(spec: &str) -> Result<Vec<&'static str>, String> {
    let mut out = Vec::new();
    for word in spec.split(':').map(str::trim).filter(|w| !w.is_empty()) {
        match tls13_default().into_iter().find(|s| *s == word) {
            Some(s) if out.contains(&s) => {}
            Some(s) => out.push(s),
            None if word.starts_with("TLS_AES_128_CCM") => {}
            None => return Err(format!("SSLCipherSuite: unknown TLSv1.3 suite '{word}'")),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn red_hats_system_profile() {
        // The DEFAULT policy's string as Red Hat's crypto policies write it
        // (without SHA-384 suites), and what follows the keyword.
        let rhel = "@SECLEVEL=2:kEECDH:kRSA:kEDH:kPSK:kDHEPSK:kECDHEPSK:kRSAPSK:-aDSS:-3DES:!DES:!RC4:!RC2:!IDEA:-SEED:!eNULL:!aNULL:!MD5:-SHA384:-CAMELLIA:-ARIA:-AESCCM8\n";
        let spec = expand_system_profile("PROFILE=SYSTEM:!CHACHA20", Some(rhel));
        assert_eq!(
            parse_tls12(&spec).unwrap(),
            [
                "ECDHE-ECDSA-AES128-GCM-SHA256",
                "ECDHE-RSA-AES128-GCM-SHA256"
            ]
        );
        assert_eq!(expand_system_profile("PROFILE=SYSTEM", None), "DEFAULT");
        assert_eq!(
            expand_system_profile("PROFILE=SYSTEM", Some("\n")),
            "DEFAULT"
        );
        assert_eq!(
            expand_system_profile("HIGH:PROFILE=SYSTEM", None),
            "HIGH:PROFILE=SYSTEM"
        );
    }

    #[test]
    fn debian_and_certbot_strings() {
        assert_eq!(parse_tls12("HIGH:!aNULL").unwrap(), tls12_default());
        let certbot = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384";
        assert_eq!(
            parse_tls12(certbot).unwrap(),
            vec![
                "ECDHE-ECDSA-AES128-GCM-SHA256",
                "ECDHE-RSA-AES128-GCM-SHA256",
                "ECDHE-ECDSA-AES256-GCM-SHA384",
                "ECDHE-RSA-AES256-GCM-SHA384",
                "ECDHE-ECDSA-CHACHA20-POLY1305",
                "ECDHE-RSA-CHACHA20-POLY1305",
            ]
        );
    }

    #[test]
    fn a_tls13_suite_named_twice_is_offered_once() {
        let twice =
            "TLS_CHACHA20_POLY1305_SHA256::TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";
        assert_eq!(
            parse_tls13(twice).unwrap(),
            vec!["TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_256_GCM_SHA384"]
        );
    }

    #[test]
    fn operators() {
        assert_eq!(
            parse_tls12("ECDHE+AESGCM:!AES128").unwrap(),
            vec![
                "ECDHE-ECDSA-AES256-GCM-SHA384",
                "ECDHE-RSA-AES256-GCM-SHA384"
            ]
        );
        assert_eq!(
            parse_tls12("AES128:AES256:@STRENGTH").unwrap()[0],
            "ECDHE-ECDSA-AES256-GCM-SHA384"
        );
        assert_eq!(
            parse_tls12("ALL:+aRSA").unwrap().last(),
            Some(&"ECDHE-RSA-AES128-GCM-SHA256")
        );
        assert_eq!(parse_tls12("!ECDSA:ALL").unwrap().len(), 3);
        assert!(parse_tls12("RC4:3DES").unwrap().is_empty());
        assert!(parse_tls13("TLS_AES_256_GCM_SHA384:TLS_NOPE").is_err());
    }
}
