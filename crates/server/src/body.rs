//! Request bodies: counting a `Content-Length` body and decoding a chunked
//! one, with `LimitRequestBody`, so that a body the engine did not consume
//! can be read and thrown away before the next request on the connection
//! (Apache's `ap_discard_request_body` through its `HTTP_IN` filter).
//!
//! The decoder is a byte-at-a-time state machine over the chunk-size lines
//! that makes the decisions of `parse_chunk_size` (modules/http/http_filters.c):
//! hex digits (leading zeros free, at most 15 significant ones, else 413),
//! up to 10 blanks after the size, an extension after `;` without control
//! bytes, CR LF only (`HttpProtocolOptions Strict`, the default) or a bare
//! LF too (`Unsafe`). A size line longer than
//! `LimitRequestFieldSize` is a 413, any other malformation a 400. After the
//! last chunk the trailer section is read with the same rules and limits as
//! request header fields (a bad trailer is a 400); trailers are not kept
//! (`MergeTrailers off`, Apache's default).
//!
//! [`BodyReader::feed`] consumes what it can from a buffer and is I/O-free:
//! the connection drives it, which keeps it testable row by row against the
//! observed answers of Apache 2.4.71 (see the tests).

use crate::head::{HeadParser, Parse};
use crate::Limits;

/// Apache reads a chunk-size line in pieces of up to `HUGE_STRING_LEN`
/// bytes and checks its length after each piece.
const LINE_PIECE: usize = 8192;

/// Why a body could not be read to its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BodyError {
    /// Over `LimitRequestBody`, a chunk size over 15 hex digits or a
    /// chunk-size line over the field size limit: 413.
    TooLarge,
    /// A malformed chunk-size line or chunk end: 400.
    Malformed,
    /// A malformed trailer section: 400 (sent as a complete error page).
    BadTrailer,
}

