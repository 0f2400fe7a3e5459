//! `cargo test` also runs the `h2c/` cases, and a few groups of ordinary
//! ones, as `curl --http2` sends them in clear text: each request an
//! HTTP/1.1 request with `Upgrade: h2c` (`difftest --h2c-upgrade`), both
//! servers configured with mod_http2 and `Protocols h2 h2c http/1.1`
//! unless the case sets its own `Protocols`. Whether the server switches
//! (`101`, then the answer over HTTP/2 on stream 1) or answers over
//! HTTP/1.1, and what it answers, must be Apache's. A few seconds.
//! `$DIFFTEST_H2C_ARGS` replaces the case selection and options.

use std::process::Command;

/// The cases run with `Upgrade: h2c` by default. Not `static/get-file`:
/// Apache 2.4.71 sometimes closes an upgraded connection after the first
/// 65,535 bytes of its 300,000-byte file (curl: "transfer closed with
/// outstanding read data remaining"), whatever htaccel does.
const DEFAULT_ARGS: &str =
    "h2c/ static/head static/not-found static/mime-types static/path-info methods/";

#[test]
fn apache_and_htaccel_answer_alike_to_upgrade_h2c() {
    let args = std::env::var("DIFFTEST_H2C_ARGS").unwrap_or_else(|_| DEFAULT_ARGS.into());
    let status = Command::new(env!("CARGO_BIN_EXE_difftest"))
        .arg("--h2c-upgrade")
        .args(args.split_whitespace())
        .status()
        .expect("running difftest");
    let why = match status.code() {
        Some(1) => "Apache and htaccel answered Upgrade: h2c differently",
        Some(2) => "the Upgrade: h2c suite could not be set up",
        Some(3) => "the Upgrade: h2c suite ran out of time",
        _ => "difftest ended abnormally",
    };
    assert!(
        status.success(),
        "{why} ({status}); see difftest's report above"
    );
}
