//! Running one case from start to end: build the trees, start the servers,
//! send every request to both, compare, stop, keep the logs.

use crate::cases::Case;
use crate::client::Exchange;
use crate::compare::differences;
use crate::h2request::H2Request;
use crate::protocol::Protocol;
use crate::report;
use crate::requests::Request;
use crate::sandbox::{Sandbox, Side};
use crate::servers::{start_apache, start_htaccel, tails, Other, Server};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// Apache marks an ETag weak when the file changed less than a second
/// before the request; files this fresh would make the two servers differ.
const SETTLE: Duration = Duration::from_millis(2100);
/// A case whose requests take longer than this is cut short (a server
/// that hangs on every request would otherwise cost minutes)...
const CASE_BUDGET: Duration = Duration::from_secs(180);
/// ... or, for the generated sets of tens of thousands of requests, longer
/// than this per exchange.
const EXCHANGE_BUDGET: Duration = Duration::from_millis(4);

/// What every case needs to know.
pub struct Settings {
    pub apache: PathBuf,
    pub other: Other,
    pub oracle: String,
    pub tmp_root: PathBuf,
    pub out_root: PathBuf,
    pub keep: bool,
    pub apache_only: bool,
    /// GET and HEAD requests go this many times to the other server.
    pub repeat: usize,
    /// The HTTP version the client speaks to both servers.
    pub protocol: Protocol,
}

/// One request whose answers differ.
pub struct RequestDiff {
    pub request: Request,
    pub problems: Vec<String>,
    pub apache: Exchange,
    pub other: Exchange,
}

/// The outcome of a case.
pub struct CaseResult {
    pub name: String,
    pub readme: Option<String>,
    pub requests: usize,
    pub identical: usize,
    /// Requests not sent because the protocol cannot express them (over
    /// HTTP/2): the line of each in the `requests` file and why.
    pub skipped: Vec<(usize, String)>,
    /// Answers of the compared server that carried a secret marker.
    pub leaks: usize,
    pub diffs: Vec<RequestDiff>,
    /// The case could not be run at all.
    pub error: Option<String>,
    /// Tails of Apache's and the other server's logs.
    pub apache_log: String,
    pub other_log: String,
    /// `--apache-only`: what Apache answered, for reading.
    pub transcript: String,
    pub elapsed: Duration,
}

impl CaseResult {
    pub fn passed(&self) -> bool {
        self.error.is_none() && self.diffs.is_empty()
    }

    fn new(case: &Case) -> CaseResult {
        CaseResult {
            name: case.name.clone(),
            readme: case.readme.clone(),
            requests: 0,
            identical: 0,
            skipped: Vec::new(),
            leaks: 0,
            diffs: Vec::new(),
            error: None,
            apache_log: String::new(),
            other_log: String::new(),
            transcript: String::new(),
            elapsed: Duration::ZERO,
        }
    }

    /// A case that could not be run at all.
    pub fn failed(case: &Case, error: String) -> CaseResult {
        CaseResult {
            error: Some(error),
            ..CaseResult::new(case)
        }
    }
}

pub fn run_case(case: &Case, s: &Settings) -> CaseResult {
    let started = Instant::now();
    let mut result = CaseResult::new(case);
    if let Err(e) = run(case, s, &mut result) {
        result.error = Some(e);
    }
    result.elapsed = started.elapsed();
    result
}

fn run(case: &Case, s: &Settings, result: &mut CaseResult) -> Result<(), String> {
    let requests = case.requests.as_ref().map_err(Clone::clone)?;
    result.requests = requests.len();
    let sb = Sandbox::create(&s.tmp_root, case, s.keep)?;
    let out_dir = s.out_root.join(case.slug());
    let _ = fs::remove_dir_all(&out_dir);
    let outcome = serve_and_compare(case, s, &sb, requests, result);
    keep_logs(&sb, &out_dir);
    outcome
}

