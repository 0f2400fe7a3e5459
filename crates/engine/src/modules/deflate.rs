//! mod_deflate: the `DEFLATE` output filter and its server settings.
//!
//! Whether a response is compressed is decided the way mod_deflate decides
//! it, in its order, because each early exit leaves a different trace: a
//! body of 68 bytes or less, a sub-request, a 204, `no-gzip`, a
//! `Content-Range`, `gzip-only-text/html` leave no `Vary`; an existing
//! `Content-Encoding` neither; from then on `Vary: Accept-Encoding` is
//! added whether or not the client takes gzip. The client must name
//! `gzip` (any case) in `Accept-Encoding`, and a `q` written `q=0`,
//! `q=0.0`, `q=0.00` or `q=0.000` refuses it (Apache's literal test).
//! Compressing sets `Content-Encoding: gzip`, recomputes the length, drops
//! `Content-MD5` and appends `-gzip` inside the `ETag`.
//!
//! The bytes are Apache's own (see [`zlib`]). When Apache would have sent
//! compressed data before reaching the end of the body, it has no
//! `Content-Length` to give: the response goes out chunked (or delimited
//! by the close for HTTP/1.0), and a `HEAD` gets no length at all.
//!
//! Where the filter is inserted (`SetOutputFilter`, `AddOutputFilter`,
//! `AddOutputFilterByType`) is mod_filter's and the core's business
//! (`super::filter`); this module only compresses.
//!
//! Bodies are compressed in memory; a body larger than [`MAX_INPUT`] is
//! sent uncompressed (docs/deviations.md).

pub mod zlib;

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::http::{Body, BodyPart, Response};
use crate::registry::{Args, Directive, Module, Run, OR_ALL, RSRC_CONF};
use crate::request::Ctx;
use std::os::unix::fs::FileExt;

/// Largest body htaccel compresses.
pub const MAX_INPUT: u64 = 64 << 20;

/// Apache's bucket size for file reads through mmap (`APR_MMAP_LIMIT`).
const READ_CHUNK: usize = 4 << 20;

/// Bodies up to this size are never compressed: the gzip header and
/// trailer plus the headers it adds would outweigh any gain.
const SMALL: u64 = 10 + 8 + 50;

/// `DeflateAlterETag`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AlterEtag {
    #[default]
    AddSuffix,
    NoChange,
    Remove,
}

/// Server-level settings. They can only be written at server level, so
/// they live in the server's base per-directory configuration.
#[derive(Clone, Debug, Default)]
pub struct DeflateDir {
    pub level: Option<i32>,
    pub window_bits: Option<i32>,
    pub mem_level: Option<i32>,
    pub buffer_size: Option<usize>,
    pub alter_etag: Option<AlterEtag>,
    /// `DeflateFilterNote`.
    pub notes: FilterNotes,
}

/// `DeflateFilterNote` and `BrotliFilterNote`: the names of the request
/// notes (`%{name}n` in an access log) for the input size, the output size
/// and the ratio of a compressed answer.
#[derive(Clone, Debug, Default)]
pub struct FilterNotes {
    pub input: Option<String>,
    pub output: Option<String>,
    pub ratio: Option<String>,
}

impl FilterNotes {
    pub fn merge(base: &FilterNotes, new: &FilterNotes) -> FilterNotes {
        FilterNotes {
            input: new.input.clone().or_else(|| base.input.clone()),
            output: new.output.clone().or_else(|| base.output.clone()),
            ratio: new.ratio.clone().or_else(|| base.ratio.clone()),
        }
    }

    /// `NOTE [Input|Output|Ratio] name` (one word: the ratio's name);
    /// `false` for another kind, which the module words as its error.
    pub(crate) fn set(&mut self, words: &[String]) -> bool {
        let Some(name) = words.get(1) else {
            self.ratio = Some(words[0].clone());
            return true;
        };
        let slot = match words[0].to_ascii_lowercase().as_str() {
            "ratio" => &mut self.ratio,
            "input" => &mut self.input,
            "output" => &mut self.output,
            _ => return false,
        };
        *slot = Some(name.clone());
        true
    }

    /// The notes of one answer: the input size, the output size, the ratio,
    /// as the module words them.
    pub(crate) fn write(&self, ctx: &mut Ctx<'_>, values: [String; 3]) {
        for (name, value) in [&self.input, &self.output, &self.ratio]
            .into_iter()
            .zip(values)
        {
            if let Some(name) = name {
                ctx.notes.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
                ctx.notes.push((name.clone(), value));
            }
        }
    }
}

