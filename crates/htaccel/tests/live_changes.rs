//! Changes to `.htaccess` files and to directories on the path, made under a
//! running `htaccel serve`, are in force for the very next request — with
//! no sleep and no retry between the change and the request — and a file
//! caught mid-write is never compiled.
//!
//! The expectations here are written by hand: the differential harness
//! serves one fixed tree per case and cannot change files between two
//! requests. Apache itself re-reads every access file and reopens every
//! file on each request, so its answer after a change is, by construction,
//! the one the changed files give; that is what these tests demand.

mod common;

use common::{Server, TempDir};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn site() -> (TempDir, TempDir, Server) {
    let site = TempDir::new("live");
    let logs = TempDir::new("live-logs");
    site.write("index.html", "root\n");
    site.write("sub/a.txt", "A\n");
    site.write("d/one.html", "one\n");
    site.write("d/two.html", "two\n");
    let server = Server::serve(site.path(), logs.path());
    (site, logs, server)
}

#[test]
fn access_rules_follow_edits_creates_deletes_and_renames() {
    let (site, _logs, s) = site();
    let ht = site.path().join("sub/.htaccess");
    assert_eq!(s.get("/sub/a.txt").0, 200);

    // Created: a denial is in force at once.
    std::fs::write(&ht, "Require all denied\n").unwrap();
    assert_eq!(s.get("/sub/a.txt").0, 403, "new .htaccess ignored");

    // Edited in place.
    std::fs::write(&ht, "Require all granted\n").unwrap();
    assert_eq!(s.get("/sub/a.txt").0, 200, "edit ignored");
    std::fs::write(&ht, "Require all denied\n").unwrap();
    assert_eq!(s.get("/sub/a.txt").0, 403, "second edit ignored");

    // Deleted: its rules stop.
    std::fs::remove_file(&ht).unwrap();
    assert_eq!(
        s.get("/sub/a.txt").0,
        200,
        "deleted .htaccess still in force"
    );

    // Renamed into place (the atomic-replace pattern), then away.
    let staged = site.path().join("sub/staged");
    std::fs::write(&staged, "Require all denied\n").unwrap();
    assert_eq!(s.get("/sub/a.txt").0, 200);
    std::fs::rename(&staged, &ht).unwrap();
    assert_eq!(s.get("/sub/a.txt").0, 403, "renamed-in .htaccess ignored");
    std::fs::rename(&ht, &staged).unwrap();
    assert_eq!(
        s.get("/sub/a.txt").0,
        200,
        "renamed-away .htaccess in force"
    );

    // A rule in a parent directory applies below it at once.
    std::fs::write(site.path().join(".htaccess"), "Require all denied\n").unwrap();
    assert_eq!(s.get("/sub/a.txt").0, 403, "parent .htaccess ignored");
    std::fs::remove_file(site.path().join(".htaccess")).unwrap();
    assert_eq!(s.get("/sub/a.txt").0, 200);
}

#[test]
fn directory_index_and_error_document_text_follow_edits() {
    let (site, _logs, s) = site();
    site.write("d/.htaccess", "DirectoryIndex one.html\n");
    assert_eq!(s.get("/d/"), (200, "one\n".to_string()));
    site.write("d/.htaccess", "DirectoryIndex two.html\n");
    assert_eq!(s.get("/d/"), (200, "two\n".to_string()));

    site.write(".htaccess", "ErrorDocument 404 \"first text\n");
    let (status, body) = s.get("/missing");
    assert_eq!((status, body.as_str()), (404, "first text"));
    site.write(".htaccess", "ErrorDocument 404 \"second text\n");
    let (status, body) = s.get("/missing");
    assert_eq!((status, body.as_str()), (404, "second text"));
    // A broken file answers 500 for its subtree at once, and its repair too.
    site.write("d/.htaccess", "NoSuchDirective x\n");
    assert_eq!(s.get("/d/").0, 500);
    site.write("d/.htaccess", "DirectoryIndex one.html\n");
    assert_eq!(s.get("/d/"), (200, "one\n".to_string()));
    assert!(
        s.error_log().contains("NoSuchDirective"),
        "{}",
        s.error_log()
    );
}

