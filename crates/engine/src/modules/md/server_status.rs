//! mod_md's part of `server-status` (`md_domains_status_hook`,
//! `md_ocsp_status_hook`), shown with `MDServerStatus on`: the "Managed
//! Certificates" table of the HTML page, and on `?auto` the counts and
//! one `ManagedDomain[i]…` line per fact. Like mod_md, it is drawn from
//! the same JSON description the `md-status` handler sends
//! ([`super::json`]), cell by cell in mod_md's column order.

use super::json;
use crate::request::Ctx;
use crate::uri::escape_html_ascii;
use serde_json::Value;
use std::fmt::Write;

/// mod_status's `AP_STATUS_SHORT` (`?auto`) or the HTML page.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    Html,
    Auto,
}

/// mod_md's certificate check link (`MDCertificateCheck`'s default).
const CHECK_NAME: &str = "crt.sh";
const CHECK_URL: &str = "https://crt.sh?q=";
const SECS_PER_DAY: i64 = 86_400;

struct Page {
    out: String,
    form: Form,
    /// What each `?auto` line starts with.
    prefix: String,
    now: i64,
}

fn esc(s: &str) -> String {
    escape_html_ascii(s.as_bytes())
}

fn str_at<'v>(v: &'v Value, path: &str) -> Option<&'v str> {
    v.pointer(path).and_then(Value::as_str)
}

fn time_at(v: &Value, path: &str) -> i64 {
    str_at(v, path)
        .and_then(crate::http::date::parse_http_date)
        .unwrap_or(0)
}

/// `YYYY-MM-DD` of a time (`apr_strftime("%Y-%m-%d")`, GMT).
fn day(t: i64) -> String {
    let (y, m, d) = crate::http::date::civil_from_days(t.div_euclid(SECS_PER_DAY));
    format!("{y:04}-{m:02}-{d:02}")
}

/// `md_duration_roughly`.
fn roughly(secs: i64) -> String {
    let (days, rem) = (secs / SECS_PER_DAY, secs % SECS_PER_DAY);
    if days > 0 {
        return format!("~{days} days");
    }
    let (hours, minutes, seconds) = (rem / 3600, rem % 3600 / 60, rem % 60);
    if hours > 0 {
        format!("~{hours} hours")
    } else if minutes > 0 {
        format!("~{minutes} minutes")
    } else if seconds > 0 {
        format!("~{seconds} seconds")
    } else {
        "0 seconds".into()
    }
}

impl Page {
    fn html(&self) -> bool {
        self.form == Form::Html
    }

    /// `print_date`.
    fn date(&mut self, t: i64, title: &str) {
        if t <= 0 {
            return;
        }
        if self.html() {
            let _ = write!(
                self.out,
                "<span title='{}' style='white-space: nowrap;'>{}</span>",
                esc(title),
                day(t)
            );
        } else {
            let _ = writeln!(self.out, "{}{title}: {}", self.prefix, day(t));
        }
    }

    /// `print_time`.
    fn time(&mut self, label: &str, t: i64) {
        if t == 0 {
            return;
        }
        if !self.html() {
            let _ = writeln!(self.out, "{}{label}: {}", self.prefix, t - self.now);
            return;
        }
        let sep = if label.is_empty() { "" } else { " " };
        let stamp = json::date(t);
        let (delta, pre, post) = if t > self.now {
            (t - self.now, "in ", "")
        } else {
            (self.now - t, "", " ago")
        };
        if delta >= 4 * SECS_PER_DAY {
            let _ = write!(
                self.out,
                "{label}{sep}<span title='{stamp}' style='white-space: nowrap;'>{}</span>",
                day(t)
            );
        } else {
            let _ = write!(
                self.out,
                "{label}{sep}<span title='{stamp}'>{pre}{}{post}</span>",
                roughly(delta)
            );
        }
    }

