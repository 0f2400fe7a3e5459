//! The engine as the server sees it: the compiled sites, the request
//! entry point, and the pieces every phase shares (site selection,
//! self-referential URLs, logging).

use crate::config::server::ServerBuild;
use crate::config::{ConfigError, Context, Environment, Walker};
use crate::http::{Handler, Log, Request, Response};
use crate::request::Ctx;
use crate::site::Site;
use std::path::PathBuf;
use std::sync::Arc;

/// Everything needed to answer requests.
pub struct Engine {
    /// `<VirtualHost>`s in config order.
    pub vhosts: Vec<Arc<Site>>,
    pub main: Arc<Site>,
    pub log: Arc<dyn Log>,
    /// The `Server` header value.
    pub server_header: String,
    /// The `Listen` addresses whose protocol is `https` (mod_ssl's default
    /// for a virtual host with certificates on that very address).
    pub https_listeners: Vec<(Option<std::net::IpAddr>, u16)>,
    /// Each module's engine-wide state (`modules::engine_slots!`).
    pub modules: EngineSlots,
    /// Distinguishes this engine's kept answers from another's on the same
    /// thread ([`crate::answer_memo`]).
    id: u64,
    /// The virtual hosts of each local address, for many virtual hosts.
    vhost_index: crate::vhosts::VhostIndex,
    /// Some virtual host's settings for the connection layer differ from
    /// another server's, so that a request's own server must be looked up
    /// for them.
    settings_vary: bool,
    /// The environment variables the access logs' `env=` conditions name
    /// (copied into each answer's `log_env`).
    pub log_env_names: Vec<String>,
    /// Some access log has an `expr=` condition, which may read any
    /// variable: the answer keeps them all for the logs.
    pub log_env_all: bool,
    /// Some server has `StrictHostCheck On` (else no request is checked).
    strict_host_check: bool,
}

/// `EngineSlots` with one field per module of `modules::engine_slots!`.
macro_rules! engine_slots_struct {
    ($($field:ident: $slot:ty = $start:path,)*) => {
        /// Each module's engine-wide state.
        pub struct EngineSlots {
            $(pub $field: $slot,)*
        }

        impl EngineSlots {
            /// Every module's start, in the list's order.
            fn start(loaded: &Loaded, log: &Arc<dyn Log>) -> Result<EngineSlots, String> {
                $(let $field = $start(loaded, log)?;)*
                Ok(EngineSlots { $($field,)* })
            }
        }
    };
}
crate::modules::engine_slots!(engine_slots_struct);

/// The error log as the engine writes it: a decision that writes a line is
/// not kept ([`crate::answer_memo`]), since answering it again from memory
/// would not write the line again.
struct RecordedLog(Arc<dyn Log>);

impl Log for RecordedLog {
    fn access(&self, entry: &crate::http::AccessEntry<'_>) {
        self.0.access(entry);
    }
    fn access_with(
        &self,
        entry: &crate::http::AccessEntry<'_>,
        details: &crate::log_format::AccessDetails<'_>,
    ) {
        self.0.access_with(entry, details);
    }
    fn error(
        &self,
        level: &str,
        module: &str,
        client: Option<std::net::SocketAddr>,
        message: &str,
    ) {
        crate::answer_memo::note_volatile();
        self.0.error(level, module, client, message);
    }
    fn error_event(&self, event: &crate::http::ErrorEvent<'_>) {
        crate::answer_memo::note_volatile();
        self.0.error_event(event);
    }
}

/// The request environment variables the access logs read: the names of
/// their `env=` conditions and of their `%{NAME}e` fields.
fn log_env_names(b: &crate::config::server::ServerBuild) -> Vec<String> {
    let mut names = Vec::new();
    for server in std::iter::once(&b.main).chain(&b.vhosts) {
        for log in &server.custom_logs {
            if let Some(name) = log.condition.as_ref().and_then(|c| c.env_name()) {
                names.push(name.to_string());
            }
            let text = server
                .log_formats
                .get(&log.format)
                .or_else(|| b.main.log_formats.get(&log.format))
                .map_or(log.format.as_str(), String::as_str);
            if let Ok(format) = crate::log_format::LogFormat::compile(text) {
                names.extend(format.env_names().map(String::from));
            }
        }
    }
    names.sort();
    names.dedup();
    names
}

