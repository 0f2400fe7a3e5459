//! `SetHandler md-status`: the managed domains and their certificates as
//! JSON, in the shape of mod_md's status handler as far as htaccel knows
//! the same facts (names, contacts, CA, windows, state, each certificate's
//! validity and serial, the renewal's errors and next run).

use crate::http::md::{states, ManagedDomain, RequireHttps, Window};
use crate::http::{Body, Response};
use crate::request::Ctx;

const HANDLER: &str = "md-status";

/// mod_md's `md_state_t`: 1 incomplete, 2 complete, 3 expired, 4 error.
fn state(md: &ManagedDomain, now: i64) -> (u32, String) {
    let all = states().read().unwrap_or_else(|e| e.into_inner());
    let Some(s) = all.get(&md.name) else {
        return (1, "no certificate yet".into());
    };
    if s.certs.is_empty() || s.certs.iter().any(|(_, c)| c.fallback) {
        return match &s.last_error {
            Some(e) => (4, format!("error: {e}")),
            None => (1, "no certificate yet".into()),
        };
    }
    if s.certs.iter().any(|(_, c)| c.valid_until <= now) {
        return (3, "certificate has expired".into());
    }
    let kinds: Vec<&str> = s.certs.iter().map(|(k, _)| *k).collect();
    (2, format!("certificate({}) is valid", kinds.join(", ")))
}

fn window(w: Window) -> String {
    match w {
        Window::Percent(p) => format!("{p}%"),
        Window::Fixed(d) => {
            let s = d.as_secs();
            if s % 86_400 == 0 {
                format!("{}d", s / 86_400)
            } else {
                format!("{s}s")
            }
        }
    }
}

fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn list(items: &[String]) -> String {
    let v: Vec<String> = items.iter().map(|s| string(s)).collect();
    format!("[{}]", v.join(", "))
}

fn date(secs: i64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs.max(0) as u64);
    httpdate::fmt_http_date(t)
}

/// One managed domain as mod_md's JSON shows it.
fn domain(md: &ManagedDomain, now: i64) -> String {
    let (state, descr) = state(md, now);
    let all = states().read().unwrap_or_else(|e| e.into_inner());
    let s = all.get(&md.name).cloned().unwrap_or_default();
    let certs: Vec<String> = s
        .certs
        .iter()
        .filter(|(_, c)| !c.fallback)
        .map(|(kind, c)| {
            format!(
                "{}: {{\"valid\": {{\"from\": {}, \"until\": {}}}, \"serial\": {}}}",
                string(kind),
                string(&date(c.valid_from)),
                string(&date(c.valid_until)),
                string(&c.serial)
            )
        })
        .collect();
    let mut renewal = format!("\"errors\": {}", s.errors);
    if let Some(e) = &s.last_error {
        renewal.push_str(&format!(
            ", \"last\": {{\"status\": 1, \"detail\": {}}}",
            string(e)
        ));
    }
    if let Some(next) = s.next_run {
        renewal.push_str(&format!(", \"next-run\": {}", string(&date(next))));
    }
    format!(
        "{{\"name\": {}, \"domains\": {}, \"contacts\": {}, \"ca\": {{\"urls\": {}, \"proto\": \"ACME\", \"agreement\": {}}}, \"state\": {state}, \"state-descr\": {}, \"renew-mode\": {}, \"renew-window\": {}, \"warn-window\": {}, \"require-https\": {}, \"must-staple\": false, \"stapling\": false, \"cert\": {{{}}}, \"renew\": {}, \"renewal\": {{{renewal}}}}}",
        string(&md.name),
        list(&md.domains),
        list(&md.contact.iter().map(|c| format!("mailto:{}", c.trim_start_matches("mailto:"))).collect::<Vec<_>>()),
        list(std::slice::from_ref(&md.ca_url)),
        if md.agreement { "\"accepted\"" } else { "null" },
        string(&descr),
        if md.renew_auto { 1 } else { 0 },
        string(&window(md.renew_window)),
        string(&window(md.warn_window)),
        string(match md.require_https {
            RequireHttps::Off => "off",
            RequireHttps::Temporary => "temporary",
            RequireHttps::Permanent => "permanent",
        }),
        certs.join(", "),
        s.renewing,
    )
}

/// The handler: every managed domain, or the one named after the
/// handler's path (`/md-status/example.org`).
pub fn handler(ctx: &mut Ctx<'_>) -> Option<Response> {
    if ctx.handler_name() != Some(HANDLER) || !ctx.site.env.is_loaded("md_module") {
        return None;
    }
    if ctx.method != "GET" && ctx.method != "HEAD" {
        return None;
    }
    crate::answer_memo::note_volatile();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let named = ctx.uri.rsplit('/').next().filter(|n| n.contains('.'));
    let mds = &ctx.engine.md;
    let body = match named.and_then(|n| mds.iter().find(|m| m.name == n)) {
        Some(md) => domain(md, now),
        None => {
            let all: Vec<String> = mds.iter().map(|m| domain(m, now)).collect();
            format!(
                "{{\"version\": {}, \"managed-domains\": [{}]}}",
                string(env!("CARGO_PKG_VERSION")),
                all.join(", ")
            )
        }
    };
    let mut resp = Response::new(200);
    resp.add_header("Content-Type", "application/json");
    resp.body = Body::bytes(body.into_bytes());
    Some(resp)
}
