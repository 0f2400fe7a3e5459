//! The few facts of an X.509 certificate that mod_ssl's `SSL_SERVER_*`
//! variables show (subject and issuer as OpenSSL prints them in RFC 2253
//! form, serial, version, key algorithm), read from its DER with a small
//! reader: rustls checks certificates, it does not describe them.

use rustls::pki_types::CertificateDer;

/// What `SSL_SERVER_S_DN`, `SSL_SERVER_I_DN`, `SSL_SERVER_M_SERIAL`,
/// `SSL_SERVER_M_VERSION` and `SSL_SERVER_A_KEY` show.
#[derive(Clone, Debug, Default)]
pub(crate) struct CertFacts {
    pub subject: String,
    pub issuer: String,
    pub serial: String,
    pub version: u32,
    pub key_alg: &'static str,
    /// The validity period, seconds since the epoch (0: unread).
    pub not_before: i64,
    pub not_after: i64,
    /// The issuer as `X509_NAME_oneline` prints it (mod_md's status).
    pub issuer_oneline: String,
    /// The serial number's content octets, as encoded.
    pub serial_octets: Vec<u8>,
    /// The Authority Key Identifier extension's `keyIdentifier`.
    pub authority_key_id: Option<Vec<u8>>,
    /// The Authority Information Access extension's CA issuers URI.
    pub issuer_uri: Option<String>,
    /// The Authority Information Access extension's first OCSP responder.
    pub ocsp_uri: Option<String>,
    /// The subjectAltName extension's DNS names.
    pub dns_names: Vec<String>,
    /// The subject's commonName values, in order.
    pub common_names: Vec<String>,
}

impl CertFacts {
    /// The facts of `cert`; fields it cannot read stay empty.
    pub(crate) fn of(cert: &CertificateDer<'_>) -> CertFacts {
        read(cert).unwrap_or_default()
    }

    /// The certificate as mod_ssl's error log names it after a message
    /// about it (`ssl_log_xerror`).
    pub(crate) fn logged(&self) -> String {
        use htaccel_engine::http::date::fmt_asn1_time;
        format!(
            "[subject: {} / issuer: {} / serial: {} / notbefore: {} / notafter: {}]",
            self.subject,
            self.issuer,
            self.serial,
            fmt_asn1_time(self.not_before),
            fmt_asn1_time(self.not_after)
        )
    }
}

/// One DER element: tag, contents, and what follows it.
pub(crate) fn element(b: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let tag = *b.first()?;
    let first = *b.get(1)? as usize;
    let (len, head) = if first < 0x80 {
        (first, 2)
    } else {
        let n = first & 0x7f;
        if n == 0 || n > 4 {
            return None;
        }
        let mut len = 0usize;
        for i in 0..n {
            len = (len << 8) | *b.get(2 + i)? as usize;
        }
        (len, 2 + n)
    };
    let end = head.checked_add(len)?;
    Some((tag, b.get(head..end)?, &b[end..]))
}

fn read(cert: &[u8]) -> Option<CertFacts> {
    let (_, certificate, _) = element(cert)?;
    let (_, tbs, _) = element(certificate)?;
    let (tag, first, rest) = element(tbs)?;
    let (version, rest) = if tag == 0xa0 {
        let (_, v, _) = element(first)?;
        (u32::from(*v.last()?) + 1, rest)
    } else {
        (1, tbs)
    };
    let (_, serial, rest) = element(rest)?;
    let (_, _sig_alg, rest) = element(rest)?;
    let (_, issuer, rest) = element(rest)?;
    let (_, validity, rest) = element(rest)?;
    let (nb_tag, nb, after) = element(validity)?;
    let (na_tag, na, _) = element(after)?;
    let (_, subject, rest) = element(rest)?;
    let (_, spki, mut after_key) = element(rest)?;
    let (_, alg, _) = element(spki)?;
    let (_, oid, _) = element(alg)?;
    let key_alg = match oid {
        [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01] => "rsaEncryption",
        [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01] => "id-ecPublicKey",
        [0x2b, 0x65, 0x70] => "ED25519",
        _ => "",
    };
    let digits = serial.iter().skip_while(|b| **b == 0);
    let mut serial_hex: String = digits.map(|b| format!("{b:02X}")).collect();
    if serial_hex.is_empty() {
        serial_hex.push_str("00");
    }
    let mut facts = CertFacts {
        subject: name(subject)?,
        issuer: name(issuer)?,
        serial: serial_hex,
        version,
        key_alg,
        not_before: time(nb_tag, nb).unwrap_or(0),
        not_after: time(na_tag, na).unwrap_or(0),
        issuer_oneline: oneline(issuer).unwrap_or_default(),
        serial_octets: serial.to_vec(),
        authority_key_id: None,
        issuer_uri: None,
        ocsp_uri: None,
        dns_names: Vec::new(),
        common_names: common_names(subject),
    };
    // The unique identifiers ([1], [2]) may come first; extensions are [3].
    while let Some((tag, value, more)) = element(after_key) {
        after_key = more;
        if tag == 0xa3 {
            extensions(value, &mut facts);
        }
    }
    Some(facts)
}

