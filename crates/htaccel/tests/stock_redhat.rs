//! Red Hat's stock httpd configuration (Fedora, RHEL and their rebuilds:
//! `conf/httpd.conf`, `conf.modules.d/`, `conf.d/` with mod_ssl's and
//! PHP-FPM's files), from `tests/stock/redhat/`, read unchanged by
//! htaccel: `-t` says `Syntax OK`, its only warnings name the modules
//! htaccel does not have, and the site answers, over HTTP and HTTPS, as
//! Debian's apache2 answers it on the same files.
//!
//! Debian's apache2 cannot read every line as Red Hat's httpd does, so its
//! copy differs where it must: the `LoadModule` lines of modules its binary
//! has compiled in (which it refuses) or lacks (mod_systemd) are left
//! out, and `SSLCipherSuite PROFILE=SYSTEM`, which only Red Hat's OpenSSL
//! knows, reads `DEFAULT`, what htaccel reads it as on a system without
//! Red Hat's crypto policies. htaccel reads the files as they are.

mod common;

use common::TempDir;
use std::path::{Path, PathBuf};
use std::process::Command;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/stock/redhat");

/// The places the fixture's placeholders stand for.
struct Places {
    root: PathBuf,
    www: PathBuf,
    port: u16,
    tls_port: u16,
}

/// The files of `tests/stock/redhat` under `places.root`, placeholders
/// filled in; for Apache, without the lines Debian's binary cannot read.
fn write_tree(places: &Places, for_apache: bool) {
    let compiled_in = compiled_in_modules();
    for sub in ["conf", "conf.d", "conf.modules.d"] {
        for entry in std::fs::read_dir(Path::new(FIXTURE).join(sub)).unwrap() {
            let entry = entry.unwrap();
            let text = std::fs::read_to_string(entry.path()).unwrap();
            let mut text = fill(&text, places);
            if for_apache {
                text = text
                    .lines()
                    .filter(|l| !apache_cannot_load(l, &compiled_in))
                    .map(|l| l.replace("PROFILE=SYSTEM", "DEFAULT") + "\n")
                    .collect();
            }
            let to = places.root.join(sub).join(entry.file_name());
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::write(to, text).unwrap();
        }
    }
    std::os::unix::fs::symlink("/usr/lib/apache2/modules", places.root.join("modules")).unwrap();
    std::fs::copy("/etc/apache2/magic", places.root.join("conf/magic")).unwrap();
    for sub in ["logs", "run/php-fpm", "pki/tls/certs", "pki/tls/private"] {
        std::fs::create_dir_all(places.root.join(sub)).unwrap();
    }
    let pki = places.root.join("pki/tls");
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        ])
        .args(["-subj", "/CN=localhost", "-keyout"])
        .arg(pki.join("private/localhost.key"))
        .arg("-out")
        .arg(pki.join("certs/localhost.crt"))
        .output()
        .unwrap();
    assert!(made.status.success(), "openssl: {made:?}");
}

fn fill(text: &str, p: &Places) -> String {
    text.replace("@ROOT@", &p.root.display().to_string())
        .replace("@WWW@", &p.www.display().to_string())
        .replace("@NOINDEX@", &p.www.join("noindex").display().to_string())
        .replace("@ICONS@", "/usr/share/apache2/icons")
        .replace("@TLSPORT@", &p.tls_port.to_string())
        .replace("@PORT@", &p.port.to_string())
        .replace("@USER@", "www-data")
        .replace("@GROUP@", "www-data")
        .replace("@DIALOG@", "/bin/true")
}

/// The module source files Debian's apache2 has compiled in (`-l`).
fn compiled_in_modules() -> Vec<String> {
    let out = Command::new("/usr/sbin/apache2")
        .arg("-l")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().strip_suffix(".c"))
        .map(str::to_string)
        .collect()
}

/// A `LoadModule` line Debian's apache2 refuses: its module is compiled
/// in, or its file is not installed.
fn apache_cannot_load(line: &str, compiled_in: &[String]) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    let ["LoadModule", _, file] = words[..] else {
        return false;
    };
    let stem = file.trim_start_matches("modules/").trim_end_matches(".so");
    compiled_in.iter().any(|m| m == stem)
        || !Path::new("/usr/lib/apache2/modules")
            .join(format!("{stem}.so"))
            .exists()
}

/// The site: no index page (Red Hat's welcome page answers `/`), files
/// its stock lines treat apart, a CGI directory.
fn write_site(www: &TempDir) {
    www.write("html/page.html", "<p>page</p>\n");
    www.write("html/notes.txt", "notes\n");
    // Types mod_mime_magic finds: a PNG without an extension, an empty
    // file, text by its words.
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.resize(300, 0);
    std::fs::write(www.path().join("html/logo"), png).unwrap();
    www.write("html/empty", "");
    www.write("html/LICENSE", "The license\n");
    www.write(
        "html/test.shtml",
        "<p><!--#echo var=\"DATE_LOCAL\" --></p>\n",
    );
    www.write("html/.htaccess", "Require all denied\n");
    www.write("html/.user.ini", "memory_limit=1G\n");
    www.write("html/x.php", "<?php echo 'hi';\n");
    www.write("html/dir/a.txt", "a\n");
    www.write("cgi-bin/hello", "#!/bin/sh\necho\necho hi\n");
    www.write(
        "noindex/index.html",
        "<html><body>Test Page</body></html>\n",
    );
    // Old enough that neither server's ETag is weak, however long the
    // other took.
    let touched = Command::new("find")
        .arg(www.path())
        .args(["-exec", "touch", "-d", "2024-01-02 03:04:05 UTC", "{}", "+"])
        .status()
        .unwrap();
    assert!(touched.success());
}