impl DeflateDir {
    pub fn merge(base: &DeflateDir, new: &DeflateDir) -> DeflateDir {
        DeflateDir {
            level: new.level.or(base.level),
            window_bits: new.window_bits.or(base.window_bits),
            mem_level: new.mem_level.or(base.mem_level),
            buffer_size: new.buffer_size.or(base.buffer_size),
            alter_etag: new.alter_etag.or(base.alter_etag),
            notes: FilterNotes::merge(&base.notes, &new.notes),
        }
    }

    fn params(&self) -> zlib::Params {
        let d = zlib::Params::default();
        zlib::Params {
            level: self.level.unwrap_or(d.level),
            window_bits: self.window_bits.unwrap_or(d.window_bits),
            mem_level: self.mem_level.unwrap_or(d.mem_level),
            buffer_size: self.buffer_size.unwrap_or(d.buffer_size),
        }
    }
}

// ---------------------------------------------------------------------------
// Configuration

/// C's `atoi`: optional sign and digits after leading blanks, else 0.
pub(crate) fn atoi(s: &str) -> i64 {
    let t = s.trim_start();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut v: i64 = 0;
    for c in digits.bytes().take_while(u8::is_ascii_digit) {
        v = (v * 10 + i64::from(c - b'0')).min(i64::from(i32::MAX) + 1);
    }
    if neg {
        -v
    } else {
        v
    }
}

/// A numeric setting read with `atoi` and refused outside `lo..=hi` with
/// the module's message (mod_deflate's and mod_brotli's checks).
pub(crate) fn in_range(inv: &Invocation<'_>, lo: i64, hi: i64, msg: &str) -> Result<i32, String> {
    let i = atoi(&inv.words[0]);
    if i < lo || i > hi {
        return Err(msg.to_string());
    }
    Ok(i as i32)
}

/// `DeflateFilterNote [Input|Output|Ratio] name`: request notes for the
/// access log (`%{name}n`).
fn run_note(_w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    if !c.deflate.notes.set(&inv.words) {
        return Err(format!("Unknown note type {}", inv.words[0]));
    }
    Ok(())
}

/// The input-side settings configure the `DEFLATE` input filter, which
/// htaccel does not have (`SetInputFilter` is refused); Apache's checks
/// still apply.
fn run_inflate_setting(
    _w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    let arg = &inv.words[0];
    if inv
        .name
        .eq_ignore_ascii_case("DeflateInflateLimitRequestBody")
    {
        // apr_strtoff: blanks, a sign, digits; only an overflow fails it.
        let t = arg.trim_start();
        let (neg, rest) = match t.as_bytes().first() {
            Some(b'-') => (true, &t[1..]),
            Some(b'+') => (false, &t[1..]),
            _ => (false, t),
        };
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if rest[..digits].parse::<i64>().is_err() && digits > 0 {
            return Err("DeflateInflateLimitRequestBody is not parsable.".into());
        }
        let value = rest[..digits].parse::<i64>().unwrap_or(0);
        if digits < rest.len() || digits == 0 && !t.is_empty() || (neg && value > 0) {
            return Err("DeflateInflateLimitRequestBody requires a non-negative integer.".into());
        }
        return Ok(());
    }
    if atoi(arg) <= 0 {
        return Err(format!("{} must be positive", inv.name_canonical()));
    }
    Ok(())
}

/// Canonical names for the messages of the two ratio settings.
trait Canonical {
    fn name_canonical(&self) -> &'static str;
}

impl Canonical for Invocation<'_> {
    fn name_canonical(&self) -> &'static str {
        if self.name.eq_ignore_ascii_case("DeflateInflateRatioLimit") {
            "DeflateInflateRatioLimit"
        } else {
            "DeflateInflateRatioBurst"
        }
    }
}