/// A configuration read from the main config file, before serving.
pub struct Loaded {
    pub build: ServerBuild,
    pub env: Environment,
    pub notices: Vec<crate::config::Notice>,
}

/// Read a main config (already parsed) through the registry.
pub fn load(
    nodes: &[htaccel_conf::Node],
    server_root: PathBuf,
    defines: Vec<String>,
) -> Result<Loaded, ConfigError> {
    // `HTACCEL` is always defined, so that one file can hold what only
    // htaccel reads (`<IfDefine HTACCEL> PHPFPMSocket … </IfDefine>`).
    let mut env = Environment {
        modules: crate::modules::builtin(),
        defines: std::iter::once("HTACCEL".to_string())
            .chain(defines)
            .map(|d| (d, String::new()))
            .collect(),
        server_root,
        includes: Default::default(),
        read: Default::default(),
        stand_ins: Vec::new(),
    };
    let mut build = ServerBuild::new();
    let mut base = std::mem::take(&mut build.main.base);
    let notices;
    {
        let modules = Walker::read_modules(&env, nodes);
        let mut walker =
            Walker::new(&mut env, Some(&mut build), Context::main_server()).naming(modules);
        walker.walk(nodes, &mut base)?;
        notices = walker.notices;
    }
    build.main.base = base;
    Ok(Loaded {
        build,
        env,
        notices,
    })
}

impl Engine {
    pub fn new(loaded: &Loaded, log: Arc<dyn Log>) -> Result<Engine, String> {
        Engine::with_vhost_logs(loaded, log, Vec::new())
    }

    /// An engine whose `<VirtualHost>` number `i` writes to `vhost_logs[i]`
    /// when that is `Some` (its own `ErrorLog`/`CustomLog`), else to `log`,
    /// as Apache's vhosts inherit the main server's logs.
    pub fn with_vhost_logs(
        loaded: &Loaded,
        log: Arc<dyn Log>,
        vhost_logs: Vec<Option<Arc<dyn Log>>>,
    ) -> Result<Engine, String> {
        let log: Arc<dyn Log> = Arc::new(RecordedLog(log));
        let b = &loaded.build;
        let modules = EngineSlots::start(loaded, &log)?;
        crate::watch::global()
            .configure(crate::watch::Settings::from_global(&b.global), log.clone());
        let main = Arc::new(Site::new(&b.main, None, &loaded.env, log.clone()));
        let vhosts: Vec<Arc<Site>> = b
            .vhosts
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let own = vhost_logs.get(i).cloned().flatten();
                let log = own.map_or_else(|| log.clone(), |l| Arc::new(RecordedLog(l)) as _);
                Arc::new(Site::new(v, Some(&b.main), &loaded.env, log))
            })
            .collect();
        let values = |s: &Site| crate::http::server_settings::ServerSettings {
            keepalive_timeout_stated: false,
            ..s.settings
        };
        let settings_vary = vhosts.iter().any(|v| values(v) != values(&main));
        let tokens = b
            .global
            .server_tokens
            .clone()
            .unwrap_or_else(|| "Full".into());
        let version = env!("CARGO_PKG_VERSION");
        let server_header = match tokens.to_ascii_lowercase().as_str() {
            "prod" | "productonly" => "htaccel".to_string(),
            _ => format!("htaccel/{version}"),
        };
        let strict_host_check =
            main.strict_host_check || vhosts.iter().any(|v| v.strict_host_check);
        let engine = Engine {
            strict_host_check,
            vhosts,
            main,
            log,
            server_header,
            https_listeners: b.global.https_listeners.clone(),
            modules,
            id: {
                static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
                NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            },
            vhost_index: Default::default(),
            settings_vary,
            log_env_names: log_env_names(b),
            log_env_all: std::iter::once(&b.main)
                .chain(&b.vhosts)
                .flat_map(|s| &s.custom_logs)
                .any(|l| {
                    matches!(
                        l.condition,
                        Some(crate::log_condition::LogCondition::Expr(_))
                    )
                }),
        };
        for check in crate::modules::hooks::ENGINE_CHECKS {
            check(&engine)?;
        }
        Ok(engine)
    }

    /// Name-based virtual hosting: the vhosts listening on the connection's
    /// address, then the one whose name matches `Host`, else the first of
    /// them; the main server when none listens there.
    /// The site a request is for: the main server unless virtual hosts
    /// exist, else the one its address and host name select.
    pub fn site_for(&self, req: &Request) -> &Site {
        if self.vhosts.is_empty() {
            return &self.main;
        }
        let host = request_host(req).map(|(h, _)| h);
        self.select_site(req, host.as_deref())
    }

    pub fn select_site(&self, req: &Request, host: Option<&str>) -> &Site {
        self.site_by_address(req.local, host)
    }

    /// The site for a connection to `local` asking for `host`; without a
    /// host, the address's base server (Apache's `c->base_server`).
    pub fn site_by_address(&self, local: std::net::SocketAddr, host: Option<&str>) -> &Site {
        self.vhost_index
            .site(&self.vhosts, local, host)
            .unwrap_or(&self.main)
    }
}

