//! The listing request (Apache's `index_directory`): the content type and
//! `TrackModified` validators, the client's query, the header file (or the
//! page head), one sub-request per directory entry (entries the
//! configuration would not serve are left out, `ShowForbidden` keeps the
//! denied ones), icons, alt texts and descriptions looked up for each, and
//! the readme file (or the signature) with the page's end.
//!
//! `HeaderName` and `ReadmeName` are looked up as sub-requests relative to
//! the listed directory: an HTML file is served through its own handler
//! and inserted (replacing the page head and `<h1>`, unless
//! `SuppressHTMLPreamble` leaves the head to the file), any other `text/`
//! file is inserted inside `<pre>` with `<`, `>` and `&` escaped.

use super::config::{AutoindexDir, EntryFacts};
use crate::fs::Kind;
use crate::http::autoindex::{self as render, opts::*, query, Entry, Layout};
use crate::http::{Body, Response};
use crate::request::Ctx;
use std::io::Read;

/// Apache's `MAX_STRING_LEN`: how much of a file `ScanHTMLTitles` reads.
const TITLE_SCAN_LEN: u64 = 8191;

/// How much of the page Apache holds before it passes it on
/// (`APR_BUCKET_BUFF_SIZE`): a longer page, or one that a header or
/// readme sub-request wrote into, goes out before its length is known,
/// so it is sent chunked (to an HTTP/1.0 client: ended by closing the
/// connection).
const APACHE_WRITE_BUFFER: usize = 8000;

/// Whether the handler `name` is the directory listing's.
pub fn claims(name: &str) -> bool {
    name == crate::http::DIR_MAGIC_TYPE
}

/// The handler hook: a directory reached by GET or HEAD with no other
/// handler set (a `ScriptAlias` or `SetHandler` takes it away, and the
/// default handler then answers 404). A directory whose index was not
/// found is listed with `Options Indexes`, else refused with 403.
pub fn handler(ctx: &mut Ctx<'_>) -> Option<Result<Response, crate::request::Status>> {
    let directory = ctx.finfo.is_some_and(|f| f.kind == Kind::Dir)
        && (ctx.method == "GET" || ctx.method == "HEAD")
        && !matches!(ctx.handler.as_deref(), Some(h) if h != crate::http::DIR_MAGIC_TYPE);
    if !directory || !ctx.site.autoindex_loaded {
        return None;
    }
    if ctx.conf.core.opts() & crate::modules::core::options::OPT_INDEXES == 0 {
        let names = ctx.conf.dir.index_names().join(",");
        ctx.reason = Some(crate::request::Reason::new("error", "autoindex",
            format!("AH01276: Cannot serve directory {}: No matching DirectoryIndex ({names}) found, and server-generated directory index forbidden by Options directive", ctx.filename),
        ));
        return Some(Err(403));
    }
    Some(Ok(listing(ctx)))
}

