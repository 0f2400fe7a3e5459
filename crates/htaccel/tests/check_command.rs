//! `htaccel check DOCROOT`: every access file compiled as a request would,
//! errors with file and line, unsupported directives, a cost summary, and
//! a failing exit status when any file is broken.

mod common;

use common::TempDir;
use std::process::Command;

fn check(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_htaccel"))
        .arg("check")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn clean_tree_passes_with_a_summary() {
    let site = TempDir::new("check-ok");
    site.write(".htaccess", "DirectoryIndex index.html\n");
    site.write("a/b/.htaccess", "AddType text/plain .x\n");
    site.write("a/b/c/index.html", "x\n");
    let root = site.path().to_string_lossy().into_owned();
    let (code, out) = check(&[&root]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(&format!("{root}/.htaccess: ok")), "{out}");
    assert!(out.contains(&format!("{root}/a/b/.htaccess: ok")), "{out}");
    assert!(
        out.contains("2 access files checked: 0 with errors"),
        "{out}"
    );
    assert!(
        out.contains(&format!("deepest path {root}/a/b/c/")),
        "{out}"
    );
    assert!(out.contains("htaccel: 0"), "{out}");
}

/// A directive htaccel registers but does not implement yet, allowed in
/// `.htaccess` and loaded by the serve configuration, if any is left.
fn an_unsupported_directive() -> Option<&'static str> {
    use htaccel_engine::modules::{unsupported, ALL};
    use htaccel_engine::registry::OR_ALL;
    let serve = include_str!("../src/serve.conf");
    ALL.iter()
        .filter(|m| m.builtin || serve.contains(m.identifier))
        .flat_map(|m| m.directives.iter())
        .find(|d| {
            unsupported::is_unsupported(d)
                && d.req_override & OR_ALL != 0
                && !d.name.starts_with('<')
        })
        .map(|d| d.name)
}

#[test]
fn errors_and_unsupported_directives_are_listed() {
    let site = TempDir::new("check-bad");
    site.write(
        "bad/.htaccess",
        "# comment\nDirectoryIndex x.html\nNoSuchThing on\n",
    );
    site.write("fine/.htaccess", "DirectoryIndex x.html\n");
    let unsupported = an_unsupported_directive();
    if let Some(name) = unsupported {
        site.write(
            "later/.htaccess",
            &format!("DirectoryIndex x.html\n{name} x\n"),
        );
    }
    let root = site.path().to_string_lossy().into_owned();
    let (code, out) = check(&[&root]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "{root}/bad/.htaccess:3: Invalid command 'NoSuchThing'"
        )),
        "{out}"
    );
    assert!(out.contains(&format!("{root}/fine/.htaccess: ok")), "{out}");
    match unsupported {
        Some(name) => {
            assert!(
                out.contains(&format!(
                    "{root}/later/.htaccess:2: unsupported by htaccel: {name}"
                )),
                "{out}"
            );
            assert!(
                out.contains("3 access files checked: 2 with errors, 1 unsupported directive\n"),
                "{out}"
            );
        }
        None => assert!(
            out.contains("2 access files checked: 1 with errors, 0 unsupported directives"),
            "{out}"
        ),
    }
}

#[test]
fn config_file_override_settings_apply() {
    let site = TempDir::new("check-conf");
    site.write(".htaccess", "Options +Indexes\n");
    let conf_dir = TempDir::new("check-conf-file");
    let conf = conf_dir.path().join("h.conf");
    std::fs::write(
        &conf,
        format!(
            "LoadModule authz_core_module modules/mod_authz_core.so\nLoadModule mime_module modules/mod_mime.so\nLoadModule dir_module modules/mod_dir.so\nListen 127.0.0.1:1\nTypesConfig /etc/mime.types\nDocumentRoot \"{root}\"\n<Directory \"{root}\">\n  AllowOverride FileInfo\n</Directory>\n",
            root = site.path().display()
        ),
    )
    .unwrap();
    let root = site.path().to_string_lossy().into_owned();
    let (code, out) = check(&[&root, "-f", &conf.to_string_lossy()]);
    assert_eq!(
        code, 1,
        "Options is not allowed under AllowOverride FileInfo: {out}"
    );
    assert!(out.contains("Options not allowed here"), "{out}");
    let (code, out) = check(&[&root]);
    assert_eq!(code, 0, "{out}");
}

fn check_json(args: &[&str], envs: &[(&str, &str)]) -> (i32, serde_json::Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_htaccel"))
        .arg("check")
        .args(args)
        .arg("--json")
        .envs(envs.iter().copied())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let doc = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), doc)
}

