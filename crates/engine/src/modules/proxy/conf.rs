//! mod_proxy's directives for reverse proxying: `ProxyPass`,
//! `ProxyPassMatch`, `ProxyPassReverse`, `ProxyPreserveHost`,
//! `ProxyAddHeaders`, and their per-directory slot.
//!
//! As in Apache, `ProxyPass` and `ProxyPassReverse` inside a `<Location>`
//! take the location's path as theirs and name only the URL. Worker
//! parameters (`key=value` after the URL) are accepted where they only
//! tune connections (`timeout`, `retry`, `keepalive`, `ttl`, `max`,
//! `connectiontimeout`, `flushpackets`) and ignored; `upgrade` (the
//! protocols a client may switch to, WebSocket by default for `ws://` and
//! `wss://` URLs, see [`can_upgrade`]) is honoured; `disablereuse` and
//! `enablereuse` (FastCGI connections kept with `FCGI_KEEP_CONN`; mind
//! that a kept PHP-FPM connection holds a PHP-FPM worker) are honoured;
//! others are refused loudly.

use crate::config::{Invocation, SectionKind, Walker};
use crate::dirconf::DirConf;
use crate::regex_engine::Regex;
use std::sync::Arc;
use std::time::Duration;

/// One `ProxyPass`/`ProxyPassMatch`.
#[derive(Clone, Debug)]
pub struct Pass {
    /// The URL-path (or, with `regex`, the pattern's text).
    pub path: String,
    pub regex: Option<Regex>,
    /// The upstream URL; `None` for `!` (not proxied).
    pub url: Option<String>,
    /// `nocanon`: the remainder goes as the client sent it.
    pub nocanon: bool,
    /// `disablereuse=On`: a new connection per request.
    pub disable_reuse: bool,
    /// `enablereuse=On`: FastCGI connections are kept (`FCGI_KEEP_CONN`).
    pub enable_reuse: bool,
    /// `timeout=`: the backend's every read and write (and connect).
    pub timeout: Option<Duration>,
    /// `connectiontimeout=`: the connect alone.
    pub connect_timeout: Option<Duration>,
    /// `upgrade=`: the protocols a client may switch to through this
    /// worker (`*`: any), as mod_proxy_http's `ap_proxy_worker_can_upgrade`
    /// reads it.
    pub upgrade: Option<String>,
}

/// `ap_proxy_worker_can_upgrade`: whether `upgrade` (a client's or an
/// upstream's `Upgrade` value) may pass a worker whose `upgrade=` is
/// `allowed`; without one, `default` (WebSocket, for a `ws://` or `wss://`
/// URL) is the only protocol allowed.
pub fn can_upgrade(allowed: Option<&str>, upgrade: &str, default: Option<&str>) -> bool {
    match allowed {
        // `ap_find_token`: a token of the list matches when the value
        // begins with it.
        Some(allowed) => {
            allowed == "*"
                || allowed.eq_ignore_ascii_case(upgrade)
                || allowed
                    .split(|c: char| {
                        !c.is_ascii() || c.is_ascii_control() || " ()<>@,;:\\\"/[]?={}".contains(c)
                    })
                    .filter(|token| !token.is_empty())
                    .any(|token| {
                        upgrade
                            .get(..token.len())
                            .is_some_and(|start| start.eq_ignore_ascii_case(token))
                    })
        }
        None => default.is_some_and(|d| d.eq_ignore_ascii_case(upgrade)),
    }
}

/// One `ProxyPassReverseCookiePath` or `ProxyPassReverseCookieDomain`:
/// the upstream's (internal) value, and this server's (public) one.
#[derive(Clone, Debug)]
pub struct CookieMap {
    pub internal: String,
    pub public: String,
}

/// One `ProxyPassReverse`.
#[derive(Clone, Debug)]
pub struct Reverse {
    pub path: String,
    pub url: String,
}

