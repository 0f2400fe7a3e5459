//! mod_ssl: HTTPS as Apache's configuration describes it.
//!
//! The meaning lives here: the directives with mod_ssl's contexts, the
//! per-server settings and their merge (a `<VirtualHost>` over the main
//! server, certificate lists appended as `cfgMergeArray` appends them),
//! the per-directory `SSLOptions`/`SSLRequireSSL`, the `SSL_*` variables
//! ([`vars`]) and which addresses speak TLS with which certificates
//! ([`ports`]). The handshake itself is the server's (`htaccel_server::tls`,
//! on rustls).
//!
//! What rustls cannot do is refused when the configuration is read, with
//! the reason: SSLv3 and older (as Apache does), `SSLEngine optional`
//! (RFC 2817 upgrade), compression, renegotiation (`SSLInsecureRenegotiation
//! on`, per-directory `SSLCipherSuite`/`SSLVerifyClient`), and, not yet
//! implemented, `optional_no_ca`, revocation lists and client
//! certificates for proxied servers; HTTPS to proxied servers
//! (`SSLProxyEngine on`) checks their names and dates, and their chain
//! with `SSLProxyVerify require`. OCSP stapling (`SSLUseStapling`) is
//! configured here and done by the server (`htaccel_server::tls::stapling`);
//! `SSLOpenSSLConfCmd` is read by [`openssl_conf`]. Client certificates
//! are asked for in the handshake (`SSLVerifyClient` per server), their
//! chain bounded by the server's `SSLVerifyDepth`; a directory's
//! `SSLVerifyDepth` acts at request time as mod_ssl's does for a client
//! that cannot be asked again ([`check_access`]).

pub mod ciphers;
pub mod opened_elsewhere;
pub mod openssl_conf;
pub mod ports;
pub mod protocol;
pub mod shutdown;
pub mod vars;

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::registry::{
    flag, Args, Directive, Module, Run, ACCESS_CONF, OR_AUTHCFG, OR_OPTIONS, RSRC_CONF,
};
use crate::request::{Ctx, Status};
use std::path::PathBuf;

/// `SSLEngine`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SslEngine {
    On,
    Off,
}

/// The module's server configuration (`SSLSrvConfigRec` with its `modssl_ctx_t`).
#[derive(Clone, Debug, Default)]
pub struct SslServer {
    pub engine: Option<SslEngine>,
    pub cert_files: Vec<PathBuf>,
    pub key_files: Vec<PathBuf>,
    pub chain_file: Option<PathBuf>,
    pub protocols: Option<protocol::Protocols>,
    pub suites12: Option<Vec<&'static str>>,
    pub suites13: Option<Vec<&'static str>>,
    pub honor_cipher_order: Option<bool>,
    pub session_tickets: Option<bool>,
    /// `SSLSessionCacheTimeout`: how long a session can be resumed.
    pub session_cache_timeout: Option<u32>,
    pub strict_sni: Option<bool>,
    /// `SSLSessionCache` (a global setting in Apache): sessions kept by ID.
    pub session_cache: Option<bool>,
    /// `SSLVerifyClient` at the server level.
    pub verify_client: Option<VerifyClient>,
    /// `SSLCACertificateFile`, `SSLCACertificatePath`: the CAs a client
    /// certificate is verified against.
    pub ca_file: Option<PathBuf>,
    pub ca_path: Option<PathBuf>,
    /// `SSLVerifyDepth` at the server level.
    pub verify_depth: Option<u32>,
    /// `SSLStaplingCache` (a global setting in Apache).
    pub stapling_cache: bool,
    /// `SSLUseStapling` and the other `SSLStapling*` settings.
    pub stapling: Stapling,
    /// `SSLOpenSSLConfCmd Curves` (and `Groups`, `ECDHParameters`).
    pub groups: Option<Vec<crate::http::tls::KxGroup>>,
    /// `SSLProxyEngine`: HTTPS to proxied servers.
    pub proxy_engine: Option<bool>,
    /// `SSLProxyCheckPeerName`, `SSLProxyCheckPeerCN`, `SSLProxyCheckPeerExpire`.
    pub proxy_check_peer_name: Option<bool>,
    pub proxy_check_peer_cn: Option<bool>,
    pub proxy_check_peer_expire: Option<bool>,
    /// `SSLProxyVerify` (`Some(true)`: `require` or `optional`).
    pub proxy_verify: Option<bool>,
    pub proxy_verify_depth: Option<u32>,
    /// `SSLProxyCACertificateFile`, `SSLProxyCACertificatePath`.
    pub proxy_ca_file: Option<PathBuf>,
    pub proxy_ca_path: Option<PathBuf>,
    /// `SSLProxyProtocol`, `SSLProxyCipherSuite`: what a connection to an
    /// HTTPS upstream may negotiate.
    pub proxy_protocols: Option<protocol::Protocols>,
    pub proxy_suites12: Option<Vec<&'static str>>,
    pub proxy_suites13: Option<Vec<&'static str>>,
}

/// The `SSLStapling*` settings of one server (unset: inherited, then
/// mod_ssl's default).
#[derive(Clone, Debug, Default)]
pub struct Stapling {
    pub enabled: Option<bool>,
    pub time_skew: Option<u32>,
    pub max_age: Option<u32>,
    pub cache_timeout: Option<u32>,
    pub error_cache_timeout: Option<u32>,
    pub responder_timeout: Option<u32>,
    pub return_errors: Option<bool>,
    pub fake_try_later: Option<bool>,
    pub force_url: Option<String>,
}

impl Stapling {
    /// `cfgMerge*`: the virtual host's setting, else the main server's.
    fn merge(main: &Stapling, vhost: &Stapling) -> Stapling {
        Stapling {
            enabled: vhost.enabled.or(main.enabled),
            time_skew: vhost.time_skew.or(main.time_skew),
            max_age: vhost.max_age.or(main.max_age),
            cache_timeout: vhost.cache_timeout.or(main.cache_timeout),
            error_cache_timeout: vhost.error_cache_timeout.or(main.error_cache_timeout),
            responder_timeout: vhost.responder_timeout.or(main.responder_timeout),
            return_errors: vhost.return_errors.or(main.return_errors),
            fake_try_later: vhost.fake_try_later.or(main.fake_try_later),
            force_url: vhost.force_url.clone().or_else(|| main.force_url.clone()),
        }
    }

    /// The handshake's settings when stapling is on, with
    /// `modssl_init_stapling`'s defaults.
    pub fn spec(&self, cache: bool) -> Option<crate::http::tls::StaplingSpec> {
        (self.enabled == Some(true)).then(|| crate::http::tls::StaplingSpec {
            cache,
            time_skew: self.time_skew.unwrap_or(300),
            max_age: self.max_age,
            cache_timeout: self.cache_timeout.unwrap_or(3600),
            error_cache_timeout: self.error_cache_timeout.unwrap_or(600),
            responder_timeout: self.responder_timeout.unwrap_or(10),
            return_errors: self.return_errors.unwrap_or(true),
            fake_try_later: self.fake_try_later.unwrap_or(true),
            force_url: self.force_url.clone(),
        })
    }
}

