//! mod_md: certificates obtained and renewed by the server itself from an
//! ACME certificate authority, for the domains the configuration names
//! (`MDomain`, `<MDomain>`).
//!
//! This module holds the directives with Apache's contexts and checks,
//! computes the managed domains (names, CA, keys, challenges, windows,
//! store) for the server ([`crate::http::md::ManagedDomain`]), answers
//! `http-01` challenges before any other phase of the request (mod_md's
//! `post_read_request` hook, so no `.htaccess` rule or access check can
//! hide them), and where `MDRequireHttps` asks, redirects plain HTTP to
//! HTTPS (each internal redirect too, as Apache runs the hook again) and,
//! under `permanent`, adds `Strict-Transport-Security` to HTTPS answers as
//! an ordinary response field. The ACME client, the store and the live
//! certificates are the server's (`server::md`).
//!
//! mod_md's settings exist at two levels, as in Apache: the process's
//! (`MDStoreDir`, `MDRetryDelay`, `MDCheckInterval`, `MDCACertificateFile`,
//! `MDBaseServer`, `MDPortMap`…, allowed in a virtual host and applying to
//! all), and those a managed domain takes from the main server or from its
//! own `<MDomain>` section (`MDCertificateAuthority`, `MDPrivateKeys`,
//! `MDRenewWindow`…). Apache reads the latter in a `<VirtualHost>` and
//! applies them to no managed domain; htaccel refuses them there, saying
//! where they take effect.

mod json;
pub mod server_status;
pub mod status;

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::http::md::{Challenge, Curve, KeySpec, ManagedDomain, RequireHttps, Window};
use crate::registry::{Args, Directive, Module, Run, OR_AUTHCFG, RSRC_CONF};
use std::path::PathBuf;
use std::time::Duration;

/// The settings a managed domain takes from the main server or from its
/// `<MDomain>` section (`None`: not set there).
#[derive(Clone, Debug, Default)]
pub struct MdSettings {
    pub ca_urls: Option<Vec<String>>,
    pub contact: Option<String>,
    pub agreement: Option<String>,
    pub challenges: Option<Vec<Challenge>>,
    pub keys: Option<Vec<KeySpec>>,
    pub renew_window: Option<Window>,
    pub warn_window: Option<Window>,
    pub renew_auto: Option<bool>,
    pub require_https: Option<RequireHttps>,
    pub eab: Option<Option<(String, String)>>,
}

impl MdSettings {
    fn over(&self, base: &MdSettings) -> MdSettings {
        MdSettings {
            ca_urls: self.ca_urls.clone().or_else(|| base.ca_urls.clone()),
            contact: self.contact.clone().or_else(|| base.contact.clone()),
            agreement: self.agreement.clone().or_else(|| base.agreement.clone()),
            challenges: self.challenges.clone().or_else(|| base.challenges.clone()),
            keys: self.keys.clone().or_else(|| base.keys.clone()),
            renew_window: self.renew_window.or(base.renew_window),
            warn_window: self.warn_window.or(base.warn_window),
            renew_auto: self.renew_auto.or(base.renew_auto),
            require_https: self.require_https.or(base.require_https),
            eab: self.eab.clone().or_else(|| base.eab.clone()),
        }
    }
}

/// One `MDomain` line or `<MDomain>` section.
#[derive(Clone, Debug, Default)]
pub struct MdDef {
    pub names: Vec<String>,
    /// `auto` / `manual` among its names (`None`: `MDMembers`'s default).
    pub transitive: Option<bool>,
    pub settings: MdSettings,
}

/// mod_md's configuration of the whole process.
#[derive(Clone, Debug, Default)]
pub struct MdGlobal {
    /// The main server's settings.
    pub settings: MdSettings,
    pub domains: Vec<MdDef>,
    /// The `<MDomain>` section being read.
    current: Option<MdDef>,
    /// `MDMembers auto|manual` outside a section.
    pub transitive: Option<bool>,
    pub store_dir: Option<PathBuf>,
    pub retry_delay: Option<Duration>,
    pub check_interval: Option<Duration>,
    pub ca_cert_file: Option<PathBuf>,
    pub base_server: Option<bool>,
    /// `MDPortMap`: public port (80, 443) → local port (`None`: `-`).
    pub port_map: Vec<(u16, Option<u16>)>,
    pub notify_cmd: Option<Vec<String>>,
    pub message_cmd: Option<Vec<String>>,
    /// `MDServerStatus`.
    pub server_status: Option<bool>,
    /// `MDCertificateStatus`.
    pub certificate_status: Option<bool>,
}

/// Apache's defaults (mod_md_config.c, md.h).
const DEFAULT_CA: &str = "https://acme-v02.api.letsencrypt.org/directory";
const DEFAULT_RENEW_WINDOW: Window = Window::Percent(33);
const DEFAULT_WARN_WINDOW: Window = Window::Percent(10);
const DEFAULT_RETRY_DELAY: Duration = Duration::from_secs(5);
const DEFAULT_CHECK_INTERVAL: Duration = Duration::from_secs(12 * 3600);

/// mod_md's known CAs (`KNOWN_CAs`): name and ACME directory URL.
const KNOWN_CAS: [(&str, &str); 4] = [
    ("LetsEncrypt", DEFAULT_CA),
    (
        "LetsEncrypt-Test",
        "https://acme-staging-v02.api.letsencrypt.org/directory",
    ),
    ("Buypass", "https://api.buypass.com/acme/directory"),
    (
        "Buypass-Test",
        "https://api.test4.buypass.no/acme/directory",
    ),
];

/// `md_get_ca_name_from_url`: a known CA's name, else the URL's host.
fn ca_name(url: &str) -> String {
    if let Some((name, _)) = KNOWN_CAS.iter().find(|(_, u)| u.eq_ignore_ascii_case(url)) {
        return (*name).to_string();
    }
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default().to_string(),
        None => host_port.split(':').next().unwrap_or_default().to_string(),
    }
}

