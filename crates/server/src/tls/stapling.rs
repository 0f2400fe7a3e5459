//! OCSP stapling (`SSLUseStapling on`), as mod_ssl's
//! `ssl_util_stapling.c` does it: the certificate's status fetched from
//! its OCSP responder and sent in the handshake to clients that ask
//! (`status_request`), so that they need not ask the CA themselves.
//!
//! At start, each certificate of a server with stapling on is matched
//! with its issuer (in the certificate file's chain or the chain file)
//! and its responder (the Authority Information Access extension, or
//! `SSLStaplingForceURL`); a certificate lacking either is served without
//! stapling and the reason is logged, as Apache logs it and starts.
//!
//! The response is fetched when a handshake finds none kept, or finds the
//! kept one out of date, as mod_ssl fetches it in its status callback: the
//! handshake waits for it (one fetch at a time per certificate, the
//! others waiting for its answer, as Apache's refresh mutex orders them).
//! A response is kept `SSLStaplingStandardCacheTimeout` when valid,
//! `SSLStaplingErrorCacheTimeout` when not; a responder that cannot be
//! reached yields a `tryLater` response (`SSLStaplingFakeTryLater`);
//! invalid responses are stapled only with
//! `SSLStaplingReturnResponderErrors on`. The responses are kept in the
//! server's memory for every worker (`SSLStaplingCache` must be set, as
//! mod_ssl requires, but its provider does not matter to a client).
//!
//! The request (HTTP/1.0 POST of a DER `OCSPRequest` naming one `CertID`
//! by SHA-1 hashes) and the response are small fixed ASN.1 shapes, read
//! and written with `super::der`'s element reader.

use super::der;
use htaccel_engine::http::tls::StaplingSpec;
use htaccel_engine::http::Log;
use htaccel_engine::log_format::os_error;
use rustls::pki_types::CertificateDer;
use rustls::sign::CertifiedKey;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The largest response kept (mod_ssl's `MAX_STAPLING_DER`, less its flag byte).
const MAX_KEPT: usize = 10240 - 1;
/// The largest response body read from a responder (`MAX_CONTENT`).
const MAX_BODY: usize = 2048 * 1024;
/// The most response header lines read (`MAX_HEADERS`).
const MAX_HEADERS: usize = 256;

/// `OCSPResponseStatus`: successful, and tryLater.
const SUCCESSFUL: u8 = 0;
/// A response whose status is `tryLater` and which carries nothing else
/// (`OCSP_response_create(OCSP_RESPONSE_STATUS_TRYLATER, NULL)`).
const TRY_LATER: [u8; 5] = [0x30, 0x03, 0x0a, 0x01, 0x03];

/// OIDs: SHA-1, and `id-pkix-ocsp-basic`.
const SHA1: &[u8] = &[0x2b, 0x0e, 0x03, 0x02, 0x1a];
const OCSP_BASIC: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x30, 0x01, 0x01];

/// One certificate's stapling: what names it to its responder, and the
/// response kept for the handshakes.
pub(crate) struct Stapler {
    /// The chain and key without a response.
    bare: Arc<CertifiedKey>,
    /// What handshakes send now: `bare`, or it with a response.
    current: RwLock<Arc<CertifiedKey>>,
    id: CertId,
    /// The serial number as mod_ssl's log shows it.
    serial: String,
    /// The DER `OCSPRequest` sent to the responder.
    request: Vec<u8>,
    /// The responder's URL as configured (`SSLStaplingForceURL`, else
    /// the certificate's).
    url: String,
    spec: StaplingSpec,
    kept: Mutex<Option<Kept>>,
    /// One fetch at a time (mod_ssl's refresh mutex).
    refresh: tokio::sync::Mutex<()>,
    log: OnceLock<Arc<dyn Log>>,
}

impl std::fmt::Debug for Stapler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Stapler({})", self.url)
    }
}

/// How an OCSP `CertID` names a certificate (SHA-1 hashes of its issuer's
/// name and key, and its serial number's content octets).
#[derive(Clone, Debug, PartialEq, Eq)]
struct CertId {
    name_hash: Vec<u8>,
    key_hash: Vec<u8>,
    serial: Vec<u8>,
}