#[test]
fn whole_server_report_has_every_site_with_its_verdict() {
    let root = TempDir::new("check-server");
    let r = root.path().display().to_string();
    root.write("good/.htaccess", "DirectoryIndex index.html\n");
    root.write("good/a/b/.htaccess", "AddType text/plain .x\n");
    root.write("good/a/b/c/index.html", "x\n");
    root.write("bad/sub/.htaccess", "RewriteEngine On\nNoSuchThing on\n");
    root.write("locked/.htaccess", "NoSuchThing on\n");
    root.write(
        "conf/server.conf",
        &format!(
            "LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so\n\
             LoadModule rewrite_module /usr/lib/apache2/modules/mod_rewrite.so\n\
             LoadModule mime_module /usr/lib/apache2/modules/mod_mime.so\n\
             LoadModule dir_module /usr/lib/apache2/modules/mod_dir.so\n\
             StartServers 4\nTypesConfig /etc/mime.types\nListen 127.0.0.1:1\nServerName main.test\nDocumentRoot {r}/locked\n\
             <Directory {r}/locked>\n  AllowOverride None\n</Directory>\n\
             <Directory {r}/good>\n  AllowOverride All\n</Directory>\n\
             <Directory {r}/bad>\n  AllowOverride All\n</Directory>\n\
             <VirtualHost *:1>\n  ServerName good.test\n  DocumentRoot {r}/good\n</VirtualHost>\n\
             <VirtualHost *:1>\n  ServerName bad.test\n  DocumentRoot {r}/bad\n</VirtualHost>\n"
        ),
    );
    let (code, doc) = check_json(&["-d", &format!("{r}/conf"), "-f", "server.conf"], &[]);
    assert_eq!(code, 1, "{doc:#}");
    assert_eq!(doc["loads"], true);
    assert_eq!(doc["verdict"], "needs attention");
    let notes = doc["deviations"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n["directive"] == "StartServers" && n["line"] == 5),
        "{doc:#}"
    );
    let sites = doc["sites"].as_array().unwrap();
    let site = |name: &str| {
        sites
            .iter()
            .find(|s| s["server_name"] == name)
            .unwrap_or_else(|| panic!("no site {name}: {doc:#}"))
    };
    let main = site("main.test");
    assert_eq!(main["access_files"][0]["status"], "not read", "{main:#}");
    assert_eq!(main["verdict"], "ready");
    let good = site("good.test");
    assert_eq!(good["verdict"], "ready", "{good:#}");
    assert_eq!(good["access_files"].as_array().unwrap().len(), 2);
    let cost = &good["apache_per_request"];
    assert_eq!(cost["deepest_path"], format!("{r}/good/a/b/c/"));
    assert_eq!(cost["access_files_read"], 2);
    assert!(cost["system_calls"].as_u64().unwrap() >= 2 + 6, "{cost:#}");
    assert_eq!(good["htaccel_per_request"]["system_calls"], 0);
    let bad = site("bad.test");
    assert_eq!(bad["verdict"], "needs attention");
    assert_eq!(bad["errors"], 1);
    let file = &bad["access_files"][0];
    assert_eq!(file["path"], format!("{r}/bad/sub/.htaccess"));
    assert_eq!(file["status"], "error");
    assert!(
        file["errors"][0]
            .as_str()
            .unwrap()
            .contains(":2: Invalid command 'NoSuchThing'"),
        "{file:#}"
    );
}

#[test]
fn a_configuration_that_does_not_load_is_the_finding() {
    let root = TempDir::new("check-noload");
    root.write("server.conf", "Listen 127.0.0.1:1\nNoSuchDirective x\n");
    let conf = root.path().join("server.conf").display().to_string();
    let (code, doc) = check_json(&["-f", &conf], &[]);
    assert_eq!(code, 1);
    assert_eq!(doc["loads"], false);
    assert_eq!(doc["verdict"], "needs attention");
    assert!(
        doc["error"].as_str().unwrap().contains("NoSuchDirective"),
        "{doc:#}"
    );
}

/// Every corpus tree of the differential suite, reported as a document
/// root: each access file found, a verdict that follows from the findings.
#[test]
fn corpus_trees_are_reported() {
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/cases/corpus");
    let mut trees = 0;
    for case in std::fs::read_dir(&corpus).unwrap().flatten() {
        let site = case.path().join("site");
        if !site.is_dir() {
            continue;
        }
        trees += 1;
        let (code, doc) = check_json(&[&site.display().to_string()], &[]);
        let files = doc["access_files"].as_array().unwrap();
        assert_eq!(files.len(), count_access_files(&site), "{}", site.display());
        let failing = doc["errors"].as_u64().unwrap() + doc["unsupported"].as_u64().unwrap();
        let expected = match (failing, doc["deviations"].as_u64().unwrap()) {
            (0, 0) => "ready",
            (0, _) => "ready with notes",
            _ => "needs attention",
        };
        assert_eq!(doc["verdict"], expected, "{}", site.display());
        assert_eq!(
            code,
            i32::from(doc["errors"] != 0),
            "{}: {doc:#}",
            site.display()
        );
    }
    assert!(trees >= 30, "corpus trees found: {trees}");
}

fn count_access_files(dir: &std::path::Path) -> usize {
    let mut n = usize::from(dir.join(".htaccess").symlink_metadata().is_ok());
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.file_type().unwrap().is_dir() {
            n += count_access_files(&e.path());
        }
    }
    n
}

/// Debian's own configuration, as installed by the test set-up (its
/// `envvars` names the run directories).
#[test]
fn the_stock_debian_configuration_is_reported() {
    if !std::path::Path::new("/etc/apache2/apache2.conf").is_file() {
        eprintln!("no /etc/apache2: skipped (scripts/test.sh installs apache2)");
        return;
    }
    let envs = [
        ("APACHE_RUN_USER", "www-data"),
        ("APACHE_RUN_GROUP", "www-data"),
        ("APACHE_PID_FILE", "/var/run/apache2/apache2.pid"),
        ("APACHE_RUN_DIR", "/var/run/apache2"),
        ("APACHE_LOCK_DIR", "/var/lock/apache2"),
        ("APACHE_LOG_DIR", "/var/log/apache2"),
    ];
    let (_, doc) = check_json(&["-d", "/etc/apache2"], &envs);
    assert_eq!(doc["config"], "/etc/apache2/apache2.conf");
    if doc["loads"] == true {
        let sites = doc["sites"].as_array().unwrap();
        assert!(
            sites
                .iter()
                .any(|s| s["document_root"] == "/var/www/html" && s["verdict"].is_string()),
            "{doc:#}"
        );
    } else {
        assert_eq!(doc["verdict"], "needs attention");
        assert!(!doc["error"].as_str().unwrap().is_empty(), "{doc:#}");
    }
}