/// `md_get_ca_url_from_name`: a known CA's name, or an absolute URL.
fn ca_url(name: &str) -> Result<String, String> {
    if let Some((_, url)) = KNOWN_CAS.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
        return Ok((*url).to_string());
    }
    let lower = name.to_ascii_lowercase();
    if (lower.starts_with("https://") || lower.starts_with("http://")) && name.len() > 8 {
        return Ok(name.to_string());
    }
    Err(format!(
        "The CA name '{name}' is not known and it is not a URL either (https://...). Known names are: letsencrypt, letsencrypt-test, buypass, buypass-test."
    ))
}

/// `md_duration_parse`: a number and a unit (`d`, `h`, `mi`, `s`, `ms`),
/// `default_unit` when none is given.
pub fn parse_duration(value: &str, default_unit: &str) -> Option<Duration> {
    let digits = value.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let n: u64 = value[..digits].parse().ok()?;
    let unit = match &value[digits..] {
        "" => default_unit,
        u => u,
    }
    .to_ascii_lowercase();
    Some(match unit.as_str() {
        u if u.starts_with('d') => Duration::from_secs(n * 86_400),
        u if u.starts_with('h') => Duration::from_secs(n * 3600),
        u if u.starts_with("ms") => Duration::from_millis(n),
        u if u.starts_with("mi") => Duration::from_secs(n * 60),
        u if u.starts_with('s') => Duration::from_secs(n),
        _ => return None,
    })
}

/// `md_timeslice_parse` with the 100-day norm: a duration (days by
/// default) or a percentage below 100.
fn parse_window(name: &str, value: &str) -> Result<Window, String> {
    if let Some(d) = parse_duration(value, "d") {
        return Ok(Window::Fixed(d));
    }
    if let Some(p) = value.strip_suffix('%') {
        if let Ok(p) = p.parse::<u32>() {
            if p >= 100 {
                return Err(format!("{name} a length of 100% or more is not allowed."));
            }
            return Ok(Window::Percent(p));
        }
    }
    Err(format!("{name} has unrecognized format"))
}

fn on_off(value: &str) -> Result<bool, String> {
    if value.eq_ignore_ascii_case("on") {
        Ok(true)
    } else if value.eq_ignore_ascii_case("off") {
        Ok(false)
    } else {
        Err(format!(
            "unknown '{value}', supported parameter values are 'on' and 'off'"
        ))
    }
}

/// `auto` / `manual` (`set_transitive`); `None`: neither.
fn transitive(word: &str) -> Option<bool> {
    if word.eq_ignore_ascii_case("auto") {
        Some(true)
    } else if word.eq_ignore_ascii_case("manual") {
        Some(false)
    } else {
        None
    }
}

fn add_name(names: &mut Vec<String>, name: &str) {
    let lower = name.to_ascii_lowercase();
    if !names.contains(&lower) {
        names.push(lower);
    }
}

fn global<'w>(w: &'w mut Walker<'_>) -> Result<&'w mut MdGlobal, String> {
    match w.server.as_deref_mut() {
        Some(b) => Ok(&mut b.global.modules.md),
        None => Err("not allowed here".into()),
    }
}

fn in_virtual_host(w: &Walker<'_>) -> bool {
    w.server.as_deref().is_some_and(|b| b.in_virtual_host())
}

/// The settings a per-domain directive sets: the `<MDomain>` section's,
/// else the main server's; refused in a `<VirtualHost>`.
fn settings<'w>(w: &'w mut Walker<'_>, name: &str) -> Result<&'w mut MdSettings, String> {
    let in_vhost = in_virtual_host(w);
    let g = global(w)?;
    if let Some(current) = g.current.as_mut() {
        return Ok(&mut current.settings);
    }
    if in_vhost {
        return Err(format!(
            "{name} in a <VirtualHost> applies to no managed domain (Apache reads it there and takes the managed domains' settings from the main server or their <MDomain> section): set it there"
        ));
    }
    Ok(&mut g.settings)
}

/// A process-wide directive (`MD_LOC_NOT_MD`): not inside `<MDomain>`.
fn process_wide<'w>(w: &'w mut Walker<'_>, name: &str) -> Result<&'w mut MdGlobal, String> {
    let g = global(w)?;
    if g.current.is_some() {
        return Err(format!(
            "{name} is not allowed inside an '<MDomainSet' context"
        ));
    }
    Ok(g)
}

