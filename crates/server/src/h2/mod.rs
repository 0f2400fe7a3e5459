//! HTTP/2: the framing of a connection whose client chose `h2` by ALPN,
//! opened with `h2c`'s preface, or switched to `h2c` by an HTTP/1.1
//! request's `Upgrade` ([`serve_upgraded`], `upgrade.rs`), on the `h2` crate.
//!
//! A session ([`serve`]) accepts streams and runs each as its own task;
//! a stream's request is answered by the same exchange as an HTTP/1.1
//! request (`crate::conn`), through a [`stream::StreamTransport`] that
//! gives the exchange the stream's request as an HTTP/1.1 message and
//! turns the answer the exchange writes back into HEADERS and DATA. This
//! is how mod_http2 served its streams in Apache 2.4 before response
//! buckets existed (`h2_to_h1`, `h2_from_h1`): every semantic of a request
//! (the engine's decision, bodies to PHP-FPM and upstreams, error pages,
//! `100-continue`, HEAD, ranges, access logs) is the one HTTP/1.1 has,
//! and what HTTP/2 changes is the framing only.
//!
//! # Limits
//!
//! `H2MaxSessionStreams` bounds the streams open at once and
//! `H2WindowSize` each stream's receive window, so what a client can make
//! the server buffer is bounded by the two. The `h2` crate bounds the
//! rest of the protocol's known abuses: the decoded header list
//! (`LimitRequestFieldSize` × `LimitRequestFields`, a 431 or a reset
//! beyond), streams reset before they are accepted (rapid reset),
//! CONTINUATION floods, SETTINGS and PING floods (its pending-frame
//! limits), and each wait for the client's window (a stalled reader) is
//! bounded by `Timeout`. A session without open streams closes after
//! `KeepAliveTimeout`, with GOAWAY, as mod_http2's does.

mod linger;
mod stream;
pub(crate) mod upgrade;

use crate::conn::{Local, Shared};
use htaccel_engine::http::http2::H2Settings;
use htaccel_engine::http::TlsInfo;
use std::cell::{Cell, RefCell};
use std::future::{poll_fn, Future};
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::task::Poll;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::Instant;

/// The client's connection preface (RFC 9113, section 3.4).
pub(crate) const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Sessions started so far (each one's number in `H2_STREAM_TAG`).
static SESSIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// What the streams of one session share.
struct Session {
    /// The client (the PROXY header's when the connection began with one).
    remote: crate::proxy_protocol::Client,
    local_addr: SocketAddr,
    tls: Option<Arc<TlsInfo>>,
    shared: Arc<Shared>,
    local: Rc<Local>,
    /// This session's number (`H2_STREAM_TAG`).
    number: u64,
    /// `H2MaxDataFrameLen` (0: the client's limit).
    max_data_frame: usize,
    /// `H2EarlyHints`.
    early_hints: bool,
    /// The core's settings of the address's base server.
    server: crate::ServerSettings,
    /// Streams being answered.
    open: Cell<usize>,
    /// Woken when a stream ends, so that an idle session starts its timer.
    ended: tokio::sync::Notify,
}

/// Serve an HTTP/2 session on `io` to its end.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn serve<IO>(
    io: IO,
    tls: Option<Arc<TlsInfo>>,
    remote: crate::proxy_protocol::Client,
    local_addr: SocketAddr,
    settings: H2Settings,
    shared: Arc<Shared>,
    local: Rc<Local>,
) where
    IO: AsyncRead + AsyncWrite + Unpin + 'static,
{
    // The session's limits and timeouts are its address's base server's.
    let server = crate::conn::address_settings(&shared, local_addr);
    let limits = &server.limits;
    let header_list = (limits.field_size as u64 + 32)
        .saturating_mul(limits.fields.max(1) as u64)
        .min(u32::MAX as u64) as u32;
    let mut builder = h2::server::Builder::new();
    builder
        .max_concurrent_streams(settings.max_streams)
        .initial_window_size(settings.window_size)
        .max_header_list_size(header_list)
        .max_frame_size(16_384)
        .max_send_buffer_size(64 * 1024);
    let id = local.register();
    let _registered = crate::conn::Registered(&local, id);
    let timeout = server.timeout;
    let io = Rc::new(RefCell::new(io));
    let handshake = builder.handshake(linger::Lent(io.clone()));
    let mut conn = match tokio::time::timeout(timeout, handshake).await {
        Ok(Ok(c)) => c,
        _ => return,
    };
    let session = Rc::new(Session {
        remote,
        local_addr,
        tls,
        shared: shared.clone(),
        local: local.clone(),
        number: SESSIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        max_data_frame: settings.max_data_frame_len as usize,
        early_hints: settings.early_hints,
        server,
        open: Cell::new(0),
        ended: tokio::sync::Notify::new(),
    });
    let keepalive = server.keepalive_timeout;
    let mut idle_since = Instant::now();
    let mut closing = false;
    loop {
        let stopping = local.stopping()
            || shared.stop.requested()
            || shared.retired.load(std::sync::atomic::Ordering::Relaxed);
        if stopping && !closing {
            conn.graceful_shutdown();
            closing = true;
        }
        let idle = session.open.get() == 0;
        let idle_deadline = idle_since + keepalive;
        if idle && !closing && Instant::now() >= idle_deadline {
            conn.graceful_shutdown();
            closing = true;
        }
        let sleep = tokio::time::sleep_until(idle_deadline);
        tokio::pin!(sleep);
        let ended = session.ended.notified();
        tokio::pin!(ended);
        let next = poll_fn(|cx| {
            if let Poll::Ready(r) = conn.poll_accept(cx) {
                return Poll::Ready(Some(r));
            }
            if !closing {
                local.set_waker(id, cx.waker());
                if local.stopping() {
                    return Poll::Ready(None);
                }
                if idle && sleep.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(None);
                }
            }
            if ended.as_mut().poll(cx).is_ready() {
                return Poll::Ready(None);
            }
            Poll::Pending
        })
        .await;
        match next {
            // A timer or a state change: look again.
            None => {
                if session.open.get() == 0 && !idle {
                    idle_since = Instant::now();
                }
            }
            Some(None) | Some(Some(Err(_))) => break,
            Some(Some(Ok((request, respond)))) => {
                session.open.set(session.open.get() + 1);
                // Boxed: the stream's future (its whole exchange) is
                // kilobytes, which the task's set-up would otherwise copy
                // several times per stream.
                tokio::task::spawn_local(Box::pin(stream::serve(
                    request,
                    respond,
                    session.clone(),
                )));
            }
        }
    }
    // The session ended: what the streams still hold is dropped with it
    // (their tasks see their sends fail), and the connection closes
    // without losing the session's last frames to a reset.
    drop(conn);
    let Ok(io) = Rc::try_unwrap(io) else {
        return;
    };
    linger::linger(&mut io.into_inner()).await;
}

