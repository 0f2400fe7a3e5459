//! The certificate manager: for each managed domain whose certificate is
//! missing (the fallback is in use) or inside its renew window, an ACME
//! order (instant-acme), its challenges answered (`http-01` through the
//! store, which the engine serves; `tls-alpn-01` through the handshake),
//! the certificate stored and put live. A failure is logged in the error
//! log and retried after `MDRetryDelay`, doubled with each further failure
//! up to a day, as mod_md backs off; the certificate in use stays.
//!
//! It runs on a thread of its own with a single-threaded tokio runtime, so
//! no worker ever waits for the CA.

use super::{store, CertCell};
use htaccel_engine::http::md::{Challenge, KeySpec, ManagedDomain};
use htaccel_engine::http::Log;
use instant_acme::{
    Account, AccountCredentials, AuthorizationStatus, ChallengeType, ExternalAccountKey,
    Identifier, NewAccount, NewOrder, OrderStatus, RetryPolicy,
};
use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// The shortest time between two `errored` messages (mod_md's rate).
const ERRORED_INTERVAL: Duration = Duration::from_secs(3600);

/// The longest wait between two attempts after failures.
const MAX_RETRY_DELAY: Duration = Duration::from_secs(86_400);

/// Start managing `domains` (those not already managed by this process:
/// a reload keeps the running manager of a domain). Errors are logged to
/// `log`.
pub fn start(domains: &[Arc<ManagedDomain>], log: Arc<dyn Log>) {
    static STARTED: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    let started = STARTED.get_or_init(Default::default);
    let mut todo = Vec::new();
    {
        let mut started = started.lock().unwrap_or_else(|e| e.into_inner());
        for md in domains {
            if md.renew_auto && md.shown.watched && started.insert(md.name.clone()) {
                todo.push(md.clone());
            }
        }
    }
    if todo.is_empty() {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("md-renew".into())
        .spawn(move || {
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    log.error("error", "md", None, &format!("certificate manager: {e}"));
                    return;
                }
            };
            rt.block_on(async move {
                let mut tasks = Vec::new();
                for md in todo {
                    tasks.push(tokio::spawn(drive(md, log.clone())));
                }
                for t in tasks {
                    let _ = t.await;
                }
            });
        });
    if let Err(e) = spawned {
        eprintln!("htaccel: cannot start the certificate manager: {e}");
    }
}

/// When a certificate needs renewing: the start of its renew window, or
/// now for a fallback certificate.
fn renew_at(md: &ManagedDomain, cell: &CertCell) -> i64 {
    let live = cell.get();
    if live.fallback {
        return 0;
    }
    let lifetime = (live.facts.not_after - live.facts.not_before).max(0) as u64;
    let window = md.renew_window.length(Duration::from_secs(lifetime));
    live.facts.not_after - window.as_secs() as i64
}

/// `MDWarnWindow`: once per certificate, a warning when it enters its
/// last stretch (renewal has been failing, or is not automatic).
fn warn_if_due(
    md: &ManagedDomain,
    key: &KeySpec,
    cell: &CertCell,
    warned: &mut HashSet<String>,
    log: &Arc<dyn Log>,
) {
    let live = cell.get();
    if live.fallback {
        return;
    }
    let lifetime = (live.facts.not_after - live.facts.not_before).max(0) as u64;
    let window = md.warn_window.length(Duration::from_secs(lifetime));
    let left = live.facts.not_after - super::now();
    if left <= window.as_secs() as i64 && warned.insert(live.facts.serial.clone()) {
        message(md, "expiring", log);
        log.error(
            "warn",
            "md",
            None,
            &format!(
                "AH10052: The certificate ({}) for the Managed Domain {} expires in {}s (MDWarnWindow)",
                key.name(),
                md.name,
                left.max(0)
            ),
        );
    }
}

