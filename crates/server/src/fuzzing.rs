//! Entry points for the fuzz targets in `fuzz/` (not an API): the parsers
//! that read what a client sends, run over arbitrary bytes the way a
//! connection runs them. None may panic, and each must finish in time
//! linear in its input whatever the bytes are.

use crate::body::BodyReader;
use crate::head::{HeadParser, Parse};
use crate::Limits;
use bytes::Bytes;
use std::net::SocketAddr;

/// The limits of `HttpProtocolOptions Strict` or `Unsafe`, as the input's
/// second byte chooses: both readings are fuzzed.
fn limits_for(data: &[u8]) -> Limits {
    Limits {
        strict: data.get(1).is_none_or(|&b| b & 1 == 0),
        ..Limits::default()
    }
}

/// Parse `data` as a request head, first fed in two pieces (as two reads
/// would bring it, split at a point the input chooses), then build the
/// engine's request from it when it is complete.
pub fn request_head(data: &[u8]) {
    let limits = limits_for(data);
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
    let limits = limits_for(data);
    let mut reader = BodyReader::chunked(1 << 20, limits.field_size);
    let mut rest = data;
    while !reader.is_done() {
        match reader.feed(rest, &limits) {
            Ok(0) | Err(_) => break,
            Ok(n) => rest = &rest[n.min(rest.len())..],
        }
    }
}

/// Read `data` as the start of a connection that must begin with a PROXY
/// protocol header, in reads of the sizes the reader asks for (a line up
/// to its LF; byte reads cut to a length the input chooses), as
/// `proxy_protocol` reads a socket. The header may never take more than
/// Apache's limits (108 bytes for v1, 232 for v2) off the connection.
pub fn proxy_header(data: &[u8]) {
    use htaccel_engine::modules::remoteip::proxy_header::{
        HeaderReader, Progress, Read, LINE_READ_MAX,
    };
    let step = data.first().map_or(1, |&b| usize::from(b % 16) + 1);
    let mut reader = HeaderReader::new(SocketAddr::from(([127, 0, 0, 1], 40000)));
    let mut pos = 0;
    while pos < data.len() {
        let rest = &data[pos..];
        let take = match reader.next_read() {
            Read::Bytes(n) => n.min(step).min(rest.len()),
            Read::Line => rest
                .iter()
                .position(|&b| b == b'\n')
                .map_or(rest.len(), |i| i + 1)
                .min(LINE_READ_MAX),
        };
        let progress = reader.feed(&rest[..take]);
        pos += take;
        match progress {
            Progress::More(_) => {}
            Progress::Done(..) => {
                assert!(pos <= 232, "a header of {pos} bytes was accepted");
                return;
            }
            Progress::Failed(_) => return,
        }
    }
}

/// Read `data` as an OCSP responder's answer (HTTP head and DER
/// response), as OCSP stapling reads it (`tls::stapling`).
pub fn ocsp_answer(data: &[u8]) {
    crate::tls::stapling::read_untrusted(data);
}
