//! Reading logical lines the way Apache's `ap_varbuf_cfg_getline` does.
//!
//! Line reading decides more than it seems: which physical lines join, which
//! line number an error names, when a line is "too long", and a few
//! surprises that change whether a directive is seen at all. This module
//! reproduces Apache's reader step by step instead of approximating it with
//! `lines()`, because every one of these is visible to users:
//!
//! * A physical line ends after LF. If the buffer then ends in `\` LF or
//!   `\` CR LF, the backslash and the line end are removed and the next
//!   physical line is appended. The test looks at the whole buffer, so an
//!   empty line right after a continued line that ended in `\\` continues
//!   again, eating the remaining backslash.
//! * The finished line is trimmed of C-`isspace` bytes at both ends (so CRLF
//!   files work) and gets the number of the *last* physical line read.
//! * A NUL byte ends the physical line there (Apache uses C strings); the
//!   rest of that physical line is discarded and it never continues.
//! * Length: a logical line may hold `max_line_len` bytes counting the CR/LF
//!   that ends it (8192 for `.htaccess`: 8191 bytes and LF pass, 8191 bytes
//!   and CR LF fail, a last line of 8192 bytes with no LF passes). Joined
//!   lines count together, without the removed `\` and line ends.
//!   The error names the last physical line, or, when the line does not even
//!   fit Apache's largest read buffer (16327 bytes for `.htaccess`), the
//!   physical line where that happened.
//! * Apache's read buffer starts at 207 bytes and grows. When a last line
//!   with no LF ends exactly where a full buffer ends, Apache sees the end
//!   of the file on the retry and drops that line without a word (observed:
//!   a final 206-byte or 8134-byte line with no newline is ignored). This
//!   reader does the same where Apache's buffer sizes are predictable (the
//!   first buffer, and every size reached through the allocator, from 8135
//!   bytes on); between those, Apache's sizes depend on the memory pool's
//!   layout, so the line is kept.

use crate::words::trim;

/// Apache's first buffer: `ap_varbuf_init(.., 200)` rounds 201 up to 208
/// and keeps one byte for the NUL.
const INITIAL_AVAIL: usize = 207;
/// Apache's `VARBUF_SMALL_SIZE`: up to here buffers come from the pool.
const SMALL_SIZE: usize = 2048;
/// Bytes of allocator bookkeeping in front of a large buffer (memory node
/// header plus Apache's varbuf info, both 8-aligned on 64-bit systems).
const NODE_OVERHEAD: usize = 40 + 16;
/// The APR allocator's granularity and minimum block.
const BOUNDARY: usize = 4096;
const MIN_ALLOC: usize = 8192;

/// One logical line: trimmed bytes and the line number Apache gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LogicalLine {
    pub text: Vec<u8>,
    pub line: u32,
}

/// "Line too long", detected while reading physical line `line`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooLong {
    pub line: u32,
}

enum Status {
    Success,
    Eof,
    NoSpace,
}

/// A reader over the whole input, one logical line at a time.
pub(crate) struct Lines<'a> {
    input: &'a [u8],
    pos: usize,
    line: u32,
    max_len: usize,
    /// Apache's buffer size (usable bytes, without the NUL).
    avail: usize,
    /// The bytes read for the current logical line.
    buf: Vec<u8>,
    done: bool,
}

impl<'a> Lines<'a> {
    pub fn new(input: &'a [u8], max_len: usize) -> Self {
        Lines {
            input,
            pos: 0,
            line: 0,
            max_len,
            avail: INITIAL_AVAIL,
            buf: Vec::new(),
            done: false,
        }
    }