fn run_md(w: &mut Walker<'_>, inv: &Invocation<'_>, _: &mut DirConf) -> Result<(), String> {
    let name = inv.name;
    let words = &inv.words;
    let first = words.first().map(String::as_str).unwrap_or_default();
    match name.to_ascii_lowercase().as_str() {
        "mdomain" => {
            let g = process_wide(w, name)?;
            let mut def = MdDef::default();
            for word in words {
                match transitive(word) {
                    Some(t) => def.transitive = Some(t),
                    None => add_name(&mut def.names, word),
                }
            }
            if def.names.is_empty() {
                return Err("needs at least one domain name".into());
            }
            g.domains.push(def);
        }
        "mdmember" | "mdmembers" => {
            let g = global(w)?;
            match g.current.as_mut() {
                Some(current) => {
                    for word in words {
                        match transitive(word) {
                            Some(t) => current.transitive = Some(t),
                            None => add_name(&mut current.names, word),
                        }
                    }
                }
                None if words.len() == 1 => {
                    g.transitive =
                        Some(transitive(first).ok_or("unknown value, use \"auto|manual\"")?);
                }
                None => {
                    return Err(format!(
                        "{name} is only valid inside a '<MDomainSet' context, not here"
                    ))
                }
            }
        }
        "mdcertificateauthority" => {
            let mut urls = Vec::new();
            for word in words {
                urls.push(ca_url(word)?);
            }
            if urls.len() > 1 {
                return Err(format!(
                    "{name}: several CAs (mod_md's failover among them) are not supported by htaccel; name one"
                ));
            }
            settings(w, name)?.ca_urls = Some(urls);
        }
        "mdcertificateagreement" => settings(w, name)?.agreement = Some(first.to_string()),
        "mdcontactemail" => settings(w, name)?.contact = Some(first.to_string()),
        "mdcertificateprotocol" => {
            if !first.eq_ignore_ascii_case("ACME") {
                return Err(format!("{name} {first}: the only protocol is ACME"));
            }
        }
        "mdcachallenges" => {
            let mut list = Vec::new();
            for word in words {
                list.push(match word.to_ascii_lowercase().as_str() {
                    "http-01" => Challenge::Http01,
                    "tls-alpn-01" => Challenge::TlsAlpn01,
                    "dns-01" => {
                        return Err(format!(
                            "{name} dns-01: htaccel does not answer dns-01 challenges (MDChallengeDns01 is not supported); use http-01 or tls-alpn-01"
                        ))
                    }
                    other => return Err(format!("{name}: unknown challenge type '{other}'")),
                });
            }
            settings(w, name)?.challenges = Some(list);
        }
        "mdprivatekeys" => {
            if words.is_empty() {
                return Err("needs to specify the private key type".into());
            }
            let mut keys = Vec::new();
            for word in words {
                let lower = word.to_ascii_lowercase();
                let curve = match lower.as_str() {
                    "default" if words.len() > 1 => {
                        return Err("'Default' allows no other parameter".into())
                    }
                    "default" => {
                        return Err(format!(
                            "{name} Default means RSA 2048, and htaccel makes elliptic-curve keys only: name secp256r1 (P-256) or secp384r1 (P-384)"
                        ))
                    }
                    "secp256r1" | "p-256" | "prime256v1" => Curve::P256,
                    "secp384r1" | "p-384" => Curve::P384,
                    rsa if rsa.starts_with("rsa") || rsa.bytes().all(|b| b.is_ascii_digit()) => {
                        return Err(format!(
                            "{name} {word}: htaccel makes elliptic-curve keys only (its crypto library generates no RSA keys): name secp256r1 (P-256) or secp384r1 (P-384)"
                        ))
                    }
                    _ => {
                        return Err(format!(
                            "{name} {word}: htaccel knows the curves secp256r1 (P-256) and secp384r1 (P-384)"
                        ))
                    }
                };
                if keys.iter().any(|k: &KeySpec| k.curve == curve) {
                    return Err(format!("two keys of type '{word}' are not possible."));
                }
                keys.push(KeySpec::named(curve, word));
            }
            settings(w, name)?.keys = Some(keys);
        }
        "mdrenewwindow" => {
            let window = parse_window(name, first)?;
            settings(w, name)?.renew_window = Some(window);
        }
        "mdwarnwindow" => {
            let window = parse_window(name, first)?;
            settings(w, name)?.warn_window = Some(window);
        }
        "mdrenewmode" | "mddrivemode" => {
            let auto = match first.to_ascii_lowercase().as_str() {
                "auto" => true,
                "manual" => false,
                "always" => {
                    return Err(format!(
                        "{name} always: htaccel obtains certificates only for domains it serves (auto) or none (manual)"
                    ))
                }
                _ => return Err(format!("unknown MDRenewMode '{first}'")),
            };
            settings(w, name)?.renew_auto = Some(auto);
        }
        "mdrequirehttps" => {
            let mode = match first.to_ascii_lowercase().as_str() {
                "off" => RequireHttps::Off,
                "temporary" => RequireHttps::Temporary,
                "permanent" => RequireHttps::Permanent,
                _ => {
                    return Err(format!(
                    "unknown '{first}', supported parameter values are 'temporary' and 'permanent'"
                ))
                }
            };
            // Apache refuses it in these sections (`MD_LOC_ALL`).
            use crate::config::SectionKind;
            for (kind, section) in [
                (SectionKind::Directory, "<Directory"),
                (SectionKind::Location, "<Location"),
                (SectionKind::Files, "<Files"),
                (SectionKind::If, "<If"),
            ] {
                if w.ctx.within(kind) {
                    return Err(format!("{name} cannot occur within {section}> section"));
                }
            }
            if w.ctx.path.is_some() {
                return Err(format!(
                    "{name} in a directory context is not supported by htaccel: set it in the main server or an <MDomain> section"
                ));
            }
            settings(w, name)?.require_https = Some(mode);
        }
        "mdmuststaple" => {
            if on_off(first)? {
                return Err(format!(
                    "{name} on: htaccel does not ask for the OCSP must-staple extension (it does not staple managed domains' certificates)"
                ));
            }
        }
        "mdstapling" | "mdstapleothers" => {
            if on_off(first)? && name.eq_ignore_ascii_case("mdstapling") {
                return Err(format!(
                    "{name} on: htaccel does not staple managed domains' certificates (SSLUseStapling on staples certificate files)"
                ));
            }
        }
        "mdexternalaccountbinding" => {
            let eab = match words.as_slice() {
                [none] if none.eq_ignore_ascii_case("none") => None,
                [kid, hmac] => Some((kid.clone(), hmac.clone())),
                _ => {
                    return Err(format!(
                        "{name} with a JSON file is not supported by htaccel: give KEYID and HMAC"
                    ))
                }
            };
            settings(w, name)?.eab = Some(eab);
        }
        "mdstoredir" => {
            let root = w.env.server_root.join(first);
            process_wide(w, name)?.store_dir = Some(root);
        }
        "mdretrydelay" => {
            let d = parse_duration(first, "s").ok_or("unrecognized duration format")?;
            process_wide(w, name)?.retry_delay = Some(d);
        }
        "mdcheckinterval" => {
            let d = parse_duration(first, "s").ok_or("unrecognized duration format")?;
            if d < Duration::from_secs(1) {
                return Err("check interval cannot be less than one second".into());
            }
            process_wide(w, name)?.check_interval = Some(d);
        }
        "mdcacertificatefile" => {
            let path = w.env.server_root.join(first);
            global(w)?.ca_cert_file = Some(path);
        }
        "mdbaseserver" => {
            let on = on_off(first)?;
            process_wide(w, name)?.base_server = Some(on);
        }
        "mdserverstatus" => {
            let on = on_off(first)?;
            process_wide(w, name)?.server_status = Some(on);
        }
        "mdcertificatestatus" => {
            let on = on_off(first)?;
            process_wide(w, name)?.certificate_status = Some(on);
        }
        "mdnotifycmd" | "mdmessagecmd" => {
            let mut rest = inv.raw.as_str();
            let mut argv = Vec::new();
            loop {
                let word = htaccel_conf::getword_conf(&mut rest);
                if word.is_empty() {
                    break;
                }
                argv.push(word);
            }
            if argv.is_empty() {
                return Err(format!("{name} needs a command"));
            }
            let g = process_wide(w, name)?;
            if name.eq_ignore_ascii_case("mdnotifycmd") {
                g.notify_cmd = Some(argv);
            } else {
                g.message_cmd = Some(argv);
            }
        }
        "mdportmap" => {
            let mut maps = Vec::new();
            for word in words {
                maps.push(check_port_map(word)?);
            }
            let g = process_wide(w, name)?;
            for (net, local) in maps {
                g.port_map.push((net, local));
            }
        }
        _ => {
            return Err(format!(
                "{name} is not supported by htaccel (mod_md: {})",
                unsupported_reason(name)
            ))
        }
    }
    Ok(())
}