/// What HTTPS shows of `path`: curl's head (without the date and the
/// server's name) and body.
fn seen_tls(port: u16, path: &str) -> String {
    let out = Command::new("curl")
        .args(["-sk", "-D", "-", "--max-time", "10"])
        .arg(format!("https://127.0.0.1:{port}{path}"))
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            !(l.starts_with("date:") || l.starts_with("server:"))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

const PATHS: &[&str] = &[
    "/",
    "/page.html",
    "/notes.txt",
    "/logo",
    "/empty",
    "/LICENSE",
    "/test.shtml",
    "/.htaccess",
    "/.user.ini",
    "/x.php",
    "/dir/",
    "/dir",
    "/icons/apache_pb.png",
    "/cgi-bin/",
    "/cgi-bin/hello",
    "/.noindex.html",
    "/~www-data/",
    "/nowhere",
];

fn answers(program: &str, args: &[&str], places: &Places) -> Vec<String> {
    let mut command = Command::new(program);
    command.args(args);
    let child = common::start_command(command, places.port);
    let mut out: Vec<String> = PATHS
        .iter()
        .map(|p| common::seen(places.port, p, false))
        .collect();
    out.extend(
        ["/page.html", "/test.shtml", "/"]
            .iter()
            .map(|p| seen_tls(places.tls_port, p)),
    );
    common::stop_program(child);
    out
}

#[test]
fn red_hats_stock_configuration_runs_unchanged() {
    if !Path::new("/usr/sbin/apache2").is_file() {
        eprintln!("no apache2: skipped (scripts/test.sh installs it)");
        return;
    }
    let www = TempDir::new("stock-redhat-www");
    write_site(&www);
    let (port, tls_port) = (common::free_port(), common::free_port());
    let ours = TempDir::new("stock-redhat-htaccel");
    let theirs = TempDir::new("stock-redhat-apache");
    let place = |root: &TempDir| Places {
        root: root.path().to_path_buf(),
        www: www.path().to_path_buf(),
        port,
        tls_port,
    };
    write_tree(&place(&ours), false);
    write_tree(&place(&theirs), true);
    let conf = |root: &TempDir| root.path().join("conf/httpd.conf");

    let test = Command::new(env!("CARGO_BIN_EXE_htaccel"))
        .arg("-t")
        .arg("-f")
        .arg(conf(&ours))
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&test.stdout),
        String::from_utf8_lossy(&test.stderr)
    );
    assert!(
        test.status.success() && said.contains("Syntax OK"),
        "{said}"
    );
    for line in said.lines() {
        assert!(
            line.contains("is not part of htaccel")
                || line.contains("Syntax OK")
                || line.contains("AH00558"),
            "unexpected: {line}\n{said}"
        );
    }
    // mod_log_config, mod_logio, mod_unixd… are part of htaccel: loaded
    // without a word.
    assert!(!said.contains("log_config_module"), "{said}");
    assert!(!said.contains("systemd_module"), "{said}");

    let apache = answers(
        "/usr/sbin/apache2",
        &["-f", &conf(&theirs).display().to_string(), "-DFOREGROUND"],
        &place(&theirs),
    );
    let htaccel = answers(
        env!("CARGO_BIN_EXE_htaccel"),
        &["-f", &conf(&ours).display().to_string()],
        &place(&ours),
    );
    // Not vacuous: the welcome page, the page, and HTTPS answered.
    assert!(apache[0].starts_with("HTTP/1.1 403"), "{}", apache[0]);
    assert!(apache[0].contains("Test Page"), "{}", apache[0]);
    assert!(apache[1].starts_with("HTTP/1.1 200"), "{}", apache[1]);
    assert!(
        apache[PATHS.len()].starts_with("HTTP/1.1 200"),
        "{}",
        apache[PATHS.len()]
    );
    for (i, (ours, theirs)) in htaccel.iter().zip(&apache).enumerate() {
        let path = PATHS
            .get(i)
            .map_or_else(|| format!("https {}", i - PATHS.len()), |p| p.to_string());
        if ours != theirs {
            let at = ours
                .lines()
                .zip(theirs.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            panic!(
                "{path}: line {at} differs\nhtaccel: {:?}\napache:  {:?}\nhtaccel's answer:\n{ours}",
                ours.lines().nth(at),
                theirs.lines().nth(at)
            );
        }
    }
    assert_eq!(htaccel.len(), apache.len());
}
