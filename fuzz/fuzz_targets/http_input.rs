//! Fuzzes what a client sends: the request head (request line, header
//! fields, the checks made once it is complete), a chunked request body
//! with trailers, and a PROXY protocol header (mod_remoteip); and what an
//! OCSP responder answers (mod_ssl's stapling). No input may panic;
//! `-timeout=` bounds each one.

#![no_main]

use htaccel_server::fuzzing;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    fuzzing::request_head(data);
    fuzzing::chunked_body(data);
    fuzzing::proxy_header(data);
    fuzzing::ocsp_answer(data);
});