/// `MDPortMap http:PORT https:PORT`: the public port (80 or 443) and the
/// local one it reaches (`None`: `-`, unreachable).
fn check_port_map(value: &str) -> Result<(u16, Option<u16>), String> {
    let (net, local) = value
        .split_once(':')
        .ok_or("no ':' after first port number")?;
    let net = match net {
        "http" => 80,
        "https" => 443,
        n => n
            .parse::<u32>()
            .map_err(|_| "unable to parse first port number")?,
    };
    if net != 80 && net != 443 {
        return Err("mapped port number must be 80 or 443".into());
    }
    if local == "-" {
        return Ok((net as u16, None));
    }
    let p = local
        .parse::<u32>()
        .map_err(|_| "unable to parse second port number")?;
    if p == 0 || p > 65535 {
        return Err("invalid number for port map, must be in ]0,65535]".into());
    }
    Ok((net as u16, Some(p as u16)))
}

/// The local port the public `port` (80 or 443) reaches: `MDPortMap`'s,
/// else the same.
fn local_port(g: &MdGlobal, port: u16) -> Option<u16> {
    g.port_map
        .iter()
        .rev()
        .find(|(net, _)| *net == port)
        .map_or(Some(port), |(_, local)| *local)
}

/// The challenge types the server can answer, as mod_md decides it:
/// `http-01` when it listens on the local port public port 80 reaches,
/// `tls-alpn-01` on the one 443 reaches.
fn reachable(b: &crate::config::server::ServerBuild, wanted: Vec<Challenge>) -> Vec<Challenge> {
    let g = &b.global.modules.md;
    let listens = |port: Option<u16>| {
        port.is_some_and(|p| {
            b.global.listen.iter().any(|(spec, _)| {
                let text = spec.split_whitespace().next().unwrap_or_default();
                let last = text.rsplit(':').next().unwrap_or(text);
                last.parse::<u16>().ok() == Some(p)
            })
        })
    };
    let http = listens(local_port(g, 80));
    let https = listens(local_port(g, 443));
    wanted
        .into_iter()
        .filter(|c| match c {
            Challenge::Http01 => http,
            Challenge::TlsAlpn01 => https,
        })
        .collect()
}

fn unsupported_reason(name: &str) -> &'static str {
    match name.to_ascii_lowercase().as_str() {
        "mdchallengedns01" | "mdchallengedns01version" => "dns-01 challenges are not answered",
        "mdhttpproxy" => "the ACME client connects directly",
        "mdcertificatefile" | "mdcertificatekeyfile" => {
            "static certificates go in SSLCertificateFile"
        }
        "mdstaplingkeepresponse" | "mdstaplingrenewwindow" => {
            "managed domains' OCSP responses are not stapled"
        }
        "mdcertificatecheck" => "no certificate transparency links on md-status",
        "mdactivationdelay" => "a new certificate is used as soon as it is obtained",
        "mdretryfailover" => "one CA only",
        "mdstorelocks" => "one process owns the store",
        "mdmatchnames" => "the virtual hosts' ServerName and ServerAlias are all matched",
        _ => "not implemented",
    }
}

/// `<MDomain name… [auto|manual]>` / `<MDomainSet …>`: the settings inside
/// apply to this domain only.
fn run_section(w: &mut Walker<'_>, inv: &Invocation<'_>, conf: &mut DirConf) -> Result<(), String> {
    let section = format!("<{}", inv.name);
    {
        let g = global(w)?;
        if g.current.is_some() {
            return Err(format!(
                "{section} is not allowed inside an '<MDomainSet' context"
            ));
        }
    }
    if inv.words.is_empty() {
        return Err(format!(
            "{section} > section must specify a unique domain name"
        ));
    }
    let mut def = MdDef::default();
    for word in &inv.words {
        match transitive(word) {
            Some(t) => def.transitive = Some(t),
            None => add_name(&mut def.names, word),
        }
    }
    if def.names.is_empty() {
        return Err("needs at least one domain name".into());
    }
    global(w)?.current = Some(def);
    let walked = w.walk(inv.children, conf);
    let def = global(w)?.current.take();
    match walked {
        Ok(()) => {
            if let Some(def) = def {
                global(w)?.domains.push(def);
            }
            Ok(())
        }
        Err(e) => Err(w.nested(e)),
    }
}

/// A managed domain's names, settings and store, with the virtual hosts'
/// names added where `MDMembers auto` holds (`md_assign_vhosts`).
/// What mod_md keeps for the engine: the managed domains and the switches
/// that say where they show.
#[derive(Clone, Debug, Default)]
pub struct MdEngine {
    pub domains: Vec<std::sync::Arc<ManagedDomain>>,
    /// `MDBaseServer on`: the main server may be one of them.
    pub base_server: bool,
    /// `MDServerStatus on`: the managed domains on `server-status`.
    pub server_status: bool,
    /// `MDCertificateStatus` (on unless set off): each managed domain's
    /// `/.httpd/certificate-status`.
    pub certificate_status: bool,
}

