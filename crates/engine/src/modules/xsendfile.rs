//! mod_xsendfile (Debian's `libapache2-mod-xsendfile`, 0.12): a script
//! answers with an `X-Sendfile: /path` header and the server sends that
//! file instead of the script's body — zero copy, with `Content-Length`,
//! `Last-Modified`, `ETag`, conditional requests and byte ranges as for a
//! static file. Applications use it to serve protected downloads after
//! their own access check.
//!
//! As mod_xsendfile: only for a 200 answer of a main request; the path
//! (taken as written, not URL-decoded) must lie, once `..` is resolved, within the directory of
//! the requested script or one of the `XSendFilePath` directories (a
//! relative path is taken from them); anything else, a missing file or a
//! directory is a 404. The script's `Content-Length` and
//! `Content-Encoding` go; its `Last-Modified` and `ETag` stay unless
//! `XSendFileIgnoreLastModified`/`XSendFileIgnoreEtag` say otherwise.
//!
//! One difference, on purpose: `XSendFilePath` counts where it is written
//! (its directory section and below), where mod_xsendfile adds every such
//! line to the whole server.

use crate::http::conditional::{self, Clock, Validators, Verdict};
use crate::http::etag::{self, FileStamp};
use crate::http::{Body, Response};
use crate::modules::core::server_directives::ETagSet;
use crate::registry::{Args, Directive, Module, Run, ACCESS_CONF, OR_FILEINFO, RSRC_CONF};
use crate::request::Ctx;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// The per-directory slot.
#[derive(Clone, Debug, Default)]
pub struct XSendFileDir {
    pub enabled: Option<bool>,
    pub ignore_etag: Option<bool>,
    pub ignore_last_modified: Option<bool>,
    /// `XSendFilePath` directories, nearest first.
    pub paths: Arc<Vec<PathBuf>>,
}

impl XSendFileDir {
    pub fn merge(base: &XSendFileDir, new: &XSendFileDir) -> XSendFileDir {
        let paths = if new.paths.is_empty() {
            base.paths.clone()
        } else if base.paths.is_empty() {
            new.paths.clone()
        } else {
            Arc::new(new.paths.iter().chain(base.paths.iter()).cloned().collect())
        };
        XSendFileDir {
            enabled: new.enabled.or(base.enabled),
            ignore_etag: new.ignore_etag.or(base.ignore_etag),
            ignore_last_modified: new.ignore_last_modified.or(base.ignore_last_modified),
            paths,
        }
    }
}

const PERMS: u32 = OR_FILEINFO | ACCESS_CONF | RSRC_CONF;

pub static DIRECTIVES: &[Directive] = &[
    Directive {
        name: "XSendFile",
        args: Args::Flag,
        req_override: PERMS,
        about: "On|Off - Enable/disable(default) processing",
        run: Run::Handler(|_w, inv, c| {
            c.xsendfile.enabled = Some(crate::registry::flag(&inv.words));
            Ok(())
        }),
    },
    Directive {
        name: "XSendFileIgnoreEtag",
        args: Args::Flag,
        req_override: PERMS,
        about: "On|Off - Ignore script provided Etag headers (default: Off)",
        run: Run::Handler(|_w, inv, c| {
            c.xsendfile.ignore_etag = Some(crate::registry::flag(&inv.words));
            Ok(())
        }),
    },
    Directive {
        name: "XSendFileIgnoreLastModified",
        args: Args::Flag,
        req_override: PERMS,
        about: "On|Off - Ignore script provided Last-Modified headers (default: Off)",
        run: Run::Handler(|_w, inv, c| {
            c.xsendfile.ignore_last_modified = Some(crate::registry::flag(&inv.words));
            Ok(())
        }),
    },
    Directive {
        name: "XSendFilePath",
        args: Args::Take12,
        req_override: RSRC_CONF | ACCESS_CONF,
        about: "Allow to serve files from that Path. Must be absolute",
        run: Run::Handler(|_w, inv, c| {
            if inv.words.len() > 1 {
                return Err("XSendFilePath: AllowFileDelete is not supported by htaccel".into());
            }
            Arc::make_mut(&mut c.xsendfile.paths).push(PathBuf::from(&inv.words[0]));
            Ok(())
        }),
    },
];

