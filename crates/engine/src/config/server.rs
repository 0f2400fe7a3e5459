//! The server being configured: global settings, the main server, the
//! `<VirtualHost>`s, and the sections each of them holds.
//!
//! This is what the main config produces, before anything is compiled for
//! requests: Apache's `server_rec` list with its `core_server_config`.

use crate::dirconf::DirConf;
use htaccel_conf::Origin;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// What a `<Directory>`/`<DirectoryMatch>` applies to.
#[derive(Clone, Debug)]
pub enum DirSectionMatcher {
    /// A directory path with trailing slash; `components` counts its
    /// levels (`/` is 0, `/srv/www/` is 2).
    Path {
        path: String,
        components: usize,
        fnmatch: bool,
    },
    Regex(crate::regex_engine::Regex),
}

#[derive(Clone, Debug)]
pub struct DirSection {
    pub matcher: DirSectionMatcher,
    pub conf: Arc<DirConf>,
    pub origin: Origin,
}

#[derive(Clone, Debug)]
pub struct LocationSection {
    pub path: String,
    pub regex: Option<crate::regex_engine::Regex>,
    pub conf: Arc<DirConf>,
    pub origin: Origin,
}

/// One `<Proxy>` or `<ProxyMatch>` section (mod_proxy's `sec_proxy`):
/// its URL (a wildcard when it has one, else a prefix) or regex, matched
/// against a proxied request's URL.
#[derive(Clone, Debug)]
pub struct ProxySection {
    pub url: String,
    pub regex: Option<crate::regex_engine::Regex>,
    pub conf: Arc<DirConf>,
}

/// `CustomLog`/`TransferLog`: where, and in which format (a nickname or a format string).
#[derive(Clone, Debug)]
pub struct CustomLog {
    pub target: String,
    pub format: String,
    pub origin: Origin,
    /// `env=NAME` / `env=!NAME` / `expr=…`: which requests are logged.
    pub condition: Option<LogCondition>,
    /// Written by `GlobalLog`: virtual hosts with logs of their own write
    /// to it too.
    pub inherit: bool,
}

pub use crate::log_condition::LogCondition;

/// `HttpProtocolOptions` as written: for each pair of opposite words, a
/// bit for each (both set is an error). The default words are `Strict`,
/// `LenientMethods` and `Allow0.9`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HttpProtocolOptions {
    /// 1: `Strict`, 2: `Unsafe`.
    pub conformance: u8,
    /// 1: `LenientMethods`, 2: `RegisteredMethods`.
    pub methods: u8,
    /// 1: `Allow0.9`, 2: `Require1.0`.
    pub http09: u8,
}

impl HttpProtocolOptions {
    /// A `<VirtualHost>`'s options over the main server's (each pair
    /// its own where it states one).
    pub fn merged(base: HttpProtocolOptions, virt: HttpProtocolOptions) -> HttpProtocolOptions {
        let pick = |v: u8, b: u8| if v != 0 { v } else { b };
        HttpProtocolOptions {
            conformance: pick(virt.conformance, base.conformance),
            methods: pick(virt.methods, base.methods),
            http09: pick(virt.http09, base.http09),
        }
    }

    /// `RegisteredMethods`: a request whose method nobody registered is
    /// answered 501.
    pub fn registered_methods(&self) -> bool {
        self.methods & 2 != 0
    }

    /// `Require1.0`: an HTTP/0.9 request is answered 400.
    pub fn require_http10(&self) -> bool {
        self.http09 & 2 != 0
    }

    /// `Strict` (the default) rather than `Unsafe`: request heads, chunk
    /// lines, host names and response field names are held to RFC 7230.
    pub fn strict(&self) -> bool {
        self.conformance & 2 == 0
    }
}

/// One server: the main server or a `<VirtualHost>`.
#[derive(Clone, Debug, Default)]
pub struct ServerConf {
    /// Addresses of a `<VirtualHost>` (empty for the main server).
    pub addrs: Vec<String>,
    pub server_name: Option<String>,
    pub server_aliases: Vec<String>,
    pub server_admin: Option<String>,
    pub document_root: Option<PathBuf>,
    /// The server-level per-directory configuration (Apache's lookup defaults).
    pub base: DirConf,
    pub directories: Vec<DirSection>,
    pub locations: Vec<LocationSection>,
    pub proxies: Vec<ProxySection>,
    pub access_file_names: Option<Vec<String>>,
    pub error_log: Option<String>,
    pub log_level: Option<String>,
    /// `LogLevel module:level`: per-module levels (module names without
    /// `mod_` and `_module`).
    pub log_level_modules: Vec<(String, String)>,
    pub custom_logs: Vec<CustomLog>,
    pub log_formats: HashMap<String, String>,
    pub timeout: Option<u64>,
    pub keepalive: Option<bool>,
    pub keepalive_timeout: Option<u64>,
    pub max_keepalive_requests: Option<u32>,
    pub limit_request_line: Option<usize>,
    pub limit_request_field_size: Option<usize>,
    pub limit_request_fields: Option<usize>,
    pub limit_internal_recursion: Option<u32>,
    /// `AllowEncodedSlashes`: how `%2F` in a request path is treated.
    pub encoded_slashes: Option<crate::uri::EncodedSlashes>,
    /// `MergeSlashes`.
    pub merge_slashes: Option<bool>,
    /// `StrictHostCheck`: a host name no `ServerName` or `ServerAlias` of
    /// the address's servers names is answered 400.
    pub strict_host_check: Option<bool>,
    /// `TraceEnable` (`on`, `off` or `extended`).
    pub trace_enable: Option<String>,
    /// `ErrorLogFormat` (the main form), parsed when read.
    pub error_log_format: Option<crate::error_log_format::ErrorLogFormat>,
    /// `HttpProtocolOptions`: the words given, each a bit of its pair.
    pub http_protocol: HttpProtocolOptions,
    /// `AccessFileMaxSize`, `AccessFileMaxDirectives`.
    pub access_file_max_size: Option<u64>,
    pub access_file_max_directives: Option<usize>,
    pub origin: Option<Origin>,
    /// The modules' own server settings.
    pub modules: ServerSlots,
}

