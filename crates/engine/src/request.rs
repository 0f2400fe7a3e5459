//! One request on its way through Apache's phases, and the phases
//! themselves, top to bottom (Apache's `ap_process_request_internal` and
//! the handler that follows it).
//!
//! Sub-requests (`DirectoryIndex` candidates, directory listing entries)
//! run the same phases up to the handler; internal redirects
//! (`ErrorDocument /local`) start over with a new URI.

use crate::dirconf::DirConf;
use crate::engine::Engine;
use crate::fs::FileInfo;
use crate::http::{Request, Response};
use crate::modules::hooks;
use crate::site::Site;
use crate::walk::{self, WalkError};
use std::borrow::Cow;
use std::sync::Arc;

/// A request as the phases see and change it (Apache's `request_rec`).
pub struct Ctx<'a> {
    pub engine: &'a Engine,
    pub site: &'a Site,
    pub req: &'a Request,
    pub method: Cow<'a, str>,
    /// Decoded, normalised URI path (`r->uri`).
    pub uri: String,
    /// Query string as sent (`r->args`).
    pub args: Option<String>,
    pub filename: String,
    pub path_info: String,
    pub finfo: Option<FileInfo>,
    pub conf: Arc<DirConf>,
    pub content_type: Option<String>,
    pub handler: Option<String>,
    pub encodings: Vec<String>,
    pub languages: Vec<String>,
    /// `Location` and other headers for the response (`r->headers_out`).
    pub headers_out: Vec<(String, String)>,
    pub is_subreq: bool,
    /// A file sub-request (`ap_sub_req_lookup_dirent`): its file name is
    /// set by the asking module, so `translate_name` does not run.
    pub file_subreq: bool,
    /// Internal redirects so far (`LimitInternalRecursion`).
    pub redirects: u32,
    /// Error-log message explaining the status, logged once.
    pub reason: Option<Reason>,
    /// Extra sentence for the error page (Apache's `error-notes`).
    pub error_note: Option<String>,
    /// The status line a module set for the error it reports
    /// (`r->status_line`: mod_proxy's `502 Proxy Error`), used when the
    /// built-in page is sent for that status.
    pub error_status_line: Option<String>,
    /// The `verbose-error-to` note is `*` (`ap_proxyerror` sets it): a
    /// 500 page shows `error_note` instead of its standard text.
    pub verbose_errors: bool,
    /// mod_ssl's `ssl-renegotiate-forbidden` note: the request needs a new
    /// client verification, which a stream of a multiplexed connection
    /// cannot have (see [`crate::http::Response::renegotiation_forbidden`]).
    pub renegotiation_forbidden: bool,
    /// `REDIRECT_STATUS` of an `ErrorDocument` redirect.
    pub prev_status: Option<u16>,
    /// The answer is a status given after `r->status` was set back to 200
    /// (mod_rewrite does so): inside an `ErrorDocument` request it is a new
    /// error, with its own `ErrorDocument`, not a failure of the error
    /// document (`ap_die` sees no recursion).
    pub status_reset: bool,
    /// The status that started a chain of such `ErrorDocument` requests
    /// (`ap_die`'s first error), carried by internal redirects.
    pub first_error: Option<u16>,
    /// `Allow` for a 405 or 501 from the default handler.
    pub allow: Option<&'static str>,
    /// A content handler ran (and so read the request body first).
    pub handler_ran: bool,
    /// `r->subprocess_env`.
    pub env: crate::env::Env,
    /// Request headers as modules see and change them (`r->headers_in`:
    /// repeated fields joined, `RequestHeader` edits).
    pub headers_in: Cow<'a, crate::http::Headers>,
    /// Headers sent on every response, errors included (`r->err_headers_out`,
    /// `Header always`).
    pub err_headers_out: Vec<(String, String)>,
    /// URL-path and directory of the `Alias` that mapped the request
    /// (`CONTEXT_PREFIX`, `CONTEXT_DOCUMENT_ROOT`).
    pub context_prefix: Option<String>,
    pub context_document_root: Option<String>,
    /// The request's own document root (`ap_set_document_root`:
    /// mod_vhost_alias's), over the server's.
    pub document_root: Option<String>,
    /// `ScriptAlias` mapped the request (Apache's `alias-forced-type`
    /// note): mod_cgi then runs it without `Options ExecCGI`.
    pub script_aliased: bool,
    /// The request headers for byte ranges cut after the content filters
    /// (the handler saw no `Range` because `DEFLATE` may change the body).
    pub range_deferred: Option<crate::http::Headers>,
    /// mod_include's `INCLUDES` filter is attached.
    pub includes_filter: bool,
    /// `r->request_time`, microseconds since the epoch: read through
    /// [`Ctx::request_time_us`], which records the clock as an input.
    request_time: i64,
    /// `r->notes` (`Header note`).
    pub notes: Vec<(String, String)>,
    /// The output filters already ran on this request's response.
    pub output_done: bool,
    /// The handler passed the first part of its answer down the filters
    /// while it had taken `Accept-Encoding` out of the request headers
    /// (mod_autoindex running an HTML header file's sub-request): mod_deflate
    /// made its decision then, and saw no `Accept-Encoding`.
    pub accept_encoding_hidden_at_first_pass: bool,
    /// The handler passed part of its answer down the filters before its
    /// end, without a flush (mod_autoindex past Apache's write buffer, or
    /// through a header or readme sub-request), so it set
    /// `Transfer-Encoding: chunked`; a filter that holds all of its output
    /// until the end (mod_deflate) makes the length known again.
    pub body_passed_unflushed: bool,
    /// Offsets in the response body after which a content filter sent a
    /// `FLUSH` bucket down the chain (mod_substitute, every thousand
    /// pieces); the next filter that compresses flushes there.
    pub flushes: Vec<u64>,
    /// The modules' per-request state (mod_rewrite's scheduled internal
    /// redirect, `[END]`, `[T=]`/`[H=]`; what authentication inherits).
    pub modules: RequestSlots,
    /// `r->user` and `r->ap_auth_type` once authentication accepted a user.
    pub user: Option<String>,
    pub auth_type: Option<String>,
    /// `r->useragent_ip`: the client as access control sees it (the
    /// connection's peer, or the address mod_remoteip found behind proxies).
    /// Read through [`Ctx::useragent_ip`], which records it as an input
    /// of the answer.
    client_ip: std::net::IpAddr,
    /// `r->useragent_addr->port` (`REMOTE_PORT`): the connection's (or
    /// its PROXY header's), 0 once `RemoteIPHeader` replaced the address.
    client_port: u16,
    /// A local `ErrorDocument` the error path left for a backend to serve
    /// (see `error_backend`).
    pub error_backend: Option<Box<crate::error_backend::Parked<'a>>>,
    /// mod_negotiation's `variant-list` note: the HTML list of variants
    /// a 406 or 300 page shows.
    pub variant_list: Option<String>,
    /// `r->vlist_validator`: the tag of the variant list a MultiViews
    /// answer was chosen from, part of its `ETag`.
    pub vlist_validator: Option<String>,
}

