//! mod_brotli: the `BROTLI_COMPRESS` output filter and its server
//! settings.
//!
//! The filter decides as mod_brotli does, in its order: a sub-request, a
//! 204, `no-brotli` or a `Content-Range` leave the response alone and add
//! nothing; so does an existing `Content-Encoding` other than the identity
//! codings; from then on `Vary: Accept-Encoding` is added whether or not
//! the client takes `br` (named in `Accept-Encoding`, any case, without a
//! `q` written as zero). Unlike mod_deflate there is no smallest body.
//! Compressing sets `Content-Encoding: br`, drops `Content-Length` and
//! `Content-MD5`, and appends `-br` inside the `ETag` (`BrotliAlterETag`);
//! a 304 gets those headers and no body.
//!
//! The bytes: mod_brotli feeds libbrotli's streaming encoder bucket by
//! bucket and passes output on as soon as the encoder has some, so a body
//! large enough for the encoder to finish a block before the end goes out
//! without a length (chunked), as with mod_deflate. htaccel drives the
//! same library ([`libbrotli`]) the same way.
//!
//! Where the filter is inserted is mod_filter's and the core's business
//! (`super::filter`); this module only compresses.

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::http::{Body, Response};
use crate::modules::deflate::{
    accepts_coding, encoded_as, existing_encoding, feed, in_range, merge_header, only_identity,
    set_filtered_body, AlterEtag, Encoder, FilterNotes, MAX_INPUT,
};
use crate::registry::{Args, Directive, Module, Run, RSRC_CONF};
use crate::request::Ctx;
use libbrotli::{Operation, Parameter};

pub mod libbrotli;

/// Server-level settings, kept in the server's base per-directory
/// configuration as mod_deflate's are.
#[derive(Clone, Debug, Default)]
pub struct BrotliDir {
    pub quality: Option<u32>,
    pub lgwin: Option<u32>,
    pub lgblock: Option<u32>,
    pub alter_etag: Option<AlterEtag>,
    /// `BrotliFilterNote`.
    pub notes: FilterNotes,
}

impl BrotliDir {
    pub fn merge(base: &BrotliDir, new: &BrotliDir) -> BrotliDir {
        BrotliDir {
            quality: new.quality.or(base.quality),
            lgwin: new.lgwin.or(base.lgwin),
            lgblock: new.lgblock.or(base.lgblock),
            alter_etag: new.alter_etag.or(base.alter_etag),
            notes: FilterNotes::merge(&base.notes, &new.notes),
        }
    }
}

// ---------------------------------------------------------------------------
// Configuration

/// `BrotliFilterNote [Input|Output|Ratio] name`.
fn run_note(_w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    if !c.brotli.notes.set(&inv.words) {
        return Err(format!("Unknown BrotliFilterNote type '{}'", inv.words[0]));
    }
    Ok(())
}

