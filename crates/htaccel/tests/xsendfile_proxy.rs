//! A file an upstream application names in `X-Sendfile` (behind
//! `ProxyPass`, as mod_xsendfile sends it) is answered like the same file
//! served directly: same body, `Content-Length`, `Last-Modified`, byte
//! ranges and conditional answers. One header differs, as in Apache (case
//! flask/xsendfile shows Apache doing the same): the sent file's `ETag` is
//! `"0"`, the one Apache's core makes for a request without a file, and
//! `Accept-Ranges` is absent. The upstream connection is kept for the
//! next request after such an answer (its empty body read), as Apache does.

mod common;

use common::{Server, TempDir};
use std::io::{BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// An application that answers every request with `X-Sendfile: DIR/NAME`
/// (NAME: the last path segment) and no body, keeping connections open.
/// Returns its port and the count of connections it accepted.
fn sendfile_upstream(dir: String) -> (u16, Arc<AtomicUsize>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let conns = Arc::new(AtomicUsize::new(0));
    let count = conns.clone();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            count.fetch_add(1, Ordering::SeqCst);
            // (The answer is written in pieces: no Nagle delay between them.)
            let _ = s.set_nodelay(true);
            let dir = dir.clone();
            std::thread::spawn(move || {
                let mut r = BufReader::new(s.try_clone().unwrap());
                let mut w = s;
                while let Some(target) = common::read_request_target(&mut r) {
                    let name = target.rsplit('/').next().unwrap_or("");
                    let _ = write!(
                        w,
                        "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\
                         X-Sendfile: {dir}/{name}\r\nContent-Length: 0\r\n\r\n"
                    );
                }
            });
        }
    });
    (port, conns)
}

/// One request with extra header lines: (status, headers, body).
fn request(port: u16, path: &str, extra: &str) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\n{extra}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let body = raw[split + 4..].to_vec();
    let mut lines = head.split("\r\n");
    let status = common::status_code(lines.next().unwrap());
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    (status, headers, body)
}

fn get<'a>(h: &'a [(String, String)], name: &str) -> Option<&'a str> {
    h.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

#[test]
fn sent_file_is_answered_like_the_static_file() {
    let files = TempDir::new("xsendfile-files");
    let body: String = (0..300)
        .map(|i| format!("row {i:04} of the file\n"))
        .collect();
    files.write("doc.bin", &body);
    // An older time: a file changed within the last second has only a weak
    // validator, and If-Range with a date would not match it.
    std::fs::File::options()
        .write(true)
        .open(files.path().join("doc.bin"))
        .unwrap()
        .set_modified(std::time::UNIX_EPOCH + Duration::from_secs(1_577_836_800))
        .unwrap();
    let dir = files.path().to_string_lossy().into_owned();
    let (up, conns) = sendfile_upstream(dir.clone());
    let logs = TempDir::new("xsendfile-logs");
    let conf = format!(
        "LoadModule authz_core_module modules/mod_authz_core.so\n\
         LoadModule mime_module modules/mod_mime.so\n\
         LoadModule alias_module modules/mod_alias.so\n\
         LoadModule proxy_module modules/mod_proxy.so\n\
         LoadModule proxy_http_module modules/mod_proxy_http.so\n\
         LoadModule xsendfile_module /usr/lib/apache2/modules/mod_xsendfile.so\n\
         Listen 127.0.0.1:@PORT@\nServerName localhost\nErrorLog /dev/stderr\n\
         TypesConfig /etc/mime.types\nDocumentRoot /nonexistent\n\
         Alias /direct/ \"{dir}/\"\n\
         <Directory \"{dir}\">\n    Require all granted\n</Directory>\n\
         ProxyPass /app/ http://127.0.0.1:{up}/\n\
         <Location /app/>\n    XSendFile On\n</Location>\n\
         XSendFilePath \"{dir}\"\n"
    );
    let s = Server::with_config(&conf, logs.path());

    // The file's own time, as the server announces it.
    let (_, h, _) = request(s.port, "/direct/doc.bin", "");
    let mtime = get(&h, "last-modified").unwrap().to_string();
    let cases: [(&str, String); 7] = [
        ("whole", String::new()),
        ("range", "Range: bytes=10-29\r\n".into()),
        ("suffix", "Range: bytes=-7\r\n".into()),
        ("unsatisfiable", "Range: bytes=99999-\r\n".into()),
        ("not modified", format!("If-Modified-Since: {mtime}\r\n")),
        (
            "if-range",
            format!("Range: bytes=0-9\r\nIf-Range: {mtime}\r\n"),
        ),
        (
            "precondition",
            "If-Unmodified-Since: Thu, 01 Jan 1970 00:00:01 GMT\r\n".into(),
        ),
    ];
    let mut seen = Vec::new();
    for (what, extra) in &cases {
        let (ds, dh, db) = request(s.port, "/direct/doc.bin", extra);
        seen.push(ds);
        let (xs, xh, xb) = request(s.port, "/app/doc.bin", extra);
        assert_eq!(ds, xs, "{what}: status");
        assert_eq!(db, xb, "{what}: body");
        for name in ["content-length", "last-modified", "content-range"] {
            assert_eq!(get(&dh, name), get(&xh, name), "{what}: {name}");
        }
        if ds != 416 {
            assert!(get(&dh, "etag").is_some_and(|e| e != "\"0\""), "{what}");
            assert_eq!(get(&xh, "etag"), Some("\"0\""), "{what}: sent file's ETag");
        }
    }
    assert_eq!(seen, [200, 206, 206, 416, 304, 206, 412]);
    let (status, h, b) = request(s.port, "/app/doc.bin", "");
    assert_eq!((status, b), (200, body.into_bytes()));
    assert_eq!(get(&h, "x-sendfile"), None);
    // Behind a proxy the sent file's ETag is "0" (Apache): it validates.
    // and its 304 keeps the application's Content-Type (a proxied answer's
    // headers stay on a 304 in Apache; the server's own type would go).
    let (status, h, _) = request(s.port, "/app/doc.bin", "If-None-Match: \"0\"\r\n");
    assert_eq!(status, 304);
    assert_eq!(get(&h, "content-type"), Some("application/octet-stream"));

    // Upstream connections are reused after X-Sendfile answers: at most one
    // per worker thread (one per CPU) for all these requests.
    let before = conns.load(Ordering::SeqCst);
    for _ in 0..30 {
        assert_eq!(request(s.port, "/app/doc.bin", "").0, 200);
    }
    let opened = conns.load(Ordering::SeqCst) - before;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert!(
        opened <= threads,
        "{opened} upstream connections for 30 requests"
    );
}