/// A status ending the phases early.
pub type Status = u16;

/// The request headers with repeated fields joined, as Apache keeps them;
/// a plain copy when no name repeats (the usual request).
fn joined_request_headers(headers: &crate::http::Headers) -> Cow<'_, crate::http::Headers> {
    // Finding repeated names is not reading the fields: what a module
    // then reads from the joined list is recorded as it reads it.
    let repeats = headers.iter_unrecorded().count() > 24
        || headers.iter_unrecorded().enumerate().any(|(i, (a, _))| {
            headers
                .iter_unrecorded()
                .skip(i + 1)
                .any(|(b, _)| a.eq_ignore_ascii_case(b))
        });
    if repeats {
        Cow::Owned(crate::header_table::Table::from_request(headers).into_request())
    } else {
        // Read as they came until a module changes them.
        Cow::Borrowed(headers)
    }
}

/// The handler `ap_invoke_handler` takes from a content type when no
/// directive set one: the type up to its parameters, without the spaces
/// before the `;` (nothing else is trimmed).
fn content_type_handler(t: &str) -> &str {
    // Asked by each handler hook of every request, on a short string: a
    // plain scan, where a vectorised search costs more to set up than to
    // run here.
    match t.bytes().position(|b| b == b';') {
        Some(i) => t[..i].trim_end_matches(' '),
        None => t,
    }
}

