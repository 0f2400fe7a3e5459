//! Entry points for the fuzz targets in `fuzz/` (not an API): the parsers
//! that read what a client sends, run over arbitrary bytes the way a
//! connection runs them. Neither may panic, and both must finish in time
//! linear in their input whatever the bytes are.

use crate::body::BodyReader;
use crate::head::{HeadParser, Parse};
use crate::Limits;
use bytes::Bytes;
use std::net::SocketAddr;

/// Parse `data` as a request head, first fed in two pieces (as two reads
/// would bring it, split at a point the input chooses), then build the
/// engine's request from it when it is complete.
pub fn request_head(data: &[u8]) {
    let limits = Limits::default();
    let mut parser = HeadParser::new();
    let split = data
        .first()
        .map_or(0, |&b| usize::from(b) % (data.len() + 1));
    let mut parsed = parser.parse(&data[..split], &limits, false);
    if let Parse::Partial = parsed {
        parsed = parser.parse(data, &limits, false);
    }
    if let Parse::Done(n) = parsed {
        let head = Bytes::copy_from_slice(&data[..n]);
        let addr = SocketAddr::from(([127, 0, 0, 1], 8080));
        let _ = parser.finish(&head, addr, addr, None, None);
    }
}

/// Decode `data` as a chunked request body (with trailers), fed as a
/// connection feeds it: whatever was consumed is dropped, the rest is
/// offered again with nothing more.
pub fn chunked_body(data: &[u8]) {
    let limits = Limits::default();
    let mut reader = BodyReader::chunked(1 << 20, limits.field_size);
    let mut rest = data;
    while !reader.is_done() {
        match reader.feed(rest, &limits) {
            Ok(0) | Err(_) => break,
            Ok(n) => rest = &rest[n.min(rest.len())..],
        }
    }
}
