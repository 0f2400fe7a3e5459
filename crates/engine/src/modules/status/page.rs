//! mod_status's two pages: the HTML report and `?auto`'s `Key: value`
//! lines, in Apache's order and wording, with htaccel's figures
//! (see the module's notes for the mapping).

use super::report::{g, show_time, status_time, Report};
use crate::stats::Counter;
use crate::uri::escape_html_str as escape_html;
use std::fmt::Write;

const KBYTE: f64 = 1024.0;
const MBYTE: f64 = 1_048_576.0;
const GBYTE: f64 = 1_073_741_824.0;
/// Scoreboard characters per line of the HTML page.
const STATUS_MAXLINE: usize = 64;

/// The query's options. As Apache, each is found anywhere in the query
/// string (`strstr`): `?refresh=N` (below 1 or no number: 10), `notable`,
/// `auto`.
#[derive(Debug, Default, PartialEq)]
pub struct Options {
    pub refresh: Option<i64>,
    pub notable: bool,
    pub auto: bool,
}

impl Options {
    pub fn parse(args: Option<&str>) -> Options {
        let Some(args) = args else {
            return Options::default();
        };
        let refresh = args.find("refresh").map(|at| {
            let rest = &args[at + "refresh".len()..];
            let t = rest.strip_prefix('=').map_or(0, atol);
            if t < 1 {
                10
            } else {
                t
            }
        });
        Options {
            refresh,
            notable: args.contains("notable"),
            auto: args.contains("auto"),
        }
    }
}

/// C's `atol`: leading blanks, a sign, digits; anything else ends it.
fn atol(s: &str) -> i64 {
    let s = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut n: i64 = 0;
    for b in digits.bytes().take_while(u8::is_ascii_digit) {
        n = n.saturating_mul(10).saturating_add(i64::from(b - b'0'));
    }
    if neg {
        -n
    } else {
        n
    }
}

/// The page and its `Content-Type`.
/// `sections`: what other modules add (`status_hook`), after the page's
/// own content and before the signature.
pub fn render(
    r: &Report,
    opts: &Options,
    sections: &str,
    signature: Option<&str>,
) -> (String, &'static str) {
    if opts.auto {
        let mut page = auto(r);
        page.push_str(sections);
        (page, "text/plain; charset=ISO-8859-1")
    } else {
        (
            html(r, opts, sections, signature),
            "text/html; charset=ISO-8859-1",
        )
    }
}

/// `?auto`: what monitoring tools parse.
fn auto(r: &Report) -> String {
    let mut o = String::new();
    let up = r.uptime();
    let _ = writeln!(o, "{}", r.server_name);
    let _ = writeln!(o, "ServerVersion: {}", r.version);
    let _ = writeln!(o, "ServerMPM: event");
    let _ = writeln!(o, "Server Built: {}", r.built);
    let _ = writeln!(o, "CurrentTime: {}", status_time(r.now));
    let _ = writeln!(o, "RestartTime: {}", status_time(r.started));
    let _ = writeln!(o, "ParentServerConfigGeneration: 1");
    let _ = writeln!(o, "ParentServerMPMGeneration: 0");
    let _ = writeln!(o, "ServerUptimeSeconds: {up}");
    let _ = writeln!(o, "ServerUptime:{}", show_time(up));
    let _ = writeln!(
        o,
        "Load1: {:.2}\nLoad5: {:.2}\nLoad15: {:.2}",
        r.load[0], r.load[1], r.load[2]
    );
    if r.extended {
        let count = r.accesses();
        let kb = r.kbytes();
        let _ = writeln!(o, "Total Accesses: {count}");
        let _ = writeln!(o, "Total kBytes: {kb}");
        let _ = writeln!(o, "Total Duration: {}", r.duration_ms());
        let _ = writeln!(
            o,
            "CPUUser: {}\nCPUSystem: {}\nCPUChildrenUser: {}\nCPUChildrenSystem: {}",
            g(r.cpu[0]),
            g(r.cpu[1]),
            g(r.cpu[2]),
            g(r.cpu[3])
        );
        if let Some(load) = r.cpu_load() {
            let _ = writeln!(o, "CPULoad: {}", g(load));
        }
        let _ = writeln!(o, "Uptime: {up}");
        if up > 0 {
            let _ = writeln!(o, "ReqPerSec: {}", g(count as f64 / up as f64));
            let _ = writeln!(o, "BytesPerSec: {}", g(KBYTE * kb as f64 / up as f64));
        }
        if count > 0 {
            let _ = writeln!(o, "BytesPerReq: {}", g(KBYTE * kb as f64 / count as f64));
            let _ = writeln!(
                o,
                "DurationPerReq: {}",
                g(r.duration_ms() as f64 / count as f64)
            );
        }
    }
    let _ = writeln!(
        o,
        "BusyWorkers: {}\nGracefulWorkers: 0\nIdleWorkers: {}",
        r.busy(),
        r.idle()
    );
    let _ = writeln!(
        o,
        "Processes: 1\nStopping: 0\nConnsTotal: {}\nConnsAsyncWaitIO: 0\nConnsAsyncWriting: 0\nConnsAsyncKeepAlive: {}\nConnsAsyncClosing: {}",
        r.gauge(Counter::ConnsOpen),
        r.gauge(Counter::ConnsKeepAlive),
        r.gauge(Counter::ConnsClosing)
    );
    let _ = writeln!(o, "Scoreboard: {}", r.scoreboard());
    o
}