/// `SSLSessionCacheTimeout` where none is set (`SSL_SESSION_CACHE_TIMEOUT`).
pub const DEFAULT_SESSION_CACHE_TIMEOUT: u32 = 300;

/// `SSLVerifyDepth` where none is set (`ssl_init_ctx_verify`).
pub const DEFAULT_VERIFY_DEPTH: u32 = 1;

/// A number as C's `atoi` reads it (leading blanks and a sign, then
/// digits; `abc` is 0), as mod_ssl reads its counts; `None` below 0.
fn atoi(arg: &str) -> Option<u32> {
    let t = arg.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (negative, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let value = digits
        .bytes()
        .take_while(u8::is_ascii_digit)
        .fold(0u32, |v, d| {
            v.saturating_mul(10)
                .saturating_add(u32::from(d - b'0'))
                .min(i32::MAX as u32)
        });
    (!negative || value == 0).then_some(value)
}

/// `ssl_cmd_verify_depth_parse`.
pub fn parse_verify_depth(name: &str, arg: &str) -> Result<u32, String> {
    atoi(arg).ok_or_else(|| format!("{name}: Invalid argument '{arg}'"))
}

/// `SSLVerifyClient` (`optional_no_ca` is refused).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerifyClient {
    None,
    Optional,
    Require,
}

impl SslServer {
    /// `ssl_config_server_merge`: a vhost's setting, else the main
    /// server's; certificate and key lists appended to the main server's.
    pub fn merge(main: &SslServer, vhost: &SslServer) -> SslServer {
        let mut cert_files = main.cert_files.clone();
        cert_files.extend(vhost.cert_files.iter().cloned());
        let mut key_files = main.key_files.clone();
        key_files.extend(vhost.key_files.iter().cloned());
        SslServer {
            engine: vhost.engine.or(main.engine),
            cert_files,
            key_files,
            chain_file: vhost.chain_file.clone().or_else(|| main.chain_file.clone()),
            protocols: vhost.protocols.or(main.protocols),
            suites12: vhost.suites12.clone().or_else(|| main.suites12.clone()),
            suites13: vhost.suites13.clone().or_else(|| main.suites13.clone()),
            honor_cipher_order: vhost.honor_cipher_order.or(main.honor_cipher_order),
            session_tickets: vhost.session_tickets.or(main.session_tickets),
            session_cache_timeout: vhost.session_cache_timeout.or(main.session_cache_timeout),
            strict_sni: vhost.strict_sni.or(main.strict_sni),
            session_cache: main.session_cache,
            verify_client: vhost.verify_client.or(main.verify_client),
            ca_file: vhost.ca_file.clone().or_else(|| main.ca_file.clone()),
            ca_path: vhost.ca_path.clone().or_else(|| main.ca_path.clone()),
            verify_depth: vhost.verify_depth.or(main.verify_depth),
            stapling_cache: main.stapling_cache,
            stapling: Stapling::merge(&main.stapling, &vhost.stapling),
            // The main server's commands run first, then the virtual
            // host's (`cfgMergeArray`): its own list wins.
            groups: vhost.groups.clone().or_else(|| main.groups.clone()),
            proxy_engine: vhost.proxy_engine.or(main.proxy_engine),
            proxy_check_peer_name: vhost.proxy_check_peer_name.or(main.proxy_check_peer_name),
            proxy_check_peer_cn: vhost.proxy_check_peer_cn.or(main.proxy_check_peer_cn),
            proxy_check_peer_expire: vhost
                .proxy_check_peer_expire
                .or(main.proxy_check_peer_expire),
            proxy_verify: vhost.proxy_verify.or(main.proxy_verify),
            proxy_verify_depth: vhost.proxy_verify_depth.or(main.proxy_verify_depth),
            proxy_ca_file: vhost
                .proxy_ca_file
                .clone()
                .or_else(|| main.proxy_ca_file.clone()),
            proxy_ca_path: vhost
                .proxy_ca_path
                .clone()
                .or_else(|| main.proxy_ca_path.clone()),
            proxy_protocols: vhost.proxy_protocols.or(main.proxy_protocols),
            proxy_suites12: vhost
                .proxy_suites12
                .clone()
                .or_else(|| main.proxy_suites12.clone()),
            proxy_suites13: vhost
                .proxy_suites13
                .clone()
                .or_else(|| main.proxy_suites13.clone()),
        }
    }

    /// The TLS versions (1.2, 1.3) and suites (TLS 1.3's first, by their
    /// OpenSSL names) a connection to an HTTPS upstream offers.
    pub fn proxy_offer(&self) -> (bool, bool, Vec<&'static str>) {
        let protocols = self.proxy_protocols.unwrap_or(protocol::Protocols::DEFAULT);
        let mut suites = self
            .proxy_suites13
            .clone()
            .unwrap_or_else(ciphers::tls13_default);
        suites.extend(
            self.proxy_suites12
                .clone()
                .unwrap_or_else(ciphers::tls12_default),
        );
        (protocols.tls1_2, protocols.tls1_3, suites)
    }

    pub fn enabled(&self) -> bool {
        self.engine == Some(SslEngine::On)
    }
}

/// `SSLOptions` bits.
pub const OPT_STD_ENV_VARS: u8 = 1;
pub const OPT_EXPORT_CERT_DATA: u8 = 2;
pub const OPT_FAKE_BASIC_AUTH: u8 = 4;
pub const OPT_STRICT_REQUIRE: u8 = 8;
pub const OPT_OPT_RENEGOTIATE: u8 = 16;
pub const OPT_LEGACY_DN_FORMAT: u8 = 32;

/// The per-directory configuration (`SSLDirConfigRec`): `SSLOptions` kept
/// as Apache keeps it (absolute, or relative with what was added and
/// removed), and `SSLRequireSSL`.
#[derive(Clone, Debug, Default)]
pub struct SslDir {
    options: u8,
    add: u8,
    del: u8,
    /// The options were set absolutely (no `+`/`-`) in this context.
    absolute: bool,
    require_ssl: Option<bool>,
    /// `SSLVerifyDepth` in a directory context (`nVerifyDepth`).
    verify_depth: Option<u32>,
}

impl SslDir {
    /// `ssl_config_perdir_merge`.
    pub fn merge(base: &SslDir, new: &SslDir) -> SslDir {
        let (options, add, del) = if new.absolute {
            (new.options, new.add, new.del)
        } else {
            let add = (base.add & !new.del) | new.add;
            let del = (base.del & !new.add) | new.del;
            ((base.options & !del) | add, add, del)
        };
        SslDir {
            options,
            add,
            del,
            absolute: new.absolute,
            require_ssl: new.require_ssl.or(base.require_ssl),
            verify_depth: new.verify_depth.or(base.verify_depth),
        }
    }

    pub fn has(&self, opt: u8) -> bool {
        self.options & opt != 0
    }
}