    /// The next logical line, `None` at the end of the input.
    pub fn next_line(&mut self) -> Result<Option<LogicalLine>, TooLong> {
        if self.done {
            return Ok(None);
        }
        self.buf.clear();
        let mut status;
        loop {
            status = self.read_physical_lines(self.avail);
            if let Status::NoSpace = status {
                if self.avail >= self.max_len {
                    self.done = true;
                    return Err(TooLong { line: self.line });
                }
                let before = self.avail;
                self.avail = grow(self.avail, (self.avail * 2).min(self.max_len));
                if self.pos >= self.input.len() && !size_is_predictable(before) {
                    // Apache would drop the line here only if its pool
                    // happened to give it exactly this buffer; assume not.
                    // The line keeps the number of the physical line read.
                    status = Status::Success;
                    break;
                }
                // The same physical line is read on into the larger buffer.
                self.line = self.line.saturating_sub(1);
                continue;
            }
            break;
        }
        match status {
            Status::Eof | Status::NoSpace => {
                self.done = true;
                Ok(None)
            }
            Status::Success => {
                if self.buf.len() > self.max_len {
                    self.done = true;
                    return Err(TooLong { line: self.line });
                }
                Ok(Some(LogicalLine {
                    text: trim(&self.buf).to_vec(),
                    line: self.line,
                }))
            }
        }
    }

    /// Apache's `ap_cfg_getline_core` with a `gets` reader: appends to
    /// `self.buf` (whose current length is the offset to write at) until a
    /// line end that does not continue, the end of input, or a full buffer.
    fn read_physical_lines(&mut self, bufsize: usize) -> Status {
        let offset = self.buf.len();
        let mut cbuf = offset;
        loop {
            self.line = self.line.saturating_add(1);
            let Some(data) = self.gets(bufsize.saturating_sub(cbuf)) else {
                if cbuf != offset {
                    self.buf.truncate(cbuf);
                    break;
                }
                return Status::Eof;
            };
            self.buf.truncate(cbuf);
            let data = match data.iter().position(|&b| b == 0) {
                Some(nul) => &data[..nul],
                None => data,
            };
            self.buf.extend_from_slice(data);
            let mut cp = self.buf.len();
            if cp > 0 && self.buf[cp - 1] == b'\n' {
                cp -= 1;
                if cp > 0 && self.buf[cp - 1] == b'\r' {
                    cp -= 1;
                }
                if cp > 0 && self.buf[cp - 1] == b'\\' {
                    cp -= 1;
                    cbuf = cp;
                    self.buf.truncate(cp);
                    continue;
                }
            } else if cp + 1 >= bufsize {
                return Status::NoSpace;
            }
            break;
        }
        Status::Success
    }

    /// `apr_file_gets`: at most `size - 1` bytes, stopping after LF; `None`
    /// when nothing is left to read.
    fn gets(&mut self, size: usize) -> Option<&'a [u8]> {
        let input = self.input;
        let rest = input.get(self.pos..).unwrap_or(&[]);
        if size <= 1 {
            return Some(&[]);
        }
        if rest.is_empty() {
            return None;
        }
        let window = &rest[..rest.len().min(size - 1)];
        let take = match window.iter().position(|&b| b == b'\n') {
            Some(lf) => lf + 1,
            None => window.len(),
        };
        self.pos += take;
        Some(&rest[..take])
    }
}

/// Apache's `ap_varbuf_grow` (sizes only): at least double, small buffers
/// rounded to 8 bytes, large ones to whole allocator blocks.
fn grow(avail: usize, requested: usize) -> usize {
    if requested <= avail {
        return avail;
    }
    let mut len = requested.max(avail.saturating_mul(2));
    len = len.saturating_add(1);
    if len <= SMALL_SIZE {
        round_up(len, 8) - 1
    } else {
        let block = round_up(len.saturating_add(NODE_OVERHEAD), BOUNDARY).max(MIN_ALLOC);
        block - NODE_OVERHEAD - 1
    }
}

fn round_up(n: usize, to: usize) -> usize {
    n.div_ceil(to).saturating_mul(to)
}

/// Whether Apache's buffer is known to have exactly this size: its first
/// buffer, or one from the allocator. Grown small buffers may be extended
/// in place by the pool, so their size is not known from outside.
fn size_is_predictable(avail: usize) -> bool {
    avail == INITIAL_AVAIL || avail > SMALL_SIZE
}

