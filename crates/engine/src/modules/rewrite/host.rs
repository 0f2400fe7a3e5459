//! The request as mod_rewrite's rule loop reads it: the [`Host`] over a
//! [`Ctx`], and the sub-requests mod_rewrite makes itself (`-U`, `-F`,
//! `LA-U`, `LA-F`), plus the `[CO=]` cookie format.

use super::vars::{self, Current, Fact, Host, VaryNote};
use crate::request::{Ctx, Status};
use std::path::Path;

/// The request as the rule loop sees it.
pub(super) struct HostCtx<'c, 'a> {
    pub ctx: &'c mut Ctx<'a>,
    pub tracing: bool,
}

pub(super) fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

pub(super) fn document_root(ctx: &Ctx<'_>) -> String {
    let root = ctx.document_root();
    let trimmed = root.trim_end_matches('/');
    if trimmed.is_empty() {
        "/".to_string()
    } else {
        trimmed.to_string()
    }
}

/// Apache's `ap_get_server_port` (UseCanonicalName Off): the port the
/// client named, else `ServerName`'s, else the scheme's default.
pub(super) fn server_port(ctx: &Ctx<'_>) -> u16 {
    ctx.server_port()
}

pub(super) fn server_name(ctx: &Ctx<'_>) -> String {
    ctx.server_name()
}

/// The owner of the request's file (Apache's `r->finfo`): for a name
/// that does not exist, of the deepest directory the walk found, whose
/// metadata Apache's walk leaves behind.
fn owner(ctx: &Ctx<'_>) -> Option<(u32, u32)> {
    use std::os::unix::fs::MetadataExt;
    let os = crate::path_text::os_path(Path::new(&ctx.filename));
    let mut p: &Path = &os;
    crate::answer_memo::note_volatile();
    loop {
        if let Ok(m) = std::fs::metadata(p) {
            return Some((m.uid(), m.gid()));
        }
        p = p.parent()?;
    }
}

/// A URL sub-request made by mod_rewrite (`-U`, `LA-U`), as Apache's
/// `ap_sub_req_lookup_uri` makes every sub-request
/// ([`Ctx::sub_request_prepared`]): relative targets are taken from the
/// request's directory; the sub-request runs every phase before the
/// handler, and skips access control when its configuration is the main
/// request's. mod_rewrite marks it with the main request's URI, so that
/// its own rules do not recurse.
pub(super) fn sub_request<'a>(ctx: &Ctx<'a>, target: &str) -> (Ctx<'a>, Result<(), Status>) {
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p, Some(q.to_string())),
        None => (target, None),
    };
    let main_uri = ctx.uri.clone();
    ctx.sub_request_prepared(path, query, |sub| {
        sub.modules.rewrite.main_uri = Some(main_uri)
    })
}

/// A file sub-request (`-F`, `LA-F`). htaccel maps a file below the
/// document root back to its URL and runs a URL sub-request for it; a
/// file elsewhere is refused as the stock `<Directory />` refuses it.
pub(super) fn file_sub_request<'a>(ctx: &Ctx<'a>, path: &str) -> (Ctx<'a>, Result<(), Status>) {
    let root = document_root(ctx);
    let under = if root == "/" {
        Some(path)
    } else {
        path.strip_prefix(root.as_str())
            .filter(|r| r.starts_with('/'))
    };
    match under {
        Some(uri) => sub_request(ctx, uri),
        None => {
            let mut sub = Ctx::new(ctx.engine, ctx.site, ctx.req, path.to_string(), None);
            sub.is_subreq = true;
            sub.filename = path.to_string();
            (sub, Err(403))
        }
    }
}

