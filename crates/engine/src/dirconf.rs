//! The per-directory configuration: one typed slot per module, and the
//! merge of a parent with a child in Apache's order.
//!
//! Apache gives every module a `create_dir_config`/`merge_dir_config` pair;
//! a request's configuration is the fold of those merges over the sections
//! that apply to it. `DirConf` is that vector of module configs, made
//! concrete: each field belongs to one module and is merged by that
//! module's own rule.

use crate::modules::{
    access_compat, alias, auth_basic, authn_core, authn_file, authz_core, authz_groupfile, core,
    deflate, dir, env, expires, filter, headers, mime, negotiation, php, setenvif, unsupported,
};

/// Configuration that applies to a directory, a `.htaccess`, a `<Files>`
/// section or any other per-directory scope — before or after merging.
#[derive(Clone, Debug, Default)]
pub struct DirConf {
    pub core: core::CoreDir,
    pub mime: mime::MimeDir,
    pub negotiation: negotiation::NegotiationDir,
    pub dir: dir::DirDir,
    pub authz: authz_core::AuthzDir,
    pub access_compat: access_compat::AccessCompatDir,
    pub authn_core: authn_core::AuthnCoreDir,
    pub auth_basic: auth_basic::AuthBasicDir,
    pub authn_file: authn_file::AuthnFileDir,
    pub authz_groupfile: authz_groupfile::GroupFileDir,
    pub alias: alias::AliasDir,
    pub filter: filter::FilterDir,
    pub deflate: deflate::DeflateDir,
    pub php: php::PhpDir,
    pub env: env::EnvDir,
    pub setenvif: setenvif::SetEnvIfDir,
    pub headers: headers::HeadersDir,
    pub expires: expires::ExpiresDir,
    pub autoindex: crate::modules::autoindex::AutoindexDir,
    pub rewrite: crate::modules::rewrite::RewriteDir,
    pub xsendfile: crate::modules::xsendfile::XSendFileDir,
    pub proxy: crate::modules::proxy::conf::ProxyDir,
    pub ssl: crate::modules::ssl::SslDir,
    pub cgi: crate::modules::cgi::CgiDir,
    pub unsupported: unsupported::UnsupportedDir,
    pub http2: crate::modules::http2::Http2Dir,
}

impl DirConf {
    /// A configuration for a section of the main config or a `.htaccess`
    /// (Apache's `create_dir_config` with a directory name).
    pub fn for_section() -> Self {
        DirConf {
            core: core::CoreDir::for_section(),
            ..Default::default()
        }
    }

    /// The server-wide base (Apache's `create_dir_config` with no directory).
    pub fn for_server() -> Self {
        DirConf {
            core: core::CoreDir::for_server(),
            ..Default::default()
        }
    }

    /// `base` with `new` merged on top, module by module.
    pub fn merge(base: &DirConf, new: &DirConf) -> DirConf {
        DirConf {
            core: core::CoreDir::merge(&base.core, &new.core),
            mime: mime::MimeDir::merge(&base.mime, &new.mime),
            negotiation: negotiation::NegotiationDir::merge(&base.negotiation, &new.negotiation),
            dir: dir::DirDir::merge(&base.dir, &new.dir),
            authz: authz_core::AuthzDir::merge(&base.authz, &new.authz),
            access_compat: access_compat::AccessCompatDir::merge(
                &base.access_compat,
                &new.access_compat,
            ),
            authn_core: authn_core::AuthnCoreDir::merge(&base.authn_core, &new.authn_core),
            auth_basic: auth_basic::AuthBasicDir::merge(&base.auth_basic, &new.auth_basic),
            authn_file: authn_file::AuthnFileDir::merge(&base.authn_file, &new.authn_file),
            authz_groupfile: authz_groupfile::GroupFileDir::merge(
                &base.authz_groupfile,
                &new.authz_groupfile,
            ),
            alias: alias::AliasDir::merge(&base.alias, &new.alias),
            filter: filter::FilterDir::merge(&base.filter, &new.filter),
            deflate: deflate::DeflateDir::merge(&base.deflate, &new.deflate),
            php: php::PhpDir::merge(&base.php, &new.php),
            env: env::EnvDir::merge(&base.env, &new.env),
            setenvif: setenvif::SetEnvIfDir::merge(&base.setenvif, &new.setenvif),
            headers: headers::HeadersDir::merge(&base.headers, &new.headers),
            expires: expires::ExpiresDir::merge(&base.expires, &new.expires),
            autoindex: crate::modules::autoindex::AutoindexDir::merge(
                &base.autoindex,
                &new.autoindex,
            ),
            rewrite: crate::modules::rewrite::RewriteDir::merge(&base.rewrite, &new.rewrite),
            xsendfile: crate::modules::xsendfile::XSendFileDir::merge(
                &base.xsendfile,
                &new.xsendfile,
            ),
            proxy: crate::modules::proxy::conf::ProxyDir::merge(&base.proxy, &new.proxy),
            ssl: crate::modules::ssl::SslDir::merge(&base.ssl, &new.ssl),
            cgi: crate::modules::cgi::CgiDir::merge(&base.cgi, &new.cgi),
            unsupported: unsupported::UnsupportedDir::merge(&base.unsupported, &new.unsupported),
            http2: crate::modules::http2::Http2Dir::merge(&base.http2, &new.http2),
        }
    }
}
