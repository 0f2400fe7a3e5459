//! mod_remoteip's PROXY protocol at accept time: on an address where the
//! configuration requires it (`Handler::proxy_protocol`), the header is
//! read before anything else, TLS included, and the client it names
//! becomes the connection's client for everything after it.
//!
//! The bytes are read exactly as Apache's input filter reads them
//! (`htaccel_engine::modules::remoteip::proxy_header` says how much each
//! read may take); a line is found by peeking, so nothing after the header
//! is ever taken from the socket, and the connection loop or the TLS
//! handshake starts on the very next byte.
//!
//! Bounded as in Apache: at most 232 bytes of header (108 for v1); the
//! time mod_reqtimeout gives the stage the header is read in (the header
//! stage on a plain address, the handshake's limit on a TLS address; its
//! first limit, no `MinRate` growth for so few bytes), never more than
//! `Timeout`; on a TLS address the handshake then has its own limit, where
//! Apache counts both against one. The reads wait on the event loop, never
//! the worker thread.
//!
//! A connection without a valid header is closed without a byte sent, the
//! reason in the error log as Apache words it; one that runs out of time
//! on a plain address also gets Apache's `408` access-log line.

use crate::conn::Shared;
use htaccel_engine::http::AccessEntry;
use htaccel_engine::modules::remoteip::proxy_header::{
    HeaderReader, LogLine, Progress, Read, LINE_READ_MAX,
};
use std::net::SocketAddr;
use std::time::{Duration, SystemTime};
use tokio::io::Interest;
use tokio::net::TcpStream;
use tokio::time::Instant;

/// Who the connection is for.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Client {
    /// The client: the peer, or the address its PROXY header named.
    pub addr: SocketAddr,
    /// The connection's own peer, when a PROXY header was read.
    pub proxied_by: Option<SocketAddr>,
}

impl Client {
    /// A connection that speaks for itself.
    pub(crate) fn direct(addr: SocketAddr) -> Client {
        Client {
            addr,
            proxied_by: None,
        }
    }
}

/// How long a peek waits before looking again for the rest of a line that
/// came in parts.
const LINE_POLL: Duration = Duration::from_millis(10);

/// The client of a connection just accepted from `peer` on `local`: the
/// peer itself unless the PROXY protocol is required there, else the
/// header's client. `None`: the connection is to be closed (what Apache
/// logs is logged).
pub(crate) async fn client(
    tcp: &TcpStream,
    peer: SocketAddr,
    local: SocketAddr,
    shared: &Shared,
    tls: bool,
) -> Option<Client> {
    if !shared.handler.proxy_protocol(local, peer) {
        return Some(Client::direct(peer));
    }
    let log = |line: &LogLine| {
        shared
            .handler
            .log()
            .error(line.level, "remoteip", Some(peer), &line.message);
    };
    log(&LogLine {
        level: "debug",
        message: format!(
            "AH03503: RemoteIPProxyProtocol: enabled on connection to {}:{}",
            local.ip(),
            local.port()
        ),
    });
    let received = SystemTime::now();
    let started = Instant::now();
    let limit = if tls {
        crate::tls::handshake_limit(shared, local)
    } else {
        crate::conn::header_limit(shared, local)
    };
    let deadline = started + limit;
    let mut reader = HeaderReader::new(peer);
    let mut buf = [0u8; LINE_READ_MAX];
    loop {
        let got = match reader.next_read() {
            Read::Bytes(n) => read_some(tcp, &mut buf[..n], deadline).await,
            Read::Line => read_line(tcp, &mut buf, deadline).await,
        };
        let n = match got {
            Got::Bytes(n) => n,
            Got::Eof | Got::Timeout => {
                let ended = matches!(got, Got::Eof);
                reader.interrupted(ended).iter().for_each(log);
                take_what_came(tcp);
                if !ended && !tls {
                    log_408(shared, peer, local, received, started);
                }
                return None;
            }
            Got::Error => return None,
        };
        match reader.feed(&buf[..n]) {
            Progress::More(_) => {}
            Progress::Done(client, valid) => {
                log(&valid);
                return Some(Client {
                    addr: client,
                    proxied_by: Some(peer),
                });
            }
            Progress::Failed(lines) => {
                lines.iter().for_each(log);
                take_what_came(tcp);
                return None;
            }
        }
    }
}

/// What Apache's core had already read off the socket when the header
/// failed (one socket read, `APR_BUCKET_BUFF_SIZE`), so that the close is
/// the same: a FIN when no more than that came, not a reset for unread
/// bytes.
fn take_what_came(tcp: &TcpStream) {
    let mut sink = [0u8; 8000];
    let _ = tcp.try_read(&mut sink);
}

/// Apache logs the `408` of a connection whose first request never came:
/// the header's read timed out within the first request's read.
fn log_408(
    shared: &Shared,
    peer: SocketAddr,
    local: SocketAddr,
    received: SystemTime,
    started: Instant,
) {
    let duration = started.elapsed();
    htaccel_engine::stats::request_done(0, duration.as_micros() as u64);
    shared.handler.log().access(&AccessEntry {
        request: None,
        remote: peer,
        conn_peer: peer,
        local,
        status: 408,
        bytes_sent: 0,
        response_headers: &[],
        received,
        duration,
        remote_user: None,
        bytes_out: Some(0),
        env: &[],
        notes: &[],
        remote_host: None,
        bytes_in: None,
        ttfb: None,
        framing: Default::default(),
    });
}

enum Got {
    Bytes(usize),
    Eof,
    Timeout,
    Error,
}

/// What is there, at most `buf.len()` bytes.
async fn read_some(tcp: &TcpStream, buf: &mut [u8], deadline: Instant) -> Got {
    loop {
        match tokio::time::timeout_at(deadline, tcp.readable()).await {
            Err(_) => return Got::Timeout,
            Ok(Err(_)) => return Got::Error,
            Ok(Ok(())) => {}
        }
        match tcp.try_read(buf) {
            Ok(0) => return Got::Eof,
            Ok(n) => return Got::Bytes(n),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(_) => return Got::Error,
        }
    }
}

/// One line: up to and including its LF, or `buf.len()` bytes without
/// one. The bytes are peeked until the line is complete, then read, so
/// that nothing after it leaves the socket.
async fn read_line(tcp: &TcpStream, buf: &mut [u8], deadline: Instant) -> Got {
    let mut seen = 0;
    loop {
        let peeked = match tokio::time::timeout_at(deadline, tcp.peek(buf)).await {
            Err(_) => return Got::Timeout,
            Ok(Err(_)) => return Got::Error,
            Ok(Ok(0)) => return Got::Eof,
            Ok(Ok(n)) => n,
        };
        let line = match buf[..peeked].iter().position(|&b| b == b'\n') {
            Some(i) => Some(i + 1),
            None if peeked == buf.len() => Some(peeked),
            None => None,
        };
        if let Some(len) = line {
            return read_some(tcp, &mut buf[..len], deadline).await;
        }
        // The peer closed after part of a line: that part, then the end.
        if tcp
            .ready(Interest::READABLE)
            .await
            .is_ok_and(|r| r.is_read_closed())
        {
            return read_some(tcp, &mut buf[..peeked], deadline).await;
        }
        if peeked == seen
            && tokio::time::timeout_at(deadline, tokio::time::sleep(LINE_POLL))
                .await
                .is_err()
        {
            return Got::Timeout;
        }
        seen = peeked;
    }
}
