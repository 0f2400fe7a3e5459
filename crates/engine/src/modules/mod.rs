//! One Rust module per Apache module, each holding its directive table,
//! its per-directory slot with the merge rule, and its request-time logic.
//! People who know Apache find a directive where Apache keeps it.

pub mod access_compat;
pub mod actions;
pub mod alias;
pub mod allowmethods;
pub mod auth_basic;
pub mod authn_core;
pub mod authn_file;
pub mod authz_core;
pub mod authz_groupfile;
pub mod autoindex;
pub mod brotli;
pub mod cgi;
pub mod core;
pub mod deflate;
pub mod dir;
pub mod env;
pub mod expires;
pub mod filter;
pub mod headers;
pub mod http2;
pub mod http3;
pub mod include;
pub mod log_config;
pub mod logio;
pub mod macros;
pub mod md;
pub mod mime;
pub mod mime_magic;
pub mod negotiation;
pub mod php;
pub mod proxy;
pub mod remoteip;
pub mod reqtimeout;
pub mod rewrite;
pub mod setenvif;
pub mod speling;
pub mod ssl;
pub mod status;
pub mod substitute;
pub mod unique_id;
pub mod unsupported;
pub mod userdir;
pub mod vhost_alias;
pub mod xsendfile;

pub mod hooks;

/// Every module's per-directory slot (Apache's `create_dir_config` and
/// `merge_dir_config`): the field `DirConf` gives it, and its type, which
/// has `merge(base, new)`. `dirconf.rs` builds `DirConf` and its merge
/// from this list; a module with per-directory directives adds its line.
macro_rules! dir_slots {
    ($then:ident) => {
        $then! {
            core: $crate::modules::core::CoreDir,
            mime: $crate::modules::mime::MimeDir,
            negotiation: $crate::modules::negotiation::NegotiationDir,
            dir: $crate::modules::dir::DirDir,
            authz: $crate::modules::authz_core::AuthzDir,
            access_compat: $crate::modules::access_compat::AccessCompatDir,
            allowmethods: $crate::modules::allowmethods::AllowMethodsDir,
            logio: $crate::modules::logio::LogIoDir,
            actions: $crate::modules::actions::ActionsDir,
            speling: $crate::modules::speling::SpelingDir,
            authn_core: $crate::modules::authn_core::AuthnCoreDir,
            auth_basic: $crate::modules::auth_basic::AuthBasicDir,
            authn_file: $crate::modules::authn_file::AuthnFileDir,
            authz_groupfile: $crate::modules::authz_groupfile::GroupFileDir,
            alias: $crate::modules::alias::AliasDir,
            filter: $crate::modules::filter::FilterDir,
            deflate: $crate::modules::deflate::DeflateDir,
            brotli: $crate::modules::brotli::BrotliDir,
            substitute: $crate::modules::substitute::SubstituteDir,
            php: $crate::modules::php::PhpDir,
            env: $crate::modules::env::EnvDir,
            setenvif: $crate::modules::setenvif::SetEnvIfDir,
            headers: $crate::modules::headers::HeadersDir,
            expires: $crate::modules::expires::ExpiresDir,
            autoindex: $crate::modules::autoindex::AutoindexDir,
            rewrite: $crate::modules::rewrite::RewriteDir,
            xsendfile: $crate::modules::xsendfile::XSendFileDir,
            proxy: $crate::modules::proxy::conf::ProxyDir,
            ssl: $crate::modules::ssl::SslDir,
            cgi: $crate::modules::cgi::CgiDir,
            unsupported: $crate::modules::unsupported::UnsupportedDir,
            http2: $crate::modules::http2::Http2Dir,
        }
    };
}
pub(crate) use dir_slots;

/// Every module's per-server slot (Apache's `create_server_config` and
/// `merge_server_config`): the field `ServerSlots` gives it, and its type,
/// which has `merge(main, vhost)`. `config/server.rs` builds `ServerSlots`
/// from this list; a module with server directives adds its line.
macro_rules! server_slots {
    ($then:ident) => {
        $then! {
            alias: $crate::modules::alias::AliasServer,
            rewrite: $crate::modules::rewrite::RewriteServer,
            remoteip: $crate::modules::remoteip::RemoteIpServer,
            reqtimeout: $crate::modules::reqtimeout::ReqTimeoutServer,
            ssl: $crate::modules::ssl::SslServer,
            protocols: $crate::modules::http2::ProtocolsConf,
            http2: $crate::modules::http2::Http2Server,
            http3: $crate::modules::http3::Http3Server,
            vhost_alias: $crate::modules::vhost_alias::VhostAliasServer,
            userdir: $crate::modules::userdir::UserDirServer,
            mime_magic: $crate::modules::mime_magic::MimeMagicServer,
        }
    };
}
pub(crate) use server_slots;

