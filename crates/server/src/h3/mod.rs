//! HTTP/3: QUIC connections on UDP beside a TLS address whose servers
//! include one with `H3Engine on` (`htaccel_http3`), on quinn (QUIC) and
//! the `h3` crate (HTTP/3 framing and QPACK).
//!
//! Each UDP socket has one quinn endpoint, run by the first worker
//! thread: every QUIC connection of the socket is served there (QUIC
//! packets of one connection must reach the endpoint that knows it; a
//! client's address may change under migration, so the kernel cannot
//! spread them over threads by address as it does TCP connections).
//! A connection's handshake uses the configuration of its TLS address
//! (`crate::tls::quic`), chosen by the local address the packet came to.
//!
//! Each request stream is answered by the same exchange as an HTTP/1.1
//! request through `crate::stream_exchange` (as HTTP/2 streams are), so
//! every semantic of a request is HTTP/1.1's; what HTTP/3 changes is the
//! framing. Limits: `H3MaxStreams` streams open at once (QUIC's stream
//! credit), the decoded header section at most `LimitRequestFieldSize` ×
//! `LimitRequestFields`, QUIC's idle timeout is `Timeout`, a connection
//! without open requests is closed with GOAWAY after `KeepAliveTimeout`,
//! and each wait for the client's flow control is bounded by `Timeout`.
//! On a stop or a reload, the endpoint takes no new connection and each
//! connection sends GOAWAY, answers its requests in flight and closes.

mod stream;

use crate::conn::{Local, Shared};
use crate::generation::Current;
use crate::shutdown::Stop;
use htaccel_engine::http::TlsInfo;
use std::future::{poll_fn, Future};
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::task::Poll;
use tokio::time::Instant;

/// HTTP/3's application error codes for QUIC's CONNECTION_CLOSE (RFC 9114, section 8.1).
const H3_NO_ERROR: quinn::VarInt = quinn::VarInt::from_u32(0x100);
const H3_INTERNAL_ERROR: quinn::VarInt = quinn::VarInt::from_u32(0x102);

/// How long a connection that sent GOAWAY and answered its requests
/// waits for the client to close it before closing it itself.
const CLOSE_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// A UDP socket for HTTP/3, bound by the listeners, with the TCP port of
/// the TLS address it stands beside (the requests' local port).
pub(crate) struct H3Socket {
    pub socket: std::net::UdpSocket,
    pub tcp_port: u16,
}

/// What the streams of one connection share.
struct Session {
    remote: SocketAddr,
    local_addr: SocketAddr,
    tls: Arc<TlsInfo>,
    shared: Arc<Shared>,
    local: Rc<Local>,
    /// `H2EarlyHints` of the server the handshake chose (HTTP/3 sends
    /// the 103s HTTP/2 would).
    early_hints: bool,
    /// The core's settings of the address's base server.
    server: crate::ServerSettings,
    /// Streams being answered.
    open: std::cell::Cell<usize>,
    /// Woken when a stream ends, so that an idle connection starts its timer.
    ended: tokio::sync::Notify,
}

/// Run the endpoint of one UDP socket until the server stops; returns
/// the endpoint, whose connections may still be draining.
pub(crate) async fn accept_loop(
    h3: H3Socket,
    mut current: Current,
    local: Rc<Local>,
    stop: Stop,
) -> Option<quinn::Endpoint> {
    let bound = h3.socket.local_addr().ok()?;
    let initial = current.get().tls.as_ref()?.any_quic_config()?;
    let endpoint = quinn::Endpoint::new(
        quinn::EndpointConfig::default(),
        Some((*initial).clone()),
        h3.socket,
        Arc::new(quinn::TokioRuntime),
    )
    .ok()?;
    loop {
        let incoming = tokio::select! {
            biased;
            _ = stop.wait() => break,
            i = endpoint.accept() => match i {
                Some(i) => i,
                None => break,
            },
        };
        let shared = current.get().clone();
        let ip = incoming.local_ip().unwrap_or(bound.ip());
        let local_addr = crate::listener::unmap(SocketAddr::new(ip, h3.tcp_port));
        let remote = crate::listener::unmap(incoming.remote_address());
        // The configuration of the address the packet came to, from the
        // generation serving new connections (a reload may have turned
        // HTTP/3 off there).
        let chosen = shared.tls.as_ref().and_then(|t| {
            let port = t.port_for(local_addr)?;
            Some((
                t.clone(),
                port,
                t.quic_config(
                    port,
                    crate::conn::address_settings(&shared, local_addr).timeout,
                )?,
            ))
        });
        let Some((setup, port, config)) = chosen else {
            incoming.refuse();
            continue;
        };
        let local = local.clone();
        tokio::task::spawn_local(async move {
            let limit = crate::tls::handshake_limit(&shared, local_addr);
            let connecting = match incoming.accept_with(Arc::new(config)) {
                Ok(c) => c,
                Err(_) => return,
            };
            let conn = match tokio::time::timeout(limit, connecting).await {
                Ok(Ok(c)) => c,
                _ => return,
            };
            let sni = conn
                .handshake_data()
                .and_then(|d| d.downcast::<quinn::crypto::rustls::HandshakeData>().ok())
                .and_then(|d| d.server_name);
            let early_hints = setup
                .quic_settings(port, sni.as_deref())
                .is_some_and(|h| h.early_hints);
            let tls = Arc::new(setup.quic_info(port, sni));
            serve(conn, tls, early_hints, remote, local_addr, shared, local).await;
        });
    }
    // No new connection from now on; those open drain.
    endpoint.set_server_config(None);
    Some(endpoint)
}

