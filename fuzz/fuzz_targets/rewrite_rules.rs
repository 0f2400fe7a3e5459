//! Fuzzes mod_rewrite: any rule text compiled and run over any path and
//! query must answer without panicking (a time-out is a failure too:
//! `-timeout=` bounds each input). Input: rule lines, a NUL, the path, a
//! NUL, the query.

#![no_main]

use htaccel_engine::modules::rewrite::simulate;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(3, '\0');
    let rules = parts.next().unwrap_or("");
    let path = format!("/docroot/{}", parts.next().unwrap_or("x"));
    let query = parts.next();
    let _ = simulate::run(rules, &path, query);
});
