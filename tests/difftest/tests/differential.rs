//! `cargo test` runs the whole differential suite: the `difftest` binary
//! against the htaccel binary of the same build (or `$HTACCEL_BIN`), with
//! its report going straight to the terminal. Extra arguments for the
//! harness (a case filter, `-j1`) can be given in `$DIFFTEST_ARGS`.

use std::process::Command;

#[test]
fn apache_and_htaccel_answer_alike() {
    let args = std::env::var("DIFFTEST_ARGS").unwrap_or_default();
    let status = Command::new(env!("CARGO_BIN_EXE_difftest"))
        .args(args.split_whitespace())
        .status()
        .expect("running difftest");
    let why = match status.code() {
        Some(1) => "Apache and htaccel answered differently",
        Some(2) => "the suite could not be set up",
        Some(3) => "the suite ran out of time",
        _ => "difftest ended abnormally",
    };
    assert!(
        status.success(),
        "{why} ({status}); see difftest's report above"
    );
}