/// `ap_get_server_name` for `req` on a server named `server_name`: the
/// host the client named, else `server_name`; `server_name` alone under
/// `UseCanonicalName On` (`canonical`).
pub fn server_name_for(req: &Request, server_name: &str, canonical: bool) -> String {
    match request_host(req) {
        Some((host, _)) if !canonical => host,
        _ => server_name.to_string(),
    }
}

/// The host and port the client asked for (absolute-form target or `Host`), lower-cased.
pub fn request_host(req: &Request) -> Option<(String, Option<u16>)> {
    let raw = if let Some(rest) = req
        .target
        .strip_prefix("http://")
        .or_else(|| req.target.strip_prefix("https://"))
    {
        // The authority ends at the path, query or fragment; a user name
        // (`HttpProtocolOptions Unsafe` lets one through) is not the host.
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        authority.rsplit('@').next().unwrap_or("").to_string()
    } else {
        req.headers.get_str("Host")?.trim().to_string()
    };
    if raw.is_empty() {
        return None;
    }
    let (host, port) = if raw.starts_with('[') {
        match raw.find(']') {
            Some(i) => (
                raw[..=i].to_string(),
                raw[i + 1..].strip_prefix(':').and_then(|p| p.parse().ok()),
            ),
            None => (raw.clone(), None),
        }
    } else {
        match raw.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), p.parse().ok()),
            None => (raw.clone(), None),
        }
    };
    Some((
        host.to_ascii_lowercase().trim_end_matches('.').to_string(),
        port,
    ))
}

/// Whether a `<VirtualHost>` address (`*:443`, `1.2.3.4:80`, `[::1]:8443`,
/// `_default_:443`) covers the local address of a connection.
pub fn addr_matches(spec: &str, local: std::net::SocketAddr) -> bool {
    let (host, port) = match spec.rsplit_once(':') {
        Some((h, p))
            if !h.ends_with(':') && !spec.starts_with('[')
                || spec.starts_with('[') && h.ends_with(']') =>
        {
            (h, p)
        }
        _ => (spec, "*"),
    };
    let port_ok = port == "*" || port.parse::<u16>().ok() == Some(local.port());
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let host_ok = host == "*"
        || host == "_default_"
        || host.parse::<std::net::IpAddr>().ok() == Some(local.ip());
    port_ok && host_ok
}

impl Handler for Engine {
    fn host_refused(&self, req: &Request) -> bool {
        if !self.strict_host_check {
            return false;
        }
        let base = self.site_by_address(req.local, None);
        if !base.strict_host_check {
            return false;
        }
        // A request without a host name is not checked (HTTP/1.0).
        let Some((host, _)) = request_host(req) else {
            return false;
        };
        if crate::vhosts::names_host(&self.vhosts, &self.main, req.local, &host) {
            return false;
        }
        let message = match &base.defined_at {
            None => format!(
                "AH10156: Requested hostname '{host}' did not match any ServerName/ServerAlias in the global server configuration "
            ),
            Some(at) => format!(
                "AH10157: Requested hostname '{host}' did not match any ServerName/ServerAlias in the matching virtual host (default vhost for current connection is {}:{})",
                at.file, at.line
            ),
        };
        base.log.error("warn", "core", Some(req.remote()), &message);
        true
    }

    fn proxy_protocol(&self, local: std::net::SocketAddr, peer: std::net::SocketAddr) -> bool {
        crate::modules::hooks::proxy_header_required(self, local, peer)
    }