/// The listing of the request's directory.
pub fn listing(ctx: &mut Ctx<'_>) -> Response {
    // A listing reads the directory itself, which no cache holds: it is
    // never kept (`answer_memo`).
    crate::answer_memo::note_volatile();
    let conf = ctx.conf.autoindex.clone();
    let mut resp = Response::new(200);
    let ctype = conf.content_type.as_deref().unwrap_or("text/html");
    let charset = conf.charset.as_deref().unwrap_or("ISO-8859-1");
    ctx.content_type = Some(if charset.is_empty() {
        ctype.to_string()
    } else {
        format!("{ctype};charset={charset}")
    });
    // A type without a charset takes `AddDefaultCharset`'s, as any other.
    if let Some(t) = crate::handler::content_type_with_charset(ctx) {
        resp.add_header("Content-Type", t);
    }
    if conf.opts & TRACK_MODIFIED != 0 {
        track_modified(ctx, &mut resp);
    }
    if ctx.req.method == "HEAD" {
        return resp;
    }
    let view = query::view(
        ctx.args.as_deref(),
        conf.opts,
        conf.default_key.unwrap_or(b'N'),
        conf.default_direction.unwrap_or(b'A'),
    );
    let title = render::title(crate::path_text::bytes(&ctx.uri).as_ref());
    let mut out = Vec::with_capacity(4096);
    let mut streamed = emit_head(ctx, &conf, &view, &title, &mut out);
    // Apache hides `Accept-Encoding` from the header file's sub-request,
    // whose output is the first to reach the filters.
    ctx.accept_encoding_hidden_at_first_pass = streamed;

    // Apache makes the file name end in `/` so that the entries' paths
    // are the directory's plus their names.
    let mut dir = ctx.filename.clone();
    if !dir.ends_with('/') {
        dir.push('/');
    }
    let mut entries = Vec::new();
    if let Some(parent) = parent_entry(ctx, &conf, &view, &dir) {
        entries.push(parent);
    }
    if let Ok(rd) = std::fs::read_dir(crate::path_text::os_path(std::path::Path::new(&dir))) {
        for e in rd.flatten() {
            use std::os::unix::ffi::OsStrExt;
            let file_name = e.file_name();
            let name = crate::path_text::from_slice(file_name.as_bytes());
            if let Some(entry) = dir_entry(ctx, &conf, &view, &dir, &name) {
                entries.push(entry);
            }
        }
    }
    render::sort(&mut entries, view.opts, view.key, view.direction);
    let date_format = |us: i64| listing_date(us, conf.old_date_format);
    let layout = Layout {
        name_width: conf.name_width,
        name_adjust: conf.name_adjust,
        desc_width: conf.desc_width,
        desc_adjust: conf.desc_adjust,
        icon_width: conf.icon_width,
        icon_height: conf.icon_height,
        default_icon: conf.default_icon.as_deref(),
        blank_icon: conf.find_default_icon("^^BLANKICON^^"),
        style_sheet: conf.style_sheet.is_some(),
        date: &date_format,
    };
    render::directories(
        &mut out,
        &entries,
        &layout,
        view.opts,
        view.key,
        view.direction,
        &view.colargs,
    );
    streamed |= emit_tail(ctx, &conf, view.opts & SUPPRESS_PREAMBLE != 0, &mut out);
    if streamed || out.len() > APACHE_WRITE_BUFFER {
        // Apache chunks an answer of unknown length for any HTTP/1.1
        // client, one that asked to close the connection included.
        resp.add_header("Transfer-Encoding", "chunked");
        ctx.body_passed_unflushed = true;
    }
    resp.body = Body::bytes(out);
    resp
}

/// `TrackModified`: the directory's own `Last-Modified` and `ETag`.
fn track_modified(ctx: &Ctx<'_>, resp: &mut Response) {
    use crate::http::etag::{
        plan_etag, EtagPlan, FileStamp, ETAG_DIGEST, ETAG_INODE, ETAG_MTIME, ETAG_NONE, ETAG_SIZE,
    };
    use crate::modules::core::server_directives::ETagSet;
    let Some(f) = ctx.finfo else { return };
    let now = ctx.request_time_us();
    let mtime = f.mtime_us.min(now);
    resp.add_header(
        "Last-Modified",
        crate::http::date::fmt_http_date(mtime.div_euclid(1_000_000)),
    );
    let stamp = FileStamp {
        size: f.size,
        mtime_us: f.mtime_us,
        inode: f.inode,
    };
    // A digest is made of regular files only: a directory's tag has the
    // other components, and none at all (`""`) under `Digest` alone.
    let bits = ETagSet::effective(ctx.conf.core.etag);
    let components = bits & (ETAG_INODE | ETAG_MTIME | ETAG_SIZE);
    if bits & ETAG_DIGEST != 0 && bits & ETAG_NONE == 0 && components == 0 {
        let weak = now.wrapping_sub(f.mtime_us) < 1_000_000;
        resp.add_header("ETag", if weak { "W/\"\"" } else { "\"\"" });
    } else if let EtagPlan::Value(tag) = plan_etag(bits & !ETAG_DIGEST, &stamp, now, false) {
        resp.add_header("ETag", tag);
    }
}