pub static DIRECTIVES: &[Directive] = &[
    Directive {
        name: "DeflateFilterNote",
        args: Args::Take12,
        req_override: RSRC_CONF,
        about: "Set a note to report on compression ratio",
        run: Run::Handler(run_note),
    },
    Directive {
        name: "DeflateWindowSize",
        args: Args::Take1,
        req_override: RSRC_CONF,
        about: "Set the Deflate window size (1-15)",
        run: Run::Handler(|_w, inv, c| {
            let v = in_range(inv, 1, 15, "DeflateWindowSize must be between 1 and 15")?;
            c.deflate.window_bits = Some(v);
            Ok(())
        }),
    },
    Directive {
        name: "DeflateBufferSize",
        args: Args::Take1,
        req_override: RSRC_CONF,
        about: "Set the Deflate Buffer Size",
        run: Run::Handler(|_w, inv, c| {
            let v = in_range(
                inv,
                1,
                i64::from(i32::MAX),
                "DeflateBufferSize should be positive",
            )?;
            // A bounded buffer: Apache allocates it per response too.
            c.deflate.buffer_size = Some((v as usize).min(1 << 24));
            Ok(())
        }),
    },
    Directive {
        name: "DeflateMemLevel",
        args: Args::Take1,
        req_override: RSRC_CONF,
        about: "Set the Deflate Memory Level (1-9)",
        run: Run::Handler(|_w, inv, c| {
            let v = in_range(inv, 1, 9, "DeflateMemLevel must be between 1 and 9")?;
            c.deflate.mem_level = Some(v);
            Ok(())
        }),
    },
    Directive {
        name: "DeflateCompressionLevel",
        args: Args::Take1,
        req_override: RSRC_CONF,
        about: "Set the Deflate Compression Level (1-9)",
        run: Run::Handler(|_w, inv, c| {
            let v = in_range(inv, 1, 9, "Compression Level must be between 1 and 9")?;
            c.deflate.level = Some(v);
            Ok(())
        }),
    },
    Directive {
        name: "DeflateInflateLimitRequestBody",
        args: Args::Take1,
        req_override: OR_ALL,
        about: "Set a limit on size of inflated input",
        run: Run::Handler(run_inflate_setting),
    },
    Directive {
        name: "DeflateInflateRatioLimit",
        args: Args::Take1,
        req_override: OR_ALL,
        about: "Set the inflate ratio limit above which inflation is aborted (default: 200)",
        run: Run::Handler(run_inflate_setting),
    },
    Directive {
        name: "DeflateInflateRatioBurst",
        args: Args::Take1,
        req_override: OR_ALL,
        about: "Set the maximum number of following inflate ratios above limit (default: 3)",
        run: Run::Handler(run_inflate_setting),
    },
    Directive {
        name: "DeflateAlterEtag",
        args: Args::Take1,
        req_override: RSRC_CONF,
        about: "Set how mod_deflate should modify ETAG response headers: 'AddSuffix' (default), 'NoChange' (2.2.x behavior), 'Remove'",
        run: Run::Handler(|_w, inv, c| {
            c.deflate.alter_etag = Some(match inv.words[0].to_ascii_lowercase().as_str() {
                "nochange" => AlterEtag::NoChange,
                "addsuffix" => AlterEtag::AddSuffix,
                "remove" => AlterEtag::Remove,
                _ => {
                    return Err(
                        "DeflateAlterETAG accepts only 'NoChange', 'AddSuffix', and 'Remove'"
                            .into(),
                    )
                }
            });
            Ok(())
        }),
    },
];

pub static MODULE: Module = Module {
    source: "mod_deflate.c",
    identifier: "deflate_module",
    builtin: false,
    directives: DIRECTIVES,
};

// ---------------------------------------------------------------------------
// Requests

fn header<'r>(resp: &'r Response, name: &str) -> Option<&'r str> {
    resp.header(name)
}

/// `ap_get_token` as mod_deflate and mod_brotli walk `Accept-Encoding`:
/// the first token named `coding` (any case) and the `q` parameter
/// written after it, if any. `None` when no such token; `Some(None)` when
/// it has no parameter.
fn coding_token<'a>(accepts: &'a str, coding: &str) -> Option<Option<&'a str>> {
    let b = accepts.as_bytes();
    let mut i = 0;
    // ap_get_token: skip blanks, read to a separator (`;` or `,`, and
    // blanks unless inside quotes), trim trailing blanks.
    let token = |i: &mut usize, accept_white: bool| -> (usize, usize) {
        while *i < b.len() && (b[*i] == b' ' || b[*i] == b'\t') {
            *i += 1;
        }
        let start = *i;
        let mut in_quotes = false;
        while *i < b.len() {
            let c = b[*i];
            if c == b'"' {
                in_quotes = !in_quotes;
            } else if !in_quotes
                && (c == b';' || c == b',' || (!accept_white && (c == b' ' || c == b'\t')))
            {
                break;
            }
            *i += 1;
        }
        let mut end = *i;
        while end > start && (b[end - 1] == b' ' || b[end - 1] == b'\t') {
            end -= 1;
        }
        // The rest continues after blanks.
        while *i < b.len() && (b[*i] == b' ' || b[*i] == b'\t') {
            *i += 1;
        }
        (start, end)
    };
    let (mut s, mut e) = token(&mut i, false);
    loop {
        if s == e {
            return None;
        }
        if accepts[s..e].eq_ignore_ascii_case(coding) {
            break;
        }
        while i < b.len() && b[i] == b';' {
            i += 1;
            token(&mut i, true);
        }
        if i < b.len() && b[i] == b',' {
            i += 1;
        }
        if i >= b.len() {
            return None;
        }
        (s, e) = token(&mut i, false);
    }
    if i >= b.len() {
        return Some(None);
    }
    while i < b.len() && b[i] == b';' {
        i += 1;
    }
    let (qs, qe) = token(&mut i, true);
    Some(Some(&accepts[qs..qe]))
}

