//! Command-line options of `difftest`.

use std::path::PathBuf;
use std::time::Duration;

pub const USAGE: &str = "\
usage: difftest [OPTIONS] [FILTER...]

Runs real Apache and htaccel on each case's site tree, sends both the same
requests and compares what a client sees. FILTERs select cases whose name
contains one of them.

  --apache-only         run only Apache and print what it answers
  --htaccel PATH        the htaccel binary (default: $HTACCEL_BIN, else next
                        to this program, else target/debug/htaccel)
  --htaccel-is-apache   compare Apache with a second Apache (checks the harness)
  -j, --jobs N          cases run in parallel (default 2)
  --cases DIR           root of the cases (default: tests/cases)
  --oracle-conf FILE    the Apache config htaccel serve must equal (default:
                        $DIFFTEST_ORACLE_CONF, else the repository's
                        tests/oracle/serve-equivalent.conf)
  --time-limit SECS     stop everything after this long (default 1800)
  --pending             also run cases marked PENDING (not yet required)
  --compat-report FILE  write the table of the corpus/ cases (application,
                        requests compared, identical, known deviations) to
                        FILE, relative to the repository root
  --summary-json FILE   write what each case came to (requests, identical,
                        leaked secret markers, differing) as JSON to FILE,
                        relative to the repository root
  --repeat N            send every GET and HEAD request N times to the server
                        compared with Apache, each answer compared with
                        Apache's one (answers htaccel keeps are then served
                        from memory: crates/engine/src/answer_memo.rs)
  --http2               speak HTTP/2 to both servers (also DIFFTEST_PROTOCOL=h2):
                        mod_http2 and `Protocols h2 h2c http/1.1` are added to
                        every case's configuration, each request goes as
                        HTTP/2 (h2c with prior knowledge on the plain port,
                        h2 by ALPN over TLS); requests HTTP/2 cannot express
                        are counted per case and not sent
  --h2c-upgrade         send each request with `curl --http2` in clear text
                        (HTTP/1.1 with `Upgrade: h2c`; also
                        DIFFTEST_PROTOCOL=h2c-upgrade): the same lines as
                        --http2 are added to a case's configuration unless
                        it sets `Protocols` itself; what curl saw (the 101,
                        the answer and its HTTP version) is compared; raw,
                        TLS and pipelined blocks are not sent
  --keep                keep the temporary trees of the cases
  --list                list the cases and exit
  -h, --help            this text
";

#[derive(Debug)]
pub struct Options {
    pub filters: Vec<String>,
    pub apache_only: bool,
    pub htaccel: Option<PathBuf>,
    pub htaccel_is_apache: bool,
    pub jobs: usize,
    pub cases: Option<PathBuf>,
    pub oracle_conf: Option<PathBuf>,
    pub time_limit: Duration,
    pub keep: bool,
    /// `--repeat`: how many times GET and HEAD requests go to the server
    /// compared with Apache.
    pub repeat: usize,
    pub pending: bool,
    /// `--compat-report`: where to write the corpus compatibility table.
    pub compat_report: Option<PathBuf>,
    /// `--summary-json`: where to write the per-case outcome.
    pub summary_json: Option<PathBuf>,
    pub list: bool,
    pub help: bool,
    /// `--http2` or `DIFFTEST_PROTOCOL`.
    pub protocol: crate::protocol::Protocol,
}

pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Options, String> {
    let mut o = Options {
        filters: Vec::new(),
        apache_only: false,
        htaccel: None,
        htaccel_is_apache: false,
        jobs: 2,
        cases: None,
        oracle_conf: None,
        time_limit: Duration::from_secs(1800),
        keep: false,
        repeat: 1,
        pending: false,
        compat_report: None,
        summary_json: None,
        list: false,
        help: false,
        protocol: crate::protocol::Protocol::from_env()?,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or(format!("{flag} needs a value"))
        };
        match flag.as_str() {
            "--apache-only" => o.apache_only = true,
            "--htaccel" => o.htaccel = Some(value()?.into()),
            "--htaccel-is-apache" => o.htaccel_is_apache = true,
            "-j" | "--jobs" => o.jobs = number(&value()?)?,
            j if j.starts_with("-j") => o.jobs = number(&j[2..])?,
            "--cases" => o.cases = Some(value()?.into()),
            "--oracle-conf" => o.oracle_conf = Some(value()?.into()),
            "--time-limit" => o.time_limit = Duration::from_secs(number(&value()?)? as u64),
            "--keep" => o.keep = true,
            "--repeat" => o.repeat = number(&value()?)?.max(1),
            "--pending" => o.pending = true,
            "--compat-report" => o.compat_report = Some(value()?.into()),
            "--summary-json" => o.summary_json = Some(value()?.into()),
            "--list" => o.list = true,
            "--http2" => o.protocol = crate::protocol::Protocol::Http2,
            "--h2c-upgrade" => o.protocol = crate::protocol::Protocol::H2cUpgrade,
            "-h" | "--help" => o.help = true,
            f if f.starts_with('-') => return Err(format!("unknown option {f}")),
            _ => o.filters.push(arg),
        }
    }
    if o.jobs == 0 || o.jobs > 64 {
        return Err("--jobs must be between 1 and 64".into());
    }
    Ok(o)
}

fn number(s: &str) -> Result<usize, String> {
    s.parse().map_err(|_| format!("not a number: {s:?}"))
}

#[cfg(test)]
mod tests {
    fn p(args: &[&str]) -> super::Options {
        super::parse(args.iter().map(|s| s.to_string())).unwrap()
    }

    #[test]
    fn options_and_filters() {
        let o = p(&["-j3", "static", "--htaccel=/x", "--apache-only", "uri"]);
        assert_eq!(o.jobs, 3);
        assert_eq!(o.filters, ["static", "uri"]);
        assert_eq!(o.htaccel.unwrap().to_str(), Some("/x"));
        assert!(o.apache_only);
        assert_eq!(p(&["-j", "1"]).jobs, 1);
        assert!(super::parse(["--nope".to_string()]).is_err());
    }
}