    /// `add_json_val`: arrays item by item (`[i]` on `?auto`), strings as
    /// they are, numbers and objects as compact JSON, booleans on/off.
    fn value(&mut self, v: &Value, separator: &str) {
        if let Value::Array(items) = v {
            let prefix = self.prefix.clone();
            for (i, item) in items.iter().enumerate() {
                if self.html() {
                    if i > 0 {
                        self.out.push_str(separator);
                    }
                } else {
                    self.prefix = format!("{prefix}[{i}]");
                }
                self.value(item, separator);
            }
            self.prefix = prefix;
            return;
        }
        if !self.html() {
            self.out.push_str(&self.prefix);
            self.out.push_str(": ");
        }
        match v {
            Value::String(s) => self.out.push_str(s),
            Value::Bool(b) => self.out.push_str(if *b { "on" } else { "off" }),
            Value::Number(_) | Value::Object(_) => self.out.push_str(&v.to_string()),
            _ => {}
        }
        if !self.html() {
            self.out.push('\n');
        }
    }

    /// A cell shown as its value, with the label on `?auto`.
    fn plain(&mut self, label: &str, v: Option<&Value>) {
        let Some(v) = v else { return };
        let prefix = self.prefix.clone();
        if !self.html() {
            self.prefix.push_str(label);
        }
        self.value(v, " ");
        self.prefix = prefix;
    }

    /// `si_val_names`.
    fn names(&mut self, md: &Value) {
        let prefix = self.prefix.clone();
        if self.html() {
            self.out.push_str("<div style=\"max-width:400px;\">");
        } else {
            self.prefix.push_str("Names");
        }
        if let Some(v) = md.get("domains") {
            self.value(v, " ");
        }
        if self.html() {
            self.out.push_str("</div>");
        }
        self.prefix = prefix;
    }

    /// `si_val_status`.
    fn status(&mut self, md: &Value) {
        let s = match md.get("state").and_then(Value::as_i64) {
            Some(1) => match str_at(md, "/state-descr") {
                Some(d) => format!("incomplete: {d}"),
                None => "incomplete".into(),
            },
            Some(2) | Some(3) => {
                let until = time_at(md, "/cert/valid/until");
                if until == 0 || until > self.now {
                    "good".into()
                } else {
                    "expired".into()
                }
            }
            Some(4) => "error".into(),
            Some(5) => "missing information".into(),
            _ => "unknown".into(),
        };
        if self.html() {
            self.out.push_str(&s);
        } else {
            let _ = writeln!(self.out, "{}Status: {s}", self.prefix);
        }
    }

    /// `si_val_cert_valid_time`.
    fn valid(&mut self, md: &Value) {
        let Some(cert) = md.get("cert") else { return };
        let sfrom = str_at(cert, "/valid/from");
        let suntil = str_at(cert, "/valid/until");
        let from = time_at(cert, "/valid/from");
        let until = time_at(cert, "/valid/until");
        if self.html() {
            let mut sep = false;
            if from > self.now {
                self.out.push_str("from ");
                self.date(from, sfrom.unwrap_or_default());
                sep = true;
            }
            if until != 0 {
                if sep {
                    self.out.push(' ');
                }
                self.out.push_str("until ");
                let until_text = suntil.unwrap_or_default();
                let title = match sfrom {
                    Some(f) => format!("{f} - {until_text}"),
                    None => until_text.to_string(),
                };
                self.date(until, &title);
            }
        } else {
            if from > self.now {
                self.date(from, "ValidFrom");
            }
            if until != 0 {
                self.date(until, "ValidUntil");
            }
        }
    }

