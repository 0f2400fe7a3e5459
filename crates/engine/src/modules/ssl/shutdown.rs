//! How a TLS connection ends when the server closes it, as mod_ssl lets
//! `SetEnvIf`/`BrowserMatch` choose (`ssl-unclean-shutdown`,
//! `ssl-accurate-shutdown`; Red Hat's stock `ssl.conf` names old Internet
//! Explorers this way). mod_ssl reads the choice once per connection,
//! on the first request's `post_read_request` (`ssl_hook_ReadReq`, after
//! mod_setenvif): only variables set by then count, and the first name
//! beginning with `ssl-` (compared with its case) decides.
//!
//! The server acts on it for HTTP/1.x connections: `Unclean` ends the
//! connection without `close_notify`. `Accurate` (send `close_notify`,
//! then wait for the client's) is what the lingering close does anyway.

use crate::http::tls::TlsShutdown;
use crate::request::Ctx;

/// The choice, once made for the request (an internal redirect keeps it,
/// as the connection keeps mod_ssl's).
#[derive(Clone, Copy, Debug, Default)]
pub struct Choice(pub Option<TlsShutdown>);

impl crate::request::RequestSlot for Choice {
    fn for_redirect(from: &Ctx<'_>) -> Self {
        from.modules.ssl_shutdown
    }
}

/// mod_ssl's `post_read_request`: on a TLS connection, the shutdown the
/// request's variables ask for.
pub fn post_read_request(ctx: &mut Ctx<'_>) {
    if ctx.req.tls.is_none() || ctx.modules.ssl_shutdown.0.is_some() {
        return;
    }
    let chosen = ctx
        .env
        .iter()
        .find_map(|(name, _)| name.strip_prefix("ssl-"))
        .map_or(TlsShutdown::Standard, |kind| {
            if kind.starts_with("unclean") {
                TlsShutdown::Unclean
            } else if kind.starts_with("accurate") {
                TlsShutdown::Accurate
            } else {
                TlsShutdown::Standard
            }
        });
    ctx.modules.ssl_shutdown = Choice(Some(chosen));
}
