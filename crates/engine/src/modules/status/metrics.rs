//! htaccel's own status page (`SetHandler htaccel-metrics`): mod_status's
//! counters and htaccel's caches in Prometheus's text exposition format
//! (version 0.0.4), for a Prometheus server to scrape.

use super::report::Report;
use crate::stats::Counter;
use std::fmt::Write;

pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

enum Kind {
    Counter,
    Gauge,
}

struct Page(String);

impl Page {
    fn family(&mut self, name: &str, kind: Kind, help: &str) {
        let kind = match kind {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
        };
        let _ = write!(self.0, "# HELP {name} {help}\n# TYPE {name} {kind}\n");
    }

    fn sample(&mut self, name: &str, labels: &str, value: impl std::fmt::Display) {
        if labels.is_empty() {
            let _ = writeln!(self.0, "{name} {value}");
        } else {
            let _ = writeln!(self.0, "{name}{{{labels}}} {value}");
        }
    }

    fn one(&mut self, name: &str, kind: Kind, help: &str, value: impl std::fmt::Display) {
        self.family(name, kind, help);
        self.sample(name, "", value);
    }
}

pub fn render(r: &Report) -> String {
    let t = &r.totals;
    let mut p = Page(String::new());
    p.family("htaccel_info", Kind::Gauge, "htaccel's version.");
    p.sample(
        "htaccel_info",
        &format!("version=\"{}\"", env!("CARGO_PKG_VERSION")),
        1,
    );
    p.one(
        "htaccel_uptime_seconds",
        Kind::Gauge,
        "Seconds since this configuration started serving.",
        r.uptime(),
    );
    p.one(
        "htaccel_requests_total",
        Kind::Counter,
        "Requests answered (mod_status's Total Accesses).",
        t.get(Counter::Accesses),
    );
    p.one(
        "htaccel_sent_bytes_total",
        Kind::Counter,
        "Response body bytes sent.",
        t.get(Counter::BytesSent),
    );
    p.one(
        "htaccel_request_duration_seconds_total",
        Kind::Counter,
        "Time spent answering requests.",
        t.get(Counter::DurationUs) as f64 / 1e6,
    );
    p.family(
        "htaccel_cpu_seconds_total",
        Kind::Counter,
        "CPU time of the server process.",
    );
    p.sample("htaccel_cpu_seconds_total", "mode=\"user\"", r.cpu[0]);
    p.sample("htaccel_cpu_seconds_total", "mode=\"system\"", r.cpu[1]);
    p.one(
        "htaccel_event_loops",
        Kind::Gauge,
        "Event loops (worker threads) serving connections.",
        r.gauge(Counter::EventLoops),
    );
    p.one(
        "htaccel_connections_accepted_total",
        Kind::Counter,
        "Connections accepted.",
        t.get(Counter::ConnsAccepted),
    );
    p.family(
        "htaccel_connections",
        Kind::Gauge,
        "Open connections by state (mod_status's scoreboard letters R, W, K, C).",
    );
    for (state, c) in [
        ("reading", Counter::ConnsReading),
        ("writing", Counter::ConnsWriting),
        ("keepalive", Counter::ConnsKeepAlive),
        ("closing", Counter::ConnsClosing),
    ] {
        p.sample(
            "htaccel_connections",
            &format!("state=\"{state}\""),
            r.gauge(c),
        );
    }
    p.one(
        "htaccel_htaccess_levels",
        Kind::Gauge,
        "Directory levels in the compiled-config tree (every site).",
        r.htaccess_levels,
    );
    p.one(
        "htaccel_htaccess_level_hits_total",
        Kind::Counter,
        "Directory levels reused from the compiled-config tree.",
        t.get(Counter::HtaccessHits),
    );
    p.one(
        "htaccel_htaccess_level_misses_total",
        Kind::Counter,
        "Directory levels computed (merged) because none was cached.",
        t.get(Counter::HtaccessMisses),
    );
    p.one(
        "htaccel_htaccess_compiles_total",
        Kind::Counter,
        "Access files of a directory read and compiled for the first time.",
        t.get(Counter::HtaccessCompiles),
    );
    p.one(
        "htaccel_htaccess_recompiles_total",
        Kind::Counter,
        "Access files of a directory read and compiled again after a change.",
        t.get(Counter::HtaccessRecompiles),
    );
    p.one(
        "htaccel_htaccess_invalidations_total",
        Kind::Counter,
        "Directory levels dropped, or marked stale, because a change was reported.",
        t.get(Counter::HtaccessInvalidations),
    );
    p.one(
        "htaccel_watched_directories",
        Kind::Gauge,
        "Directories watched with inotify.",
        r.watched_dirs,
    );
    p.one(
        "htaccel_polled_directories",
        Kind::Gauge,
        "Directories revalidated by stat every AccessFileCheckInterval (not watchable).",
        r.polled_dirs,
    );
    p.one(
        "htaccel_stat_cache_entries",
        Kind::Gauge,
        "File-metadata answers cached.",
        r.stat_entries,
    );
    p.one(
        "htaccel_file_cache_hits_total",
        Kind::Counter,
        "Static files sent from a descriptor the file cache kept open.",
        t.get(Counter::FileCacheHits),
    );
    p.one(
        "htaccel_file_cache_opens_total",
        Kind::Counter,
        "Static files opened.",
        t.get(Counter::FileCacheOpens),
    );
    p.one(
        "htaccel_answer_memo_hits_total",
        Kind::Counter,
        "Requests answered whole from the answer memo.",
        t.get(Counter::AnswerMemoHits),
    );
    p.one(
        "htaccel_answer_memo_recorded_total",
        Kind::Counter,
        "Requests decided with their inputs recorded for the answer memo.",
        t.get(Counter::AnswerMemoRecorded),
    );
    p.one(
        "htaccel_backend_requests_total",
        Kind::Counter,
        "Backend exchanges (PHP-FPM, HTTP upstreams) started.",
        t.get(Counter::BackendRequests),
    );
    p.one(
        "htaccel_backend_connects_total",
        Kind::Counter,
        "Backend connections opened.",
        t.get(Counter::BackendConnects),
    );
    p.one(
        "htaccel_backend_reuses_total",
        Kind::Counter,
        "Backend exchanges on a kept-alive connection of the pool.",
        t.get(Counter::BackendReuses),
    );
    p.one(
        "htaccel_backend_failures_total",
        Kind::Counter,
        "Backend connections that could not be made (503).",
        t.get(Counter::BackendFailures),
    );
    p.0
}
