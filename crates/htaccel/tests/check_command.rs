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
