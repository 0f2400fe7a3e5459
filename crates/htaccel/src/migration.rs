//! The migration report of a whole server (`htaccel check -d SERVERROOT`):
//! will this Apache installation run unchanged on htaccel, and what does
//! its `.htaccess` cost Apache on every request?
//!
//! The configuration is read as the server reads it (`-d`, `-f`, `-D`).
//! A configuration that does not load is the first finding, with the
//! reason `-t` gives. Otherwise each site (the main server, each
//! `<VirtualHost>`) is checked with its own document root and
//! `AllowOverride` (`check::site_report`). Directives accepted with no
//! effect are noted wherever they appear, with the `docs/deviations.md`
//! row that explains them. Each site gets a verdict:
//!
//! * `ready`: nothing in it differs from Apache;
//! * `ready with notes`: directives htaccel accepts without effect;
//! * `needs attention`: an access file that would fail (500 or 403) or a
//!   directive htaccel does not implement.

use crate::check::{self, SiteReport};
use crate::cli::Start;
use htaccel_conf::{Node, ParseOptions};
use htaccel_engine::engine::Engine;
use htaccel_engine::site::Site;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;

/// The deliberate differences, as the repository documents them.
const DEVIATIONS: &str = include_str!("../../../docs/deviations.md");

/// Include depth followed when the configuration's directives are listed.
const MAX_INCLUDE_DEPTH: usize = 16;

/// The row of `docs/deviations.md` whose first cell names `directive`
/// (exactly, in backticks).
pub fn deviation_row(directive: &str) -> Option<&'static str> {
    let quoted = format!("`{directive}`");
    DEVIATIONS.lines().find(|line| {
        line.starts_with("| ")
            && line
                .split(" | ")
                .next()
                .is_some_and(|first| first.contains(&quoted))
    })
}

/// What a note says: the row's first cell and what htaccel does (its
/// third), or that the directive has no effect.
pub fn row_summary(row: Option<&str>) -> String {
    let Some(row) = row else {
        return "accepted; has no effect in htaccel".into();
    };
    let cells: Vec<&str> = row.trim_matches('|').split(" | ").map(str::trim).collect();
    match (cells.first(), cells.get(2)) {
        (Some(what), Some(ours)) => format!("{what}: htaccel {ours} (docs/deviations.md)"),
        _ => row.to_string(),
    }
}

/// The report; `Ok(true)` when every site is ready (notes allowed).
pub fn run(start: &Start, json: bool, out: &mut dyn std::io::Write) -> Result<bool, String> {
    let file = start.config_file();
    let mut w = |s: &str| writeln!(out, "{s}").map_err(|e| e.to_string());
    let engine = match start
        .load()
        .and_then(|loaded| Engine::new(&loaded, Arc::new(check::Quiet)))
    {
        Ok(e) => e,
        Err(reason) => {
            if json {
                let doc = json!({
                    "config": file.display().to_string(),
                    "loads": false,
                    "error": reason,
                    "verdict": "needs attention",
                    "sites": [],
                });
                w(&serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?)?;
            } else {
                w(&format!("{}: does not load:\n{reason}", file.display()))?;
                w("verdict: needs attention")?;
            }
            return Ok(false);
        }
    };
    let server_notes = config_deviations(&engine.main, &file, start);
    let mut sites = Vec::new();
    let mut ready = true;
    let mut text = Vec::new();
    text.push(format!("{}: loads", file.display()));
    for (line_file, line, name, row) in &server_notes {
        text.push(format!("{line_file}:{line}: {name}: {}", row_summary(*row)));
    }
    for site in std::iter::once(&engine.main).chain(engine.vhosts.iter()) {
        let root = std::path::Path::new(&site.document_root);
        let report = if root.is_dir() {
            Some(check::site_report(site, root))
        } else {
            None
        };
        let verdict = verdict(report.as_ref());
        ready &= verdict != "needs attention";
        text.push(String::new());
        text.push(format!(
            "site {} ({}), document root {}{}",
            site.server_name,
            addresses(site),
            root.display(),
            if report.is_none() { " (missing)" } else { "" }
        ));
        if let Some(r) = &report {
            text.extend(r.text_lines().into_iter().map(|l| format!("  {l}")));
            if let Some(c) = &r.cost {
                text.push(format!(
                    "  Apache per request there: about {} system calls for access files; htaccel: none",
                    c.syscalls()
                ));
            }
        }
        text.push(format!("  verdict: {verdict}"));
        sites.push(site_entry(site, report.as_ref(), verdict));
    }
    if json {
        let doc = json!({
            "config": file.display().to_string(),
            "loads": true,
            "deviations": server_notes.iter().map(|(f, line, name, row)| json!({
                "file": f, "line": line, "directive": name, "note": row_summary(*row),
            })).collect::<Vec<_>>(),
            "verdict": if ready { "ready" } else { "needs attention" },
            "sites": sites,
        });
        w(&serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?)?;
    } else {
        for l in &text {
            w(l)?;
        }
        w("")?;
        w(&format!(
            "verdict: {}",
            if ready { "ready" } else { "needs attention" }
        ))?;
    }
    Ok(ready)
}