    fn read_timeouts(
        &self,
        local: std::net::SocketAddr,
    ) -> Option<crate::http::read_timeout::ConnReadTimeouts> {
        use crate::http::read_timeout::{ConnReadTimeouts, ReadTimeout};
        Some(
            self.site_by_address(local, None)
                .reqtimeout
                .unwrap_or(ConnReadTimeouts {
                    handshake: ReadTimeout::OFF,
                    header: ReadTimeout::OFF,
                    body: ReadTimeout::OFF,
                    enabled: false,
                }),
        )
    }

    fn h2c(&self, local: std::net::SocketAddr) -> Option<crate::http::http2::H2Settings> {
        crate::http::http2::h2c_direct(self.site_by_address(local, None))
    }

    fn address_settings(
        &self,
        local: std::net::SocketAddr,
    ) -> Option<crate::http::server_settings::ServerSettings> {
        Some(self.site_by_address(local, None).settings)
    }

    fn request_settings(
        &self,
        req: &Request,
    ) -> Option<crate::http::server_settings::ServerSettings> {
        self.settings_vary.then(|| self.site_for(req).settings)
    }

    fn body_read_timeout(&self, req: &Request) -> Option<crate::http::read_timeout::ReadTimeout> {
        self.site_for(req).reqtimeout.map(|t| t.body)
    }

    fn handle(&self, req: &Request) -> Response {
        crate::handler::handle(self, self.site_for(req), req)
    }

    fn decide<'a>(&'a self, req: &'a Request) -> crate::http::backend::Decision<'a> {
        use crate::answer_memo::{Lookup, Recording};
        use crate::http::backend::Decision;
        // Changes completed before this request arrived are in force for
        // it; a kept answer is used only if none has happened since.
        crate::watch::global().sync();
        let stamp = crate::watch::changes();
        match crate::answer_memo::lookup(self.id, req, stamp) {
            Lookup::Hit(resp) => {
                crate::stats::bump(crate::stats::Counter::AnswerMemoHits);
                Decision::Kept(self.with_own_token(resp))
            }
            Lookup::Decide => crate::handler::decide_synced(self, self.site_for(req), req),
            Lookup::Record => {
                crate::stats::bump(crate::stats::Counter::AnswerMemoRecorded);
                let recording = Recording::start();
                let decision = crate::handler::decide_synced(self, self.site_for(req), req);
                recording.finish(self.id, req, stamp, decision)
            }
        }
    }

    fn protocol_error(&self, error: &crate::http::ProtocolError<'_>) -> Response {
        crate::errors::protocol_error(self, error)
    }

    fn body_error(&self, req: &Request, status: u16) -> Response {
        crate::handler::body_error(self, self.site_for(req), req, status)
    }

    fn log(&self) -> &dyn Log {
        self
    }
}

/// The server's log: an access-log line goes to the logs of the site that
/// answered the request (mod_log_config's per-server `CustomLog`), with
/// that site's name and port (`%v`, `%p`); an error-log line the server
/// writes without a request goes to the main server's error log.
impl Log for Engine {
    fn access(&self, entry: &crate::http::AccessEntry<'_>) {
        let site = match entry.request {
            Some(req) if !self.vhosts.is_empty() => self.site_for(req),
            _ => &self.main,
        };
        let details = crate::log_format::AccessDetails {
            server_name: Some(&site.server_name),
            server_port: site.port,
            bytes_out: entry.bytes_out,
            bytes_in: entry.bytes_in,
            ttfb: entry.ttfb,
            env: entry.env,
            notes: entry.notes,
            ..Default::default()
        };
        site.log.access_with(entry, &details);
    }

    fn error(
        &self,
        level: &str,
        module: &str,
        client: Option<std::net::SocketAddr>,
        message: &str,
    ) {
        self.log.error(level, module, client, message);
    }

    fn error_event(&self, event: &crate::http::ErrorEvent<'_>) {
        self.log.error_event(event);
    }
}

