//! `--summary-json FILE`: what each case of the run came to, as JSON, for
//! reports assembled outside the harness (`scripts/security_report.py`
//! turns the `security/` cases into `docs/security.md`). One object per
//! case that ran: its name and README line, requests planned, answers
//! identical to Apache's, requests not sent (not expressible over
//! HTTP/2), answers that carried a secret marker, requests that differed
//! and what differed in them by class (the status line, a header by name,
//! the body, the connection), whether it could run at all, seconds, and
//! the run's `--repeat` and `DIFFTEST_SCALE`.

use crate::runner::CaseResult;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

pub fn write(path: &Path, results: &[CaseResult], repeat: usize) -> Result<(), String> {
    let scale = std::env::var("DIFFTEST_SCALE").unwrap_or_else(|_| "1".into());
    let mut out = String::from("[\n");
    for (i, r) in results.iter().enumerate() {
        let _ = writeln!(
            out,
            "  {{\"name\": {}, \"readme\": {}, \"requests\": {}, \"identical\": {}, \
             \"not_sent\": {}, \"leaks\": {}, \"differing\": {}, \"classes\": {{{}}}, \"error\": {}, \
             \"seconds\": {:.1}, \"repeat\": {repeat}, \"scale\": {}}}{}",
            string(&r.name),
            string(r.readme.as_deref().unwrap_or("")),
            r.requests,
            r.identical,
            r.skipped.len(),
            r.leaks,
            r.diffs.len(),
            classes(r)
                .iter()
                .map(|(c, n)| format!("{}: {n}", string(c)))
                .collect::<Vec<_>>()
                .join(", "),
            r.error
                .as_deref()
                .map(string)
                .unwrap_or_else(|| "null".into()),
            r.elapsed.as_secs_f64(),
            string(&scale),
            if i + 1 < results.len() { "," } else { "" },
        );
    }
    out.push_str("]\n");
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(path, out).map_err(|e| format!("{}: {e}", path.display()))
}

/// How many differing requests differed in each respect: the part of a
/// problem's description before its first `:` (`status line`, `header
/// content-type`, `body`, `connection`, `leaked secret marker(s)`), with a
/// pipelined exchange's `response N: ` left out.
fn classes(r: &CaseResult) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for d in &r.diffs {
        let mut seen: Vec<String> = d
            .problems
            .iter()
            .map(|p| {
                let p = p.trim_start_matches("* ");
                let p = match p.strip_prefix("response ") {
                    Some(rest) => rest.split_once(": ").map_or(p, |(_, tail)| tail),
                    None => p,
                };
                p.split(':').next().unwrap_or(p).trim().to_string()
            })
            .collect();
        seen.sort();
        seen.dedup();
        for c in seen {
            *out.entry(c).or_insert(0) += 1;
        }
    }
    out
}

/// A JSON string literal.
fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn strings_are_escaped() {
        assert_eq!(super::string("a\"b\\c\nd"), "\"a\\\"b\\\\c\\u000ad\"");
    }
}