#[test]
fn renaming_a_directory_on_the_path_takes_effect_at_once() {
    let (site, _logs, s) = site();
    site.write("p/q/file.txt", "open\n");
    site.write("p2/.htaccess", "Require all denied\n");
    site.write("p2/q/file.txt", "closed\n");
    assert_eq!(s.get("/p/q/file.txt"), (200, "open\n".to_string()));
    assert_eq!(s.get("/p2/q/file.txt").0, 403);

    let root = site.path();
    std::fs::rename(root.join("p"), root.join("p_old")).unwrap();
    std::fs::rename(root.join("p2"), root.join("p")).unwrap();
    assert_eq!(
        s.get("/p/q/file.txt").0,
        403,
        "renamed directory's .htaccess ignored"
    );
    assert_eq!(s.get("/p2/q/file.txt").0, 404);

    std::fs::rename(root.join("p"), root.join("p2")).unwrap();
    std::fs::rename(root.join("p_old"), root.join("p")).unwrap();
    assert_eq!(s.get("/p/q/file.txt"), (200, "open\n".to_string()));

    // A directory deleted and made again is a new directory.
    std::fs::remove_dir_all(root.join("p")).unwrap();
    assert_eq!(s.get("/p/q/file.txt").0, 404);
    site.write("p/.htaccess", "Require all denied\n");
    site.write("p/q/file.txt", "again\n");
    assert_eq!(s.get("/p/q/file.txt").0, 403);
}

#[test]
fn static_file_metadata_follows_changes() {
    let (site, _logs, s) = site();
    assert_eq!(s.get("/sub/a.txt"), (200, "A\n".to_string()));
    site.write("sub/a.txt", "longer body\n");
    assert_eq!(s.get("/sub/a.txt"), (200, "longer body\n".to_string()));
    std::fs::remove_file(site.path().join("sub/a.txt")).unwrap();
    assert_eq!(s.get("/sub/a.txt").0, 404);
    site.write("sub/a.txt", "back\n");
    assert_eq!(s.get("/sub/a.txt"), (200, "back\n".to_string()));
    std::fs::create_dir(site.path().join("sub/new")).unwrap();
    assert_eq!(s.get("/sub/new").0, 301, "a new directory is a directory");
}

#[test]
fn static_file_content_follows_every_kind_of_change() {
    use std::os::unix::fs::PermissionsExt;
    let (site, _logs, s) = site();
    let path = site.path().join("sub/a.txt");
    // Served often enough to be kept open (and in memory) by the server.
    for _ in 0..3 {
        assert_eq!(s.get("/sub/a.txt"), (200, "A\n".to_string()));
    }
    // Same size, written in place, with the old modification time put back.
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    std::fs::write(&path, "B\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert_eq!(s.get("/sub/a.txt"), (200, "B\n".to_string()));
    // Replaced by a rename, as deploy tools do.
    let tmp = site.path().join("sub/a.txt.new");
    std::fs::write(&tmp, "C\n").unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    assert_eq!(s.get("/sub/a.txt"), (200, "C\n".to_string()));
    // Truncated in place.
    std::fs::write(&path, "").unwrap();
    assert_eq!(s.get("/sub/a.txt"), (200, String::new()));
    std::fs::write(&path, "D\n").unwrap();
    assert_eq!(s.get("/sub/a.txt"), (200, "D\n".to_string()));
    // Made unreadable: refused at once, as Apache's open would be.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    assert_eq!(s.get("/sub/a.txt").0, 403);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(s.get("/sub/a.txt"), (200, "D\n".to_string()));
}

#[test]
fn changes_under_names_that_are_not_utf8_are_seen_at_once() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let (site, _logs, s) = site();
    // A directory named `d\xe9` holding `f\xff.txt`: the watcher reports
    // their names as bytes, which must reach the caches the requests use.
    let dir = site.path().join(OsStr::from_bytes(b"d\xe9"));
    std::fs::create_dir(&dir).unwrap();
    let file = dir.join(OsStr::from_bytes(b"f\xff.txt"));
    std::fs::write(&file, "one\n").unwrap();
    // Served often enough to be kept (open file, walk, whole answer).
    for _ in 0..3 {
        assert_eq!(s.get("/d%e9/f%ff.txt"), (200, "one\n".to_string()));
    }
    std::fs::write(&file, "two\n").unwrap();
    assert_eq!(s.get("/d%e9/f%ff.txt"), (200, "two\n".to_string()));
    std::fs::write(dir.join(".htaccess"), "Require all denied\n").unwrap();
    assert_eq!(s.get("/d%e9/f%ff.txt").0, 403, "new .htaccess ignored");
    std::fs::remove_file(dir.join(".htaccess")).unwrap();
    assert_eq!(s.get("/d%e9/f%ff.txt").0, 200);
    std::fs::remove_file(&file).unwrap();
    assert_eq!(s.get("/d%e9/f%ff.txt").0, 404, "removed file still served");
}