/// Why a request failed: the error-log line its answer writes, with the
/// module Apache names on it (`[authz_core:error]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reason {
    pub level: String,
    pub module: &'static str,
    pub message: String,
}

impl Reason {
    pub fn new(level: &str, module: &'static str, message: impl Into<String>) -> Reason {
        Reason {
            level: level.to_string(),
            module,
            message: message.into(),
        }
    }
}

impl<'a> Ctx<'a> {
    /// `Allow` for a 405 or 501 of a module that allows no method itself
    /// (`r->allowed` empty): `TRACE` alone, when `TraceEnable` is on.
    pub fn allow_no_method(&mut self) {
        self.allow = Some(if self.site.trace_enable { "TRACE" } else { "" });
    }

    /// The name the handlers answer to, as `ap_invoke_handler` derives it:
    /// `r->handler` when a directive set one, else the content type
    /// without its parameters (up to `;`, trailing spaces dropped).
    pub fn handler_name(&self) -> Option<&str> {
        match self.handler.as_deref() {
            Some(h) => Some(h),
            None => self.content_type.as_deref().map(content_type_handler),
        }
    }

    /// `r->useragent_ip`, recorded as an input of the answer
    /// ([`crate::answer_memo`]).
    pub fn useragent_ip(&self) -> std::net::IpAddr {
        crate::answer_memo::note_remote_ip();
        self.client_ip
    }

    /// `ap_get_useragent_host(r, REMOTE_HOST)`: the client's name where
    /// `HostnameLookups` asks for one and one is found (`REMOTE_HOST`, the
    /// access log's `%h`); `None` otherwise, without asking anything.
    pub fn remote_host(&self) -> Option<String> {
        use crate::modules::core::HostnameLookups;
        match self.conf.core.hostname_lookups? {
            HostnameLookups::Off => None,
            HostnameLookups::On => crate::dns::reverse_name(self.useragent_ip()),
            HostnameLookups::Double => crate::dns::double_reverse(self.useragent_ip()),
        }
    }

    /// `ap_get_useragent_host(r, REMOTE_NAME)`: that name, else the
    /// client's address (`%{REMOTE_HOST}` of mod_rewrite and expressions,
    /// `SetEnvIf Remote_Host`).
    pub fn remote_name(&self) -> String {
        self.remote_host()
            .unwrap_or_else(|| self.useragent_ip().to_string())
    }

    /// `r->useragent_ip` for passing on (to a subrequest, an internal
    /// redirect, access control's rules, which record it where a rule
    /// compares it), not for deciding anything here.
    pub(crate) fn useragent_ip_unrecorded(&self) -> std::net::IpAddr {
        self.client_ip
    }

    /// `r->request_time` (µs since the epoch). An answer that read it is
    /// not kept ([`crate::answer_memo`]).
    pub fn request_time_us(&self) -> i64 {
        crate::answer_memo::note_volatile();
        self.request_time
    }

    /// `r->request_time` for passing on to a request made from this one.
    pub(crate) fn request_time_unrecorded(&self) -> i64 {
        self.request_time
    }

    /// A request made from another takes its time.
    pub(crate) fn set_request_time(&mut self, us: i64) {
        self.request_time = us;
    }

    /// `r->useragent_addr->port` (`REMOTE_PORT`), recorded as an input
    /// of the answer.
    pub fn useragent_port(&self) -> u16 {
        crate::answer_memo::note_remote();
        self.client_port
    }

    /// `r->useragent_addr` for passing on to a request made from this one.
    pub(crate) fn useragent_unrecorded(&self) -> std::net::SocketAddr {
        std::net::SocketAddr::new(self.client_ip, self.client_port)
    }

    /// A request made from another keeps its client.
    pub(crate) fn set_useragent(&mut self, addr: std::net::SocketAddr) {
        self.client_ip = addr.ip();
        self.client_port = addr.port();
    }

    /// mod_remoteip: the client found behind trusted proxies, whose port
    /// is not known (Apache sets it to 0).
    pub fn set_useragent_ip(&mut self, ip: std::net::IpAddr) {
        self.client_ip = ip;
        self.client_port = 0;
    }