/// `ServerSlots` with one field per module of `modules::server_slots!`,
/// and the merge of a `<VirtualHost>`'s over the main server's.
macro_rules! server_slots_struct {
    ($($field:ident: $slot:ty,)*) => {
        /// Each module's server settings (Apache's per-module server config).
        #[derive(Clone, Debug, Default)]
        pub struct ServerSlots {
            $(pub $field: $slot,)*
        }

        impl ServerSlots {
            /// A virtual host's settings over the main server's, module by module.
            pub fn merge(main: &ServerSlots, vhost: &ServerSlots) -> ServerSlots {
                ServerSlots {
                    $($field: <$slot>::merge(&main.$field, &vhost.$field),)*
                }
            }
        }
    };
}

crate::modules::server_slots!(server_slots_struct);

/// Settings that exist once per process.
#[derive(Clone, Debug, Default)]
pub struct Global {
    pub listen: Vec<(String, Origin)>,
    /// The `Listen` addresses (IP, `None` for all) whose protocol is
    /// `https` (named, or port 443).
    pub https_listeners: Vec<(Option<std::net::IpAddr>, u16)>,
    pub user: Option<String>,
    pub group: Option<String>,
    pub pid_file: Option<String>,
    /// `GracefulShutdownTimeout`, seconds (0 or unset: no limit).
    pub graceful_shutdown_timeout: Option<u64>,
    pub server_tokens: Option<String>,
    pub types_config: Option<PathBuf>,

    /// `AccessFileWatch`, `AccessFileCheckInterval`, `StatCacheEntries`.
    pub access_file_watch: Option<bool>,
    pub access_file_check_interval: Option<std::time::Duration>,
    pub stat_cache_entries: Option<usize>,
    /// Where mod_php was loaded (`LoadModule php_module …`, any of its
    /// names or `libphp*.so` files), if it was: `.php` files are then meant
    /// to run, and htaccel runs them on PHP-FPM (`modules::php`).
    /// The origin of the `LoadModule` line and the module's file.
    pub mod_php: Option<(Origin, String)>,
    /// `ExtendedStatus` (the core's; `None`: on when mod_status is loaded).
    pub extended_status: Option<bool>,
    /// htaccel's `PHPFPMSocket`: the PHP-FPM pool that stands in for mod_php.
    pub php_fpm_socket: Option<(String, Origin)>,
    /// The modules' process-wide settings (mod_remoteip's PROXY protocol
    /// addresses, mod_md's managed domains, …).
    pub modules: GlobalSlots,
}

/// `GlobalSlots` with one field per module of `modules::global_slots!`.
macro_rules! global_slots_struct {
    ($($field:ident: $slot:ty,)*) => {
        /// Each module's process-wide settings.
        #[derive(Clone, Debug, Default)]
        pub struct GlobalSlots {
            $(pub $field: $slot,)*
        }
    };
}

crate::modules::global_slots!(global_slots_struct);

/// The configuration being read.
#[derive(Debug, Default)]
pub struct ServerBuild {
    pub global: Global,
    pub main: ServerConf,
    pub vhosts: Vec<ServerConf>,
    current: Option<usize>,
}

impl ServerBuild {
    pub fn new() -> Self {
        ServerBuild {
            main: ServerConf {
                base: DirConf::for_server(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    /// The server that server-level directives apply to right now.
    pub fn current(&mut self) -> &mut ServerConf {
        match self.current {
            Some(i) => &mut self.vhosts[i],
            None => &mut self.main,
        }
    }

    pub fn in_virtual_host(&self) -> bool {
        self.current.is_some()
    }

    pub fn begin_virtual_host(&mut self, addrs: Vec<String>, origin: Origin) -> usize {
        self.vhosts.push(ServerConf {
            addrs,
            origin: Some(origin),
            base: DirConf::for_server(),
            ..Default::default()
        });
        let idx = self.vhosts.len() - 1;
        self.current = Some(idx);
        idx
    }

    pub fn end_virtual_host(&mut self, idx: usize, base: DirConf) {
        self.vhosts[idx].base = base;
        self.current = None;
    }
}
