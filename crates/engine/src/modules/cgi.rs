//! mod_cgi and mod_cgid: CGI scripts, run as a child process per request.
//!
//! Shared hosts run CGI the way Apache's documentation shows it:
//! `ScriptAlias /cgi-bin/ /srv/cgi-bin/` (mod_alias sets the `cgi-script`
//! handler and marks the request as script-aliased), or `Options +ExecCGI`
//! with `AddHandler cgi-script .cgi .pl` in a `.htaccess`. The engine
//! decides here, as mod_cgi's handler decides, and does no I/O: the
//! checks come first, in Apache's order and with its answers (`ExecCGI`
//! off and not script-aliased: 403; no file: 404; a directory: 403; path
//! info under `AcceptPathInfo Off`: 404), then [`decide`] hands the server
//! a [`BackendCall`] carrying the program, its arguments, its working
//! directory and the CGI environment (the one FastCGI gets,
//! `proxy::cgi_env`). The server runs the script (`server/src/cgi/`),
//! streams the request body to its standard input, reads its standard
//! output as a CGI response and calls back here: [`reply`] applies what
//! mod_cgi adds to the common header rules (`proxy::reply`): a `Location`
//! with status 200 is a local redirect (a path) or a 302 (a URL). A local
//! redirect to another script (or to PHP) is a second exchange, which the
//! server performs after dropping the first script's output
//! (`BackendAnswer::then`).
//!
//! A script that cannot be run (not executable, a bad interpreter line) is
//! answered 500, as Apache answers it; a script that does not end its
//! header block likewise. `nph-` scripts talk to the client directly.
//!
//! mod_cgi and mod_cgid differ only in how Apache starts the child (a
//! fork of the server, or of a daemon reached through `ScriptSock`);
//! htaccel has one way, so `ScriptSock` is accepted and names nothing.
//! `CGIPassAuth` and `CGIVar` are the core's, read by the environment
//! builder, and so are `RLimitCPU`, `RLimitMEM` and `RLimitNPROC`, which
//! mod_cgi sets in the child before the script runs (mod_cgid, as Debian
//! builds it, does not); they live here beside the handler they serve.
//!
//! Where Apache without a CGI module would send a `cgi-script` file's
//! bytes, htaccel never does: [`refuses_as_file`] answers 403.

use crate::handler::Settled;
use crate::http::backend::{
    BackendAddr, BackendAnswer, BackendCall, BackendError, BackendHead, BackendRequest, CgiRequest,
    Decision, ScriptLog,
};
use crate::modules::core::options::OPT_EXECCGI;
use crate::modules::proxy::{self, cgi_env};
use crate::registry::{
    Args, Directive, Module, Run, ACCESS_CONF, OR_ALL, OR_AUTHCFG, OR_FILEINFO, RSRC_CONF,
};
use crate::request::Ctx;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The per-directory slot: mod_cgid's `CGIDScriptTimeout` (mod_cgi's
/// `CGIScriptTimeout`) and the core's `CGIPassAuth` and `CGIVar`.
#[derive(Clone, Debug, Default)]
pub struct CgiDir {
    pub timeout: Option<Duration>,
    pub pass_auth: Option<bool>,
    /// `CGIVar REQUEST_URI current-uri` (`Some(true)`) or `original-uri`.
    pub request_uri_current: Option<bool>,
    /// `ScriptLog` and `ScriptLogLength` (server-wide directives, kept in
    /// the server's base configuration).
    pub script_log: Option<Arc<PathBuf>>,
    pub script_log_length: Option<u64>,
    /// The core's `RLimitCPU`, `RLimitMEM`, `RLimitNPROC`, resolved when
    /// read (as Apache resolves them: `max` and an omitted maximum from
    /// the server's own limits).
    pub rlimit_cpu: Option<RLimit>,
    pub rlimit_mem: Option<RLimit>,
    pub rlimit_nproc: Option<RLimit>,
}

