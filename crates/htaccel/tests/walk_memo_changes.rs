//! Walks remembered between requests (the per-thread walk memo) give way
//! to changes at once: a path served several times over one keep-alive
//! connection (so the same worker thread, whose memo holds the walk) is
//! changed deep down, and the very next request on that connection sees
//! the change.
//!
//! Expectations are written by hand for the same reason as in
//! `live_changes.rs`: Apache walks the disk on every request, so its answer
//! after a change is the one the changed tree gives.

mod common;

use common::{Server, TempDir};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// One keep-alive connection: requests go one after another on it.
struct Conn {
    reader: BufReader<TcpStream>,
}

impl Conn {
    fn open(s: &Server) -> Conn {
        let stream = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        Conn {
            reader: BufReader::new(stream),
        }
    }

    /// GET `path` on this connection: (status, body).
    fn get(&mut self, path: &str) -> (u16, String) {
        let req = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n");
        self.reader.get_mut().write_all(req.as_bytes()).unwrap();
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        let status: u16 = line.split(' ').nth(1).unwrap().parse().unwrap();
        let mut len = 0usize;
        loop {
            line.clear();
            self.reader.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    len = v.trim().parse().unwrap();
                }
            }
        }
        let mut body = vec![0; len];
        self.reader.read_exact(&mut body).unwrap();
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    /// Several requests, so the walk is certainly remembered; all must agree.
    fn warm(&mut self, path: &str) -> (u16, String) {
        let first = self.get(path);
        for _ in 0..4 {
            assert_eq!(
                self.get(path),
                first,
                "answers differ while nothing changed"
            );
        }
        first
    }
}

#[test]
fn remembered_walks_see_changes_deep_in_the_path() {
    let site = TempDir::new("memo");
    let logs = TempDir::new("memo-logs");
    site.write("a/b/c/d/f.txt", "deep\n");
    site.write("other/c/d/f.txt", "other\n");
    let s = Server::serve(site.path(), logs.path());
    let mut c = Conn::open(&s);
    let root = site.path();

    assert_eq!(c.warm("/a/b/c/d/f.txt"), (200, "deep\n".to_string()));

    // An access file added deep in the remembered path.
    site.write("a/b/c/.htaccess", "Require all denied\n");
    assert_eq!(c.get("/a/b/c/d/f.txt").0, 403, "new deep .htaccess ignored");
    assert_eq!(c.warm("/a/b/c/d/f.txt").0, 403);
    std::fs::remove_file(root.join("a/b/c/.htaccess")).unwrap();
    assert_eq!(c.get("/a/b/c/d/f.txt"), (200, "deep\n".to_string()));
    assert_eq!(c.warm("/a/b/c/d/f.txt").0, 200);

    // The file removed, then put back.
    std::fs::remove_file(root.join("a/b/c/d/f.txt")).unwrap();
    assert_eq!(c.get("/a/b/c/d/f.txt").0, 404, "removed file still served");
    assert_eq!(c.warm("/a/b/c/d/f.txt").0, 404);
    site.write("a/b/c/d/f.txt", "back\n");
    assert_eq!(c.get("/a/b/c/d/f.txt"), (200, "back\n".to_string()));
    assert_eq!(c.warm("/a/b/c/d/f.txt").0, 200);

    // A directory on the path replaced by a symlink to another tree.
    std::fs::rename(root.join("a/b"), root.join("b_old")).unwrap();
    std::os::unix::fs::symlink(root.join("other"), root.join("a/b")).unwrap();
    assert_eq!(
        c.get("/a/b/c/d/f.txt"),
        (200, "other\n".to_string()),
        "directory replaced by a symlink not followed"
    );
    assert_eq!(c.warm("/a/b/c/d/f.txt"), (200, "other\n".to_string()));
    // And back: the symlink replaced by the directory again.
    std::fs::remove_file(root.join("a/b")).unwrap();
    std::fs::rename(root.join("b_old"), root.join("a/b")).unwrap();
    assert_eq!(c.get("/a/b/c/d/f.txt"), (200, "back\n".to_string()));

    // A directory listing path whose index appears.
    site.write("a/b/x/y.txt", "y\n");
    assert_ne!(c.warm("/a/b/x/").1, "index\n");
    site.write("a/b/x/index.html", "index\n");
    assert_eq!(c.get("/a/b/x/"), (200, "index\n".to_string()));
}