/// Write `text` in two halves with a pause between, as a slow editor or
/// upload would; `create` says whether the file is new.
fn slow_write(path: &std::path::Path, text: &str, pause: Duration) {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .unwrap();
    let half = text.len() / 2;
    f.write_all(&text.as_bytes()[..half]).unwrap();
    f.flush().unwrap();
    std::thread::sleep(pause);
    f.write_all(&text.as_bytes()[half..]).unwrap();
    drop(f);
}

/// Requests `path` until `stop`, returning every (status, body) seen.
fn hammer(
    port: u16,
    path: &'static str,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Vec<(u16, String)>> {
    std::thread::spawn(move || {
        let mut seen = Vec::new();
        let start = Instant::now();
        while !stop.load(Ordering::SeqCst)
            && start.elapsed() < Duration::from_secs(20)
            && seen.len() < 20_000
        {
            seen.push(common::get(port, path));
        }
        seen
    })
}

#[test]
fn a_file_being_written_is_never_half_compiled() {
    let (site, _logs, s) = site();
    // Padding puts the halves' boundary inside the directive that matters.
    let pad = format!("# {}\n", "x".repeat(40));
    let v1 = format!("{pad}ErrorDocument 404 \"version-one-complete\n");
    let v2 = format!("{pad}ErrorDocument 404 \"version-two-complete\n");
    site.write("w/.htaccess", &v1);
    assert_eq!(s.get("/w/missing").1, "version-one-complete");

    // Rewritten in place, slowly, under load.
    let stop = Arc::new(AtomicBool::new(false));
    let load = hammer(s.port, "/w/missing", stop.clone());
    std::thread::sleep(Duration::from_millis(100));
    slow_write(
        &site.path().join("w/.htaccess"),
        &v2,
        Duration::from_millis(600),
    );
    assert_eq!(
        s.get("/w/missing").1,
        "version-two-complete",
        "completed write not in force"
    );
    std::thread::sleep(Duration::from_millis(100));
    stop.store(true, Ordering::SeqCst);
    let seen = load.join().unwrap();
    assert!(
        seen.len() > 20,
        "too few requests during the write: {}",
        seen.len()
    );
    for (status, body) in &seen {
        assert!(
            *status == 404 && (body == "version-one-complete" || body == "version-two-complete"),
            "a request saw a half-written file: {status} {body:?}"
        );
    }

    // A new file written slowly: the directory has no rules until it is complete.
    site.write("w2/x.txt", "x\n");
    let (_, default_404) = s.get("/w2/missing");
    assert!(default_404.contains("Not Found"), "{default_404}");
    let stop = Arc::new(AtomicBool::new(false));
    let load = hammer(s.port, "/w2/missing", stop.clone());
    std::thread::sleep(Duration::from_millis(100));
    slow_write(
        &site.path().join("w2/.htaccess"),
        &v2,
        Duration::from_millis(600),
    );
    assert_eq!(s.get("/w2/missing").1, "version-two-complete");
    stop.store(true, Ordering::SeqCst);
    for (status, body) in load.join().unwrap() {
        assert!(
            status == 404 && (body == default_404 || body == "version-two-complete"),
            "a request saw a half-written new file: {status} {body:?}"
        );
    }
}

#[test]
fn oversized_access_file_is_refused_with_500() {
    let site = TempDir::new("limits");
    let logs = TempDir::new("limits-logs");
    site.write("ok/f.txt", "f\n");
    site.write("big/f.txt", "f\n");
    site.write("big/.htaccess", &format!("# {}\n", "y".repeat(300)));
    site.write("many/f.txt", "f\n");
    site.write("many/.htaccess", &"AddType text/plain .a\n".repeat(6));
    let conf = format!(
        "LoadModule authz_core_module modules/mod_authz_core.so\nLoadModule mime_module modules/mod_mime.so\nLoadModule dir_module modules/mod_dir.so\nListen 127.0.0.1:@PORT@\nServerName localhost\nErrorLog /dev/stderr\nTypesConfig /etc/mime.types\n\
         DocumentRoot \"{root}\"\nAccessFileMaxSize 200\nAccessFileMaxDirectives 5\n\
         <Directory \"{root}\">\n  AllowOverride All\n  Require all granted\n</Directory>\n",
        root = site.path().display()
    );
    let s = Server::with_config(&conf, logs.path());
    assert_eq!(s.get("/ok/f.txt").0, 200);
    assert_eq!(s.get("/big/f.txt").0, 500);
    assert_eq!(s.get("/many/f.txt").0, 500);
    let log = s.error_log();
    assert!(log.contains("AccessFileMaxSize"), "{log}");
    assert!(log.contains("AccessFileMaxDirectives"), "{log}");
}
