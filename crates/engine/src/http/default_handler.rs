//! Apache's default handler (`default_handler` in `core.c`), which serves
//! static files, together with the filters that shape its output
//! (conditional requests, byte ranges, the header and content-length
//! filters), as one pure function of the request and an already opened file.
//!
//! This is the path most requests take, so everything a client can see of it
//! is reproduced, down to the quirks (all observed with Apache 2.4.71):
//!
//! * GET, HEAD and POST serve the file (POST too: "script delivery" is on by
//!   default); OPTIONS answers 200 with `Allow`, `Content-Length: 0` and the
//!   file's type even when the file does not exist; other known methods get
//!   405 and unknown ones (methods are case-sensitive) 501, both with `Allow`.
//! * Headers, in order: `Last-Modified` (the mtime, or the current time if the
//!   mtime is in the future), `ETag` (see [`super::etag`]), `Accept-Ranges:
//!   bytes`, `Content-Length`, `Content-MD5` (with `ContentDigest On`), then
//!   `Content-Type`, `Content-Encoding`, `Content-Language` when mod_mime
//!   found them (no `Content-Type` at all for an unknown extension).
//! * A failed precondition is a 412 with those headers, `Content-Length: 0`
//!   (for HEAD: the file's length) and an empty body, not the 412 error
//!   page; a 304 keeps the validators and `Accept-Ranges` and drops
//!   `Content-Length` and the content headers.
//! * HEAD gets the GET headers, including `Content-Length` of what GET would
//!   send, except that a `Content-Length: 0` is never sent for HEAD.
//!
//! Errors (404, 405, 416, 501) are returned as a [`Refusal`], for the
//! caller's `ErrorDocument` handling, with the `Allow` value Apache sends.
//! Apache's order of the methods in `Allow` comes from a hash table seeded at
//! start-up and differs between server starts (observed:
//! `GET,POST,OPTIONS,HEAD,TRACE`, `POST,OPTIONS,HEAD,GET,TRACE`,
//! `HEAD,GET,POST,OPTIONS,TRACE`); `TRACE` is always last. htaccel uses one
//! fixed order; compare the value as a set.

use super::conditional::{
    has_preconditions, meets_conditions, strip_for_304, Clock, Validators, Verdict,
};
use super::date::fmt_http_date;
use super::digest::md5_base64_of_file;
use super::etag::{file_etag, FileStamp};
use super::range::{byterange_filter, RangeLimits, RangeOutcome};
use super::{Body, Headers, Response};
use bytes::Bytes;
use std::fs::File;
use std::sync::Arc;

/// An opened regular file and its metadata, taken when it was opened.
#[derive(Clone, Debug)]
pub struct StaticFile {
    pub file: Arc<File>,
    pub stamp: FileStamp,
    /// The whole content, when it was read ahead (small files kept by
    /// [`crate::filecache`]); sent instead of reading the file again.
    pub content: Option<Bytes>,
}

impl StaticFile {
    /// Take the metadata of an opened file.
    pub fn new(file: Arc<File>) -> std::io::Result<Self> {
        let meta = file.metadata()?;
        Ok(Self::with_metadata(file, &meta))
    }

    /// An opened file whose metadata was already taken.
    pub fn with_metadata(file: Arc<File>, meta: &std::fs::Metadata) -> Self {
        StaticFile {
            file,
            stamp: FileStamp::from_metadata(meta),
            content: None,
        }
    }

    /// Read the whole file into memory (kept only when all of it was read).
    ///
    /// Read into uninitialised capacity (`read_to_end`), not into a buffer
    /// zeroed first: the zeroing cost more instructions than the rest of a
    /// request that misses the answer memo. The read moves the descriptor's
    /// offset, which nothing uses: every other read of a served file is
    /// positional (`pread`, `sendfile` with an offset).
    pub fn read_content(&mut self) {
        use std::io::Read;
        let size = self.stamp.size as usize;
        let mut buf = Vec::with_capacity(size);
        // `take`: a file that grew since its metadata was taken is not
        // read past the size the answer announces; one that shrank is
        // short, and then not kept.
        let read = (&*self.file).take(size as u64).read_to_end(&mut buf);
        if read.is_ok() && buf.len() == size {
            self.content = Some(Bytes::from(buf));
        }
    }
}