/// mod_md's start: the managed domains (a warning for each that no virtual
/// host serves).
pub(crate) fn start(
    loaded: &crate::engine::Loaded,
    log: &std::sync::Arc<dyn crate::http::Log>,
) -> Result<MdEngine, String> {
    let b = &loaded.build;
    let domains: Vec<std::sync::Arc<ManagedDomain>> = managed_domains(b, &loaded.env.server_root)?
        .into_iter()
        .map(std::sync::Arc::new)
        .collect();
    for md in &domains {
        if !md.shown.used {
            let line = format!("AH10045: No VirtualHost matches Managed Domain {}", md.name);
            log.error("warn", "md", None, &line);
        }
    }
    let g = &b.global.modules.md;
    Ok(MdEngine {
        domains,
        base_server: g.base_server == Some(true),
        // Debian's Apache 2.4.71 (mod_md 2.6.10) shows the section only
        // when the directive turns it on; the certificate's page is on
        // unless turned off (tests/cases/md/status-pages).
        server_status: g.server_status == Some(true),
        certificate_status: g.certificate_status != Some(false),
    })
}

pub fn managed_domains(
    b: &crate::config::server::ServerBuild,
    server_root: &std::path::Path,
) -> Result<Vec<ManagedDomain>, String> {
    let g = &b.global.modules.md;
    let mut servers: Vec<&crate::config::server::ServerConf> = b.vhosts.iter().collect();
    if g.base_server == Some(true) {
        servers.push(&b.main);
    }
    let store_dir = g
        .store_dir
        .clone()
        .unwrap_or_else(|| server_root.join("md"));
    let out = g
        .domains
        .iter()
        .map(|def| {
            let s = def.settings.over(&g.settings);
            let mut domains = def.names.clone();
            let transitive = def.transitive.or(g.transitive).unwrap_or(true);
            if transitive {
                for server in &servers {
                    let names: Vec<&String> = server
                        .server_name
                        .iter()
                        .chain(server.server_aliases.iter())
                        .collect();
                    if names
                        .iter()
                        .any(|n| def.names.contains(&n.to_ascii_lowercase()))
                    {
                        for n in names {
                            add_name(&mut domains, n);
                        }
                    }
                }
            }
            let used = servers.iter().any(|server| {
                server
                    .server_name
                    .iter()
                    .chain(server.server_aliases.iter())
                    .any(|n| domains.contains(&n.to_ascii_lowercase()))
            });
            let acme_tls_1 = acme_tls_1_names(
                b,
                &servers,
                &domains,
                s.challenges.as_deref().unwrap_or_default(),
            );
            // mod_md leaves alone a domain it would renew by itself that no
            // virtual host uses (`init_cert_watch_status`).
            let renew_auto = s.renew_auto.unwrap_or(true);
            let shown = crate::http::md::Shown {
                transitive,
                used,
                watched: used || !renew_auto,
                agreement: s.agreement.clone(),
                challenges: s.challenges.clone().unwrap_or_default(),
            };
            ManagedDomain {
                name: def.names[0].clone(),
                domains,
                shown,
                ca_url: s
                    .ca_urls
                    .and_then(|u| u.into_iter().next())
                    .unwrap_or_else(|| DEFAULT_CA.into()),
                ca_cert_file: g.ca_cert_file.clone(),
                contact: s.contact.or_else(|| b.main.server_admin.clone()),
                agreement: s.agreement.is_some(),
                keys: s.keys.unwrap_or_else(|| vec![KeySpec::unnamed()]),
                answers_http01: s
                    .challenges
                    .as_ref()
                    .is_none_or(|c| c.contains(&Challenge::Http01)),
                challenges: reachable(
                    b,
                    s.challenges
                        .unwrap_or_else(|| vec![Challenge::Http01, Challenge::TlsAlpn01]),
                ),
                renew_window: s.renew_window.unwrap_or(DEFAULT_RENEW_WINDOW),
                warn_window: s.warn_window.unwrap_or(DEFAULT_WARN_WINDOW),
                acme_tls_1,
                renew_auto,
                require_https: s.require_https.unwrap_or_default(),
                eab: s.eab.flatten(),
                store_dir: store_dir.clone(),
                retry_delay: g.retry_delay.unwrap_or(DEFAULT_RETRY_DELAY),
                check_interval: g.check_interval.unwrap_or(DEFAULT_CHECK_INTERVAL),
                notify_cmd: g.notify_cmd.clone(),
                message_cmd: g.message_cmd.clone(),
            }
        })
        .collect::<Vec<_>>();
    // A name belongs to one managed domain (mod_md stops at start, AH10038).
    for (i, a) in out.iter().enumerate() {
        for b in &out[..i] {
            if let Some(name) = a.domains.iter().find(|n| b.domains.contains(n)) {
                return Err(format!(
                    "AH10038: two Managed Domains have an overlap in domain '{name}': {} and {}",
                    b.name, a.name
                ));
            }
        }
    }
    Ok(out)
}

/// The names of `domains` whose public HTTPS server allows `acme-tls/1`
/// (mod_md's `acme_tls_1_domains`, `get_public_https_server`): a server
/// among `servers` that speaks TLS and has the name, and lists the
/// protocol in its `Protocols`. Unless `MDCAChallenges` names
/// `tls-alpn-01`, that server must also be reached by public port 443
/// (something listens there, and the server's addresses are all on it).
fn acme_tls_1_names(
    b: &crate::config::server::ServerBuild,
    servers: &[&crate::config::server::ServerConf],
    domains: &[String],
    configured: &[Challenge],
) -> Vec<String> {
    let g = &b.global.modules.md;
    let port = local_port(g, 443);
    let check_port = !configured.contains(&Challenge::TlsAlpn01);
    if check_port && !reachable(b, vec![Challenge::TlsAlpn01]).contains(&Challenge::TlsAlpn01) {
        return Vec::new();
    }
    let port_of = |addr: &String| addr.rsplit(':').next().and_then(|n| n.parse::<u16>().ok());
    let tls = |server: &crate::config::server::ServerConf| {
        server.modules.ssl.engine == Some(crate::modules::ssl::SslEngine::On)
            || server.addrs.iter().any(|a| {
                b.global
                    .https_listeners
                    .iter()
                    .any(|(_, p)| port_of(a) == Some(*p))
            })
    };
    let on_port = |server: &crate::config::server::ServerConf| {
        !check_port
            || std::ptr::eq(server, &b.main)
            || port.is_none_or(|p| {
                !server.addrs.is_empty() && server.addrs.iter().all(|a| port_of(a) == Some(p))
            })
    };
    domains
        .iter()
        .filter(|domain| {
            servers.iter().any(|server| {
                let named = server
                    .server_name
                    .iter()
                    .chain(server.server_aliases.iter())
                    .any(|n| n.eq_ignore_ascii_case(domain));
                let protocols = if std::ptr::eq(*server, &b.main) {
                    server.modules.protocols.clone()
                } else {
                    crate::modules::http2::ProtocolsConf::merge(
                        &b.main.modules.protocols,
                        &server.modules.protocols,
                    )
                };
                named && tls(server) && on_port(server) && protocols.lists("acme-tls/1")
            })
        })
        .cloned()
        .collect()
}