/// The modification time as the listing prints it, in local time.
fn listing_date(us: i64, old_format: bool) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let t = crate::modules::rewrite::vars::local_time(us.div_euclid(1_000_000));
    if old_format {
        format!(
            "{:02}-{}-{} {:02}:{:02}",
            t.mday,
            MONTHS[(t.mon - 1).clamp(0, 11) as usize],
            t.year,
            t.hour,
            t.min
        )
    } else {
        format!(
            "{}-{:02}-{:02} {:02}:{:02}",
            t.year, t.mon, t.mday, t.hour, t.min
        )
    }
}

/// Apache's `response_is_html`.
fn is_html(content_type: &str) -> bool {
    let t = field_noparam(content_type);
    t.eq_ignore_ascii_case("text/html") || t.eq_ignore_ascii_case("application/xhtml+xml")
}

/// `ap_field_noparam`: the value before any `;`, without trailing blanks.
fn field_noparam(v: &str) -> &str {
    v.split(';').next().unwrap_or("").trim_end()
}

/// What a header or readme sub-request found.
enum Insert {
    /// An HTML file, served through its handler: its body, or `None` when
    /// serving it failed.
    Html(Option<Vec<u8>>),
    /// Another `text/` file's bytes.
    Text(Vec<u8>),
}

/// Looks `name` up as a sub-request and, if it is a regular file of an
/// HTML or text type, takes its content.
fn insert(ctx: &Ctx<'_>, name: &str) -> Option<Insert> {
    let (mut sub, result) = ctx.sub_request(name);
    if result.is_err() || sub.finfo.map(|f| f.kind) != Some(Kind::File) {
        return None;
    }
    let ct = sub.content_type.clone()?;
    if is_html(&ct) {
        let body = match crate::handler::run(&mut sub) {
            Ok(resp) if resp.status == 200 => resp.body.to_vec().ok(),
            _ => None,
        };
        return Some(Insert::Html(body));
    }
    if ct.len() >= 5 && ct.as_bytes()[..5].eq_ignore_ascii_case(b"text/") {
        return read_file(&sub.filename, None).map(Insert::Text);
    }
    None
}

/// A regular file's bytes (at most `limit`), opened so that a FIFO
/// cannot block.
fn read_file(path: &str, limit: Option<u64>) -> Option<Vec<u8>> {
    let (file, meta) = crate::fs::open_nonblocking(std::path::Path::new(path)).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut buf = Vec::new();
    let mut reader = file.take(limit.unwrap_or(u64::MAX));
    reader.read_to_end(&mut buf).ok()?;
    Some(buf)
}

/// The page head through the `<h1>` (Apache's `emit_head`). True when
/// an HTML header file was inserted (its sub-request passed the page on).
fn emit_head(
    ctx: &Ctx<'_>,
    conf: &AutoindexDir,
    view: &query::View,
    title: &[u8],
    out: &mut Vec<u8>,
) -> bool {
    let mut inserted = false;
    let suppress = view.opts & SUPPRESS_PREAMBLE != 0;
    let xhtml = view.opts & EMIT_XHTML != 0;
    let style = conf.style_sheet.as_deref();
    let head_insert = conf.head_insert.as_deref();
    let (mut emit_amble, mut emit_h1) = (true, true);
    let header = conf.header.as_ref().map(|h| match &ctx.args {
        Some(args) => format!("{h}?{args}"),
        None => h.clone(),
    });
    match header.and_then(|h| insert(ctx, &h)) {
        Some(Insert::Html(body)) => {
            if !suppress {
                render::preamble(out, xhtml, title, style, head_insert);
            }
            match body {
                Some(b) => {
                    out.extend_from_slice(&b);
                    inserted = true;
                    emit_amble = false;
                    emit_h1 = false;
                }
                // The head is written below if it was not before.
                None => emit_amble = suppress,
            }
        }
        Some(Insert::Text(text)) => {
            render::preamble(out, xhtml, title, style, head_insert);
            render::plain_text(out, &text);
            emit_amble = false;
            emit_h1 = false;
        }
        None => {}
    }
    if emit_amble {
        render::preamble(out, xhtml, title, style, head_insert);
    }
    if emit_h1 {
        render::h1(out, title, style.is_some());
    }
    inserted
}