/// `format_byte_out`.
fn bytes_out(b: f64) -> String {
    if b < 5.0 * KBYTE {
        format!("{} B", b as i64)
    } else if b < MBYTE / 2.0 {
        format!("{:.1} kB", b / KBYTE)
    } else if b < GBYTE / 2.0 {
        format!("{:.1} MB", b / MBYTE)
    } else {
        format!("{:.1} GB", b / GBYTE)
    }
}

/// `format_kbyte_out`.
fn kbytes_out(kb: u64) -> String {
    let f = kb as f64;
    if f < KBYTE {
        format!("{kb} kB")
    } else if f < MBYTE {
        format!("{:.1} MB", f / KBYTE)
    } else {
        format!("{:.1} GB", f / MBYTE)
    }
}

fn html(r: &Report, opts: &Options, sections: &str, signature: Option<&str>) -> String {
    let mut o = String::new();
    let up = r.uptime();
    o.push_str("<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\" \"http://www.w3.org/TR/html4/strict.dtd\">\n<html><head>\n<title>Apache Status</title>\n</head><body>\n");
    let _ = write!(
        o,
        "<h1>Apache Server Status for {} (via {})</h1>\n\n",
        escape_html(&r.server_name),
        r.local_ip
    );
    let _ = writeln!(o, "<dl><dt>Server Version: {}</dt>", r.version);
    let _ = writeln!(o, "<dt>Server MPM: event</dt>");
    let _ = write!(o, "<dt>Server Built: {}\n</dt></dl><hr /><dl>\n", r.built);
    let _ = writeln!(o, "<dt>Current Time: {}</dt>", status_time(r.now));
    let _ = writeln!(o, "<dt>Restart Time: {}</dt>", status_time(r.started));
    o.push_str(
        "<dt>Parent Server Config. Generation: 1</dt>\n<dt>Parent Server MPM Generation: 0</dt>\n",
    );
    let _ = writeln!(o, "<dt>Server uptime: {}</dt>", show_time(up));
    let _ = writeln!(
        o,
        "<dt>Server load: {:.2} {:.2} {:.2}</dt>",
        r.load[0], r.load[1], r.load[2]
    );
    if r.extended {
        let count = r.accesses();
        let kb = r.kbytes();
        let _ = writeln!(
            o,
            "<dt>Total accesses: {count} - Total Traffic: {} - Total Duration: {}</dt>",
            kbytes_out(kb),
            r.duration_ms()
        );
        let _ = write!(
            o,
            "<dt>CPU Usage: u{} s{} cu{} cs{}",
            g(r.cpu[0]),
            g(r.cpu[1]),
            g(r.cpu[2]),
            g(r.cpu[3])
        );
        match r.cpu_load() {
            Some(load) => {
                let _ = writeln!(o, " - {}% CPU load</dt>", g3(load));
            }
            None => o.push_str("</dt>\n"),
        }
        o.push_str("<dt>");
        if up > 0 {
            let _ = write!(
                o,
                "{} requests/sec - {}/second",
                g3(count as f64 / up as f64),
                bytes_out(KBYTE * kb as f64 / up as f64)
            );
        }
        if count > 0 {
            if up > 0 {
                o.push_str(" - ");
            }
            let _ = write!(
                o,
                "{}/request - {} ms/request",
                bytes_out(KBYTE * kb as f64 / count as f64),
                g(r.duration_ms() as f64 / count as f64)
            );
        }
        o.push_str("</dt>\n");
    }
    let _ = writeln!(
        o,
        "<dt>{} requests currently being processed, 0 workers gracefully restarting, {} idle workers</dt>",
        r.busy(),
        r.idle()
    );
    o.push_str("</dl>");
    o.push_str("\n\n<table rules=\"all\" cellpadding=\"1%\">\n<tr><th rowspan=\"2\">Slot</th><th rowspan=\"2\">PID</th><th rowspan=\"2\">Stopping</th><th colspan=\"2\">Connections</th>\n<th colspan=\"3\">Threads</th><th colspan=\"4\">Async connections</th></tr>\n<tr><th>total</th><th>accepting</th><th>busy</th><th>graceful</th><th>idle</th><th>wait-io</th><th>writing</th><th>keep-alive</th><th>closing</th></tr>\n");
    let conns = r.gauge(Counter::ConnsOpen);
    let (keep, closing) = (
        r.gauge(Counter::ConnsKeepAlive),
        r.gauge(Counter::ConnsClosing),
    );
    let _ = writeln!(
        o,
        "<tr><td>0</td><td>{}</td><td>no</td><td>{conns}</td><td>yes</td><td>{}</td><td>0</td><td>{}</td><td>0</td><td>0</td><td>{keep}</td><td>{closing}</td></tr>",
        r.pid,
        r.busy(),
        r.idle()
    );
    let _ = writeln!(
        o,
        "<tr><td>Sum</td><td>1</td><td>0</td><td>{conns}</td><td>&nbsp;</td><td>{}</td><td>0</td><td>{}</td><td>0</td><td>0</td><td>{keep}</td><td>{closing}</td></tr>\n</table>",
        r.busy(),
        r.idle()
    );
    o.push_str("<pre>");
    for (i, ch) in r.scoreboard().chars().enumerate() {
        o.push(ch);
        if i % STATUS_MAXLINE == STATUS_MAXLINE - 1 {
            o.push('\n');
        }
    }
    o.push_str("</pre>\n<p>Scoreboard Key:<br />\n\"<b><code>_</code></b>\" Waiting for Connection, \n\"<b><code>S</code></b>\" Starting up, \n\"<b><code>R</code></b>\" Reading Request,<br />\n\"<b><code>W</code></b>\" Sending Reply, \n\"<b><code>K</code></b>\" Keepalive (read), \n\"<b><code>D</code></b>\" DNS Lookup,<br />\n\"<b><code>C</code></b>\" Closing connection, \n\"<b><code>L</code></b>\" Logging, \n\"<b><code>G</code></b>\" Gracefully finishing,<br /> \n\"<b><code>I</code></b>\" Idle cleanup of worker, \n\"<b><code>.</code></b>\" Open slot with no current process<br />\n</p>\n");
    if !r.extended {
        // Every slot of the scoreboard with its process (one here).
        o.push_str("PID Key: <br />\n<pre>\n");
        for (k, ch) in r.scoreboard().chars().enumerate() {
            let _ = write!(o, "   {} in state: {ch} ", r.pid);
            o.push_str(if k % 3 == 2 { "\n" } else { "," });
        }
        o.push_str("\n</pre>\n");
    }
    if r.extended {
        extended_table(&mut o, r, opts);
    } else {
        o.push_str("<hr />To obtain a full report with current status information you need to use the <code>ExtendedStatus On</code> directive.\n");
    }
    o.push_str(sections);
    if let Some(sig) = signature {
        o.push_str("<hr />\n");
        o.push_str(sig);
    }
    o.push_str("</body></html>\n");
    o
}

