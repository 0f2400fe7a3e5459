//! `cargo test` also runs the application cases (`corpus/`, `apps/`) and
//! the protocol cases (`protocol/`: what mod_http2 itself refuses), and
//! the cases of what differs on a stream (a response field HTTP/2 cannot
//! carry; request bodies PHP reads, error documents included; a body an
//! error answered before any handler leaves unread; how a CGI answer
//! ends: an nph- script, a 413 before the script; a status HTTP/1.1 has
//! no line for; a directory that needs a new client verification, which a
//! stream cannot have; a 416 the byte-range filter makes after the
//! headers, whose error table mod_http2 has not merged yet) over
//! HTTP/2: the `difftest` binary with `--http2`, both servers configured
//! with `Protocols h2 h2c http/1.1`, every request the cases' HTTP/1.1
//! blocks can express sent as HTTP/2 (h2c with prior knowledge, h2 by ALPN
//! on TLS ports). A test binary of its own, so that cargo runs it after
//! the HTTP/1.1 suite (`differential.rs`), not beside it.
//! `$DIFFTEST_HTTP2_ARGS` replaces the case selection and options (e.g.
//! `-j1 corpus/wordpress`; set and empty, `DIFFTEST_HTTP2_ARGS=`, every
//! case).

use std::process::Command;

/// The cases run over HTTP/2 by default.
const DEFAULT_ARGS: &str =
    "corpus/ apps/ protocol/ http2/ headers/invalid-values php/env php/errordocument php/chunked-body htaccess/body-error-config cgi/stream-ends alias/redirect-status https/verify-depth-dir headers/range-error php/xsendfile";

#[test]
fn apache_and_htaccel_answer_alike_over_http2() {
    let args = std::env::var("DIFFTEST_HTTP2_ARGS").unwrap_or_else(|_| DEFAULT_ARGS.into());
    let status = Command::new(env!("CARGO_BIN_EXE_difftest"))
        .arg("--http2")
        .args(args.split_whitespace())
        .status()
        .expect("running difftest");
    let why = match status.code() {
        Some(1) => "Apache and htaccel answered differently over HTTP/2",
        Some(2) => "the HTTP/2 suite could not be set up",
        Some(3) => "the HTTP/2 suite ran out of time",
        _ => "difftest ended abnormally",
    };
    assert!(
        status.success(),
        "{why} ({status}); see difftest's report above"
    );
}