/// Everything the default handler looks at.
#[derive(Clone, Debug)]
pub struct FileRequest<'a> {
    /// The method as sent.
    pub method: &'a str,
    pub headers: &'a Headers,
    /// The request's fields with a `Range` that the content filters hold
    /// back to cut the filtered body (mod_deflate): the preconditions still
    /// see that `Range`, as Apache's `ap_meets_conditions` does (an
    /// `If-Range` with a `Range` rules out 304).
    pub held_range: Option<&'a Headers>,
    /// The request's status so far: 200, or the error an `ErrorDocument`
    /// serves (its preconditions are then not evaluated, as in Apache's
    /// `ap_meets_conditions`).
    pub status_so_far: u16,
    /// The file; `None` when the mapped path is not a servable file: it does
    /// not exist, is a directory, or has path info that `AcceptPathInfo`
    /// rejects (Apache answers 404 to GET/HEAD/POST for all three, and still
    /// 200 to OPTIONS, 405/501 to other methods).
    pub file: Option<StaticFile>,
    /// The type mod_mime (or `ForceType`, `T=`) chose, charset included
    /// (`ap_make_content_type`).
    pub content_type: Option<&'a str>,
    /// The encoding mod_mime chose (`AddEncoding`), sent as `Content-Encoding`.
    pub content_encoding: Option<&'a str>,
    /// The languages mod_mime chose, joined with "," and no space as Apache
    /// joins them ("en,fr"), sent as `Content-Language`.
    pub content_language: Option<&'a str>,
    /// The effective `FileETag` components (see [`super::etag`]; 0 = unset).
    pub etag_bits: u8,
    /// `r->vlist_validator`: the tag of a negotiated resource's variant
    /// list (mod_negotiation), folded into the `ETag` (see
    /// [`super::etag::with_vlist`]).
    pub vlist_validator: Option<&'a str>,
    /// `ContentDigest On`.
    pub content_md5: bool,
    /// `r->no_local_copy`: preconditions are not evaluated (never a 304
    /// nor a 412), as for a body a filter may make anew (mod_include).
    pub no_local_copy: bool,
    /// When the request started, µs since the epoch.
    pub request_time_us: i64,
    /// The current time, µs since the epoch.
    pub now_us: i64,
    /// `TraceEnable` is not `off` (adds `TRACE` to `Allow`).
    pub trace_enabled: bool,
    pub range_limits: RangeLimits,
    /// The multipart boundary for multi-range answers.
    pub boundary: &'a str,
}

/// An error the default handler answers with, to be sent through
/// `ErrorDocument` or the built-in page: 404, 405, 416 or 501.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    /// The `Allow` value Apache sends with 405 and 501.
    pub allow: &'static str,
}

/// The methods Apache knows by number (`ap_method_number_of`); `HEAD` is GET.
/// Any other method is "invalid" and gets 501 from the default handler.
pub fn is_known_method(method: &str) -> bool {
    super::method::is_registered(method)
}

/// The `Allow` value of the default handler.
pub fn allow_header(trace_enabled: bool) -> &'static str {
    if trace_enabled {
        "GET,POST,OPTIONS,HEAD,TRACE"
    } else {
        "GET,POST,OPTIONS,HEAD"
    }
}

/// `ap_rationalize_mtime`: a modification time in the future is reported as
/// the current time (µs).
fn rationalize_mtime(mtime_us: i64, request_time_us: i64, now_us: i64) -> i64 {
    let now = if mtime_us < request_time_us {
        request_time_us
    } else {
        now_us
    };
    mtime_us.min(now)
}

/// Append the content headers Apache's header filter adds last.
fn add_content_headers(resp: &mut Response, req: &FileRequest<'_>) {
    for (name, value) in [
        ("Content-Type", req.content_type),
        ("Content-Encoding", req.content_encoding),
        ("Content-Language", req.content_language),
    ] {
        if let Some(v) = value {
            resp.add_header(name, v);
        }
    }
}

