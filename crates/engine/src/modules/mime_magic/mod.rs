//! mod_mime_magic: the type of a file mod_mime gave none (no extension it
//! knows), from the file's first bytes, by the rules of `MIMEMagicFile`.
//! Red Hat's stock configuration loads it with `conf/magic`, so there an
//! extensionless image is `image/png` and an empty file `text/plain`.
//!
//! As the module does it, quirks included, since they decide answers:
//!
//! * The magic file is Apache's dialect of file(1)'s: offset (with `>`
//!   continuation levels and `(offset.[bsl]±n)` indirection), type
//!   (`byte`, `short`, `long`, `string`, `date`, their `be`/`le` forms, a
//!   `u` prefix, `&mask`), relation (`= ! < > & ^ x`), value, and the
//!   description, which is the MIME type and optionally an encoding. Any
//!   other type word is an error at start-up and its line never matches;
//!   newer file(1) suffixes (`string/B`) are read as Apache reads them.
//! * A rule reads 64 bytes at its offset (the size of the C union it
//!   copies), so it never matches within 64 bytes of the end of the first
//!   4096 bytes read; `long` is the platform's 8-byte `long`; `belong`
//!   values are sign-extended from 32 bits.
//! * gzip data (and compress and pack data, which Apache hands to
//!   `gzip -dcq`) is looked into: the encoding `x-gzip` and the type of
//!   what it inflates to. htaccel inflates gzip with zlib in process and
//!   does not run `gzip`: compress and pack data get no type.
//! * Text is recognised by words in its first 1024 bytes (`<html>`,
//!   `The`…), troff and Fortran by their first bytes, tar by its header's
//!   checksum.
//! * A file name ending in `@` and digits (a revision) takes the type of
//!   the name without them.
//!
//! The result is read back as Apache reads it (`magic_rsl_to_request`):
//! the first word must hold a `/`; a second word is the encoding.

mod rules;
mod text;

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::fs::{FileInfo, Kind};
use crate::registry::{Args, Directive, Module, Run, RSRC_CONF};
use crate::request::{Ctx, Status};
use rules::{is_space, Rule};
use std::io::Read;
use std::sync::Arc;

/// Bytes of a file looked at (`HOWMANY`).
const HOWMANY: usize = 4096;

/// The per-server slot: the rules of `MIMEMagicFile`; a virtual host
/// without its own takes the main server's.
#[derive(Clone, Debug, Default)]
pub struct MimeMagicServer {
    pub rules: Option<Arc<Vec<Rule>>>,
}

impl MimeMagicServer {
    pub fn merge(main: &MimeMagicServer, vhost: &MimeMagicServer) -> MimeMagicServer {
        MimeMagicServer {
            rules: vhost.rules.clone().or_else(|| main.rules.clone()),
        }
    }
}

pub static DIRECTIVES: &[Directive] = &[Directive {
    name: "MimeMagicFile",
    args: Args::Take1,
    req_override: RSRC_CONF,
    about: "Path to MIME Magic file (in file(1) format)",
    run: Run::Handler(run_magic_file),
}];

pub static MODULE: Module = Module {
    source: "mod_mime_magic.c",
    identifier: "mime_magic_module",
    builtin: false,
    directives: DIRECTIVES,
};

/// `MIMEMagicFile`: the rules are read now. A file that cannot be read
/// leaves the server without rules, with Apache's error at start-up.
fn run_magic_file(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _c: &mut DirConf,
) -> Result<(), String> {
    let path = w.env.server_root.join(&inv.words[0]);
    let rules = match std::fs::read(&path) {
        Ok(text) => {
            let (rules, errors) = rules::parse_file(&text);
            for e in errors {
                w.warn(inv.origin, format!("mod_mime_magic: {e}"));
            }
            Some(Arc::new(rules))
        }
        Err(e) => {
            w.warn(
                inv.origin,
                format!(
                    "AH01515: mod_mime_magic: can't read magic file {}: {e}",
                    path.display()
                ),
            );
            None
        }
    };
    w.server()?.modules.mime_magic.rules = rules;
    Ok(())
}

