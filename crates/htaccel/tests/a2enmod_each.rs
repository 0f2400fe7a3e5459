//! Every module Debian's `apache2` ships, enabled alone as `a2enmod` does
//! (its `.load` with those of the modules it depends on, then its stock
//! `.conf`), read by `apache2 -t` and `htaccel -t` from the same file:
//! where Apache starts, htaccel starts too, or refuses by name a directive
//! whose module it does not have (never "Invalid command" for a stock
//! file). Modules htaccel does not have are warned about at `LoadModule`;
//! their stock settings that do nothing until a directive turns the
//! module on are accepted (the stand-ins, ARCHITECTURE.md).

mod common;

use common::TempDir;
use std::path::Path;
use std::process::Command;

const MODS: &str = "/etc/apache2/mods-available";

/// Modules left out: the MPMs (one is loaded by the head) and mod_php
/// (a prefork MPM of its own; tests/mod_php_never_source.rs covers it).
fn left_out(name: &str) -> bool {
    name.starts_with("mpm_") || name.starts_with("php")
}

/// The configuration `a2enmod NAME` gives on top of a minimal server.
fn config(dir: &Path, name: &str) -> String {
    let load = |m: &str| std::fs::read_to_string(format!("{MODS}/{m}.load")).unwrap_or_default();
    let conf = |m: &str| {
        let p = format!("{MODS}/{m}.conf");
        if Path::new(&p).exists() {
            format!("Include {p}\n")
        } else {
            String::new()
        }
    };
    let mut text = format!(
        "ServerRoot /etc/apache2\nListen 127.0.0.1:1\nServerName localhost\n\
         PidFile {d}/pid\nErrorLog {d}/error.log\nDefaultRuntimeDir {d}\n\
         Define APACHE_LOCK_DIR {d}\nDefine APACHE_RUN_DIR {d}\nDefine APACHE_LOG_DIR {d}\n\
         LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so\n",
        d = dir.display()
    );
    let own = load(name);
    for line in own.lines() {
        if let Some(deps) = line.strip_prefix("# Depends:") {
            for dep in deps.split_whitespace() {
                text += &load(dep);
                text += &conf(dep);
            }
        }
    }
    text += &own;
    text += &conf(name);
    text
}

fn syntax(program: &str, conf: &Path) -> (bool, String) {
    let out = Command::new(program)
        .args(["-t", "-f"])
        .arg(conf)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    (out.status.success(), text)
}

#[test]
fn each_stock_module_starts_or_is_refused_by_name() {
    if !Path::new(MODS).is_dir() {
        eprintln!("no {MODS}: Debian's apache2 is not installed; skipped");
        return;
    }
    let dir = TempDir::new("a2enmod-each");
    let mut names: Vec<String> = std::fs::read_dir(MODS)
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            Some(name.strip_suffix(".load")?.to_string())
        })
        .filter(|n| !left_out(n))
        .collect();
    names.sort();
    assert!(names.len() > 80, "Debian ships more modules: {names:?}");
    let mut compared = 0;
    for name in &names {
        let path = dir.path().join(format!("{name}.conf"));
        std::fs::write(&path, config(dir.path(), name)).unwrap();
        let (apache_ok, apache) = syntax("/usr/sbin/apache2", &path);
        if !apache_ok {
            // A module that needs what this minimal server lacks.
            eprintln!("{name}: Apache refuses it here too: {apache}");
            continue;
        }
        compared += 1;
        let (ours_ok, ours) = syntax(env!("CARGO_BIN_EXE_htaccel"), &path);
        assert!(
            !ours.contains("Invalid command"),
            "{name}: a stock file's directive is unknown to htaccel:\n{ours}"
        );
        if !ours_ok {
            assert!(
                ours.contains("is not supported by htaccel"),
                "{name}: Apache starts, htaccel neither starts nor says what it refuses:\n{ours}"
            );
        }
    }
    assert!(compared > 80, "only {compared} modules compared");
}

/// Every stock `conf-available` and `sites-available` file (`a2enconf`,
/// `a2ensite`), read with the modules a stock server and its TLS site
/// enable, each `.load` with its `.conf` in turn (so that a module's
/// settings may come before a module they need, as `mods-enabled/*.conf`
/// can): htaccel says `Syntax OK` where Apache does.
#[test]
fn each_stock_conf_and_site_starts() {
    let dirs = [
        "/etc/apache2/conf-available",
        "/etc/apache2/sites-available",
    ];
    if !dirs.iter().all(|d| Path::new(d).is_dir()) {
        eprintln!("Debian's apache2 is not installed; skipped");
        return;
    }
    let dir = TempDir::new("a2enconf-each");
    // The stock modules, and those a TLS site with PHP-FPM and HTTP/2 adds.
    let extra = [
        "ssl",
        "headers",
        "rewrite",
        "proxy",
        "proxy_fcgi",
        "socache_shmcb",
        "http2",
    ];
    let modules = common::STOCK_MODULES.iter().chain(&extra);
    let mut head = format!(
        "ServerRoot /etc/apache2\nListen 127.0.0.1:1\nServerName localhost\n\
         PidFile {d}/pid\nErrorLog {d}/error.log\nDefaultRuntimeDir {d}\n\
         Define APACHE_LOG_DIR {d}\n",
        d = dir.path().display()
    );
    for m in modules {
        head += &std::fs::read_to_string(format!("{MODS}/{m}.load")).unwrap();
        if Path::new(&format!("{MODS}/{m}.conf")).exists() {
            head += &format!("Include {MODS}/{m}.conf\n");
        }
    }
    let mut compared = 0;
    for d in dirs {
        for entry in std::fs::read_dir(d).unwrap() {
            let file = entry.unwrap().path();
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            let path = dir.path().join(&name);
            std::fs::write(&path, format!("{head}Include {}\n", file.display())).unwrap();
            let (apache_ok, apache) = syntax("/usr/sbin/apache2", &path);
            let (ours_ok, ours) = syntax(env!("CARGO_BIN_EXE_htaccel"), &path);
            assert_eq!(
                ours_ok, apache_ok,
                "{name}:\nApache: {apache}\nhtaccel: {ours}"
            );
            compared += 1;
        }
    }
    assert!(compared >= 5, "only {compared} files");
}
