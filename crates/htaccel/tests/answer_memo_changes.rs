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

/// A MultiViews answer depends on the files beside the one asked for: a
/// variant that appears or goes changes the next answer, and so does a
/// variant that appears where only a `FallbackResource` answered before.
#[test]
fn negotiated_answers_follow_the_variants_on_disk() {
    let site = TempDir::new("memo-neg");
    let logs = TempDir::new("memo-neg-logs");
    write_old(&site, "mv/index.html.en", "english\n");
    write_old(&site, "mv/front.html", "front\n");
    let dir = site.path().join("mv");
    let conf = format!(
        "LoadModule authz_core_module modules/mod_authz_core.so\n\
         LoadModule mime_module modules/mod_mime.so\n\
         LoadModule dir_module modules/mod_dir.so\n\
         LoadModule negotiation_module modules/mod_negotiation.so\n\
         Listen 127.0.0.1:@PORT@\nServerName localhost\nErrorLog /dev/stderr\n\
         TypesConfig /etc/mime.types\nDocumentRoot \"{root}\"\n\
         AddLanguage en .en\nAddLanguage fr .fr\n\
         <Directory \"{dir}\">\n    Require all granted\n    Options MultiViews\n    \
         LanguagePriority fr en\n    FallbackResource /mv/front.html\n</Directory>\n",
        root = site.path().display(),
        dir = dir.display(),
    );
    // The directory dated back too: its time is part of the answer's ETag,
    // and a fresh one would make the answer depend on the clock.
    let settle = || {
        std::fs::File::open(&dir)
            .unwrap()
            .set_modified(SystemTime::now() - Duration::from_secs(3600))
            .unwrap()
    };
    settle();
    let s = Server::with_config(&conf, logs.path());
    assert_eq!(answer(s.port, "/mv/index"), (200, "english\n".into()));
    assert_eq!(answer(s.port, "/mv/page"), (200, "front\n".into()));

    // A French variant comes: LanguagePriority prefers it.
    write_old(&site, "mv/index.html.fr", "francais\n");
    settle();
    assert_eq!(answer(s.port, "/mv/index"), (200, "francais\n".into()));
    // A variant for a name only the fallback answered.
    write_old(&site, "mv/page.html.en", "page\n");
    settle();
    assert_eq!(answer(s.port, "/mv/page"), (200, "page\n".into()));

    // The French one goes again.
    std::fs::remove_file(dir.join("index.html.fr")).unwrap();
    settle();
    assert_eq!(answer(s.port, "/mv/index"), (200, "english\n".into()));
}

/// The access log written beside the document root changes with every
/// request, and the watcher hears of each write: since nothing asked about
/// that file, the kept answers stay in use (they were dropped after every
/// request once).
#[test]
fn a_log_beside_the_site_leaves_kept_answers_in_use() {
    let top = TempDir::new("memo-log-beside");
    let logs = TempDir::new("memo-log-beside-logs");
    write_old(&top, "public/a.txt", "AAAA\n");
    let conf = format!(
        "LoadModule authz_core_module modules/mod_authz_core.so\n\
         LoadModule status_module modules/mod_status.so\n\
         Listen 127.0.0.1:@PORT@\nServerName localhost\nErrorLog {top}/error.log\n\
         CustomLog {top}/access.log \"%h %r %>s\"\n\
         DocumentRoot \"{top}/public\"\n\
         <Directory \"{top}/public\">\n    Require all granted\n</Directory>\n\
         <Location /metrics>\n    SetHandler htaccel-metrics\n</Location>\n",
        top = top.path().display(),
    );
    let s = Server::with_config(&conf, logs.path());
    // Three requests to each worker at least (each keeps its own answers,
    // from a request's second sighting on).
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    for _ in 0..3 * workers + 1 {
        assert_eq!(s.get("/a.txt"), (200, "AAAA\n".into()));
    }
    let (status, metrics) = s.get("/metrics");
    assert_eq!(status, 200);
    let hits: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("htaccel_answer_memo_hits_total "))
        .and_then(|v| v.trim().parse().ok())
        .expect("the memo's hit counter");
    assert!(hits > 0, "{metrics}");
    let logged = std::fs::read_to_string(top.path().join("access.log")).unwrap_or_default();
    // The log was written all along (the metrics request last).
    let answered = logged.lines().filter(|l| l.contains("GET /a.txt ")).count();
    assert_eq!(answered, 3 * workers + 1, "{logged}");
}
