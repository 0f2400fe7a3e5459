//! mod_status: `SetHandler server-status` answers with the server's status
//! (Apache's HTML page, `?auto` for monitoring tools, `?refresh=N`,
//! `?notable`), and htaccel's own `SetHandler htaccel-metrics` with the
//! same counters and htaccel's caches in Prometheus's text format. Both
//! are handlers like any other: placed with `<Location>`, protected with
//! `Require`.
//!
//! # Apache's scoreboard on htaccel's event loops
//!
//! Apache counts fixed worker slots (processes × threads); htaccel has one
//! event loop per core, each serving any number of connections. The page
//! maps them so that what monitoring tools compute stays meaningful:
//!
//! * `Scoreboard`: one character per open connection in its state — `R`
//!   reading a request head (from the first byte, or the start of a new
//!   connection), `W` a request being decided or answered (backend
//!   exchanges included), `K` idle between requests, `C` lingering close —
//!   then one `_` per event loop (each is always waiting for connections).
//! * `BusyWorkers`: the connections in `R` or `W` (requests in progress);
//!   `IdleWorkers`: the event loops; `GracefulWorkers`: 0.
//! * `Processes`: 1 (`Stopping`: 0); `ConnsTotal`: open connections;
//!   `ConnsAsyncKeepAlive`: `K`; `ConnsAsyncClosing`: `C`;
//!   `ConnsAsyncWaitIO` and `ConnsAsyncWriting`: 0 (htaccel does not tell
//!   these apart from `R` and `W`).
//! * `Total Accesses`, `Total kBytes`, `Total Duration`: requests answered,
//!   body bytes sent and their time, from the per-thread counters of
//!   [`crate::stats`]; `ServerMPM`: `event`; generations 1 and 0.
//! * The extended table (`ExtendedStatus On`) has one row per event loop
//!   (`Srv` is the loop's number): its accesses, duration and traffic.
//!
//! `ExtendedStatus` is on when mod_status is loaded, as in Apache; `Off`
//! leaves out the traffic figures and the table.

mod metrics;
mod page;
mod report;

use crate::http::{Body, Response};
use crate::registry::Module;
use crate::request::{Ctx, Status};
use std::time::SystemTime;

/// The handler names: Apache's, its MIME-type form, and htaccel's own.
const STATUS_HANDLER: &str = "server-status";
const STATUS_MAGIC_TYPE: &str = "application/x-httpd-status";
/// htaccel's own: the Prometheus page. Beyond Apache (docs/deviations.md).
pub const METRICS_HANDLER: &str = "htaccel-metrics";

/// What the status pages know from the configuration and the start.
#[derive(Clone, Debug)]
pub struct StatusSettings {
    /// `ExtendedStatus`.
    pub extended: bool,
    /// When this configuration started serving (Apache's restart time).
    pub started: SystemTime,
    /// Whether mod_status is loaded (`server-status` answers only then).
    pub loaded: bool,
}

impl StatusSettings {
    pub fn new(global: &crate::config::server::Global, loaded: bool) -> StatusSettings {
        StatusSettings {
            extended: global.extended_status.unwrap_or(loaded),
            started: SystemTime::now(),
            loaded,
        }
    }
}

/// mod_status's start: its settings, and the time its pages count from.
pub(crate) fn start(
    loaded: &crate::engine::Loaded,
    _log: &std::sync::Arc<dyn crate::http::Log>,
) -> Result<StatusSettings, String> {
    Ok(StatusSettings::new(
        &loaded.build.global,
        loaded.env.is_loaded("status_module"),
    ))
}

/// Whether the handler `name` is one of this module's pages.
pub fn claims(name: &str) -> bool {
    name == STATUS_HANDLER || name == STATUS_MAGIC_TYPE || name == METRICS_HANDLER
}

/// The status handlers, when the request's handler is one of them and the
/// method is `GET` (or `HEAD`); `None` lets the default handler answer, as
/// Apache's handler declines.
pub fn handler(ctx: &mut Ctx<'_>) -> Option<Result<Response, Status>> {
    let name = ctx.handler_name()?;
    let status = name == STATUS_HANDLER || name == STATUS_MAGIC_TYPE;
    if !(status && ctx.engine.modules.status.loaded || name == METRICS_HANDLER) {
        return None;
    }
    if ctx.method != "GET" && ctx.method != "HEAD" {
        return None;
    }
    // Counters and clocks: never an answer to keep.
    crate::answer_memo::note_volatile();
    let report = report::Report::gather(ctx);
    let mut resp = Response::new(200);
    if status {
        let opts = page::Options::parse(ctx.args.as_deref());
        if let Some(secs) = opts.refresh {
            resp.add_header("Refresh", secs.to_string());
        }
        let signature = crate::errors::signature_line(ctx);
        let sections: Vec<String> = crate::modules::hooks::STATUS_SECTIONS
            .iter()
            .filter_map(|hook| hook(ctx, opts.auto))
            .collect();
        // A module that wrote its section passed it on before the page's
        // end: Apache can no longer count the page, and chunks it.
        if !sections.is_empty() {
            resp.stream = crate::http::Unannounced::Chunked;
        }
        let sections = sections.concat();
        let (body, content_type) = page::render(&report, &opts, &sections, signature.as_deref());
        resp.add_header("Content-Type", content_type);
        resp.body = Body::bytes(body);
    } else {
        resp.add_header("Content-Type", metrics::CONTENT_TYPE);
        resp.body = Body::bytes(metrics::render(&report));
    }
    Some(Ok(resp))
}

pub static MODULE: Module = Module {
    source: "mod_status.c",
    identifier: "status_module",
    builtin: false,
    directives: &[],
};