/// `type_checker`, after mod_mime: a file it gave no type.
pub fn type_checker(ctx: &mut Ctx<'_>) -> Result<bool, Status> {
    if ctx.content_type.is_some() || ctx.filename.is_empty() {
        return Ok(false);
    }
    let Some(finfo) = ctx.finfo else {
        return Ok(false);
    };
    let Some(rules) = ctx.site.modules.mime_magic.rules.clone() else {
        return Ok(false);
    };
    let mut found = Found::default();
    if !revision_suffix(ctx) {
        match process(ctx, &finfo, &rules, &mut found) {
            Ok(true) => {}
            Ok(false) => return Ok(false),
            Err(status) => return Err(status),
        }
        found.pieces.push(b"\n".to_vec());
        found.apply(ctx);
    }
    Ok(ctx.content_type.is_some())
}

/// What the tests printed (Apache's result string list), and the encoding
/// gzip data set.
#[derive(Default)]
pub(super) struct Found {
    pub(super) pieces: Vec<Vec<u8>>,
}

impl Found {
    /// `magic_rsl_to_request`: the first word (with a `/`) is the type,
    /// the second the encoding. The last piece is never read, and a word
    /// is copied one byte too long when more pieces follow it, as Apache
    /// copies it.
    fn apply(&self, ctx: &mut Ctx<'_>) {
        #[derive(Clone, Copy, PartialEq, PartialOrd)]
        enum State {
            Leading,
            Type,
            Subtype,
            Separator,
            Encoding,
        }
        let n = self.pieces.len().saturating_sub(1);
        let mut state = State::Leading;
        let (mut type_at, mut type_len) = ((0, 0), 0);
        let (mut enc_at, mut enc_len) = ((0, 0), 0);
        'pieces: for (f, piece) in self.pieces[..n].iter().enumerate() {
            for (p, &c) in piece.iter().enumerate() {
                if is_space(c) {
                    match state {
                        State::Leading | State::Separator => {}
                        State::Type => return,
                        State::Subtype => state = State::Separator,
                        State::Encoding => break 'pieces,
                    }
                } else if state == State::Type && c == b'/' {
                    type_len += 1;
                    state = State::Subtype;
                } else {
                    match state {
                        State::Leading => {
                            state = State::Type;
                            type_at = (f, p);
                            type_len = 1;
                        }
                        State::Type | State::Subtype => type_len += 1,
                        State::Separator => {
                            state = State::Encoding;
                            enc_at = (f, p);
                            enc_len = 1;
                        }
                        State::Encoding => enc_len += 1,
                    }
                }
            }
        }
        if state < State::Subtype {
            return;
        }
        let content_type = String::from_utf8_lossy(&self.copy(type_at, type_len)).into_owned();
        ctx.content_type = Some(lower_type(&content_type));
        if state == State::Encoding {
            let enc = String::from_utf8_lossy(&self.copy(enc_at, enc_len)).to_ascii_lowercase();
            ctx.encodings = vec![enc];
        }
    }

    /// `rsl_strdup`: up to `len + 1` bytes from piece `at.0`, position
    /// `at.1`, over every piece but the last, skipping in later pieces the
    /// positions before `at.1`.
    fn copy(&self, at: (usize, usize), len: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let n = self.pieces.len().saturating_sub(1);
        for (f, piece) in self.pieces[..n].iter().enumerate().skip(at.0) {
            let from = if f == at.0 { at.1 } else { 0 };
            for (p, &c) in piece.iter().enumerate().skip(from) {
                if p >= at.1 && out.len() <= len {
                    out.push(c);
                    if out.len() > len {
                        break;
                    }
                }
            }
        }
        out
    }
}

/// `ap_content_type_tolower`: the type lower-cased up to its parameters.
fn lower_type(t: &str) -> String {
    match t.split_once(';') {
        Some((ty, params)) => format!("{};{params}", ty.to_ascii_lowercase()),
        None => t.to_ascii_lowercase(),
    }
}

