//! `ascmagic`: text recognised by its first bytes and words, and tar
//! archives by their header.

use super::rules::is_space;
use super::Found;

/// Bytes searched for words (`SMALL_HOWMANY`).
const SMALL_HOWMANY: usize = 1024;

/// Words of text files (`names`), and the types they stand for.
const WORDS: &[(&str, &str)] = &[
    ("<html>", "text/html"),
    ("<HTML>", "text/html"),
    ("<head>", "text/html"),
    ("<HEAD>", "text/html"),
    ("<title>", "text/html"),
    ("<TITLE>", "text/html"),
    ("<h1>", "text/html"),
    ("<H1>", "text/html"),
    ("<!--", "text/html"),
    ("<!DOCTYPE HTML", "text/html"),
    ("/*", "text/plain"),
    ("#include", "text/plain"),
    ("char", "text/plain"),
    ("The", "text/plain"),
    ("the", "text/plain"),
    ("double", "text/plain"),
    ("extern", "text/plain"),
    ("float", "text/plain"),
    ("real", "text/plain"),
    ("struct", "text/plain"),
    ("union", "text/plain"),
    ("CFLAGS", "text/plain"),
    ("LDFLAGS", "text/plain"),
    ("all:", "text/plain"),
    (".PRECIOUS", "text/plain"),
    (".ascii", "text/plain"),
    (".asciiz", "text/plain"),
    (".byte", "text/plain"),
    (".even", "text/plain"),
    (".globl", "text/plain"),
    ("clr", "text/plain"),
    ("(input,", "text/plain"),
    ("dcl", "text/plain"),
    ("Received:", "message/rfc822"),
    (">From", "message/rfc822"),
    ("Return-Path:", "message/rfc822"),
    ("Cc:", "message/rfc822"),
    ("Newsgroups:", "message/news"),
    ("Path:", "message/news"),
    ("Organization:", "message/news"),
];

/// `ascmagic`: troff, Fortran, the words, tar.
pub(super) fn text(buf: &[u8], found: &mut Found) -> bool {
    let at = |i: usize| buf.get(i).copied().unwrap_or(0);
    if at(0) == b'.' {
        let mut t = 1;
        while is_space(at(t)) {
            t += 1;
        }
        if (at(t).is_ascii_alphanumeric() || at(t) == b'\\')
            && (at(t + 1).is_ascii_alphanumeric() || at(t) == b'"')
        {
            found.pieces.push(b"application/x-troff".to_vec());
            return true;
        }
    }
    if matches!(at(0), b'c' | b'C') && is_space(at(1)) {
        found.pieces.push(b"text/plain".to_vec());
        return true;
    }
    let small = &buf[..buf.len().min(SMALL_HOWMANY)];
    // The escape is looked for in all of it, the words up to a NUL.
    let escapes = small.contains(&0x1b);
    let small = &small[..small.iter().position(|&b| b == 0).unwrap_or(small.len())];
    for token in small
        .split(|&b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0c))
        .filter(|t| !t.is_empty())
    {
        if let Some((_, ty)) = WORDS.iter().find(|(w, _)| w.as_bytes() == token) {
            found.pieces.push(ty.as_bytes().to_vec());
            if escapes {
                found.pieces.push(b" (with escape sequences)".to_vec());
            }
            return true;
        }
    }
    if is_tar(buf) {
        found.pieces.push(b"application/x-tar".to_vec());
        return true;
    }
    false
}

/// `is_tar`: a 512-byte header whose checksum holds.
fn is_tar(buf: &[u8]) -> bool {
    let Some(header) = buf.get(..512) else {
        return false;
    };
    let recorded = from_octal(&header[148..156]);
    let mut sum: i64 = header.iter().map(|&b| i64::from(b)).sum();
    sum -= header[148..156].iter().map(|&b| i64::from(b)).sum::<i64>();
    sum += i64::from(b' ') * 8;
    sum == recorded
}

/// `from_oct`: -1 for a field that is blank or not octal.
fn from_octal(field: &[u8]) -> i64 {
    let mut digs = field.len();
    let mut i = 0;
    while is_space(field[i]) {
        i += 1;
        digs -= 1;
        if digs == 0 {
            return -1;
        }
    }
    let mut value: i64 = 0;
    while digs > 0 && matches!(field[i], b'0'..=b'7') {
        value = (value << 3) | i64::from(field[i] - b'0');
        i += 1;
        digs -= 1;
    }
    if digs > 0 && field[i] != 0 && !is_space(field[i]) {
        return -1;
    }
    value
}
