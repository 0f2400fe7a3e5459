//! The status pages read by real clients: mod_status's `?auto` parsed as
//! monitoring tools parse it (`Key: value` lines, each value a number of
//! the expected type), and htaccel's Prometheus page (`htaccel-metrics`)
//! parsed by the official Python client's parser
//! (`prometheus_client.parser`, Debian's `python3-prometheus-client`).
//! Apache cannot answer these: the values are each server's own, and the
//! Prometheus page is htaccel's alone (tests/cases/status/ compares what
//! is comparable with Apache).

mod common;

use common::{Server, TempDir};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};

fn config(site: &TempDir) -> String {
    format!(
        "LoadModule authz_core_module modules/mod_authz_core.so\n\
         LoadModule authz_host_module modules/mod_authz_host.so\n\
         LoadModule mime_module modules/mod_mime.so\n\
         LoadModule status_module modules/mod_status.so\n\
         Listen 127.0.0.1:@PORT@\nServerName localhost\nErrorLog /dev/stderr\nTypesConfig /etc/mime.types\n\
         DocumentRoot \"{root}\"\n\
         <Directory \"{root}\">\n  AllowOverride All\n  Require all granted\n</Directory>\n\
         <Location /server-status>\n  SetHandler server-status\n  Require ip 127.0.0.1\n</Location>\n\
         <Location /metrics>\n  SetHandler htaccel-metrics\n  Require ip 127.0.0.1\n</Location>\n",
        root = site.path().display()
    )
}

/// `GET path` from the loopback address `from`: (status, head, body).
fn get_from(port: u16, from: [u8; 4], path: &str) -> (u16, String, String) {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket
        .bind(&SocketAddr::from((from, 0)).into())
        .expect("bind a loopback address");
    socket
        .connect(&SocketAddr::from(([127, 0, 0, 1], port)).into())
        .expect("connect");
    let mut s: TcpStream = socket.into();
    s.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, head.to_string(), body.to_string())
}

/// Run `script` with `/usr/bin/python3` on `input`; its stdout, or a
/// failure with what it said.
fn python(script: &str, input: &str) -> String {
    let mut child = Command::new("/usr/bin/python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run /usr/bin/python3");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "python failed on:\n{input}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// How monitoring tools (Datadog's and Prometheus's apache checks,
/// collectd, Munin) read `?auto`: `Key: value` lines, numbers parsed by
/// type, the scoreboard counted by letter.
const AUTO_PARSER: &str = r#"
import sys
fields = {}
lines = sys.stdin.read().splitlines()
for line in lines[1:]:
    key, sep, value = line.partition(":")
    assert sep, "not a Key: value line: %r" % line
    fields[key] = value.strip()
ints = ["Total Accesses", "Total kBytes", "Total Duration", "Uptime", "ServerUptimeSeconds",
        "BusyWorkers", "GracefulWorkers", "IdleWorkers", "Processes", "Stopping", "ConnsTotal",
        "ConnsAsyncWaitIO", "ConnsAsyncWriting", "ConnsAsyncKeepAlive", "ConnsAsyncClosing",
        "ParentServerConfigGeneration", "ParentServerMPMGeneration"]
floats = ["ReqPerSec", "BytesPerSec", "BytesPerReq", "DurationPerReq", "CPULoad", "CPUUser",
          "CPUSystem", "CPUChildrenUser", "CPUChildrenSystem", "Load1", "Load5", "Load15"]
for k in ints:
    int(fields[k])
for k in floats:
    float(fields[k])
board = fields["Scoreboard"]
assert set(board) <= set("_SRWKDCLGI."), board
assert board.count("_") == int(fields["IdleWorkers"]), fields
assert board.count("R") + board.count("W") == int(fields["BusyWorkers"]), fields
assert int(fields["ConnsTotal"]) == len(board) - board.count("_"), fields
assert fields["ServerVersion"].startswith("htaccel/"), fields
assert fields["ServerMPM"] == "event"
print(fields["Total Accesses"], fields["Total kBytes"], fields["BusyWorkers"])
"#;

/// The official client's parser: every family, its type and samples.
const PROMETHEUS_PARSER: &str = r#"
import sys
from prometheus_client.parser import text_string_to_metric_families
seen = {}
for family in text_string_to_metric_families(sys.stdin.read()):
    for sample in family.samples:
        seen[sample.name + repr(sorted(sample.labels.items()))] = sample.value
        seen.setdefault(family.name + ":" + family.type, 0)
for k in sorted(seen):
    print(k, seen[k])
"#;

fn value(parsed: &str, key: &str) -> f64 {
    parsed
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("{key} not in:\n{parsed}"))
}