/// One domain's life: wait until a certificate needs renewing, renew,
/// and on failure wait and try again.
async fn drive(md: Arc<ManagedDomain>, log: Arc<dyn Log>) {
    let mut failures: u32 = 0;
    let mut warned: HashSet<String> = HashSet::new();
    let mut last_errored = None;
    loop {
        let mut due = Vec::new();
        let mut next = super::now() + md.check_interval.as_secs() as i64;
        for key in &md.keys {
            let cell = match super::cell(&md, key) {
                Ok(c) => c,
                Err(e) => {
                    log.error("error", "md", None, &format!("{}: {e}", md.name));
                    return;
                }
            };
            warn_if_due(&md, key, &cell, &mut warned, &log);
            let at = renew_at(&md, &cell);
            if at <= super::now() {
                due.push((key.clone(), cell));
            } else {
                next = next.min(at);
            }
        }
        report(&md, |s| {
            s.next_run = Some(if due.is_empty() { next } else { super::now() });
            s.renewing = !due.is_empty();
            if !due.is_empty() {
                s.last_run = Some(super::now());
            }
        });
        if due.is_empty() {
            let wait = (next - super::now()).max(1) as u64;
            tokio::time::sleep(Duration::from_secs(wait)).await;
            continue;
        }
        match renew(&md, &due, &log).await {
            Ok(()) => {
                failures = 0;
                if let Some(cmd) = &md.notify_cmd {
                    run_command("MDNotifyCmd", cmd, &[&md.name], &log);
                }
                message(&md, "renewed", &log);
                report(&md, |s| {
                    s.errors = 0;
                    s.last_error = None;
                    s.last_failure = None;
                    s.renewing = false;
                });
                // A window longer than the certificates live would renew
                // them at once, again and again: once per check instead.
                if due
                    .iter()
                    .all(|(_, cell)| renew_at(&md, cell) <= super::now())
                {
                    log.error(
                        "warn",
                        "md",
                        None,
                        &format!(
                            "{}: MDRenewWindow is longer than the new certificate's lifetime; renewing again after MDCheckInterval ({})",
                            md.name,
                            describe(md.check_interval)
                        ),
                    );
                    tokio::time::sleep(md.check_interval).await;
                }
            }
            Err(e) => {
                failures += 1;
                let delay = md
                    .retry_delay
                    .saturating_mul(1u32 << (failures - 1).min(20))
                    .min(MAX_RETRY_DELAY);
                // As mod_md, at most one `errored` message an hour.
                if last_errored.is_none_or(|t: std::time::Instant| t.elapsed() >= ERRORED_INTERVAL)
                {
                    last_errored = Some(std::time::Instant::now());
                    message(&md, "errored", &log);
                }
                report(&md, |s| {
                    s.errors = failures;
                    s.last_failure = Some(htaccel_engine::http::md::Failure::of(&e));
                    s.last_error = Some(e.clone());
                    s.next_run = Some(super::now() + delay.as_secs() as i64);
                });
                log.error(
                    "error",
                    "md",
                    None,
                    &format!(
                        "AH10056: processing {}: {e}; attempt {failures} failed, next attempt in {}",
                        md.name,
                        describe(delay)
                    ),
                );
                tokio::time::sleep(delay).await;
            }
        }
    }
}

/// Tell `md-status` the domain's certificates and `change`.
fn report(md: &ManagedDomain, change: impl FnOnce(&mut htaccel_engine::http::md::DomainState)) {
    let certs: Vec<_> = md
        .keys
        .iter()
        .filter_map(|key| {
            let live = super::cell(md, key).ok()?.get();
            Some((key.name().to_string(), cert_state(&live)))
        })
        .collect();
    htaccel_engine::http::md::update_state(&md.name, |s| {
        s.certs = certs;
        change(s);
    });
}

/// What mod_md's status shows of a certificate (`status_get_cert_json`).
fn cert_state(live: &super::Live) -> htaccel_engine::http::md::CertState {
    let facts = &live.facts;
    let der = live.key.cert.first().map_or(&[][..], |c| c.as_ref());
    let fingerprint = ring::digest::digest(&ring::digest::SHA256, der);
    let base64url = |b: &[u8]| {
        htaccel_engine::http::digest::base64(b)
            .trim_end_matches('=')
            .replace('+', "-")
            .replace('/', "_")
    };
    htaccel_engine::http::md::CertState {
        valid_from: facts.not_before,
        valid_until: facts.not_after,
        serial: facts.serial.clone(),
        issuer_name: facts.issuer_oneline.clone(),
        issuer_uri: facts.issuer_uri.clone(),
        sha256_fingerprint: fingerprint
            .as_ref()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
        ari_cert_id: facts
            .authority_key_id
            .as_ref()
            .map(|key| format!("{}.{}", base64url(key), base64url(&facts.serial_octets))),
        fallback: live.fallback,
    }
}

/// `MDMessageCmd CMD… REASON DOMAIN`.
fn message(md: &ManagedDomain, reason: &str, log: &Arc<dyn Log>) {
    if let Some(cmd) = &md.message_cmd {
        run_command("MDMessageCmd", cmd, &[reason, &md.name], log);
    }
}

