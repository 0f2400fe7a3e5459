//! No configuration that loads mod_php ever sends a PHP file's source.
//!
//! Apache cannot answer these expectations: where mod_php is loaded but
//! no PHP handler applies (the `.load` line without Debian's `.conf`,
//! `php_flag engine off`, a `.phps` highlighter re-enabled), Apache sends
//! the file's bytes, and htaccel deliberately does not
//! (docs/deviations.md). The shapes where Apache runs the script are
//! compared with Apache in tests/cases/php/mod-php-debian. Here the pool
//! named by `PHPFPMSocket` does not exist, so every script that would run
//! answers 503: what matters is that no answer holds the source.
//!
//! Also: the start-up refusal when mod_php is loaded and no pool is
//! configured or found, and `serve`'s warning for a PHP tree.

mod common;

use common::{Server, TempDir};
use std::process::Command;

const MARKER: &str = "SOURCE-MARKER-7f3a";

fn php(body: &str) -> String {
    format!("<?php /* {MARKER} */ {body}\n")
}

fn site() -> TempDir {
    let site = TempDir::new("modphp-site");
    for name in [
        "x.php",
        "x.PHP",
        "x.phtml",
        "x.phar",
        "x.php7",
        "x.phps",
        ".php",
        "up/a.php",
        "e/a.php",
        "h/a.inc",
        "t/a.tpl",
        "d.php/index.php",
    ] {
        if let Some((dir, _)) = name.rsplit_once('/') {
            std::fs::create_dir_all(site.path().join(dir)).unwrap();
        }
        site.write(name, &php("echo 1;"));
    }
    site.write("up/.htaccess", "php_flag engine off\n");
    site.write("h/.htaccess", "AddHandler application/x-httpd-php .inc\n");
    site.write("t/.htaccess", "AddType application/x-httpd-php .tpl\n");
    site
}

const URLS: &[&str] = &[
    "/x.php",
    "/x.PHP",
    "/x.phtml",
    "/x.phar",
    "/x.php7",
    "/x.phps",
    "/.php",
    "/up/a.php",
    "/e/a.php",
    "/h/a.inc",
    "/t/a.tpl",
    "/d.php/",
    "/d.php/index.php",
    "/x.php/extra",
];

fn config(site: &TempDir, run: &TempDir, load: &str, extra: &str) -> String {
    format!(
        "ServerRoot /usr/lib/apache2\n\
         Listen 127.0.0.1:@PORT@\n\
         ErrorLog {run}/error.log\n\
         LoadModule mime_module modules/mod_mime.so\n\
         LoadModule dir_module modules/mod_dir.so\n\
         LoadModule authz_core_module modules/mod_authz_core.so\n\
         {load}\n\
         PHPFPMSocket unix:{run}/no-such-fpm.sock\n\
         TypesConfig /etc/mime.types\n\
         DocumentRoot {root}\n\
         DirectoryIndex index.php index.html\n\
         <Directory {root}>\n  AllowOverride All\n  Require all granted\n</Directory>\n\
         <Directory {root}/e>\n  php_admin_flag engine off\n</Directory>\n\
         {extra}\n",
        run = run.path().display(),
        root = site.path().display(),
    )
}

fn assert_no_source(load: &str, extra: &str) {
    let site = site();
    let run = TempDir::new("modphp-run");
    let server = Server::with_config(&config(&site, &run, load, extra), run.path());
    for url in URLS {
        let (status, body) = server.get(url);
        assert!(
            !body.contains(MARKER),
            "{load} / {extra:?}: GET {url} sent the source ({status}):\n{body}"
        );
    }
}