    /// `si_val_ca_urls` (the effective CA, else each configured one).
    fn ca(&mut self, md: &Value) {
        let Some(ca) = md.get("ca") else { return };
        let urls: Vec<&str> = match str_at(ca, "/url") {
            Some(url) => vec![url],
            None => ca
                .get("urls")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default(),
        };
        for (i, url) in urls.into_iter().enumerate() {
            let name = super::ca_name(url);
            if self.html() {
                let _ = write!(
                    self.out,
                    "{}<a href='{}'>{}</a>",
                    if i > 0 { " " } else { "" },
                    esc(url),
                    esc(&name)
                );
            } else {
                let n = if i > 0 { i.to_string() } else { String::new() };
                let _ = writeln!(self.out, "{}CAName{n}: {name}", self.prefix);
                let _ = writeln!(self.out, "{}CAURL{n}: {url}", self.prefix);
            }
        }
    }

    /// `si_val_stapling`.
    fn stapling(&mut self, md: &Value) {
        if md.get("stapling").and_then(Value::as_bool) != Some(true) {
            return;
        }
        if self.html() {
            self.out.push_str("on");
        } else {
            let _ = writeln!(self.out, "{}Stapling: on", self.prefix);
        }
    }

    /// `si_val_remote_check`: a link per certificate to a site that
    /// shows it by fingerprint.
    fn check_at(&mut self, md: &Value) {
        let Some(Value::Object(certs)) = md.get("cert") else {
            return;
        };
        let prefix = format!("{}CheckAt", self.prefix);
        for (key, cert) in certs {
            let Some(fp) = str_at(cert, "/sha256-fingerprint") else {
                continue;
            };
            if self.html() {
                let _ = write!(
                    self.out,
                    "<a href=\"{CHECK_URL}{fp}\">{CHECK_NAME}[{key}]</a><br>"
                );
            } else {
                let _ = write!(
                    self.out,
                    "{prefix}Type: {key}\n{prefix}Name: {CHECK_NAME}\n{prefix}URL: {CHECK_URL}{fp}\n{prefix}Fingerprint: {fp}\n"
                );
            }
        }
    }

    /// `si_val_activity`.
    fn activity(&mut self, md: &Value) {
        let prefix = self.prefix.clone();
        if !self.html() {
            self.prefix.push_str("Activity");
        }
        if let Some(job) = md.get("renewal") {
            self.job_summary(md, job);
        } else {
            let t = time_at(md, "/renew-at");
            if t > self.now {
                self.time("Renew", t);
            } else if t != 0 || md.get("renew-mode").and_then(Value::as_i64) == Some(0) {
                let what = if t != 0 { "Pending" } else { "Manual renew" };
                if self.html() {
                    self.out.push_str(what);
                } else {
                    let _ = writeln!(self.out, "{}: {what}", self.prefix);
                }
            }
        }
        self.prefix = prefix;
    }

    /// `print_job_summary` for a renewal job.
    fn job_summary(&mut self, md: &Value, job: &Value) {
        let finished = job.get("finished").and_then(Value::as_bool) == Some(true);
        let status = job.pointer("/last/status").and_then(Value::as_i64);
        let mut line = String::new();
        if status.is_some_and(|s| s != 0) {
            let description = str_at(job, "/last/status-description").unwrap_or_default();
            let problem = str_at(job, "/last/problem");
            if self.html() {
                line = format!("{line} Error[{description}]: {}", problem.unwrap_or(""));
            } else {
                // A missing problem prints as C's printf prints NULL.
                let _ = write!(
                    self.out,
                    "{p}LastStatus: {description}\n{p}LastProblem: {}\n",
                    problem.unwrap_or("(null)"),
                    p = self.prefix
                );
            }
        }
        if !self.html() {
            let _ = writeln!(
                self.out,
                "{}Finished: {}",
                self.prefix,
                if finished { "yes" } else { "no" }
            );
        }
        if finished {
            let staged = job
                .get("cert")
                .and_then(Value::as_object)
                .map_or(0, |c| c.keys().filter(|k| *k != "valid").count());
            if self.html() {
                line = if staged > 0 {
                    format!(
                        "{line}  finished, {staged} new certificate{} staged.",
                        if staged > 1 { "s" } else { "" }
                    )
                } else {
                    format!("{line}  finished successfully.")
                };
            } else {
                let _ = writeln!(self.out, "{}NewStaged: {staged}", self.prefix);
            }
        } else if let Some(detail) = str_at(job, "/last/detail") {
            if self.html() {
                line = format!("{line} {detail}");
            } else {
                let _ = writeln!(self.out, "{}LastDetail: {detail}", self.prefix);
            }
        }
        // mod_md counts retries from the domain's own `errors`, a key its
        // description never has: no "(N retries)" is ever shown.
        let retries = md.get("errors").and_then(Value::as_i64).unwrap_or(0);
        if retries > 0 {
            if self.html() {
                line = format!(
                    "{line} ({retries} retr{}) ",
                    if retries > 1 { "y" } else { "ies" }
                );
            } else {
                let _ = writeln!(self.out, "{}Retries: {retries}", self.prefix);
            }
        }
        if self.html() {
            self.out.push_str(&line);
        }
        let next = time_at(job, "/next-run");
        if next > self.now && !finished {
            let label = if self.html() { "\nNext run" } else { "NextRun" };
            self.time(label, next);
        } else if !line.is_empty() {
            if self.html() {
                self.out.push_str("\nOngoing...");
            } else {
                let _ = writeln!(self.out, "{}: Ongoing", self.prefix);
            }
        }
    }