/// Run a configured command with `extra` arguments and wait for it; a
/// failure is logged as mod_md logs it (AH10108, AH10109).
fn run_command(directive: &str, argv: &[String], extra: &[&str], log: &Arc<dyn Log>) {
    let code = if directive == "MDNotifyCmd" {
        "AH10108"
    } else {
        "AH10109"
    };
    let status = std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .args(extra)
        .stdin(std::process::Stdio::null())
        .status();
    let failure = match status {
        Ok(s) if s.success() => return,
        Ok(s) => format!("failed with exit code {}", s.code().unwrap_or(-1)),
        Err(e) => format!("could not be run: {e}"),
    };
    log.error(
        "error",
        "md",
        None,
        &format!("{code}: {directive} {} {failure}.", argv.join(" ")),
    );
}

fn describe(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h {}mi", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{}mi {}s", s / 60, s % 60)
    } else {
        format!("{}.{:03}s", s, d.subsec_millis())
    }
}

/// The CA's account: the one in the store for this CA, else a new one
/// (kept in the store).
async fn account(md: &ManagedDomain) -> Result<Account, String> {
    let builder = || match &md.ca_cert_file {
        Some(roots) => Account::builder_with_root(roots)
            .map_err(|e| format!("MDCACertificateFile {}: {e}", roots.display())),
        None => Account::builder().map_err(|e| format!("HTTPS client: {e}")),
    };
    let host = md
        .ca_url
        .split("://")
        .nth(1)
        .and_then(|r| r.split(['/', ':']).next())
        .unwrap_or("ca");
    let dir = md
        .store_dir
        .join("accounts")
        .join(format!("ACME-{host}-0000"));
    let file = dir.join("htaccel-account.json");
    if let Ok(text) = std::fs::read(&file) {
        if let Ok((url, creds)) = serde_json::from_slice::<(String, AccountCredentials)>(&text) {
            if url == md.ca_url {
                return builder()?
                    .from_credentials(creds)
                    .await
                    .map_err(|e| format!("account at {}: {e}", md.ca_url));
            }
        }
    }
    let contact = md.contact.as_ref().map(|c| {
        if c.starts_with("mailto:") {
            c.clone()
        } else {
            format!("mailto:{c}")
        }
    });
    let contacts: Vec<&str> = contact.iter().map(String::as_str).collect();
    let eab = match &md.eab {
        Some((kid, hmac)) => Some(ExternalAccountKey::new(
            kid.clone(),
            &htaccel_engine::http::digest::base64url_decode(hmac)
                .ok_or("MDExternalAccountBinding: the HMAC is not base64url")?,
        )),
        None => None,
    };
    let (account, creds) = builder()?
        .create(
            &NewAccount {
                contact: &contacts,
                terms_of_service_agreed: md.agreement,
                only_return_existing: false,
            },
            md.ca_url.clone(),
            eab.as_ref(),
        )
        .await
        .map_err(|e| format!("new account at {}: {e}", md.ca_url))?;
    let json = serde_json::to_vec(&(&md.ca_url, &creds)).map_err(|e| e.to_string())?;
    store::private_dir(&dir)?;
    store::write_private(&file, &json)?;
    Ok(account)
}

/// Obtain a certificate for each of `due`'s key types and put it live.
async fn renew(
    md: &ManagedDomain,
    due: &[(KeySpec, Arc<CertCell>)],
    log: &Arc<dyn Log>,
) -> Result<(), String> {
    if md.challenges.is_empty() {
        return Err("AH10173: None of the ACME challenge methods configured for this domain are suitable: http-01 needs a Listen on port 80 (or the port MDPortMap http:PORT names), tls-alpn-01 one on 443 (or MDPortMap https:PORT)".into());
    }
    let account = account(md).await?;
    for (key, cell) in due {
        let chain_and_key = order(md, &account, key).await;
        cleanup_challenges(md);
        let (chain, key_pem) = chain_and_key?;
        let live = super::live(chain.as_bytes(), key_pem.as_bytes(), false)
            .map_err(|e| format!("the issued certificate: {e}"))?;
        store::save(md, key, &chain, &key_pem)?;
        let until = live.facts.not_after;
        cell.set(live);
        log.error(
            "notice",
            "md",
            None,
            &format!(
                "AH10059: The Managed Domain {} has been setup and its new {} certificate is in use (valid until {} seconds since the epoch)",
                md.name,
                key.name(),
                until
            ),
        );
    }
    Ok(())
}