fn server_path(w: &Walker<'_>, arg: &str) -> PathBuf {
    crate::modules::authn_file::server_relative(w, arg)
}

/// A certificate or key file must exist and not be empty when the
/// configuration is read (`ssl_cmd_check_file`).
fn check_file(w: &Walker<'_>, inv: &Invocation<'_>) -> Result<PathBuf, String> {
    check_file_named(w, inv.name, &inv.words[0])
}

fn check_file_named(w: &Walker<'_>, directive: &str, arg: &str) -> Result<PathBuf, String> {
    let path = server_path(w, arg);
    match opened_elsewhere::metadata(&path) {
        Ok(m) if m.is_file() && m.len() > 0 => Ok(path),
        _ => Err(format!(
            "{directive}: file '{}' does not exist or is empty",
            path.display()
        )),
    }
}

/// `SSLProxyVerify`: `none` (the default) checks an upstream's name and
/// dates only; `require` (and `optional`, the same for a server, which
/// always sends a certificate) verifies its chain too.
fn run_proxy_verify(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    let verify = match inv.words[0].to_ascii_lowercase().as_str() {
        "none" => false,
        "optional" | "require" => true,
        "optional_no_ca" => {
            return Err("SSLProxyVerify optional_no_ca is not supported by htaccel yet".into())
        }
        _ => {
            return Err(format!(
                "SSLProxyVerify: Invalid argument '{}'",
                inv.words[0]
            ))
        }
    };
    w.server()?.modules.ssl.proxy_verify = Some(verify);
    Ok(())
}

/// `SSLProxyVerifyDepth`, `SSLProxyCACertificateFile`, `SSLProxyCACertificatePath`.
fn run_proxy_ca(w: &mut Walker<'_>, inv: &Invocation<'_>, _c: &mut DirConf) -> Result<(), String> {
    let name = inv.name.to_ascii_lowercase();
    if name == "sslproxyverifydepth" {
        let depth = parse_verify_depth(inv.name, &inv.words[0])?;
        w.server()?.modules.ssl.proxy_verify_depth = Some(depth);
    } else if name == "sslproxycacertificatefile" {
        let path = check_file(w, inv)?;
        w.server()?.modules.ssl.proxy_ca_file = Some(path);
    } else {
        let path = server_path(w, &inv.words[0]);
        if !path.is_dir() {
            return Err(format!(
                "{}: directory '{}' does not exist",
                inv.name,
                path.display()
            ));
        }
        w.server()?.modules.ssl.proxy_ca_path = Some(path);
    }
    Ok(())
}

/// `SSLOpenSSLConfCmd COMMAND VALUE` ([`openssl_conf`]).
fn run_openssl_conf(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    let (command, kind) = openssl_conf::lookup(&inv.words[0])?;
    let value = &inv.words[1];
    match kind {
        openssl_conf::ValueKind::File => {
            check_file_named(w, inv.name, value)?;
        }
        openssl_conf::ValueKind::Directory => {
            let path = server_path(w, value);
            if !path.is_dir() {
                return Err(format!(
                    "{}: directory '{}' does not exist",
                    inv.name,
                    path.display()
                ));
            }
        }
        openssl_conf::ValueKind::Text => {}
    }
    openssl_conf::apply(&mut w.server()?.modules.ssl, command, value)
}

fn run_engine(w: &mut Walker<'_>, inv: &Invocation<'_>, _c: &mut DirConf) -> Result<(), String> {
    let arg = &inv.words[0];
    let value = if arg.eq_ignore_ascii_case("on") {
        SslEngine::On
    } else if arg.eq_ignore_ascii_case("off") {
        SslEngine::Off
    } else if arg.eq_ignore_ascii_case("optional") {
        return Err("SSLEngine optional (the RFC 2817 upgrade to TLS) is not supported by htaccel; use SSLEngine on".into());
    } else {
        return Err("Argument must be On, Off, or Optional".into());
    };
    w.server()?.modules.ssl.engine = Some(value);
    Ok(())
}

fn run_cert(w: &mut Walker<'_>, inv: &Invocation<'_>, _c: &mut DirConf) -> Result<(), String> {
    let path = check_file(w, inv)?;
    let ssl = &mut w.server()?.modules.ssl;
    match inv.name.to_ascii_lowercase().as_str() {
        "sslcertificatefile" => ssl.cert_files.push(path),
        "sslcertificatekeyfile" => ssl.key_files.push(path),
        _ => ssl.chain_file = Some(path),
    }
    Ok(())
}

fn run_protocol(w: &mut Walker<'_>, inv: &Invocation<'_>, _c: &mut DirConf) -> Result<(), String> {
    let parsed = protocol::parse(inv.name, &inv.words)?;
    if !parsed.protocols.tls1_2 && !parsed.protocols.tls1_3 {
        return Err(format!(
            "{}: htaccel speaks TLSv1.2 and TLSv1.3 only (rustls), and this line enables neither",
            inv.name
        ));
    }
    if !parsed.named_old.is_empty() {
        w.warn(
            inv.origin,
            format!(
                "{}: {} not offered: htaccel speaks TLSv1.2 and TLSv1.3 only (rustls)",
                inv.name,
                parsed.named_old.join(" and ")
            ),
        );
    }
    let ssl = &mut w.server()?.modules.ssl;
    if inv.name.eq_ignore_ascii_case("SSLProxyProtocol") {
        ssl.proxy_protocols = Some(parsed.protocols);
    } else {
        ssl.protocols = Some(parsed.protocols);
    }
    Ok(())
}

fn run_cipher_suite(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    let proxy = inv.name.eq_ignore_ascii_case("SSLProxyCipherSuite");
    if in_directory(w) && !proxy {
        return Err(format!(
            "{} in a directory context needs a renegotiation, which htaccel does not do: set it in the <VirtualHost>",
            inv.name
        ));
    }
    let (proto, spec) = match inv.words.as_slice() {
        [spec] => ("SSL", spec),
        [proto, spec] => (proto.as_str(), spec),
        _ => return Err(format!("{} takes 1-2 arguments", inv.name)),
    };
    let ssl = &mut w.server()?.modules.ssl;
    let (suites12, suites13) = if proxy {
        (&mut ssl.proxy_suites12, &mut ssl.proxy_suites13)
    } else {
        (&mut ssl.suites12, &mut ssl.suites13)
    };
    if proto.eq_ignore_ascii_case("TLSv1.3") {
        *suites13 = Some(ciphers::parse_tls13(spec)?);
    } else if proto.eq_ignore_ascii_case("SSL") {
        let list = ciphers::parse_tls12(spec)?;
        if list.is_empty() {
            return Err(format!(
                "{}: '{spec}' selects none of the TLSv1.2 suites htaccel offers ({})",
                inv.name,
                ciphers::tls12_default().join(":")
            ));
        }
        *suites12 = Some(list);
    } else {
        return Err(format!("{}: protocol '{proto}' not supported", inv.name));
    }
    Ok(())
}

