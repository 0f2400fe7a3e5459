//! A site: one server (the main server or a `<VirtualHost>`) compiled for
//! serving — its names, document root, sorted `<Directory>` sections,
//! `<Location>` sections, and its compiled-config tree.

use crate::config::server::{
    DirSection, DirSectionMatcher, HttpProtocolOptions, LocationSection, ServerConf, ServerSlots,
};
use crate::config::Environment;
use crate::dirconf::DirConf;
use crate::http::http3::H3Settings;
use crate::http::Log;
use crate::tree::{ConfigTree, HtaccessLimits};
use std::path::PathBuf;
use std::sync::Arc;

pub struct Site {
    pub server_name: String,
    /// Port from `ServerName host:port`, if given.
    pub port: Option<u16>,
    pub aliases: Vec<String>,
    pub addrs: Vec<String>,
    /// `DocumentRoot`, in the text form the request phases hold file
    /// names in (they join it with the URI).
    pub document_root: String,
    /// The server-level per-directory configuration.
    pub base: Arc<DirConf>,
    /// Non-regex `<Directory>` sections, sorted by depth (stable).
    pub dir_sections: Vec<DirSection>,
    /// `<DirectoryMatch>` and `<Directory ~>`, in config order.
    pub regex_dir_sections: Vec<DirSection>,
    pub locations: Vec<LocationSection>,
    /// `<Proxy>`/`<ProxyMatch>`: the main server's, then the vhost's.
    pub proxies: Vec<crate::config::server::ProxySection>,
    pub access_file_names: Vec<String>,
    pub limit_internal_recursion: u32,
    /// `AllowEncodedSlashes` (this server's own: a vhost does not inherit it).
    pub encoded_slashes: crate::uri::EncodedSlashes,
    /// `MergeSlashes` (a vhost's, else the main server's; default on).
    pub merge_slashes: bool,
    /// `StrictHostCheck` (a vhost's, else the main server's; default off).
    pub strict_host_check: bool,
    /// `TraceEnable` not `off` (a vhost's, else the main server's).
    pub trace_enable: bool,
    /// Where the `<VirtualHost>` section begins (`None`: the main server).
    pub defined_at: Option<htaccel_conf::Origin>,
    /// `HttpProtocolOptions Strict` (the default) rather than `Unsafe`: a
    /// fragment or user name in the target is refused, and a response
    /// field name must be a token.
    pub strict_protocol: bool,
    /// The core's settings for the connection layer (this server's,
    /// over the main server's).
    pub settings: crate::http::server_settings::ServerSettings,
    /// mod_dir and mod_autoindex are loaded: without them a directory is
    /// not redirected, indexed or listed (the default handler's 404).
    pub dir_loaded: bool,
    pub autoindex_loaded: bool,
    pub server_admin: Option<String>,
    pub tree: ConfigTree,
    pub env: Environment,
    pub log: Arc<dyn Log>,
    pub limits: HtaccessLimits,
    /// The modules' server settings (a vhost's merged over the main
    /// server's: mod_alias's lists, mod_rewrite's rules and maps,
    /// mod_remoteip, mod_ssl, `Protocols`, …).
    pub modules: ServerSlots,
    /// mod_reqtimeout's stages; `None` when the configuration does not
    /// load the module.
    pub reqtimeout: Option<crate::http::read_timeout::ConnReadTimeouts>,
    /// mod_http2's settings; `None` when the configuration does not load it.
    pub http2: Option<crate::modules::http2::Http2Server>,
    /// What the handlers' answers announce in `Upgrade` (from `protocols`).
    pub upgrade_offer: Option<Arc<str>>,
    /// htaccel_http3's settings; `None` unless `H3Engine on`.
    pub http3: Option<crate::http::http3::H3Settings>,
}