/// Serve `req` as Apache's default handler does.
pub fn serve(req: &FileRequest<'_>) -> Result<Response, Refusal> {
    let allow = allow_header(req.trace_enabled);
    let head = req.method == "HEAD";
    match req.method {
        "GET" | "HEAD" | "POST" => {}
        "OPTIONS" => {
            let mut resp = Response::new(200);
            resp.add_header("Allow", allow);
            resp.add_header("Content-Length", "0");
            add_content_headers(&mut resp, req);
            return Ok(resp);
        }
        m if is_known_method(m) => return Err(Refusal { status: 405, allow }),
        _ => return Err(Refusal { status: 501, allow }),
    }
    let Some(file) = &req.file else {
        return Err(Refusal { status: 404, allow });
    };

    let stamp = &file.stamp;
    let mut resp = Response::new(200);
    let last_modified = rationalize_mtime(stamp.mtime_us, req.request_time_us, req.now_us);
    resp.add_header(
        "Last-Modified",
        fmt_http_date(last_modified.div_euclid(1_000_000)),
    );
    // A digest that cannot be read gives no ETag, as in Apache.
    if let Ok(Some(etag)) = file_etag(req.etag_bits, stamp, req.request_time_us, &file.file, false)
    {
        let etag = match req.vlist_validator {
            Some(vlv) => super::etag::with_vlist(&etag, vlv),
            None => etag,
        };
        resp.add_header("ETag", etag);
    }
    resp.add_header("Accept-Ranges", req.range_limits.accept_ranges());
    resp.add_header("Content-Length", stamp.size.to_string());
    if req.content_md5 {
        if let Ok(sum) = md5_base64_of_file(&file.file, stamp.size) {
            resp.add_header("Content-MD5", sum);
        }
    }

    let clock = Clock {
        mtime: Some(stamp.mtime_us.div_euclid(1_000_000)),
        request_time: req.request_time_us.div_euclid(1_000_000),
        now: req.now_us.div_euclid(1_000_000),
    };
    let verdict = if !req.no_local_copy && has_preconditions(req.headers) {
        meets_conditions(
            req.method,
            req.status_so_far,
            req.held_range.unwrap_or(req.headers),
            &Validators::from_response(&resp, clock),
        )
    } else {
        Verdict::Proceed
    };
    match verdict {
        Verdict::NotModified => {
            resp.status = 304;
            strip_for_304(&mut resp);
            return Ok(resp);
        }
        Verdict::PreconditionFailed => {
            resp.status = 412;
            // Apache recounts the (empty) body for GET but leaves the file's
            // length in place for HEAD.
            let len = if head { stamp.size } else { 0 };
            set_content_length(&mut resp, len, head);
            add_content_headers(&mut resp, req);
            return Ok(resp);
        }
        Verdict::Proceed => {}
    }
    add_content_headers(&mut resp, req);
    resp.body = match &file.content {
        Some(bytes) => Body::bytes(bytes.clone()),
        None => Body::file(file.file.clone(), 0, stamp.size),
    };
    let mut resp = match byterange_filter(req.headers, resp, clock, &req.range_limits, req.boundary)
    {
        RangeOutcome::Full(r) | RangeOutcome::Partial(r) => r,
        RangeOutcome::NotSatisfiable => return Err(Refusal { status: 416, allow }),
    };
    if head {
        let len = resp.body.len();
        resp.body = Body::empty();
        set_content_length(&mut resp, len, true);
    }
    Ok(resp)
}

