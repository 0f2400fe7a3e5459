//! The environment variables Apache's HTTP/1.x protocol layer reads once
//! an answer is made (the "special purpose" variables of Apache's
//! environment documentation). Debian's stock `setenvif.conf` sets them
//! with `BrowserMatch` for clients that mishandle HTTP/1.1, and any
//! `SetEnvIf`, `SetEnv` or `RewriteRule [E=]` may set them too:
//!
//! * `nokeepalive`: the connection closes after the answer
//!   (`ap_set_keepalive`), unless the request came through a proxy
//!   (it has `Via`), whose own connection is not the old client's;
//! * `downgrade-1.0`: the request is answered as an HTTP/1.0 one
//!   (`basic_http_header_check`): no chunks, keep-alive only when asked;
//! * `force-response-1.0`: an HTTP/1.0 request (also a downgraded one)
//!   gets an `HTTP/1.0` status line, and the connection closes;
//! * `force-no-vary`: the answer loses its `Vary` and goes out in
//!   HTTP/1.0 mode, as if both variables above were set
//!   (`ap_http_header_filter`, which also sets `force-response-1.0`).
//!   mod_http2 drops `Vary` the same way on its streams.
//!
//! The engine reads them here, where Apache's header filter would, and
//! hands the result to the server with the answer ([`ProtocolEnv`]); only
//! an HTTP/1.x connection acts on the first three, as only Apache's
//! HTTP/1.x header filter reads them.

use crate::request::Ctx;

/// What the request's environment asks of the HTTP/1.x framing of its
/// answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProtocolEnv {
    /// `nokeepalive`, and the request has no `Via`.
    pub no_keepalive: bool,
    /// `downgrade-1.0` (or `force-no-vary`): an HTTP/1.1 request is
    /// answered as an HTTP/1.0 one.
    pub downgrade: bool,
    /// `force-response-1.0` (or `force-no-vary`): an HTTP/1.0 status line
    /// for an HTTP/1.0 request, and a connection that closes.
    pub force_response_10: bool,
    /// How a TLS connection ends, as mod_ssl chose it for the request
    /// (`ssl-unclean-shutdown`); the connection keeps the first
    /// choice it is given.
    pub tls_shutdown: Option<crate::http::tls::TlsShutdown>,
}

/// Apply the variables to `headers` (`force-no-vary` drops `Vary`, else
/// `Vary` is tidied as Apache's header filter does) and return what the
/// connection layer must do.
pub fn header_filter(
    ctx: &mut Ctx<'_>,
    headers: &mut Vec<(std::borrow::Cow<'static, str>, String)>,
) -> ProtocolEnv {
    let mut found = ProtocolEnv::default();
    let (mut no_keepalive, mut no_vary) = (false, false);
    for (name, _) in ctx.env.iter() {
        let is = |wanted: &str| name.eq_ignore_ascii_case(wanted);
        if is("nokeepalive") {
            no_keepalive = true;
        } else if is("downgrade-1.0") {
            found.downgrade = true;
        } else if is("force-response-1.0") {
            found.force_response_10 = true;
        } else if is("force-no-vary") {
            no_vary = true;
        }
    }
    if no_vary {
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case("Vary"));
        found.downgrade = true;
        found.force_response_10 = true;
        // Apache notes it where the access log's `%{…}e` can see it.
        ctx.env.set("force-response-1.0", "1");
    } else {
        crate::http::vary::fixup_vary(headers);
    }
    found.no_keepalive = no_keepalive && !ctx.headers_in.contains("Via");
    found.tls_shutdown = crate::modules::hooks::tls_shutdown(ctx);
    found
}