impl CgiDir {
    pub fn merge(base: &CgiDir, new: &CgiDir) -> CgiDir {
        CgiDir {
            timeout: new.timeout.or(base.timeout),
            pass_auth: new.pass_auth.or(base.pass_auth),
            request_uri_current: new.request_uri_current.or(base.request_uri_current),
            script_log: new.script_log.clone().or_else(|| base.script_log.clone()),
            script_log_length: new.script_log_length.or(base.script_log_length),
            rlimit_cpu: new.rlimit_cpu.or(base.rlimit_cpu),
            rlimit_mem: new.rlimit_mem.or(base.rlimit_mem),
            rlimit_nproc: new.rlimit_nproc.or(base.rlimit_nproc),
        }
    }
}

/// A resource limit for the scripts mod_cgi starts: soft and hard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RLimit {
    pub resource: Resource,
    pub soft: u64,
    pub hard: u64,
}

/// The resources the core's `RLimit*` directives name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resource {
    /// `RLimitCPU`: seconds of CPU.
    Cpu,
    /// `RLimitMEM`: bytes of address space (`RLIMIT_AS`).
    Mem,
    /// `RLimitNPROC`: processes of the user.
    Nproc,
}

impl Resource {
    pub fn libc(self) -> libc::__rlimit_resource_t {
        match self {
            Resource::Cpu => libc::RLIMIT_CPU,
            Resource::Mem => libc::RLIMIT_AS,
            Resource::Nproc => libc::RLIMIT_NPROC,
        }
    }
}

/// `ap_unixd_set_rlimit`: the server's current limits, changed by the
/// directive's soft value (`max`: the current hard one) and hard value;
/// unprivileged, the hard value cannot be raised (Apache then logs and
/// keeps it).
fn rlimit_arg(
    w: &mut crate::config::Walker<'_>,
    inv: &crate::config::Invocation<'_>,
    resource: Resource,
) -> Result<Option<RLimit>, String> {
    let mut current = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit(2) writes the struct it is given.
    if unsafe { libc::getrlimit(resource.libc(), &mut current) } != 0 {
        w.warn(inv.origin, format!("{}: getrlimit failed", inv.name));
        return Ok(None);
    }
    let soft = if inv.words[0].eq_ignore_ascii_case("max") {
        current.rlim_max
    } else {
        bytes_arg(&inv.words[0])
    };
    let hard = inv.words.get(1).map_or(0, |w| bytes_arg(w));
    let mut limit = RLimit {
        resource,
        soft: current.rlim_cur,
        hard: current.rlim_max,
    };
    // SAFETY: geteuid(2) cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        limit.soft = soft;
        if hard != 0 && hard > current.rlim_max {
            w.warn(
                inv.origin,
                format!("AH02174: Must be uid 0 to raise maximum {}", inv.name),
            );
        } else if hard != 0 {
            limit.hard = hard;
        }
    } else {
        if soft != 0 {
            limit.soft = soft;
        }
        if hard != 0 {
            limit.hard = hard;
        }
    }
    Ok(Some(limit))
}

/// The handlers mod_cgi answers (`cgi-script`, and the magic type that
/// `AddType application/x-httpd-cgi .cgi` gives).
const HANDLERS: &[&str] = &["cgi-script", "application/x-httpd-cgi"];

/// `ScriptLogLength`/`ScriptLogBuffer`: a number of bytes (C's `atol`,
/// as mod_cgi reads it).
fn bytes_arg(text: &str) -> u64 {
    let t = text.trim_start();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    t[..digits].parse().unwrap_or(0)
}

/// mod_cgi's `DEFAULT_LOGBYTES`.
const DEFAULT_LOG_BYTES: u64 = 10_385_760;

/// Apache's `ap_timeout_parameter_parse`: a number, seconds unless
/// followed by `ms`, `s`, `mi` or `h`.
pub fn parse_timeout(text: &str) -> Option<Duration> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let n: u64 = text[..digits].parse().ok()?;
    match text[digits..].to_ascii_lowercase().as_str() {
        "" | "s" => Some(Duration::from_secs(n)),
        "ms" => Some(Duration::from_millis(n)),
        "mi" => Some(Duration::from_secs(n.checked_mul(60)?)),
        "h" => Some(Duration::from_secs(n.checked_mul(3600)?)),
        _ => None,
    }
}