/// OID 2.5.29.35, 1.3.6.1.5.5.7.1.1, 1.3.6.1.5.5.7.48.2 and 1.3.6.1.5.5.7.48.1.
const AUTHORITY_KEY_ID: &[u8] = &[0x55, 0x1d, 0x23];
const AUTHORITY_INFO_ACCESS: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x01, 0x01];
const CA_ISSUERS: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x30, 0x02];
const OCSP: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x30, 0x01];
/// OID 2.5.29.17, and 2.5.4.3.
const SUBJECT_ALT_NAME: &[u8] = &[0x55, 0x1d, 0x11];
const COMMON_NAME: &[u8] = &[0x55, 0x04, 0x03];

/// The extensions mod_md's status, OCSP stapling and the proxy's name
/// check read: whose key signed the certificate, where its issuer's
/// certificate and its OCSP responder are published, its DNS names.
fn extensions(wrapped: &[u8], facts: &mut CertFacts) -> Option<()> {
    let (_, mut list, _) = element(wrapped)?;
    while !list.is_empty() {
        let (_, ext, more) = element(list)?;
        list = more;
        let (_, oid, rest) = element(ext)?;
        // The value, after `critical` if present.
        let (tag, value, rest) = element(rest)?;
        let value = if tag == 0x01 { element(rest)?.1 } else { value };
        if oid == AUTHORITY_KEY_ID {
            let (_, aki, _) = element(value)?;
            let (tag, key_id, _) = element(aki)?;
            if tag == 0x80 {
                facts.authority_key_id = Some(key_id.to_vec());
            }
        } else if oid == SUBJECT_ALT_NAME {
            let (_, mut names, _) = element(value)?;
            while !names.is_empty() {
                let (tag, name, more) = element(names)?;
                names = more;
                // dNSName, [2] IA5String.
                if tag == 0x82 {
                    facts
                        .dns_names
                        .push(String::from_utf8_lossy(name).into_owned());
                }
            }
        } else if oid == AUTHORITY_INFO_ACCESS {
            let (_, mut descriptions, _) = element(value)?;
            while !descriptions.is_empty() {
                let (_, description, more) = element(descriptions)?;
                descriptions = more;
                let (_, method, location) = element(description)?;
                let (tag, uri, _) = element(location)?;
                let slot = match method {
                    CA_ISSUERS => &mut facts.issuer_uri,
                    OCSP => &mut facts.ocsp_uri,
                    _ => continue,
                };
                if tag == 0x86 && slot.is_none() {
                    *slot = Some(String::from_utf8_lossy(uri).into_owned());
                }
            }
        }
    }
    Some(())
}

/// The commonName values of a `Name`'s contents, in order.
fn common_names(mut b: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    while let Some((_, set, rest)) = element(b) {
        b = rest;
        let mut s = set;
        while let Some((_, atv, more)) = element(s) {
            s = more;
            if let Some((_, oid, value)) = element(atv) {
                if oid == COMMON_NAME {
                    if let Some((_, text, _)) = element(value) {
                        out.push(String::from_utf8_lossy(text).into_owned());
                    }
                }
            }
        }
    }
    out
}