#[cfg(test)]
mod tests {
    use super::*;

    const HT: usize = 8192;

    fn all(input: &[u8], max: usize) -> Result<Vec<(String, u32)>, TooLong> {
        let mut r = Lines::new(input, max);
        let mut out = Vec::new();
        while let Some(l) = r.next_line()? {
            out.push((String::from_utf8_lossy(&l.text).into_owned(), l.line));
        }
        Ok(out)
    }

    fn lines(input: &[u8]) -> Vec<(String, u32)> {
        all(input, HT).unwrap_or_else(|e| panic!("unexpected error at line {}", e.line))
    }

    fn too_long_at(input: &[u8]) -> u32 {
        match all(input, HT) {
            Err(e) => e.line,
            Ok(l) => panic!("expected Line too long, got {l:?}"),
        }
    }

    fn s(t: &str, n: u32) -> (String, u32) {
        (t.to_string(), n)
    }

    #[test]
    fn plain_lines_and_numbers() {
        assert_eq!(
            lines(b"a\nb\n\nc"),
            [s("a", 1), s("b", 2), s("", 3), s("c", 4)]
        );
        assert!(lines(b"").is_empty());
    }

    /// A last line without a line end that outgrows the read buffer keeps
    /// the number of its physical line at every length (found by the
    /// conf_parse fuzz target: a 414-byte line was numbered 0).
    #[test]
    fn long_last_lines_keep_their_number() {
        for len in 1..9000 {
            let one = vec![b'x'; len];
            for (_, n) in all(&one, HT).unwrap_or_default() {
                assert_eq!(n, 1, "a lone line of {len} bytes");
            }
            let mut two = b"a\n".to_vec();
            two.extend_from_slice(&one);
            for (i, (_, n)) in all(&two, HT).unwrap_or_default().iter().enumerate() {
                assert_eq!(*n, i as u32 + 1, "a second line of {len} bytes");
            }
        }
    }

    #[test]
    fn crlf_and_whitespace_trimmed() {
        assert_eq!(lines(b"  a b \r\n\tc\r\n"), [s("a b", 1), s("c", 2)]);
    }

    #[test]
    fn lone_cr_is_not_a_line_end() {
        assert_eq!(lines(b"a\rb\n"), [s("a\rb", 1)]);
    }

    #[test]
    fn continuation_joins_and_reports_last_line() {
        assert_eq!(lines(b"a \\\n b\nc\n"), [s("a  b", 2), s("c", 3)]);
        assert_eq!(lines(b"a\\\r\nb\r\n"), [s("ab", 2)]);
        assert_eq!(lines(b"a\\\nb\\\nc\n"), [s("abc", 3)]);
    }

    #[test]
    fn continuation_into_eof_counts_one_more_line() {
        // Apache reports line 3 for a line continued on line 2 at EOF.
        assert_eq!(lines(b"x\na \\\n"), [s("x", 1), s("a", 3)]);
        assert_eq!(lines(b"x\na \\\n b \\"), [s("x", 1), s("a  b \\", 3)]);
    }

    #[test]
    fn backslash_only_before_line_end_continues() {
        assert_eq!(lines(b"a\\ b\n"), [s("a\\ b", 1)]);
        assert_eq!(lines(b"a\\\r\r\nb\n"), [s("a\\", 1), s("b", 2)]);
        assert_eq!(lines(b"a\\"), [s("a\\", 1)]);
    }

    #[test]
    fn double_backslash_still_continues() {
        assert_eq!(lines(b"a\\\\\nb\n"), [s("a\\b", 2)]);
    }

    #[test]
    fn empty_line_after_double_backslash_continues_again() {
        // Observed: "Header set X-A a\\" + empty line + next line join.
        assert_eq!(lines(b"a\\\\\n\nb\n"), [s("ab", 3)]);
        assert_eq!(lines(b"\\\n\nb\n"), [s("", 2), s("b", 3)]);
    }