impl Host for HostCtx<'_, '_> {
    fn header(&self, name: &str) -> Option<String> {
        self.ctx.headers_in.get_joined(name).map(|v| lossy(&v))
    }
    fn ssl(&self, name: &str) -> Option<String> {
        crate::modules::ssl::vars::lookup(self.ctx.req, name)
    }
    fn env(&self, name: &str) -> Option<String> {
        self.ctx.env.get(name).map(str::to_string)
    }
    // The environment is an APR table: names compare without case, and
    // setting keeps the spelling of a name already there.
    fn set_env(&mut self, name: &str, value: String) {
        self.ctx.env.set(name, value);
    }
    fn unset_env(&mut self, name: &str) {
        self.ctx.env.unset(name);
    }
    fn fact(&mut self, f: Fact) -> Option<String> {
        let ctx = &*self.ctx;
        let on_off = |b: bool| Some(if b { "on" } else { "off" }.to_string());
        match f {
            Fact::RequestUri => Some(ctx.uri.clone()),
            Fact::ServerName => Some(server_name(ctx)),
            Fact::ServerPort => Some(server_port(ctx).to_string()),
            Fact::ServerAddr => Some(ctx.req.local.ip().to_string()),
            Fact::RemoteAddr => Some(ctx.useragent_ip().to_string()),
            Fact::RemoteHost => Some(ctx.remote_name()),
            Fact::ConnRemoteAddr => Some(ctx.req.remote_ip().to_string()),
            Fact::RemotePort => Some(ctx.useragent_port().to_string()),
            Fact::RemoteUser => ctx.user.clone(),
            Fact::AuthType => ctx.auth_type.clone(),
            Fact::RemoteIdent => None,
            Fact::TheRequest => Some(ctx.req.request_line.clone()),
            Fact::RequestMethod => Some(ctx.method.to_string()),
            Fact::RequestScheme => Some(if ctx.req.secure { "https" } else { "http" }.into()),
            Fact::ServerProtocol => Some(ctx.req.version.as_str().to_string()),
            Fact::ServerSoftware => Some(ctx.engine.server_header.clone()),
            Fact::ServerAdmin => Some(
                ctx.site
                    .server_admin
                    .clone()
                    .unwrap_or_else(|| crate::http::error_page::DEFAULT_ADMIN.to_string()),
            ),
            Fact::DocumentRoot => Some(document_root(ctx)),
            Fact::ContextDocumentRoot => Some(
                ctx.context_document_root
                    .clone()
                    .unwrap_or_else(|| document_root(ctx)),
            ),
            Fact::ContextPrefix => ctx.context_prefix.clone(),
            Fact::IsSubreq => Some(if ctx.is_subreq { "true" } else { "false" }.into()),
            Fact::Ipv6 => on_off(match ctx.req.remote_ip() {
                std::net::IpAddr::V6(a) => a.to_ipv4_mapped().is_none(),
                std::net::IpAddr::V4(_) => false,
            }),
            Fact::Https => on_off(ctx.req.secure),
            Fact::ScriptUser => Some(
                owner(ctx)
                    .and_then(|(uid, _)| crate::os::user_name(uid))
                    .unwrap_or_else(|| "<unknown>".into()),
            ),
            Fact::ScriptGroup => Some(
                owner(ctx)
                    .and_then(|(_, gid)| crate::os::group_name(gid))
                    .unwrap_or_else(|| "<unknown>".into()),
            ),
        }
    }
    fn stat(&mut self, path: &str) -> Option<crate::fs::FileInfo> {
        if path.is_empty() {
            return None;
        }
        // The directory walk stat'ed the request's file name, links
        // followed (`r->finfo`); the front-controller test
        // (`%{REQUEST_FILENAME} !-f`) asks about exactly that name.
        if let Some(seen) = self.ctx.finfo {
            if path == self.ctx.filename {
                return Some(seen);
            }
        }
        crate::fs::stat(path).ok()
    }
    fn lstat(&mut self, path: &str) -> Option<crate::fs::FileInfo> {
        if path.is_empty() {
            return None;
        }
        crate::fs::lstat(path).ok()
    }
    fn subreq_ok(&self) -> bool {
        !self.ctx.is_subreq || self.ctx.modules.rewrite.main_uri.as_deref() != Some(&self.ctx.uri)
    }
    fn matches_vhost(&self, host: &str, port: u16) -> bool {
        let site = self.ctx.site;
        for a in &site.addrs {
            let (h, p) = match a.rsplit_once(':') {
                Some((h, p)) if !h.is_empty() => (h, p),
                _ => (a.as_str(), "*"),
            };
            let p: u16 = p.parse().unwrap_or(0);
            if (p == 0 || p == port) && h.eq_ignore_ascii_case(host) {
                return true;
            }
        }
        if port != site.port.unwrap_or(0) {
            return false;
        }
        site.answers_to(host)
    }
    fn is_subreq(&self) -> bool {
        self.ctx.is_subreq
    }
    fn subreq_uri_status(&mut self, uri: &str) -> u16 {
        match sub_request(self.ctx, uri).1 {
            Ok(()) => 200,
            Err(s) => s,
        }
    }
    fn subreq_file(&mut self, path: &str) -> (u16, bool) {
        let (sub, r) = file_sub_request(self.ctx, path);
        let status = match r {
            Ok(()) => 200,
            Err(s) => s,
        };
        let exists = crate::fs::stat(&sub.filename).is_ok();
        (status, exists)
    }
    fn lookahead(&mut self, path: &str, file: bool, var: &str) -> String {
        let (mut sub, _) = if file {
            file_sub_request(self.ctx, path)
        } else {
            sub_request(self.ctx, path)
        };
        let (filename, path_info, args) = (
            sub.filename.clone(),
            sub.path_info.clone(),
            sub.args.clone(),
        );
        let cur = Current {
            filename: &filename,
            path_info: &path_info,
            args: args.as_deref(),
            subject: None,
            perdir: None,
        };
        let mut host = HostCtx {
            ctx: &mut sub,
            tracing: false,
        };
        let mut vary = VaryNote::default();
        vars::lookup(var, &cur, &mut host, &mut vary)
    }
    fn map(&mut self, name: &str, key: &str) -> Option<String> {
        let map = self.ctx.site.modules.rewrite.maps.get(name)?.clone();
        let (value, log) = map.lookup(key);
        if let Some(msg) = log {
            self.ctx
                .site
                .log
                .error("error", "rewrite", Some(self.ctx.req.remote()), &msg);
        }
        value
    }
    fn add_cookie(&mut self, spec: &str) {
        if let Some((name, cookie)) = cookie(spec, self.now()) {
            if !self.ctx.modules.rewrite.cookies.contains(&name) {
                self.ctx.modules.rewrite.cookies.push(name);
                self.ctx.err_headers_out.push(("Set-Cookie".into(), cookie));
            }
        }
    }
    fn now(&self) -> i64 {
        self.ctx.request_time_us() / 1_000_000
    }
    fn expr(&mut self, e: &crate::expr::Expr, cur: &Current<'_>) -> crate::expr::Outcome<bool> {
        // The expression reads the request as the rules left it so far.
        let ctx = &mut *self.ctx;
        let filename = std::mem::replace(&mut ctx.filename, cur.filename.to_string());
        let path_info = std::mem::replace(&mut ctx.path_info, cur.path_info.to_string());
        let args = std::mem::replace(&mut ctx.args, cur.args.map(str::to_string));
        let out = e.eval(&crate::expr::RequestExpr::new(ctx));
        ctx.filename = filename;
        ctx.path_info = path_info;
        ctx.args = args;
        out
    }
    fn tracing(&self) -> bool {
        self.tracing
    }
    fn trace(&mut self, line: String) {
        super::trace::line(line);
    }
}

