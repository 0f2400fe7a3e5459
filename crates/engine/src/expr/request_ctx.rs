//! The [`ExprContext`] of a request going through the phases: Apache's
//! variables computed from [`Ctx`] as `util_expr_eval.c` computes them
//! from `request_rec`.
//!
//! A variable reads the request as it stands when the expression runs:
//! during the `<If>` walk there is no content type or handler yet and the
//! status is 200; in an output-stage `Header … expr=` they are set. The
//! caller passes the status it wants `REQUEST_STATUS` to show.

use super::{ExprContext, Var};
use crate::request::Ctx;
use std::borrow::Cow;
use std::net::IpAddr;
use std::os::unix::fs::MetadataExt;

/// A request seen by an expression.
pub struct RequestExpr<'r, 'a> {
    pub ctx: &'r Ctx<'a>,
    /// `REQUEST_STATUS`; 200 (Apache's initial `r->status`) when `None`.
    pub status: Option<u16>,
}

impl<'r, 'a> RequestExpr<'r, 'a> {
    pub fn new(ctx: &'r Ctx<'a>) -> Self {
        RequestExpr { ctx, status: None }
    }

    pub fn with_status(ctx: &'r Ctx<'a>, status: u16) -> Self {
        RequestExpr {
            ctx,
            status: Some(status),
        }
    }
}

fn owned(s: String) -> Option<Cow<'static, [u8]>> {
    Some(Cow::Owned(s.into_bytes()))
}

fn borrowed(s: &str) -> Option<Cow<'_, [u8]>> {
    Some(Cow::Borrowed(s.as_bytes()))
}

/// A value derived from the decoded path: the bytes its text form stands
/// for (`crate::path_text`), so that `%{REQUEST_URI} =~ /\xe9/` sees them.
fn path_bytes(s: &str) -> Option<Cow<'_, [u8]>> {
    Some(crate::path_text::bytes(s))
}

impl ExprContext for RequestExpr<'_, '_> {
    fn ssl_var(&self, name: &str) -> Option<String> {
        crate::modules::hooks::ssl_var_lookup(self.ctx.req, name)
    }

    fn var(&self, var: Var) -> Option<Cow<'_, [u8]>> {
        let c = self.ctx;
        let req = c.req;
        match var {
            Var::RequestMethod => borrowed(&c.method),
            Var::RequestScheme => borrowed(if req.secure { "https" } else { "http" }),
            Var::RequestUri => path_bytes(&c.uri),
            Var::RequestFilename | Var::ScriptFilename => path_bytes(&c.filename),
            Var::RemoteAddr => owned(c.useragent_ip().to_string()),
            Var::RemoteHost => owned(c.remote_name()),
            Var::ConnRemoteAddr => owned(req.conn_peer_ip().to_string()),
            Var::RemotePort => owned(c.useragent_port().to_string()),
            Var::RemoteUser => c.user.as_deref().and_then(borrowed),
            Var::AuthType => c.auth_type.as_deref().and_then(borrowed),
            Var::RemoteIdent => None,
            Var::RequestLogId | Var::ConnLogId => None,
            Var::ServerAdmin => borrowed(
                c.site
                    .server_admin
                    .as_deref()
                    .unwrap_or("[no address given]"),
            ),
            Var::ServerName => owned(c.server_name()),
            Var::ServerPort if c.canonical_name() => owned(c.server_port().to_string()),
            Var::ServerPort => owned(
                crate::engine::request_host(req)
                    .and_then(|(_, p)| p)
                    .unwrap_or(req.local.port())
                    .to_string(),
            ),
            Var::ServerProtocol => borrowed(req.version.as_str()),
            Var::PathInfo => path_bytes(&c.path_info),
            Var::QueryString => c.args.as_deref().and_then(path_bytes),
            Var::IsSubreq => borrowed(if c.is_subreq { "true" } else { "false" }),
            Var::DocumentRoot | Var::ContextDocumentRoot => owned(c.document_root().into_owned()),
            Var::ContextPrefix => borrowed(""),
            Var::TheRequest => borrowed(&req.request_line),
            Var::ContentType => c.content_type.as_deref().and_then(borrowed),
            Var::Handler => c.handler.as_deref().and_then(borrowed),
            Var::ScriptUser => c
                .finfo
                .and_then(|f| crate::os::user_name(f.uid))
                .and_then(owned),
            Var::ScriptGroup => {
                c.finfo?;
                let gid = std::fs::metadata(crate::path_text::os_path(c.filename.as_ref()))
                    .ok()?
                    .gid();
                crate::os::group_name(gid).and_then(owned)
            }
            Var::DocumentUri => match c.env.get("DOCUMENT_URI") {
                Some(u) => borrowed(u),
                None => path_bytes(&c.uri),
            },
            Var::LastModified => {
                // `r->mtime` is set once a handler serves the file.
                let us = match c.finfo {
                    Some(f) if c.handler_ran => f.mtime_us,
                    _ => 0,
                };
                owned(super::funcs::timestamp(us))
            }
            Var::RequestStatus => owned(self.status.unwrap_or(200).to_string()),
            Var::Https => borrowed(if req.secure { "on" } else { "off" }),
            Var::Ipv6 => borrowed(match req.remote_ip() {
                IpAddr::V6(v6) if v6.to_ipv4_mapped().is_none() => "on",
                _ => "off",
            }),
            Var::Http2 => borrowed(if req.h2_stream.is_some() { "on" } else { "off" }),
            Var::ServerSoftware => borrowed(&c.engine.server_header),
            // Answered by the evaluator.
            _ => None,
        }
    }

    fn request_header(&self, name: &str) -> Option<Cow<'_, [u8]>> {
        self.ctx
            .headers_in
            .get_joined(name)
            .map(|b| Cow::Owned(b.to_vec()))
    }

    fn response_header(&self, name: &str) -> Option<Cow<'_, [u8]>> {
        let c = self.ctx;
        c.headers_out
            .iter()
            .chain(c.err_headers_out.iter())
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| Cow::Borrowed(v.as_bytes()))
    }

    fn env(&self, name: &str) -> Option<Cow<'_, [u8]>> {
        self.ctx.env.get(name).and_then(borrowed)
    }

    fn note(&self, name: &str) -> Option<Cow<'_, [u8]>> {
        self.ctx
            .notes
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| Cow::Borrowed(v.as_bytes()))
    }

    fn remote_ip(&self) -> Option<IpAddr> {
        Some(self.ctx.useragent_ip())
    }

    fn url_accessible(&self, url: &str) -> bool {
        let c = self.ctx;
        // Apache's guard against a sub-request asking about itself.
        if c.is_subreq && url == c.uri {
            return false;
        }
        let (_sub, result) = c.sub_request(url);
        match result {
            Ok(()) => true,
            Err(status) => status < 400,
        }
    }

    fn file_accessible(&self, path: &str) -> bool {
        let c = self.ctx;
        if std::fs::metadata(path).is_err() {
            return false;
        }
        let root = c.document_root();
        let root = root.trim_end_matches('/');
        // A path under the document root is looked up as its URL; outside
        // it, the server's `<Directory />` (denied in any sane setup) rules.
        match path.strip_prefix(root) {
            Some(rest) if rest.starts_with('/') => {
                let (_sub, result) = c.sub_request(rest);
                match result {
                    Ok(()) => true,
                    Err(status) => status < 300,
                }
            }
            _ => false,
        }
    }
}
