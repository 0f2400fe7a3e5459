//! gzip output exactly as mod_deflate produces it.
//!
//! Clients compare nothing but bytes and lengths, so htaccel compresses
//! with the same library, the same parameters and the same buffering as
//! Apache: the system's zlib through `libz-sys` (the Rust wrappers fix
//! `memLevel` at 8, Apache uses 9, and the output differs), a raw deflate
//! stream between mod_deflate's fixed 10-byte header and the CRC-32/length
//! trailer, and input fed as Apache's buckets feed it, so that the moment
//! the first output buffer fills — which decides whether Apache can still
//! send a `Content-Length` — is the same.
//!
//! The unsafe code is confined to [`Stream`]: a boxed `z_stream` (zlib
//! keeps a pointer back to it, so it never moves), buffers handed to zlib
//! only for the duration of one call, and `deflateEnd` on drop.

use libz_sys as z;
use std::ffi::{c_int, c_uint, c_void};

/// mod_deflate's gzip header: no name, no time, OS "Unix".
pub const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];

/// How a deflate stream is set up (`DeflateCompressionLevel`,
/// `DeflateWindowSize`, `DeflateMemLevel`, `DeflateBufferSize`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// zlib level; -1 is zlib's default (6).
    pub level: i32,
    /// Window bits, 1–15 (used as a raw stream, negated).
    pub window_bits: i32,
    pub mem_level: i32,
    /// Size of the output buffer; a full buffer while input remains is
    /// when Apache first passes data on.
    pub buffer_size: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            level: -1,
            window_bits: 15,
            mem_level: 9,
            buffer_size: 8096,
        }
    }
}

unsafe extern "C" fn zalloc(_opaque: *mut c_void, items: c_uint, size: c_uint) -> *mut c_void {
    // SAFETY: calloc has no preconditions; zlib handles a null result.
    unsafe { libc::calloc(items as usize, size as usize) }
}

unsafe extern "C" fn zfree(_opaque: *mut c_void, address: *mut c_void) {
    // SAFETY: zlib only frees what `zalloc` returned.
    unsafe { libc::free(address) }
}

/// An initialised zlib deflate stream.
struct Stream {
    strm: Box<z::z_stream>,
}

/// zlib's flush modes used here.
const Z_NO_FLUSH: c_int = 0;
const Z_SYNC_FLUSH: c_int = 2;
const Z_FINISH: c_int = 4;
const Z_OK: c_int = 0;
const Z_STREAM_END: c_int = 1;
const Z_BUF_ERROR: c_int = -5;

/// A `z_stream` with no buffers yet and this module's allocator, boxed so
/// that it stays at one address for zlib.
fn empty_stream() -> Box<z::z_stream> {
    Box::new(z::z_stream {
        next_in: std::ptr::null_mut(),
        avail_in: 0,
        total_in: 0,
        next_out: std::ptr::null_mut(),
        avail_out: 0,
        total_out: 0,
        msg: std::ptr::null_mut(),
        state: std::ptr::null_mut(),
        zalloc,
        zfree,
        opaque: std::ptr::null_mut(),
        data_type: 0,
        adler: 0,
        reserved: 0,
    })
}

impl Stream {
    /// `deflateInit2` with a raw stream; `None` when zlib refuses the
    /// parameters (Apache then sends the response uncompressed).
    fn new(p: &Params) -> Option<Stream> {
        let mut strm = empty_stream();
        // SAFETY: `strm` is a fully initialised z_stream that stays at this
        // address (boxed) for the stream's life; the version string and
        // struct size are zlib's own.
        let rc = unsafe {
            z::deflateInit2_(
                &mut *strm,
                p.level,
                8, // Z_DEFLATED
                -p.window_bits,
                p.mem_level,
                0, // Z_DEFAULT_STRATEGY
                z::zlibVersion(),
                std::mem::size_of::<z::z_stream>() as c_int,
            )
        };
        (rc == Z_OK).then_some(Stream { strm })
    }

    /// One `deflate` call: consume from `input`, write into `output`.
    /// Returns zlib's code and the bytes consumed and produced.
    fn deflate(&mut self, input: &[u8], output: &mut [u8], flush: c_int) -> (c_int, usize, usize) {
        let avail_in = input.len().min(c_uint::MAX as usize) as c_uint;
        let avail_out = output.len().min(c_uint::MAX as usize) as c_uint;
        self.strm.next_in = input.as_ptr() as *mut u8;
        self.strm.avail_in = avail_in;
        self.strm.next_out = output.as_mut_ptr();
        self.strm.avail_out = avail_out;
        // SAFETY: next_in/next_out point into slices that outlive the call,
        // with their lengths; zlib reads only `avail_in` bytes of input and
        // writes only `avail_out` bytes of output.
        let rc = unsafe { z::deflate(&mut *self.strm, flush) };
        let used = (avail_in - self.strm.avail_in) as usize;
        let made = (avail_out - self.strm.avail_out) as usize;
        self.strm.next_in = std::ptr::null_mut();
        self.strm.avail_in = 0;
        self.strm.next_out = std::ptr::null_mut();
        self.strm.avail_out = 0;
        (rc, used, made)
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: the stream was initialised by deflateInit2 and is ended once.
        unsafe {
            z::deflateEnd(&mut *self.strm);
        }
    }
}