/// The per-directory slot.
#[derive(Clone, Debug, Default)]
pub struct ProxyDir {
    pub passes: Arc<Vec<Pass>>,
    pub reverses: Arc<Vec<Reverse>>,
    pub preserve_host: Option<bool>,
    pub add_headers: Option<bool>,
    /// `ProxyTimeout` (a server's setting, kept with its directory
    /// settings as `ProxyPass` is).
    pub timeout: Option<Duration>,
    /// `ProxyPassReverseCookiePath`, `ProxyPassReverseCookieDomain`.
    pub cookie_paths: Arc<Vec<CookieMap>>,
    pub cookie_domains: Arc<Vec<CookieMap>>,
    /// `ProxyErrorOverride on|off`.
    pub error_override: Option<bool>,
    /// `ProxyVia` (a server's setting).
    pub via: Option<Via>,
    /// `ProxyErrorOverride on CODE…`: the statuses overridden (none: every
    /// error), sorted.
    pub error_override_codes: Arc<Vec<u16>>,
}

impl ProxyDir {
    pub fn merge(base: &ProxyDir, new: &ProxyDir) -> ProxyDir {
        ProxyDir {
            // The nearer rules first (a virtual host's before the main
            // server's), as mod_proxy searches them.
            passes: concat(&new.passes, &base.passes),
            // Apache appends the child's reverse maps after the parent's.
            reverses: concat(&base.reverses, &new.reverses),
            preserve_host: new.preserve_host.or(base.preserve_host),
            add_headers: new.add_headers.or(base.add_headers),
            timeout: new.timeout.or(base.timeout),
            // Appended to the parent's, as the reverse maps.
            cookie_paths: concat(&base.cookie_paths, &new.cookie_paths),
            cookie_domains: concat(&base.cookie_domains, &new.cookie_domains),
            error_override: new.error_override.or(base.error_override),
            via: new.via.or(base.via),
            error_override_codes: {
                let mut codes = concat(&base.error_override_codes, &new.error_override_codes);
                Arc::make_mut(&mut codes).sort_unstable();
                codes
            },
        }
    }
}

fn concat<T: Clone>(first: &Arc<Vec<T>>, then: &Arc<Vec<T>>) -> Arc<Vec<T>> {
    if then.is_empty() {
        return first.clone();
    }
    if first.is_empty() {
        return then.clone();
    }
    Arc::new(first.iter().chain(then.iter()).cloned().collect())
}

/// Worker parameters that only tune connections.
const TUNING: &[&str] = &[
    "retry",
    "keepalive",
    "ttl",
    "max",
    "min",
    "smax",
    "enablereuse",
    "flushpackets",
    "flushwait",
    "acquire",
    "ping",
];

/// The room mod_proxy keeps for a worker's `upgrade=` value.
const UPGRADE_MAX: usize = 16;

/// A number of seconds as `atoi` reads it, if at least 1 (`timeout=`,
/// `ProxyTimeout`).
pub fn seconds(text: &str) -> Option<Duration> {
    let t = text.trim_start();
    let digits = t
        .strip_prefix('+')
        .unwrap_or(t)
        .bytes()
        .take_while(u8::is_ascii_digit)
        .count();
    let offset = usize::from(t.starts_with('+'));
    let n: u64 = t[offset..offset + digits].parse().ok()?;
    (n >= 1).then(|| Duration::from_secs(n))
}

/// `ProxyPassReverseCookiePath` and `ProxyPassReverseCookieDomain`.
pub fn cookie_map(
    _w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
) -> Result<(), String> {
    if inv.words.len() > 2 {
        return Err(format!(
            "{}: interpolate is not supported by htaccel yet",
            inv.name
        ));
    }
    let map = CookieMap {
        internal: inv.words[0].clone(),
        public: inv.words[1].clone(),
    };
    let list = if inv.name.eq_ignore_ascii_case("ProxyPassReverseCookiePath") {
        &mut c.proxy.cookie_paths
    } else {
        &mut c.proxy.cookie_domains
    };
    Arc::make_mut(list).push(map);
    Ok(())
}

/// `ProxyErrorOverride on|off [CODE …]` (`set_proxy_error_override`,
/// called once per word).
pub fn error_override(
    _w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
) -> Result<(), String> {
    for word in &inv.words {
        if word.eq_ignore_ascii_case("off") {
            c.proxy.error_override = Some(false);
        } else if word.eq_ignore_ascii_case("on") {
            c.proxy.error_override = Some(true);
        } else if c.proxy.error_override.is_some() {
            if !word.starts_with(|ch: char| ch.is_ascii_digit()) {
                return Err("ProxyErrorOverride: status codes to intercept must be numeric".into());
            }
            if c.proxy.error_override != Some(true) {
                return Err("ProxyErrorOverride: status codes must follow a value of 'on'".into());
            }
            let digits: String = word.chars().take_while(char::is_ascii_digit).collect();
            let code = digits.parse::<u16>().unwrap_or(0);
            if !(400..600).contains(&code) {
                return Err("ProxyErrorOverride: status codes to intercept must be valid HTTP Status Codes >=400 && <600".into());
            }
            let codes = Arc::make_mut(&mut c.proxy.error_override_codes);
            codes.push(code);
            codes.sort_unstable();
        } else {
            return Err("ProxyErrorOverride first parameter must be one of: off | on".into());
        }
    }
    Ok(())
}

