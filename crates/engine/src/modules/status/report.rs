//! Everything a status page shows, gathered once per request: the
//! per-thread counters summed, the clock, the load, the CPU time, and
//! htaccel's caches.

use crate::request::Ctx;
use crate::stats::{self, Counter, Totals};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// One status page's figures.
pub struct Report {
    pub server_name: String,
    pub local_ip: String,
    pub version: String,
    pub built: String,
    pub now: SystemTime,
    pub started: SystemTime,
    pub extended: bool,
    pub totals: Totals,
    /// Each event loop's counters (threads that answered requests).
    pub loops: Vec<Totals>,
    pub load: [f64; 3],
    /// CPU seconds: user, system, children's user, children's system.
    pub cpu: [f64; 4],
    pub pid: u32,
    /// htaccel's caches.
    pub htaccess_levels: usize,
    pub watched_dirs: usize,
    pub polled_dirs: usize,
    pub stat_entries: usize,
}

impl Report {
    pub fn gather(ctx: &Ctx<'_>) -> Report {
        let engine = ctx.engine;
        let watch = crate::watch::global();
        let sites = std::iter::once(&engine.main).chain(engine.vhosts.iter());
        Report {
            server_name: ctx.server_name(),
            local_ip: ctx.req.local.ip().to_string(),
            version: format!("htaccel/{}", env!("CARGO_PKG_VERSION")),
            built: built(),
            now: SystemTime::now(),
            started: engine.modules.status.started,
            extended: engine.modules.status.extended,
            totals: stats::totals(),
            loops: stats::per_thread()
                .into_iter()
                .filter(|t| t.get(Counter::Accesses) > 0)
                .collect(),
            load: load(),
            cpu: cpu(),
            pid: std::process::id(),
            htaccess_levels: sites.map(|s| s.tree.len()).sum(),
            watched_dirs: watch.watched_dirs(),
            polled_dirs: watch.polled_dirs(),
            stat_entries: watch.stats.len(),
        }
    }

    pub fn uptime(&self) -> u64 {
        self.now
            .duration_since(self.started)
            .unwrap_or(Duration::ZERO)
            .as_secs()
    }

    pub fn accesses(&self) -> u64 {
        self.totals.get(Counter::Accesses)
    }

    pub fn kbytes(&self) -> u64 {
        self.totals.get(Counter::BytesSent) >> 10
    }

    pub fn duration_ms(&self) -> u64 {
        self.totals.get(Counter::DurationUs) / 1000
    }

    pub fn gauge(&self, c: Counter) -> u64 {
        self.totals.gauge(c)
    }

    /// Requests being read or answered.
    pub fn busy(&self) -> u64 {
        self.gauge(Counter::ConnsReading) + self.gauge(Counter::ConnsWriting)
    }

    pub fn idle(&self) -> u64 {
        self.gauge(Counter::EventLoops)
    }

    /// The scoreboard line: a character per connection, `_` per event loop.
    pub fn scoreboard(&self) -> String {
        let mut s = String::new();
        for (c, ch) in [
            (Counter::ConnsReading, 'R'),
            (Counter::ConnsWriting, 'W'),
            (Counter::ConnsKeepAlive, 'K'),
            (Counter::ConnsClosing, 'C'),
            (Counter::EventLoops, '_'),
        ] {
            s.extend(std::iter::repeat_n(ch, self.gauge(c) as usize));
        }
        s
    }

    /// Apache's `CPULoad`: CPU time as a share of the uptime, in percent.
    /// Not within the first second, where Apache divides by zero.
    pub fn cpu_load(&self) -> Option<f64> {
        let total: f64 = self.cpu.iter().sum();
        let up = self.uptime();
        (total > 0.0 && up > 0).then(|| total / up as f64 * 100.0)
    }
}

/// When the running executable was built: its modification time, in the
/// form Apache prints its build time.
fn built() -> String {
    std::fs::metadata("/proc/self/exe")
        .and_then(|m| m.modified())
        .map(|t| {
            let secs = t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs() as i64;
            let (y, m, d) = crate::http::date::civil_from_days(secs.div_euclid(86_400));
            let rem = secs.rem_euclid(86_400);
            format!(
                "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
                rem / 3600,
                rem / 60 % 60,
                rem % 60
            )
        })
        .unwrap_or_default()
}

fn load() -> [f64; 3] {
    let mut l = [0f64; 3];
    // SAFETY: `l` has room for the three values asked for.
    let n = unsafe { libc::getloadavg(l.as_mut_ptr(), 3) };
    if n != 3 {
        l = [0.0; 3];
    }
    l
}

fn cpu() -> [f64; 4] {
    let usage = |who| {
        // SAFETY: getrusage fills the zeroed struct it is given.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrusage(who, &mut u) } != 0 {
            return (0.0, 0.0);
        }
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        (secs(u.ru_utime), secs(u.ru_stime))
    };
    let (u, s) = usage(libc::RUSAGE_SELF);
    let (cu, cs) = usage(libc::RUSAGE_CHILDREN);
    [u, s, cu, cs]
}

/// C's `%g`: six significant digits, trailing zeros dropped, exponent form
/// below 1e-4 and from 1e6.
pub fn g(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return if x.is_finite() {
            "0".into()
        } else {
            x.to_string()
        };
    }
    let sci = format!("{x:.5e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let m = trim_zeros(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{m}e{sign}{:02}", exp.abs());
    }
    let decimals = (5 - exp).max(0) as usize;
    trim_zeros(&format!("{x:.decimals$}")).to_string()
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// `show_time`: " 1 day 2 hours 3 minutes 4 seconds", parts that are 0 left out.
pub fn show_time(mut secs: u64) -> String {
    let s = secs % 60;
    secs /= 60;
    let m = secs % 60;
    secs /= 60;
    let h = secs % 24;
    let d = secs / 24;
    let mut out = String::new();
    for (n, unit) in [(d, "day"), (h, "hour"), (m, "minute"), (s, "second")] {
        if n != 0 {
            out.push_str(&format!(" {n} {unit}{}", if n == 1 { "" } else { "s" }));
        }
    }
    out
}

/// `DEFAULT_TIME_FORMAT` ("%A, %d-%b-%Y %H:%M:%S %Z"), in UTC.
pub fn status_time(t: SystemTime) -> String {
    const WDAY: [&str; 7] = [
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
        "Monday",
        "Tuesday",
        "Wednesday",
    ];
    const MON: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let secs = t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs() as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = crate::http::date::civil_from_days(days);
    format!(
        "{}, {d:02}-{}-{y} {:02}:{:02}:{:02} UTC",
        WDAY[days.rem_euclid(7) as usize],
        MON[m as usize - 1],
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_is_cs_percent_g() {
        assert_eq!(g(0.0), "0");
        assert_eq!(g(0.01), "0.01");
        assert_eq!(g(2048.0), "2048");
        assert_eq!(g(1.0 / 3.0), "0.333333");
        assert_eq!(g(1234567.0), "1.23457e+06");
        assert_eq!(g(0.00001), "1e-05");
        assert_eq!(g(512.5), "512.5");
    }

    #[test]
    fn times_as_apache_prints_them() {
        assert_eq!(show_time(0), "");
        assert_eq!(show_time(3661), " 1 hour 1 minute 1 second");
        assert_eq!(show_time(2 * 86_400 + 120), " 2 days 2 minutes");
        let t = UNIX_EPOCH + Duration::from_secs(1_795_242_770);
        assert_eq!(status_time(t), "Saturday, 21-Nov-2026 06:32:50 UTC");
    }
}