/// The first `limit` bytes (or fewer, at its end) of the gzip data `read`
/// gives, inflated by zlib as `gzip -dc` would (mod_mime_magic looks into
/// compressed files); `None` when the data is no gzip stream zlib takes.
pub fn gunzip_prefix(read: &mut impl std::io::Read, limit: usize) -> Option<Vec<u8>> {
    struct Inflater(Box<z::z_stream>);
    impl Drop for Inflater {
        fn drop(&mut self) {
            // SAFETY: initialised by `inflateInit2_` below, ended once.
            unsafe {
                z::inflateEnd(&mut *self.0);
            }
        }
    }
    let mut strm = empty_stream();
    // SAFETY: a boxed stream that stays at one address; 16 + 15 window
    // bits ask zlib for a gzip header and trailer.
    let init = unsafe {
        z::inflateInit2_(
            &mut *strm,
            16 + 15,
            z::zlibVersion(),
            std::mem::size_of::<z::z_stream>() as c_int,
        )
    };
    if init != Z_OK {
        return None;
    }
    let mut inflater = Inflater(strm);
    let mut input = vec![0u8; 16 * 1024];
    let mut out = vec![0u8; limit];
    let mut produced = 0;
    while produced < limit {
        let n = read.read(&mut input).ok()?;
        if n == 0 {
            break;
        }
        let strm = &mut *inflater.0;
        strm.next_in = input.as_mut_ptr();
        strm.avail_in = n as c_uint;
        loop {
            strm.next_out = out[produced..].as_mut_ptr();
            strm.avail_out = (limit - produced) as c_uint;
            // SAFETY: both buffers outlive the call and their lengths are
            // the ones given.
            let status = unsafe { z::inflate(strm, Z_NO_FLUSH) };
            produced = limit - strm.avail_out as usize;
            match status {
                Z_OK if strm.avail_in > 0 && produced < limit => continue,
                Z_OK | Z_BUF_ERROR => break,
                Z_STREAM_END => return Some(out[..produced].to_vec()),
                _ => return (produced > 0).then(|| out[..produced].to_vec()),
            }
        }
    }
    out.truncate(produced);
    (produced > 0).then_some(out)
}

/// zlib's CRC-32, continued from `crc`.
pub fn crc32(crc: u32, data: &[u8]) -> u32 {
    let mut crc = crc as z::uLong;
    for piece in data.chunks(c_uint::MAX as usize) {
        // SAFETY: zlib reads exactly `piece.len()` bytes from the slice.
        crc = unsafe { z::crc32(crc, piece.as_ptr(), piece.len() as c_uint) };
    }
    crc as u32
}

/// What compressing a body gave.
#[derive(Debug)]
pub struct Gzipped {
    /// Header, deflate stream, trailer; empty when `stop_early` stopped it.
    pub bytes: Vec<u8>,
    /// Apache passed compressed data on before the end of the body (the
    /// output buffer filled while input remained): no `Content-Length`,
    /// no byte ranges, chunked framing.
    pub passed_early: bool,
}

/// A gzip encoder fed as mod_deflate is fed.
pub struct Encoder {
    stream: Stream,
    buffer: Vec<u8>,
    /// Bytes of `buffer` holding output not yet taken.
    used: usize,
    out: Vec<u8>,
    crc: u32,
    total_in: u64,
    passed_early: bool,
}

impl Encoder {
    /// `None` when zlib refuses the parameters.
    pub fn new(p: &Params) -> Option<Encoder> {
        let stream = Stream::new(p)?;
        Some(Encoder {
            stream,
            buffer: vec![0; p.buffer_size.max(1)],
            used: 0,
            out: GZIP_HEADER.to_vec(),
            crc: 0,
            total_in: 0,
            passed_early: false,
        })
    }

    /// Whether data has been passed on already (see [`Gzipped`]).
    pub fn passed_early(&self) -> bool {
        self.passed_early
    }