/// The managed domain a server's names put it under (its `ServerName`,
/// else an alias, is one of the domain's names).
pub fn domain_of<'m>(
    domains: &'m [std::sync::Arc<ManagedDomain>],
    server_name: &str,
    aliases: &[String],
) -> Option<&'m std::sync::Arc<ManagedDomain>> {
    domains
        .iter()
        .find(|m| m.covers(server_name))
        .or_else(|| domains.iter().find(|m| aliases.iter().any(|a| m.covers(a))))
}

/// Where ACME's `http-01` challenges are asked.
const ACME_CHALLENGE_PREFIX: &str = "/.well-known/acme-challenge/";

/// mod_md's `post_read_request` hooks that answer before any other phase:
/// the answer to an `http-01` challenge for a managed name (read from the
/// store, where the certificate manager writes it), and the certificate
/// status page. `None`: the request goes on; an error status is answered
/// with the server's error document.
pub fn post_read_request(
    engine: &crate::engine::Engine,
    req: &crate::http::Request,
    raw_path: &str,
    path: &str,
) -> Option<Result<crate::http::Response, u16>> {
    if engine.modules.md.domains.is_empty() {
        return None;
    }
    let host = crate::engine::request_host(req)?.0;
    let md = engine.modules.md.domains.iter().find(|m| m.covers(&host))?;
    // mod_md compares the path as sent, before any decoding.
    if let Some(answer) = status::certificate_status(engine, &req.method, raw_path, md) {
        return Some(answer);
    }
    if let Some(token) = path.strip_prefix(ACME_CHALLENGE_PREFIX) {
        return challenge(engine, md, req, &host, token);
    }
    None
}

/// The managed domain whose `MDRequireHttps` applies to the request (or
/// internal redirect) `ctx`, with the host it names
/// (`md_require_https_maybe`): one covering the host, assigned to the
/// request's server (it covers one of the server's names), with
/// `MDRequireHttps` on; `/.well-known/` is exempt.
fn requiring_https<'e>(ctx: &crate::request::Ctx<'e>) -> Option<(&'e ManagedDomain, String)> {
    let domains = &ctx.engine.modules.md.domains;
    if domains.is_empty() {
        return None;
    }
    let (host, _) = crate::engine::request_host(ctx.req)?;
    let md = domains.iter().find(|m| m.covers(&host))?;
    let assigned = domain_of(domains, &ctx.site.server_name, &ctx.site.aliases)
        .is_some_and(|m| std::sync::Arc::ptr_eq(m, md));
    (assigned && md.require_https != RequireHttps::Off && !ctx.uri.starts_with("/.well-known/"))
        .then_some((&**md, host))
}

/// The `max-age` of the `Strict-Transport-Security` field mod_md sends
/// (`MD_HSTS_MAX_AGE_DEFAULT`, half a year; no directive changes it).
const HSTS_MAX_AGE: u32 = 15_768_000;

/// mod_md's `post_read_request` on plain HTTP (`md_require_https_maybe`),
/// for a request and each of its internal redirects: where
/// `MDRequireHttps` applies, the same URL on `https:` — 301 (`permanent`)
/// or 302 for `GET`, 308 or 307 for other methods, which must be kept.
pub fn require_https(ctx: &mut crate::request::Ctx<'_>) -> Result<(), crate::request::Status> {
    if ctx.req.tls.is_some() {
        return Ok(());
    }
    let Some((md, host)) = requiring_https(ctx) else {
        return Ok(());
    };
    let permanent = md.require_https == RequireHttps::Permanent;
    let status = match (ctx.method == "GET", permanent) {
        (true, true) => 301,
        (true, false) => 302,
        (false, true) => 308,
        (false, false) => 307,
    };
    let mut location = format!("https://{host}{}", ctx.uri);
    if let Some(q) = &ctx.args {
        location.push('?');
        location.push_str(q);
    }
    ctx.headers_out.push(("Location".into(), location));
    Err(status)
}

/// mod_md's `post_read_request` on HTTPS (`md_require_https_maybe`): under
/// `MDRequireHttps permanent`, `Strict-Transport-Security` joins the
/// response's fields (`r->headers_out`) of each request and internal
/// redirect, unless something set it before (`Header early`). Being an
/// ordinary field, it is dropped from an error page the server makes, and
/// later `Header` edits see it.
pub fn strict_transport_security(ctx: &mut crate::request::Ctx<'_>) {
    if ctx.req.tls.is_none() {
        return;
    }
    let permanent =
        requiring_https(ctx).is_some_and(|(md, _)| md.require_https == RequireHttps::Permanent);
    let already = || {
        ctx.headers_out
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("Strict-Transport-Security"))
    };
    if permanent && !already() {
        ctx.headers_out.push((
            "Strict-Transport-Security".into(),
            format!("max-age={HSTS_MAX_AGE}"),
        ));
    }
}