pub static MODULE: Module = Module {
    source: "mod_xsendfile.c",
    identifier: "xsendfile_module",
    builtin: false,
    directives: DIRECTIVES,
};

/// What became of a backend's answer.
pub enum Outcome {
    /// No `X-Sendfile`: the answer stands.
    None,
    /// The file replaces the body (`resp` now carries it).
    File,
    /// Refused: answer this status through the error path.
    Error(u16),
}

/// Take the `X-Sendfile` header out of a backend's 200 answer and put the
/// file in its place. `resp.headers` is the normal table (`Last-Modified`,
/// `ETag`, `Content-Type` …), `ctx.err_headers_out` the script's others.
pub fn apply(ctx: &mut Ctx<'_>, resp: &mut Response) -> Outcome {
    if ctx.conf.xsendfile.enabled != Some(true) || resp.status != 200 {
        return Outcome::None;
    }
    let mut file = take(&mut resp.headers, "X-Sendfile");
    let from_err = take(&mut ctx.err_headers_out, "X-Sendfile");
    if file.as_deref().is_none_or(str::is_empty) {
        file = from_err;
    }
    let Some(file) = file.filter(|f| !f.is_empty()) else {
        return Outcome::None;
    };
    remove(&mut resp.headers, "Content-Length");
    remove(&mut resp.headers, "Content-Encoding");
    remove(&mut ctx.err_headers_out, "Content-Length");
    remove(&mut ctx.err_headers_out, "Content-Encoding");
    let Some(path) = resolve(ctx, &file) else {
        ctx.reason = Some(crate::request::Reason::new(
            "error",
            "xsendfile",
            format!("xsendfile: unable to find file: {file}"),
        ));
        return Outcome::Error(404);
    };
    // Opened without blocking; what is not a regular file is refused
    // below, as mod_xsendfile refuses it once its open returns.
    let opened = crate::fs::open_nonblocking(&path);
    let (f, meta) = match opened {
        Ok(x) => x,
        Err(_) => {
            ctx.reason = Some(crate::request::Reason::new(
                "error",
                "xsendfile",
                format!("xsendfile: cannot open file: {}", path.display()),
            ));
            return Outcome::Error(404);
        }
    };
    if !meta.is_file() {
        ctx.reason = Some(crate::request::Reason::new(
            "error",
            "xsendfile",
            format!("xsendfile: not a file {}", path.display()),
        ));
        return Outcome::Error(404);
    }
    let stamp = FileStamp::from_metadata(&meta);
    let now_us = ctx.request_time_us();
    let ignore_lm = ctx.conf.xsendfile.ignore_last_modified == Some(true);
    let script_lm = header(&resp.headers, "Last-Modified")
        .or_else(|| header(&ctx.err_headers_out, "Last-Modified"))
        .and_then(crate::http::date::parse_http_date);
    // r->mtime: the script's date, else (or when ignored) the file's.
    let mtime_secs = match script_lm {
        Some(t) if !ignore_lm => t,
        _ => {
            remove(&mut ctx.err_headers_out, "Last-Modified");
            let t = stamp.mtime_us.div_euclid(1_000_000).min(now_us / 1_000_000);
            set(
                &mut resp.headers,
                "Last-Modified",
                crate::http::date::fmt_http_date(t),
            );
            stamp.mtime_us.div_euclid(1_000_000)
        }
    };
    let has_etag =
        header(&resp.headers, "ETag").is_some() || header(&ctx.err_headers_out, "ETag").is_some();
    if ctx.conf.xsendfile.ignore_etag == Some(true) || !has_etag {
        remove(&mut ctx.err_headers_out, "ETag");
        remove(&mut resp.headers, "ETag");
        // mod_xsendfile puts the file's size and inode into the request's
        // file information, whose time stays the script's (the ETag of
        // Apache's core is made from that).
        let bits = ETagSet::effective(ctx.conf.core.etag);
        let tag = match ctx.finfo {
            Some(script) => {
                let etag_stamp = FileStamp {
                    mtime_us: script.mtime_us,
                    ..stamp
                };
                etag::file_etag(bits, &etag_stamp, now_us, &f, false)
                    .ok()
                    .flatten()
            }
            // No file behind the request (a proxied one): Apache's core
            // makes the ETag of "no file", its (zero) time alone.
            None if bits & etag::ETAG_NONE != 0 => None,
            None => Some("\"0\"".to_string()),
        };
        if let Some(tag) = tag {
            set(&mut resp.headers, "ETag", tag);
        }
    }
    set(&mut resp.headers, "Content-Length", stamp.size.to_string());
    let now = now_us.div_euclid(1_000_000);
    let clock = Clock {
        mtime: Some(mtime_secs),
        request_time: now,
        now,
    };
    let verdict = conditional::meets_conditions(
        &ctx.method,
        200,
        &ctx.headers_in,
        &Validators::from_response(resp, clock),
    );
    match verdict {
        Verdict::NotModified => {
            resp.status = 304;
            if resp.entity_in_headers {
                // A proxied answer's type stays (see Response).
                resp.remove_header("Content-Length");
                resp.body = Body::empty();
            } else {
                conditional::strip_for_304(resp);
            }
        }
        Verdict::PreconditionFailed => {
            resp.status = 412;
            resp.body = Body::empty();
        }
        Verdict::Proceed => {
            resp.body = Body::file(Arc::new(f), 0, stamp.size);
            ctx.finfo = Some(crate::fs::FileInfo::from_meta(&meta));
            // Byte ranges are cut after the output filters, as for a file.
            ctx.range_deferred = Some(ctx.headers_in.clone().into_owned());
        }
    }
    Outcome::File
}