    pub fn new(
        engine: &'a Engine,
        site: &'a Site,
        req: &'a Request,
        uri: String,
        args: Option<String>,
    ) -> Self {
        Ctx {
            engine,
            site,
            req,
            method: Cow::Borrowed(&req.method),
            uri,
            args,
            filename: String::new(),
            path_info: String::new(),
            finfo: None,
            conf: site.base.clone(),
            content_type: None,
            handler: None,
            encodings: Vec::new(),
            languages: Vec::new(),
            headers_out: Vec::new(),
            is_subreq: false,
            file_subreq: false,
            redirects: 0,
            reason: None,
            error_note: None,
            error_status_line: None,
            verbose_errors: false,
            renegotiation_forbidden: false,
            prev_status: None,
            status_reset: false,
            first_error: None,
            allow: None,
            handler_ran: false,
            env: crate::env::Env::default(),
            // Apache joins repeated request headers as it reads them.
            headers_in: joined_request_headers(&req.headers),
            err_headers_out: Vec::new(),
            context_prefix: None,
            script_aliased: false,
            context_document_root: None,
            document_root: None,
            range_deferred: None,
            includes_filter: false,
            request_time: crate::engine::clock_us(),
            notes: Vec::new(),
            output_done: false,
            accept_encoding_hidden_at_first_pass: false,
            body_passed_unflushed: false,
            flushes: Vec::new(),
            modules: Default::default(),
            user: None,
            auth_type: None,
            client_ip: req.peer.ip(),
            client_port: req.peer.port(),
            error_backend: None,
            variant_list: None,
            vlist_validator: None,
        }
    }

    fn fail(&mut self, status: Status, level: &str, message: String) -> Status {
        if self.reason.is_none() && !self.is_subreq {
            self.reason = Some(Reason::new(level, "core", message));
        }
        status
    }