/// Whether `Accept-Encoding` lets mod_deflate send gzip.
pub fn accepts_gzip(accept_encoding: Option<&str>) -> bool {
    accepts_coding(accept_encoding, "gzip")
}

/// Whether `Accept-Encoding` names `coding` without refusing it with a
/// `q` written as zero (Apache's literal test, shared by mod_deflate and
/// mod_brotli).
pub(crate) fn accepts_coding(accept_encoding: Option<&str>, coding: &str) -> bool {
    let Some(a) = accept_encoding else {
        return false;
    };
    match coding_token(a, coding) {
        None => false,
        Some(None) => true,
        Some(Some(q)) => !(q.len() >= 3 && "q=0.000".starts_with(q)),
    }
}

/// The encodings a response already has, as mod_deflate and mod_brotli
/// read them.
pub(crate) fn existing_encoding(ctx: &Ctx<'_>, resp: &Response) -> Option<String> {
    let out = header(resp, "Content-Encoding").map(str::to_string);
    let err = ctx
        .err_headers_out
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("Content-Encoding"))
        .map(|(_, v)| v.clone());
    match (out, err) {
        (Some(o), Some(e)) => Some(format!("{o},{e}")),
        (o, e) => o.or(e),
    }
}

/// Every token is one of the identity codings mod_negotiation knows.
pub(crate) fn only_identity(encoding: &str) -> bool {
    encoding
        .split([',', ';'])
        .map(|t| t.trim_matches([' ', '\t']))
        .filter(|t| !t.is_empty())
        .all(|t| matches!(t, "identity" | "7bit" | "8bit" | "binary"))
}

/// `apr_table_mergen`: `, value` after the first entry, or a new entry.
pub(crate) fn merge_header(resp: &mut Response, name: &str, value: &str) {
    match resp
        .headers
        .iter_mut()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
    {
        Some((_, v)) => {
            v.push_str(", ");
            v.push_str(value);
        }
        None => table_add(resp, name, value.to_string()),
    }
}

/// `apr_table_addn` on `headers_out`, as it reaches the wire: before the
/// content type, which Apache's header filter writes after the whole table
/// (`r->content_type`). So a compressed answer ends `Vary`,
/// `Content-Encoding`, `Content-Length`, `Content-Type`, as Apache's does.
fn table_add(resp: &mut Response, name: &str, value: String) {
    let at = resp
        .headers
        .iter()
        .position(|(n, _)| n.eq_ignore_ascii_case("Content-Type"))
        .unwrap_or(resp.headers.len());
    resp.headers.insert(at, (name.to_string().into(), value));
}

/// `apr_table_setn`: the first entry takes the value where it stands and
/// the others go; without one, a new entry ([`table_add`]).
pub(crate) fn table_set(resp: &mut Response, name: &str, value: String) {
    let mut found = false;
    resp.headers.retain_mut(|(n, v)| {
        if !n.eq_ignore_ascii_case(name) {
            return true;
        }
        if found {
            return false;
        }
        found = true;
        v.clone_from(&value);
        true
    });
    if !found {
        table_add(resp, name, value);
    }
}

/// A compressor fed as a filter is: bucket by bucket, noting whether it
/// passed output on before the end of the body.
pub(crate) trait Encoder {
    fn write(&mut self, data: &[u8]) -> Result<(), String>;
    /// Output went down the chain before the end: the response's head
    /// left without a length.
    fn passed_early(&self) -> bool;
    /// A `FLUSH` bucket: everything the encoder holds goes on.
    fn flush(&mut self) -> Result<(), String>;
}

impl Encoder for zlib::Encoder {
    fn write(&mut self, data: &[u8]) -> Result<(), String> {
        zlib::Encoder::write(self, data)
    }

