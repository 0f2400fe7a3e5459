//! mod_unique_id: Debian's apache2 and htaccel run the same configuration
//! and the same requests, and what each shows of its tokens is compared:
//! in the access log, in headers made from the variable, across an
//! `ErrorDocument`'s internal redirect and across repeated requests for
//! one file (which htaccel answers from its answer memo). Tokens are
//! random, so each is replaced by its order of first appearance before the
//! two are compared, and each is decoded and checked field by field
//! (time, one root per process, a counter advanced by each request).

mod common;

use common::TempDir;
use std::io::{BufRead, Read, Write};
use std::path::Path;

fn conf(r: &Path, port: u16) -> String {
    let head = common::server_head(r, port, "localhost", &["headers", "unique_id"]);
    let r = r.display();
    format!(
        "{head}ErrorLog {r}/error.log\n\
         StartServers 1\nServerLimit 1\nThreadsPerChild 25\nMaxRequestWorkers 25\n\
         CustomLog {r}/access.log \"%U %>s %{{UNIQUE_ID}}e %{{REDIRECT_UNIQUE_ID}}e %{{X-Id}}o\"\n\
         DocumentRoot {r}/site\n<Directory {r}/site>\n  Require all granted\n</Directory>\n\
         <Directory {r}/site/hdr>\n  Header set X-Id \"%{{UNIQUE_ID}}e\"\n</Directory>\n\
         ErrorDocument 404 /err/missing.html\n\
         <Directory {r}/site/err>\n  Header always set X-Id \"%{{UNIQUE_ID}}e\"\n  \
         Header always set X-Prev \"%{{REDIRECT_UNIQUE_ID}}e\"\n</Directory>\n"
    )
}

/// `times` requests for `path` on one connection (so that one worker
/// answers them all: the answer memo is per worker); each answer's status
/// line and `X-` headers.
fn ask(port: u16, path: &str, times: usize) -> Vec<String> {
    let s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .expect("timeout");
    let mut reader = std::io::BufReader::new(s.try_clone().expect("clone"));
    let mut writer = s;
    let mut shown = Vec::new();
    for _ in 0..times {
        let head = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n");
        writer.write_all(head.as_bytes()).expect("send");
        let mut lines = Vec::new();
        let mut length = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).expect("an answer");
            let line = line.trim_end().to_string();
            if line.is_empty() {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().expect("a length");
            }
            if lines.is_empty() || line.to_ascii_lowercase().starts_with("x-") {
                lines.push(line);
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).expect("the body");
        shown.push(lines.join(" | "));
    }
    shown
}

/// The answers and the access log of one server.
fn run(program: &str, extra: &[&str]) -> (Vec<String>, String) {
    let root = TempDir::new("unique-id");
    root.write("site/plain/a.txt", "plain\n");
    root.write("site/hdr/a.txt", "with a header\n");
    root.write("site/err/missing.html", "not here\n");
    // Files older than a second: a file changed within the last second has
    // a weak ETag, which reads the clock, and such an answer is not kept;
    // these must be, so that the log's tokens of kept answers are seen.
    let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for file in [
        "site/plain/a.txt",
        "site/hdr/a.txt",
        "site/err/missing.html",
    ] {
        std::fs::File::options()
            .write(true)
            .open(root.path().join(file))
            .and_then(|f| f.set_modified(an_hour_ago))
            .expect("an older file");
    }
    let port = common::free_port();
    root.write("server.conf", &conf(root.path(), port));
    let child = common::start_program(program, &root.path().join("server.conf"), extra, port);
    let mut answers = ask(port, "/plain/a.txt", 4);
    answers.extend(ask(port, "/hdr/a.txt", 3));
    answers.extend(ask(port, "/nowhere", 2));
    common::stop_program(child);
    let log = std::fs::read_to_string(root.path().join("access.log")).unwrap_or_default();
    (answers, log)
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_'
}

/// The tokens in `text`, in order: runs of exactly 27 base64url characters.
fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !is_token_char(c))
        .filter(|w| w.len() == 27)
        .map(str::to_string)
        .collect()
}

/// `text` with each token replaced by `T<n>`, `n` its order of first
/// appearance in `seen`.
fn symbolic(text: &str, seen: &mut Vec<String>) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String, seen: &mut Vec<String>| {
        if word.len() == 27 {
            let n = match seen.iter().position(|t| t == word) {
                Some(n) => n,
                None => {
                    seen.push(word.clone());
                    seen.len() - 1
                }
            };
            out.push_str(&format!("T{n}"));
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        if is_token_char(c) {
            word.push(c);
        } else {
            flush(&mut word, &mut out, seen);
            out.push(c);
        }
    }
    flush(&mut word, &mut out, seen);
    out
}

/// A token's 20 bytes.
fn decode(token: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let (mut out, mut acc, mut bits) = (Vec::new(), 0u32, 0);
    for c in token.bytes() {
        let v = ALPHABET.iter().position(|a| *a == c).expect("base64url") as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

/// Each distinct token of a run decodes to the module's fields: the time
/// of now, one root, and a counter one step on from the token before.
fn check_fields(program: &str, all: &[String]) {
    let mut distinct: Vec<&String> = Vec::new();
    for t in all {
        if !distinct.contains(&t) {
            distinct.push(t);
        }
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64;
    let fields: Vec<Vec<u8>> = distinct.iter().map(|t| decode(t)).collect();
    for (t, f) in distinct.iter().zip(&fields) {
        assert_eq!(f.len(), 20, "{program}: {t}");
        let stamp = u32::from_be_bytes([f[0], f[1], f[2], f[3]]) as i64;
        assert!(
            (now - stamp).abs() < 120,
            "{program}: {t} stamped {stamp}, now {now}"
        );
        assert_eq!(f[4..14], fields[0][4..14], "{program}: {t}'s root");
    }
    for pair in fields.windows(2) {
        let count = |f: &[u8]| u32::from(u16::from_be_bytes([f[14], f[15]]));
        assert_eq!(
            (count(&pair[0]) + 1) % 65_535,
            count(&pair[1]),
            "{program}: counters of consecutive requests"
        );
    }
}

#[test]
fn tokens_are_shown_as_apache_shows_them() {
    let runs = [
        ("apache", run("/usr/sbin/apache2", &["-DFOREGROUND"])),
        ("htaccel", run(env!("CARGO_BIN_EXE_htaccel"), &[])),
    ];
    let mut shown = Vec::new();
    for (name, (answers, log)) in &runs {
        // The log has the requests in order, each with its token.
        check_fields(name, &tokens(log));
        // Numbered in the log's order, which is the requests'.
        let mut seen = Vec::new();
        let log = symbolic(log, &mut seen);
        let answers: Vec<String> = answers.iter().map(|a| symbolic(a, &mut seen)).collect();
        shown.push((answers, log, seen.len()));
    }
    assert_eq!(shown[1], shown[0]);
    // The comparison saw tokens where they should be: nine requests, nine
    // tokens, headers and log agreeing within a request, an ErrorDocument
    // keeping its request's token.
    let (answers, log, distinct) = &shown[0];
    assert_eq!(*distinct, 9, "{answers:?}\n{log}");
    assert_eq!(log.lines().count(), 9, "{log}");
    assert!(answers[4].ends_with("X-Id: T4"), "{answers:?}");
    assert!(answers[8].contains("X-Id: T8 | X-Prev: T8"), "{answers:?}");
    assert!(
        log.lines()
            .nth(8)
            .is_some_and(|l| l.ends_with(" 404 T8 T8 T8")),
        "{log}"
    );
}