/// A connection to a cleartext address whose server allows `h2c` with
/// prior knowledge (`H2Direct`): HTTP/2 when its first bytes are the
/// connection preface, HTTP/1.x otherwise (mod_http2 looks at the same
/// bytes before Apache's HTTP/1.1 input reads them). The wait for those
/// bytes is the first request's: the header stage, at most `Timeout`.
pub(crate) async fn serve_cleartext(
    tcp: tokio::net::TcpStream,
    remote: crate::proxy_protocol::Client,
    local_addr: SocketAddr,
    settings: H2Settings,
    shared: Arc<Shared>,
    local: Rc<Local>,
) {
    let deadline = Instant::now() + crate::conn::header_limit(&shared, local_addr);
    let mut first = [0u8; PREFACE.len()];
    let is_h2 = loop {
        let n = match tokio::time::timeout_at(deadline, tcp.peek(&mut first)).await {
            Ok(Ok(n)) => n,
            // Out of time or an error: HTTP/1.1 answers it as it would.
            _ => break false,
        };
        if n == 0 || !PREFACE.starts_with(&first[..n]) {
            break false;
        }
        if n == PREFACE.len() {
            break true;
        }
        // A prefix of the preface: wait for the rest.
        if tokio::time::timeout_at(
            deadline,
            tokio::time::sleep(std::time::Duration::from_millis(5)),
        )
        .await
        .is_err()
        {
            break false;
        }
    };
    if is_h2 {
        serve(tcp, None, remote, local_addr, settings, shared, local).await;
    } else {
        crate::conn::serve(
            crate::transport::Plain(tcp),
            remote,
            local_addr,
            shared,
            local,
        )
        .await;
    }
}

/// A cleartext HTTP/1.x connection whose request switched it to `h2c`
/// (`Upgrade: h2c` accepted, the `101` already queued or sent): an HTTP/2
/// session whose stream 1 is that request. `early` is what the
/// connection had read past the request. A client whose `HTTP2-Settings`
/// nghttp2 would not take gets the session's end at once (a GOAWAY), as
/// from Apache, which switches before it reads them.
pub(crate) async fn serve_upgraded(
    mut tcp: tokio::net::TcpStream,
    early: bytes::Bytes,
    up: Box<htaccel_engine::http::http2::H2cUpgrade>,
    remote: crate::proxy_protocol::Client,
    local_addr: SocketAddr,
    shared: Arc<Shared>,
    local: Rc<Local>,
) {
    if !up.client_settings_valid {
        use tokio::io::AsyncWriteExt;
        // GOAWAY: last stream 0, PROTOCOL_ERROR.
        let goaway = [0, 0, 8, 0x7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
        let timeout = crate::conn::address_settings(&shared, local_addr).timeout;
        let _ = tokio::time::timeout(timeout, tcp.write_all(&goaway)).await;
        linger::linger(&mut tcp).await;
        return;
    }
    let frame = upgrade::headers_frame(&up, 16_384);
    let io = upgrade::Upgraded::new(tcp, early, frame);
    serve(io, None, remote, local_addr, up.settings, shared, local).await;
}