fn run_flag(w: &mut Walker<'_>, inv: &Invocation<'_>, _c: &mut DirConf) -> Result<(), String> {
    let on = flag(&inv.words);
    let name = inv.name.to_ascii_lowercase();
    let ssl = &mut w.server()?.modules.ssl;
    match name.as_str() {
        "sslhonorcipherorder" => ssl.honor_cipher_order = Some(on),
        "sslsessiontickets" => ssl.session_tickets = Some(on),
        "sslstrictsnivhostcheck" => ssl.strict_sni = Some(on),
        "sslcompression" if on => {
            return Err("Setting Compression mode unsupported; not implemented by the SSL library (rustls has no TLS compression)".into())
        }
        "sslinsecurerenegotiation" if on => {
            return Err("SSLInsecureRenegotiation on: htaccel (rustls) does not renegotiate at all".into())
        }
        "sslusestapling" => ssl.stapling.enabled = Some(on),
        "sslstaplingreturnrespondererrors" => ssl.stapling.return_errors = Some(on),
        "sslstaplingfaketrylater" => ssl.stapling.fake_try_later = Some(on),
        "sslproxyengine" => ssl.proxy_engine = Some(on),
        "sslproxycheckpeername" => ssl.proxy_check_peer_name = Some(on),
        "sslproxycheckpeercn" => ssl.proxy_check_peer_cn = Some(on),
        "sslproxycheckpeerexpire" => ssl.proxy_check_peer_expire = Some(on),
        _ => {}
    }
    Ok(())
}

fn run_session_cache(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    let arg = &inv.words[0];
    let on = !(arg == "none" || arg == "nonenotnull");
    if on {
        socache(w, arg).map_err(|e| {
            let e = e.replace(") Maybe", "). Maybe").replace("?)", "?).");
            format!("SSLSessionCache: {}", e.replace("%s", "session"))
        })?;
    }
    w.server()?.modules.ssl.session_cache = Some(on);
    Ok(())
}

/// A socache `name:args` as `ap_lookup_provider` and the provider's
/// `create` check it; the error's `%s` is the cache's kind.
fn socache(w: &Walker<'_>, arg: &str) -> Result<(), String> {
    let (name, args) = arg.split_once(':').unwrap_or((arg, ""));
    let known = socache_providers(w);
    if !known.contains(&name) {
        return Err(format!(
            "'{name}' %s cache not supported (known names: {}) Maybe you need to load the appropriate socache module (mod_socache_{name}?)",
            known.join(",")
        ));
    }
    if matches!(name, "shmcb" | "default") {
        shmcb_args(args)?;
    }
    Ok(())
}

/// `socache_shmcb_create`'s check of `path(size)`.
fn shmcb_args(args: &str) -> Result<(), &'static str> {
    match (args.rfind('('), args.ends_with(')')) {
        (Some(open), true) => {
            let size = &args[open + 1..args.len() - 1];
            let digits = size.strip_prefix(['-', '+']).unwrap_or(size);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err("Invalid argument: cache size not numerical");
            }
            match size.parse::<i64>() {
                Ok(n) if n >= 8192 && n < i64::from(u32::MAX) => Ok(()),
                Ok(n) if n < 8192 => Err("Invalid argument: size has to be >= 8192 bytes"),
                _ => Err("Invalid argument: size has to be < 4294967295 bytes on this platform"),
            }
        }
        (Some(_), false) => Err("Invalid argument: no closing parenthesis or cache size missing after pathname with parenthesis"),
        (None, true) => Err("Invalid argument: no opening parenthesis"),
        (None, false) => Ok(()),
    }
}

