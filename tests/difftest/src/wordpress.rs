//! WordPress with a real database, for the cases that name `wordpress` in
//! their `needs` file (tests/cases/wordpress/). The case's `setup.sh` puts
//! WordPress in the site (`scripts/wordpress.sh stage`); here, once the two
//! trees exist:
//!
//! * a private MariaDB (`scripts/wordpress.sh db-run`: own data directory
//!   and socket in the sandbox, no TCP) is started;
//! * the site is installed once into database `wp_a` (Apache's tree) and
//!   copied to `wp_h` (the other server's), so both start from the same
//!   state, IDs included, and what one server's requests write (an upload)
//!   does not change what the other answers;
//! * a PHP-FPM pool with the extensions WordPress needs serves both trees
//!   (`@PHP_FPM@`, as for `needs php-fpm`).
//!
//! The same script sets up the benchmark's WordPress, so the two use one site.

use crate::procs::Process;
use crate::sandbox::{mkdir, Sandbox, Side};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What runs for a WordPress case; stopped when dropped (PHP-FPM first).
pub struct WordPress {
    _fpm: (Process, Vec<PathBuf>),
    _db: Process,
}

/// Starts the database and the pool, and installs the site in both trees.
pub fn start(sb: &Sandbox, repo_root: &Path) -> Result<WordPress, String> {
    let script = repo_root.join("scripts/wordpress.sh");
    let wp_dir = sb.dir.join("wp");
    mkdir(&wp_dir)?;
    let datadir = wp_dir.join("db");
    let sock = wp_dir.join("db.sock");
    let sock_s = sock.to_string_lossy().into_owned();
    run(&script, &["db-init", &datadir.to_string_lossy()])?;
    let mut cmd = Command::new("bash");
    cmd.arg(&script)
        .arg("db-run")
        .arg(&datadir)
        .arg(&sock)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let db = Process::spawn(cmd).map_err(|e| format!("cannot run MariaDB: {e}"))?;
    run(&script, &["db-wait", &sock_s]).map_err(|e| {
        let log = std::fs::read_to_string(datadir.join("error.log")).unwrap_or_default();
        format!("{e}\n{log}")
    })?;
    let apache_root = sb.docroot(Side::Apache).to_string_lossy().into_owned();
    let other_root = sb.docroot(Side::Other).to_string_lossy().into_owned();
    run(&script, &["config", &apache_root, "wp_a", &sock_s])?;
    run(&script, &["install", &apache_root])?;
    run(&script, &["clone", &sock_s, "wp_a", "wp_h"])?;
    run(&script, &["config", &other_root, "wp_h", &sock_s])?;
    let args = run(&script, &["fpm-args"])?;
    let args: Vec<String> = args.lines().map(str::to_string).collect();
    let fpm = crate::fpm::start_with(&sb.dir, &args)?;
    Ok(WordPress { _fpm: fpm, _db: db })
}

/// Runs `bash wordpress.sh ARGS`, returning its standard output.
fn run(script: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("bash")
        .arg(script)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!(
            "wordpress.sh {} failed ({}):\n{}{}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