/// The `Set-Cookie` value of a `[CO=…]` flag (Apache's `add_cookie`):
/// `NAME:VALUE:domain[:lifetime[:path[:secure[:httponly[:samesite]]]]]`,
/// `;` as the separator when the text starts with one. `None` without the
/// three required fields.
pub fn cookie(spec: &str, now: i64) -> Option<(String, String)> {
    let (sep, s) = match spec.strip_prefix(';') {
        Some(rest) => (';', rest),
        None => (':', spec),
    };
    // apr_strtok: empty fields are skipped.
    let mut toks = s.split(sep).filter(|t| !t.is_empty());
    let var = toks.next()?;
    let val = toks.next()?;
    let domain = toks.next()?;
    let expires = toks.next();
    let path = expires.and_then(|_| toks.next());
    let secure = path.and_then(|_| toks.next());
    let httponly = secure.and_then(|_| toks.next());
    let samesite = httponly.and_then(|_| toks.next());
    let mut c = format!("{var}={val}; path={}; domain={domain}", path.unwrap_or("/"));
    let yes = |v: Option<&str>, word: &str| {
        v.is_some_and(|v| {
            v.eq_ignore_ascii_case("true") || v == "1" || v.eq_ignore_ascii_case(word)
        })
    };
    // Apache builds the value with one apr_pstrcat whose optional parts
    // are NULL when absent, and a NULL ends the list: without a lifetime
    // neither secure nor HttpOnly is written, and HttpOnly only after
    // secure.
    if let Some(e) = expires {
        let minutes = i64::from(super::parse::atoi(e));
        if minutes != 0 {
            c.push_str("; expires=");
            c.push_str(&cookie_date(now + 60 * minutes));
        }
        if yes(secure, "secure") {
            c.push_str("; secure");
            if yes(httponly, "HttpOnly") {
                c.push_str("; HttpOnly");
            }
        }
    }
    if let Some(ss) = samesite {
        if ss != "0" && !ss.eq_ignore_ascii_case("false") {
            c.push_str("; SameSite=");
            c.push_str(ss);
        }
    }
    Some((var.to_string(), c))
}

/// `Wdy, DD-Mon-YYYY HH:MM:SS GMT`, the cookie date mod_rewrite writes.
fn cookie_date(t: i64) -> String {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = t.div_euclid(86_400);
    let secs = t.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let wday = (days + 4).rem_euclid(7);
    format!(
        "{}, {:02}-{}-{:04} {:02}:{:02}:{:02} GMT",
        DAYS[wday as usize],
        d,
        MONS[(m - 1) as usize],
        y,
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}
