//! `difftest`: the differential test harness. Apache is the oracle: each case
//! (a site tree and a list of requests under `tests/cases/`) is served by real
//! Apache 2.4 with `tests/oracle/serve-equivalent.conf` and by htaccel, the
//! same requests go to both over TCP, and every difference a client could see
//! is reported. Exit status: 0 all cases agree, 1 some differ, 2 the run
//! itself could not be set up, 3 the time limit was reached.

mod cases;
mod certs;
mod cli;
mod client;
mod compare;
mod compat;
mod flask;
mod fpm;
mod h2c_upgrade;
mod h2client;
mod h2request;
mod httpdate;
mod jsonmask;
mod locate;
mod procs;
mod protocol;
mod report;
mod requests;
mod response;
mod runner;
mod sandbox;
mod servers;
mod summary;
mod tls;
mod upstream;
mod valuemask;
mod wordpress;

use runner::{run_case, CaseResult, Settings};
use servers::Other;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

fn main() -> ExitCode {
    let opts = match cli::parse(std::env::args().skip(1)) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("difftest: {e}\n\n{}", cli::USAGE);
            return ExitCode::from(2);
        }
    };
    if opts.help {
        print!("{}", cli::USAGE);
        return ExitCode::SUCCESS;
    }
    match run(opts) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("difftest: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(opts: cli::Options) -> Result<bool, String> {
    let root = locate::repo_root();
    let cases_dir = opts
        .cases
        .clone()
        .unwrap_or_else(|| root.join("tests/cases"));
    let mut cases = cases::discover(&cases_dir)?;
    let corpus_cases = cases
        .iter()
        .filter(|c| c.name.starts_with(compat::GROUP))
        .count();
    if !opts.filters.is_empty() {
        cases.retain(|c| opts.filters.iter().any(|f| c.name.contains(f.as_str())));
    }
    if opts.list {
        for c in &cases {
            let pending = if c.pending.is_some() {
                "[pending] "
            } else {
                ""
            };
            println!(
                "{:<40} {pending}{}",
                c.name,
                c.readme.as_deref().unwrap_or("")
            );
        }
        return Ok(true);
    }
    let (pending, cases): (Vec<_>, Vec<_>) = cases
        .into_iter()
        .partition(|c| c.pending.is_some() && !opts.pending);
    let (other_protocol, mut cases): (Vec<_>, Vec<_>) = cases
        .into_iter()
        .partition(|c| opts.protocol.excludes(c).is_some());
    for c in &mut cases {
        opts.protocol.configure(c);
    }
    // The compatibility table lists pending cases too, with their reason.
    let report_cases = || pending.iter().chain(cases.iter());
    if cases.is_empty() {
        let hint = if pending.is_empty() {
            ""
        } else {
            " (only PENDING ones: add --pending)"
        };
        return Err(format!(
            "no case matches under {}{hint}",
            cases_dir.display()
        ));
    }
    let apache = locate::apache()?;
    let (oracle_path, oracle) = locate::oracle_conf(opts.oracle_conf.as_deref())?;
    let other = if opts.htaccel_is_apache {
        Other::Apache
    } else {
        Other::Htaccel(if opts.apache_only {
            PathBuf::new()
        } else {
            locate::htaccel(opts.htaccel.as_deref())?
        })
    };
    if !locate::is_root() {
        eprintln!("difftest: warning: not root; Apache cannot switch to www-data and setup.sh cannot chown");
    }
    // No `.` in it: a path the servers hand to a script must not differ
    // from the other server's in where its first dot is
    // (`proxy-fcgi-pathinfo=first-dot`).
    let tmp_root = std::env::temp_dir().join(format!("difftest-{}", std::process::id()));
    remove_stale_roots(&std::env::temp_dir());
    sandbox::mkdir(&tmp_root)?;
    let settings = Settings {
        apache,
        other: other.clone(),
        oracle,
        tmp_root: tmp_root.clone(),
        out_root: root.join("tests/difftest/out"),
        keep: opts.keep,
        apache_only: opts.apache_only,
        repeat: opts.repeat,
        protocol: opts.protocol,
    };
    let against = match &other {
        _ if opts.apache_only => "nothing (--apache-only)".to_string(),
        Other::Apache => "a second Apache (--htaccel-is-apache)".to_string(),
        Other::Htaccel(p) => p.display().to_string(),
    };
    println!(
        "difftest: {} cases, {} at a time, over {}; oracle config {}; Apache vs {against}",
        cases.len(),
        opts.jobs,
        opts.protocol.name(),
        oracle_path.display()
    );
    let done = AtomicBool::new(false);
    let results = std::thread::scope(|scope| {
        scope.spawn(|| watchdog(opts.time_limit, &done, &tmp_root));
        let results = run_all(&cases, &settings, opts.jobs);
        done.store(true, Ordering::SeqCst);
        results
    });
    if opts.keep {
        println!("difftest: trees kept in {}", tmp_root.display());
    } else {
        let _ = std::fs::remove_dir_all(&tmp_root);
    }
    if !opts.apache_only {
        for r in results.iter().filter(|r| !r.passed()) {
            println!("\n{}", report::failure(r, opts.protocol));
        }
        println!("logs of each case: {}", settings.out_root.display());
    }
    if !pending.is_empty() {
        println!("\nnot run (PENDING; --pending runs them):");
        for c in &pending {
            println!("  {}: {}", c.name, c.pending.as_deref().unwrap_or(""));
        }
    }
    if !other_protocol.is_empty() {
        println!("\nnot run over {} (HTTP1-ONLY):", opts.protocol.name());
        for c in &other_protocol {
            let why = opts.protocol.excludes(c).unwrap_or("");
            println!("  {}: {why}", c.name);
        }
    }
    if opts.apache_only {
        let broken = results.iter().filter(|r| r.error.is_some()).count();
        println!(
            "\napache-only: {} cases shown, {broken} could not be run",
            results.len()
        );
        return Ok(broken == 0);
    }
    if let (Some(_), protocol::Protocol::Http2 | protocol::Protocol::H2cUpgrade) =
        (&opts.compat_report, opts.protocol)
    {
        println!("compatibility table not written: it records the HTTP/1.1 run");
    } else if let Some(path) = &opts.compat_report {
        let mut all: Vec<&cases::Case> = report_cases()
            .filter(|c| c.name.starts_with(compat::GROUP))
            .collect();
        all.sort_by(|a, b| a.name.cmp(&b.name));
        if all.len() == corpus_cases && corpus_cases > 0 {
            compat::write(path, &root, &all, &results)?;
            println!("compatibility table written to {}", path.display());
        } else {
            // A partial run would make a partial table.
            println!("compatibility table not written: not every corpus/ case was selected");
        }
    }
    if let Some(path) = &opts.summary_json {
        let path = root.join(path);
        summary::write(&path, &results, opts.repeat)?;
        println!("summary written to {}", path.display());
    }
    print!("\n{}", report::summary(&results, opts.protocol));
    let _ = std::io::stdout().flush();
    Ok(results.iter().all(CaseResult::passed))
}

