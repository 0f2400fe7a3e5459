//! What `apache2 -t` prints: `Syntax OK`, or the dumps of `-S`
//! (`DUMP_VHOSTS`, `DUMP_RUN_CFG`) and `-M` (`DUMP_MODULES`), in Apache's
//! layout, since tools (apachectl's `status`, control panels, certbot)
//! read them; and `-v`/`-V`.

use crate::cli::Start;
use htaccel_engine::config::server::ServerConf;
use htaccel_engine::engine::Loaded;
use std::fmt::Write;

/// After a configuration loaded: the dumps `-D` asks for, else `Syntax OK`.
pub fn config_test(start: &Start, loaded: &Loaded) -> Result<(), String> {
    let mut out = String::new();
    let mut dumped = false;
    if start.defined("DUMP_INCLUDES") {
        out.push_str(&includes(start, loaded));
        dumped = true;
    }
    if start.defined("DUMP_VHOSTS") {
        out.push_str(&vhosts(loaded));
        dumped = true;
    }
    if start.defined("DUMP_RUN_CFG") {
        out.push_str(&run_settings(start, loaded));
        dumped = true;
    }
    if start.defined("DUMP_MODULES") {
        out.push_str(&modules(loaded));
        dumped = true;
    }
    print!("{out}");
    if !dumped {
        eprintln!("Syntax OK");
    }
    Ok(())
}

/// `-D DUMP_INCLUDES`: the main file, then each included file indented by
/// its depth, with the line Apache shows for it.
pub fn includes(start: &Start, loaded: &Loaded) -> String {
    let mut out = String::from("Included configuration files:\n");
    let _ = writeln!(out, "  (*) {}", start.config_file().display());
    for (depth, line, path) in &loaded.env.includes.files {
        let indent = 4 + 2 * depth;
        let _ = writeln!(out, "{:indent$}({line}) {}", "", path.display());
    }
    out
}

/// The modules compiled into Debian's `apache2`, in the order `-M` lists them.
const STATIC_ORDER: &[&str] = &[
    "core_module",
    "so_module",
    "watchdog_module",
    "http_module",
    "log_config_module",
    "logio_module",
    "version_module",
    "unixd_module",
];

/// `-l`: the source files of the modules always present, in Apache's
/// order.
pub fn compiled_modules() -> String {
    let mut statics: Vec<(&str, &str)> = Vec::new();
    for m in htaccel_engine::modules::builtin() {
        if !statics.iter().any(|(id, _)| *id == m.identifier) {
            statics.push((m.identifier, m.source));
        }
    }
    let rank = |m: &(&str, &str)| {
        STATIC_ORDER
            .iter()
            .position(|s| *s == m.0)
            .unwrap_or(usize::MAX)
    };
    statics.sort_by_key(rank);
    let mut out = String::from("Compiled in modules:\n");
    for (_, source) in statics {
        let _ = writeln!(out, "  {source}");
    }
    out
}

/// `-D DUMP_MODULES`: the modules always present (in Apache's order),
/// then those `LoadModule` loaded, each once (htaccel splits some of
/// Apache's modules' directive tables over several entries).
pub fn modules(loaded: &Loaded) -> String {
    let mut statics: Vec<&str> = Vec::new();
    let mut shared: Vec<&str> = Vec::new();
    for m in &loaded.env.modules {
        let list = if m.builtin { &mut statics } else { &mut shared };
        if !list.contains(&m.identifier) {
            list.push(m.identifier);
        }
    }
    let rank = |id: &&str| {
        STATIC_ORDER
            .iter()
            .position(|s| s == id)
            .unwrap_or(usize::MAX)
    };
    statics.sort_by_key(rank);
    let mut out = String::from("Loaded Modules:\n");
    for id in statics {
        let _ = writeln!(out, " {id} (static)");
    }
    for id in shared {
        let _ = writeln!(out, " {id} (shared)");
    }
    out
}

/// One `<VirtualHost>` address as Apache shows it: `*:PORT` for the
/// wildcards (`*`, `_default_`), `*` for a missing port.
fn shown_address(spec: &str) -> (String, bool) {
    let (host, port) = match spec.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() && (!h.contains(':') || h.ends_with(']')) => (h, p),
        _ => (spec, "*"),
    };
    let wildcard = host == "*" || host == "_default_";
    let host = if wildcard { "*" } else { host };
    (format!("{host}:{port}"), wildcard)
}

