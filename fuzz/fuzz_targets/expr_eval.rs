//! Fuzzes Apache expressions (`<If>`, `Require expr`, `Header … expr=`,
//! `SetEnvIfExpr`, string expressions of `ErrorDocument` and friends): any
//! text compiles or is refused without panicking, and a compiled one
//! evaluates against a fixed request without panicking or hanging
//! (`-timeout=` bounds each input).

#![no_main]

use htaccel_engine::expr::vars::Var;
use htaccel_engine::expr::{Expr, ExprContext, StrExpr};
use libfuzzer_sys::fuzz_target;
use std::borrow::Cow;
use std::net::IpAddr;

struct Request;

impl ExprContext for Request {
    fn var(&self, var: Var) -> Option<Cow<'_, [u8]>> {
        let v: &[u8] = match var {
            Var::RequestUri => b"/app/login.php",
            Var::QueryString => b"a=1&v=%41",
            Var::RequestMethod => b"GET",
            Var::RemoteAddr => b"192.0.2.7",
            Var::RequestFilename => b"/srv/www/app/login.php",
            _ => return None,
        };
        Some(Cow::Borrowed(v))
    }
    fn request_header(&self, name: &str) -> Option<Cow<'_, [u8]>> {
        name.eq_ignore_ascii_case("user-agent")
            .then_some(Cow::Borrowed(&b"Mozilla/5.0 (X11) curl/8"[..]))
    }
    fn response_header(&self, _name: &str) -> Option<Cow<'_, [u8]>> {
        None
    }
    fn env(&self, name: &str) -> Option<Cow<'_, [u8]>> {
        (name == "HTTPS").then_some(Cow::Borrowed(&b"on"[..]))
    }
    fn note(&self, _name: &str) -> Option<Cow<'_, [u8]>> {
        None
    }
    fn remote_ip(&self) -> Option<IpAddr> {
        "192.0.2.7".parse().ok()
    }
    fn url_accessible(&self, _url: &str) -> bool {
        true
    }
    fn file_accessible(&self, _path: &str) -> bool {
        false
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(e) = Expr::parse(&text) {
        let _ = e.eval(&Request);
    }
    if let Ok(e) = StrExpr::parse(&text) {
        let _ = e.eval(&Request);
    }
});