/// `revision_suffix`: `name@3` takes the type of `name` (a file
/// sub-request); whether it did.
fn revision_suffix(ctx: &mut Ctx<'_>) -> bool {
    let name = &ctx.filename;
    let digits = name.bytes().rev().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits == name.len() || name.as_bytes()[name.len() - digits - 1] != b'@' {
        return false;
    }
    let base = name[..name.len() - digits - 1].to_string();
    let uri = match ctx.uri.rfind('@') {
        Some(i) => ctx.uri[..i].to_string(),
        None => ctx.uri.clone(),
    };
    let (sub, _) = ctx.sub_request_prepared(&uri, None, |sub| {
        sub.filename = base;
        sub.file_subreq = true;
    });
    let Some(content_type) = sub.content_type.clone() else {
        return false;
    };
    ctx.content_type = Some(content_type);
    if !sub.encodings.is_empty() {
        ctx.encodings = sub.encodings.clone();
    }
    if !sub.languages.is_empty() {
        ctx.languages = sub.languages.clone();
    }
    true
}

/// `magic_process`: whether a result was found (`false`: no type).
fn process(
    ctx: &mut Ctx<'_>,
    finfo: &FileInfo,
    rules: &[Rule],
    found: &mut Found,
) -> Result<bool, Status> {
    match finfo.kind {
        Kind::Dir => {
            found
                .pieces
                .push(crate::http::DIR_MAGIC_TYPE.as_bytes().to_vec());
            return Ok(true);
        }
        Kind::Other => {
            found.pieces.push(b"application/octet-stream".to_vec());
            return Ok(true);
        }
        Kind::Symlink => {
            ctx.log_error(
                "error",
                "mime_magic",
                &format!("AH01527: mod_mime_magic: broken symlink ({})", ctx.filename),
            );
            return Err(500);
        }
        Kind::File => {}
    }
    if finfo.size == 0 {
        found.pieces.push(b"text/plain".to_vec());
        return Ok(true);
    }
    let path = std::path::Path::new(&ctx.filename);
    let Ok((mut file, _)) = crate::fs::open_regular(path) else {
        ctx.log_error(
            "error",
            "mime_magic",
            &format!("AH01512: mod_mime_magic: can't read `{}'", ctx.filename),
        );
        return Ok(false);
    };
    let mut buf = vec![0u8; HOWMANY];
    let n = match read_up_to(&mut file, &mut buf) {
        Ok(n) => n,
        Err(e) => {
            ctx.log_error(
                "error",
                "mime_magic",
                &format!(
                    "{}: AH01513: mod_mime_magic: read failed: {}",
                    crate::log_format::os_error(&e),
                    ctx.filename
                ),
            );
            return Err(500);
        }
    };
    if n == 0 {
        return Ok(false);
    }
    buf.truncate(n);
    buf.push(0);
    let mut file = file;
    Ok(try_it(ctx, &buf, rules, found, Some(&mut file)))
}

