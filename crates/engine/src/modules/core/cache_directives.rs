//! htaccel's own server-level directives for the compiled-config tree and
//! the metadata cache (Apache has none: it re-reads everything per request).
//!
//! * `AccessFileWatch On|Off` — watch directories with inotify (default On);
//!   Off revalidates everything by `stat`, as on a network file system.
//! * `AccessFileCheckInterval SECONDS` — how long facts about a directory
//!   that is not watched are trusted (default 2; 0 = `stat` on every
//!   request, Apache's behaviour; fractions such as 0.5 are accepted).
//! * `StatCacheEntries N` — bound of the file-metadata cache (default
//!   16384; 0 = no cache).
//! * `AccessFileMaxSize BYTES`, `AccessFileMaxDirectives N` — a larger
//!   access file fails like a broken one (500 for its subtree).
//!
//! The first three are process-wide and so refused inside `<VirtualHost>`;
//! the limits may differ per virtual host.

use crate::config::server::{Global, ServerConf};
use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::registry::flag;
use std::time::Duration;

fn global<'w>(w: &'w mut Walker<'_>, inv: &Invocation<'_>) -> Result<&'w mut Global, String> {
    let build = w.server.as_deref_mut().ok_or("not allowed here")?;
    if build.in_virtual_host() {
        return Err(format!(
            "{} cannot occur within <VirtualHost> section",
            inv.name
        ));
    }
    Ok(&mut build.global)
}

fn server<'w>(w: &'w mut Walker<'_>) -> Result<&'w mut ServerConf, String> {
    w.server()
}

fn count<T: std::str::FromStr>(inv: &Invocation<'_>) -> Result<T, String> {
    inv.words[0]
        .parse()
        .map_err(|_| format!("{} needs a non-negative whole number", inv.name))
}

/// Seconds, possibly fractional, at most a day.
fn seconds(inv: &Invocation<'_>) -> Result<Duration, String> {
    let bad = || format!("{} needs a number of seconds (0 to 86400)", inv.name);
    let v: f64 = inv.words[0].parse().map_err(|_| bad())?;
    if !(0.0..=86_400.0).contains(&v) || v.is_nan() {
        return Err(bad());
    }
    Ok(Duration::from_millis((v * 1000.0).round() as u64))
}

pub fn run_watch(w: &mut Walker<'_>, inv: &Invocation<'_>, _c: &mut DirConf) -> Result<(), String> {
    global(w, inv)?.access_file_watch = Some(flag(&inv.words));
    Ok(())
}

pub fn run_check_interval(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    let d = seconds(inv)?;
    global(w, inv)?.access_file_check_interval = Some(d);
    Ok(())
}

pub fn run_stat_cache_entries(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    let n = count(inv)?;
    global(w, inv)?.stat_cache_entries = Some(n);
    Ok(())
}

pub fn run_max_size(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    let n: u64 = count(inv)?;
    if n == 0 {
        return Err(format!("{} must be at least 1", inv.name));
    }
    server(w)?.access_file_max_size = Some(n);
    Ok(())
}

pub fn run_max_directives(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    let n: usize = count(inv)?;
    if n == 0 {
        return Err(format!("{} must be at least 1", inv.name));
    }
    server(w)?.access_file_max_directives = Some(n);
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::engine::load;
    use std::time::Duration;

    fn read(text: &str) -> Result<crate::engine::Loaded, String> {
        let nodes = htaccel_conf::parse_str(text, "t.conf", &htaccel_conf::ParseOptions::default())
            .map_err(|e| e.message)?;
        load(&nodes, "/".into(), Vec::new()).map_err(|e| e.message)
    }

    #[test]
    fn settings_are_read() {
        let l = read(
            "AccessFileWatch Off\nAccessFileCheckInterval 0.5\nStatCacheEntries 10\nAccessFileMaxSize 100\nAccessFileMaxDirectives 7\n",
        )
        .unwrap();
        let g = &l.build.global;
        assert_eq!(g.access_file_watch, Some(false));
        assert_eq!(
            g.access_file_check_interval,
            Some(Duration::from_millis(500))
        );
        assert_eq!(g.stat_cache_entries, Some(10));
        assert_eq!(l.build.main.access_file_max_size, Some(100));
        assert_eq!(l.build.main.access_file_max_directives, Some(7));
    }

    #[test]
    fn bad_values_and_contexts_are_refused() {
        assert!(read("AccessFileCheckInterval -1\n").is_err());
        assert!(read("AccessFileCheckInterval soon\n").is_err());
        assert!(read("AccessFileMaxSize 0\n").is_err());
        assert!(read("<Directory />\nAccessFileCheckInterval 1\n</Directory>\n").is_err());
        let e = read("<VirtualHost *:80>\nAccessFileWatch Off\n</VirtualHost>\n")
            .err()
            .unwrap();
        assert!(e.contains("VirtualHost"), "{e}");
        assert!(read("<VirtualHost *:80>\nAccessFileMaxSize 10\n</VirtualHost>\n").is_ok());
    }
}