impl Ctx<'_> {
    /// `ap_get_server_name`: under `UseCanonicalName Off` (the default)
    /// the host the client named, else `ServerName`; under `On`,
    /// `ServerName`.
    pub fn server_name(&self) -> String {
        server_name_for(self.req, &self.site.server_name, self.canonical_name())
    }

    /// `ap_get_server_port`: under `UseCanonicalName Off` the port the
    /// client named, else `ServerName`'s, else the scheme's default;
    /// under `On`, `ServerName`'s, else the scheme's. With
    /// `UseCanonicalPhysicalPort On` the connection's own port comes
    /// before `ServerName`'s (`Off`) or before the scheme's (`On`).
    pub fn server_port(&self) -> u16 {
        let default = if self.req.secure { 443 } else { 80 };
        let physical = self.conf.core.use_canonical_phys_port == Some(true);
        let local = physical.then(|| self.req.local.port()).filter(|p| *p != 0);
        if self.canonical_name() {
            return self.site.port.or(local).unwrap_or(default);
        }
        request_host(self.req)
            .and_then(|(_, p)| p)
            .or(local)
            .or(self.site.port)
            .unwrap_or(default)
    }

    /// `ap_construct_url`: an absolute URL for `path` on this server, with
    /// the name and port `UseCanonicalName` gives (`ap_get_server_name_for_url`,
    /// `ap_get_server_port`); the port is left out when it is the
    /// scheme's.
    pub fn construct_url(&self, path: &str) -> String {
        let (scheme, default_port) = if self.req.secure {
            ("https", 443)
        } else {
            ("http", 80)
        };
        let mut host = self.server_name();
        if host.contains(':') && !host.starts_with('[') {
            host = format!("[{host}]");
        }
        match self.server_port() {
            port if port == default_port => format!("{scheme}://{host}{path}"),
            port => format!("{scheme}://{host}:{port}{path}"),
        }
    }

    /// `UseCanonicalName On` where the request is.
    pub fn canonical_name(&self) -> bool {
        self.conf.core.use_canonical_name == Some(true)
    }

    /// `ap_document_root`: the request's own (mod_vhost_alias), else the
    /// server's `DocumentRoot`.
    pub fn document_root(&self) -> std::borrow::Cow<'_, str> {
        match &self.document_root {
            Some(root) => std::borrow::Cow::Borrowed(root.as_str()),
            None => std::borrow::Cow::Borrowed(&self.site.document_root),
        }
    }

    /// Write an error-log line about this request (`ap_log_rerror`).
    pub fn log_error(&self, level: &str, module: &str, message: &str) {
        self.site.log.error_event(&crate::http::ErrorEvent {
            level,
            module,
            client: Some(self.req.remote()),
            message,
            request: Some(self.req),
            env: Some(&self.env),
            server_name: Some(&self.site.server_name),
            canonical_name: self.canonical_name(),
        });
    }

    /// Log why the request failed, once, in Apache's shape.
    pub fn log_reason(&mut self) {
        if let Some(r) = self.reason.take() {
            self.log_error(&r.level, r.module, &r.message);
        }
    }
}

impl Engine {
    /// A kept answer for one more request: when its access-log variables
    /// hold mod_unique_id's token, the request gets its own.
    fn with_own_token(&self, kept: Arc<Response>) -> Arc<Response> {
        let fresh = kept
            .log_vars
            .as_ref()
            .and_then(|v| crate::modules::hooks::renew_logged_variables(self, &v.env, clock_us()));
        let Some(env) = fresh else {
            return kept;
        };
        let mut own = (*kept).clone();
        if let Some(vars) = own.log_vars.as_mut() {
            vars.env = env;
        }
        Arc::new(own)
    }

    /// The time a request is answered at, in microseconds since the epoch
    /// (Apache's `r->request_time`, used for weak ETags and `Expires`).
    /// An answer that read it is not kept ([`crate::answer_memo`]).
    pub fn request_time_us(&self) -> i64 {
        crate::answer_memo::note_volatile();
        clock_us()
    }
}

/// The current time in microseconds since the epoch, not recorded as an
/// input of the answer: for the callers that record what they make of it.
pub(crate) fn clock_us() -> i64 {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    d.as_micros() as i64
}

impl Engine {
    /// A multipart boundary: unpredictable per response, as Apache's
    /// (which derives it from the time and a random number).
    pub fn boundary(&self) -> String {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_i64(self.request_time_us());
        format!("{:013x}{:03x}", h.finish() >> 12, h.finish() & 0xfff)
    }
}