pub static DIRECTIVES: &[Directive] = &[
    Directive {
        name: "BrotliFilterNote",
        args: Args::Take12,
        req_override: RSRC_CONF,
        about: "Set a note to report on compression ratio",
        run: Run::Handler(run_note),
    },
    Directive {
        name: "BrotliCompressionQuality",
        args: Args::Take1,
        req_override: RSRC_CONF,
        about: "Compression quality between 0 and 11 (higher quality means slower compression)",
        run: Run::Handler(|_w, inv, c| {
            let v = in_range(inv, 0, 11, "BrotliCompressionQuality must be between 0 and 11")?;
            c.brotli.quality = Some(v as u32);
            Ok(())
        }),
    },
    Directive {
        name: "BrotliCompressionWindow",
        args: Args::Take1,
        req_override: RSRC_CONF,
        about: "Sliding window size between 10 and 24 (larger windows can improve compression, but require more memory)",
        run: Run::Handler(|_w, inv, c| {
            let v = in_range(inv, 10, 24, "BrotliCompressionWindow must be between 10 and 24")?;
            c.brotli.lgwin = Some(v as u32);
            Ok(())
        }),
    },
    Directive {
        name: "BrotliCompressionMaxInputBlock",
        args: Args::Take1,
        req_override: RSRC_CONF,
        about: "Maximum input block size between 16 and 24 (larger block sizes require more memory)",
        run: Run::Handler(|_w, inv, c| {
            let v = in_range(
                inv,
                16,
                24,
                "BrotliCompressionMaxInputBlock must be between 16 and 24",
            )?;
            c.brotli.lgblock = Some(v as u32);
            Ok(())
        }),
    },
    Directive {
        name: "BrotliAlterETag",
        args: Args::Take1,
        req_override: RSRC_CONF,
        about: "Set how mod_brotli should modify ETag response headers: 'AddSuffix' (default), 'NoChange', 'Remove'",
        run: Run::Handler(|_w, inv, c| {
            c.brotli.alter_etag = Some(match inv.words[0].to_ascii_lowercase().as_str() {
                "addsuffix" => AlterEtag::AddSuffix,
                "nochange" => AlterEtag::NoChange,
                "remove" => AlterEtag::Remove,
                _ => {
                    return Err(
                        "BrotliAlterETag accepts only 'AddSuffix', 'NoChange' and 'Remove'".into(),
                    )
                }
            });
            Ok(())
        }),
    },
];

pub static MODULE: Module = Module {
    source: "mod_brotli.c",
    identifier: "brotli_module",
    builtin: false,
    directives: DIRECTIVES,
};

// ---------------------------------------------------------------------------
// Requests

/// `LoadModule brotli_module`: the library `mod_brotli.so` needs, or the
/// loader's message as Apache's `LoadModule` gives it.
pub fn load_check(file: &str) -> Result<(), String> {
    libbrotli::library()
        .map(|_| ())
        .map_err(|e| format!("Cannot load {file} into server: {e}"))
}

/// libbrotli's streaming encoder, driven as mod_brotli drives it.
struct Stream {
    state: libbrotli::State,
    out: Vec<u8>,
    early: bool,
    total_in: u64,
}

impl Stream {
    /// An encoder with the server's settings; the reason when the library
    /// gives none.
    fn new(conf: &BrotliDir) -> Result<Stream, String> {
        let library = libbrotli::library()?;
        let mut state = libbrotli::State::new(library)
            .ok_or_else(|| "unable to create a Brotli encoder".to_string())?;
        state.set(Parameter::Quality, conf.quality.unwrap_or(5));
        state.set(Parameter::Lgwin, conf.lgwin.unwrap_or(18));
        // 0: the encoder picks the block size from the other parameters.
        state.set(Parameter::Lgblock, conf.lgblock.unwrap_or(0));
        Ok(Stream {
            state,
            out: Vec::new(),
            early: false,
            total_in: 0,
        })
    }

    /// `op` until the encoder has nothing more (mod_brotli's `flush`).
    fn drain(&mut self, op: Operation) -> Result<(), String> {
        loop {
            if !self.state.compress(op, &[], &mut 0) {
                return Err("AH03460: Error while compressing data".into());
            }
            if !self.state.take_output(&mut self.out) {
                return Ok(());
            }
        }
    }

    /// `BROTLI_OPERATION_FINISH`: the whole output and the input's size.
    fn finish(mut self) -> Result<(Vec<u8>, u64), String> {
        self.drain(Operation::Finish)?;
        Ok((self.out, self.total_in))
    }
}

impl Encoder for Stream {
    /// `process_chunk`: output the encoder has after a call is passed on.
    fn write(&mut self, data: &[u8]) -> Result<(), String> {
        let mut used = 0usize;
        while used < data.len() {
            if !self.state.compress(Operation::Process, data, &mut used) {
                return Err("AH03459: Error while compressing data".into());
            }
            self.early |= self.state.take_output(&mut self.out);
        }
        self.total_in += data.len() as u64;
        Ok(())
    }

    fn passed_early(&self) -> bool {
        self.early
    }

    /// A `FLUSH` bucket: `BROTLI_OPERATION_FLUSH`, and the output passed on.
    fn flush(&mut self) -> Result<(), String> {
        self.drain(Operation::Flush)?;
        self.early = true;
        Ok(())
    }
}

