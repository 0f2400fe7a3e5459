//! A private PHP-FPM for the cases that need one (a `needs` file naming
//! `php-fpm`): Debian's `php-fpm` binary with its own pool configuration,
//! listening on a Unix socket in the case's sandbox, never the system
//! service. Both servers of the case talk to the same pool, through the
//! `@PHP_FPM@` placeholder of `server.conf` (the socket's path).

use crate::procs::Process;
use crate::sandbox::mkdir;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// The socket of the pool kept in `dir`.
pub fn socket(dir: &Path) -> PathBuf {
    dir.join("fpm").join("php-fpm.sock")
}

/// The php-fpm binary: `php-fpm` on the PATH, else Debian's versioned name.
fn binary() -> Option<PathBuf> {
    for dir in ["/usr/sbin", "/usr/local/sbin", "/usr/bin"] {
        let plain = Path::new(dir).join("php-fpm");
        if plain.is_file() {
            return Some(plain);
        }
        let Ok(entries) = fs::read_dir(dir) else {
            continue;
        };
        let mut versioned: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                    n.starts_with("php-fpm")
                        && n[7..].chars().all(|c| c.is_ascii_digit() || c == '.')
                })
            })
            .collect();
        versioned.sort();
        if let Some(p) = versioned.pop() {
            return Some(p);
        }
    }
    None
}

/// Starts a pool for the sandbox at `dir`; logs go to `dir/fpm/`.
pub fn start(dir: &Path) -> Result<(Process, Vec<PathBuf>), String> {
    start_with(dir, &[])
}

/// Like [`start`], with more command-line options for php-fpm (`-d NAME=VALUE`
/// pairs: the extensions an application needs, since the pool reads no php.ini).
pub fn start_with(dir: &Path, extra: &[String]) -> Result<(Process, Vec<PathBuf>), String> {
    let bin = binary().ok_or("php-fpm is not installed (scripts/test.sh installs php-fpm)")?;
    let fpm_dir = dir.join("fpm");
    mkdir(&fpm_dir)?;
    let sock = socket(dir);
    let log = fpm_dir.join("php-fpm.log");
    let conf = fpm_dir.join("php-fpm.conf");
    let text = format!(
        "[global]\n\
         pid = {dir}/php-fpm.pid\n\
         error_log = {log}\n\
         daemonize = no\n\
         [case]\n\
         user = www-data\n\
         group = www-data\n\
         listen = {sock}\n\
         listen.mode = 0666\n\
         pm = static\n\
         pm.max_children = 4\n\
         catch_workers_output = yes\n\
         decorate_workers_output = no\n\
         security.limit_extensions = .php .phar .phtml .html .tpl\n",
        dir = fpm_dir.display(),
        log = log.display(),
        sock = sock.display(),
    );
    fs::write(&conf, text).map_err(|e| format!("writing {}: {e}", conf.display()))?;
    let out = fpm_dir.join("php-fpm.out");
    let out_file = File::create(&out).map_err(|e| e.to_string())?;
    let err_file = out_file.try_clone().map_err(|e| e.to_string())?;
    let mut cmd = Command::new(&bin);
    // -n: no php.ini (the pool config is all); -R: allowed to start as root.
    cmd.arg("-n")
        .arg("-y")
        .arg(&conf)
        .arg("-F")
        .arg("-R")
        .args(extra)
        .stdin(Stdio::null())
        .stdout(out_file)
        .stderr(err_file);
    let mut proc = Process::spawn(cmd).map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
    let logs = vec![log, out];
    let until = Instant::now() + Duration::from_secs(10);
    while !sock.exists() {
        if let Some(status) = proc.exited() {
            return Err(format!(
                "php-fpm exited ({status}):\n{}",
                crate::servers::tails(&logs)
            ));
        }
        if Instant::now() > until {
            return Err(format!(
                "php-fpm did not create {}:\n{}",
                sock.display(),
                crate::servers::tails(&logs)
            ));
        }
        sleep(Duration::from_millis(20));
    }
    Ok((proc, logs))
}