fn verdict(report: Option<&SiteReport>) -> &'static str {
    match report {
        None => "ready",
        Some(r) if r.failed() > 0 || r.unsupported() > 0 => "needs attention",
        Some(r) if r.deviations() > 0 => "ready with notes",
        Some(_) => "ready",
    }
}

fn addresses(site: &Site) -> String {
    if site.addrs.is_empty() {
        "main server".into()
    } else {
        site.addrs.join(" ")
    }
}

/// One document root's findings, for `htaccel check DOCROOT --json`.
pub fn site_json(site: &Site, report: &SiteReport) -> Value {
    site_entry(site, Some(report), verdict(Some(report)))
}

fn site_entry(site: &Site, report: Option<&SiteReport>, verdict: &str) -> Value {
    let files: Vec<Value> = report
        .map(|r| r.files.iter().map(file_entry).collect())
        .unwrap_or_default();
    json!({
        "server_name": site.server_name,
        "addresses": site.addrs,
        "document_root": site.document_root,
        "document_root_exists": report.is_some(),
        "access_files": files,
        "errors": report.map_or(0, SiteReport::failed),
        "unsupported": report.map_or(0, SiteReport::unsupported),
        "deviations": report.map_or(0, SiteReport::deviations),
        "apache_per_request": report.and_then(|r| r.cost.as_ref()).map(|c| json!({
            "deepest_path": c.path,
            "levels": c.levels,
            "access_file_opens": c.opens,
            "access_files_read": c.reads,
            "bytes_parsed": c.bytes,
            "system_calls": c.syscalls(),
        })),
        "htaccel_per_request": { "access_file_opens": 0, "bytes_parsed": 0, "system_calls": 0 },
        "verdict": verdict,
    })
}

fn file_entry(f: &check::FileReport) -> Value {
    json!({
        "path": f.path,
        "read": !f.not_read,
        "status": if f.not_read { "not read" } else if f.failed() { "error" } else { "ok" },
        "errors": f.errors,
        "unsupported": f.unsupported.iter().map(|(line, name)| json!({"line": line, "directive": name})).collect::<Vec<_>>(),
        "deviations": f.deviations.iter().map(|(line, name, row)| json!({
            "line": line, "directive": name, "note": row_summary(*row),
        })).collect::<Vec<_>>(),
    })
}

/// The configuration's own directives that `docs/deviations.md` names:
/// file, line, directive, row. Includes are followed as the server
/// follows them (the branches `<IfModule>`/`<IfDefine>` take).
fn config_deviations(
    main: &Site,
    file: &Path,
    start: &Start,
) -> Vec<(String, u32, String, Option<&'static str>)> {
    let mut found = Vec::new();
    if let Ok(nodes) = htaccel_conf::parse_file(file, &ParseOptions::default()) {
        walk(
            main,
            &nodes,
            &file.display().to_string(),
            start,
            0,
            &mut found,
        );
    }
    found
}

fn walk(
    main: &Site,
    nodes: &[Node],
    file: &str,
    start: &Start,
    depth: usize,
    found: &mut Vec<(String, u32, String, Option<&'static str>)>,
) {
    check::directives_in(main, nodes, &mut |line, name, kind| {
        if kind == check::Kind::WithoutEffect {
            found.push((
                file.to_string(),
                line,
                name.to_string(),
                deviation_row(name),
            ));
        }
    });
    if depth >= MAX_INCLUDE_DEPTH {
        return;
    }
    let mut included = Vec::new();
    includes(main, nodes, &mut included);
    for pattern in included {
        let Ok(paths) = htaccel_conf::include_paths(&pattern, &start.server_root(), true) else {
            continue;
        };
        for p in paths {
            if let Ok(children) = htaccel_conf::parse_file(&p, &ParseOptions::default()) {
                walk(
                    main,
                    &children,
                    &p.display().to_string(),
                    start,
                    depth + 1,
                    found,
                );
            }
        }
    }
}

/// The patterns of the `Include`/`IncludeOptional` lines the server reads.
fn includes(main: &Site, nodes: &[Node], out: &mut Vec<String>) {
    for n in nodes {
        match n {
            Node::Directive(d)
                if d.name.eq_ignore_ascii_case("Include")
                    || d.name.eq_ignore_ascii_case("IncludeOptional") =>
            {
                out.extend(d.args.first().cloned());
            }
            Node::Section(s) if check::branch_taken(main, &s.name, &s.args) => {
                includes(main, &s.children, out)
            }
            _ => {}
        }
    }
}