#[test]
fn monitoring_clients_read_both_pages() {
    let site = TempDir::new("status");
    let logs = TempDir::new("status-logs");
    site.write("f.txt", "hello\n");
    site.write("sub/.htaccess", "AddType text/x-sub .sub\n");
    site.write("sub/a.sub", "sub\n");
    let s = Server::with_config(&config(&site), logs.path());
    for _ in 0..5 {
        assert_eq!(s.get("/f.txt").0, 200);
        assert_eq!(s.get("/sub/a.sub").0, 200);
    }

    // The per-second figures appear once the server has been up a second.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let (status, head, auto) = get_from(s.port, [127, 0, 0, 1], "/server-status?auto");
    assert_eq!(status, 200, "{head}");
    assert!(
        head.contains("Content-Type: text/plain; charset=ISO-8859-1"),
        "{head}"
    );
    let parsed = python(AUTO_PARSER, &auto);
    let mut figures = parsed.split_whitespace().map(|w| w.parse::<u64>().unwrap());
    let accesses = figures.next().unwrap();
    assert!(accesses >= 10, "Total Accesses {accesses}:\n{auto}");
    // The status request itself is being answered.
    assert!(figures.nth(1).unwrap() >= 1, "{auto}");

    let (status, head, page) = get_from(s.port, [127, 0, 0, 1], "/metrics");
    assert_eq!(status, 200, "{head}");
    assert!(
        head.contains("Content-Type: text/plain; version=0.0.4; charset=utf-8"),
        "{head}"
    );
    let parsed = python(PROMETHEUS_PARSER, &page);
    assert!(
        value(&parsed, "htaccel_requests_total[]") >= 11.0,
        "{parsed}"
    );
    assert!(
        value(&parsed, "htaccel_htaccess_compiles_total[]") >= 1.0,
        "{parsed}"
    );
    assert!(
        value(&parsed, "htaccel_htaccess_levels[]") >= 1.0,
        "{parsed}"
    );
    assert!(
        value(&parsed, "htaccel_watched_directories[]") >= 1.0,
        "{parsed}"
    );
    assert!(value(&parsed, "htaccel_event_loops[]") >= 1.0, "{parsed}");
    assert_eq!(
        value(&parsed, "htaccel_connections[('state', 'writing')]"),
        1.0,
        "the scrape itself: {parsed}"
    );
    // Repeated static requests come from the answer memo or the file cache.
    assert!(
        value(&parsed, "htaccel_answer_memo_hits_total[]")
            + value(&parsed, "htaccel_file_cache_hits_total[]")
            >= 1.0,
        "{parsed}"
    );
    for family in [
        "htaccel_requests:counter",
        "htaccel_sent_bytes:counter",
        "htaccel_connections:gauge",
        "htaccel_htaccess_recompiles:counter",
        "htaccel_htaccess_invalidations:counter",
        "htaccel_polled_directories:gauge",
        "htaccel_backend_requests:counter",
        "htaccel_info:gauge",
    ] {
        assert!(parsed.contains(family), "{family} missing:\n{parsed}");
    }

    // Protected like any location: another client address is refused.
    assert_eq!(get_from(s.port, [127, 0, 0, 2], "/metrics").0, 403);
    assert_eq!(
        get_from(s.port, [127, 0, 0, 2], "/server-status?auto").0,
        403
    );
}

#[test]
fn a_changed_access_file_counts_as_a_recompile() {
    let site = TempDir::new("status-re");
    let logs = TempDir::new("status-re-logs");
    site.write("sub/.htaccess", "AddType text/x-a .x\n");
    site.write("sub/a.x", "a\n");
    let s = Server::with_config(&config(&site), logs.path());
    assert_eq!(s.get("/sub/a.x").0, 200);
    site.write("sub/.htaccess", "AddType text/x-b .x\n");
    assert_eq!(s.get("/sub/a.x").0, 200);
    let (_, _, page) = get_from(s.port, [127, 0, 0, 1], "/metrics");
    let parsed = python(PROMETHEUS_PARSER, &page);
    assert!(
        value(&parsed, "htaccel_htaccess_recompiles_total[]") >= 1.0,
        "{parsed}"
    );
    assert!(
        value(&parsed, "htaccel_htaccess_invalidations_total[]") >= 1.0,
        "{parsed}"
    );
}
