//! A managed domain as mod_md's status describes it (`md_to_public_json`
//! and `status_get_md_json`): one JSON value, in mod_md's key order, from
//! which the `md-status` handler, `/.httpd/certificate-status` and the
//! server-status section all read, as mod_md's three pages read its one
//! description.
//!
//! What differs from mod_md follows from htaccel installing a new
//! certificate at once: there is no staging area, so a renewal that
//! succeeded is the domain's certificate, never a `renewal.cert` waiting
//! for a restart; `renewal` appears while a renewal is due and has been
//! tried, as mod_md's job does.

use crate::http::md::{
    renew_at, states, CertState, DomainState, KeySpec, ManagedDomain, RequireHttps, Window,
};
use serde_json::{json, Map, Value};

/// mod_md's `md_state_t`.
const MD_S_INCOMPLETE: i64 = 1;
const MD_S_COMPLETE: i64 = 2;

/// An HTTP date (`apr_rfc822_date`), as mod_md writes its times.
pub fn date(secs: i64) -> String {
    crate::http::date::fmt_http_date(secs.max(0))
}

/// `md_timeslice_format`.
fn window(w: Window) -> String {
    match w {
        Window::Percent(p) => format!("{p}%"),
        Window::Fixed(d) => {
            let s = d.as_secs();
            if s % 86_400 == 0 {
                format!("{}d", s / 86_400)
            } else if s % 3600 == 0 {
                format!("{}h", s / 3600)
            } else if s % 60 == 0 {
                format!("{}mi", s / 60)
            } else {
                format!("{s}s")
            }
        }
    }
}

fn period(from: i64, until: i64) -> Value {
    json!({ "from": date(from), "until": date(until) })
}

/// `md_pkey_spec_to_json`.
fn key_spec(k: &KeySpec) -> Value {
    json!({ "type": "EC", "curve": k.name() })
}

/// The state of `md` now (a copy: the certificate manager writes it).
pub fn state_of(md: &ManagedDomain) -> DomainState {
    let all = states().read().unwrap_or_else(|e| e.into_inner());
    all.get(&md.name).cloned().unwrap_or_default()
}

/// The certificates in use, by key type: the temporary one is none.
fn real_certs<'s>(md: &ManagedDomain, s: &'s DomainState) -> Vec<(&'s str, &'s CertState)> {
    md.keys
        .iter()
        .filter_map(|k| {
            s.certs
                .iter()
                .find(|(name, c)| name == k.name() && !c.fallback)
                .map(|(name, c)| (name.as_str(), c))
        })
        .collect()
}

/// `status_get_cert_json_ex`.
fn cert_json(c: &CertState) -> Value {
    let mut o = Map::new();
    o.insert("issuer-name".into(), c.issuer_name.clone().into());
    if let Some(uri) = &c.issuer_uri {
        o.insert("issuer-uri".into(), uri.clone().into());
    }
    o.insert("valid".into(), period(c.valid_from, c.valid_until));
    o.insert("serial".into(), c.serial.clone().into());
    o.insert(
        "sha256-fingerprint".into(),
        c.sha256_fingerprint.clone().into(),
    );
    if let Some(id) = &c.ari_cert_id {
        o.insert("ari-cert-id".into(), id.clone().into());
    }
    Value::Object(o)
}

/// `status_get_certs_json`: each certificate by key type, then the span
/// in which all of them are valid.
fn certs_json(certs: &[(&str, &CertState)]) -> Value {
    let mut o = Map::new();
    for (name, c) in certs {
        o.insert((*name).into(), cert_json(c));
    }
    let from = certs.iter().map(|(_, c)| c.valid_from).max();
    let until = certs.iter().map(|(_, c)| c.valid_until).min();
    if let (Some(from), Some(until)) = (from, until) {
        o.insert("valid".into(), period(from, until));
    }
    Value::Object(o)
}

/// `md_state_t` and its description (`state_init`): complete when every
/// key type has its certificate, else the first one missing.
fn state(md: &ManagedDomain, certs: &[(&str, &CertState)]) -> (i64, Option<String>) {
    match md
        .keys
        .iter()
        .find(|k| !certs.iter().any(|(n, _)| *n == k.name()))
    {
        Some(k) => (
            MD_S_INCOMPLETE,
            Some(format!("certificate({}) is missing", k.name())),
        ),
        None => (MD_S_COMPLETE, None),
    }
}

/// The job of a due renewal that has been tried (`md_job_t` as JSON).
fn renewal(md: &ManagedDomain, s: &DomainState) -> Option<Value> {
    let last_run = s.last_run?;
    let mut o = Map::new();
    o.insert("name".into(), md.name.clone().into());
    o.insert("finished".into(), false.into());
    o.insert("notified".into(), false.into());
    o.insert("notified-renewed".into(), false.into());
    if let Some(next) = s.next_run {
        o.insert("next-run".into(), date(next).into());
    }
    o.insert("last-run".into(), date(last_run).into());
    o.insert("errors".into(), s.errors.into());
    if let Some(f) = &s.last_failure {
        let mut last = Map::new();
        last.insert("status".into(), f.status.into());
        last.insert("status-description".into(), f.description().into());
        if let Some(p) = &f.problem {
            last.insert("problem".into(), p.clone().into());
        }
        if let Some(detail) = &s.last_error {
            last.insert("detail".into(), detail.clone().into());
        }
        o.insert("last".into(), Value::Object(last));
    }
    o.insert("cert".into(), Value::Object(Map::new()));
    Some(Value::Object(o))
}

