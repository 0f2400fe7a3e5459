//! Answers kept by the answer memo (crates/engine/src/answer_memo.rs) are
//! never used after a change to the files they came from. (That they are
//! used only for requests whose decision reads the same inputs, client
//! address and header fields, is checked against Apache by the differential
//! suite, which sends every GET and HEAD five times: `--repeat 5`.)
//!
//! The files here are dated an hour back: an answer about a file changed
//! within the last second depends on the clock and is never kept, so a
//! fresh file would not exercise the memo at all. Every request is sent
//! several times, so that each worker thread has the answer kept.
//!
//! The expectations are written by hand: the differential harness serves
//! one fixed tree per case and cannot change files between two requests.
//! Apache decides every request from scratch, so its answer is the one the
//! files give at that moment; that is what this test demands.

mod common;

use common::{Server, TempDir};
use std::time::{Duration, SystemTime};

const TRIES: usize = 6;

/// Write `rel` under `dir` and date it an hour back.
fn write_old(dir: &TempDir, rel: &str, body: &str) {
    dir.write(rel, body);
    let f = std::fs::File::options()
        .write(true)
        .open(dir.path().join(rel))
        .unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
}

/// The answer to a request sent [`TRIES`] times: every time the same.
fn answer(port: u16, path: &str) -> (u16, String) {
    let first = common::get(port, path);
    for _ in 1..TRIES {
        assert_eq!(common::get(port, path), first, "{path}");
    }
    first
}

#[test]
fn kept_answers_follow_file_and_access_file_changes() {
    let site = TempDir::new("memo");
    let logs = TempDir::new("memo-logs");
    write_old(&site, "sub/a.txt", "AAAA\n");
    let s = Server::serve(site.path(), logs.path());
    assert_eq!(answer(s.port, "/sub/a.txt"), (200, "AAAA\n".into()));

    // The content rewritten in place, same size, dated back to the same
    // second: only the change itself tells.
    write_old(&site, "sub/a.txt", "BBBB\n");
    assert_eq!(answer(s.port, "/sub/a.txt"), (200, "BBBB\n".into()));

    // An access file appears, then goes.
    write_old(&site, "sub/.htaccess", "Require all denied\n");
    assert_eq!(answer(s.port, "/sub/a.txt").0, 403);
    std::fs::remove_file(site.path().join("sub/.htaccess")).unwrap();
    assert_eq!(answer(s.port, "/sub/a.txt").0, 200);

    // The file goes.
    std::fs::remove_file(site.path().join("sub/a.txt")).unwrap();
    assert_eq!(answer(s.port, "/sub/a.txt").0, 404);
}