    fn passed_early(&self) -> bool {
        zlib::Encoder::passed_early(self)
    }

    fn flush(&mut self) -> Result<(), String> {
        zlib::Encoder::flush(self);
        Ok(())
    }
}

/// The body as Apache's buckets deliver it to a content filter: each part
/// held in memory at once, a file in mmap-sized pieces. `each` says whether
/// to stop.
pub(crate) fn for_each_bucket(
    body: &Body,
    mut each: impl FnMut(&[u8]) -> Result<bool, String>,
) -> Result<(), String> {
    for part in &body.parts {
        match part {
            BodyPart::Bytes(b) => {
                if each(b)? {
                    return Ok(());
                }
            }
            BodyPart::File { file, offset, len } => {
                let mut buf = vec![0u8; (*len).min(READ_CHUNK as u64) as usize];
                let mut done = 0u64;
                while done < *len {
                    let n = (*len - done).min(buf.len() as u64) as usize;
                    file.read_exact_at(&mut buf[..n], offset + done)
                        .map_err(|e| format!("reading the response body: {e}"))?;
                    done += n as u64;
                    if each(&buf[..n])? {
                        return Ok(());
                    }
                }
            }
        }
    }
    Ok(())
}

/// A compressor fed bucket by bucket, with a `FLUSH` after each offset of
/// `flushes` (what an earlier filter sent, [`Ctx::flushes`]); with
/// `stop_early`, only until output was passed on.
pub(crate) fn feed(
    body: &Body,
    flushes: &[u64],
    enc: &mut impl Encoder,
    stop_early: bool,
) -> Result<(), String> {
    let mut at = 0u64;
    let mut next_flush = flushes.iter().copied().peekable();
    for_each_bucket(body, |mut bucket| {
        while let Some(&flush) = next_flush.peek() {
            let before = flush.saturating_sub(at);
            if before > bucket.len() as u64 {
                break;
            }
            let (now, rest) = bucket.split_at(before as usize);
            if !now.is_empty() {
                enc.write(now)?;
            }
            enc.flush()?;
            at += now.len() as u64;
            bucket = rest;
            next_flush.next();
        }
        enc.write(bucket)?;
        at += bucket.len() as u64;
        Ok(stop_early && enc.passed_early())
    })
}

/// The `DEFLATE` filter on a response (`deflate_out_filter`). A `HEAD`
/// response must carry the body here, as Apache's brigade does.
pub fn compress(ctx: &mut Ctx<'_>, resp: &mut Response) {
    let head = ctx.method == "HEAD";
    let len = resp.body.len();
    // mod_deflate skips a small body only when it sees all of it at once.
    if len <= SMALL && resp.arrival == crate::http::Arrival::Whole {
        return;
    }
    if ctx.is_subreq
        || resp.status == 204
        || ctx.env.contains("no-gzip")
        || header(resp, "Content-Range").is_some()
    {
        return;
    }
    let is_html = header(resp, "Content-Type").is_some_and(|t| t.starts_with("text/html"));
    if !is_html && ctx.env.get("gzip-only-text/html") == Some("1") {
        return;
    }
    let encoding = existing_encoding(ctx, resp);
    if encoding.as_deref().is_some_and(|e| !only_identity(e)) {
        return;
    }
    merge_header(resp, "Vary", "Accept-Encoding");
    if !ctx.env.contains("force-gzip") {
        if ctx.accept_encoding_hidden_at_first_pass {
            return;
        }
        let ae = ctx.headers_in.get_joined("Accept-Encoding");
        let ae = ae.as_deref().map(String::from_utf8_lossy);
        if !accepts_gzip(ae.as_deref()) {
            return;
        }
    }
    if len > MAX_INPUT {
        return;
    }
    let conf = ctx.conf.deflate.clone();
    let Some(mut enc) = zlib::Encoder::new(&conf.params()) else {
        ctx.log_error(
            "error",
            "deflate",
            &format!(
                "AH01383: unable to init Zlib: deflateInit2 returned -2: URL {}",
                ctx.uri
            ),
        );
        return;
    };
    let flushes = std::mem::take(&mut ctx.flushes);
    if let Err(e) = feed(&resp.body, &flushes, &mut enc, head) {
        ctx.site
            .log
            .error("error", "deflate", Some(ctx.req.remote()), &e);
        return;
    }
    let early = enc.passed_early();
    let gz = if head && early {
        None
    } else {
        Some(enc.finish())
    };
    encoded_as(
        resp,
        encoding.as_deref(),
        "gzip",
        conf.alter_etag.unwrap_or_default(),
    );
    let Some(gz) = gz else {
        // A HEAD whose length Apache could not learn: no length at all.
        resp.body = Body::empty();
        return;
    };
    // The deflate stream alone, without mod_deflate's header and trailer.
    let stream = (gz.bytes.len() - zlib::GZIP_HEADER.len() - 8) as u64;
    set_notes(ctx, &conf, len, stream);
    set_filtered_body(ctx, resp, gz.bytes, early);
}