/// A `Name` as `X509_NAME_oneline` prints it: each attribute in encoding
/// order as `/SN=value`, bytes outside printable ASCII as `\xHH`.
fn oneline(mut b: &[u8]) -> Option<String> {
    let mut out = String::new();
    while !b.is_empty() {
        let (_, set, rest) = element(b)?;
        b = rest;
        let mut s = set;
        while !s.is_empty() {
            let (_, atv, more) = element(s)?;
            s = more;
            let (_, oid, value) = element(atv)?;
            let (_, text, _) = element(value)?;
            out.push('/');
            out.push_str(&short_name(oid).map_or_else(|| dotted(oid), str::to_string));
            out.push('=');
            for &c in text {
                if (b' '..=b'~').contains(&c) {
                    out.push(c as char);
                } else {
                    out.push_str(&format!("\\x{c:02X}"));
                }
            }
        }
    }
    Some(out)
}

/// A `UTCTime` (`YYMMDDHHMMSSZ`) or `GeneralizedTime` (`YYYYMMDDHHMMSSZ`)
/// as seconds since the epoch.
pub(crate) fn time(tag: u8, v: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(v).ok()?.strip_suffix('Z')?;
    let (year, rest) = match tag {
        0x17 => {
            let yy: i64 = text.get(..2)?.parse().ok()?;
            (if yy < 50 { 2000 + yy } else { 1900 + yy }, text.get(2..)?)
        }
        0x18 => (text.get(..4)?.parse().ok()?, text.get(4..)?),
        _ => return None,
    };
    let num = |r: std::ops::Range<usize>| -> Option<i64> { rest.get(r)?.parse().ok() };
    let (month, day) = (num(0..2)?, num(2..4)?);
    let (h, m, sec) = (num(4..6)?, num(6..8)?, num(8..10)?);
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + m * 60 + sec)
}

/// What matches a certificate to its issuer: the issuer and subject
/// names as encoded (the contents of each `Name`), and the bits of its
/// public key (the `subjectPublicKey` BIT STRING without its unused-bits
/// count), by whose hash an OCSP `CertID` names an issuer.
pub(crate) struct Names<'a> {
    pub issuer: &'a [u8],
    pub subject: &'a [u8],
    /// `None` when the key cannot be read (the names still can).
    pub key_bits: Option<&'a [u8]>,
}

/// The [`Names`] of a certificate.
pub(crate) fn names(cert: &[u8]) -> Option<Names<'_>> {
    let (_, certificate, _) = element(cert)?;
    let (_, tbs, _) = element(certificate)?;
    let (tag, _, rest) = element(tbs)?;
    let rest = if tag == 0xa0 { rest } else { tbs };
    let (_, _serial, rest) = element(rest)?;
    let (_, _sig_alg, rest) = element(rest)?;
    let (_, issuer, rest) = element(rest)?;
    let (_, _validity, rest) = element(rest)?;
    let (_, subject, rest) = element(rest)?;
    let key_bits = element(rest)
        .and_then(|(_, spki, _)| element(spki))
        .and_then(|(_, _alg, rest)| element(rest))
        .and_then(|(_, bits, _)| bits.get(1..));
    Some(Names {
        issuer,
        subject,
        key_bits,
    })
}

/// A `Name` as OpenSSL's `XN_FLAG_RFC2253` prints it: the last RDN first,
/// joined by `,`, multi-valued RDNs by `+`, short attribute names.
fn name(mut b: &[u8]) -> Option<String> {
    let mut rdns = Vec::new();
    while !b.is_empty() {
        let (_, set, rest) = element(b)?;
        b = rest;
        let mut parts = Vec::new();
        let mut s = set;
        while !s.is_empty() {
            let (_, atv, more) = element(s)?;
            s = more;
            let (_, oid, value) = element(atv)?;
            let (vtag, text, _) = element(value)?;
            let short = short_name(oid);
            let shown = match (short, vtag) {
                (Some(n), 0x0c | 0x13 | 0x16 | 0x14) => {
                    format!("{n}={}", escape(&String::from_utf8_lossy(text)))
                }
                (n, _) => {
                    let hex: String = value[..value.len() - s_len(value, text)]
                        .iter()
                        .map(|b| format!("{b:02X}"))
                        .collect();
                    format!("{}=#{hex}", n.map_or_else(|| dotted(oid), str::to_string))
                }
            };
            parts.push(shown);
        }
        rdns.push(parts.join("+"));
    }
    rdns.reverse();
    Some(rdns.join(","))
}