/// `%.3g`.
fn g3(x: f64) -> String {
    let s = format!("{x:.2e}");
    let v: f64 = s.parse().unwrap_or(x);
    g(v)
}

/// One row per event loop that answered requests.
fn extended_table(o: &mut String, r: &Report, opts: &Options) {
    if opts.notable {
        o.push_str("<hr /><h2>Server Details</h2>\n\n");
    } else {
        o.push_str("\n\n<table border=\"0\"><tr><th>Srv</th><th>PID</th><th>Acc</th><th>M</th><th>CPU\n</th><th>SS</th><th>Req</th><th>Dur</th><th>Conn</th><th>Child</th><th>Slot</th><th>Client</th><th>Protocol</th><th>VHost</th><th>Request</th></tr>\n\n");
    }
    let child_mb = r.totals.get(Counter::BytesSent) as f64 / MBYTE;
    for (i, t) in r.loops.iter().enumerate() {
        let acc = t.get(Counter::Accesses);
        let dur = t.get(Counter::DurationUs) / 1000;
        let bytes = t.get(Counter::BytesSent);
        if opts.notable {
            let _ = write!(
                o,
                "<b>Server {i}-0</b> ({}): 0|{acc}|{acc} [Ready] u0 s0 cu0 cs0\n 0 0 {dur}(0 B|{}|{})\n <i> {{}}</i> <i>()</i> <b>[]</b><br />\n\n",
                r.pid,
                bytes_out(bytes as f64),
                bytes_out(bytes as f64)
            );
        } else {
            let _ = write!(
                o,
                "<tr><td><b>{i}-0</b></td><td>{}</td><td>0/{acc}/{acc}</td><td>_\n</td><td>0.00</td><td>0</td><td>0</td><td>{dur}</td><td>0.0</td><td>{child_mb:.2}</td><td>{:.2}\n</td><td></td><td></td><td nowrap></td><td nowrap></td></tr>\n\n",
                r.pid,
                bytes as f64 / MBYTE
            );
        }
    }
    if !opts.notable {
        o.push_str("</table>\n \n<hr /> \n<table>\n \n<tr><th>Srv</th><td>Child Server number - generation</td></tr>\n \n<tr><th>PID</th><td>OS process ID</td></tr>\n \n<tr><th>Acc</th><td>Number of accesses this connection / this child / this slot</td></tr>\n \n<tr><th>M</th><td>Mode of operation</td></tr>\n<tr><th>CPU</th><td>CPU usage, number of seconds</td></tr>\n<tr><th>SS</th><td>Seconds since beginning of most recent request</td></tr>\n \n<tr><th>Req</th><td>Milliseconds required to process most recent request</td></tr>\n \n<tr><th>Dur</th><td>Sum of milliseconds required to process all requests</td></tr>\n \n<tr><th>Conn</th><td>Kilobytes transferred this connection</td></tr>\n \n<tr><th>Child</th><td>Megabytes transferred this child</td></tr>\n \n<tr><th>Slot</th><td>Total megabytes transferred this slot</td></tr>\n \n</table>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_as_apache_finds_them() {
        assert_eq!(Options::parse(None), Options::default());
        let o = Options::parse(Some("refresh=3&notable"));
        assert_eq!(o.refresh, Some(3));
        assert!(o.notable && !o.auto);
        assert_eq!(Options::parse(Some("refresh")).refresh, Some(10));
        assert_eq!(Options::parse(Some("refresh=0")).refresh, Some(10));
        assert_eq!(Options::parse(Some("refresh=x")).refresh, Some(10));
        assert!(Options::parse(Some("x=autox")).auto);
    }

    #[test]
    fn byte_figures() {
        assert_eq!(bytes_out(512.0), "512 B");
        assert_eq!(bytes_out(6000.0), "5.9 kB");
        assert_eq!(kbytes_out(5), "5 kB");
        assert_eq!(kbytes_out(2048), "2.0 MB");
        assert_eq!(g3(0.333333), "0.333");
    }
}
