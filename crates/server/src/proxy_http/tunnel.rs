//! mod_proxy's tunnel (`ap_proxy_tunnel_run`): once an upstream switched
//! protocols (a WebSocket handshake answered `101`), the client gets that
//! answer as an interim one and the two connections are joined, bytes
//! passed both ways unchanged, until both sides have closed.
//!
//! As in Apache:
//! - what either side sent early (the client right after its request, the
//!   upstream right after its `101`) goes first;
//! - an end of input on one side becomes the end of output on the other
//!   (half-close), and the tunnel lasts while either direction is open;
//!   but a TLS client that ends its side (`close_notify`) gets nothing
//!   more, as mod_ssl sends nothing after it, and under
//!   `proxy-nohalfclose` the first end of input ends the tunnel;
//! - the tunnel ends when nothing moves for the larger of the client's
//!   `Timeout` and the upstream's (`ProxyTimeout`, `timeout=`);
//! - an HTTP/1.0 client gets no interim answer, and its request's fields
//!   stay for the access log; the `101` is logged, with no body bytes;
//! - the connection is not used for another request afterwards.
//!
//! A tunnel does not count among the exchanges a backend's bound allows
//! (`crate::fastcgi::pool`): idle WebSockets must not starve the requests
//! of the same application.

use crate::conn::{Conn, Shared, READ_BUF};
use crate::exchange::Exchange;
use crate::fastcgi::exchange::Done;
use crate::fastcgi::pool::Lease;
use bytes::BytesMut;
use htaccel_engine::http::Response;
use std::future::poll_fn;
use std::io;
use std::time::Duration;

/// What woke the tunnel.
enum Wake {
    /// The client's socket has something to read (or failed).
    Client(io::Result<()>),
    /// The upstream sent this many bytes (0: its end of output).
    Upstream(io::Result<usize>),
    /// Nothing moved for the idle time.
    Idle,
}

impl<T: crate::transport::Transport> Conn<T> {
    /// The interim answer `resp` (the upstream's `101`), then the tunnel
    /// between the client and `lease`; `early` is what the upstream sent
    /// after its head.
    pub(crate) async fn switch_protocols(
        &mut self,
        shared: &Shared,
        ex: &mut Exchange<'_>,
        resp: &Response,
        mut lease: Lease,
        early: BytesMut,
        no_half_close: bool,
    ) -> Done {
        self.answer_start.set(Some(self.out.position()));
        self.log_vars.replace(resp.log_vars.clone());
        self.log_remote_host.replace(resp.remote_host.clone());
        // `ap_send_interim_response` sends nothing to an HTTP/1.0 client.
        let informed = ex.proto_num >= 1001;
        if informed {
            let status_line = resp
                .status_line
                .as_deref()
                .unwrap_or("101 Switching Protocols");
            crate::write::write_interim(&mut self.out.buf, status_line, &resp.headers);
        }
        self.out.buf.extend_from_slice(&early);
        lease.leave_bound();
        let idle = self.settings.timeout.max(lease.timeout());
        self.tunnel(&mut lease, idle, no_half_close).await;
        // The interim answer's fields were sent and cleared.
        let fields: &[_] = if informed { &[] } else { &resp.headers };
        self.log_backend(shared, ex, resp.status, 0, fields);
        Done::Sent(None)
    }

    /// Pass bytes both ways until both directions ended (`no_half_close`:
    /// either), one side failed, or nothing moved for `idle`.
    async fn tunnel(&mut self, lease: &mut Lease, idle: Duration, no_half_close: bool) {
        let mut from_upstream = BytesMut::with_capacity(16 * 1024);
        let (mut client_reading, mut upstream_reading) = (true, true);
        let (mut client_shut, mut upstream_shut) = (false, false);
        loop {
            if !self.out.is_empty() && self.flush_out(idle).await.is_err() {
                return;
            }
            if !self.rbuf.is_empty() {
                let sent = tokio::time::timeout(idle, lease.write_all(&self.rbuf)).await;
                self.rbuf.clear();
                if !matches!(sent, Ok(Ok(()))) {
                    return;
                }
            }
            if !upstream_reading && !client_shut {
                self.stream.shutdown_write();
                client_shut = true;
            }
            if !client_reading && !upstream_shut {
                lease.shutdown_write().await;
                upstream_shut = true;
            }
            if !client_reading && !upstream_reading
                || no_half_close && (!client_reading || !upstream_reading)
            {
                return;
            }
            // What the client's transport holds already (TLS plaintext
            // rustls decrypted beyond the last read) comes before any wait
            // on the socket, which would not announce it.
            let mut client_sent = false;
            if client_reading {
                self.rbuf.reserve(READ_BUF);
                match self.stream.try_read(&mut self.rbuf) {
                    // A TLS client's `close_notify` ends the tunnel:
                    // Apache (mod_ssl on OpenSSL) sends it nothing
                    // more, whatever the upstream still says.
                    Ok(0) if self.stream.tls().is_some() => {
                        lease.shutdown_write().await;
                        return;
                    }
                    Ok(0) => {
                        client_reading = false;
                        continue;
                    }
                    Ok(n) => {
                        self.total_read += n as u64;
                        client_sent = true;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) => return,
                }
            }
            let wake = if client_sent {
                // The client may have more at once: the upstream is looked
                // at without waiting, so that neither side starves the other.
                if !upstream_reading {
                    continue;
                }
                tokio::select! {
                    biased;
                    read = lease.read_buf(&mut from_upstream) => Wake::Upstream(read),
                    () = std::future::ready(()) => continue,
                }
            } else {
                let stream = &self.stream;
                tokio::select! {
                    ready = poll_fn(|cx| stream.poll_read_ready(cx)), if client_reading => {
                        Wake::Client(ready)
                    }
                    read = lease.read_buf(&mut from_upstream), if upstream_reading => {
                        Wake::Upstream(read)
                    }
                    () = tokio::time::sleep(idle) => Wake::Idle,
                }
            };
            match wake {
                // Read at the top of the loop.
                Wake::Client(Ok(())) => {}
                Wake::Upstream(Ok(0)) => upstream_reading = false,
                Wake::Upstream(Ok(_)) => self.out.buf.extend_from_slice(&from_upstream.split()),
                Wake::Client(Err(_)) | Wake::Upstream(Err(_)) | Wake::Idle => return,
            }
        }
    }
}
