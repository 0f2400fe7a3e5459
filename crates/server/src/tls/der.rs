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
}

impl CertFacts {
    /// The facts of `cert`; fields it cannot read stay empty.
    pub(crate) fn of(cert: &CertificateDer<'_>) -> CertFacts {
        read(cert).unwrap_or_default()
    }
}

/// One DER element: tag, contents, and what follows it.
fn element(b: &[u8]) -> Option<(u8, &[u8], &[u8])> {
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
    let (_, _validity, rest) = element(rest)?;
    let (_, subject, rest) = element(rest)?;
    let (_, spki, _) = element(rest)?;
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
    Some(CertFacts {
        subject: name(subject)?,
        issuer: name(issuer)?,
        serial: serial_hex,
        version,
        key_alg,
    })
}

/// The issuer and subject names of a certificate, as encoded (the
/// contents of each `Name`), for matching a certificate to its issuer.
pub(crate) fn issuer_and_subject(cert: &[u8]) -> Option<(&[u8], &[u8])> {
    let (_, certificate, _) = element(cert)?;
    let (_, tbs, _) = element(certificate)?;
    let (tag, _, rest) = element(tbs)?;
    let rest = if tag == 0xa0 { rest } else { tbs };
    let (_, _serial, rest) = element(rest)?;
    let (_, _sig_alg, rest) = element(rest)?;
    let (_, issuer, rest) = element(rest)?;
    let (_, _validity, rest) = element(rest)?;
    let (_, subject, _) = element(rest)?;
    Some((issuer, subject))
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
    fn escapes_as_rfc2253() {
        assert_eq!(escape("a,b"), "a\\,b");
        assert_eq!(escape(" x "), "\\ x\\ ");
        assert_eq!(dotted(&[0x2a, 0x86, 0x48]), "1.2.840");
    }
}
