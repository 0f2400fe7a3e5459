//! Debian's stock Apache configuration, as `apt install apache2` leaves it
//! (the modules Debian enables by default, `ports.conf`, the default site),
//! read unchanged by htaccel: `-t` says `Syntax OK` without a word about
//! anything unsupported, and the site answers as Apache answers it on the
//! same files. The copy differs from `/etc/apache2` only where a test
//! must: the port, the run and log directories (`envvars`), and the
//! modules the test set-up adds for other tests (mod_php and the prefork
//! MPM it needs, mod_xsendfile) are left out, as a stock installation
//! does not have them. mod_cgid is enabled too, as `a2enmod cgi` does
//! on a stock system (its `ScriptSock` under the run directory).

mod common;

use common::TempDir;
use std::path::Path;
use std::process::Command;

/// A copy of `/etc/apache2` with the stock modules, listening on `port`.
fn stock_copy(dir: &TempDir, port: u16) {
    let root = dir.path();
    let d = root.display();
    let copy = |from: &Path, to: &Path| {
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from, to).unwrap();
    };
    let etc = Path::new("/etc/apache2");
    for f in ["apache2.conf", "magic"] {
        copy(&etc.join(f), &root.join(f));
    }
    for sub in ["conf-enabled", "sites-enabled"] {
        for e in std::fs::read_dir(etc.join(sub)).unwrap().flatten() {
            copy(&e.path(), &root.join(sub).join(e.file_name()));
        }
    }
    for m in common::STOCK_MODULES {
        for ext in ["load", "conf"] {
            let from = etc.join(format!("mods-available/{m}.{ext}"));
            if from.exists() {
                copy(&from, &root.join(format!("mods-enabled/{m}.{ext}")));
            }
        }
    }
    dir.write("ports.conf", &format!("Listen 127.0.0.1:{port}\n"));
    let site = std::fs::read_to_string(root.join("sites-enabled/000-default.conf")).unwrap();
    dir.write(
        "sites-enabled/000-default.conf",
        &site.replace("<VirtualHost *:80>", &format!("<VirtualHost *:{port}>")),
    );
    dir.write(
        "envvars",
        &format!(
            "export APACHE_RUN_USER=www-data\nexport APACHE_RUN_GROUP=www-data\n\
             export APACHE_PID_FILE={d}/run/apache2.pid\nexport APACHE_RUN_DIR={d}/run\n\
             export APACHE_LOCK_DIR={d}/lock\nexport APACHE_LOG_DIR={d}/log\nexport LANG=C\n"
        ),
    );
    for sub in ["run", "lock", "log"] {
        std::fs::create_dir_all(root.join(sub)).unwrap();
    }
}

fn envs(root: &Path) -> Vec<(String, String)> {
    let d = root.display();
    vec![
        ("APACHE_RUN_USER".into(), "www-data".into()),
        ("APACHE_RUN_GROUP".into(), "www-data".into()),
        ("APACHE_PID_FILE".into(), format!("{d}/run/apache2.pid")),
        ("APACHE_RUN_DIR".into(), format!("{d}/run")),
        ("APACHE_LOCK_DIR".into(), format!("{d}/lock")),
        ("APACHE_LOG_DIR".into(), format!("{d}/log")),
        ("LANG".into(), "C".into()),
    ]
}

fn answers(program: &str, args: &[&str], root: &Path, port: u16) -> Vec<String> {
    let mut child = Command::new(program)
        .args(args)
        .envs(envs(root))
        .spawn()
        .unwrap();
    let up = (0..200).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    assert!(up, "{program} did not start");
    let out = [
        "/",
        "/index.html",
        "/icons/README",
        "/icons/apache_pb.png",
        "/icons/",
        "/nowhere",
        "/server-status?auto&x=1",
    ]
    .iter()
    .map(|p| {
        // Debian's deflate.conf compresses the default page for a client
        // that asks; error pages are compared as text.
        let s = common::seen(port, p, p.starts_with("/index") || *p == "/");
        // Only the status of the status page: its figures are the server's.
        if p.starts_with("/server-status") {
            s.lines().next().unwrap_or_default().to_string()
        } else {
            s
        }
    })
    .collect();
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let _ = child.wait();
    out
}

#[test]
fn the_stock_debian_configuration_runs_unchanged() {
    if !Path::new("/etc/apache2/apache2.conf").is_file() {
        eprintln!("no /etc/apache2: skipped (scripts/test.sh installs apache2)");
        return;
    }
    let dir = TempDir::new("stock-debian");
    let port = common::free_port();
    stock_copy(&dir, port);
    let root = dir.path().display().to_string();
    let htaccel = env!("CARGO_BIN_EXE_htaccel");
    let test = Command::new(htaccel)
        .args(["-d", &root, "-t"])
        .envs(envs(dir.path()))
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
    for refused in ["not supported", "not part of htaccel", "Invalid command"] {
        assert!(!said.contains(refused), "{said}");
    }
    let apache = answers(
        "/usr/sbin/apache2",
        &["-d", &root, "-f", "apache2.conf", "-DFOREGROUND"],
        dir.path(),
        port,
    );
    let ours = answers(htaccel, &["-d", &root], dir.path(), port);
    assert!(apache[0].starts_with("HTTP/1.1 200"), "{}", apache[0]);
    assert_eq!(ours, apache);
}