/// Every module's process-wide settings (what Apache keeps in a module's
/// server config of the main server, or in static variables, for settings
/// that cannot differ between virtual hosts): the field `GlobalSlots`
/// gives it, and its type. `config/server.rs` builds `GlobalSlots` from
/// this list.
macro_rules! global_slots {
    ($then:ident) => {
        $then! {
            proxy_protocol: $crate::modules::remoteip::ProxyProtocol,
            md: $crate::modules::md::MdGlobal,
        }
    };
}
pub(crate) use global_slots;

/// Every module's state while a configuration is read (what Apache's
/// modules keep in static variables as they read: mod_macro's macros): the
/// field `ReadSlots` gives it, and its type (`Clone` and `Default`).
/// `config/mod.rs` builds `ReadSlots`, part of the reading's `Environment`,
/// from this list; a `.htaccess` is read with a copy of what the server
/// configuration left.
macro_rules! read_slots {
    ($then:ident) => {
        $then! {
            macros: $crate::modules::macros::MacroTable,
            runners: $crate::modules::unsupported::LoadedRunners,
        }
    };
}
pub(crate) use read_slots;

/// Every module's engine-wide state, made once when an engine starts from
/// a loaded configuration (Apache's `post_config` hooks): the field
/// `EngineSlots` gives it, its type, and the module's `start` function,
/// run in this order (the first failure stops the start). `engine.rs`
/// builds `EngineSlots` from this list.
macro_rules! engine_slots {
    ($then:ident) => {
        $then! {
            // First: without its PHP-FPM pool a configuration that loads
            // mod_php does not start.
            php: Option<$crate::modules::proxy::FcgiTarget> = $crate::modules::php::pool::start,
            mime: $crate::modules::mime::TypesTable = $crate::modules::mime::start,
            status: $crate::modules::status::StatusSettings = $crate::modules::status::start,
            proxy_protocol: $crate::modules::remoteip::ProxyProtocol = $crate::modules::remoteip::start,
            md: $crate::modules::md::MdEngine = $crate::modules::md::start,
            unique_id: $crate::modules::unique_id::UniqueIds = $crate::modules::unique_id::start,
        }
    };
}
pub(crate) use engine_slots;

/// Every module's per-request state (what Apache's modules keep in the
/// request's notes and pool): the field `RequestSlots` gives it, and its
/// type, which implements `request::RequestSlot` (what an internal
/// redirect and a sub-request inherit). `request.rs` builds `RequestSlots`
/// from this list.
macro_rules! request_slots {
    ($then:ident) => {
        $then! {
            rewrite: $crate::modules::rewrite::RequestState,
            auth_prev: Option<$crate::modules::authn_core::AuthPrev>,
            early_hints: $crate::modules::http2::SentHints,
            ssl_shutdown: $crate::modules::ssl::shutdown::Choice,
        }
    };
}
pub(crate) use request_slots;

use crate::registry::Module;

/// Every module htaccel has, in Apache's load order. `builtin` ones are
/// always present; the others only after `LoadModule`.
pub static ALL: &[&Module] = &[
    &core::MODULE,
    &core::SERVER_MODULE,
    &unsupported::CORE_EXTRA,
    &http2::CORE_MODULE,
    &cgi::CORE_MODULE,
    &filter::CORE_MODULE,
    &log_config::MODULE,
    &logio::MODULE,
    &WATCHDOG_MODULE,
    &VERSION_MODULE,
    &SO_MODULE,
    &UNIXD_MODULE,
    &MPM_EVENT_MODULE,
    &MPM_PREFORK_MODULE,
    &MPM_WORKER_MODULE,
    &authz_core::MODULE,
    &authz_core::HOST_MODULE,
    &authz_groupfile::USER_MODULE,
    &authz_groupfile::MODULE,
    &authn_core::MODULE,
    &authn_file::MODULE,
    &auth_basic::MODULE,
    &access_compat::MODULE,
    &mime::MODULE,
    &mime_magic::MODULE,
    &negotiation::MODULE,
    &dir::MODULE,
    &alias::MODULE,
    &userdir::MODULE,
    &vhost_alias::MODULE,
    &rewrite::MODULE,
    &headers::MODULE,
    &expires::MODULE,
    &env::MODULE,
    &setenvif::MODULE,
    &remoteip::MODULE,
    &unique_id::MODULE,
    &reqtimeout::MODULE,
    &status::MODULE,
    &autoindex::MODULE,
    &filter::MODULE,
    &deflate::MODULE,
    &brotli::MODULE,
    &substitute::MODULE,
    &proxy::MODULE,
    &proxy::FCGI_MODULE,
    &proxy::HTTP_MODULE,
    &proxy::WSTUNNEL_MODULE,
    &SOCACHE_SHMCB_MODULE,
    &ssl::MODULE,
    &md::MODULE,
    &http2::MODULE,
    &http3::MODULE,
    &xsendfile::MODULE,
    &allowmethods::MODULE,
    &actions::MODULE,
    &macros::MODULE,
    &speling::MODULE,
    &cgi::CGI_MODULE,
    &cgi::CGID_MODULE,
    &php::MODULE,
    &php::MODULE7,
    &php::MODULE5,
    &php::MODULE8,
    &SYSTEMD_MODULE,
];