/// The port part of a shown address (`*` when none).
fn port_of(shown: &str) -> &str {
    shown.rsplit_once(':').map_or("*", |(_, p)| p)
}

/// A server's name as Apache shows it: `ServerName` without scheme and
/// port; for a `<VirtualHost>` without one, the name of its address when
/// it is a specific one, else the main server's.
fn server_name(conf: &ServerConf, main_name: &str, address: Option<&str>) -> String {
    if let Some(name) = &conf.server_name {
        let bare = name.split("://").last().unwrap_or(name);
        let bare = match bare.rsplit_once(':') {
            Some((h, p)) if p.chars().all(|c| c.is_ascii_digit()) && !h.ends_with(':') => h,
            _ => bare,
        };
        return bare.to_string();
    }
    match address.map(|a| a.trim_start_matches('[').trim_end_matches(']').parse()) {
        Some(Ok(ip)) => htaccel_engine::dns::reverse(ip)
            .unwrap_or_else(|| "bogus_host_without_reverse_dns".into()),
        _ => main_name.to_string(),
    }
}

/// The main server's name: `ServerName`, else the host's fully qualified
/// name, else `127.0.0.1` (Apache's `ap_get_local_host` falls back the same
/// way, with its AH00558 warning).
fn main_name(loaded: &Loaded) -> String {
    let main = &loaded.build.main;
    if main.server_name.is_some() {
        return server_name(main, "", None);
    }
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let host = host.trim();
    if host.contains('.') {
        host.to_string()
    } else {
        "127.0.0.1".to_string()
    }
}

/// Apache's AH00558 when the main server has no `ServerName` and the
/// host's name is not a fully qualified one.
pub fn guessed_name_warning(loaded: &Loaded) -> Option<String> {
    if loaded.build.main.server_name.is_some() {
        return None;
    }
    let name = main_name(loaded);
    (name == "127.0.0.1").then(|| {
        format!(
            "AH00558: htaccel: Could not reliably determine the server's fully qualified domain name, using {name}. Set the 'ServerName' directive globally to suppress this message"
        )
    })
}

/// `-D DUMP_VHOSTS`: each address with the virtual hosts on it; specific
/// addresses first, then the wildcards, each in the order of the files.
pub fn vhosts(loaded: &Loaded) -> String {
    let main = main_name(loaded);
    // (shown address, wildcard, vhost indexes)
    let mut groups: Vec<(String, bool, Vec<usize>)> = Vec::new();
    for (i, v) in loaded.build.vhosts.iter().enumerate() {
        for a in &v.addrs {
            let (shown, wildcard) = shown_address(a);
            match groups.iter_mut().find(|g| g.0 == shown) {
                Some(g) => g.2.push(i),
                None => groups.push((shown, wildcard, vec![i])),
            }
        }
    }
    // Apache keeps specific addresses in a hash table by the XOR of the
    // address's last four bytes and lists them bucket by bucket; the
    // wildcards after them, in the order of the files.
    groups.sort_by_key(|g| (g.1, (!g.1).then(|| bucket(&g.0))));
    let mut out = String::from("VirtualHost configuration:\n");
    for (shown, wildcard, members) in &groups {
        let address = (!wildcard).then(|| shown.rsplit_once(':').map_or("", |(h, _)| h));
        let entry = |i: usize| {
            let v = &loaded.build.vhosts[i];
            let (file, line) = v
                .origin
                .as_ref()
                .map_or((String::new(), 0), |o| (o.file.to_string(), o.line));
            (server_name(v, &main, address), format!("({file}:{line})"))
        };
        if let [only] = members[..] {
            let (name, at) = entry(only);
            let _ = writeln!(out, "{shown:<22} {name} {at}");
            continue;
        }
        let (name, at) = entry(members[0]);
        let _ = writeln!(out, "{shown:<22} is a NameVirtualHost");
        let _ = writeln!(out, "{:8} default server {name} {at}", "");
        for &i in members {
            let (name, at) = entry(i);
            let _ = writeln!(
                out,
                "{:8} port {} namevhost {name} {at}",
                "",
                port_of(shown)
            );
            let aliases = &loaded.build.vhosts[i].server_aliases;
            let wild = |a: &&String| a.contains(['*', '?']);
            for a in aliases.iter().filter(|a| !wild(a)) {
                let _ = writeln!(out, "{:16} alias {a}", "");
            }
            for a in aliases.iter().filter(wild) {
                let _ = writeln!(out, "{:16} wild alias {a}", "");
            }
        }
    }
    out
}