/// One `read` of up to the buffer's length, as `apr_file_read` does for a
/// regular file (it reads until the buffer is full or the file ends).
fn read_up_to(file: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// `tryit`: compressed data, then the rules, then text. `file` is the
/// file again, for looking into gzip data (none for data inflated).
fn try_it(
    ctx: &mut Ctx<'_>,
    buf: &[u8],
    rules: &[Rule],
    found: &mut Found,
    file: Option<&mut std::fs::File>,
) -> bool {
    if let Some(file) = file {
        if compressed(ctx, buf, rules, found, file) {
            return true;
        }
    }
    rules::matches(buf, rules, found) || text::text(buf, found)
}

/// `zmagic`: data compressed by gzip (looked into), compress or pack (not).
fn compressed(
    ctx: &mut Ctx<'_>,
    buf: &[u8],
    rules: &[Rule],
    found: &mut Found,
    file: &mut std::fs::File,
) -> bool {
    let encoding = match buf {
        [0x1f, 0x8b, ..] => "x-gzip",
        [0x1f, 0x9d, ..] => "x-compress",
        [0x1f, 0x1e, ..] => "x-gzip",
        _ => return false,
    };
    let inflated = if buf[1] == 0x8b {
        use std::io::Seek;
        file.seek(std::io::SeekFrom::Start(0))
            .ok()
            .and_then(|_| crate::modules::deflate::zlib::gunzip_prefix(file, HOWMANY))
    } else {
        None
    };
    let Some(mut inflated) = inflated else {
        ctx.log_error(
            "error",
            "mime_magic",
            &format!(
                "AH01554: mod_mime_magic: read failed from uncompress of {} (htaccel inflates gzip data only)",
                ctx.filename
            ),
        );
        return true;
    };
    ctx.encodings = vec![encoding.to_string()];
    if let Some(last) = inflated.last_mut() {
        *last = 0;
    }
    try_it(ctx, &inflated, rules, found, None)
}

#[cfg(test)]
mod tests {
    use super::rules::{matches, parse_file};
    use super::text::text;
    use super::*;

    fn rules(text: &str) -> Vec<Rule> {
        let (r, errors) = parse_file(text.as_bytes());
        assert!(errors.is_empty(), "{errors:?}");
        r
    }

    fn typed(rules: &[Rule], data: &[u8]) -> Option<String> {
        let mut buf = data.to_vec();
        buf.push(0);
        let mut found = Found::default();
        (matches(&buf, rules, &mut found) || text(&buf, &mut found))
            .then(|| String::from_utf8_lossy(&found.pieces.concat()).into_owned())
    }

    #[test]
    fn strings_numbers_and_continuations() {
        let r = rules(
            "0\tstring\t\\x89PNG\timage/png\n\
             0\tbeshort\t0xffd8\timage/jpeg\n\
             0\tstring\t.snd\t\n\
             >12\tbelong\t1\taudio/basic\n\
             >12\tbelong\t2\taudio/x-other\n",
        );
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        png.resize(200, 0);
        assert_eq!(typed(&r, &png).as_deref(), Some("image/png"));
        let mut jpeg = vec![0xff, 0xd8, 0xff, 0xe0];
        jpeg.resize(200, 1);
        assert_eq!(typed(&r, &jpeg).as_deref(), Some("image/jpeg"));
        let mut snd = b".snd\0\0\0\0\0\0\0\0\0\0\0\x02".to_vec();
        snd.resize(200, 0);
        assert_eq!(typed(&r, &snd).as_deref(), Some("audio/x-other"));
        // Within 64 bytes of the end nothing matches, as in Apache.
        assert_eq!(typed(&r, &png[..40]), None);
    }

    #[test]
    fn words_of_text() {
        let r = rules("0\tstring\t%PDF-\tapplication/pdf\n");
        assert_eq!(typed(&r, b"The end\n").as_deref(), Some("text/plain"));
        assert_eq!(typed(&r, b"x <html> y").as_deref(), Some("text/html"));
        assert_eq!(typed(&r, b"notes\n"), None);
        assert_eq!(
            typed(&r, b"the \x1b[1m").as_deref(),
            Some("text/plain (with escape sequences)")
        );
    }

    #[test]
    fn any_bytes_are_typed_without_a_panic() {
        // Files are clients' uploads; magic lines are whatever a file holds.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        const ALPHABET: &[u8] = b" \t>(.&^=!<x0123456789abcdefglnorstuxBSL\\)";
        let mut lines = String::from(
            ">>(4.s-2) leshort !0x10 a/b %d\n>(0x3c.l+4) belong&0xff00 ^3 c/d\n0 ubyte <7 e/f\n\
             0 string x g/h\n0 date x i/j %s\n>2 bedate >0 k/l\n0 string/B \\x41\\101\\ m/n\n",
        );
        for _ in 0..300 {
            let len = (next() % 40) as usize;
            let line: String = (0..len)
                .map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize] as char)
                .collect();
            lines.push_str(&line);
            lines.push('\n');
        }
        let (r, _) = parse_file(lines.as_bytes());
        for _ in 0..3000 {
            let len = (next() % 700) as usize;
            let data: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let _ = typed(&r, &data);
            let found = Found {
                pieces: vec![data.clone(), b" x".to_vec(), b"\n".to_vec()],
            };
            let _ = found.copy((0, len / 2), len);
        }
    }
}