/// Runs the cases on `jobs` threads; results in case order.
fn run_all(cases: &[cases::Case], s: &Settings, jobs: usize) -> Vec<CaseResult> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<CaseResult>>> =
        Mutex::new((0..cases.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(cases.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(case) = cases.get(i) else { break };
                let r = catch_unwind(AssertUnwindSafe(|| run_case(case, s))).unwrap_or_else(|_| {
                    CaseResult::failed(case, "the harness panicked on this case".into())
                });
                progress(&r, s);
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
        .collect()
}

fn progress(r: &CaseResult, s: &Settings) {
    let mut out = std::io::stdout().lock();
    if s.apache_only {
        let _ = writeln!(out, "\n######## {}", r.name);
        if let Some(readme) = &r.readme {
            let _ = writeln!(out, "# {readme}");
        }
        let _ = write!(out, "{}", r.transcript);
        let _ = write!(out, "{}", report::skipped(r, s.protocol));
        if let Some(e) = &r.error {
            let _ = writeln!(out, "error: {e}");
        }
        if !r.apache_log.trim().is_empty() {
            let _ = writeln!(out, "Apache's logs:\n{}", r.apache_log);
        }
        return;
    }
    let verdict = match (&r.error, r.diffs.len()) {
        (Some(_), _) => "ERROR".to_string(),
        (None, 0) => "ok".to_string(),
        (None, n) => format!("FAIL ({n} of {} differ)", r.requests),
    };
    let skipped = match r.skipped.len() {
        0 => String::new(),
        n => format!(", {n} not expressible in {}", s.protocol.name()),
    };
    let _ = writeln!(
        out,
        "{verdict:<6} {} ({} requests{skipped}, {:.1}s)",
        r.name,
        r.requests,
        r.elapsed.as_secs_f64()
    );
    let _ = write!(out, "{}", report::skipped(r, s.protocol));
}

/// Stops the whole run when the time limit is reached.
fn watchdog(limit: Duration, done: &AtomicBool, tmp_root: &Path) {
    let until = Instant::now() + limit;
    while !done.load(Ordering::SeqCst) {
        if Instant::now() > until {
            eprintln!("difftest: time limit of {limit:?} reached; stopping all servers");
            procs::kill_all();
            let _ = std::fs::remove_dir_all(tmp_root);
            std::process::exit(3);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Removes temporary roots left by runs whose process is gone.
fn remove_stale_roots(tmp: &Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(pid) = name
            .strip_prefix("difftest-")
            .or_else(|| name.strip_prefix("difftest."))
        {
            if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
}