/// `md_http_challenge_pr`: the store's answer for this host, whatever the
/// token (the CA checks it); a managed host with no answer stored is a 404.
fn challenge(
    engine: &crate::engine::Engine,
    md: &ManagedDomain,
    req: &crate::http::Request,
    host: &str,
    token: &str,
) -> Option<Result<crate::http::Response, u16>> {
    if !md.answers_http01 || token.is_empty() || token.contains('/') {
        return None;
    }
    // The store changes outside the engine's view: never kept.
    crate::answer_memo::note_volatile();
    match std::fs::read(md.http01_file(host)) {
        Ok(data) => {
            if req.method != "GET" {
                return Some(Err(501));
            }
            let mut resp = crate::http::Response::new(200);
            resp.add_header("Content-Length", data.len().to_string());
            resp.body = crate::http::Body::bytes(data);
            Some(Ok(resp))
        }
        Err(_) if !md.renew_auto => None,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(Err(404)),
        Err(e) => {
            engine.main.log.error(
                "error",
                "md",
                Some(req.remote()),
                &format!("AH10081: loading challenge {token} from store: {e}"),
            );
            Some(Err(500))
        }
    }
}

macro_rules! md {
    ($($name:literal, $args:expr, $ovr:expr, $about:literal, $run:expr;)*) => {
        &[ $( Directive { name: $name, args: $args, req_override: $ovr, about: $about, run: Run::Handler($run) }, )* ]
    };
}

pub static DIRECTIVES: &[Directive] = md![
    "MDCertificateAuthority", Args::Argv, RSRC_CONF, "the ACME directory URL, or a CA's name", run_md;
    "MDCertificateAgreement", Args::Take1, RSRC_CONF, "'accepted' to agree to the CA's terms of service", run_md;
    "MDCAChallenges", Args::Argv, RSRC_CONF, "the challenge types to answer, in order of preference", run_md;
    "MDCertificateProtocol", Args::Take1, RSRC_CONF, "the protocol spoken with the CA (ACME)", run_md;
    "MDContactEmail", Args::Take1, RSRC_CONF, "the contact address given to the CA", run_md;
    "MDDriveMode", Args::Take1, RSRC_CONF, "the former name of MDRenewMode", run_md;
    "MDRenewMode", Args::Take1, RSRC_CONF, "auto or manual renewal of certificates", run_md;
    "MDomain", Args::Argv, RSRC_CONF, "a managed domain's names, optionally auto or manual", run_md;
    "MDMember", Args::Argv, RSRC_CONF, "more names of the managed domain", run_md;
    "MDMembers", Args::Argv, RSRC_CONF, "more names of the managed domain, or auto|manual", run_md;
    "MDMustStaple", Args::Take1, RSRC_CONF, "on to ask for the OCSP must-staple extension", run_md;
    "MDPortMap", Args::Take12, RSRC_CONF, "which local ports the Internet's 80 and 443 reach", run_md;
    "MDPrivateKeys", Args::Argv, RSRC_CONF, "the key types to obtain certificates for", run_md;
    "MDHttpProxy", Args::Take1, RSRC_CONF, "a proxy for the connections to the CA", run_md;
    "MDStoreDir", Args::Take1, RSRC_CONF, "where accounts, keys and certificates are kept", run_md;
    "MDRenewWindow", Args::Take1, RSRC_CONF, "how long before expiry a certificate is renewed", run_md;
    "MDRequireHttps", Args::Take1, RSRC_CONF | OR_AUTHCFG, "off, temporary or permanent redirection to https:", run_md;
    "MDNotifyCmd", Args::Raw, RSRC_CONF, "a command to run after a renewal", run_md;
    "MDBaseServer", Args::Take1, RSRC_CONF, "on to manage the main server too", run_md;
    "MDChallengeDns01", Args::Raw, RSRC_CONF, "a command that sets up dns-01 challenges", run_md;
    "MDChallengeDns01Version", Args::Take1, RSRC_CONF, "the version of the dns-01 command's calls", run_md;
    "MDCertificateFile", Args::Take1, RSRC_CONF, "a static certificate for the managed domain", run_md;
    "MDCertificateKeyFile", Args::Take1, RSRC_CONF, "the key of a static certificate", run_md;
    "MDServerStatus", Args::Take1, RSRC_CONF, "on to show managed domains on server-status", run_md;
    "MDCertificateStatus", Args::Take1, RSRC_CONF, "on to publish a certificate's status at /.httpd/certificate-status", run_md;
    "MDWarnWindow", Args::Take1, RSRC_CONF, "how long before expiry a warning is given", run_md;
    "MDMessageCmd", Args::Raw, RSRC_CONF, "a command to run on certificate events", run_md;
    "MDStapling", Args::Take1, RSRC_CONF, "on to staple OCSP responses", run_md;
    "MDStapleOthers", Args::Take1, RSRC_CONF, "on to staple for certificates not managed here", run_md;
    "MDStaplingKeepResponse", Args::Take1, RSRC_CONF, "how long OCSP responses are kept", run_md;
    "MDStaplingRenewWindow", Args::Take1, RSRC_CONF, "when OCSP responses are renewed", run_md;
    "MDCertificateCheck", Args::Take2, RSRC_CONF, "a site where certificates can be looked up", run_md;
    "MDActivationDelay", Args::Take1, RSRC_CONF, "how long a new certificate waits before use", run_md;
    "MDCACertificateFile", Args::Take1, RSRC_CONF, "the roots trusted for the CA's HTTPS", run_md;
    "MDExternalAccountBinding", Args::Take12, RSRC_CONF, "KEYID HMAC for the CA's account binding, or none", run_md;
    "MDRetryDelay", Args::Take1, RSRC_CONF, "the first wait after a failed attempt", run_md;
    "MDRetryFailover", Args::Take1, RSRC_CONF, "failures before another CA is tried", run_md;
    "MDStoreLocks", Args::Take1, RSRC_CONF, "lock the store among processes", run_md;
    "MDMatchNames", Args::Take1, RSRC_CONF, "which names of a virtual host are matched", run_md;
    "MDCheckInterval", Args::Take1, RSRC_CONF, "how often certificates are checked", run_md;
    "<MDomainSet", Args::Section, RSRC_CONF, "a managed domain with settings of its own", run_section;
    "<MDomain", Args::Section, RSRC_CONF, "a managed domain with settings of its own", run_section;
];