/// Serve one HTTP/3 connection to its end.
async fn serve(
    conn: quinn::Connection,
    tls: Arc<TlsInfo>,
    early_hints: bool,
    remote: SocketAddr,
    local_addr: SocketAddr,
    shared: Arc<Shared>,
    local: Rc<Local>,
) {
    // The connection's limits and timeouts are its address's base server's.
    let server = crate::conn::address_settings(&shared, local_addr);
    let limits = &server.limits;
    let header_list = (limits.field_size as u64 + 32).saturating_mul(limits.fields.max(1) as u64);
    let id = local.register();
    let _registered = crate::conn::Registered(&local, id);
    let quic = conn.clone();
    let mut builder = h3::server::builder();
    builder
        .max_field_section_size(header_list)
        .send_grease(false);
    let built = builder.build::<_, bytes::Bytes>(h3_quinn::Connection::new(conn));
    let mut h3 = match tokio::time::timeout(server.timeout, built).await {
        Ok(Ok(c)) => c,
        _ => {
            quic.close(H3_INTERNAL_ERROR, b"");
            return;
        }
    };
    let session = Rc::new(Session {
        remote,
        local_addr,
        tls,
        shared: shared.clone(),
        local: local.clone(),
        early_hints,
        server,
        open: std::cell::Cell::new(0),
        ended: tokio::sync::Notify::new(),
    });
    let keepalive = server.keepalive_timeout;
    let mut idle_since = Instant::now();
    let mut closing = false;
    loop {
        let stopping = local.stopping()
            || shared.stop.requested()
            || shared.retired.load(std::sync::atomic::Ordering::Relaxed);
        let idle = session.open.get() == 0;
        let idle_over = idle && Instant::now() >= idle_since + keepalive;
        if (stopping || idle_over) && !closing {
            // GOAWAY: the requests accepted so far are answered, no new one.
            closing = true;
            if h3.shutdown(1).await.is_err() {
                break;
            }
            if idle {
                break;
            }
        }
        let sleep = tokio::time::sleep_until(idle_since + keepalive);
        tokio::pin!(sleep);
        let ended = session.ended.notified();
        tokio::pin!(ended);
        let woken = poll_fn(|cx| {
            if !closing {
                local.set_waker(id, cx.waker());
                if local.stopping() || (idle && sleep.as_mut().poll(cx).is_ready()) {
                    return Poll::Ready(());
                }
            }
            if ended.as_mut().poll(cx).is_ready() {
                return Poll::Ready(());
            }
            Poll::Pending
        });
        let next = tokio::select! {
            r = h3.accept() => Some(r),
            _ = woken => None,
        };
        match next {
            // A timer or a state change: look again.
            None => {
                if session.open.get() == 0 {
                    if !idle {
                        idle_since = Instant::now();
                    }
                    if closing {
                        break;
                    }
                }
            }
            Some(Ok(None)) | Some(Err(_)) => break,
            Some(Ok(Some(resolver))) => {
                session.open.set(session.open.get() + 1);
                tokio::task::spawn_local(stream::serve(resolver, session.clone()));
            }
        }
    }
    // Let the streams still running finish (bounded by the drain).
    while session.open.get() > 0 {
        session.ended.notified().await;
    }
    // Their last bytes may still be in flight, and closing the connection
    // would drop them: the client, told by GOAWAY, closes it once it has
    // its answers; it gets a moment for that before the close here.
    let _ = tokio::time::timeout(CLOSE_GRACE, quic.closed()).await;
    quic.close(H3_NO_ERROR, b"");
}
