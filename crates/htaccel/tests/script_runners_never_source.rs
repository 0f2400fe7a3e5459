//! A configuration that loads a script runner htaccel does not have
//! (mod_fcgid, mod_suphp, mod_lsapi, mod_wsgi, mod_perl, mod_python,
//! mod_lua) never gets the files that runner would run sent as they are:
//! they are answered 403 with an error-log line, and the rest of the site
//! is served. mod_include's filter, where `Options` allows includes, is
//! refused alike (without includes allowed it passes the file as Apache
//! does, compared with Apache in `tests/cases/mime/includes-not-allowed`).
//!
//! Apache cannot answer these expectations: with the module it runs the
//! files (this machine has none of these modules installed), without it it
//! sends their source, which htaccel deliberately does not
//! (docs/deviations.md).

mod common;

use common::{Server, TempDir};

const MARKER: &str = "SOURCE-MARKER-5c1e";

fn config(site: &TempDir, run: &TempDir, lines: &str) -> String {
    format!(
        "ServerRoot /usr/lib/apache2\n\
         Listen 127.0.0.1:@PORT@\n\
         ErrorLog {run}/error.log\n\
         LoadModule mime_module modules/mod_mime.so\n\
         LoadModule authz_core_module modules/mod_authz_core.so\n\
         TypesConfig /etc/mime.types\n\
         DocumentRoot {root}\n\
         <Directory {root}>\n  AllowOverride All\n  Require all granted\n</Directory>\n\
         {lines}\n",
        run = run.path().display(),
        root = site.path().display(),
    )
}

/// Each runner with the lines a stock configuration of it writes, and the
/// files (beside `plain.html`) it would run.
const RUNNERS: &[(&str, &str, &[&str])] = &[
    (
        "LoadModule fcgid_module modules/mod_fcgid.so",
        "<IfModule mod_fcgid.c>\n  FcgidWrapper /usr/bin/php-cgi .php\n</IfModule>\n\
         AddHandler fcgid-script .php .fcgi",
        &["/index.php", "/app.fcgi", "/x.phtml"],
    ),
    (
        "LoadModule fcgid_module modules/mod_fcgid.so",
        // No handler maps PHP at all: PHP files are still never sent.
        "",
        &["/index.php", "/x.phtml"],
    ),
    (
        "LoadModule suphp_module modules/mod_suphp.so",
        "AddType application/x-httpd-suphp .php\n\
         <IfModule mod_suphp.c>\n  suPHP_AddHandler application/x-httpd-suphp\n</IfModule>",
        &["/index.php"],
    ),
    (
        "LoadModule lsapi_module modules/mod_lsapi.so",
        "AddHandler application/x-httpd-lsphp .php",
        &["/index.php"],
    ),
    (
        "LoadModule wsgi_module modules/mod_wsgi.so",
        "AddHandler wsgi-script .wsgi",
        &["/app.wsgi"],
    ),
    (
        "LoadModule perl_module modules/mod_perl.so",
        "<FilesMatch \\.pl$>\n  SetHandler perl-script\n</FilesMatch>",
        &["/run.pl"],
    ),
];

#[test]
fn files_a_loaded_runner_would_run_are_never_sent() {
    let site = TempDir::new("runners-site");
    for name in ["index.php", "x.phtml", "app.fcgi", "app.wsgi", "run.pl"] {
        site.write(name, &format!("secret {MARKER}\n"));
    }
    site.write("plain.html", "plain\n");
    for (load, lines, refused) in RUNNERS {
        let run = TempDir::new("runners-run");
        let conf = config(&site, &run, &format!("{load}\n{lines}"));
        let server = Server::with_config(&conf, run.path());
        for url in *refused {
            let (status, body) = server.get(url);
            assert_eq!(status, 403, "{load} / {lines:?}: GET {url}:\n{body}");
            assert!(!body.contains(MARKER), "{load}: GET {url} sent the source");
        }
        assert_eq!(server.get("/plain.html"), (200, "plain\n".to_string()));
        assert_eq!(server.get("/missing.php").0, 404, "{load}");
        let log = std::fs::read_to_string(run.path().join("error.log")).unwrap();
        let name = load.split(' ').nth(1).unwrap();
        assert!(
            log.contains("which htaccel does not have, and the file is one it would run")
                && log.contains(name),
            "{load}: {log}"
        );
    }
}

#[test]
fn without_a_runner_loaded_its_handler_names_are_apaches_default() {
    // No runner loaded: a handler nobody claims is the default handler's,
    // as in Apache (the file is sent). Only PHP files under mod_php, and
    // scripts a loaded runner would run, are held back.
    let site = TempDir::new("runners-none");
    site.write("page.shtml", "ssi\n");
    let run = TempDir::new("runners-none-run");
    let conf = config(&site, &run, "AddHandler server-parsed .shtml");
    let server = Server::with_config(&conf, run.path());
    assert_eq!(server.get("/page.shtml"), (200, "ssi\n".to_string()));
}

#[test]
fn server_side_includes_are_refused_where_options_allow_them() {
    // Apache with mod_include parses these files; htaccel does not parse
    // server-side includes and answers 403 rather than send the elements
    // (an `exec` names a command) unparsed.
    let site = TempDir::new("includes-site");
    for dir in ["on", "noexec", "off"] {
        site.write(
            &format!("{dir}/page.shtml"),
            &format!("<!--#exec cmd=\"cat /etc/{MARKER}\" -->\n"),
        );
        site.write(&format!("{dir}/a.html"), &format!("{MARKER}\n"));
    }
    let root = site.path().display();
    let lines = format!(
        "LoadModule include_module modules/mod_include.so\n\
         LoadModule proxy_module modules/mod_proxy.so\n\
         LoadModule proxy_fcgi_module modules/mod_proxy_fcgi.so\n\
         AddType text/html .shtml\nAddOutputFilter INCLUDES .shtml\n\
         <Directory {root}/on>\n  Options +Includes\n  AddHandler server-parsed .html\n</Directory>\n\
         <Directory {root}/noexec>\n  Options +IncludesNoExec\n  AddHandler server-parsed .html\n</Directory>\n\
         <Directory {root}/off>\n  Options -Includes\n  AddHandler server-parsed .html\n</Directory>\n\
         <Directory {root}/script>\n  Options +Includes\n  SetOutputFilter INCLUDES\n  \
         SetHandler \"proxy:unix:{root}/no-such.sock|fcgi://localhost\"\n</Directory>"
    );
    let run = TempDir::new("includes-run");
    let server = Server::with_config(&config(&site, &run, &lines), run.path());
    for url in [
        "/on/page.shtml",
        "/on/a.html",
        "/noexec/page.shtml",
        "/noexec/a.html",
    ] {
        let (status, body) = server.get(url);
        assert_eq!(status, 403, "GET {url}:\n{body}");
        assert!(!body.contains(MARKER), "GET {url} sent the elements");
    }
    assert_eq!(server.get("/on/missing.shtml").0, 404);
    // A script's output too, before the back-end is asked (else a 503:
    // nothing listens on its socket).
    site.write("script/x.php", "<?php echo 1;\n");
    assert_eq!(server.get("/script/x.php").0, 403);
    // Where no includes are allowed, Apache's filter removes itself: the
    // file as it is.
    assert_eq!(server.get("/off/a.html"), (200, format!("{MARKER}\n")));
    let log = std::fs::read_to_string(run.path().join("error.log")).unwrap();
    assert!(
        log.contains("[include:error]")
            && log.contains("htaccel does not parse server-side includes")
            && log.contains("parse the script's output"),
        "{log}"
    );
    assert!(log.contains("AH01374"), "{log}");
}
