//! Answers kept by the answer memo (crates/engine/src/answer_memo.rs) are
//! used only for requests whose decision would read the same inputs, and
//! never after a change to the files they came from.
//!
//! The files here are dated an hour back: an answer about a file changed
//! within the last second depends on the clock and is never kept, so a
//! fresh file would not exercise the memo at all. Every request is sent
//! several times, so that each worker thread has the answer kept.
//!
//! The expectations are written by hand: the differential harness serves
//! one fixed tree per case and cannot change files between two requests
//! nor send from two client addresses. Apache decides every request from
//! scratch, so its answer is the one the files and the request give at that
//! moment; that is what these tests demand.

mod common;

use common::{Server, TempDir};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
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

/// `GET path` from the client address `from` with extra header lines:
/// the status and the body.
fn get_from(port: u16, from: &str, path: &str, extra: &str) -> (u16, String) {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    let local: SocketAddr = format!("{from}:0").parse().unwrap();
    socket.bind(&local.into()).unwrap();
    let server: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    socket.connect(&server.into()).unwrap();
    let mut s: TcpStream = socket.into();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n{extra}Connection: close\r\n\r\n");
    s.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text.split(' ').nth(1).unwrap().parse().unwrap();
    let body = text.split_once("\r\n\r\n").unwrap().1.to_string();
    (status, body)
}

/// The answer to a request sent [`TRIES`] times: every time the same.
fn answer(port: u16, from: &str, path: &str, extra: &str) -> (u16, String) {
    let first = get_from(port, from, path, extra);
    for _ in 1..TRIES {
        assert_eq!(
            get_from(port, from, path, extra),
            first,
            "{path} from {from} with {extra:?}"
        );
    }
    first
}

#[test]
fn kept_answers_follow_file_and_access_file_changes() {
    let site = TempDir::new("memo");
    let logs = TempDir::new("memo-logs");
    write_old(&site, "sub/a.txt", "AAAA\n");
    let s = Server::serve(site.path(), logs.path());
    let local = "127.0.0.1";
    assert_eq!(
        answer(s.port, local, "/sub/a.txt", ""),
        (200, "AAAA\n".into())
    );

    // The content rewritten in place, same size, dated back to the same
    // second: only the change itself tells.
    write_old(&site, "sub/a.txt", "BBBB\n");
    assert_eq!(
        answer(s.port, local, "/sub/a.txt", ""),
        (200, "BBBB\n".into())
    );

    // An access file appears, then goes.
    write_old(&site, "sub/.htaccess", "Require all denied\n");
    assert_eq!(answer(s.port, local, "/sub/a.txt", "").0, 403);
    std::fs::remove_file(site.path().join("sub/.htaccess")).unwrap();
    assert_eq!(answer(s.port, local, "/sub/a.txt", "").0, 200);

    // The file goes.
    std::fs::remove_file(site.path().join("sub/a.txt")).unwrap();
    assert_eq!(answer(s.port, local, "/sub/a.txt", "").0, 404);
}

#[test]
fn kept_answers_are_per_client_address_and_header_where_rules_read_them() {
    let site = TempDir::new("memo-deps");
    let logs = TempDir::new("memo-deps-logs");
    write_old(&site, "ip/a.txt", "ip\n");
    write_old(&site, "ip/.htaccess", "Require ip 127.0.0.2\n");
    write_old(&site, "hdr/a.txt", "hdr\n");
    write_old(
        &site,
        "hdr/.htaccess",
        "RewriteEngine On\nRewriteCond %{HTTP:X-Mode} =block\nRewriteRule ^ - [F]\n",
    );
    let s = Server::serve(site.path(), logs.path());
    for _ in 0..3 {
        assert_eq!(answer(s.port, "127.0.0.2", "/ip/a.txt", "").0, 200);
        assert_eq!(answer(s.port, "127.0.0.1", "/ip/a.txt", "").0, 403);
        assert_eq!(answer(s.port, "127.0.0.1", "/hdr/a.txt", "").0, 200);
        assert_eq!(
            answer(s.port, "127.0.0.1", "/hdr/a.txt", "X-Mode: block\r\n").0,
            403
        );
        assert_eq!(
            answer(s.port, "127.0.0.1", "/hdr/a.txt", "X-Mode: other\r\n").0,
            200
        );
        // A header no rule reads changes nothing.
        assert_eq!(
            answer(s.port, "127.0.0.1", "/hdr/a.txt", "X-Other: block\r\n").0,
            200
        );
    }
}