/// The `BROTLI_COMPRESS` filter on a response (`compress_filter`). A
/// `HEAD` response must carry the body here, as Apache's brigade does.
pub fn compress(ctx: &mut Ctx<'_>, resp: &mut Response) {
    if ctx.is_subreq
        || resp.status == 204
        || ctx.env.contains("no-brotli")
        || resp.header("Content-Range").is_some()
    {
        return;
    }
    let encoding = existing_encoding(ctx, resp);
    if encoding.as_deref().is_some_and(|e| !only_identity(e)) {
        return;
    }
    merge_header(resp, "Vary", "Accept-Encoding");
    if ctx.accept_encoding_hidden_at_first_pass {
        return;
    }
    let ae = ctx.headers_in.get_joined("Accept-Encoding");
    let ae = ae.as_deref().map(String::from_utf8_lossy);
    if !accepts_coding(ae.as_deref(), "br") {
        return;
    }
    let len = resp.body.len();
    if len > MAX_INPUT {
        return;
    }
    let conf = ctx.conf.brotli.clone();
    // Compressed first, so that a failure leaves the answer as it was.
    let head = ctx.method == "HEAD";
    let flushes = std::mem::take(&mut ctx.flushes);
    let compressed = (resp.status != 304).then(|| {
        Stream::new(&conf).and_then(|mut stream| {
            feed(&resp.body, &flushes, &mut stream, head)?;
            let early = stream.passed_early();
            if head && early {
                Ok(None)
            } else {
                stream.finish().map(|done| Some((done, early)))
            }
        })
    });
    if let Some(Err(e)) = &compressed {
        ctx.site
            .log
            .error("error", "brotli", Some(ctx.req.remote()), e);
        return;
    }
    encoded_as(
        resp,
        encoding.as_deref(),
        "br",
        conf.alter_etag.unwrap_or_default(),
    );
    let ((bytes, total_in), early) = match compressed {
        // A 304: the headers alone.
        None | Some(Err(_)) => return,
        Some(Ok(Some(done))) => done,
        Some(Ok(None)) => {
            // A HEAD whose length Apache could not learn: no length at all.
            resp.body = Body::empty();
            return;
        }
    };
    set_notes(ctx, &conf, total_in, bytes.len() as u64);
    set_filtered_body(ctx, resp, bytes, early);
}

/// `BrotliFilterNote`: sizes as numbers, the ratio `-` for an empty body.
fn set_notes(ctx: &mut Ctx<'_>, conf: &BrotliDir, input: u64, output: u64) {
    let ratio = (output * 100)
        .checked_div(input)
        .map_or_else(|| "-".to_string(), |r| r.to_string());
    conf.notes
        .write(ctx, [input.to_string(), output.to_string(), ratio]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compressed(data: &[u8]) -> (Vec<u8>, bool) {
        let mut s =
            Stream::new(&BrotliDir::default()).expect("libbrotlienc.so.1 (Debian: libbrotli1)");
        s.write(data).unwrap();
        let early = s.passed_early();
        (s.finish().unwrap().0, early)
    }

    /// What Debian's libbrotli 1.0.9 gives mod_brotli's default settings
    /// for these bytes (`curl -H 'Accept-Encoding: br'` against Apache).
    #[test]
    fn the_bytes_of_libbrotli() {
        let (bytes, early) = compressed(b"hello hello hello hello\n");
        assert!(!early);
        assert_eq!(
            bytes,
            [
                0x13, 0x17, 0x00, 0x00, 0xa4, 0x14, 0x40, 0x72, 0x10, 0x45, 0x94, 0xa9, 0xc3, 0x73,
                0xfa, 0x0b
            ]
        );
    }

    #[test]
    fn a_body_past_a_block_goes_out_before_the_end() {
        let big: Vec<u8> = (0..3_000_000u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8)
            .collect();
        assert!(compressed(&big).1);
        assert!(!compressed(b"small").1);
    }
}
