//! The FastCGI 1.0 record layer (the FastCGI specification, section 3 and
//! 5): the 8-byte record header, `FCGI_BEGIN_REQUEST`, name-value pairs for
//! `FCGI_PARAMS`, stream records, and an incremental record reader.
//!
//! Parameters are packed whole into records of at most 16 KiB, as Apache's
//! mod_proxy_fcgi packs them: PHP-FPM decodes each `FCGI_PARAMS` record on
//! its own, so a pair must not span two records; a pair too large for one
//! record is left out (and reported).

use bytes::{Buf, BufMut, Bytes, BytesMut};

pub const VERSION: u8 = 1;
pub const BEGIN_REQUEST: u8 = 1;
pub const END_REQUEST: u8 = 3;
pub const PARAMS: u8 = 4;
pub const STDIN: u8 = 5;
pub const STDOUT: u8 = 6;
pub const STDERR: u8 = 7;

pub const RESPONDER: u16 = 1;
/// `FCGI_KEEP_CONN`: the backend keeps the connection after the request.
pub const KEEP_CONN: u8 = 1;
pub const HEADER_LEN: usize = 8;
/// Largest content of one record.
pub const MAX_CONTENT: usize = 0xffff;
/// Largest `FCGI_PARAMS` record content (mod_proxy_fcgi's choice).
pub const PARAMS_RECORD: usize = 16 * 1024;

/// Append one record header.
pub fn put_header(out: &mut BytesMut, kind: u8, id: u16, len: usize) {
    debug_assert!(len <= MAX_CONTENT);
    out.put_u8(VERSION);
    out.put_u8(kind);
    out.put_u16(id);
    out.put_u16(len as u16);
    out.put_u8(0);
    out.put_u8(0);
}

/// Append `FCGI_BEGIN_REQUEST` for a responder.
pub fn put_begin(out: &mut BytesMut, id: u16, keep_conn: bool) {
    put_header(out, BEGIN_REQUEST, id, 8);
    out.put_u16(RESPONDER);
    out.put_u8(if keep_conn { KEEP_CONN } else { 0 });
    out.put_slice(&[0; 5]);
}

/// Append stream records (`FCGI_STDIN` …) carrying `data`; an empty
/// `data` writes the empty record that ends the stream.
pub fn put_stream(out: &mut BytesMut, kind: u8, id: u16, data: &[u8]) {
    if data.is_empty() {
        put_header(out, kind, id, 0);
        return;
    }
    for piece in data.chunks(MAX_CONTENT) {
        put_header(out, kind, id, piece.len());
        out.put_slice(piece);
    }
}

fn put_len(out: &mut Vec<u8>, n: usize) {
    if n < 128 {
        out.push(n as u8);
    } else {
        out.extend_from_slice(&((n as u32) | 0x8000_0000).to_be_bytes());
    }
}

fn pair_len(name: &[u8], value: &[u8]) -> usize {
    let l = |n: usize| if n < 128 { 1 } else { 4 };
    l(name.len()) + l(value.len()) + name.len() + value.len()
}

/// Append the `FCGI_PARAMS` stream (and its empty end record). Returns the
/// names left out because one pair would not fit in a record.
pub fn put_params<'p>(
    out: &mut BytesMut,
    id: u16,
    params: impl IntoIterator<Item = (&'p str, &'p [u8])>,
) -> Vec<String> {
    let mut skipped = Vec::new();
    let mut record: Vec<u8> = Vec::with_capacity(PARAMS_RECORD);
    for (name, value) in params {
        let need = pair_len(name.as_bytes(), value);
        if need > PARAMS_RECORD {
            skipped.push(name.to_string());
            continue;
        }
        if record.len() + need > PARAMS_RECORD {
            put_header(out, PARAMS, id, record.len());
            out.put_slice(&record);
            record.clear();
        }
        put_len(&mut record, name.len());
        put_len(&mut record, value.len());
        record.extend_from_slice(name.as_bytes());
        record.extend_from_slice(value);
    }
    if !record.is_empty() {
        put_header(out, PARAMS, id, record.len());
        out.put_slice(&record);
    }
    put_header(out, PARAMS, id, 0);
    skipped
}

/// One record read back.
#[derive(Debug, PartialEq, Eq)]
pub struct Record {
    pub kind: u8,
    pub id: u16,
    pub content: Bytes,
}

/// A record that breaks the protocol.
#[derive(Debug, PartialEq, Eq)]
pub struct BadRecord(pub String);