/// The hash bucket of a specific address (`0` when it is not one).
fn bucket(shown: &str) -> u8 {
    let host = shown.rsplit_once(':').map_or(shown, |(h, _)| h);
    let bytes: Vec<u8> = match host.trim_start_matches('[').trim_end_matches(']').parse() {
        Ok(std::net::IpAddr::V4(v4)) => v4.octets().to_vec(),
        Ok(std::net::IpAddr::V6(v6)) => v6.octets()[12..].to_vec(),
        Err(_) => return 0,
    };
    bytes.iter().fold(0, |h, b| h ^ b)
}

/// `-D DUMP_RUN_CFG`: where things are and who the server runs as.
pub fn run_settings(start: &Start, loaded: &Loaded) -> String {
    let main = &loaded.build.main;
    let global = &loaded.build.global;
    let root = &loaded.env.server_root;
    let mut out = String::new();
    let _ = writeln!(out, "ServerRoot: \"{}\"", root.display());
    if let Some(d) = &main.document_root {
        let _ = writeln!(out, "Main DocumentRoot: \"{}\"", d.display());
    }
    let error_log = main.error_log.as_deref().unwrap_or("/dev/stderr");
    let error_log = if error_log.starts_with(['/', '|']) || crate::syslog::is_syslog(error_log) {
        error_log.to_string()
    } else {
        root.join(error_log).to_string_lossy().into_owned()
    };
    let _ = writeln!(out, "Main ErrorLog: \"{error_log}\"");
    if let Some(p) = &global.pid_file {
        let _ = writeln!(
            out,
            "PidFile: \"{}\"",
            crate::pidfile::path(p, root).display()
        );
    }
    // The command line's names in their order, then the others by name.
    let mut others: Vec<(&String, &String)> = loaded
        .env
        .defines
        .iter()
        .filter(|(name, _)| !start.defines.contains(name))
        .collect();
    others.sort();
    let named = start
        .defines
        .iter()
        .filter_map(|d| loaded.env.defines.get_key_value(d));
    for (name, value) in named.chain(others) {
        if value.is_empty() {
            let _ = writeln!(out, "Define: {name}");
        } else {
            let _ = writeln!(out, "Define: {name}={value}");
        }
    }
    let user_id = global
        .user
        .as_deref()
        .and_then(|u| crate::privileges::lookup_user(u).ok())
        .map(|ids| ids.0);
    let group_id = global
        .group
        .as_deref()
        .and_then(|g| crate::privileges::lookup_group(g).ok());
    let shown = |name: Option<&String>, id: Option<u32>| match (name, id) {
        (Some(n), Some(id)) => format!("name=\"{n}\" id={id}"),
        (Some(n), None) => format!("name=\"{n}\" id=(unknown)"),
        (None, _) => "name=\"#-1\" id=4294967295".to_string(),
    };
    let _ = writeln!(out, "User: {}", shown(global.user.as_ref(), user_id));
    let _ = writeln!(out, "Group: {}", shown(global.group.as_ref(), group_id));
    out
}

/// `-v`.
pub fn version() -> String {
    format!(
        "Server version: htaccel/{} (Apache httpd 2.4 configuration)\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// `-V`: the version and the settings compiled in, in the lines scripts
/// read (`HTTPD_ROOT`, `SERVER_CONFIG_FILE`).
pub fn settings() -> String {
    let mut out = version();
    out.push_str("Architecture:   64-bit\n");
    out.push_str("Server MPM:     htaccel (one event loop per core)\n");
    out.push_str("  threaded:     yes (fixed thread count)\n");
    out.push_str("    forked:     no\n");
    out.push_str("Server compiled with....\n");
    out.push_str(" -D APR_HAVE_IPV6 (IPv4-mapped addresses enabled)\n");
    let _ = writeln!(
        out,
        " -D HTTPD_ROOT=\"{}\"",
        crate::startup::default_server_root().display()
    );
    out.push_str(" -D SERVER_CONFIG_FILE=\"apache2.conf\"\n");
    out
}
