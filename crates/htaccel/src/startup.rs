//! Reading the configuration as `apache2` does from its flags: the initial
//! `ServerRoot` (`-d`), the configuration file relative to it (`-f`), the
//! directives of `-C` before the file and of `-c` after it, `-D` names,
//! and where start-up messages go (`-e`, `-E`).

use crate::cli::Start;
use htaccel_conf::{Node, ParseOptions};
use htaccel_engine::engine::{self, Loaded};
use std::path::PathBuf;

/// htaccel's compiled-in `ServerRoot` (Apache's `HTTPD_ROOT`).
pub const DEFAULT_SERVER_ROOT: &str = "/etc/htaccel";

/// Where Apache's flags look without `-d`: htaccel's own root when it
/// exists, else the distribution's Apache root (Debian's `/etc/apache2`,
/// Fedora's `/etc/httpd`), so that `apache2ctl` with `APACHE_HTTPD`
/// pointing at htaccel, which passes no `-d` for `/etc/apache2`, finds
/// the configuration Apache would.
pub fn default_server_root() -> PathBuf {
    ["/etc/htaccel", "/etc/apache2", "/etc/httpd"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_dir())
        .unwrap_or_else(|| PathBuf::from(DEFAULT_SERVER_ROOT))
}

/// The files tried, in order, when `-d` is given without `-f`: Debian's
/// and Fedora's layouts (Apache's `SERVER_CONFIG_FILE` of each), then
/// htaccel's own.
const CONFIG_FILES: &[&str] = &["apache2.conf", "conf/httpd.conf", "htaccel.conf"];

impl Start {
    pub fn server_root(&self) -> PathBuf {
        self.server_root.clone().unwrap_or_else(default_server_root)
    }

    /// The configuration file: `-f` relative to `ServerRoot` unless
    /// absolute, else the first of [`CONFIG_FILES`] that exists. Without
    /// `-d`, a relative `-f` naming no file under the compiled-in root is
    /// taken relative to the working directory, as htaccel always took it.
    pub fn config_file(&self) -> PathBuf {
        let root = self.server_root();
        match &self.file {
            Some(f) if self.server_root.is_none() && !root.join(f).exists() => f.clone(),
            Some(f) => root.join(f),
            None => CONFIG_FILES
                .iter()
                .map(|f| root.join(f))
                .find(|p| p.is_file())
                .unwrap_or_else(|| root.join(CONFIG_FILES[0])),
        }
    }

    /// Read and interpret the configuration.
    pub fn load(&self) -> Result<Loaded, String> {
        let file = self.config_file();
        let mut nodes = command_line(&self.before)?;
        nodes.extend(
            htaccel_conf::parse_file(&file, &ParseOptions::default())
                .map_err(|e| read_failure(&e.origin, &e.message))?,
        );
        nodes.extend(command_line(&self.after)?);
        let loaded = load_nodes(&nodes, self.server_root(), self.defines.clone())?;
        if self.shows("warn") {
            let skipped = |n: &&htaccel_engine::config::Notice| {
                self.no_docroot_check && n.message.starts_with("DocumentRoot [")
            };
            for n in loaded.notices.iter().filter(|n| !skipped(n)) {
                eprintln!("htaccel: {}: {} ({})", n.origin, n.message, file.display());
            }
        }
        if self.shows("alert") {
            if let Some(warning) = crate::dump::guessed_name_warning(&loaded) {
                eprintln!("{warning}");
            }
        }
        Ok(loaded)
    }

    /// Whether a start-up message of `level` is shown (`-e`; `warn` unless said).
    pub fn shows(&self, level: &str) -> bool {
        let rank = |l: &str| {
            htaccel_engine::log_format::LEVELS
                .iter()
                .position(|x| x.eq_ignore_ascii_case(l))
        };
        let threshold = self.startup_level.as_deref().and_then(rank).unwrap_or(4);
        rank(level).is_some_and(|r| r <= threshold)
    }

    /// `-E FILE`: standard error, where start-up messages go, goes to FILE.
    pub fn redirect_startup_log(&self) -> Result<(), String> {
        let Some(path) = &self.startup_log else {
            return Ok(());
        };
        use std::os::fd::AsRawFd;
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.server_root().join(path))
            .map_err(|e| format!("htaccel: could not open -E file {}: {e}", path.display()))?;
        // SAFETY: both descriptors are open; dup2 replaces descriptor 2.
        if unsafe { libc::dup2(f.as_raw_fd(), 2) } < 0 {
            return Err(format!(
                "htaccel: -E {}: {}",
                path.display(),
                std::io::Error::last_os_error()
            ));
        }
        Ok(())
    }
}

/// The directives of `-C`/`-c`, one per argument.
fn command_line(directives: &[String]) -> Result<Vec<Node>, String> {
    if directives.is_empty() {
        return Ok(Vec::new());
    }
    let text = directives.join("\n") + "\n";
    htaccel_conf::parse_str(&text, "-c/-C directives", &ParseOptions::default())
        .map_err(|e| read_failure(&e.origin, &e.message))
}

/// A file that could not be read or parsed, in Apache's words:
/// `htaccel: Syntax error on line N of FILE: …` (`apache2: …` in Apache),
/// or the reason alone for a file that could not be opened.
fn read_failure(origin: &htaccel_conf::Origin, message: &str) -> String {
    if origin.line == 0 {
        format!("htaccel: {message}")
    } else {
        format!(
            "htaccel: Syntax error on line {} of {}: {message}",
            origin.line, origin.file
        )
    }
}

/// Interpret parsed configuration; errors in Apache's two shapes (a file
/// that could not be read: one line; a directive refused: `AH00526`).
pub fn load_nodes(
    nodes: &[Node],
    server_root: PathBuf,
    defines: Vec<String>,
) -> Result<Loaded, String> {
    engine::load(nodes, server_root, defines).map_err(|e| {
        if e.read_time || htaccel_engine::modules::core::sections::is_read_error(&e.message) {
            read_failure(&e.origin, &e.message)
        } else {
            format!(
                "AH00526: Syntax error on line {} of {}:\n{}",
                e.origin.line, e.origin.file, e.message
            )
        }
    })
}