    #[test]
    fn nul_ends_the_physical_line() {
        assert_eq!(lines(b"a\0b\\\nc\n"), [s("a", 1), s("c", 2)]);
        assert_eq!(lines(b"a\\\n\0x\ny\n"), [s("a", 2), s("y", 3)]);
    }

    #[test]
    fn htaccess_length_limit() {
        let ok = [vec![b'x'; 8191], b"\n".to_vec()].concat();
        assert_eq!(lines(&ok).len(), 1);
        let lf = [vec![b'x'; 8192], b"\n".to_vec()].concat();
        assert_eq!(too_long_at(&lf), 1);
        let crlf = [vec![b'x'; 8191], b"\r\n".to_vec()].concat();
        assert_eq!(too_long_at(&crlf), 1);
        let at_eof = [b"y\n".to_vec(), vec![b'x'; 8192]].concat();
        assert_eq!(lines(&at_eof).len(), 2);
        let over_at_eof = [b"y\n".to_vec(), vec![b'x'; 8193]].concat();
        assert_eq!(too_long_at(&over_at_eof), 2);
    }

    #[test]
    fn joined_lines_share_the_limit() {
        let fits = [
            vec![b'x'; 4000],
            b"\\\n".to_vec(),
            vec![b'y'; 4191],
            b"\n".to_vec(),
        ]
        .concat();
        assert_eq!(
            lines(&fits),
            [(format!("{}{}", "x".repeat(4000), "y".repeat(4191)), 2)]
        );
        let over = [
            vec![b'x'; 4000],
            b"\\\n".to_vec(),
            vec![b'y'; 4192],
            b"\n".to_vec(),
        ]
        .concat();
        assert_eq!(too_long_at(&over), 2);
        let three = [
            b"h\n".to_vec(),
            vec![b'x'; 4000],
            b"\\\n".to_vec(),
            vec![b'y'; 4192],
            b"\\\n".to_vec(),
            b"z\n".to_vec(),
        ]
        .concat();
        assert_eq!(too_long_at(&three), 4);
    }

    #[test]
    fn overflowing_the_largest_buffer_names_that_line() {
        // Observed bisection on Apache 2.4: the buffer holds 16326 bytes.
        let build = |n: usize| {
            [
                b"h\n".to_vec(),
                vec![b'x'; 100],
                b"\\\n".to_vec(),
                vec![b'y'; n],
                b"\\\n".to_vec(),
                b"z\n".to_vec(),
            ]
            .concat()
        };
        assert_eq!(too_long_at(&build(16224)), 4);
        assert_eq!(too_long_at(&build(16225)), 3);
    }

    #[test]
    fn line_filling_a_known_buffer_at_eof_is_dropped() {
        for n in [206usize, 8134] {
            let input = vec![b'x'; n];
            assert!(lines(&input).is_empty(), "{n}");
        }
        for n in [205usize, 207, 414, 622, 8133, 8135] {
            let input = vec![b'x'; n];
            assert_eq!(lines(&input).len(), 1, "{n}");
        }
        // Once the buffer has grown, 206 bytes no longer fill it.
        let input = [vec![b'a'; 300], b"\n".to_vec(), vec![b'x'; 206]].concat();
        assert_eq!(lines(&input).len(), 2);
        // With a line end, nothing is dropped.
        let input = [vec![b'x'; 206], b"\n".to_vec()].concat();
        assert_eq!(lines(&input).len(), 1);
    }

    #[test]
    fn main_config_limit_is_large() {
        let long = vec![b'x'; 100_000];
        assert_eq!(all(&long, 16 * 1024 * 1024).map(|l| l.len()), Ok(1));
    }

    #[test]
    fn buffer_sizes_follow_apache() {
        assert_eq!(grow(207, 414), 415);
        assert_eq!(grow(1663, 3326), 8135);
        assert_eq!(grow(8135, 8192), 16327);
        assert_eq!(grow(16327, 32654), 32711);
    }

    #[test]
    fn tiny_limits_do_not_loop() {
        for max in 0..12 {
            let _ = all(b"abc\\\ndef\nghijklmnop\n\\\n", max);
        }
    }
}