fn script_timeout(
    _w: &mut crate::config::Walker<'_>,
    inv: &crate::config::Invocation<'_>,
    c: &mut crate::dirconf::DirConf,
) -> Result<(), String> {
    match parse_timeout(&inv.words[0]) {
        Some(t) => {
            c.cgi.timeout = Some(t);
            Ok(())
        }
        None => Err(format!("Invalid {} value", inv.name)),
    }
}

/// The directives both modules share.
macro_rules! script_log_directives {
    () => {
        [
            Directive {
                name: "ScriptLog",
                args: Args::Take1,
                req_override: RSRC_CONF,
                about: "the name of a log for script debugging info",
                run: Run::Handler(|w, inv, c| {
                    let path = w.env.server_root.join(&inv.words[0]);
                    c.cgi.script_log = Some(Arc::new(path));
                    Ok(())
                }),
            },
            Directive {
                name: "ScriptLogLength",
                args: Args::Take1,
                req_override: RSRC_CONF,
                about: "the maximum length (in bytes) of the script debug log",
                run: Run::Handler(|_w, inv, c| {
                    c.cgi.script_log_length = Some(bytes_arg(&inv.words[0]));
                    Ok(())
                }),
            },
            // The POST data mod_cgi copies into a failing script's dump,
            // which htaccel's ScriptLog does not write (docs/deviations.md).
            Directive {
                name: "ScriptLogBuffer",
                args: Args::Take1,
                req_override: RSRC_CONF,
                about: "the maximum size (in bytes) to record of a POST request",
                run: Run::Handler(|_w, inv, _c| {
                    bytes_arg(&inv.words[0]);
                    Ok(())
                }),
            },
        ]
    };
}

static CGI_DIRECTIVES: &[Directive] = &{
    let [a, b, c] = script_log_directives!();
    [
        a,
        b,
        c,
        Directive {
            name: "CGIScriptTimeout",
            args: Args::Take1,
            req_override: RSRC_CONF | ACCESS_CONF,
            about: "The amount of time to wait between successful reads from the CGI script, in seconds.",
            run: Run::Handler(script_timeout),
        },
    ]
};

static CGID_DIRECTIVES: &[Directive] = &{
    let [a, b, c] = script_log_directives!();
    [
        a,
        b,
        c,
        // mod_cgid's daemon socket: htaccel starts scripts itself, so the
        // socket names nothing; accepted so that Debian's cgid.conf loads.
        Directive {
            name: "ScriptSock",
            args: Args::Take1,
            req_override: RSRC_CONF,
            about: "the name of the socket to use for communication with the cgi daemon.",
            run: Run::Handler(|_w, _inv, _c| Ok(())),
        },
        Directive {
            name: "CGIDScriptTimeout",
            args: Args::Take1,
            req_override: RSRC_CONF | ACCESS_CONF,
            about: "The amount of time to wait between successful reads from the CGI script, in seconds.",
            run: Run::Handler(script_timeout),
        },
    ]
};

pub static CGI_MODULE: Module = Module {
    source: "mod_cgi.c",
    identifier: "cgi_module",
    builtin: false,
    directives: CGI_DIRECTIVES,
};

pub static CGID_MODULE: Module = Module {
    source: "mod_cgid.c",
    identifier: "cgid_module",
    builtin: false,
    directives: CGID_DIRECTIVES,
};