impl Site {
    /// Compile a configured server. A `<VirtualHost>` inherits from the
    /// main server what it does not set itself, as Apache merges them.
    pub fn new(
        conf: &ServerConf,
        main: Option<&ServerConf>,
        env: &Environment,
        log: Arc<dyn Log>,
    ) -> Site {
        let inherit = |f: fn(&ServerConf) -> Option<String>| f(conf).or_else(|| main.and_then(f));
        let protocol = match main {
            Some(m) => HttpProtocolOptions::merged(m.http_protocol, conf.http_protocol),
            None => conf.http_protocol,
        };
        let name = inherit(|c| c.server_name.clone()).unwrap_or_else(|| "localhost".to_string());
        let (server_name, mut port) = match name.rsplit_once(':') {
            Some((h, p)) if p.bytes().all(|b| b.is_ascii_digit()) && !h.is_empty() => {
                (h.to_string(), p.parse().ok())
            }
            _ => (name, None),
        };
        // A `<VirtualHost>` without its own `ServerName` has the port of
        // its first address (`ap_parse_vhost_addrs`); its own `ServerName`
        // sets the port it names, or none.
        if main.is_some() && conf.server_name.is_none() {
            if let Some(p) = conf
                .addrs
                .first()
                .and_then(|a| a.rsplit_once(':'))
                .and_then(|(_, p)| p.parse::<u16>().ok())
            {
                port = Some(p);
            }
        }
        let mut sections: Vec<DirSection> = main.map(|m| m.directories.clone()).unwrap_or_default();
        sections.extend(conf.directories.iter().cloned());
        let (mut plain, regex): (Vec<_>, Vec<_>) = sections
            .into_iter()
            .partition(|s| matches!(s.matcher, DirSectionMatcher::Path { .. }));
        plain.sort_by_key(|s| match &s.matcher {
            DirSectionMatcher::Path { components, .. } => *components,
            DirSectionMatcher::Regex(_) => usize::MAX,
        });
        let base = match main {
            Some(m) => DirConf::merge(&m.base, &conf.base),
            None => conf.base.clone(),
        };
        let mut locations = main.map(|m| m.locations.clone()).unwrap_or_default();
        locations.extend(conf.locations.iter().cloned());
        let mut proxies = main.map(|m| m.proxies.clone()).unwrap_or_default();
        proxies.extend(conf.proxies.iter().cloned());
        let modules = match main {
            Some(m) => ServerSlots::merge(&m.modules, &conf.modules),
            None => conf.modules.clone(),
        };
        let document_root = conf
            .document_root
            .clone()
            .or_else(|| main.and_then(|m| m.document_root.clone()))
            .unwrap_or_else(|| PathBuf::from("/usr/local/apache2/htdocs"));
        Site {
            document_root: document_root.to_string_lossy().into_owned(),
            server_name,
            port,
            aliases: conf.server_aliases.clone(),
            addrs: conf.addrs.clone(),
            base: Arc::new(base),
            dir_sections: plain,
            regex_dir_sections: regex,
            locations,
            proxies,
            access_file_names: conf
                .access_file_names
                .clone()
                .or_else(|| main.and_then(|m| m.access_file_names.clone()))
                .unwrap_or_else(|| vec![".htaccess".to_string()]),
            limit_internal_recursion: conf
                .limit_internal_recursion
                .or_else(|| main.and_then(|m| m.limit_internal_recursion))
                .unwrap_or(10),
            // Apache 2.4 does not let a virtual host inherit the main
            // server's AllowEncodedSlashes: unset in the vhost means Off.
            encoded_slashes: conf.encoded_slashes.unwrap_or_default(),
            dir_loaded: env.is_loaded("dir_module"),
            autoindex_loaded: env.is_loaded("autoindex_module"),
            merge_slashes: conf
                .merge_slashes
                .or_else(|| main.and_then(|m| m.merge_slashes))
                .unwrap_or(true),
            strict_host_check: conf
                .strict_host_check
                .or_else(|| main.and_then(|m| m.strict_host_check))
                .unwrap_or(false),
            trace_enable: !inherit(|c| c.trace_enable.clone())
                .is_some_and(|t| t.eq_ignore_ascii_case("off")),
            defined_at: conf.origin.clone(),
            strict_protocol: protocol.strict(),
            settings: server_settings(conf, main, protocol),
            server_admin: inherit(|c| c.server_admin.clone()),
            tree: ConfigTree::default(),
            env: env.clone(),
            log,
            limits: HtaccessLimits {
                max_bytes: conf
                    .access_file_max_size
                    .or_else(|| main.and_then(|m| m.access_file_max_size))
                    .unwrap_or(HtaccessLimits::default().max_bytes),
                max_directives: conf
                    .access_file_max_directives
                    .or_else(|| main.and_then(|m| m.access_file_max_directives))
                    .unwrap_or(HtaccessLimits::default().max_directives),
            },
            reqtimeout: env
                .is_loaded("reqtimeout_module")
                .then(|| modules.reqtimeout.resolve()),
            upgrade_offer: modules.protocols.upgrade_offer(),
            http3: modules.http3.settings().map(|h3| H3Settings {
                early_hints: env.is_loaded("http2_module")
                    && modules.http2.early_hints == Some(true),
                ..h3
            }),
            http2: env.is_loaded("http2_module").then(|| modules.http2.clone()),
            modules,
        }
    }

    /// Whether this site answers to `host`: its `ServerName`, or a
    /// `ServerAlias` (a name, or a pattern of `*` and `?`), without regard
    /// to case (Apache's `matches_aliases`: `ap_strcasecmp_match`).
    pub fn answers_to(&self, host: &str) -> bool {
        host.eq_ignore_ascii_case(&self.server_name)
            || self
                .aliases
                .iter()
                .any(|a| htaccel_conf::fnmatch::strcmp_match(host.as_bytes(), a.as_bytes(), true))
    }
}

/// A server's settings for the connection layer: each its own where it
/// states one, else the main server's, else Apache's default
/// (`ap_fixup_virtual_hosts`).
fn server_settings(
    conf: &ServerConf,
    main: Option<&ServerConf>,
    protocol: HttpProtocolOptions,
) -> crate::http::server_settings::ServerSettings {
    use crate::http::server_settings::{Limits, ServerSettings};
    use std::time::Duration;
    fn pick<T: Copy>(
        conf: &ServerConf,
        main: Option<&ServerConf>,
        f: fn(&ServerConf) -> Option<T>,
    ) -> Option<T> {
        f(conf).or_else(|| main.and_then(f))
    }
    let defaults = ServerSettings::default();
    ServerSettings {
        limits: Limits {
            request_line: pick(conf, main, |c| c.limit_request_line)
                .unwrap_or(defaults.limits.request_line),
            field_size: pick(conf, main, |c| c.limit_request_field_size)
                .unwrap_or(defaults.limits.field_size),
            fields: pick(conf, main, |c| c.limit_request_fields).unwrap_or(defaults.limits.fields),
            registered_methods: protocol.registered_methods(),
            require_http10: protocol.require_http10(),
            strict: protocol.strict(),
        },
        timeout: pick(conf, main, |c| c.timeout).map_or(defaults.timeout, Duration::from_secs),
        keepalive: pick(conf, main, |c| c.keepalive).unwrap_or(defaults.keepalive),
        keepalive_timeout: pick(conf, main, |c| c.keepalive_timeout)
            .map_or(defaults.keepalive_timeout, Duration::from_secs),
        keepalive_timeout_stated: conf.keepalive_timeout.is_some(),
        max_keepalive_requests: pick(conf, main, |c| c.max_keepalive_requests)
            .unwrap_or(defaults.max_keepalive_requests),
    }
}