    /// One domain's row (`add_md_row`).
    fn row(&mut self, index: usize, md: &Value) {
        let base = self.prefix.clone();
        if self.html() {
            let _ = write!(
                self.out,
                "<tr class=\"{}\">",
                if index % 2 == 1 { "odd" } else { "even" }
            );
        }
        for column in COLUMNS {
            if self.html() {
                self.out.push_str("<td>");
            } else {
                self.prefix = format!("{base}[{index}]");
            }
            match column {
                "Domain" => self.plain(column, md.get("name")),
                "Names" => self.names(md),
                "Status" => self.status(md),
                "Valid" => self.valid(md),
                "CA" => self.ca(md),
                "Stapling" => self.stapling(md),
                "CheckAt" => self.check_at(md),
                _ => self.activity(md),
            }
            if self.html() {
                self.out.push_str("</td>");
            }
            self.prefix = base.clone();
        }
        if self.html() {
            self.out.push_str("</tr>");
        }
    }
}

/// mod_md's columns (`status_infos`).
const COLUMNS: [&str; 8] = [
    "Domain", "Names", "Status", "Valid", "CA", "Stapling", "CheckAt", "Activity",
];

/// The counts of `?auto` (`md_status_take_stock`).
fn stock(domains: &[Value], now: i64) -> [usize; 5] {
    let (mut total, mut complete, mut renewing, mut errored, mut ready) = (0, 0, 0, 0, 0);
    for md in domains {
        total += 1;
        let state = md.get("state").and_then(Value::as_i64);
        if !matches!(state, Some(1) | Some(2)) {
            errored += 1;
            continue;
        }
        if state == Some(2) {
            complete += 1;
        }
        if time_at(md, "/renew-at") <= now {
            renewing += 1;
            if let Some(job) = md.get("renewal") {
                let failed = job.get("errors").and_then(Value::as_i64).unwrap_or(0) > 0
                    || job
                        .pointer("/last/status")
                        .and_then(Value::as_i64)
                        .is_some_and(|s| s != 0);
                if failed {
                    errored += 1;
                } else if job.get("finished").and_then(Value::as_bool) == Some(true) {
                    ready += 1;
                }
            }
        }
    }
    [total, complete, renewing, errored, ready]
}