/// The core's directives about the CGI environment.
pub static CORE_MODULE: Module = Module {
    source: "core.c",
    identifier: "core_module",
    builtin: true,
    directives: &[
        Directive {
            name: "CGIPassAuth",
            args: Args::Flag,
            req_override: OR_AUTHCFG | ACCESS_CONF,
            about: "Controls whether HTTP authorization headers, normally hidden, will be passed to scripts",
            run: Run::Handler(|_w, inv, c| {
                c.cgi.pass_auth = Some(crate::registry::flag(&inv.words));
                Ok(())
            }),
        },
        Directive {
            name: "RLimitCPU",
            args: Args::Take12,
            req_override: OR_ALL,
            about: "Soft/hard limits for max CPU usage in seconds",
            run: Run::Handler(|w, inv, c| {
                c.cgi.rlimit_cpu = rlimit_arg(w, inv, Resource::Cpu)?;
                Ok(())
            }),
        },
        Directive {
            name: "RLimitMEM",
            args: Args::Take12,
            req_override: OR_ALL,
            about: "Soft/hard limits for max memory usage per process",
            run: Run::Handler(|w, inv, c| {
                c.cgi.rlimit_mem = rlimit_arg(w, inv, Resource::Mem)?;
                Ok(())
            }),
        },
        Directive {
            name: "RLimitNPROC",
            args: Args::Take12,
            req_override: OR_ALL,
            about: "soft/hard limits for max number of processes per uid",
            run: Run::Handler(|w, inv, c| {
                c.cgi.rlimit_nproc = rlimit_arg(w, inv, Resource::Nproc)?;
                Ok(())
            }),
        },
        Directive {
            name: "CGIVar",
            args: Args::Take2,
            req_override: OR_FILEINFO | ACCESS_CONF | RSRC_CONF,
            about: "Controls how some CGI variables are set",
            run: Run::Handler(|_w, inv, c| {
                if inv.words[0] != "REQUEST_URI" {
                    return Err(format!("Unrecognized CGI variable: \"{}\"", inv.words[0]));
                }
                match inv.words[1].to_ascii_lowercase().as_str() {
                    "current-uri" => c.cgi.request_uri_current = Some(true),
                    "original-uri" => c.cgi.request_uri_current = Some(false),
                    _ => {
                        return Err(
                            "Valid rules for REQUEST_URI are 'current-uri' and 'original-uri'"
                                .into(),
                        )
                    }
                }
                Ok(())
            }),
        },
    ],
};

