//! Which PHP-FPM pool stands in for mod_php, decided once at start-up.
//!
//! A configuration that loads mod_php expects `.php` files to run. htaccel
//! runs no PHP in process, so it needs a PHP-FPM pool: the one named by
//! htaccel's own `PHPFPMSocket`, else the distribution's default pool when
//! its socket exists (Debian's `/run/php/phpX.Y-fpm.sock`, the version of
//! the loaded `libphpX.Y.so` first, then `/run/php/php-fpm.sock` and any
//! other version; RHEL's `/run/php-fpm/www.sock`). With neither, htaccel
//! refuses to start and says what to add: starting anyway would answer
//! every script with its source or an error.

use crate::modules::proxy::{parse_handler, FcgiTarget};
use htaccel_conf::Origin;
use std::path::{Path, PathBuf};

/// Where the distributions put their default pools' sockets.
pub const DEBIAN_RUN_DIR: &str = "/run/php";
pub const RHEL_SOCKET: &str = "/run/php-fpm/www.sock";

/// The `SetHandler` value mod_proxy_fcgi would use for PHP-FPM at `addr`:
/// `unix:/path` (or a bare absolute path) for a Unix socket, else
/// `host:port` over TCP.
pub fn proxy_handler(addr: &str) -> String {
    let socket = addr
        .strip_prefix("unix:")
        .or_else(|| addr.starts_with('/').then_some(addr));
    match socket {
        Some(path) => format!("proxy:unix:{path}|fcgi://localhost"),
        None => format!("proxy:fcgi://{addr}"),
    }
}

/// `PHPFPMSocket`'s argument as a FastCGI target, or why it is not one.
pub fn target(addr: &str) -> Result<FcgiTarget, String> {
    let bad = || {
        format!("PHPFPMSocket {addr}: expected unix:/path/to/php-fpm.sock, a socket's absolute path, or host:port")
    };
    if addr.is_empty()
        || (!addr.starts_with("unix:") && !addr.starts_with('/') && !addr.contains(':'))
    {
        return Err(bad());
    }
    match parse_handler(&proxy_handler(addr)) {
        Some(Ok(t)) => Ok(t),
        _ => Err(bad()),
    }
}

/// The pool for a configuration: `None` when mod_php is not loaded.
/// `module_file` is the loaded module's file (`libphp8.2.so`), used to
/// prefer the matching Debian pool.
pub fn resolve(
    mod_php: Option<&Origin>,
    configured: Option<&(String, Origin)>,
    module_file: Option<&str>,
    debian_run_dir: &Path,
    rhel_socket: &Path,
) -> Result<Option<FcgiTarget>, String> {
    let Some(loaded_at) = mod_php else {
        return Ok(None);
    };
    if let Some((addr, origin)) = configured {
        return target(addr).map(Some).map_err(|e| format!("{origin}: {e}"));
    }
    if let Some(socket) = default_socket(module_file, debian_run_dir, rhel_socket) {
        let addr = format!("unix:{}", socket.display());
        return target(&addr).map(Some);
    }
    Err(refusal(loaded_at, debian_run_dir, rhel_socket))
}

/// The message htaccel refuses to start with: what was found, why it
/// matters, and the exact line to add.
pub fn refusal(loaded_at: &Origin, debian_run_dir: &Path, rhel_socket: &Path) -> String {
    format!(
        "htaccel: {loaded_at}: this configuration loads mod_php, so .php files are meant to run; \
htaccel runs PHP on PHP-FPM and found no pool (no {}/php*-fpm.sock, no {}).\n\
Start PHP-FPM (Debian: apt install php-fpm; RHEL: dnf install php-fpm; then start its service), \
or name the pool's socket in the server configuration, outside any <VirtualHost>:\n\
\n    PHPFPMSocket unix:/run/php/php8.2-fpm.sock\n\n\
(or PHPFPMSocket 127.0.0.1:9000 for a pool listening on TCP; inside <IfDefine HTACCEL> … </IfDefine> \
if Apache reads the same file). htaccel will not start without it, so that no PHP source is ever sent.",
        debian_run_dir.display(),
        rhel_socket.display()
    )
}

/// The distribution's default pool on this machine, if its socket exists
/// (`htaccel serve --php` without an address).
pub fn find_default(module_file: Option<&str>) -> Option<PathBuf> {
    default_socket(
        module_file,
        Path::new(DEBIAN_RUN_DIR),
        Path::new(RHEL_SOCKET),
    )
}

/// The first default pool socket that exists.
fn default_socket(module_file: Option<&str>, debian: &Path, rhel: &Path) -> Option<PathBuf> {
    let is_socket = |p: &Path| {
        use std::os::unix::fs::FileTypeExt;
        std::fs::metadata(p).is_ok_and(|m| m.file_type().is_socket())
    };
    // libphp8.2.so → php8.2-fpm.sock
    let version = module_file
        .and_then(|f| f.rsplit('/').next())
        .and_then(|f| f.strip_prefix("libphp"))
        .and_then(|f| f.strip_suffix(".so"))
        .filter(|v| !v.is_empty());
    let mut candidates = Vec::new();
    if let Some(v) = version {
        candidates.push(debian.join(format!("php{v}-fpm.sock")));
    }
    candidates.push(debian.join("php-fpm.sock"));
    let mut versioned: Vec<PathBuf> = std::fs::read_dir(debian)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("php") && n.ends_with("-fpm.sock"))
        })
        .collect();
    // The newest version first (php8.3 before php8.2 before php7.4).
    versioned.sort_by_key(|p| std::cmp::Reverse(version_key(p)));
    candidates.extend(versioned);
    candidates.push(rhel.to_path_buf());
    candidates.into_iter().find(|p| is_socket(p))
}