/// The socache providers the loaded modules register (`ap_lookup_provider`
/// finds only those), in load order; mod_socache_shmcb's is also the
/// `default` one.
fn socache_providers(w: &Walker<'_>) -> Vec<&'static str> {
    let mut names = Vec::new();
    for (module, provider) in [
        ("socache_shmcb_module", "shmcb"),
        ("socache_shmcb_module", "default"),
        ("socache_dbm_module", "dbm"),
        ("socache_dc_module", "dc"),
        ("socache_memcache_module", "memcache"),
        ("socache_redis_module", "redis"),
    ] {
        if w.loaded_by_reading(module) {
            names.push(provider);
        }
    }
    names
}

fn run_session_timeout(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    let secs = atoi(&inv.words[0]).ok_or("SSLSessionCacheTimeout: Invalid argument")?;
    w.server()?.modules.ssl.session_cache_timeout = Some(secs);
    Ok(())
}

/// Accepted: rustls seeds from the operating system's generator itself
/// (`builtin` and `file:/dev/urandom` are what Debian configures).
fn run_random_seed(
    _w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    let ctx = inv.words[0].to_ascii_lowercase();
    if ctx != "startup" && ctx != "connect" {
        return Err("SSLRandomSeed: invalid context: `startup' or `connect' expected".into());
    }
    Ok(())
}

/// Accepted: a key is read at start-up, and an encrypted one is refused
/// then with the file's name (htaccel asks for no pass phrase).
///
/// As in Apache, an `exec:` program (relative to `ServerRoot`) must exist:
/// Red Hat's stock `ssl.conf` names `/usr/libexec/httpd-ssl-pass-dialog`.
fn run_pass_phrase(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    let arg = &inv.words[0];
    if let Some(program) = arg.strip_prefix("exec:").filter(|p| !p.is_empty()) {
        let path = w.env.server_root.join(program);
        if std::fs::symlink_metadata(&path).is_err() {
            return Err(format!(
                "SSLPassPhraseDialog: file '{}' does not exist",
                path.display()
            ));
        }
        return Ok(());
    }
    if arg == "builtin" || (arg.len() > 1 && arg.starts_with('|')) {
        Ok(())
    } else {
        Err(format!("{}: Invalid argument", inv.name))
    }
}

/// A directory context: what would need a renegotiation there.
fn in_directory(w: &Walker<'_>) -> bool {
    w.ctx.path.is_some() || w.ctx.htaccess
}

/// `SSLVerifyClient` for the whole server: client certificates asked for
/// in the handshake. Per directory it needs a renegotiation (or TLS 1.3
/// post-handshake authentication), which htaccel does not do.
fn run_verify_client(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    let arg = inv.words[0].to_ascii_lowercase();
    let mode = match arg.as_str() {
        "none" => VerifyClient::None,
        "optional" => VerifyClient::Optional,
        "require" => VerifyClient::Require,
        "optional_no_ca" => {
            return Err(format!(
                "{} optional_no_ca: accepting unverifiable client certificates is not supported by htaccel",
                inv.name
            ))
        }
        _ => {
            return Err(format!(
                "{}: Invalid argument '{}'",
                inv.name, inv.words[0]
            ))
        }
    };
    if in_directory(w) {
        if mode == VerifyClient::None {
            return Ok(());
        }
        return Err(format!(
            "{} {} in a directory context needs a renegotiation, which htaccel does not do: set it in the <VirtualHost>",
            inv.name, inv.words[0]
        ));
    }
    w.server()?.modules.ssl.verify_client = Some(mode);
    Ok(())
}

/// `SSLVerifyDepth`: for the server, the bound on the client's chain in
/// the handshake; in a directory, what `check_access` compares with the
/// depth the connection's certificate was verified under.
fn run_verify_depth(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    c: &mut DirConf,
) -> Result<(), String> {
    let depth = parse_verify_depth(inv.name, &inv.words[0])?;
    if in_directory(w) {
        c.ssl.verify_depth = Some(depth);
    } else {
        w.server()?.modules.ssl.verify_depth = Some(depth);
    }
    Ok(())
}

/// `SSLCACertificateFile`/`Path` for client certificates (server level;
/// per directory they would need a renegotiation).
fn run_client_ca(w: &mut Walker<'_>, inv: &Invocation<'_>, _c: &mut DirConf) -> Result<(), String> {
    if in_directory(w) {
        return Err(format!(
            "{} in a directory context needs a renegotiation, which htaccel does not do: set it in the <VirtualHost>",
            inv.name
        ));
    }
    let name = inv.name.to_ascii_lowercase();
    let path = server_path(w, &inv.words[0]);
    let ssl = &mut w.server()?.modules.ssl;
    if name == "sslcacertificatefile" {
        if !opened_elsewhere::metadata(&path).is_ok_and(|m| m.is_file()) {
            return Err(format!(
                "{}: file '{}' does not exist or is empty",
                inv.name,
                path.display()
            ));
        }
        ssl.ca_file = Some(path);
    } else {
        if !path.is_dir() {
            return Err(format!(
                "{}: directory '{}' does not exist",
                inv.name,
                path.display()
            ));
        }
        ssl.ca_path = Some(path);
    }
    Ok(())
}

/// `SSLStaplingCache`, a global setting: the responses are kept in the
/// server's memory whatever the provider named (a socache provider that
/// exists), which is what a client can see of it.
fn run_stapling_cache(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    let in_virtual_host = w
        .server
        .as_deref()
        .ok_or("not allowed here")?
        .in_virtual_host();
    if in_virtual_host {
        return Err(format!(
            "{} cannot occur within <VirtualHost> section",
            inv.name
        ));
    }
    socache(w, &inv.words[0])
        .map_err(|e| format!("SSLStaplingCache: {}", e.replace("%s", "stapling")))?;
    w.server()?.modules.ssl.stapling_cache = true;
    Ok(())
}

/// `SSLStaplingResponseTimeSkew`, `SSLStaplingResponseMaxAge`,
/// `SSLStaplingStandardCacheTimeout`, `SSLStaplingErrorCacheTimeout`,
/// `SSLStaplingResponderTimeout` (seconds, read as `atoi` reads them)
/// and `SSLStaplingForceURL`.
fn run_stapling_value(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    let arg = &inv.words[0];
    let name = inv.name.to_ascii_lowercase();
    let stapling = &mut w.server()?.modules.ssl.stapling;
    if name == "sslstaplingforceurl" {
        stapling.force_url = Some(arg.clone());
        return Ok(());
    }
    let Some(secs) = atoi(arg) else {
        return Err(format!("{}: invalid argument", inv.name));
    };
    match name.as_str() {
        "sslstaplingresponsetimeskew" => stapling.time_skew = Some(secs),
        "sslstaplingresponsemaxage" => stapling.max_age = Some(secs),
        "sslstaplingstandardcachetimeout" => stapling.cache_timeout = Some(secs),
        "sslstaplingerrorcachetimeout" => stapling.error_cache_timeout = Some(secs),
        _ => stapling.responder_timeout = Some(secs),
    }
    Ok(())
}

fn run_options(_w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    let d = &mut c.ssl;
    for (i, word) in inv.words.iter().enumerate() {
        let (action, w) = match word.chars().next() {
            Some(a @ ('+' | '-')) => (Some(a), &word[1..]),
            _ => (None, word.as_str()),
        };
        if i == 0 && action.is_none() {
            d.absolute = true;
            d.options = 0;
            d.add = 0;
            d.del = 0;
        }
        let opt = match w {
            "StdEnvVars" => OPT_STD_ENV_VARS,
            "ExportCertData" => OPT_EXPORT_CERT_DATA,
            "FakeBasicAuth" | "LegacyDNStringFormat" if action != Some('-') => {
                return Err(format!("SSLOptions {w} is not supported by htaccel yet"))
            }
            "FakeBasicAuth" => OPT_FAKE_BASIC_AUTH,
            "StrictRequire" => OPT_STRICT_REQUIRE,
            "OptRenegotiate" => OPT_OPT_RENEGOTIATE,
            "LegacyDNStringFormat" => OPT_LEGACY_DN_FORMAT,
            _ => return Err(format!("SSLOptions: Illegal option '{w}'")),
        };
        match action {
            Some('-') => {
                d.add &= !opt;
                d.del |= opt;
                d.options &= !opt;
            }
            Some(_) => {
                d.add |= opt;
                d.del &= !opt;
                d.options |= opt;
            }
            None => {
                d.options = opt;
                d.add = opt;
                d.del = 0;
            }
        }
    }
    Ok(())
}

fn run_require_ssl(
    _w: &mut Walker<'_>,
    _inv: &Invocation<'_>,
    c: &mut DirConf,
) -> Result<(), String> {
    c.ssl.require_ssl = Some(true);
    Ok(())
}

/// `ssl_hook_Fixup`: mod_ssl's variables into the request's environment
/// (for scripts, `%{…}e`, `SetEnvIf`'s later readers).
pub fn fixup(ctx: &mut Ctx<'_>) -> Result<(), Status> {
    for (name, value) in vars::fixup_env(ctx) {
        ctx.env.set(&name, value);
    }
    Ok(())
}

/// `ssl_hook_Access`: over plain HTTP, `SSLRequireSSL` (a 403 with
/// mod_ssl's error-log line); over TLS, the client verification the
/// request asks for beyond the handshake's ([`post_handshake_verification`]).
pub fn check_access(ctx: &mut Ctx<'_>) -> Result<(), Status> {
    if ctx.req.secure {
        return post_handshake_verification(ctx);
    }
    if ctx.conf.ssl.require_ssl != Some(true) {
        return Ok(());
    }
    if ctx.reason.is_none() && !ctx.is_subreq {
        let what = if ctx.filename.is_empty() {
            ctx.uri.clone()
        } else {
            ctx.filename.clone()
        };
        ctx.reason = Some(crate::request::Reason::new(
            "error",
            "ssl",
            format!("AH02219: access to {what} failed, reason: SSL connection required"),
        ));
    }
    Err(403)
}

/// The verification a request's server asks for (`SSL_VERIFY_*` bits as
/// mod_ssl sets them: optional asks, require also fails without one).
fn verify_bits(mode: Option<VerifyClient>) -> u8 {
    match mode {
        Some(VerifyClient::Require) => 3,
        Some(VerifyClient::Optional) => 1,
        _ => 0,
    }
}

/// `ssl_hook_Access_modern` (TLS 1.3): when the request's server verifies
/// client certificates more strictly than the handshake did, or its
/// `SSLVerifyDepth` (the directory's, else the server's) is lower than the
/// depth the connection was last verified under (the handshake server's
/// until a request sets it), mod_ssl asks the client for its certificate
/// again by post-handshake authentication. rustls cannot ask; the answer is
/// the one Apache gives a client that did not offer it (browsers and curl
/// do not): 403, with its reason. mod_ssl remembers the new depth for the
/// connection's later requests either way.
///
/// Over TLS 1.2 (`ssl_hook_Access_classic`) mod_ssl only renegotiates
/// when the verification mode changes, which a per-directory depth does
/// not change: nothing to do.
fn post_handshake_verification(ctx: &mut Ctx<'_>) -> Result<(), Status> {
    // The configuration alone decides whether the session is read, so the
    // answers of servers without client verification stay reusable.
    let needed = verify_bits(ctx.site.modules.ssl.verify_client);
    if needed == 0 {
        return Ok(());
    }
    let Some(tls) = ctx.req.tls_info() else {
        return Ok(());
    };
    if tls.protocol != "TLSv1.3" {
        return Ok(());
    }
    let handshake = match tls.handshake_site {
        Some(i) => &ctx.engine.vhosts[i].modules.ssl,
        None => &ctx.engine.main.modules.ssl,
    };
    let in_place = verify_bits(handshake.verify_client);
    let stricter = in_place == 0 || needed & !in_place != 0;
    let ask_again = stricter || {
        let server_depth = |s: &SslServer| s.verify_depth.unwrap_or(DEFAULT_VERIFY_DEPTH);
        let verified_under = tls
            .verify_depth
            .get()
            .unwrap_or_else(|| server_depth(handshake));
        let wanted = ctx
            .conf
            .ssl
            .verify_depth
            .unwrap_or_else(|| server_depth(&ctx.site.modules.ssl));
        tls.verify_depth.set(wanted);
        wanted < verified_under
    };
    if !ask_again {
        return Ok(());
    }
    if ctx.req.on_stream() {
        // A stream (mod_ssl's secondary connection): mod_ssl does not try,
        // it notes why and answers 403, which mod_http2 turns into a reset.
        ctx.renegotiation_forbidden = true;
        return Err(403);
    }
    ctx.reason = Some(crate::request::Reason::new(
        "error",
        "ssl",
        "AH10158: cannot perform post-handshake authentication",
    ));
    ctx.error_note = Some("Reason: Cannot perform Post-Handshake Authentication.<br />".into());
    Err(403)
}

const SRV: u32 = RSRC_CONF;
const ALL: u32 = RSRC_CONF | OR_AUTHCFG;

pub static DIRECTIVES: &[Directive] = &[
    Directive { name: "SSLEngine", args: Args::Take1, req_override: SRV, about: "SSL switch for the protocol engine ('on', 'off')", run: Run::Handler(run_engine) },
    Directive { name: "SSLCertificateFile", args: Args::Take1, req_override: SRV, about: "SSL Server Certificate file ('/path/to/file' - PEM or DER encoded)", run: Run::Handler(run_cert) },
    Directive { name: "SSLCertificateKeyFile", args: Args::Take1, req_override: SRV, about: "SSL Server Private Key file ('/path/to/file' - PEM or DER encoded)", run: Run::Handler(run_cert) },
    Directive { name: "SSLCertificateChainFile", args: Args::Take1, req_override: SRV, about: "SSL Server CA Certificate Chain file ('/path/to/file' - PEM encoded)", run: Run::Handler(run_cert) },
    Directive { name: "SSLProtocol", args: Args::Argv, req_override: SRV, about: "Enable or disable various SSL protocols ('[+-][TLSv1|TLSv1.1|TLSv1.2|TLSv1.3] ...' - see manual)", run: Run::Handler(run_protocol) },
    Directive { name: "SSLCipherSuite", args: Args::Take12, req_override: ALL, about: "Colon-delimited list of permitted SSL Ciphers, optional preceded by protocol identifier ('XXX:...:XXX' - see manual)", run: Run::Handler(run_cipher_suite) },
    Directive { name: "SSLHonorCipherOrder", args: Args::Flag, req_override: SRV, about: "Use the server's cipher ordering preference", run: Run::Handler(run_flag) },
    Directive { name: "SSLSessionTickets", args: Args::Flag, req_override: SRV, about: "TLS Session Tickets (RFC 5077) support", run: Run::Handler(run_flag) },
    Directive { name: "SSLStrictSNIVHostCheck", args: Args::Flag, req_override: SRV, about: "Strict SNI virtual host checking", run: Run::Handler(run_flag) },
    Directive { name: "SSLCompression", args: Args::Flag, req_override: SRV, about: "Enable SSL level compression (`on', `off')", run: Run::Handler(run_flag) },
    Directive { name: "SSLInsecureRenegotiation", args: Args::Flag, req_override: SRV, about: "Enable support for insecure renegotiation", run: Run::Handler(run_flag) },
    Directive { name: "SSLSessionCache", args: Args::Take1, req_override: SRV, about: "SSL Session Cache storage ('none', 'nonenotnull', 'dbm:/path/to/file')", run: Run::Handler(run_session_cache) },
    Directive { name: "SSLSessionCacheTimeout", args: Args::Take1, req_override: SRV, about: "SSL Session Cache object lifetime ('N' - number of seconds)", run: Run::Handler(run_session_timeout) },
    Directive { name: "SSLRandomSeed", args: Args::Take23, req_override: SRV, about: "SSL Pseudo Random Number Generator (PRNG) seeding source ('startup|connect builtin|file:/path|exec:/path [bytes]')", run: Run::Handler(run_random_seed) },
    Directive { name: "SSLPassPhraseDialog", args: Args::Take1, req_override: SRV, about: "SSL dialog mechanism for the pass phrase query ('builtin', '|/path/to/pipe_program', or 'exec:/path/to/cgi_program')", run: Run::Handler(run_pass_phrase) },
    Directive { name: "SSLOptions", args: Args::Argv, req_override: OR_OPTIONS | ACCESS_CONF | RSRC_CONF, about: "Set one or more options to configure the SSL engine('[+-]option[=value] ...' - see manual)", run: Run::Handler(run_options) },
    Directive { name: "SSLRequireSSL", args: Args::NoArgs, req_override: OR_AUTHCFG | ACCESS_CONF | RSRC_CONF, about: "Require the SSL protocol for the per-directory context (no arguments)", run: Run::Handler(run_require_ssl) },
    Directive { name: "SSLVerifyClient", args: Args::Take1, req_override: ALL, about: "SSL Client verify type ('none', 'optional', 'require', 'optional_no_ca')", run: Run::Handler(run_verify_client) },
    Directive { name: "SSLVerifyDepth", args: Args::Take1, req_override: ALL, about: "SSL Client verify depth ('N' - number of intermediate certificates)", run: Run::Handler(run_verify_depth) },
    Directive { name: "SSLCACertificateFile", args: Args::Take1, req_override: ALL, about: "SSL CA Certificate file ('/path/to/file' - PEM encoded)", run: Run::Handler(run_client_ca) },
    Directive { name: "SSLCACertificatePath", args: Args::Take1, req_override: ALL, about: "SSL CA Certificate path ('/path/to/dir' - contains PEM encoded files)", run: Run::Handler(run_client_ca) },
    Directive { name: "SSLCARevocationFile", args: Args::Take1, req_override: SRV, about: "SSL CA Certificate Revocation List (CRL) file ('/path/to/file' - PEM encoded)", run: Run::Unsupported },
    Directive { name: "SSLCARevocationPath", args: Args::Take1, req_override: SRV, about: "SSL CA Certificate Revocation List (CRL) path ('/path/to/dir' - contains PEM encoded files)", run: Run::Unsupported },
    Directive { name: "SSLUseStapling", args: Args::Flag, req_override: SRV, about: "SSL switch for the OCSP Stapling protocol", run: Run::Handler(run_flag) },
    Directive { name: "SSLStaplingCache", args: Args::Take1, req_override: SRV, about: "SSL Stapling Response Cache storage", run: Run::Handler(run_stapling_cache) },
    Directive { name: "SSLStaplingResponseTimeSkew", args: Args::Take1, req_override: SRV, about: "SSL stapling option for maximum time difference in OCSP responses", run: Run::Handler(run_stapling_value) },
    Directive { name: "SSLStaplingResponderTimeout", args: Args::Take1, req_override: SRV, about: "SSL stapling option for OCSP responder timeout", run: Run::Handler(run_stapling_value) },
    Directive { name: "SSLStaplingResponseMaxAge", args: Args::Take1, req_override: SRV, about: "SSL stapling option for maximum age of OCSP responses", run: Run::Handler(run_stapling_value) },
    Directive { name: "SSLStaplingStandardCacheTimeout", args: Args::Take1, req_override: SRV, about: "SSL stapling option for normal OCSP Response Cache Lifetime", run: Run::Handler(run_stapling_value) },
    Directive { name: "SSLStaplingReturnResponderErrors", args: Args::Flag, req_override: SRV, about: "SSL stapling switch to return Status Errors Back to Client", run: Run::Handler(run_flag) },
    Directive { name: "SSLStaplingFakeTryLater", args: Args::Flag, req_override: SRV, about: "SSL stapling switch to send tryLater response to client on error", run: Run::Handler(run_flag) },
    Directive { name: "SSLStaplingErrorCacheTimeout", args: Args::Take1, req_override: SRV, about: "SSL stapling option for OCSP Response Error Cache Lifetime", run: Run::Handler(run_stapling_value) },
    Directive { name: "SSLStaplingForceURL", args: Args::Take1, req_override: SRV, about: "SSL stapling option to Force the OCSP Stapling URL", run: Run::Handler(run_stapling_value) },
    Directive { name: "SSLProxyEngine", args: Args::Flag, req_override: RSRC_CONF, about: "SSL switch for the proxy protocol engine ('on', 'off')", run: Run::Handler(run_flag) },
    Directive { name: "SSLRequire", args: Args::Raw, req_override: OR_AUTHCFG | ACCESS_CONF | RSRC_CONF, about: "Require a boolean expression to evaluate to true for granting access(arbitrary complex boolean expression - see manual)", run: Run::Unsupported },
    Directive { name: "SSLUserName", args: Args::Take1, req_override: ALL, about: "Set user name to SSL variable value", run: Run::Unsupported },
    Directive { name: "SSLOpenSSLConfCmd", args: Args::Take2, req_override: SRV, about: "OpenSSL configuration command", run: Run::Handler(run_openssl_conf) },
    Directive { name: "SSLSessionTicketKeyFile", args: Args::Take1, req_override: SRV, about: "TLS session ticket encryption/decryption key file (RFC 5077) ('/path/to/file' - file with 48 bytes of random data)", run: Run::Unsupported },
    Directive { name: "SSLCADNRequestFile", args: Args::Take1, req_override: SRV, about: "SSL CA Distinguished Name file ('/path/to/file' - PEM encoded)", run: Run::Unsupported },
    Directive { name: "SSLCADNRequestPath", args: Args::Take1, req_override: SRV, about: "SSL CA Distinguished Name path ('/path/to/dir' - symlink hashes to PEM of CA certs)", run: Run::Unsupported },
    Directive { name: "SSLCARevocationCheck", args: Args::Raw, req_override: SRV, about: "SSL CA Certificate Revocation List (CRL) checking mode", run: Run::DefaultOnly { default: "none", missing: "checking client certificates against revocation lists" } },
    Directive { name: "SSLRenegBufferSize", args: Args::Take1, req_override: OR_AUTHCFG | ACCESS_CONF | RSRC_CONF, about: "Configure the amount of memory that will be used for buffering the request body if a per-location SSL renegotiation is required due to changed access control requirements", run: Run::WithoutEffect },
    Directive { name: "SSLFIPS", args: Args::Flag, req_override: SRV, about: "Enable FIPS-140 mode (`on', `off')", run: Run::DefaultOnly { default: "Off", missing: "FIPS 140 mode" } },
    Directive { name: "SSLCryptoDevice", args: Args::Take1, req_override: SRV, about: "SSL external Crypto Device usage ('builtin', '...')", run: Run::DefaultOnly { default: "builtin", missing: "an OpenSSL engine" } },
    Directive { name: "SSLOCSPEnable", args: Args::Raw, req_override: SRV, about: "Enable use of OCSP to verify certificate revocation mode ('on', 'leaf', 'off', 'no_ocsp_for_cert_ok')", run: Run::Unsupported },
    Directive { name: "SSLLog", args: Args::Take1, req_override: SRV, about: "SSLLog directive is no longer supported - use ErrorLog.", run: Run::Handler(|_w, _inv, _c| Err("SSLLog directive is no longer supported - use ErrorLog.".into())) },
    Directive { name: "SSLLogLevel", args: Args::Take1, req_override: SRV, about: "SSLLogLevel directive is no longer supported - use LogLevel.", run: Run::Handler(|_w, _inv, _c| Err("SSLLogLevel directive is no longer supported - use LogLevel.".into())) },
    // Settings of OCSP checks of client certificates: they act only under
    // `SSLOCSPEnable`, which is refused.
    Directive { name: "SSLOCSPDefaultResponder", args: Args::Take1, req_override: SRV, about: "Set the default responder URI for OCSP validation", run: Run::WithoutEffect },
    Directive { name: "SSLOCSPOverrideResponder", args: Args::Flag, req_override: SRV, about: "Force use of the default responder URL ('on', 'off')", run: Run::WithoutEffect },
    Directive { name: "SSLOCSPResponseTimeSkew", args: Args::Take1, req_override: SRV, about: "Maximum time difference in OCSP responses", run: Run::WithoutEffect },
    Directive { name: "SSLOCSPResponseMaxAge", args: Args::Take1, req_override: SRV, about: "Maximum age of OCSP responses", run: Run::WithoutEffect },
    Directive { name: "SSLOCSPResponderTimeout", args: Args::Take1, req_override: SRV, about: "OCSP responder query timeout", run: Run::WithoutEffect },
    Directive { name: "SSLOCSPUseRequestNonce", args: Args::Flag, req_override: SRV, about: "Whether OCSP queries use a nonce or not ('on', 'off')", run: Run::WithoutEffect },
    Directive { name: "SSLOCSPProxyURL", args: Args::Take1, req_override: SRV, about: "Proxy URL to use for OCSP requests", run: Run::WithoutEffect },
    Directive { name: "SSLOCSPNoVerify", args: Args::Flag, req_override: SRV, about: "Do not verify OCSP Responder certificate ('on', 'off')", run: Run::WithoutEffect },
    Directive { name: "SSLOCSPResponderCertificateFile", args: Args::Take1, req_override: SRV, about: "Trusted OCSP responder certificates(file path to PEM encoded certificates)", run: Run::WithoutEffect },
    // SRP acts only with a verifier file.
    Directive { name: "SSLSRPVerifierFile", args: Args::Take1, req_override: SRV, about: "SRP verifier file ('/path/to/file' - created by srptool)", run: Run::Unsupported },
    Directive { name: "SSLSRPUnknownUserSeed", args: Args::Take1, req_override: SRV, about: "SRP seed for unknown users (to avoid leaking a user's existence)", run: Run::WithoutEffect },
    Directive { name: "SSLProxyCARevocationPath", args: Args::Take1, req_override: RSRC_CONF, about: "SSL Proxy: CA Certificate Revocation List (CRL) path", run: Run::Unsupported },
    Directive { name: "SSLProxyCARevocationFile", args: Args::Take1, req_override: RSRC_CONF, about: "SSL Proxy: CA Certificate Revocation List (CRL) file", run: Run::Unsupported },
    Directive { name: "SSLProxyCARevocationCheck", args: Args::Raw, req_override: RSRC_CONF, about: "SSL Proxy: CA Certificate Revocation List (CRL) checking mode", run: Run::Unsupported },
    Directive { name: "SSLProxyMachineCertificatePath", args: Args::Take1, req_override: RSRC_CONF, about: "SSL Proxy: directory containing client certificates", run: Run::Unsupported },
    Directive { name: "SSLProxyMachineCertificateChainFile", args: Args::Take1, req_override: RSRC_CONF, about: "SSL Proxy: file containing issuing certificates of the client certificate", run: Run::Unsupported },
    Directive { name: "SSLProxyProtocol", args: Args::Argv, req_override: RSRC_CONF, about: "SSL Proxy: enable or disable SSL protocol flavors", run: Run::Handler(run_protocol) },
    Directive { name: "SSLProxyCipherSuite", args: Args::Take12, req_override: RSRC_CONF, about: "SSL Proxy: colon-delimited list of permitted SSL ciphers", run: Run::Handler(run_cipher_suite) },
    Directive { name: "SSLProxyVerify", args: Args::Take1, req_override: RSRC_CONF, about: "SSL Proxy: whether to verify the remote certificate", run: Run::Handler(run_proxy_verify) },
    Directive { name: "SSLProxyVerifyDepth", args: Args::Take1, req_override: RSRC_CONF, about: "SSL Proxy: maximum certificate verification depth", run: Run::Handler(run_proxy_ca) },
    Directive { name: "SSLProxyCACertificateFile", args: Args::Take1, req_override: RSRC_CONF, about: "SSL Proxy: file containing server certificates", run: Run::Handler(run_proxy_ca) },
    Directive { name: "SSLProxyCACertificatePath", args: Args::Take1, req_override: RSRC_CONF, about: "SSL Proxy: directory containing server certificates", run: Run::Handler(run_proxy_ca) },
    Directive { name: "SSLProxyMachineCertificateFile", args: Args::Take1, req_override: RSRC_CONF, about: "SSL Proxy: file containing client certificates", run: Run::Unsupported },
    Directive { name: "SSLProxyCheckPeerExpire", args: Args::Flag, req_override: RSRC_CONF, about: "SSL Proxy: check the peer certificate's expiration date", run: Run::Handler(run_flag) },
    Directive { name: "SSLProxyCheckPeerCN", args: Args::Flag, req_override: RSRC_CONF, about: "SSL Proxy: check the peer certificate's CN", run: Run::Handler(run_flag) },
    Directive { name: "SSLProxyCheckPeerName", args: Args::Flag, req_override: RSRC_CONF, about: "SSL Proxy: check the peer certificate's name", run: Run::Handler(run_flag) },
];

pub static MODULE: Module = Module {
    source: "mod_ssl.c",
    identifier: "ssl_module",
    builtin: false,
    directives: DIRECTIVES,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(words: &str) -> SslDir {
        let mut c = DirConf::default();
        let inv_words: Vec<String> = words.split_whitespace().map(str::to_string).collect();
        let origin = htaccel_conf::Origin {
            file: "t".into(),
            line: 1,
        };
        let inv = Invocation {
            name: "SSLOptions",
            words: inv_words,
            raw: words.into(),
            origin: &origin,
            children: &[],
            closed: true,
            closed_exactly: true,
            verbatim: None,
        };
        let mut env = crate::config::Environment {
            modules: Vec::new(),
            defines: Default::default(),
            server_root: "/".into(),
            includes: Default::default(),
            read: Default::default(),
            stand_ins: Vec::new(),
        };
        let mut w = Walker::new(&mut env, None, crate::config::Context::main_server());
        run_options(&mut w, &inv, &mut c).unwrap();
        c.ssl
    }

    #[test]
    fn verify_depth_is_read_as_atoi_reads_it() {
        let parse = |arg| parse_verify_depth("SSLVerifyDepth", arg);
        assert_eq!(parse("2"), Ok(2));
        assert_eq!(parse("abc"), Ok(0));
        assert_eq!(parse("3x"), Ok(3));
        assert_eq!(parse(" +4"), Ok(4));
        assert_eq!(parse("-0"), Ok(0));
        assert_eq!(
            parse("-1"),
            Err("SSLVerifyDepth: Invalid argument '-1'".to_string())
        );
        // SSLSessionCacheTimeout reads its seconds the same way.
        assert_eq!(atoi("300s"), Some(300));
        assert_eq!(atoi("-5"), None);
        assert_eq!(atoi("99999999999"), Some(i32::MAX as u32));
    }

    #[test]
    fn options_merge_as_apache() {
        let base = opts("+StdEnvVars +StrictRequire");
        let child = opts("-StrictRequire");
        let m = SslDir::merge(&base, &child);
        assert!(m.has(OPT_STD_ENV_VARS) && !m.has(OPT_STRICT_REQUIRE));
        let m = SslDir::merge(&base, &opts("ExportCertData"));
        assert!(!m.has(OPT_STD_ENV_VARS) && m.has(OPT_EXPORT_CERT_DATA));
        let m = SslDir::merge(&base, &SslDir::default());
        assert!(m.has(OPT_STD_ENV_VARS) && m.has(OPT_STRICT_REQUIRE));
    }
}