/// One managed domain, as `md-status` and the status section show it.
pub fn domain(md: &ManagedDomain, now: i64) -> Value {
    let s = state_of(md);
    let certs = real_certs(md, &s);
    let (state, descr) = state(md, &certs);
    let mut o = Map::new();
    o.insert("name".into(), md.name.clone().into());
    o.insert("domains".into(), md.domains.clone().into());
    let contacts: Vec<String> = md
        .contact
        .iter()
        .map(|c| format!("mailto:{}", c.trim_start_matches("mailto:")))
        .collect();
    o.insert("contacts".into(), contacts.into());
    o.insert("transitive".into(), i64::from(md.shown.transitive).into());
    let mut ca = Map::new();
    ca.insert("proto".into(), "ACME".into());
    ca.insert("urls".into(), vec![md.ca_url.clone()].into());
    if let Some(a) = &md.shown.agreement {
        ca.insert("agreement".into(), a.clone().into());
    }
    if !md.shown.challenges.is_empty() {
        let names: Vec<&str> = md.shown.challenges.iter().map(|c| c.name()).collect();
        ca.insert("challenges".into(), names.into());
    }
    o.insert("ca".into(), Value::Object(ca));
    let keys: Vec<Value> = md.keys.iter().map(key_spec).collect();
    o.insert(
        "privkey".into(),
        match <[Value; 1]>::try_from(keys) {
            Ok([one]) => one,
            Err(keys) => keys.into(),
        },
    );
    o.insert("state".into(), state.into());
    if let Some(d) = descr {
        o.insert("state-descr".into(), d.into());
    }
    o.insert("renew-mode".into(), i64::from(md.renew_auto).into());
    o.insert("renew-window".into(), window(md.renew_window).into());
    o.insert("warn-window".into(), window(md.warn_window).into());
    match md.require_https {
        RequireHttps::Off => {}
        RequireHttps::Temporary => {
            o.insert("require-https".into(), "temporary".into());
        }
        RequireHttps::Permanent => {
            o.insert("require-https".into(), "permanent".into());
        }
    }
    o.insert("must-staple".into(), false.into());
    o.insert("proto".into(), json!({ "acme-tls/1": md.acme_tls_1 }));
    o.insert("stapling".into(), false.into());
    o.insert("profile-mandatory".into(), false.into());
    o.insert("ari-renewals".into(), true.into());
    o.insert("cert".into(), certs_json(&certs));
    let at = renew_at(md, &s, now);
    o.insert("renew-at".into(), date(at).into());
    o.insert("watched".into(), md.shown.watched.into());
    if at <= now {
        o.insert("renew".into(), true.into());
        if let Some(job) = renewal(md, &s) {
            o.insert("renewal".into(), job);
        }
    }
    Value::Object(o)
}

/// Every managed domain, by name (`md_status_get_json`).
pub fn all(mds: &[std::sync::Arc<ManagedDomain>], now: i64) -> Value {
    let mut sorted: Vec<&ManagedDomain> = mds.iter().map(|m| &**m).collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let list: Vec<Value> = sorted.iter().map(|m| domain(m, now)).collect();
    // mod_md gives its own version; this is htaccel's.
    json!({ "version": env!("CARGO_PKG_VERSION"), "managed-domains": list })
}

/// What `/.httpd/certificate-status` makes public (`md_http_cert_status`):
/// the validity, each key type's certificate (validity, serial,
/// fingerprint), and whether a renewal is under way.
pub fn certificate_status(md: &ManagedDomain, now: i64) -> Value {
    let full = domain(md, now);
    let mut o = Map::new();
    if let Some(valid) = full.pointer("/cert/valid") {
        o.insert("valid".into(), valid.clone());
    }
    for k in &md.keys {
        let mut c = Map::new();
        if let Some(cert) = full.get("cert").and_then(|c| c.get(k.name())) {
            for key in ["valid", "serial", "sha256-fingerprint"] {
                if let Some(v) = cert.get(key) {
                    c.insert(key.into(), v.clone());
                }
            }
        }
        o.insert(k.name().into(), Value::Object(c));
    }
    if let Some(job) = full.get("renewal") {
        let cert = job
            .get("cert")
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new()));
        o.insert("renewal".into(), json!({ "cert": cert }));
    }
    Value::Object(o)
}

/// JSON as mod_md writes it (`MD_JSON_FMT_INDENT`: two spaces).
pub fn text(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}