/// A response kept: its DER, what it says, whether it was valid when
/// fetched, and when it stops being kept (seconds since the epoch).
struct Kept {
    der: Vec<u8>,
    read: Read,
    valid_when_fetched: bool,
    until: i64,
}

/// What a response says about the certificate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Read {
    /// `responseStatus` other than successful (tryLater, …).
    Unsuccessful,
    /// Successful, but not a basic response htaccel can read.
    Unreadable,
    /// Successful, but about other certificates.
    NotListed,
    /// The certificate's entry.
    Listed(Entry),
}

/// One `SingleResponse`: the status and its validity period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    status: CertStatus,
    /// A revoked certificate's `CRLReason`, when the response gives one.
    reason: Option<u8>,
    this_update: i64,
    next_update: Option<i64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CertStatus {
    Good,
    Revoked,
    Unknown,
}

impl CertStatus {
    fn name(self) -> &'static str {
        match self {
            CertStatus::Good => "good",
            CertStatus::Revoked => "revoked",
            CertStatus::Unknown => "unknown",
        }
    }
}

/// What a handshake does with the kept response (`stapling_cb`).
enum Decision {
    /// Send it.
    Staple,
    /// Send nothing.
    Nothing,
    /// Fetch a new one first.
    Fetch,
}

/// The stapler of a certificate chain (`certs`, the leaf first) when
/// stapling can work for it; else the error mod_ssl logs at start
/// (`ssl_stapling_init_cert`), the certificate then served without.
/// `more_issuers` are other certificates its issuer may be among.
pub(crate) fn stapler(
    spec: &StaplingSpec,
    bare: Arc<CertifiedKey>,
    more_issuers: &[CertificateDer<'static>],
) -> Result<Stapler, String> {
    let leaf = &bare.cert[0];
    let facts = der::CertFacts::of(leaf);
    let subject_shown = facts.logged();
    let issuer_name = der::names(leaf).ok_or("unreadable certificate")?.issuer;
    let issuer = bare.cert[1..]
        .iter()
        .chain(more_issuers)
        .find_map(|c| der::names(c).filter(|n| n.subject == issuer_name));
    let Some(der::Names {
        subject: name,
        key_bits: Some(key_bits),
        ..
    }) = issuer
    else {
        return Err(format!(
            "AH02217: ssl_stapling_init_cert: can't retrieve issuer certificate! {subject_shown}"
        ));
    };
    let url = match (&spec.force_url, facts.ocsp_uri) {
        (Some(forced), _) => forced.clone(),
        (None, Some(uri)) => uri,
        (None, None) => {
            return Err(format!(
                "AH02218: ssl_stapling_init_cert: no OCSP URI in certificate and no SSLStaplingForceURL set {subject_shown}"
            ))
        }
    };
    let id = CertId {
        name_hash: sha1(&tlv(0x30, name)),
        key_hash: sha1(key_bits),
        serial: facts.serial_octets,
    };
    Ok(Stapler {
        current: RwLock::new(bare.clone()),
        bare,
        request: ocsp_request(&id),
        id,
        serial: facts.serial,
        url,
        spec: spec.clone(),
        kept: Mutex::new(None),
        refresh: tokio::sync::Mutex::new(()),
        log: OnceLock::new(),
    })
}

impl Stapler {
    /// What handshakes send now.
    pub(crate) fn current(&self) -> Arc<CertifiedKey> {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Where the fetch's errors are logged.
    pub(crate) fn set_log(&self, log: Arc<dyn Log>) {
        let _ = self.log.set(log);
    }

    /// An error-log line, about the handshake of `client` when given.
    fn error(&self, client: Option<SocketAddr>, message: &str) {
        if let Some(log) = self.log.get() {
            log.error("error", "ssl", client, message);
        }
    }

    /// Before a handshake with `client`: make [`Stapler::current`] what
    /// mod_ssl's status callback would send now, fetching a response if
    /// the kept one is missing or out of date.
    pub(crate) async fn prepare(&self, client: SocketAddr) {
        if let Some(done) = self.decide_kept(now()) {
            self.set_current(done);
            return;
        }
        let _refresh = self.refresh.lock().await;
        // Another handshake may have fetched it meanwhile.
        if let Some(done) = self.decide_kept(now()) {
            self.set_current(done);
            return;
        }
        let fetched = self.fetch(client).await;
        self.set_current(fetched);
    }

    fn set_current(&self, response: Option<Vec<u8>>) {
        let key = match response {
            Some(der) => Arc::new(CertifiedKey {
                ocsp: Some(der),
                ..(*self.bare).clone()
            }),
            None => self.bare.clone(),
        };
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = key;
    }

    /// The kept response's fate (`get_and_check_cached_response`): `Some`
    /// with what to send, or `None` when a fetch is needed.
    fn decide_kept(&self, now: i64) -> Option<Option<Vec<u8>>> {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let k = kept.as_ref().filter(|k| now < k.until)?;
        let decision = match self.acceptable(k.read, now) {
            true if k.valid_when_fetched || self.spec.return_errors => Decision::Staple,
            true => Decision::Nothing,
            // Valid when fetched, out of date now: fetch again at once.
            false if k.valid_when_fetched => Decision::Fetch,
            false if !self.spec.return_errors => Decision::Nothing,
            false => Decision::Staple,
        };
        match decision {
            Decision::Staple => Some(Some(k.der.clone())),
            Decision::Nothing => Some(None),
            Decision::Fetch => None,
        }
    }

    /// Whether a response may be sent (`stapling_check_response`'s
    /// answer other than `NOACK`).
    fn acceptable(&self, read: Read, now: i64) -> bool {
        match read {
            Read::Unsuccessful | Read::NotListed => self.spec.return_errors,
            Read::Unreadable => true,
            Read::Listed(entry) => self.in_date(entry, now),
        }
    }

    /// `OCSP_check_validity` with `SSLStaplingResponseTimeSkew` and
    /// `SSLStaplingResponseMaxAge`.
    fn in_date(&self, entry: Entry, now: i64) -> bool {
        let skew = i64::from(self.spec.time_skew);
        if entry.this_update > now + skew {
            return false;
        }
        if let Some(age) = self.spec.max_age {
            if now - i64::from(age) > entry.this_update {
                return false;
            }
        }
        match entry.next_update {
            Some(next) => next >= now - skew && next >= entry.this_update,
            None => true,
        }
    }

    /// Ask the responder (`stapling_renew_response`), keep what it
    /// answers, and return what the handshake sends.
    async fn fetch(&self, client: SocketAddr) -> Option<Vec<u8>> {
        let now = now();
        let target = match Target::parse(&self.url) {
            Ok(target) => target,
            Err(e) => {
                self.error(None, &e);
                return None;
            }
        };
        let limit = Duration::from_secs(u64::from(self.spec.responder_timeout));
        let answered = match target.post(&self.request, limit).await {
            Ok(body) => match read_response(&body, &self.id) {
                Some(got) => Some(got),
                None => {
                    self.error(Some(client), "AH01988: failed to decode OCSP response data");
                    None
                }
            },
            Err(e) => {
                self.error(Some(client), &e);
                None
            }
        };
        let (der, read) = match answered {
            Some(got) => got,
            None => {
                self.error(None, "AH01941: stapling_renew_response: responder error");
                if !self.spec.fake_try_later {
                    return None;
                }
                (TRY_LATER.to_vec(), Read::Unsuccessful)
            }
        };
        let valid = match read {
            Read::Listed(entry) => {
                let in_date = self.in_date(entry, now);
                if !in_date {
                    self.error(
                        None,
                        "AH01936: stapling_check_response: response times invalid",
                    );
                }
                if entry.status != CertStatus::Good {
                    self.error(
                        None,
                        &format!(
                            "AH02969: stapling_check_response: response has certificate status {} (reason: {}) for serial number {}",
                            entry.status.name(),
                            entry.reason.map_or("n/a", reason_name),
                            self.serial
                        ),
                    );
                }
                in_date
            }
            Read::NotListed => {
                self.error(
                    None,
                    "AH01935: stapling_check_response: certificate ID not present in response!",
                );
                false
            }
            Read::Unreadable => {
                self.error(
                    None,
                    "AH01934: stapling_check_response: Error Parsing Response!",
                );
                false
            }
            Read::Unsuccessful => false,
        };
        if !valid && read != Read::Unsuccessful {
            self.error(
                None,
                "AH01943: stapling_renew_response: error in retrieved response!",
            );
        }
        if der.len() > MAX_KEPT {
            self.error(
                None,
                &format!(
                    "AH01928: OCSP stapling response too big ({} bytes)",
                    der.len()
                ),
            );
        } else {
            let keep = if valid {
                self.spec.cache_timeout
            } else {
                self.spec.error_cache_timeout
            };
            *self.kept.lock().unwrap_or_else(|e| e.into_inner()) = Some(Kept {
                der: der.clone(),
                read,
                valid_when_fetched: valid,
                until: now + i64::from(keep),
            });
        }
        (valid || self.spec.return_errors).then_some(der)
    }
}

/// A responder's address, from an `http:` URL (the only scheme mod_ssl
/// fetches from).
#[derive(Debug)]
struct Target {
    host: String,
    port: u16,
    /// The URL's authority as written (`apr_uri_t`'s `hostinfo`), for logs.
    hostinfo: String,
    /// The path and query sent.
    path: String,
}

impl Target {
    fn parse(url: &str) -> Result<Target, String> {
        let unsupported = || format!("AH01940: stapling_renew_response: Unsupported uri {url}");
        let malformed = || format!("AH01939: stapling_renew_response: Error parsing uri {url}");
        let rest = url.strip_prefix("http://").ok_or_else(unsupported)?;
        let (hostinfo, path) = match rest.find(['/', '?']) {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let path = match path.strip_prefix('?') {
            Some(query) => format!("/?{query}"),
            None => path.to_string(),
        };
        let authority = hostinfo.rsplit('@').next().unwrap_or(hostinfo);
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => {
                (h, p.parse().map_err(|_| malformed())?)
            }
            _ => (authority, 80),
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err(malformed());
        }
        Ok(Target {
            host: host.to_string(),
            port,
            hostinfo: hostinfo.to_string(),
            path,
        })
    }

    /// `modssl_dispatch_ocsp_request`: POST the request, read the body
    /// of a 2xx answer up to the connection's close, each step within
    /// `limit` (`SSLStaplingResponderTimeout`). Errors are worded as
    /// mod_ssl logs them, the system's reason first.
    async fn post(&self, request: &[u8], limit: Duration) -> Result<Vec<u8>, String> {
        let timed_out = "(70007)The timeout specified has expired";
        let connect = tokio::net::TcpStream::connect((self.host.as_str(), self.port));
        let mut stream = match tokio::time::timeout(limit, connect).await {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => {
                return Err(format!(
                    "{}: AH01974: could not connect to OCSP responder '{}'",
                    os_error(&e),
                    self.hostinfo
                ))
            }
            Err(_) => {
                return Err(format!(
                    "{timed_out}: AH01974: could not connect to OCSP responder '{}'",
                    self.hostinfo
                ))
            }
        };
        let mut head = format!(
            "POST {} HTTP/1.0\r\nHost: {}:{}\r\nContent-Type: application/ocsp-request\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
            self.path,
            self.host,
            self.port,
            request.len()
        )
        .into_bytes();
        head.extend_from_slice(request);
        let sent = format!(
            "AH01976: failed to send request to OCSP responder '{}'",
            self.hostinfo
        );
        match tokio::time::timeout(limit, stream.write_all(&head)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(format!("{}: {sent}", os_error(&e))),
            Err(_) => return Err(format!("{timed_out}: {sent}")),
        }
        let mut answer = Vec::new();
        let mut bounded = (&mut stream).take((MAX_BODY + 64 * 1024) as u64);
        let read = bounded.read_to_end(&mut answer);
        let reading = "AH01985: error reading response from OCSP server";
        match tokio::time::timeout(limit, read).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(format!("{}: {reading}", os_error(&e))),
            Err(_) => return Err(format!("{timed_out}: {reading}")),
        }
        body_of(&answer)
    }
}

/// The body of an HTTP answer from a responder, if its status is 2xx
/// (`read_response`).
fn body_of(answer: &[u8]) -> Result<Vec<u8>, String> {
    let mut lines = answer.split_inclusive(|&b| b == b'\n');
    let status_line = lines.next().unwrap_or_default();
    let status_text = String::from_utf8_lossy(status_line);
    let status_text = status_text.trim_end_matches(['\r', '\n']);
    let code = status_text
        .strip_prefix("HTTP/")
        .and_then(|s| s.split_once(' '))
        .map(|(_, rest)| rest);
    let ok = code.is_some_and(|c| {
        let digits: String = c.chars().take_while(char::is_ascii_digit).collect();
        digits
            .parse::<u32>()
            .is_ok_and(|n| (200..=299).contains(&n))
    });
    if !ok {
        return Err(format!(
            "AH01980: bad response from OCSP server: {}",
            code.unwrap_or("(none)")
        ));
    }
    let mut offset = status_line.len();
    let mut count = 0;
    loop {
        let Some(line) = lines.next() else {
            return Err("AH01983: could not read response header from OCSP server".into());
        };
        offset += line.len();
        if line == b"\r\n" || line == b"\n" {
            break;
        }
        count += 1;
        if count == MAX_HEADERS {
            return Err(format!("AH01982: could not read response headers from OCSP server, exceeded maximum count ({MAX_HEADERS})"));
        }
    }
    let body = &answer[offset..];
    if body.len() > MAX_BODY {
        return Err(format!(
            "AH01986: OCSP response size exceeds {MAX_BODY} byte limit"
        ));
    }
    Ok(body.to_vec())
}

/// A DER `OCSPResponse` (the element alone, as `d2i_OCSP_RESPONSE`
/// reads it) and what it says of `id`; `None` if it is not one.
fn read_response(body: &[u8], id: &CertId) -> Option<(Vec<u8>, Read)> {
    let (tag, response, rest) = der::element(body)?;
    if tag != 0x30 {
        return None;
    }
    let der = body[..body.len() - rest.len()].to_vec();
    let (tag, status, after) = der::element(response)?;
    if tag != 0x0a || status.len() != 1 {
        return None;
    }
    if status[0] != SUCCESSFUL {
        return Some((der, Read::Unsuccessful));
    }
    let read = basic(after, id).unwrap_or(Read::Unreadable);
    Some((der, read))
}

/// The `responseBytes` of a successful response: a basic response, and
/// in it the entry for `id` (`OCSP_resp_find_status`).
fn basic(bytes: &[u8], id: &CertId) -> Option<Read> {
    let (tag, explicit, _) = der::element(bytes)?;
    if tag != 0xa0 {
        return None;
    }
    let (_, response_bytes, _) = der::element(explicit)?;
    let (_, kind, rest) = der::element(response_bytes)?;
    if kind != OCSP_BASIC {
        return None;
    }
    let (_, octets, _) = der::element(rest)?;
    let (_, basic, _) = der::element(octets)?;
    let (_, data, _) = der::element(basic)?;
    // The version ([0]) may come first; then responderID, producedAt.
    let (tag, _, rest) = der::element(data)?;
    let rest = if tag == 0xa0 {
        der::element(rest)?.2
    } else {
        rest
    };
    let (_, _produced_at, rest) = der::element(rest)?;
    let (_, mut responses, _) = der::element(rest)?;
    while !responses.is_empty() {
        let (_, single, more) = der::element(responses)?;
        responses = more;
        let (_, cert_id, rest) = der::element(single)?;
        if !same_cert(cert_id, id)? {
            continue;
        }
        let (status_tag, revoked, rest) = der::element(rest)?;
        let status = match status_tag {
            0x80 => CertStatus::Good,
            0xa1 => CertStatus::Revoked,
            _ => CertStatus::Unknown,
        };
        // RevokedInfo: revocationTime, then `[0] EXPLICIT CRLReason`.
        let reason = match der::element(revoked).map(|(_, _, after)| der::element(after)) {
            Some(Some((0xa0, wrapped, _))) if status == CertStatus::Revoked => {
                der::element(wrapped).and_then(|(_, r, _)| r.first().copied())
            }
            _ => None,
        };
        let (time_tag, this_update, rest) = der::element(rest)?;
        let this_update = der::time(time_tag, this_update)?;
        let next_update = match der::element(rest) {
            Some((0xa0, wrapped, _)) => {
                let (tag, t, _) = der::element(wrapped)?;
                Some(der::time(tag, t)?)
            }
            _ => None,
        };
        return Some(Read::Listed(Entry {
            status,
            reason,
            this_update,
            next_update,
        }));
    }
    Some(Read::NotListed)
}

/// Whether a response's `CertID` names the certificate (`OCSP_id_cmp`:
/// the hash algorithm, both hashes and the serial number).
fn same_cert(cert_id: &[u8], id: &CertId) -> Option<bool> {
    let (_, algorithm, rest) = der::element(cert_id)?;
    let (_, oid, _) = der::element(algorithm)?;
    let (_, name_hash, rest) = der::element(rest)?;
    let (_, key_hash, rest) = der::element(rest)?;
    let (_, serial, _) = der::element(rest)?;
    Some(oid == SHA1 && name_hash == id.name_hash && key_hash == id.key_hash && serial == id.serial)
}

/// The DER `OCSPRequest` for one certificate, without extensions.
fn ocsp_request(id: &CertId) -> Vec<u8> {
    let algorithm = tlv(0x30, &[tlv(0x06, SHA1), tlv(0x05, &[])].concat());
    let cert_id = tlv(
        0x30,
        &[
            algorithm,
            tlv(0x04, &id.name_hash),
            tlv(0x04, &id.key_hash),
            tlv(0x02, &id.serial),
        ]
        .concat(),
    );
    let request = tlv(0x30, &cert_id);
    let request_list = tlv(0x30, &request);
    let tbs_request = tlv(0x30, &request_list);
    tlv(0x30, &tbs_request)
}

/// One DER element.
fn tlv(tag: u8, contents: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = contents.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = len.to_be_bytes();
        let skip = bytes.iter().take_while(|b| **b == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(contents);
    out
}

/// `OCSP_crl_reason_str`.
fn reason_name(code: u8) -> &'static str {
    match code {
        0 => "unspecified",
        1 => "keyCompromise",
        2 => "cACompromise",
        3 => "affiliationChanged",
        4 => "superseded",
        5 => "cessationOfOperation",
        6 => "certificateHold",
        8 => "removeFromCRL",
        9 => "privilegeWithdrawn",
        10 => "aACompromise",
        _ => "(UNKNOWN)",
    }
}

fn sha1(data: &[u8]) -> Vec<u8> {
    ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, data)
        .as_ref()
        .to_vec()
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// For the fuzz target: read `data` as a responder's HTTP answer, and
/// as a DER response by itself, as [`Stapler::prepare`] reads them.
pub(crate) fn read_untrusted(data: &[u8]) {
    let id = CertId {
        name_hash: vec![0; 20],
        key_hash: vec![0; 20],
        serial: vec![1],
    };
    if let Ok(body) = body_of(data) {
        let _ = read_response(&body, &id);
    }
    let _ = read_response(data, &id);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id() -> CertId {
        CertId {
            name_hash: vec![1; 20],
            key_hash: vec![2; 20],
            serial: vec![0x1f, 0x03],
        }
    }

    /// A basic response listing `id` with `status`, as a responder
    /// builds it (the signature is not read, so it is left empty).
    fn response(id: &CertId, status: &[u8], next_update: Option<&str>) -> Vec<u8> {
        let cert_id = &der::element(&ocsp_request(id))
            .and_then(|(_, r, _)| der::element(r))
            .and_then(|(_, t, _)| der::element(t))
            .and_then(|(_, l, _)| der::element(l))
            .map(|(_, req, _)| req.to_vec())
            .unwrap();
        let mut single = [cert_id.as_slice(), status, &tlv(0x18, b"20261130000000Z")].concat();
        if let Some(next) = next_update {
            single.extend(tlv(0xa0, &tlv(0x18, next.as_bytes())));
        }
        let data = tlv(
            0x30,
            &[
                tlv(0xa2, &tlv(0x04, &[9; 20])),
                tlv(0x18, b"20261130000000Z"),
                tlv(0x30, &tlv(0x30, &single)),
            ]
            .concat(),
        );
        let basic = tlv(0x30, &[data, tlv(0x30, &[]), tlv(0x03, &[0])].concat());
        let bytes = tlv(
            0xa0,
            &tlv(0x30, &[tlv(0x06, OCSP_BASIC), tlv(0x04, &basic)].concat()),
        );
        tlv(0x30, &[tlv(0x0a, &[0]), bytes].concat())
    }

    #[test]
    fn a_listed_certificate_is_read_with_its_status_and_dates() {
        let good = response(&id(), &tlv(0x80, &[]), Some("20261207000000Z"));
        let (der, read) = read_response(&good, &id()).unwrap();
        assert_eq!(der, good);
        assert_eq!(
            read,
            Read::Listed(Entry {
                status: CertStatus::Good,
                reason: None,
                this_update: 1_795_996_800,
                next_update: Some(1_795_996_800 + 7 * 86_400),
            })
        );
        let revoked = response(&id(), &tlv(0xa1, &tlv(0x18, b"20261101000000Z")), None);
        assert!(matches!(
            read_response(&revoked, &id()).unwrap().1,
            Read::Listed(Entry {
                status: CertStatus::Revoked,
                next_update: None,
                ..
            })
        ));
        let other = CertId {
            serial: vec![5],
            ..id()
        };
        assert_eq!(read_response(&good, &other).unwrap().1, Read::NotListed);
    }

    #[test]
    fn unsuccessful_and_malformed_responses() {
        assert_eq!(
            read_response(&TRY_LATER, &id()),
            Some((TRY_LATER.to_vec(), Read::Unsuccessful))
        );
        assert_eq!(read_response(b"<html>", &id()), None);
        assert_eq!(read_response(&[0x30, 0x03, 0x0a, 0x01], &id()), None);
        let bare_success = tlv(0x30, &tlv(0x0a, &[0]));
        assert_eq!(
            read_response(&bare_success, &id()).unwrap().1,
            Read::Unreadable
        );
    }

    #[test]
    fn the_request_names_the_certificate_by_sha1_hashes() {
        let req = ocsp_request(&id());
        // OCSPRequest { tbsRequest { requestList { Request { CertID } } } }
        assert_eq!(&req[..2], &[0x30, 0x43]);
        assert!(req.windows(SHA1.len()).any(|w| w == SHA1));
        assert!(req.ends_with(&[0x02, 0x02, 0x1f, 0x03]));
        assert_eq!(tlv(0x04, &[0; 200])[..3], [0x04, 0x81, 200]);
        assert_eq!(tlv(0x04, &[0; 300])[..4], [0x04, 0x82, 0x01, 0x2c]);
    }

    #[test]
    fn responder_urls_as_mod_ssl_reads_them() {
        let t = Target::parse("http://ocsp.example.com").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str()),
            ("ocsp.example.com", 80, "/")
        );
        let t = Target::parse("http://127.0.0.1:8888/ocsp?x=1").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str()),
            ("127.0.0.1", 8888, "/ocsp?x=1")
        );
        let t = Target::parse("http://[::1]:81").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("::1", 81));
        assert!(Target::parse("https://ocsp.example.com/")
            .unwrap_err()
            .contains("AH01940"));
        assert!(Target::parse("http://:80/")
            .unwrap_err()
            .contains("AH01939"));
    }

    #[test]
    fn answers_other_than_2xx_are_errors() {
        let body =
            body_of(b"HTTP/1.0 200 OK\r\nContent-Type: application/ocsp-response\r\n\r\n\x30\x03")
                .unwrap();
        assert_eq!(body, b"\x30\x03");
        assert!(body_of(b"HTTP/1.1 404 Not Found\r\n\r\n")
            .unwrap_err()
            .contains("AH01980: bad response from OCSP server: 404 Not Found"));
        assert!(body_of(b"SSH-2.0\r\n").unwrap_err().contains("(none)"));
        assert!(body_of(b"HTTP/1.0 200 OK\r\nX: y\r\n")
            .unwrap_err()
            .contains("AH01983"));
    }
}