    /// One input bucket, compressed without flushing.
    pub fn write(&mut self, mut data: &[u8]) -> Result<(), String> {
        self.crc = crc32(self.crc, data);
        self.total_in += data.len() as u64;
        while !data.is_empty() {
            if self.used == self.buffer.len() {
                self.out.extend_from_slice(&self.buffer);
                self.used = 0;
                self.passed_early = true;
            }
            let (rc, used, made) =
                self.stream
                    .deflate(data, &mut self.buffer[self.used..], Z_NO_FLUSH);
            if rc != Z_OK {
                return Err(format!("AH01386: Zlib error {rc} deflating data"));
            }
            data = &data[used..];
            self.used += made;
        }
        Ok(())
    }

    /// Everything zlib holds, with `mode` (mod_deflate's
    /// `flush_libz_buffer`), moved to the output.
    fn drain(&mut self, mode: c_int) {
        let mut done = false;
        loop {
            if self.used > 0 {
                self.out.extend_from_slice(&self.buffer[..self.used]);
                self.used = 0;
            }
            if done {
                break;
            }
            let (rc, _, made) = self.stream.deflate(&[], &mut self.buffer, mode);
            self.used = made;
            if rc == Z_BUF_ERROR {
                break;
            }
            done = made < self.buffer.len() || rc == Z_STREAM_END;
            if rc != Z_OK && rc != Z_STREAM_END {
                break;
            }
        }
        if self.used > 0 {
            self.out.extend_from_slice(&self.buffer[..self.used]);
            self.used = 0;
        }
    }

    /// A `FLUSH` bucket: `Z_SYNC_FLUSH`, and the output passed on.
    pub fn flush(&mut self) {
        self.drain(Z_SYNC_FLUSH);
        self.passed_early = true;
    }

    /// The end of the body: flush zlib, add the trailer.
    pub fn finish(mut self) -> Gzipped {
        self.drain(Z_FINISH);
        self.out.extend_from_slice(&self.crc.to_le_bytes());
        self.out
            .extend_from_slice(&(self.total_in as u32).to_le_bytes());
        Gzipped {
            bytes: self.out,
            passed_early: self.passed_early,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gzip(data: &[u8], chunk: usize) -> Gzipped {
        let mut e = Encoder::new(&Params::default()).unwrap();
        for c in data.chunks(chunk.max(1)) {
            e.write(c).unwrap();
        }
        e.finish()
    }

    /// Inflate a gzip member with zlib's own inflater, for the round trip.
    fn gunzip(data: &[u8]) -> Vec<u8> {
        assert_eq!(&data[..10], &GZIP_HEADER);
        let raw = &data[10..data.len() - 8];
        let mut strm = empty_stream();
        strm.next_in = raw.as_ptr() as *mut u8;
        strm.avail_in = raw.len() as c_uint;
        let mut out = vec![0u8; 1 << 22];
        strm.next_out = out.as_mut_ptr();
        strm.avail_out = out.len() as c_uint;
        // SAFETY: test-only use of zlib's inflater on buffers that outlive it.
        unsafe {
            assert_eq!(
                z::inflateInit2_(
                    &mut *strm,
                    -15,
                    z::zlibVersion(),
                    std::mem::size_of::<z::z_stream>() as c_int
                ),
                Z_OK
            );
            assert_eq!(z::inflate(&mut *strm, Z_FINISH), Z_STREAM_END);
            let n = strm.total_out as usize;
            z::inflateEnd(&mut *strm);
            out.truncate(n);
        }
        let trailer = &data[data.len() - 8..];
        assert_eq!(trailer[..4], crc32(0, &out).to_le_bytes());
        assert_eq!(trailer[4..], (out.len() as u32).to_le_bytes());
        out
    }

    #[test]
    fn round_trip_and_framing() {
        let text: Vec<u8> = (0..200_000u32)
            .map(|i| b"abcdefghij\n"[(i * 7 % 11) as usize])
            .collect();
        let g = gzip(&text, 4 << 20);
        assert_eq!(gunzip(&g.bytes), text);
        assert!(!g.passed_early, "a very compressible body fits one buffer");
        // Chunking does not change the bytes.
        assert_eq!(gzip(&text, 8000).bytes, g.bytes);
    }

    #[test]
    fn early_pass_for_large_output() {
        let mut x: u32 = 1;
        let noise: Vec<u8> = (0..300_000)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                (x >> 16) as u8
            })
            .collect();
        let g = gzip(&noise, 4 << 20);
        assert!(g.passed_early);
        assert_eq!(gunzip(&g.bytes), noise);
    }

    #[test]
    fn empty_body() {
        let g = gzip(b"", 1);
        assert_eq!(g.bytes.len(), 10 + 2 + 8);
        assert!(gunzip(&g.bytes).is_empty());
    }

    #[test]
    fn refused_parameters() {
        let p = Params {
            window_bits: 3,
            ..Params::default()
        };
        assert!(Encoder::new(&p).is_none());
    }
}