/// How much of `value` follows the element whose contents are `text`.
fn s_len(value: &[u8], text: &[u8]) -> usize {
    let start = text.as_ptr() as usize - value.as_ptr() as usize;
    value.len() - (start + text.len())
}

fn short_name(oid: &[u8]) -> Option<&'static str> {
    Some(match oid {
        [0x55, 0x04, 0x03] => "CN",
        [0x55, 0x04, 0x05] => "serialNumber",
        [0x55, 0x04, 0x06] => "C",
        [0x55, 0x04, 0x07] => "L",
        [0x55, 0x04, 0x08] => "ST",
        [0x55, 0x04, 0x09] => "street",
        [0x55, 0x04, 0x0a] => "O",
        [0x55, 0x04, 0x0b] => "OU",
        [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x01] => "emailAddress",
        [0x09, 0x92, 0x26, 0x89, 0x93, 0xf2, 0x2c, 0x64, 0x01, 0x19] => "DC",
        [0x09, 0x92, 0x26, 0x89, 0x93, 0xf2, 0x2c, 0x64, 0x01, 0x01] => "UID",
        _ => return None,
    })
}

fn dotted(oid: &[u8]) -> String {
    let mut out = Vec::new();
    let mut v: u64 = 0;
    for (i, b) in oid.iter().enumerate() {
        v = (v << 7) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            if out.is_empty() && i < oid.len() {
                out.push((v.min(80) / 40).min(2));
                out.push(v - (v.min(80) / 40).min(2) * 40);
            } else {
                out.push(v);
            }
            v = 0;
        }
    }
    out.iter().map(u64::to_string).collect::<Vec<_>>().join(".")
}

/// RFC 2253 escaping: `,+"\<>;`, a leading `#` or space, a trailing space.
fn escape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let n = v.chars().count();
    for (i, c) in v.chars().enumerate() {
        let special = matches!(c, ',' | '+' | '"' | '\\' | '<' | '>' | ';')
            || (i == 0 && (c == '#' || c == ' '))
            || (i + 1 == n && c == ' ');
        if special {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_seconds_since_the_epoch() {
        assert_eq!(time(0x17, b"700101000000Z"), Some(0));
        assert_eq!(time(0x17, b"240229120000Z"), Some(1_709_208_000));
        assert_eq!(time(0x18, b"20500101000000Z"), Some(2_524_608_000));
    }

    #[test]
    fn issuer_reads_as_openssl_prints_it_on_one_line() {
        let pair = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec!["a.test".into()]).unwrap();
        let mut dn = rcgen::DistinguishedName::new();
        dn.push(rcgen::DnType::OrganizationName, "Org, Inc");
        dn.push(rcgen::DnType::CommonName, "Test CA \u{e9}");
        params.distinguished_name = dn;
        let cert = params.self_signed(&pair).unwrap();
        let facts = CertFacts::of(cert.der());
        assert_eq!(facts.issuer_oneline, "/O=Org, Inc/CN=Test CA \\xC3\\xA9");
        assert_eq!(facts.issuer, "CN=Test CA \u{e9},O=Org\\, Inc");
        assert!(!facts.serial_octets.is_empty());
    }

    #[test]
    fn escapes_as_rfc2253() {
        assert_eq!(escape("a,b"), "a\\,b");
        assert_eq!(escape(" x "), "\\ x\\ ");
        assert_eq!(dotted(&[0x2a, 0x86, 0x48]), "1.2.840");
    }
}