/// One order: authorizations, challenges, finalization, download.
async fn order(
    md: &ManagedDomain,
    account: &Account,
    key: &KeySpec,
) -> Result<(String, String), String> {
    let identifiers: Vec<Identifier> = md
        .domains
        .iter()
        .map(|d| Identifier::Dns(d.clone()))
        .collect();
    let mut order = account
        .new_order(&NewOrder::new(&identifiers))
        .await
        .map_err(|e| format!("new order: {e}"))?;
    let mut authorizations = order.authorizations();
    while let Some(authz) = authorizations.next().await {
        let mut authz = authz.map_err(|e| format!("authorization: {e}"))?;
        match authz.status {
            AuthorizationStatus::Pending => {}
            AuthorizationStatus::Valid => continue,
            other => return Err(format!("authorization is {other:?}")),
        }
        let offered: Vec<ChallengeType> =
            authz.challenges.iter().map(|c| c.r#type.clone()).collect();
        let name = authz.identifier().to_string();
        // mod_md answers tls-alpn-01 only where the HTTPS server allows
        // the acme-tls/1 protocol.
        let usable = |c: &&Challenge| {
            **c != Challenge::TlsAlpn01
                || md.acme_tls_1.iter().any(|d| d.eq_ignore_ascii_case(&name))
        };
        let chosen = md
            .challenges
            .iter()
            .filter(usable)
            .map(|c| match c {
                Challenge::Http01 => ChallengeType::Http01,
                Challenge::TlsAlpn01 => ChallengeType::TlsAlpn01,
            })
            .find(|t| offered.contains(t))
            .ok_or_else(|| {
                format!(
                    "none of the challenge types offered for {name} can be used: MDCAChallenges allows {}{}",
                    md.challenges
                        .iter()
                        .map(|c| c.name())
                        .collect::<Vec<_>>()
                        .join(" "),
                    if md.challenges.contains(&Challenge::TlsAlpn01) {
                        " (tls-alpn-01 needs `Protocols … acme-tls/1` on the name's HTTPS virtual host)"
                    } else {
                        ""
                    }
                )
            })?;
        let mut challenge = authz
            .challenge(chosen.clone())
            .ok_or("challenge vanished")?;
        let host = challenge.identifier().to_string();
        let key_auth = challenge.key_authorization();
        match chosen {
            ChallengeType::Http01 => {
                let file = md.http01_file(&host);
                if let Some(dir) = file.parent() {
                    std::fs::DirBuilder::new()
                        .recursive(true)
                        .create(dir)
                        .map_err(|e| format!("{}: {e}", dir.display()))?;
                }
                store::write_mode(&file, key_auth.as_str().as_bytes(), 0o644)?;
            }
            _ => {
                let digest = key_auth.digest();
                super::alpn::insert(&host, digest.as_ref())?;
            }
        }
        challenge
            .set_ready()
            .await
            .map_err(|e| format!("challenge {} for {host}: {e}", chosen_name(&chosen)))?;
    }
    let retries = RetryPolicy::default().timeout(Duration::from_secs(60));
    let status = order
        .poll_ready(&retries)
        .await
        .map_err(|e| format!("waiting for the order: {e}"))?;
    if status != OrderStatus::Ready {
        return Err(order_problem(&mut order, status).await);
    }
    let pair = store::new_key(key.curve)?;
    let mut params =
        rcgen::CertificateParams::new(md.domains.clone()).map_err(|e| e.to_string())?;
    params.distinguished_name = rcgen::DistinguishedName::new();
    let csr = params.serialize_request(&pair).map_err(|e| e.to_string())?;
    order
        .finalize_csr(csr.der())
        .await
        .map_err(|e| format!("finalize: {e}"))?;
    let chain = order
        .poll_certificate(&retries)
        .await
        .map_err(|e| format!("certificate download: {e}"))?;
    Ok((chain, pair.serialize_pem()))
}

fn chosen_name(t: &ChallengeType) -> &'static str {
    match t {
        ChallengeType::Http01 => "http-01",
        ChallengeType::TlsAlpn01 => "tls-alpn-01",
        _ => "?",
    }
}

/// Why an order did not become ready: the failed challenges' problems.
async fn order_problem(order: &mut instant_acme::Order, status: OrderStatus) -> String {
    let mut reasons = Vec::new();
    if let Some(p) = &order.state().error {
        reasons.push(p.to_string());
    }
    let mut authorizations = order.authorizations();
    while let Some(Ok(authz)) = authorizations.next().await {
        for c in &authz.challenges {
            if let Some(p) = &c.error {
                reasons.push(format!("{}: {p}", chosen_name(&c.r#type)));
            }
        }
    }
    format!("the order is {status:?}: {}", reasons.join("; "))
}

/// Remove the answers to challenges once an order is over.
fn cleanup_challenges(md: &ManagedDomain) {
    for host in &md.domains {
        let _ = std::fs::remove_file(md.http01_file(host));
        super::alpn::remove(host);
    }
}