/// The section, for the page `short` (`?auto`) or not; `None` unless
/// `MDServerStatus on` and mod_md is loaded.
pub fn managed_certificates(ctx: &Ctx<'_>, short: bool) -> Option<String> {
    let engine = ctx.engine;
    if !engine.modules.md.server_status || !ctx.site.env.is_loaded("md_module") {
        return None;
    }
    let now = crate::http::date::unix_secs(std::time::SystemTime::now());
    let all = json::all(&engine.modules.md.domains, now);
    let domains: Vec<Value> = all
        .get("managed-domains")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut page = Page {
        out: String::new(),
        form: if short { Form::Auto } else { Form::Html },
        prefix: "ManagedCertificates".into(),
        now,
    };
    if short {
        let [total, ok, renew, errored, ready] = stock(&domains, now);
        let _ = write!(
            page.out,
            "ManagedCertificatesTotal: {total}\nManagedCertificatesOK: {ok}\nManagedCertificatesRenew: {renew}\nManagedCertificatesErrored: {errored}\nManagedCertificatesReady: {ready}\n"
        );
    }
    if domains.is_empty() {
        return Some(page.out);
    }
    if short {
        page.prefix = "ManagedDomain".into();
    } else {
        page.out.push_str(
            "<hr>\n<h3>Managed Certificates</h3>\n<table class='md_status'><thead><tr>\n",
        );
        for c in COLUMNS {
            let _ = write!(page.out, "<th class=\"{c}\">{c}</th>");
        }
        page.out.push_str("</tr>\n</thead><tbody>");
    }
    for (i, md) in domains.iter().enumerate() {
        page.row(i, md);
    }
    if !short {
        page.out.push_str("</td></tr>\n</tbody>\n</table>\n");
    }
    Some(page.out)
}

/// mod_md's OCSP stapling section: htaccel staples nothing (`MDStapling
/// on` is refused), so `?auto` has the counts, all zero, and the HTML
/// page nothing.
pub fn managed_staplings(ctx: &Ctx<'_>, short: bool) -> Option<String> {
    if !ctx.engine.modules.md.server_status || !ctx.site.env.is_loaded("md_module") {
        return None;
    }
    Some(if short {
        "ManagedStaplingsTotal: 0\nManagedStaplingsOK: 0\nManagedStaplingsRenew: 0\nManagedStaplingsErrored: 0\n"
            .into()
    } else {
        String::new()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_roughly_as_mod_md_prints_them() {
        assert_eq!(roughly(5 * SECS_PER_DAY + 7), "~5 days");
        assert_eq!(roughly(7200 + 59), "~2 hours");
        assert_eq!(roughly(61), "~1 minutes");
        assert_eq!(roughly(59), "~59 seconds");
        assert_eq!(roughly(0), "0 seconds");
        assert_eq!(day(0), "1970-01-01");
        assert_eq!(day(1_795_914_000), "2026-11-29");
        assert_eq!(day(1_795_910_399), "2026-11-28");
    }

    #[test]
    fn a_failed_renewal_reads_as_mod_md_summarises_it() {
        let md = serde_json::json!({ "renewal": {
            "finished": false, "next-run": json::date(2_000_000_100), "errors": 3,
            "last": { "status": 111, "status-description": "Connection refused",
                      "detail": "new order: refused" } } });
        let mut page = Page {
            out: String::new(),
            form: Form::Auto,
            prefix: "ManagedDomain[0]".into(),
            now: 2_000_000_000,
        };
        page.activity(&md);
        assert_eq!(
            page.out,
            "ManagedDomain[0]ActivityLastStatus: Connection refused\n\
             ManagedDomain[0]ActivityLastProblem: (null)\n\
             ManagedDomain[0]ActivityFinished: no\n\
             ManagedDomain[0]ActivityLastDetail: new order: refused\n\
             ManagedDomain[0]ActivityNextRun: 100\n"
        );
        page.form = Form::Html;
        page.out.clear();
        page.activity(&md);
        assert_eq!(
            page.out,
            " Error[Connection refused]:  new order: refused\nNext run <span title='Wed, 18 May 2033 03:35:00 GMT'>in ~1 minutes</span>"
        );
    }
}