pub static MODULE: Module = Module {
    source: "mod_md.c",
    identifier: "md_module",
    builtin: false,
    directives: DIRECTIVES,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;

    fn engine(text: &str) -> Result<Engine, String> {
        let text = format!(
            "LoadModule mime_module m.so\nTypesConfig /dev/null\nLoadModule ssl_module m.so\nLoadModule md_module m.so\n{text}"
        );
        crate::test_support::engine_at(&text, "/srv")
    }

    #[test]
    fn members_auto_adds_the_virtual_hosts_names() {
        let e = engine(
            "ServerAdmin root@example.org\nMDomain Example.org\nMDomain other.org manual\n\
             <VirtualHost *:443>\nServerName example.org\nServerAlias www.example.org\n</VirtualHost>\n\
             <VirtualHost *:443>\nServerName other.org\nServerAlias www.other.org\n</VirtualHost>\n",
        )
        .unwrap();
        assert_eq!(
            e.modules.md.domains[0].domains,
            ["example.org", "www.example.org"]
        );
        assert_eq!(e.modules.md.domains[1].domains, ["other.org"]);
        assert_eq!(
            e.modules.md.domains[0].contact.as_deref(),
            Some("root@example.org")
        );
        assert_eq!(
            e.modules.md.domains[0].store_dir,
            std::path::Path::new("/srv/md")
        );
        assert_eq!(e.modules.md.domains[0].ca_url, DEFAULT_CA);
    }

    #[test]
    fn a_section_has_settings_of_its_own() {
        let e = engine(
            "Listen 443\nMDRenewWindow 10d\nMDCertificateAuthority https://ca.test/dir\n\
             <MDomain a.test>\nMDRenewWindow 50%\nMDCAChallenges tls-alpn-01\nMDMember b.test\n</MDomain>\n\
             MDomain c.test\n",
        )
        .unwrap();
        assert_eq!(e.modules.md.domains[0].domains, ["a.test", "b.test"]);
        assert_eq!(e.modules.md.domains[0].renew_window, Window::Percent(50));
        assert_eq!(e.modules.md.domains[0].challenges, [Challenge::TlsAlpn01]);
        assert_eq!(
            e.modules.md.domains[1].renew_window,
            Window::Fixed(Duration::from_secs(864_000))
        );
        assert_eq!(e.modules.md.domains[1].ca_url, "https://ca.test/dir");
        // Listening on 443 only: no http-01 (mod_md's reachability).
        assert_eq!(e.modules.md.domains[1].challenges, [Challenge::TlsAlpn01]);
        let mapped = engine("Listen 8080\nMDPortMap http:8080 https:-\nMDomain a.test\n").unwrap();
        assert_eq!(mapped.modules.md.domains[0].challenges, [Challenge::Http01]);
    }

    #[test]
    fn refusals_say_why() {
        let err = |t: &str| engine(t).err().unwrap_or_default();
        assert!(
            err("MDomain a.test\nMDomain b.test a.test\n").contains("overlap in domain 'a.test'")
        );
        assert!(
            err("<VirtualHost *:443>\nMDRenewWindow 10d\n</VirtualHost>\n").contains("main server")
        );
        assert!(err("MDPrivateKeys RSA 2048\n").contains("elliptic-curve"));
        assert!(err("MDChallengeDns01 /bin/true\n").contains("not supported"));
        assert!(err("MDMembers a.test\n").contains("auto|manual"));
        assert!(err("MDMember a.test b.test\n").contains("only valid inside"));
        assert!(err("<Directory />\nMDomain a.test\n</Directory>\n").contains("not allowed"));
        assert!(err("MDRenewWindow 100%\n").contains("100%"));
        assert!(err("MDomain auto\n").contains("at least one domain"));
    }

    #[test]
    fn durations_and_windows_read_as_mod_md() {
        assert_eq!(
            parse_duration("30", "d"),
            Some(Duration::from_secs(30 * 86400))
        );
        assert_eq!(parse_duration("5s", "d"), Some(Duration::from_secs(5)));
        assert_eq!(parse_duration("2mi", "s"), Some(Duration::from_secs(120)));
        assert_eq!(
            parse_duration("250ms", "s"),
            Some(Duration::from_millis(250))
        );
        assert_eq!(parse_duration("x", "s"), None);
        assert_eq!(parse_window("W", "33%"), Ok(Window::Percent(33)));
        assert!(parse_window("W", "100%").is_err());
        assert_eq!(
            Window::Percent(50).length(Duration::from_secs(100)),
            Duration::from_secs(50)
        );
    }

    #[test]
    fn ca_names_and_urls() {
        assert_eq!(ca_url("letsencrypt").unwrap(), DEFAULT_CA);
        assert!(ca_url("https://127.0.0.1:14000/dir").is_ok());
        assert!(ca_url("nosuchca").is_err());
    }

    #[test]
    fn coverage_includes_one_wildcard_label() {
        let m = ManagedDomain {
            name: "example.test".into(),
            domains: vec!["example.test".into(), "*.example.test".into()],
            ca_url: DEFAULT_CA.into(),
            ca_cert_file: None,
            contact: None,
            agreement: true,
            keys: vec![KeySpec::unnamed()],
            challenges: vec![Challenge::Http01],
            acme_tls_1: Vec::new(),
            answers_http01: true,
            renew_window: DEFAULT_RENEW_WINDOW,
            warn_window: DEFAULT_WARN_WINDOW,
            renew_auto: true,
            require_https: RequireHttps::Off,
            eab: None,
            store_dir: "/tmp/x".into(),
            retry_delay: DEFAULT_RETRY_DELAY,
            check_interval: DEFAULT_CHECK_INTERVAL,
            notify_cmd: None,
            message_cmd: None,
            shown: Default::default(),
        };
        assert!(m.covers("example.test"));
        assert!(m.covers("www.example.test"));
        assert!(!m.covers("a.b.example.test"));
        assert!(!m.covers("other.test"));
    }
}