/// Set `Content-Length` in place; for HEAD a zero length is not sent.
fn set_content_length(resp: &mut Response, len: u64, head: bool) {
    if head && len == 0 {
        resp.remove_header("Content-Length");
        return;
    }
    match resp
        .headers
        .iter_mut()
        .find(|(n, _)| n.eq_ignore_ascii_case("Content-Length"))
    {
        Some(h) => h.1 = len.to_string(),
        None => resp.add_header("Content-Length", len.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::etag::ETAG_NONE;
    use std::io::Write;

    // The observed file: 12 bytes "hello world\n", mtime
    // Sat, 21 Nov 2026 06:32:50.397831 GMT (0x660c387a61207 µs), requested
    // minutes later.
    const MTIME_US: i64 = 0x660c387a61207;

    fn file(content: &[u8], mtime_us: i64) -> StaticFile {
        let mut f = crate::http::digest::tests::tempfile();
        f.write_all(content).unwrap();
        StaticFile {
            file: Arc::new(f),
            stamp: FileStamp {
                size: content.len() as u64,
                mtime_us,
                inode: 42,
            },
            content: None,
        }
    }

    fn request<'a>(
        method: &'a str,
        headers: &'a Headers,
        f: Option<&StaticFile>,
    ) -> FileRequest<'a> {
        let later = MTIME_US + 300_000_000;
        FileRequest {
            method,
            headers,
            held_range: None,
            status_so_far: 200,
            file: f.cloned(),
            content_type: Some("text/html"),
            content_encoding: None,
            content_language: None,
            etag_bits: 0,
            vlist_validator: None,
            content_md5: false,
            no_local_copy: false,
            request_time_us: later,
            now_us: later,
            trace_enabled: true,
            range_limits: RangeLimits::default(),
            boundary: "85080d4f00920290",
        }
    }

    fn response(o: Result<Response, Refusal>) -> Response {
        o.expect("a response")
    }

    fn refused(o: Result<Response, Refusal>) -> u16 {
        o.expect_err("a refusal").status
    }

    fn headers(r: &Response) -> Vec<(&str, &str)> {
        r.headers
            .iter()
            .map(|(n, v)| (n.as_ref(), v.as_str()))
            .collect()
    }

    fn hs(list: &[(&str, &str)]) -> Headers {
        let mut h = Headers::new();
        for (n, v) in list {
            h.push(n.to_string(), v.to_string());
        }
        h
    }

    const LM: (&str, &str) = ("Last-Modified", "Sat, 21 Nov 2026 06:32:50 GMT");
    const ET: (&str, &str) = ("ETag", "\"c-660c387a61207\"");
    const AR: (&str, &str) = ("Accept-Ranges", "bytes");

    #[test]
    fn get_and_head() {
        // Observed with Apache 2.4.71: GET /a.html ("hello world\n").
        let f = file(b"hello world\n", MTIME_US);
        let h = Headers::new();
        let r = response(serve(&request("GET", &h, Some(&f))));
        assert_eq!(r.status, 200);
        assert_eq!(
            headers(&r),
            [
                LM,
                ET,
                AR,
                ("Content-Length", "12"),
                ("Content-Type", "text/html")
            ]
        );
        assert_eq!(r.body.to_vec().unwrap(), b"hello world\n");
        // HEAD: same headers, no body. POST: served like GET.
        let r = response(serve(&request("HEAD", &h, Some(&f))));
        assert_eq!(
            headers(&r),
            [
                LM,
                ET,
                AR,
                ("Content-Length", "12"),
                ("Content-Type", "text/html")
            ]
        );
        assert!(r.body.is_empty());
        let r = response(serve(&request("POST", &h, Some(&f))));
        assert_eq!(r.status, 200);
        assert_eq!(r.body.len(), 12);
    }

    #[test]
    fn no_type_and_empty_file() {
        // Observed with Apache 2.4.71: a file with an unknown extension has
        // no Content-Type; HEAD of an empty file has no Content-Length.
        let f = file(b"xyz", MTIME_US);
        let h = Headers::new();
        let mut q = request("GET", &h, Some(&f));
        q.content_type = None;
        let r = response(serve(&q));
        assert_eq!(
            headers(&r),
            [
                LM,
                ("ETag", "\"3-660c387a61207\""),
                AR,
                ("Content-Length", "3")
            ]
        );
        let e = file(b"", MTIME_US);
        let mut q = request("HEAD", &h, Some(&e));
        q.content_type = Some("text/plain");
        let r = response(serve(&q));
        assert_eq!(
            headers(&r),
            [
                LM,
                ("ETag", "\"0-660c387a61207\""),
                AR,
                ("Content-Type", "text/plain")
            ]
        );
        // GET of the empty file with a Range: plain 200, Content-Length: 0.
        let rh = hs(&[("Range", "bytes=0-1")]);
        let mut q = request("GET", &rh, Some(&e));
        q.content_type = Some("text/plain");
        let r = response(serve(&q));
        assert_eq!(r.status, 200);
        assert_eq!(r.header("Content-Length"), Some("0"));
    }

    #[test]
    fn methods() {
        // Observed with Apache 2.4.71 against /a.html and /missing.html.
        let f = file(b"hello world\n", MTIME_US);
        let h = Headers::new();
        for target in [Some(&f), None] {
            let r = response(serve(&request("OPTIONS", &h, target)));
            assert_eq!(r.status, 200);
            assert_eq!(
                headers(&r),
                [
                    ("Allow", "GET,POST,OPTIONS,HEAD,TRACE"),
                    ("Content-Length", "0"),
                    ("Content-Type", "text/html")
                ]
            );
            for m in ["PUT", "DELETE", "PATCH", "PROPFIND"] {
                assert_eq!(refused(serve(&request(m, &h, target))), 405, "{m}");
            }
            for m in ["FOO", "get", "Head"] {
                assert_eq!(refused(serve(&request(m, &h, target))), 501, "{m}");
            }
        }
        for m in ["GET", "HEAD", "POST"] {
            assert_eq!(refused(serve(&request(m, &h, None))), 404);
        }
        let mut q = request("PUT", &h, None);
        q.trace_enabled = false;
        assert_eq!(
            serve(&q).unwrap_err(),
            Refusal {
                status: 405,
                allow: "GET,POST,OPTIONS,HEAD"
            }
        );
    }

    #[test]
    fn conditionals() {
        // Observed with Apache 2.4.71: 304 keeps Last-Modified, ETag,
        // Accept-Ranges; 412 is an empty response with Content-Length: 0 and
        // the file's type.
        let f = file(b"hello world\n", MTIME_US);
        let h = hs(&[("If-None-Match", "\"c-660c387a61207\"")]);
        let r = response(serve(&request("GET", &h, Some(&f))));
        assert_eq!(r.status, 304);
        assert_eq!(headers(&r), [LM, ET, AR]);
        assert!(r.body.is_empty());
        let h = hs(&[("If-Match", "\"x\"")]);
        let r = response(serve(&request("GET", &h, Some(&f))));
        assert_eq!(r.status, 412);
        assert_eq!(
            headers(&r),
            [
                LM,
                ET,
                AR,
                ("Content-Length", "0"),
                ("Content-Type", "text/html")
            ]
        );
        assert!(r.body.is_empty());
        // Observed with Apache 2.4.71: HEAD with a failing If-Match keeps the
        // file's length (Content-Length: 36 for a 36-byte file).
        let r = response(serve(&request("HEAD", &h, Some(&f))));
        assert_eq!(
            headers(&r),
            [
                LM,
                ET,
                AR,
                ("Content-Length", "12"),
                ("Content-Type", "text/html")
            ]
        );
        let h = hs(&[("If-None-Match", "\"c-660c387a61207\"")]);
        let r = response(serve(&request("POST", &h, Some(&f))));
        assert_eq!(r.status, 412);
    }

    #[test]
    fn ranges() {
        // Observed with Apache 2.4.71 on r.txt (36 bytes).
        let f = file(b"0123456789abcdefghijklmnopqrstuvwxyz", MTIME_US);
        let h = hs(&[("Range", "bytes=1-3")]);
        let mut q = request("GET", &h, Some(&f));
        q.content_type = Some("text/plain");
        let r = response(serve(&q));
        assert_eq!(r.status, 206);
        assert_eq!(
            headers(&r),
            [
                LM,
                ("ETag", "\"24-660c387a61207\""),
                AR,
                ("Content-Length", "3"),
                ("Content-Range", "bytes 1-3/36"),
                ("Content-Type", "text/plain")
            ]
        );
        assert_eq!(r.body.to_vec().unwrap(), b"123");
        // HEAD and POST with a Range: 206 as well (HEAD with 0-0,2-3:
        // Content-Length 185, the multipart length).
        q.method = "HEAD";
        let r = response(serve(&q));
        assert_eq!(
            (r.status, r.header("Content-Length"), r.body.len()),
            (206, Some("3"), 0)
        );
        q.method = "POST";
        assert_eq!(response(serve(&q)).status, 206);
        let h2 = hs(&[("Range", "bytes=0-0,2-3")]);
        let mut q2 = request("HEAD", &h2, Some(&f));
        q2.content_type = Some("text/plain");
        assert_eq!(response(serve(&q2)).header("Content-Length"), Some("185"));
        // Unsatisfiable → 416 error.
        let h = hs(&[("Range", "bytes=40-50")]);
        assert_eq!(refused(serve(&request("GET", &h, Some(&f)))), 416);
        // Multipart, with Content-MD5 of the whole file kept (observed:
        // ContentDigest On keeps the full file's Content-MD5 on 206 and 304).
        let h = hs(&[("Range", "bytes=0-0,2-3")]);
        let mut q = request("GET", &h, Some(&f));
        q.content_type = Some("text/plain");
        q.content_md5 = true;
        let r = response(serve(&q));
        assert_eq!(r.header("Content-Length"), Some("185"));
        assert_eq!(
            r.header("Content-Type"),
            Some("multipart/byteranges; boundary=85080d4f00920290")
        );
        assert!(r.header("Content-MD5").is_some());
    }

    #[test]
    fn encoding_and_language() {
        // Observed with Apache 2.4.71: x.en.fr.html.gz under AddLanguage en
        // .en, AddLanguage fr .fr, AddEncoding x-gzip .gz: Content-Type,
        // Content-Encoding, Content-Language last, in that order, on 200,
        // 206, 412 and OPTIONS; none of them on 304.
        let f = file(b"hello", MTIME_US);
        let h = Headers::new();
        let mut q = request("GET", &h, Some(&f));
        q.content_type = Some("application/gzip");
        q.content_encoding = Some("x-gzip");
        q.content_language = Some("en,fr");
        let tail = [
            ("Content-Type", "application/gzip"),
            ("Content-Encoding", "x-gzip"),
            ("Content-Language", "en,fr"),
        ];
        let r = response(serve(&q));
        assert_eq!(headers(&r)[4..], tail);
        let r = response(serve(&FileRequest {
            method: "OPTIONS",
            ..q.clone()
        }));
        assert_eq!(headers(&r)[2..], tail);
        let h = hs(&[("If-Match", "\"q\"")]);
        let r = response(serve(&FileRequest {
            headers: &h,
            ..q.clone()
        }));
        assert_eq!((r.status, &headers(&r)[4..]), (412, &tail[..]));
        let h = hs(&[("If-None-Match", "\"5-660c387a61207\"")]);
        let r = response(serve(&FileRequest {
            headers: &h,
            ..q.clone()
        }));
        assert_eq!(r.status, 304);
        assert_eq!(headers(&r), [LM, ("ETag", "\"5-660c387a61207\""), AR]);
        let h = hs(&[("Range", "bytes=0-1,3-3")]);
        let r = response(serve(&FileRequest {
            headers: &h,
            ..q.clone()
        }));
        assert_eq!(r.header("Content-Length"), Some("195"));
        assert_eq!(
            headers(&r)[5..],
            [
                ("Content-Encoding", "x-gzip"),
                ("Content-Language", "en,fr")
            ]
        );
    }

    #[test]
    fn digest_headers() {
        // Observed with Apache 2.4.71 (ContentDigest On, fresh file):
        // ETag: W/"c-660c393d1866c", Content-MD5: b1kCrCNwJL3QwXbLkwY9xA==
        // between Content-Length and Content-Type.
        let f = file(b"hello world\n", 0x660c393d1866c);
        let h = Headers::new();
        let mut q = request("GET", &h, Some(&f));
        q.content_type = Some("text/plain");
        q.content_md5 = true;
        q.request_time_us = 0x660c393d1866c + 200_000;
        q.now_us = q.request_time_us;
        let r = response(serve(&q));
        assert_eq!(
            headers(&r),
            [
                ("Last-Modified", "Sat, 21 Nov 2026 06:36:15 GMT"),
                ("ETag", "W/\"c-660c393d1866c\""),
                AR,
                ("Content-Length", "12"),
                ("Content-MD5", "b1kCrCNwJL3QwXbLkwY9xA=="),
                ("Content-Type", "text/plain")
            ]
        );
        let mut q = request("GET", &h, Some(&f));
        q.etag_bits = ETAG_NONE;
        assert_eq!(response(serve(&q)).header("ETag"), None);
    }

    #[test]
    fn future_mtime() {
        // Observed with Apache 2.4.71: a file dated 2030 requested at
        // 06:35:39 → Last-Modified: Sat, 21 Nov 2026 06:35:39 GMT,
        // ETag: W/"24-6ba1694472000".
        let f = file(b"0123456789abcdefghijklmnopqrstuvwxyz", 0x6ba1694472000);
        let h = Headers::new();
        let mut q = request("GET", &h, Some(&f));
        q.request_time_us = 1_795_242_939_000_000 + 120_000;
        q.now_us = 1_795_242_939_000_000 + 130_000;
        let r = response(serve(&q));
        assert_eq!(
            r.header("Last-Modified"),
            Some("Sat, 21 Nov 2026 06:35:39 GMT")
        );
        assert_eq!(r.header("ETag"), Some("W/\"24-6ba1694472000\""));
    }

    #[test]
    fn accept_ranges_none() {
        let f = file(b"hello world\n", MTIME_US);
        let h = hs(&[("Range", "bytes=0-1")]);
        let mut q = request("GET", &h, Some(&f));
        q.range_limits.max_ranges = Some(0);
        let r = response(serve(&q));
        assert_eq!((r.status, r.header("Accept-Ranges")), (200, Some("none")));
    }

    #[test]
    fn static_file_from_fd() {
        let f = file(b"abc", MTIME_US);
        let s = StaticFile::new(f.file.clone()).unwrap();
        assert_eq!(s.stamp.size, 3);
    }
}