fn serve_and_compare(
    case: &Case,
    s: &Settings,
    sb: &Sandbox,
    requests: &[Request],
    result: &mut CaseResult,
) -> Result<(), String> {
    // Started first, stopped last (when this goes out of scope).
    let _fpm = if case.needs.iter().any(|n| n == "php-fpm") {
        Some(crate::fpm::start(&sb.dir).map_err(|e| format!("PHP-FPM did not start: {e}"))?)
    } else {
        None
    };
    let _upstream = if case.needs.iter().any(|n| n == "upstream") {
        Some(
            crate::upstream::start(&sb.dir, &crate::locate::repo_root())
                .map_err(|e| format!("the upstream application did not start: {e}"))?,
        )
    } else {
        None
    };
    let _flask = if case.needs.iter().any(|n| n == "flask") {
        Some(
            crate::flask::start(&sb.dir, &crate::locate::repo_root())
                .map_err(|e| format!("the Flask application did not start: {e}"))?,
        )
    } else {
        None
    };
    let _wordpress = if case.needs.iter().any(|n| n == "wordpress") {
        Some(
            crate::wordpress::start(sb, &crate::locate::repo_root())
                .map_err(|e| format!("WordPress did not start: {e}"))?,
        )
    } else {
        None
    };
    let tls_upstream = case.needs.iter().any(|n| n == "upstream-tls");
    if tls_upstream || case.needs.iter().any(|n| n == "https") {
        crate::certs::make(&sb.dir).map_err(|e| format!("certificates: {e}"))?;
    }
    let _tls_upstream = if tls_upstream {
        Some(
            crate::upstream::start_tls(&sb.dir, &crate::locate::repo_root())
                .map_err(|e| format!("the HTTPS upstream did not start: {e}"))?,
        )
    } else {
        None
    };
    let mut apache = start_apache(&s.apache, &s.oracle, case, sb, Side::Apache)
        .map_err(|e| format!("Apache did not start: {e}"))?;
    let mut other = if s.apache_only {
        None
    } else {
        let started = match &s.other {
            Other::Htaccel(bin) => start_htaccel(bin, &s.oracle, case, sb),
            Other::Apache => start_apache(&s.apache, &s.oracle, case, sb, Side::Other),
        };
        match started {
            Ok(server) => Some(server),
            Err(e) => {
                result.apache_log = tails(&apache.logs);
                return Err(format!("htaccel did not start: {e}"));
            }
        }
    };
    settle(sb);
    let exchanges = requests.len() as u32 * (1 + s.repeat as u32);
    let budget = CASE_BUDGET.max(EXCHANGE_BUDGET * exchanges);
    let deadline = Instant::now() + budget;
    for req in requests {
        if Instant::now() > deadline {
            result.error = Some(format!(
                "gave up after {budget:?}, before the request on line {}",
                req.line
            ));
            break;
        }
        let certs = crate::certs::dir(&sb.dir);
        let streams = match s.protocol {
            Protocol::Http1 => None,
            Protocol::Http2 => match crate::h2request::translate(req) {
                Ok(streams) => Some(streams),
                Err(why) => {
                    result.skipped.push((req.line, why));
                    continue;
                }
            },
            Protocol::H2cUpgrade => match crate::h2c_upgrade::expressible(req) {
                Ok(streams) => Some(streams),
                Err(why) => {
                    result.skipped.push((req.line, why));
                    continue;
                }
            },
        };
        let send = |server: &Server| match s.protocol {
            Protocol::H2cUpgrade => crate::h2c_upgrade::exchange(
                server.port,
                req,
                &streams.as_deref().unwrap_or_default()[0],
                &sb.dir,
            ),
            _ => exchange(server, &certs, req, streams.as_deref()),
        };
        if let Some(wait) = req.opts.wait {
            // Both servers run meanwhile: the time passes on each.
            std::thread::sleep(wait);
        }
        let a = send(&apache);
        match &other {
            None => result
                .transcript
                .push_str(&report::transcript_entry(req, s.protocol, &a)),
            Some(o) => {
                // A request without side effects may be sent again, and
                // every answer must be Apache's.
                let times = if only_reads(req) { s.repeat } else { 1 };
                let mut failed = None;
                for _ in 0..times {
                    let b = send(o);
                    let ports = |s: &crate::servers::Server| crate::compare::Ports {
                        plain: s.port,
                        tls: s.tls_port,
                    };
                    let mut problems = differences(&a, ports(&apache), &b, ports(o), &req.opts);
                    let leaked = leaked_secrets(&b, &case.secrets);
                    if !leaked.is_empty() {
                        result.leaks += 1;
                        problems
                            .insert(0, format!("leaked secret marker(s): {}", leaked.join(", ")));
                    }
                    if !problems.is_empty() {
                        failed = Some((problems, b));
                        break;
                    }
                }
                match failed {
                    None => result.identical += 1,
                    Some((problems, b)) => result.diffs.push(RequestDiff {
                        request: req.clone(),
                        problems,
                        apache: a,
                        other: b,
                    }),
                }
            }
        }
    }
    stop(&mut apache, &mut result.apache_log);
    if let Some(o) = other.as_mut() {
        stop(o, &mut result.other_log);
    }
    Ok(())
}