/// `ap_proxy_should_override`: whether a backend's `status` gives way to
/// this server's error page.
pub fn should_override(conf: &ProxyDir, status: u16) -> bool {
    if conf.error_override != Some(true) {
        return false;
    }
    if conf.error_override_codes.is_empty() {
        return (400..600).contains(&status);
    }
    conf.error_override_codes.binary_search(&status).is_ok()
}

/// `ProxyVia`: what the `Via` fields of proxied requests and answers say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// Passed on unchanged (the default).
    Off,
    /// This server added, as `1.1 name[:port]`.
    On,
    /// The same with the server's product in a comment.
    Full,
    /// The client's removed from the request; none added.
    Block,
}

/// `ProxyVia off|on|full|block`.
pub fn proxy_via(_w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    c.proxy.via = Some(match inv.words[0].to_ascii_lowercase().as_str() {
        "off" => Via::Off,
        "on" => Via::On,
        "block" => Via::Block,
        "full" => Via::Full,
        _ => return Err("ProxyVia must be one of: off | on | full | block".into()),
    });
    Ok(())
}

/// `ProxyTimeout`.
pub fn proxy_timeout(
    _w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
) -> Result<(), String> {
    c.proxy.timeout =
        Some(seconds(&inv.words[0]).ok_or("Proxy Timeout must be at least 1 second.")?);
    Ok(())
}

/// The `<Location>` path a directive inside one takes, if any.
fn location_path(w: &Walker<'_>) -> Option<String> {
    w.ctx
        .sections
        .contains(&SectionKind::Location)
        .then(|| w.ctx.path.clone())
        .flatten()
}

pub fn proxy_pass(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
    regex: bool,
) -> Result<(), String> {
    let name = inv.name;
    let mut words = inv.words.iter().map(String::as_str).peekable();
    let in_location = location_path(w);
    const NEEDS_PATH: &str = "ProxyPass|ProxyPassMatch needs a path when not defined in a location";
    let path = match &in_location {
        Some(p) => p.clone(),
        None => words.next().ok_or(NEEDS_PATH)?.to_string(),
    };
    let target = words.next().ok_or(NEEDS_PATH)?;
    let mut pass = Pass {
        regex: None,
        url: (target != "!").then(|| target.to_string()),
        nocanon: false,
        disable_reuse: false,
        enable_reuse: false,
        timeout: None,
        connect_timeout: None,
        upgrade: None,
        path: path.clone(),
    };
    for word in words {
        match word.split_once('=') {
            None if word.eq_ignore_ascii_case("nocanon") => pass.nocanon = true,
            Some((k, v)) if k.eq_ignore_ascii_case("disablereuse") => {
                pass.disable_reuse = v.eq_ignore_ascii_case("on")
            }
            Some((k, v)) if k.eq_ignore_ascii_case("enablereuse") => {
                pass.enable_reuse = v.eq_ignore_ascii_case("on")
            }
            Some((k, v)) if k.eq_ignore_ascii_case("timeout") => {
                pass.timeout =
                    Some(seconds(v).ok_or("ProxyPass Timeout must be at least one second")?)
            }
            Some((k, v)) if k.eq_ignore_ascii_case("connectiontimeout") => {
                let t = crate::modules::cgi::parse_timeout(v)
                    .ok_or("ProxyPass Connectiontimeout has wrong format")?;
                if t < Duration::from_millis(1) {
                    return Err(
                        "ProxyPass Connectiontimeout must be at least one millisecond.".into(),
                    );
                }
                pass.connect_timeout = Some(t);
            }
            Some((k, v)) if k.eq_ignore_ascii_case("upgrade") => {
                if v.len() >= UPGRADE_MAX {
                    return Err(format!(
                        "ProxyPass upgrade protocol length must be < {UPGRADE_MAX} characters"
                    ));
                }
                let any = v.eq_ignore_ascii_case("ANY");
                pass.upgrade = Some(if any { "*".into() } else { v.to_string() })
            }
            Some((k, _)) if TUNING.iter().any(|t| t.eq_ignore_ascii_case(k)) => {}
            // Apache's words for a parameter that is no `key=value`.
            None if in_location.is_some() && target.starts_with('/') => {
                return Err(
                    "ProxyPass|ProxyPassMatch can not have a path when defined in a location."
                        .into(),
                )
            }
            None if !["interpolate", "noquery"]
                .iter()
                .any(|w| w.eq_ignore_ascii_case(word)) =>
            {
                return Err("Invalid ProxyPass|ProxyPassMatch parameter. Parameter must be in the form 'key=value'.".into())
            }
            _ => return Err(format!("{name}: '{word}' is not supported by htaccel yet")),
        }
    }
    if let Some(url) = &pass.url {
        let lower = url.to_ascii_lowercase();
        let fcgi = lower.starts_with("fcgi://")
            || lower.starts_with("unix:") && lower.contains("|fcgi://");
        let http = ["http://", "https://", "ws://", "wss://"]
            .iter()
            .any(|scheme| lower.starts_with(scheme));
        if !http && !fcgi {
            return Err(format!(
                "{name} {url}: only http://, https://, ws://, wss:// and fcgi:// backends are supported by htaccel yet"
            ));
        }
    }
    if regex {
        pass.regex = Some(Regex::new(&path, false)?);
    }
    Arc::make_mut(&mut c.proxy.passes).push(pass);
    Ok(())
}