/// Which of the two modules is loaded (mod_cgid first: the event MPM's).
fn loaded(ctx: &Ctx<'_>) -> Option<&'static str> {
    let env = &ctx.site.env;
    if env.is_loaded("mod_cgid.c") {
        Some("cgid")
    } else if env.is_loaded("mod_cgi.c") {
        Some("cgi")
    } else {
        None
    }
}

/// The handler name the request is dispatched on: `r->handler`, or its
/// content type when no handler is set (`ap_invoke_handler`).
fn is_cgi_handler(ctx: &Ctx<'_>) -> bool {
    ctx.handler_name().is_some_and(|h| HANDLERS.contains(&h))
}

/// Whether mod_cgi's (or mod_cgid's) handler takes the request.
pub fn wants(ctx: &Ctx<'_>) -> bool {
    is_cgi_handler(ctx) && loaded(ctx).is_some()
}

/// The default handler's guard: an executable file (a CGI script, which
/// is the only kind mod_cgi runs) whose handler is `cgi-script` while no
/// CGI module is loaded is refused (403, with the line for the error log)
/// instead of sent. Apache would send the script's bytes; they may hold
/// passwords. Other files keep Apache's answer: hosts mark upload
/// directories `AddHandler cgi-script .php .pl …` with `Options -ExecCGI`
/// so that nothing there runs, and serve them as they are.
pub fn refuses_as_file(ctx: &mut Ctx<'_>) -> bool {
    let executable = ctx
        .finfo
        .is_some_and(|f| f.kind == crate::fs::Kind::File && f.mode & 0o111 != 0);
    if !executable || !is_cgi_handler(ctx) || loaded(ctx).is_some() {
        return false;
    }
    ctx.reason = Some(crate::request::Reason::new(
        "error",
        "core",
        format!(
            "{}: not sent: its handler is {} and neither mod_cgi nor mod_cgid is loaded (htaccel never sends a script's source; LoadModule cgid_module to run it)",
            ctx.filename,
            ctx.handler_name().unwrap_or_default()
        ),
    ));
    true
}

/// mod_cgi's checks before it runs a script: the status, with the
/// error-log line as `log_scripterror` writes it.
fn refusal(ctx: &Ctx<'_>, cgid: bool) -> Option<(u16, String, &'static str)> {
    let no = |cgi: &str, cgid_no: &str| if cgid { cgid_no } else { cgi }.to_string();
    let (status, logno, text) = if ctx.conf.core.opts() & OPT_EXECCGI == 0 && !ctx.script_aliased {
        (
            403,
            no("AH02809", "AH01262"),
            "Options ExecCGI is off in this directory",
        )
    } else {
        match ctx.finfo.map(|f| f.kind) {
            None => (
                404,
                no("AH02811", "AH01264"),
                "script not found or unable to stat",
            ),
            Some(crate::fs::Kind::Dir) => (
                403,
                no("AH02812", "AH01265"),
                "attempt to invoke directory as script",
            ),
            _ if !ctx.path_info.is_empty() && ctx.conf.core.accept_path_info == Some(false) => (
                404,
                no("AH02813", "AH01266"),
                "AcceptPathInfo off disallows user's path",
            ),
            _ => return None,
        }
    };
    Some((
        status,
        format!("{logno}: stderr from {}: {text}", ctx.filename),
        text,
    ))
}

/// The `ScriptLog` in force for the request, if any.
fn script_log(ctx: &Ctx<'_>) -> Option<ScriptLog> {
    let path = ctx.conf.cgi.script_log.as_ref()?;
    let request = format!(
        "{} {}{}{} {}",
        ctx.method,
        String::from_utf8_lossy(&crate::path_text::bytes(&ctx.uri)),
        if ctx.args.is_some() { "?" } else { "" },
        ctx.args.as_deref().unwrap_or(""),
        ctx.req.version.as_str()
    );
    Some(ScriptLog {
        path: PathBuf::from(path.as_ref()),
        max_bytes: ctx.conf.cgi.script_log_length.unwrap_or(DEFAULT_LOG_BYTES),
        request,
        filename: ctx.filename.clone(),
    })
}

/// The exchange for a request [`wants`] took, or mod_cgi's refusal;
/// `prev` is the request it was internally redirected from.
pub fn decide(mut ctx: Ctx<'_>, prev: Option<cgi_env::Prev>) -> Decision<'_> {
    let cgid = loaded(&ctx) == Some("cgid");
    if let Some((status, line, text)) = refusal(&ctx, cgid) {
        if let Some(log) = script_log(&ctx) {
            log.error(status, text);
        }
        ctx.reason = Some(crate::request::Reason::new(
            "error",
            loaded(&ctx).unwrap_or("cgi"),
            line,
        ));
        let resp = crate::errors::die(&mut ctx, status);
        return crate::error_backend::respond_or_backend(&mut ctx, resp);
    }
    if let Err(status) = crate::modules::filter::insert(&mut ctx) {
        return Decision::Respond(proxy::respond_error(ctx, status));
    }
    ctx.handler_ran = true;
    let env = cgi_env::build_cgi(&ctx, prev.as_ref());
    // Apache adds them to the request's own environment, where a local
    // redirect finds them (as `REDIRECT_*`) and the logs can name them.
    for (name, value) in &env {
        ctx.env
            .set(name, crate::path_text::from_bytes(value.clone()));
    }
    let program = crate::path_text::os_path(std::path::Path::new(&ctx.filename)).into_owned();
    let dir = program
        .parent()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"));
    let name = ctx.filename.rsplit('/').next().unwrap_or("");
    let nph = name.starts_with("nph-");
    let mut argv = vec![crate::path_text::bytes(&ctx.filename).into_owned()];
    argv.extend(isindex_args(ctx.args.as_deref().unwrap_or("")));
    let timeout = ctx.conf.cgi.timeout;
    let body_limit = ctx.conf.core.limit_req_body.unwrap_or(1 << 30);
    Decision::Backend(BackendCall {
        timeouts: Default::default(),
        addr: BackendAddr::Program(program.clone()),
        request: BackendRequest::Cgi(Box::new(CgiRequest {
            program,
            argv,
            env,
            dir,
            nph,
            timeout,
            script: ctx.filename.clone(),
            module: if cgid { "cgid" } else { "cgi" },
            script_log: script_log(&ctx),
            // mod_cgi applies the core's RLimit* to its scripts; mod_cgid
            // (built without AP_CGID_USE_RLIMIT, as Debian's is) does not.
            rlimits: if cgid {
                Vec::new()
            } else {
                [
                    ctx.conf.cgi.rlimit_cpu,
                    ctx.conf.cgi.rlimit_mem,
                    ctx.conf.cgi.rlimit_nproc,
                ]
                .into_iter()
                .flatten()
                .map(|l| (l.resource.libc() as i32, l.soft, l.hard))
                .collect()
            },
        })),
        body_limit,
        body_read: false,
        send_length: false,
        early_hints: ctx.modules.early_hints.take(),
        finish: Box::new(move |result| match result {
            Ok(head) => reply(ctx, head),
            Err(e) => failed(ctx, e),
        }),
    })
}

/// The script's arguments, as Apache's `create_argv` makes them from the
/// query string of an ISINDEX query (one without `=`): the words between
/// `+`, each URL-decoded (ending at a decoded NUL, as a C string does)
/// and with the shell's special characters escaped by a backslash
/// (`ap_escape_shell_cmd`).
pub fn isindex_args(args: &str) -> Vec<Vec<u8>> {
    if args.is_empty() || args.contains('=') {
        return Vec::new();
    }
    let raw = crate::path_text::bytes(args);
    // APACHE_ARG_MAX (4096) less the five other slots.
    raw.split(|&b| b == b'+')
        .take(4091)
        .map(|word| {
            let decoded = unescape(word);
            let end = memchr::memchr(0, &decoded).unwrap_or(decoded.len());
            escape_shell(&decoded[..end])
        })
        .collect()
}

/// `%XX` decoded; a malformed escape stays as written.
fn unescape(word: &[u8]) -> Vec<u8> {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(word.len());
    let mut i = 0;
    while i < word.len() {
        if word[i] == b'%' && i + 2 < word.len() {
            if let (Some(h), Some(l)) = (hex(word[i + 1]), hex(word[i + 2])) {
                out.push(h << 4 | l);
                i += 3;
                continue;
            }
        }
        out.push(word[i]);
        i += 1;
    }
    out
}

/// `ap_escape_shell_cmd`: a backslash before each character a shell
/// treats specially.
fn escape_shell(word: &[u8]) -> Vec<u8> {
    const SPECIAL: &[u8] = b"&;`'\"|*?~<>^()[]{}$\\\n";
    let mut out = Vec::with_capacity(word.len());
    for &b in word {
        if SPECIAL.contains(&b) || b == 0xff {
            out.push(b'\\');
        }
        out.push(b);
    }
    out
}

/// A failed run: 504 when the script said nothing within the time limit,
/// else 500 (it could not be started, or ended before its header block
/// did), with the reason in the error log.
fn failed(mut ctx: Ctx<'_>, error: BackendError) -> BackendAnswer<'_> {
    let status = match error {
        BackendError::Timeout(_) => 504,
        _ => 500,
    };
    if let Some(log) = script_log(&ctx) {
        log.error(status, error.message());
    }
    ctx.reason = Some(crate::request::Reason::new(
        "error",
        loaded(&ctx).unwrap_or("cgi"),
        error.message(),
    ));
    let resp = crate::errors::die(&mut ctx, status);
    BackendAnswer::respond(resp)
}

/// The script's header block: the common rules (`proxy::reply`), and
/// mod_cgi's own for a `Location` while the status is 200: a local path
/// is an internal redirect (as `GET`, without the body, the script's
/// output dropped), anything else a 302 whose page the server writes.
fn reply(mut ctx: Ctx<'_>, head: BackendHead) -> BackendAnswer<'_> {
    if let Some(bad) = head.lines.iter().find(|l| !l.contains(':')) {
        if let Some(log) = script_log(&ctx) {
            let shown: String = bad.chars().take(30).collect();
            log.error(
                500,
                &format!(
                    "malformed header from script '{}': Bad header: {shown}",
                    ctx.filename.rsplit('/').next().unwrap_or("")
                ),
            );
        }
    }
    let field = |name: &str| {
        head.lines.iter().find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name)
                .then(|| v.trim_matches([' ', '\t']).to_string())
        })
    };
    let location = field("Location");
    let status = field("Status").map(|s| proxy::reply::atoi(&s));
    let Some(location) = location else {
        return proxy::reply::finish(ctx, head);
    };
    if status.unwrap_or(ctx.prev_status.unwrap_or(200)) != 200 {
        return proxy::reply::finish(ctx, head);
    }
    // The other fields still count: they join the error-header table
    // that the redirect (or the 302 page) carries.
    if let Err(answer) = proxy::reply::keep_fields(&mut ctx, &head) {
        return *answer;
    }
    if location.starts_with('/') {
        return match local_redirect(&mut ctx, &location) {
            Decision::Respond(response) => answer(response),
            Decision::Kept(response) => answer(std::sync::Arc::unwrap_or_clone(response)),
            Decision::Backend(call) => BackendAnswer::Then(Box::new(call)),
        };
    }
    ctx.headers_out.push(("Location".into(), location));
    let resp = crate::errors::die(&mut ctx, 302);
    answer(resp)
}

/// An answer of the server's own instead of the script's output.
fn answer<'a>(response: crate::http::Response) -> BackendAnswer<'a> {
    BackendAnswer::respond(response)
}

/// `ap_internal_redirect_handler` for a script's local `Location`: the new
/// request's answer, or its own backend exchange (another script, PHP)
/// for the server to perform, mod_rewrite's internal redirects followed
/// as for any request.
fn local_redirect<'a>(ctx: &mut Ctx<'a>, location: &str) -> Decision<'a> {
    let from = cgi_env::Prev {
        uri: ctx.uri.clone(),
        args: ctx.args.take(),
    };
    ctx.method = "GET".into();
    ctx.headers_in.to_mut().remove("Content-Length");
    ctx.headers_in.to_mut().remove("Transfer-Encoding");
    // The location carries its own query; the script's is not added.
    ctx.modules.rewrite.redirect = Some(location.to_string());
    let (mut next, phases) = match crate::modules::hooks::redirect(ctx) {
        None => {
            let resp = crate::errors::die(ctx, 500);
            return Decision::Respond(resp);
        }
        Some(Err(resp)) => return Decision::Respond(resp),
        Some(Ok(redirected)) => redirected,
    };
    match crate::handler::settle(&mut next, phases, Some(from)) {
        Settled::Backend {
            last,
            backend,
            prev,
        } => (backend.decide)(last.map_or(next, |b| *b), prev),
        Settled::Failed { response, .. } | Settled::Switched { response, .. } => {
            Decision::Respond(response)
        }
        Settled::Handler { mut last, phases } => {
            let last = last.as_deref_mut().unwrap_or(&mut next);
            let resp = crate::request::respond(last, phases);
            crate::error_backend::respond_or_backend(last, resp)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;
    use crate::http::{AccessEntry, Log, Request};
    use std::net::SocketAddr;
    use std::sync::{Arc, Mutex};

    #[derive(Default)]
    struct Errors(Mutex<Vec<String>>);
    impl Log for Errors {
        fn access(&self, _: &AccessEntry<'_>) {}
        fn error(&self, _: &str, _: &str, _: Option<SocketAddr>, message: &str) {
            self.0.lock().unwrap().push(message.to_string());
        }
    }

    /// A site with a script under `ScriptAlias /cgi-bin/`, with `modules`
    /// loaded.
    fn engine(modules: &str, tag: &str, log: Arc<Errors>) -> (Engine, std::path::PathBuf) {
        let root = std::env::temp_dir().join(format!("htaccel-cgi-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(root.join("cgi-bin")).unwrap();
        std::fs::write(root.join("cgi-bin/s.sh"), "#!/bin/sh\necho SOURCE\n").unwrap();
        std::fs::set_permissions(
            root.join("cgi-bin/s.sh"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        std::fs::write(root.join("cgi-bin/data.pl"), "not a script\n").unwrap();
        let text = format!(
            "LoadModule alias_module m.so\nLoadModule mime_module m.so\nTypesConfig /dev/null\n{modules}DocumentRoot {0}\nScriptAlias /cgi-bin/ {0}/cgi-bin/\n",
            root.display()
        );
        let engine = crate::test_support::engine_logging(&text, "/", log).unwrap();
        (engine, root)
    }

    fn request(target: &str) -> Request {
        crate::test_support::request("GET", target, "localhost")
    }

    #[test]
    fn without_a_cgi_module_the_script_is_refused_not_sent() {
        let log = Arc::new(Errors::default());
        let (e, root) = engine("", "none", log.clone());
        let req = request("/cgi-bin/s.sh");
        let Decision::Respond(resp) = crate::handler::decide(&e, &e.main, &req) else {
            panic!("a backend exchange without a CGI module");
        };
        assert_eq!(resp.status, 403);
        assert!(log
            .0
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("never sends a script's source")));
        // A file that is no script (not executable) is served, as Apache serves it.
        let req = request("/cgi-bin/data.pl");
        let Decision::Respond(resp) = crate::handler::decide(&e, &e.main, &req) else {
            panic!("a backend exchange without a CGI module");
        };
        assert_eq!(resp.status, 200);
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_script_aliased_file_runs_in_its_directory_with_isindex_words() {
        let (e, root) = engine("LoadModule cgid_module m.so\n", "run", Arc::default());
        let req = request("/cgi-bin/s.sh/p?a+b");
        let Decision::Backend(call) = crate::handler::decide(&e, &e.main, &req) else {
            panic!("no backend exchange");
        };
        let BackendRequest::Cgi(script) = &call.request else {
            panic!("not CGI");
        };
        let path = format!("{}/cgi-bin/s.sh", root.display());
        assert_eq!(script.program, std::path::PathBuf::from(&path));
        assert_eq!(script.dir, root.join("cgi-bin"));
        assert_eq!(
            script.argv,
            vec![path.into_bytes(), b"a".to_vec(), b"b".to_vec()]
        );
        assert!(!script.nph);
        assert_eq!(script.module, "cgid");
        let var = |name: &str| {
            script
                .env
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| String::from_utf8(v.clone()).unwrap())
        };
        assert_eq!(var("PATH_INFO").as_deref(), Some("/p"));
        assert_eq!(var("SCRIPT_NAME").as_deref(), Some("/cgi-bin/s.sh"));
        assert_eq!(var("GATEWAY_INTERFACE").as_deref(), Some("CGI/1.1"));
        assert_eq!(var("PHP_VALUE"), None);
        // A URL in Location with status 200: a 302 of the server's own.
        let answer = (call.finish)(Ok(BackendHead {
            lines: vec!["Location: http://example.com/x".into()],
            ..Default::default()
        }));
        let BackendAnswer::Send {
            response,
            pass_body,
        } = answer
        else {
            panic!("a redirect of the server's own is sent");
        };
        assert_eq!(response.status, 302);
        assert!(!pass_body);
        assert_eq!(response.header("Location"), Some("http://example.com/x"));
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn isindex() {
        let words = |s: &str| -> Vec<String> {
            isindex_args(s)
                .into_iter()
                .map(|w| String::from_utf8(w).unwrap())
                .collect()
        };
        assert_eq!(
            words("word+other%20one+%3Bls"),
            ["word", "other one", "\\;ls"]
        );
        assert!(words("a=1").is_empty());
        assert!(words("").is_empty());
        assert_eq!(words("a%00b+%zz+%4"), ["a", "%zz", "%4"]);
        assert_eq!(words("x++y"), ["x", "", "y"]);
    }

    #[test]
    fn script_log_entries_and_their_limit() {
        let path = std::env::temp_dir().join(format!("htaccel-scriptlog-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let log = ScriptLog {
            path: path.clone(),
            max_bytes: 150,
            request: "GET /cgi-bin/x.sh?a HTTP/1.1".into(),
            filename: "/srv/cgi-bin/x.sh".into(),
        };
        log.error(403, "Options ExecCGI is off in this directory");
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert!(lines[0].starts_with("%% ["));
        assert!(lines[0].ends_with("] GET /cgi-bin/x.sh?a HTTP/1.1"));
        assert_eq!(lines[1], "%% 403 /srv/cgi-bin/x.sh");
        assert_eq!(lines[2], "%error");
        assert_eq!(lines[3], "Options ExecCGI is off in this directory");
        // Past ScriptLogLength nothing more is written.
        log.error(500, "a second entry, over the limit");
        let grown = std::fs::read_to_string(&path).unwrap();
        assert!(grown.len() > text.len());
        log.error(500, "a third, not written");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), grown);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn timeouts() {
        assert_eq!(parse_timeout("30"), Some(Duration::from_secs(30)));
        assert_eq!(parse_timeout("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse_timeout("2mi"), Some(Duration::from_secs(120)));
        assert_eq!(parse_timeout("1h"), Some(Duration::from_secs(3600)));
        assert_eq!(parse_timeout("x"), None);
        assert_eq!(parse_timeout("5 days"), None);
    }
}