/// The readme through the end of the page (Apache's `emit_tail`). True
/// when an HTML readme file was inserted.
fn emit_tail(ctx: &Ctx<'_>, conf: &AutoindexDir, suppress_amble: bool, out: &mut Vec<u8>) -> bool {
    let (mut suppress_sig, mut suppress_post) = (false, false);
    let mut inserted = false;
    match conf.readme.as_deref().and_then(|r| insert(ctx, r)) {
        Some(Insert::Html(Some(body))) => {
            out.extend_from_slice(&body);
            inserted = true;
            suppress_sig = true;
            suppress_post = suppress_amble;
        }
        Some(Insert::Text(text)) => {
            render::plain_text(out, &text);
            suppress_sig = true;
        }
        Some(Insert::Html(None)) | None => {}
    }
    if !suppress_sig {
        if let Some(sig) = crate::errors::signature_line(ctx) {
            out.extend_from_slice(sig.as_bytes());
        }
    }
    if !suppress_post {
        out.extend_from_slice(b"</body></html>\n");
    }
    inserted
}

/// The "Parent Directory" entry (Apache's `make_parent_entry`), unless the
/// directory is the root or `IndexIgnore` covers `<dir>/..`.
fn parent_entry(
    ctx: &Ctx<'_>,
    conf: &AutoindexDir,
    view: &query::View,
    dir: &str,
) -> Option<Entry> {
    let name = render::parent_of(crate::path_text::bytes(&ctx.uri).as_ref())?;
    let testpath = format!("{dir}..");
    if conf.ignores(&testpath) {
        return None;
    }
    let mut e = Entry {
        name,
        size: -1,
        lm: -1,
        ..Default::default()
    };
    if view.opts & FANCY_INDEXING != 0 {
        e.icon = conf
            .find_default_icon(&testpath)
            .or_else(|| conf.find_default_icon("^^DIRECTORY^^"))
            .map(str::to_string);
        e.alt = Some(
            conf.find_default_alt(&testpath)
                .or_else(|| conf.find_default_alt("^^DIRECTORY^^"))
                .unwrap_or("PARENTDIR")
                .to_string(),
        );
        e.desc = conf.find_desc(&testpath).map(|d| d.as_bytes().to_vec());
    }
    Some(e)
}

/// One directory entry (Apache's `make_autoindex_entry`), or `None` when
/// it is not listed.
fn dir_entry(
    ctx: &Ctx<'_>,
    conf: &AutoindexDir,
    view: &query::View,
    dir: &str,
    name: &str,
) -> Option<Entry> {
    use htaccel_conf::fnmatch::{fnmatch, Flags};
    if name.is_empty() || name.contains('/') {
        return None;
    }
    let raw_name = crate::path_text::bytes(name);
    if let Some(p) = &view.pattern {
        let flags = Flags {
            no_escape: true,
            period: true,
            ..Flags::default()
        };
        if !fnmatch(p, raw_name.as_ref(), flags) {
            return None;
        }
    }
    let path = format!("{dir}{name}");
    if conf.ignores(&path) {
        return None;
    }
    // Symbolic links are followed; a broken one is skipped.
    let meta = std::fs::metadata(crate::path_text::os_path(std::path::Path::new(&path))).ok()?;
    let is_dir = meta.is_dir();
    let (sub, result) = ctx.sub_request_dirent(name);
    let show_forbidden = view.opts & SHOW_FORBIDDEN != 0 && matches!(result, Err(401) | Err(403));
    let finfo = sub.finfo?;
    if !matches!(finfo.kind, Kind::File | Kind::Dir)
        || !(matches!(result, Ok(()) | Err(300..=399)) || show_forbidden)
    {
        return None;
    }
    let mut e_name = raw_name.into_owned();
    if is_dir {
        e_name.push(b'/');
    }
    let mut e = Entry {
        name: e_name,
        size: -1,
        lm: -1,
        ..Default::default()
    };
    if view.opts & (FANCY_INDEXING | TABLE_INDEXING) != 0 {
        e.lm = finfo.mtime_us;
        if is_dir {
            e.isdir = view.opts & FOLDERS_FIRST != 0;
            let facts = EntryFacts::path_only(&path);
            e.icon = conf
                .find_icon(&facts)
                .or_else(|| conf.find_default_icon("^^DIRECTORY^^"))
                .map(str::to_string);
            e.alt = Some(
                conf.find_alt(&facts)
                    .or_else(|| conf.find_default_alt("^^DIRECTORY^^"))
                    .unwrap_or("DIR")
                    .to_string(),
            );
        } else {
            let encoding = (!sub.encodings.is_empty()).then(|| sub.encodings.join(", "));
            let facts = EntryFacts {
                path: &path,
                content_type: sub.content_type.as_deref().map(field_noparam),
                content_encoding: encoding.as_deref(),
                path_only: false,
            };
            e.icon = conf.find_icon(&facts).map(str::to_string);
            e.alt = conf.find_alt(&facts).map(str::to_string);
            e.size = finfo.size as i64;
        }
        e.desc = conf.find_desc(&path).map(|d| d.as_bytes().to_vec());
        if e.desc.is_none() && view.opts & SCAN_HTML_TITLES != 0 && result.is_ok() {
            e.desc = find_title(&sub, &path);
        }
    }
    if view.key == b'M' && e.lm < 0 {
        e.lm = 0;
    }
    Some(e)
}