/// The file for `name`: joined with (or, absolute, checked against) the
/// script's directory and then each `XSendFilePath`, `..` resolved, never
/// above the directory (`apr_filepath_merge` with `NOTABOVEROOT`).
fn resolve(ctx: &Ctx<'_>, name: &str) -> Option<PathBuf> {
    let script_dir = match ctx.filename.rfind('/') {
        Some(i) => PathBuf::from(&ctx.filename[..=i]),
        None => PathBuf::from("/"),
    };
    std::iter::once(&script_dir)
        .chain(ctx.conf.xsendfile.paths.iter())
        .find_map(|root| merge_not_above(root, name))
}

fn merge_not_above(root: &Path, name: &str) -> Option<PathBuf> {
    let root = clean(root)?;
    let joined = if name.starts_with('/') {
        clean(Path::new(name))?
    } else {
        clean(&root.join(name))?
    };
    joined.starts_with(&root).then_some(joined)
}

/// `.` and `..` resolved lexically; `None` for `..` above `/`.
fn clean(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::from("/");
    for c in p.components() {
        match c {
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(n) => out.push(n),
        }
    }
    Some(out)
}

fn header<'t, N: AsRef<str>>(table: &'t [(N, String)], name: &str) -> Option<&'t str> {
    table
        .iter()
        .find(|(n, _)| n.as_ref().eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

fn take<N: AsRef<str>>(table: &mut Vec<(N, String)>, name: &str) -> Option<String> {
    let v = header(table, name).map(str::to_string);
    remove(table, name);
    v
}

fn remove<N: AsRef<str>>(table: &mut Vec<(N, String)>, name: &str) {
    table.retain(|(n, _)| !n.as_ref().eq_ignore_ascii_case(name));
}

fn set<N: AsRef<str> + From<&'static str>>(
    table: &mut Vec<(N, String)>,
    name: &'static str,
    value: String,
) {
    match table
        .iter_mut()
        .find(|(n, _)| n.as_ref().eq_ignore_ascii_case(name))
    {
        Some(slot) => slot.1 = value,
        None => table.push((name.into(), value)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confined_to_the_root() {
        let root = Path::new("/srv/files");
        assert_eq!(
            merge_not_above(root, "a/b.txt"),
            Some(PathBuf::from("/srv/files/a/b.txt"))
        );
        assert_eq!(
            merge_not_above(root, "/srv/files/x"),
            Some(PathBuf::from("/srv/files/x"))
        );
        assert_eq!(merge_not_above(root, "/srv/files/../etc/passwd"), None);
        assert_eq!(merge_not_above(root, "../x"), None);
        assert_eq!(merge_not_above(root, "/etc/passwd"), None);
        assert_eq!(merge_not_above(root, "/srv/filesX/a"), None);
        assert_eq!(
            merge_not_above(root, "a/../b"),
            Some(PathBuf::from("/srv/files/b"))
        );
    }
}