/// mod_version is compiled into Debian's Apache; `<IfVersion>` is the core's here.
static VERSION_MODULE: Module = Module {
    source: "mod_version.c",
    identifier: "version_module",
    builtin: true,
    directives: &[],
};
/// mod_watchdog is compiled into Debian's Apache; it runs other modules'
/// periodic tasks, and htaccel has no module that needs it.
static WATCHDOG_MODULE: Module = Module {
    source: "mod_watchdog.c",
    identifier: "watchdog_module",
    builtin: true,
    directives: &[crate::registry::Directive {
        name: "WatchdogInterval",
        args: crate::registry::Args::Take1,
        req_override: crate::registry::RSRC_CONF,
        about: "Watchdog interval in seconds",
        run: crate::registry::Run::WithoutEffect,
    }],
};
/// mod_systemd (Red Hat's `00-systemd.conf`): tells systemd when the
/// server is ready. htaccel does that itself under `Type=notify`, module
/// or not; loading it only makes `<IfModule>` see it.
static SYSTEMD_MODULE: Module = Module {
    source: "mod_systemd.c",
    identifier: "systemd_module",
    builtin: false,
    directives: &[],
};
static SO_MODULE: Module = Module {
    source: "mod_so.c",
    identifier: "so_module",
    builtin: true,
    directives: &[],
};
static UNIXD_MODULE: Module = Module {
    source: "mod_unixd.c",
    identifier: "unixd_module",
    builtin: true,
    directives: &[],
};
/// The MPM: htaccel's own thread-per-core model stands in for whichever
/// one is loaded (prefork is the one mod_php requires, so Debian's mod_php
/// configurations load it; its directives are accepted with no effect).
static MPM_EVENT_MODULE: Module = Module {
    source: "event.c",
    identifier: "mpm_event_module",
    builtin: false,
    directives: &[],
};
static MPM_PREFORK_MODULE: Module = Module {
    source: "prefork.c",
    identifier: "mpm_prefork_module",
    builtin: false,
    directives: &[],
};
static MPM_WORKER_MODULE: Module = Module {
    source: "worker.c",
    identifier: "mpm_worker_module",
    builtin: false,
    directives: &[],
};

/// The shared-memory session cache mod_ssl's `SSLSessionCache shmcb:…`
/// names: htaccel keeps TLS sessions in each worker's memory, so loading
/// it only makes `<IfModule>` see it.
static SOCACHE_SHMCB_MODULE: Module = Module {
    source: "mod_socache_shmcb.c",
    identifier: "socache_shmcb_module",
    builtin: false,
    directives: &[],
};

/// What loading a module needs beyond htaccel itself: the shared
/// libraries its Apache counterpart links, without which Apache's
/// `LoadModule` fails too.
pub fn load_check(module: &Module, file: &str) -> Result<(), String> {
    if std::ptr::eq(module, &brotli::MODULE) {
        return brotli::load_check(file);
    }
    Ok(())
}

/// The module `LoadModule <identifier> …` names.
pub fn by_identifier(identifier: &str) -> Option<&'static Module> {
    ALL.iter()
        .copied()
        .find(|m| m.identifier == identifier && !m.builtin)
}

/// Whether `identifier` names a module present without `LoadModule`.
pub fn is_builtin(identifier: &str) -> bool {
    ALL.iter().any(|m| m.identifier == identifier && m.builtin)
}

/// The modules present before any `LoadModule`.
pub fn builtin() -> Vec<&'static Module> {
    ALL.iter().copied().filter(|m| m.builtin).collect()
}