/// `ScanHTMLTitles`: the text of the first `<title>` in the first 8191
/// bytes of an HTML file without an encoding (Apache's `find_title`,
/// including its matcher, which does not look at a `<` again after a
/// false start: `<<title>` is not found).
fn find_title(sub: &Ctx<'_>, path: &str) -> Option<Vec<u8>> {
    let ct = sub.content_type.as_deref()?;
    if !(is_html(ct) || ct == "text/x-server-parsed-html") || !sub.encodings.is_empty() {
        return None;
    }
    let buf = read_file(path, Some(TITLE_SCAN_LEN))?;
    scan_title(&buf)
}

/// The title `find_title` finds in `buf`: after the first `<title>` (any
/// case) up to the next `<`, leading line breaks dropped and the others
/// made spaces. The text ends at a NUL, as the C string did.
fn scan_title(buf: &[u8]) -> Option<Vec<u8>> {
    let buf = match buf.iter().position(|&c| c == 0) {
        Some(nul) => &buf[..nul],
        None => buf,
    };
    const FIND: &[u8] = b"<title>";
    let mut p = 0;
    for x in 0..buf.len() {
        if buf[x].to_ascii_lowercase() == FIND[p] {
            p += 1;
            if p == FIND.len() {
                let mut rest = buf[x + 1..].to_vec();
                if let Some(end) = rest.iter().position(|&c| c == b'<') {
                    rest.truncate(end);
                }
                let lead = rest
                    .iter()
                    .take_while(|&&c| c == b'\r' || c == b'\n')
                    .count();
                let mut title = rest.split_off(lead);
                for c in title.iter_mut() {
                    if *c == b'\r' || *c == b'\n' {
                        *c = b' ';
                    }
                }
                return Some(title);
            }
        } else {
            p = 0;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_as_find_title_reads_them() {
        let t = |s: &str| scan_title(s.as_bytes()).map(|v| String::from_utf8(v).unwrap());
        assert_eq!(
            t("<html><TITLE>\r\nThe\ntitle &amp; more</title>").as_deref(),
            Some("The title &amp; more")
        );
        assert_eq!(t("<title></title>").as_deref(), Some(""));
        assert_eq!(t("<title>open ended").as_deref(), Some("open ended"));
        // No second look at a `<` after a false start.
        assert_eq!(t("<<title>Missed</title>"), None);
        assert_eq!(t("x\0<title>after a NUL</title>"), None);
    }

    #[test]
    fn field_without_parameters() {
        assert_eq!(field_noparam("text/html; charset=utf-8"), "text/html");
        assert_eq!(field_noparam("text/plain \t"), "text/plain");
        assert!(is_html("Application/XHTML+XML;q=1"));
        assert!(!is_html("text/htmlx"));
    }
}