impl BodyError {
    pub(crate) fn status(self) -> u16 {
        match self {
            BodyError::TooLarge => 413,
            BodyError::Malformed | BodyError::BadTrailer => 400,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Chunk {
    /// At the start of a chunk-size line.
    Start,
    Digits,
    Ext,
    /// After blanks that followed the size.
    Blank,
    /// After CR, waiting for LF.
    Lf,
    Data,
    /// After chunk data, waiting for CR LF.
    End,
    EndLf,
    Trailers,
}

#[derive(Debug)]
enum State {
    Length {
        remaining: u64,
    },
    Chunked {
        state: Chunk,
        remaining: u64,
        bits: i32,
        blanks: u32,
        line: usize,
        piece: usize,
    },
    Done,
}

/// Reads (and discards) one request body.
#[derive(Debug)]
pub(crate) struct BodyReader {
    state: State,
    limit: u64,
    used: u64,
    line_limit: usize,
    trailers: Option<HeadParser>,
}

impl BodyReader {
    /// A `Content-Length` body of `len` bytes.
    pub(crate) fn length(len: u64, limit: u64) -> Self {
        let state = if len == 0 {
            State::Done
        } else {
            State::Length { remaining: len }
        };
        BodyReader {
            state,
            limit,
            used: 0,
            line_limit: 0,
            trailers: None,
        }
    }

    /// A chunked body; chunk-size lines may be `field_size` bytes long.
    pub(crate) fn chunked(limit: u64, field_size: usize) -> Self {
        BodyReader {
            state: State::Chunked {
                state: Chunk::Start,
                remaining: 0,
                bits: 60,
                blanks: 0,
                line: 0,
                piece: 0,
            },
            limit,
            used: 0,
            line_limit: field_size,
            trailers: None,
        }
    }

    pub(crate) fn is_done(&self) -> bool {
        matches!(self.state, State::Done)
    }

    /// Consume body bytes from the front of `input`; returns how many. Bytes
    /// of an incomplete trailer line are left in place: call again with the
    /// same bytes and more.
    pub(crate) fn feed(&mut self, input: &[u8], limits: &Limits) -> Result<usize, BodyError> {
        self.feed_with(input, limits, &mut |_| {})
    }

    /// [`Self::feed`], handing each piece of decoded body data to `data`
    /// (bodies streamed to a backend).
    pub(crate) fn feed_with(
        &mut self,
        input: &[u8],
        limits: &Limits,
        data: &mut dyn FnMut(&[u8]),
    ) -> Result<usize, BodyError> {
        self.feed_upto(input, limits, u64::MAX, data)
    }

    /// [`Self::feed_with`], stopping once `max_data` bytes of body data
    /// were handed over (a backend's prefetch reads at most so much).
    pub(crate) fn feed_upto(
        &mut self,
        input: &[u8],
        limits: &Limits,
        mut max_data: u64,
        data: &mut dyn FnMut(&[u8]),
    ) -> Result<usize, BodyError> {
        let mut i = 0;
        while i < input.len() && max_data > 0 {
            match &mut self.state {
                State::Done => break,
                State::Length { remaining } => {
                    let n = (*remaining).min((input.len() - i) as u64).min(max_data);
                    max_data -= n;
                    data(&input[i..i + n as usize]);
                    *remaining -= n;
                    i += n as usize;
                    if *remaining == 0 {
                        self.state = State::Done;
                    }
                    self.count(n)?;
                }
                State::Chunked {
                    state,
                    remaining,
                    line,
                    piece,
                    ..
                } if *state == Chunk::Data => {
                    let n = (*remaining).min((input.len() - i) as u64).min(max_data);
                    max_data -= n;
                    data(&input[i..i + n as usize]);
                    *remaining -= n;
                    i += n as usize;
                    if *remaining == 0 {
                        *state = Chunk::End;
                        *line = 0;
                        *piece = 0;
                    }
                    self.count(n)?;
                }
                State::Chunked { state, .. } if *state == Chunk::Trailers => {
                    let parser = self.trailers.get_or_insert_with(HeadParser::for_trailers);
                    return match parser.parse(&input[i..], limits, false) {
                        Parse::Partial => Ok(i),
                        Parse::Done(n) => {
                            self.state = State::Done;
                            Ok(i + n)
                        }
                        Parse::Error(_) => Err(BodyError::BadTrailer),
                    };
                }
                State::Chunked { .. } => {
                    let c = input[i];
                    i += 1;
                    self.line_byte(c, limits.strict)?;
                }
            }
        }
        Ok(i)
    }

    fn count(&mut self, n: u64) -> Result<(), BodyError> {
        self.used += n;
        if self.limit != 0 && self.used > self.limit {
            return Err(BodyError::TooLarge);
        }
        Ok(())
    }

    /// One byte of a chunk-size line or of the CR LF after chunk data
    /// (`strict`: an LF must follow a CR).
    fn line_byte(&mut self, c: u8, strict: bool) -> Result<(), BodyError> {
        let line_limit = self.line_limit;
        let State::Chunked {
            state,
            remaining,
            bits,
            blanks,
            line,
            piece,
        } = &mut self.state
        else {
            unreachable!("line_byte outside a chunked body")
        };
        *line += 1;
        *piece += 1;
        let lf = c == b'\n';
        let check_length = |line: usize, piece: &mut usize| {
            if lf || *piece >= LINE_PIECE {
                *piece = 0;
                if line > line_limit {
                    return Err(BodyError::TooLarge);
                }
            }
            Ok(())
        };
        match *state {
            Chunk::End | Chunk::EndLf => {
                if lf {
                    if strict && *state != Chunk::EndLf {
                        return Err(BodyError::Malformed); // LF without CR
                    }
                    *state = Chunk::Start;
                } else if c == b'\r' && *state == Chunk::End {
                    *state = Chunk::EndLf;
                } else {
                    return Err(BodyError::Malformed);
                }
                let r = check_length(*line, piece);
                if lf {
                    *line = 0;
                }
                return r;
            }
            Chunk::Start => {
                if !c.is_ascii_hexdigit() {
                    return Err(BodyError::Malformed);
                }
                *state = Chunk::Digits;
                *remaining = 0;
                *bits = 60;
                *blanks = 0;
                *line = 1;
            }
            _ => {}
        }
        if lf {
            if strict && *state != Chunk::Lf {
                return Err(BodyError::Malformed);
            }
            check_length(*line, piece)?;
            *line = 0;
            *state = if *remaining > 0 {
                Chunk::Data
            } else {
                Chunk::Trailers
            };
            return Ok(());
        } else if *state == Chunk::Lf {
            return Err(BodyError::Malformed);
        } else if c == b'\r' {
            *state = Chunk::Lf;
        } else if c == b';' {
            *state = Chunk::Ext;
        } else if *state == Chunk::Ext {
            if c != b'\t' && (c < 0x20 || c == 0x7f) {
                return Err(BodyError::Malformed);
            }
        } else if c == b' ' || c == b'\t' {
            *state = Chunk::Blank;
            *blanks += 1;
            if *blanks > 10 {
                return Err(BodyError::Malformed);
            }
        } else if *state == Chunk::Blank {
            return Err(BodyError::Malformed);
        } else if *state == Chunk::Digits {
            if !(*remaining == 0 && c == b'0') {
                *bits -= 4;
                if *bits < 0 {
                    return Err(BodyError::TooLarge);
                }
                let v = match c {
                    b'0'..=b'9' => c - b'0',
                    b'a'..=b'f' => c - b'a' + 10,
                    b'A'..=b'F' => c - b'A' + 10,
                    _ => return Err(BodyError::Malformed),
                };
                *remaining = (*remaining << 4) | v as u64;
            }
        } else {
            return Err(BodyError::Malformed);
        }
        check_length(*line, piece)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            request_line: 8190,
            field_size: 8190,
            fields: 100,
            registered_methods: false,
            require_http10: false,
            strict: true,
        }
    }

    /// Feed `body` in one piece (`step` 0) or `step` bytes at a time;
    /// `Ok(consumed)` once done, `Err(None)` when more input is needed.
    fn feed(body: &[u8], limit: u64, step: usize) -> Result<usize, Option<BodyError>> {
        let mut r = BodyReader::chunked(limit, 8190);
        let mut buf: Vec<u8> = Vec::new();
        let mut consumed = 0;
        let mut offered = 0;
        loop {
            let take = if step == 0 {
                body.len()
            } else {
                step.min(body.len() - offered)
            };
            buf.extend_from_slice(&body[offered..offered + take]);
            offered += take;
            let n = r.feed(&buf, &limits()).map_err(Some)?;
            buf.drain(..n);
            consumed += n;
            if r.is_done() {
                return Ok(consumed);
            }
            if offered == body.len() {
                return Err(None);
            }
        }
    }

    /// Chunked bodies POSTed to a static file on Apache 2.4.71 (raw requests
    /// through a socket), with the status it answered: 200 when the body was
    /// read and discarded, else the error.
    #[test]
    fn chunked_as_apache() {
        let long_ext = |total: usize| {
            let mut l = b"5;".to_vec();
            l.resize(total - 2, b'a');
            l.extend_from_slice(b"\r\nhello\r\n0\r\n\r\n");
            l
        };
        let rows: Vec<(&str, Vec<u8>, u16)> = vec![
            ("plain", b"5\r\nhello\r\n0\r\n\r\n".to_vec(), 200),
            ("extensions", b"5;a=b\r\nhello\r\n0;x\r\n\r\n".to_vec(), 200),
            (
                "trailer",
                b"5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n".to_vec(),
                200,
            ),
            (
                "bad trailer",
                b"5\r\nhello\r\n0\r\nX-T\r\n\r\n".to_vec(),
                400,
            ),
            ("bad size", b"zz\r\nhello\r\n0\r\n\r\n".to_vec(), 400),
            ("negative", b"-5\r\nhello\r\n0\r\n\r\n".to_vec(), 400),
            (
                "18 hex digits",
                b"ffffffffffffffffff\r\nhello\r\n".to_vec(),
                413,
            ),
            ("16 hex digits", b"ffffffffffffffff\r\nhello".to_vec(), 413),
            (
                "leading zeros",
                [b"0".repeat(50), b"5\r\nhello\r\n0\r\n\r\n".to_vec()].concat(),
                200,
            ),
            ("LF only", b"5\nhello\r\n0\r\n\r\n".to_vec(), 400),
            ("data overrun", b"5\r\nhelloX\r\n0\r\n\r\n".to_vec(), 400),
            ("blanks", b"5  \r\nhello\r\n0\r\n\r\n".to_vec(), 200),
            (
                "11 blanks",
                b"5           \r\nhello\r\n0\r\n\r\n".to_vec(),
                400,
            ),
            (
                "control in extension",
                b"5;a\x01\r\nhello\r\n0\r\n\r\n".to_vec(),
                400,
            ),
            ("9000-byte extension", long_ext(9002), 413),
            ("empty size line", b"\r\nhello\r\n0\r\n\r\n".to_vec(), 400),
            // A size line may be 8190 bytes with its CR LF, not 8191.
            ("8190-byte size line", long_ext(8190), 200),
            ("8191-byte size line", long_ext(8191), 413),
        ];
        for (name, body, want) in rows {
            for step in [0, 1, 7] {
                let got = match feed(&body, 0, step) {
                    Ok(_) => 200,
                    Err(Some(e)) => e.status(),
                    Err(None) => 0,
                };
                assert_eq!(got, want, "{name} (step {step})");
            }
        }
        // 15 significant hex digits are a valid (huge) size: Apache waits for the data.
        assert_eq!(feed(b"fffffffffffffff\r\nhel", 0, 0), Err(None));
    }

    /// `HttpProtocolOptions Unsafe`: chunk lines and trailers may end in a
    /// bare LF (observed on Apache 2.4.71, case `protocol/unsafe`).
    #[test]
    fn bare_lf_chunk_lines_under_unsafe() {
        let lax = Limits {
            strict: false,
            ..limits()
        };
        for body in [
            &b"5\nhello\n6;e=1\n world\n0\nX-T: t\n\n"[..],
            b"5\r\nhello\n0\r\n\r\n",
        ] {
            let mut r = BodyReader::chunked(0, 8190);
            assert_eq!(r.feed(body, &lax), Ok(body.len()), "{body:?}");
            assert!(r.is_done());
            let mut r = BodyReader::chunked(0, 8190);
            assert!(r.feed(body, &limits()).is_err(), "strict: {body:?}");
        }
        // A CR must still be followed by LF.
        let mut r = BodyReader::chunked(0, 8190);
        assert!(r.feed(b"5\r\rhello\r\n0\r\n\r\n", &lax).is_err());
    }

    #[test]
    fn consumes_exactly_the_body() {
        let raw = b"5\r\nhello\r\n0\r\nA: b\r\n\r\nGET / HTTP/1.1\r\n";
        assert_eq!(feed(raw, 0, 0), Ok(raw.len() - 16));
        assert_eq!(feed(raw, 0, 3), Ok(raw.len() - 16));
        let mut r = BodyReader::length(5, 0);
        assert_eq!(r.feed(b"helloGET", &limits()), Ok(5));
        assert!(r.is_done());
        assert!(BodyReader::length(0, 0).is_done());
    }

    /// A prefetch stops after its share of data and goes on from there.
    #[test]
    fn feed_upto_stops_after_the_data_asked_for() {
        let raw = b"5\r\nhello\r\n3\r\nabc\r\n0\r\n\r\n";
        let mut r = BodyReader::chunked(0, 8190);
        let mut got = Vec::new();
        let n = r
            .feed_upto(raw, &limits(), 7, &mut |d| got.extend_from_slice(d))
            .unwrap();
        assert_eq!((got.as_slice(), n), (&b"helloab"[..], 15));
        assert!(!r.is_done());
        let m = r
            .feed_with(&raw[n..], &limits(), &mut |d| got.extend_from_slice(d))
            .unwrap();
        assert_eq!((got.as_slice(), n + m), (&b"helloabc"[..], raw.len()));
        assert!(r.is_done());
    }

    /// `LimitRequestBody 10`: Apache answered 413 once more than 10 bytes
    /// of data arrived (chunk framing not counted).
    #[test]
    fn limit() {
        assert_eq!(
            feed(b"5\r\nhello\r\n5\r\nhello\r\n0\r\n\r\n", 10, 0).map(|_| ()),
            Ok(())
        );
        assert_eq!(
            feed(b"5\r\nhello\r\n6\r\nhello!\r\n0\r\n\r\n", 10, 0),
            Err(Some(BodyError::TooLarge))
        );
        let mut r = BodyReader::length(11, 10);
        assert_eq!(r.feed(b"0123456789", &limits()), Ok(10));
        assert_eq!(r.feed(b"a", &limits()), Err(BodyError::TooLarge));
    }
}