/// The headers of an answer a content filter encodes with `coding`:
/// `Content-Encoding` (replacing `identity`, else added to the codings
/// there), no `Content-Length` nor `Content-MD5`, and the `ETag` as
/// `*AlterETag` says (the suffix `-coding` inside its closing quote).
pub(crate) fn encoded_as(
    resp: &mut Response,
    encoding: Option<&str>,
    coding: &str,
    etag: AlterEtag,
) {
    match encoding {
        Some(e) if !e.eq_ignore_ascii_case("identity") => {
            merge_header(resp, "Content-Encoding", coding)
        }
        _ => table_set(resp, "Content-Encoding", coding.to_string()),
    }
    resp.remove_header("Content-Length");
    resp.remove_header("Content-MD5");
    match etag {
        AlterEtag::NoChange => {}
        AlterEtag::Remove => resp.remove_header("ETag"),
        AlterEtag::AddSuffix => {
            if let Some((_, v)) = resp
                .headers
                .iter_mut()
                .find(|(n, _)| n.eq_ignore_ascii_case("ETag"))
            {
                if v.len() > 2 && v.ends_with('"') {
                    v.insert_str(v.len() - 1, &format!("-{coding}"));
                }
            }
        }
    }
}

/// A content filter's output in place of the answer's body, framed as
/// Apache framed it: chunked when output went on before the end
/// (`early`), else with its length.
pub(crate) fn set_filtered_body(ctx: &Ctx<'_>, resp: &mut Response, bytes: Vec<u8>, early: bool) {
    let out_len = bytes.len();
    resp.body = Body::bytes(bytes);
    if early {
        // Apache had no length when the headers went out.
        resp.set_header("Transfer-Encoding", "chunked");
    } else {
        if ctx.body_passed_unflushed {
            // The filter held everything it was given until the end.
            resp.remove_header("Transfer-Encoding");
        }
        table_set(resp, "Content-Length", out_len.to_string());
    }
}

/// `DeflateFilterNote`: sizes and ratio for the access log, `-` for a
/// size of 0 (and for the ratio of an empty body).
fn set_notes(ctx: &mut Ctx<'_>, conf: &DeflateDir, input: u64, output: u64) {
    let or_dash = |n: u64, v: String| if n > 0 { v } else { "-".to_string() };
    let ratio = (output * 100).checked_div(input).unwrap_or(0).to_string();
    conf.notes.write(
        ctx,
        [
            or_dash(input, input.to_string()),
            or_dash(output, output.to_string()),
            or_dash(input, ratio),
        ],
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_encoding_as_apache_reads_it() {
        for (ae, ok) in [
            ("gzip", true),
            ("GZIP", true),
            ("gzip;q=0", false),
            ("gzip; q=0", false),
            ("gzip;q=0.0", false),
            ("gzip;q=0.000", false),
            ("gzip;q=0.0000", true),
            ("gzip;q=0.001", true),
            ("gzip;Q=0", true),
            ("gzip;q=", true),
            ("deflate", false),
            ("x-gzip", false),
            ("*", false),
            ("", false),
            ("deflate;q=1, gzip;q=0.5", true),
            ("identity;q=0, gzip ;q=1", true),
            ("br, gzip", true),
            ("br;q=1;level=2, gzip;q=0", false),
            ("gzip, deflate", true),
            ("deflate , gzip", true),
        ] {
            assert_eq!(accepts_gzip(Some(ae)), ok, "{ae:?}");
        }
        assert!(!accepts_gzip(None));
    }

    #[test]
    fn identity_codings() {
        assert!(only_identity("identity"));
        assert!(only_identity("7bit, binary"));
        assert!(!only_identity("gzip"));
        assert!(!only_identity("identity,x-compress"));
    }

    #[test]
    fn atoi_like_c() {
        assert_eq!(atoi("9"), 9);
        assert_eq!(atoi(" 12x"), 12);
        assert_eq!(atoi("-3"), -3);
        assert_eq!(atoi("x"), 0);
    }
}