#[test]
fn no_configuration_loading_mod_php_sends_php_source() {
    let debian_conf = "/etc/apache2/mods-available/php8.2.conf";
    let mut extras = vec![
        // The .load line alone: no handler maps any file to PHP.
        String::new(),
        // RHEL's php.conf shape.
        "<FilesMatch \\.(php|phar)$>\n  SetHandler application/x-httpd-php\n</FilesMatch>\n\
         AddType text/html .php"
            .to_string(),
        // The source highlighter, re-enabled for .phps.
        "<FilesMatch \\.phps$>\n  SetHandler application/x-httpd-php-source\n</FilesMatch>"
            .to_string(),
        // The old AddType form for every PHP-like name.
        "AddType application/x-httpd-php .php .phtml .php7 .phar".to_string(),
    ];
    if std::path::Path::new(debian_conf).exists() {
        // Debian's php8.2.conf verbatim.
        extras.push(format!("Include {debian_conf}"));
    }
    for load in [
        "LoadModule php_module /usr/lib/apache2/modules/libphp8.2.so",
        "LoadModule php7_module modules/libphp7.so",
        "LoadModule php5_module modules/libphp5.so",
        "LoadModule php8_module modules/libphp8.so",
        "LoadModule php82_module /usr/lib/apache2/modules/libphp8.2.so",
    ] {
        for extra in &extras {
            assert_no_source(load, extra);
        }
    }
}

#[test]
fn scripts_go_to_the_pool_not_the_client() {
    // The pool is down: a script that would run answers 503, as a PHP-FPM
    // that refuses connections does; no handler or engine off: 403.
    let site = site();
    let run = TempDir::new("modphp-run503");
    let conf = config(
        &site,
        &run,
        "LoadModule php_module modules/libphp.so",
        "<FilesMatch \".+\\.ph(?:ar|p|tml)$\">\n  SetHandler application/x-httpd-php\n</FilesMatch>",
    );
    let server = Server::with_config(&conf, run.path());
    assert_eq!(server.get("/x.php").0, 503);
    assert_eq!(server.get("/x.phtml").0, 503);
    assert_eq!(server.get("/h/a.inc").0, 503);
    assert_eq!(server.get("/missing.php").0, 404);
    assert_eq!(server.get("/up/a.php").0, 403);
    assert_eq!(server.get("/e/a.php").0, 403);
    assert_eq!(server.get("/x.php7").0, 403);
    // What does not exist is still a 404 where no PHP handler applies.
    assert_eq!(server.get("/missing.php7").0, 404);
}

#[test]
fn mod_php_without_a_pool_refuses_to_start_and_says_what_to_add() {
    let has_default_pool = std::fs::read_dir("/run/php")
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().ends_with("-fpm.sock"))
        || std::path::Path::new("/run/php-fpm/www.sock").exists();
    if has_default_pool {
        eprintln!("a default PHP-FPM pool runs on this machine: htaccel would use it; skipped");
        return;
    }
    let run = TempDir::new("modphp-refuse");
    let file = run.path().join("httpd.conf");
    std::fs::write(
        &file,
        "Listen 127.0.0.1:0\nLoadModule php_module /usr/lib/apache2/modules/libphp8.2.so\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_htaccel"))
        .arg("-f")
        .arg(&file)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "{}:2: this configuration loads mod_php",
            file.display()
        )),
        "{err}"
    );
    assert!(
        err.contains("\n    PHPFPMSocket unix:/run/php/php8.2-fpm.sock\n"),
        "{err}"
    );
    // serve --php without an address: the same refusal, in serve's terms.
    let site = TempDir::new("modphp-serve");
    let out = Command::new(env!("CARGO_BIN_EXE_htaccel"))
        .args([
            "serve",
            &site.path().to_string_lossy(),
            "--php",
            "--listen",
            "127.0.0.1:0",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--php=unix:/run/php/php8.2-fpm.sock"), "{err}");
}

#[test]
fn serve_warns_about_php_files_without_a_backend() {
    let site = TempDir::new("modphp-warn");
    std::fs::create_dir_all(site.path().join("wp")).unwrap();
    site.write("wp/wp-config.php", &php("define('DB_PASSWORD', 'x');"));
    let logs = TempDir::new("modphp-warn-logs");
    let server = Server::serve(site.path(), logs.path());
    let log = server.error_log();
    assert!(
        log.contains("holds PHP files") && log.contains("wp-config.php"),
        "no warning at start:\n{log}"
    );
    assert!(log.contains("--php=unix:"), "{log}");
}