    /// The new request of an internal redirect to `uri` (Apache's
    /// `internal_internal_redirect`), for every module that makes one (an
    /// error document, mod_rewrite's redirect-handler): one more redirect
    /// on the count, `status` as the previous status (`REDIRECT_STATUS`),
    /// and what Apache carries over: the environment renamed `REDIRECT_*`,
    /// the request headers as modules left them, the client, the user when
    /// the configuration stays the same, the error-header table (moved),
    /// mod_rewrite's state, the request time and the variant validator.
    /// The method is the caller's to set.
    pub(crate) fn internal_redirect(
        &mut self,
        uri: String,
        query: Option<String>,
        status: Option<u16>,
    ) -> Ctx<'a> {
        let mut new = Ctx::new(self.engine, self.site, self.req, uri, query);
        new.redirects = self.redirects + 1;
        new.prev_status = status;
        new.first_error = self.first_error;
        new.env = self.env.for_redirect();
        new.env
            .set("REDIRECT_STATUS", status.unwrap_or(200).to_string());
        new.headers_in = self.headers_in.clone();
        new.set_useragent(self.useragent_unrecorded());
        new.modules = RequestSlots::for_redirect(self);
        new.err_headers_out = std::mem::take(&mut self.err_headers_out);
        new.set_request_time(self.request_time_unrecorded());
        new.vlist_validator = self.vlist_validator.clone();
        new
    }

    /// `ap_internal_redirect_handler`'s new request: `url` ("path?args",
    /// as a handler asks for it; the path ends at the first `?` or `#`, as
    /// `ap_parse_uri` ends it) parsed and normalised, made by
    /// [`Ctx::internal_redirect`] with this request's method, `prepare`d
    /// by the asking module, and taken through its phases. `Err`: the
    /// answer when it cannot be made (the recursion limit, a path that
    /// does not normalise), this request's error.
    #[allow(clippy::result_large_err)]
    pub(crate) fn redirect_to_url(
        &mut self,
        url: &str,
        prepare: impl FnOnce(&mut Ctx<'a>),
    ) -> Result<(Ctx<'a>, Result<(), Status>), Response> {
        let limit = self.site.limit_internal_recursion;
        if self.redirects >= limit {
            self.log_error("error", "core", &format!(
                "AH00124: Request exceeded the limit of {limit} internal redirects due to probable configuration error. Use 'LimitInternalRecursion' to increase the limit if necessary. Use 'LogLevel debug' to get a backtrace."));
            // The error is this request's: its output filters (`Header
            // always`) apply, as Apache's ap_die runs on it.
            return Err(crate::errors::die(self, 500));
        }
        let path_end = url.find(['?', '#']).unwrap_or(url.len());
        let path = &url[..path_end];
        let query = url[path_end..]
            .strip_prefix('?')
            .map(|q| q.split('#').next().unwrap_or("").to_string());
        let parsed = crate::uri::ParsedTarget {
            unparsed: match &query {
                Some(q) => format!("{path}?{q}"),
                None => path.to_string(),
            },
            scheme: None,
            authority: None,
            host_override: None,
            path: Some(path.to_string()),
            query: query.clone(),
            fragment: None,
            uri: path.to_string(),
        };
        let opts = crate::uri::NormalizeOptions {
            encoded_slashes: self.site.encoded_slashes,
            merge_slashes: self.site.merge_slashes,
        };
        let normalized = crate::uri::normalize(&parsed, &opts);
        let new_uri = match &normalized {
            Ok(u) => String::from_utf8_lossy(&u.path).into_owned(),
            Err(_) => path.to_string(),
        };
        let mut new = self.internal_redirect(new_uri, query, self.prev_status);
        new.method = self.method.clone();
        prepare(&mut new);
        if let Err(e) = normalized {
            if let Some(level) = e.level {
                self.site
                    .log
                    .error(level, "core", Some(self.req.remote()), &e.message);
            }
            return Err(crate::errors::die(&mut new, e.status));
        }
        let phases = new.process_internal();
        Ok((new, phases))
    }

    /// A sub-request for `target` (a URI path, possibly relative to this
    /// request's directory, possibly with a query), run up to the handler.
    pub fn sub_request(&self, target: &str) -> (Ctx<'a>, Result<(), Status>) {
        let (path, query) = match target.split_once('?') {
            Some((p, q)) => (p, Some(q.to_string())),
            None => (target, None),
        };
        self.sub_request_path(path, query)
    }

    /// A sub-request for an entry of this request's directory
    /// (`ap_sub_req_lookup_dirent`): a file sub-request for the entry in
    /// the directory, whose URI is the name beside this request's URI
    /// (`/dir/` lists `/dir/name`; `/dir` without its slash, `/name`), with
    /// no query part.
    pub fn sub_request_dirent(&self, name: &str) -> (Ctx<'a>, Result<(), Status>) {
        let mut filename = self.filename.clone();
        if !filename.ends_with('/') {
            filename.push('/');
        }
        filename.push_str(name);
        self.sub_request_prepared(name, None, |sub| {
            sub.filename = filename;
            sub.file_subreq = true;
        })
    }

    /// A sub-request for a URI path taken as it is (absolute, or relative
    /// to this request's directory) with the given query.
    pub(crate) fn sub_request_path(
        &self,
        path: &str,
        query: Option<String>,
    ) -> (Ctx<'a>, Result<(), Status>) {
        self.sub_request_prepared(path, query, |_| {})
    }

    /// [`Ctx::sub_request_path`], with what the asking module sets on the
    /// sub-request before its phases run (`prepare`). Every sub-request is
    /// made here, so that Apache's carry-over rules are written once.
    pub(crate) fn sub_request_prepared(
        &self,
        path: &str,
        query: Option<String>,
        prepare: impl FnOnce(&mut Ctx<'a>),
    ) -> (Ctx<'a>, Result<(), Status>) {
        let uri = if path.starts_with('/') {
            path.to_string()
        } else {
            let dir = match self.uri.rfind('/') {
                Some(i) => &self.uri[..=i],
                None => "/",
            };
            format!("{dir}{path}")
        };
        let uri = walk::clean_path(&uri);
        let mut sub = Ctx::new(self.engine, self.site, self.req, uri, query);
        sub.env = self.env.clone();
        sub.headers_in = self.headers_in.clone();
        sub.client_ip = self.client_ip;
        sub.client_port = self.client_port;
        sub.modules = RequestSlots::for_subrequest(self);
        if self.redirects >= self.site.limit_internal_recursion {
            self.log_error("error", "core", &format!(
                "AH00125: Request exceeded the limit of {} subrequest nesting levels due to probable configuration error. Use 'LimitInternalRecursion' to increase the limit if necessary. Use 'LogLevel debug' to get a backtrace.",
                self.site.limit_internal_recursion));
            return (sub, Err(500));
        }
        sub.method = if self.method == "HEAD" {
            Cow::Borrowed("GET")
        } else {
            self.method.clone()
        };
        sub.is_subreq = true;
        sub.redirects = self.redirects + 1;
        prepare(&mut sub);
        let r = sub.process_internal();
        (sub, r)
    }

    /// Apache's `ap_process_request_internal`: from URI to a request ready
    /// for its handler.
    pub fn process_internal(&mut self) -> Result<(), Status> {
        if !self.is_subreq {
            self.post_read_request();
            if self.redirects == 0 {
                hooks::run_all(hooks::READ_REQUEST_CHECKS, self)?;
            }
            hooks::run_all(hooks::POST_READ_REQUEST_CHECKS, self)?;
        }
        if !self.file_subreq {
            self.translate_name()?;
        }
        self.map_to_storage()?;
        self.location_walk();
        crate::modules::core::if_section::if_walk(self);
        if !self.is_subreq {
            self.header_parser();
        }
        self.check_access()?;
        self.type_checker()?;
        self.fixups()?;
        Ok(())
    }

    /// What a `TRACE` passes before the core answers it: Apache's core
    /// echoes the request from its `map_to_storage` hook, so the target's
    /// checks (made by the caller), `post_read_request` and `translate_name`
    /// (a server-context rewrite or `Redirect`) come first.
    pub fn before_trace(&mut self) -> Result<(), Status> {
        self.post_read_request();
        self.translate_name()
    }

    /// `header_parser`: per-directory hooks that read the request headers
    /// before access control (main requests only, as in Apache).
    fn header_parser(&mut self) {
        for hook in hooks::HEADER_PARSER {
            hook(self);
        }
    }

    /// `post_read_request`: what runs once a request (or an internal
    /// redirect) exists, with the server-level configuration only.
    fn post_read_request(&mut self) {
        for hook in hooks::POST_READ_REQUEST {
            hook(self);
        }
    }

    /// `translate_name`: the first module that maps the URI (a rewrite,
    /// a proxy, an alias), else the core's document root.
    fn translate_name(&mut self) -> Result<(), Status> {
        hooks::run_first(hooks::TRANSLATE_NAME, self).map(|_| ())
    }

    /// The core's `translate_name`: the document root joined with the URI
    /// (the last of the hook, it always maps).
    fn core_translate(&mut self) -> Result<bool, Status> {
        let root = self.site.document_root.trim_end_matches('/');
        if core_name_too_long(root, &self.uri) {
            let line = format!("AH00127: Cannot map {} to file", self.req.request_line);
            return Err(self.fail(403, "error", line));
        }
        let mut filename = String::with_capacity(root.len() + self.uri.len());
        filename.push_str(root);
        filename.push_str(&self.uri);
        self.filename = filename;
        Ok(true)
    }

    /// `map_to_storage`: the directory walk (with `.htaccess`), then the
    /// `<Files>` sections for the basename.
    fn map_to_storage(&mut self) -> Result<(), Status> {
        // mod_proxy: a proxy request has no file, no directory walk.
        if hooks::run_first(hooks::MAP_TO_STORAGE, self)? {
            return Ok(());
        }
        let walked = match walk::directory_walk(self.site, &self.filename) {
            Ok(w) => w,
            Err(WalkError::Config(line)) => return Err(self.fail(500, "alert", line.to_string())),
            Err(WalkError::Forbidden { log }) => return Err(self.fail(403, "error", log)),
            Err(WalkError::AccessFile(u)) => {
                if let Some(line) = &u.not_regular {
                    self.site.log.error("error", "core", None, line);
                }
                self.error_note =
                    Some("Server unable to read htaccess file, denying access to be safe".into());
                return Err(self.fail(403, "crit", u.message));
            }
        };
        self.filename = walked.filename;
        self.path_info = walked.path_info;
        self.finfo = walked.finfo;
        self.conf = walked.conf;
        self.file_walk();
        Ok(())
    }

    /// `<Files>`/`<FilesMatch>` from every level, in accumulated order,
    /// against the basename of the walked filename.
    fn file_walk(&mut self) {
        let basename = match memchr::memrchr(b'/', self.filename.as_bytes()) {
            Some(i) => &self.filename[i + 1..],
            None => &self.filename[..],
        };
        // Sections match the bytes the name stands for.
        let basename = crate::path_text::bytes(basename);
        let mut merged: Option<Arc<DirConf>> = None;
        for sec in self.conf.core.files.iter() {
            if sec.matcher.matches(&basename) {
                let base = merged.as_ref().unwrap_or(&self.conf);
                merged = Some(Arc::new(DirConf::merge(base, &sec.conf)));
            }
        }
        if let Some(conf) = merged {
            self.conf = conf;
        }
    }

    /// `<Location>`/`<LocationMatch>` against the URI, its slashes merged
    /// even under `MergeSlashes Off` (as Apache's location walk does).
    fn location_walk(&mut self) {
        let mut conf = self.conf.clone();
        let merged;
        let uri = if self.site.merge_slashes || !self.uri.contains("//") {
            &self.uri
        } else {
            merged = crate::uri::merge_slashes(&self.uri);
            &merged
        };
        for loc in &self.site.locations {
            let hit = match &loc.regex {
                Some(re) => re.is_match(&crate::path_text::bytes(uri)),
                None => location_matches(&loc.path, uri),
            };
            if hit {
                conf = Arc::new(DirConf::merge(&conf, &loc.conf));
            }
        }
        self.conf = conf;
    }

    /// Access control, authentication and authorization (Satisfy, Order/Allow/Deny, Require, AuthType).
    fn check_access(&mut self) -> Result<(), Status> {
        hooks::run_all(hooks::ACCESS_CHECKER, self)
    }

    /// The first type checker that types the request (MultiViews, then
    /// mod_mime); then the core's `ForceType`/`SetHandler`.
    fn type_checker(&mut self) -> Result<(), Status> {
        hooks::run_first(hooks::TYPE_CHECKER, self)?;
        if let Some(Some(t)) = &self.conf.core.force_type {
            self.content_type = Some(t.clone());
        }
        if let Some(Some(h)) = &self.conf.core.handler {
            self.handler = Some(h.clone());
        }
        Ok(())
    }

    /// The fixups, in Apache's order ([`hooks::FIXUPS`]).
    fn fixups(&mut self) -> Result<(), Status> {
        hooks::run_all(hooks::FIXUPS, self)
    }

    /// Apache's `ap_internal_fast_redirect`: become the sub-request.
    pub(crate) fn fast_redirect(&mut self, sub: Ctx<'a>) {
        self.uri = sub.uri;
        self.args = sub.args;
        self.filename = sub.filename;
        self.path_info = sub.path_info;
        self.finfo = sub.finfo;
        self.conf = sub.conf;
        self.content_type = sub.content_type;
        self.handler = sub.handler;
        self.encodings = sub.encodings;
        self.languages = sub.languages;
        self.context_prefix = sub.context_prefix;
        self.context_document_root = sub.context_document_root;
        self.document_root = sub.document_root;
        self.modules.absorb(sub.modules);
        self.headers_out.extend(sub.headers_out);
        // Both header tables are overlaid: a negotiated index brings its
        // `Vary`, `TCN` and `Content-Location`.
        self.err_headers_out.extend(sub.err_headers_out);
        let mut env = sub.env;
        for (n, v) in self.env.iter() {
            if !env.contains(n) {
                env.set(n, v);
            }
        }
        self.env = env;
    }
}

/// `<Location /path>`: a prefix match on whole segments (`/a` matches `/a`,
/// `/a/`, `/a/b`, not `/ab`), with repeated slashes in the URI folded.
/// core's translate_name joins the document root and the path with
/// `apr_filepath_merge`, which refuses a result that might not fit in
/// `PATH_MAX` (both lengths plus room for three slashes and the NUL) before
/// the disk is looked at: Apache then answers 403, "Cannot map … to file".
/// A rewrite that keeps lengthening the path ends there, before the limit
/// of internal redirects.
fn core_name_too_long(root: &str, uri: &str) -> bool {
    const PATH_MAX: usize = 4096;
    root.len() + uri.trim_start_matches('/').len() + 4 > PATH_MAX
}

pub fn location_matches(path: &str, uri: &str) -> bool {
    if path == "/" {
        return true;
    }
    let p = path.trim_end_matches('/');
    match uri.strip_prefix(p) {
        Some(rest) => {
            rest.is_empty() || rest.starts_with('/') || path.ends_with('/') && !rest.is_empty()
        }
        None => false,
    }
}

/// A module's per-request state, and what an internal redirect or a
/// sub-request of a request starts with.
pub(crate) trait RequestSlot: Default {
    /// The state of an internal redirect's new request, made from `from`.
    fn for_redirect(from: &Ctx<'_>) -> Self;
    /// The state of a sub-request of `from`.
    fn for_subrequest(from: &Ctx<'_>) -> Self {
        let _ = from;
        Self::default()
    }
    /// A sub-request served in place of its parent (mod_dir's fast
    /// redirect): what of the sub-request's state becomes the parent's.
    fn absorb(&mut self, sub: Self) {
        let _ = sub;
    }
}

/// `RequestSlots` with one field per module of `modules::request_slots!`.
macro_rules! request_slots_struct {
    ($($field:ident: $slot:ty,)*) => {
        /// Each module's per-request state.
        #[derive(Clone, Debug, Default)]
        pub struct RequestSlots {
            $(pub $field: $slot,)*
        }

        impl RequestSlots {
            fn for_redirect(from: &Ctx<'_>) -> RequestSlots {
                RequestSlots {
                    $($field: <$slot as RequestSlot>::for_redirect(from),)*
                }
            }

            fn for_subrequest(from: &Ctx<'_>) -> RequestSlots {
                RequestSlots {
                    $($field: <$slot as RequestSlot>::for_subrequest(from),)*
                }
            }

            fn absorb(&mut self, sub: RequestSlots) {
                $(self.$field.absorb(sub.$field);)*
            }
        }
    };
}

crate::modules::request_slots!(request_slots_struct);

/// The core's `translate_name` hook ([`Ctx::core_translate`]).
pub(crate) fn core_translate_name(ctx: &mut Ctx<'_>) -> Result<bool, Status> {
    ctx.core_translate()
}

/// What the engine answers for a request that went through the phases.
pub fn respond(ctx: &mut Ctx<'_>, phases: Result<(), Status>) -> Response {
    if phases.is_ok() {
        // The core's upgrade handler runs first of all handlers.
        if let Some(resp) = hooks::switch_protocol(ctx) {
            return resp;
        }
        // An internal redirect the phases scheduled answers instead.
        if let Some(next) = hooks::redirect(ctx) {
            return match next {
                Ok((mut new, phases)) => respond(&mut new, phases),
                Err(resp) => resp,
            };
        }
    }
    let result = phases.and_then(|()| {
        hooks::run_all(hooks::INSERT_FILTER, ctx)?;
        ctx.handler_ran = true;
        crate::handler::run(ctx)
    });
    let (mut resp, error) = match result {
        Ok(mut resp) => {
            resp.upgrade_offer = hooks::upgrade_offer(ctx);
            (crate::errors::finish(ctx, resp), false)
        }
        Err(status) => (crate::errors::error_response(ctx, status), true),
    };
    crate::filters::output(ctx, &mut resp, error);
    resp.alt_svc = alt_svc(ctx);
    resp
}

/// The `Alt-Svc` advertisement of an HTTPS answer whose server has
/// HTTP/3 on.
pub fn alt_svc(ctx: &Ctx<'_>) -> Option<crate::http::http3::AltSvc> {
    ctx.req.tls.as_ref()?;
    ctx.site.http3?.alt_svc()
}

#[cfg(test)]
mod tests {
    use super::content_type_handler;

    #[test]
    fn a_content_type_names_its_handler_without_parameters() {
        assert_eq!(
            content_type_handler("application/x-httpd-php"),
            "application/x-httpd-php"
        );
        assert_eq!(
            content_type_handler("text/html; charset=utf-8"),
            "text/html"
        );
        assert_eq!(content_type_handler("text/x-php  ;q=1"), "text/x-php");
        // Only spaces before the `;` go, as in ap_invoke_handler.
        assert_eq!(content_type_handler("text/x-php\t;q=1"), "text/x-php\t");
        assert_eq!(content_type_handler(" text/plain"), " text/plain");
        assert_eq!(content_type_handler(";"), "");
    }
}