fn version_key(p: &Path) -> Vec<u32> {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let v = name
        .strip_prefix("php")
        .and_then(|n| n.strip_suffix("-fpm.sock"))
        .unwrap_or("");
    v.split('.').map(|n| n.parse().unwrap_or(0)).collect()
}

/// mod_php's start: the pool that runs PHP when the configuration loads
/// mod_php ([`resolve`] on this machine's paths).
pub(crate) fn start(
    loaded: &crate::engine::Loaded,
    _log: &std::sync::Arc<dyn crate::http::Log>,
) -> Result<Option<FcgiTarget>, String> {
    let global = &loaded.build.global;
    resolve(
        global.mod_php.as_ref().map(|(origin, _)| origin),
        global.php_fpm_socket.as_ref(),
        global.mod_php.as_ref().map(|(_, file)| file.as_str()),
        Path::new(DEBIAN_RUN_DIR),
        Path::new(RHEL_SOCKET),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::backend::BackendAddr;
    use std::os::unix::net::UnixListener;

    /// A fresh directory under the system's temporary directory.
    struct Dir(PathBuf);
    impl Dir {
        fn new(tag: &str) -> Dir {
            let p = std::env::temp_dir().join(format!("htaccel-pool-{tag}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).unwrap();
            Dir(p)
        }
        fn path(&self) -> &Path {
            &self.0
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn origin() -> Origin {
        Origin::new("/etc/apache2/mods-enabled/php8.2.load", 3)
    }

    #[test]
    fn not_loaded_needs_nothing() {
        let r = resolve(
            None,
            None,
            None,
            Path::new("/nonexistent"),
            Path::new("/nonexistent"),
        );
        assert!(r.unwrap().is_none());
    }

    #[test]
    fn refuses_without_a_pool_and_says_what_to_add() {
        let dir = Dir::new("none");
        let e = resolve(
            Some(&origin()),
            None,
            Some("/usr/lib/apache2/modules/libphp8.2.so"),
            dir.path(),
            &dir.path().join("www.sock"),
        )
        .err()
        .unwrap();
        assert!(e.contains("/etc/apache2/mods-enabled/php8.2.load:3"), "{e}");
        assert!(e.contains("loads mod_php"), "{e}");
        assert!(
            e.contains("\n    PHPFPMSocket unix:/run/php/php8.2-fpm.sock\n"),
            "{e}"
        );
    }

    #[test]
    fn configured_socket_wins_and_is_checked() {
        let conf = ("unix:/srv/fpm.sock".to_string(), origin());
        let t = resolve(
            Some(&origin()),
            Some(&conf),
            None,
            Path::new("/x"),
            Path::new("/x"),
        )
        .unwrap()
        .unwrap();
        assert_eq!(t.addr, BackendAddr::Unix("/srv/fpm.sock".into()));
        assert_eq!(t.url_base, "fcgi://localhost");
        let tcp = target("127.0.0.1:9000").unwrap();
        assert_eq!(tcp.addr, BackendAddr::Tcp("127.0.0.1:9000".into()));
        let bad = ("php-fpm".to_string(), origin());
        let e = resolve(
            Some(&origin()),
            Some(&bad),
            None,
            Path::new("/x"),
            Path::new("/x"),
        )
        .err()
        .unwrap();
        assert!(
            e.starts_with("/etc/apache2/mods-enabled/php8.2.load:3: PHPFPMSocket php-fpm:"),
            "{e}"
        );
    }

    #[test]
    fn default_pools_in_order() {
        let dir = Dir::new("order");
        let rhel = dir.path().join("www.sock");
        let _l74 = UnixListener::bind(dir.path().join("php7.4-fpm.sock")).unwrap();
        let _l83 = UnixListener::bind(dir.path().join("php8.3-fpm.sock")).unwrap();
        let pick = |file: Option<&str>| {
            resolve(Some(&origin()), None, file, dir.path(), &rhel)
                .unwrap()
                .unwrap()
                .addr
        };
        // No matching version: the newest.
        assert_eq!(
            pick(Some("libphp8.2.so")),
            BackendAddr::Unix(dir.path().join("php8.3-fpm.sock"))
        );
        // The loaded module's version first.
        assert_eq!(
            pick(Some("modules/libphp7.4.so")),
            BackendAddr::Unix(dir.path().join("php7.4-fpm.sock"))
        );
        // Debian's alternatives link before other versions.
        let _alt = UnixListener::bind(dir.path().join("php-fpm.sock")).unwrap();
        assert_eq!(
            pick(None),
            BackendAddr::Unix(dir.path().join("php-fpm.sock"))
        );
        // RHEL's pool.
        let other = Dir::new("rhel");
        let _www = UnixListener::bind(&rhel).unwrap();
        assert_eq!(
            resolve(Some(&origin()), None, None, other.path(), &rhel)
                .unwrap()
                .unwrap()
                .addr,
            BackendAddr::Unix(rhel.clone())
        );
    }
}