/// One exchange with `server`: the block as written (HTTP/1.1), or its
/// translation `streams` over HTTP/2.
fn exchange(
    server: &Server,
    certs: &Path,
    req: &Request,
    streams: Option<&[H2Request]>,
) -> Exchange {
    match streams {
        None => crate::client::exchange(server.port, server.tls_port, certs, req),
        Some(streams) => {
            crate::h2client::exchange(server.port, server.tls_port, certs, req, streams)
        }
    }
}

/// The case's secret markers found anywhere in what the server sent: a
/// status line, a header or a body, or bytes that parsed as none.
fn leaked_secrets<'a>(seen: &Exchange, secrets: &'a [String]) -> Vec<&'a str> {
    let carries = |hay: &[u8], marker: &str| {
        !marker.is_empty() && memchr::memmem::find(hay, marker.as_bytes()).is_some()
    };
    secrets
        .iter()
        .filter(|m| {
            carries(&seen.trailing, m)
                || seen.responses.iter().any(|r| {
                    carries(r.status_line.as_bytes(), m)
                        || carries(&r.body, m)
                        || r.headers
                            .iter()
                            .any(|(n, v)| carries(n.as_bytes(), m) || carries(v.as_bytes(), m))
                })
        })
        .map(String::as_str)
        .collect()
}

/// Whether every request in `req` is a `GET` or a `HEAD`.
fn only_reads(req: &Request) -> bool {
    let methods = crate::requests::methods_in(&req.bytes());
    !methods.is_empty() && methods.iter().all(|m| m == "GET" || m == "HEAD")
}

fn stop(server: &mut Server, log: &mut String) {
    server.stop();
    *log = tails(&server.logs);
}

/// Sleeps until every file of the tree is older than [`SETTLE`].
fn settle(sb: &Sandbox) {
    let Some(newest) = sb.newest_mtime() else {
        return;
    };
    let age = SystemTime::now()
        .duration_since(newest)
        .unwrap_or(Duration::ZERO);
    if age < SETTLE {
        std::thread::sleep(SETTLE - age);
    }
}

/// Copies configs, logs and outputs of both servers to `out_dir`.
fn keep_logs(sb: &Sandbox, out_dir: &Path) {
    for (side, prefix) in [(Side::Apache, "apache"), (Side::Other, "other")] {
        let Ok(entries) = fs::read_dir(sb.rundir(side)) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if [".log", ".out", ".conf"].iter().any(|x| name.ends_with(x)) {
                let _ = fs::create_dir_all(out_dir);
                let _ = fs::copy(e.path(), out_dir.join(format!("{prefix}.{name}")));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::leaked_secrets;
    use crate::client::{End, Exchange};
    use crate::response::Response;

    fn answer(body: &str, header: (&str, &str)) -> Exchange {
        Exchange {
            tls: None,
            responses: vec![Response {
                status_line: "HTTP/1.1 200 OK".into(),
                status: 200,
                headers: vec![(header.0.into(), header.1.into())],
                body: body.as_bytes().to_vec(),
            }],
            trailing: b"tail".to_vec(),
            end: End::Closed,
        }
    }

    #[test]
    fn secret_markers_are_found_in_bodies_headers_and_stray_bytes() {
        let secrets = vec!["S3CRET".to_string(), "tail".to_string()];
        let clean = Exchange {
            trailing: Vec::new(),
            ..answer("nothing here", ("X-A", "b"))
        };
        assert!(leaked_secrets(&clean, &secrets).is_empty());
        assert_eq!(
            leaked_secrets(&answer("a S3CRET b", ("X-A", "b")), &secrets),
            ["S3CRET", "tail"]
        );
        let in_header = Exchange {
            trailing: Vec::new(),
            ..answer("", ("X-Desync", "S3CRET"))
        };
        assert_eq!(leaked_secrets(&in_header, &secrets), ["S3CRET"]);
    }
}