/// Take one complete record off the front of `buf`, if there is one.
pub fn take_record(buf: &mut BytesMut) -> Result<Option<Record>, BadRecord> {
    if buf.len() < HEADER_LEN {
        return Ok(None);
    }
    if buf[0] != VERSION {
        return Err(BadRecord(format!("bad FastCGI version {}", buf[0])));
    }
    let kind = buf[1];
    let id = u16::from_be_bytes([buf[2], buf[3]]);
    let len = u16::from_be_bytes([buf[4], buf[5]]) as usize;
    let pad = buf[6] as usize;
    if buf.len() < HEADER_LEN + len + pad {
        return Ok(None);
    }
    buf.advance(HEADER_LEN);
    let content = buf.split_to(len).freeze();
    buf.advance(pad);
    Ok(Some(Record { kind, id, content }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_pairs(mut b: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
        fn len(b: &mut &[u8]) -> usize {
            if b[0] < 128 {
                let n = b[0] as usize;
                *b = &b[1..];
                n
            } else {
                let n = u32::from_be_bytes([b[0] & 0x7f, b[1], b[2], b[3]]) as usize;
                *b = &b[4..];
                n
            }
        }
        let mut out = Vec::new();
        while !b.is_empty() {
            let nl = len(&mut b);
            let vl = len(&mut b);
            out.push((b[..nl].to_vec(), b[nl..nl + vl].to_vec()));
            b = &b[nl + vl..];
        }
        out
    }

    #[test]
    fn params_round_trip_and_split() {
        let big = vec![b'x'; 300];
        let huge = vec![b'y'; PARAMS_RECORD];
        let mut many: Vec<(String, Vec<u8>)> = vec![
            ("A".into(), b"1".to_vec()),
            ("LONG".into(), big.clone()),
            ("HUGE".into(), huge),
        ];
        for i in 0..100 {
            many.push((format!("V{i}"), vec![b'v'; 500]));
        }
        let mut out = BytesMut::new();
        let skipped = put_params(
            &mut out,
            1,
            many.iter().map(|(n, v)| (n.as_str(), v.as_slice())),
        );
        assert_eq!(skipped, vec!["HUGE".to_string()]);
        let mut pairs = Vec::new();
        let mut records = 0;
        loop {
            let r = take_record(&mut out).unwrap().unwrap();
            assert_eq!(r.kind, PARAMS);
            if r.content.is_empty() {
                break;
            }
            assert!(r.content.len() <= PARAMS_RECORD);
            records += 1;
            pairs.extend(decode_pairs(&r.content));
        }
        assert!(records > 1);
        assert_eq!(pairs.len(), 102);
        assert_eq!(pairs[1], (b"LONG".to_vec(), big));
        assert!(out.is_empty());
    }

    #[test]
    fn records_come_whole() {
        let mut out = BytesMut::new();
        put_begin(&mut out, 1, true);
        put_stream(&mut out, STDOUT, 1, b"hello");
        let mut partial = BytesMut::from(&out[..20]);
        let r = take_record(&mut partial).unwrap().unwrap();
        assert_eq!(r.kind, BEGIN_REQUEST);
        assert_eq!(&r.content[..], &[0, 1, 1, 0, 0, 0, 0, 0]);
        assert_eq!(take_record(&mut partial).unwrap(), None);
        partial.extend_from_slice(&out[20..]);
        let r = take_record(&mut partial).unwrap().unwrap();
        assert_eq!((r.kind, &r.content[..]), (STDOUT, &b"hello"[..]));
    }

    #[test]
    fn padding_is_skipped() {
        let mut b = BytesMut::from(&[1u8, STDERR, 0, 1, 0, 2, 3, 0, b'h', b'i', 0, 0, 0][..]);
        let r = take_record(&mut b).unwrap().unwrap();
        assert_eq!(&r.content[..], b"hi");
        assert!(b.is_empty());
        let mut bad = BytesMut::from(&[2u8, 0, 0, 0, 0, 0, 0, 0][..]);
        assert!(take_record(&mut bad).is_err());
    }

    #[test]
    fn big_stdin_is_split() {
        let mut out = BytesMut::new();
        put_stream(&mut out, STDIN, 1, &vec![0; MAX_CONTENT + 10]);
        let a = take_record(&mut out).unwrap().unwrap();
        let b = take_record(&mut out).unwrap().unwrap();
        assert_eq!((a.content.len(), b.content.len()), (MAX_CONTENT, 10));
    }
}