pub fn proxy_pass_reverse(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
) -> Result<(), String> {
    let (path, url) = match (location_path(w), inv.words.as_slice()) {
        (Some(p), [url, ..]) => (p, url.clone()),
        (None, [path, url, ..]) => (path.clone(), url.clone()),
        _ => {
            return Err("ProxyPassReverse needs a path when not defined in a location".to_string())
        }
    };
    if inv.words.len() > 2 || (location_path(w).is_some() && inv.words.len() > 1) {
        return Err("ProxyPassReverse: interpolate is not supported by htaccel yet".into());
    }
    Arc::make_mut(&mut c.proxy.reverses).push(Reverse { path, url });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upgrades_a_worker_allows() {
        // Without upgrade=, only a ws:// URL's default.
        assert!(can_upgrade(None, "websocket", Some("WebSocket")));
        assert!(!can_upgrade(None, "websocket", None));
        assert!(!can_upgrade(None, "h2c", Some("WebSocket")));
        // `*` (ANY) lets every protocol through.
        assert!(can_upgrade(Some("*"), "foo/2", None));
        // The whole value, or a token of the list the value begins with
        // (`ap_find_token` compares the token's length only).
        assert!(can_upgrade(Some("WebSocket"), "websocket", None));
        assert!(can_upgrade(Some("foo, websocket"), "WebSocket", None));
        assert!(can_upgrade(Some("web"), "websocket", None));
        assert!(!can_upgrade(Some("websocket"), "web", None));
        assert!(!can_upgrade(Some("foo"), "websocket", Some("WebSocket")));
    }

    #[test]
    fn error_override_codes_merge_sorted_and_narrow_the_errors() {
        let on = |codes: Vec<u16>| ProxyDir {
            error_override: Some(true),
            error_override_codes: Arc::new(codes),
            ..Default::default()
        };
        let server = on(vec![]);
        assert!(should_override(&server, 404) && should_override(&server, 503));
        assert!(!should_override(&server, 302) && !should_override(&server, 200));
        let dir = ProxyDir::merge(&server, &on(vec![502, 404]));
        assert_eq!(*dir.error_override_codes, vec![404, 502]);
        assert!(should_override(&dir, 404) && !should_override(&dir, 500));
        let off = ProxyDir::merge(
            &dir,
            &ProxyDir {
                error_override: Some(false),
                ..Default::default()
            },
        );
        assert!(!should_override(&off, 404));
    }

    #[test]
    fn proxy_timeouts_read_as_atoi_seconds() {
        assert_eq!(seconds("30"), Some(Duration::from_secs(30)));
        assert_eq!(seconds(" 5s"), Some(Duration::from_secs(5)));
        assert_eq!(seconds("0"), None);
        assert_eq!(seconds("x"), None);
    }
}
