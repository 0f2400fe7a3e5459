//! One reverse-proxy exchange with an HTTP/1.1 upstream on behalf of a
//! client connection (see `crate::proxy_http`). A child of the connection
//! module, beside the FastCGI exchange whose body and logging helpers it
//! shares.

use super::fastcgi_exchange::{send, BodyStop, Done};
use super::{Conn, Exchange, Shared, Stage};
use crate::body::BodyReader;
use crate::fastcgi::pool;
use crate::proxy_http::{parse_head, request_head, BodyFraming, ResponseHead};
use bytes::BytesMut;
use htaccel_engine::http::backend::{
    BackendAddr, BackendError, BackendHead, Finish, HttpRequest, COLLECT_MAX,
};
use htaccel_engine::http::{BodyFraming as ClientFraming, Request, Response};
use tokio::time::Instant;

impl Conn {
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn http_backend(
        &mut self,
        shared: &Shared,
        ex: &mut Exchange<'_>,
        req: &Request,
        addr: BackendAddr,
        head: HttpRequest,
        body_limit: u64,
        finish: Finish<'_>,
    ) -> Done {
        let timeout = shared.timeouts.timeout;
        if let ClientFraming::Length(n) = req.framing {
            if body_limit != 0 && n > body_limit {
                // The ordinary path answers 413 for this body.
                let mut r = Response::new(413);
                r.body_limit = body_limit;
                return Done::Answer(r);
            }
        }
        // A chunked body is read whole first and sent with its length.
        let spooled = if req.framing == ClientFraming::Chunked {
            match self.spool_body(shared, ex, body_limit, false).await {
                Ok(b) => Some(b),
                Err(stop) => return self.body_stopped(shared, ex, req, stop),
            }
        } else {
            None
        };
        let streamed = match req.framing {
            ClientFraming::Length(n) if n > 0 => Some(n),
            _ => None,
        };
        let body_len = match req.framing {
            ClientFraming::None => None,
            ClientFraming::Length(n) => Some(n),
            ClientFraming::Chunked => spooled.as_ref().map(|b| b.len() as u64),
        };
        let keep_upstream = !head.close;
        let head_bytes = request_head(&head, body_len, keep_upstream);
        // A kept-alive connection may have been closed by the upstream
        // meanwhile: one more try on a new one, when nothing of the
        // client's body was consumed by the failed try.
        let mut tries = 0;
        let (mut lease, response, mut inbuf) = loop {
            tries += 1;
            let reuse = keep_upstream && streamed.is_none() && tries == 1;
            let (mut lease, reused) = match pool::connect_or_reuse(&addr, timeout, reuse).await {
                Ok(x) => x,
                Err(e) => {
                    if spooled.is_some() {
                        ex.close = true;
                        let resp = finish(Err(e)).response;
                        return Done::Sent(self.respond(shared, ex, &resp).ok());
                    }
                    let mut r = finish(Err(e)).response;
                    r.body_limit = body_limit;
                    return Done::Answer(r);
                }
            };
            let mut out = BytesMut::from(&head_bytes[..]);
            if let Some(b) = &spooled {
                out.extend_from_slice(b);
            }
            let sent = match send(&mut lease, &mut out, timeout).await {
                Ok(()) if streamed.is_some() => {
                    self.stream_raw(shared, ex, req, body_limit, &mut lease)
                        .await
                }
                other => other,
            };
            if let Err(stop) = sent {
                match stop {
                    BodyStop::Backend(_) if reused => continue,
                    BodyStop::Backend(e) => {
                        ex.close = ex.close || streamed.is_some();
                        let resp = finish(Err(e)).response;
                        return Done::Sent(self.respond(shared, ex, &resp).ok());
                    }
                    other => return self.body_stopped(shared, ex, req, other),
                }
            }
            match self.upstream_head(&mut lease, timeout).await {
                Ok((h, buf)) => break (lease, h, buf),
                Err((e, nothing)) if reused && nothing => {
                    let _ = e;
                    continue;
                }
                Err((e, _)) => {
                    self.error_log(shared, "error", e.message());
                    let resp = finish(Err(e)).response;
                    return Done::Sent(self.respond(shared, ex, &resp).ok());
                }
            }
        };
        let framing = match response.framing(&head.method) {
            Ok(f) => f,
            Err(m) => {
                let e = BackendError::Failed(format!("AH01102: {m}"));
                self.error_log(shared, "error", e.message());
                let resp = finish(Err(e)).response;
                return Done::Sent(self.respond(shared, ex, &resp).ok());
            }
        };
        let reusable = response.reusable() && keep_upstream;
        let status = response.status;
        let answer = finish(Ok(BackendHead {
            status: Some((status, response.reason.clone())),
            lines: response.lines,
            body_empty: matches!(framing, BodyFraming::None | BodyFraming::Length(0)),
        }));
        if let Some(collect) = answer.collect {
            // A content filter needs the whole body: read it all first.
            let Some(body) = self
                .upstream_body(shared, &mut lease, &mut inbuf, framing, timeout)
                .await
            else {
                self.error_log(
                    shared,
                    "error",
                    "AH01110: error reading response from the upstream: cut short or too long to filter",
                );
                return Done::Sent(None);
            };
            if reusable && framing != BodyFraming::UntilClose && inbuf.is_empty() {
                lease.park(&addr);
            }
            let resp = collect(bytes::Bytes::from(body));
            return Done::Sent(self.respond(shared, ex, &resp).ok());
        }
        let resp = answer.response;
        let header_only = ex.head || crate::write::status_has_no_body(resp.status);
        ex.open_body = answer.pass_body && !header_only;
        // The client's framing: the upstream's length, else chunked
        // (HTTP/1.1, when the engine asked for it), else the end of the
        // connection.
        let chunked = resp
            .header("Transfer-Encoding")
            .is_some_and(|v| crate::chars::is_chunked(v.as_bytes()))
            && ex.proto_num >= 1001
            && !ex.expecting;
        let Ok(keep) = self.respond(shared, ex, &resp) else {
            return Done::Sent(None);
        };
        if !ex.open_body {
            // (An empty body, as an X-Sendfile answer has, leaves the
            // connection as reusable as no body.)
            let empty = matches!(framing, BodyFraming::None | BodyFraming::Length(0));
            if empty && reusable && inbuf.is_empty() {
                lease.park(&addr);
            }
            return Done::Sent(Some(keep));
        }
        let resp_status = resp.status;
        let headers = resp.headers;
        let mut total = 0u64;
        let mut emit = |buf: &mut Vec<u8>, data: &[u8]| {
            crate::write::push_body_piece(buf, data, chunked);
            total += data.len() as u64;
        };
        let mut remaining = match framing {
            BodyFraming::Length(n) => n,
            _ => u64::MAX,
        };
        let mut dechunk = BodyReader::chunked(0, shared.limits.field_size);
        let ended = loop {
            let done = match framing {
                BodyFraming::None => true,
                BodyFraming::Length(_) => {
                    let n = (remaining.min(inbuf.len() as u64)) as usize;
                    emit(&mut self.out.buf, &inbuf.split_to(n));
                    remaining -= n as u64;
                    remaining == 0
                }
                BodyFraming::Chunked => {
                    match dechunk
                        .feed_with(&inbuf, &shared.limits, &mut |d| emit(&mut self.out.buf, d))
                    {
                        Ok(n) => {
                            let _ = inbuf.split_to(n);
                        }
                        Err(_) => break false,
                    }
                    dechunk.is_done()
                }
                BodyFraming::UntilClose => {
                    emit(&mut self.out.buf, &inbuf.split());
                    false
                }
            };
            if done {
                break true;
            }
            if !self.out.is_empty() && self.out.flush(&self.stream, timeout).await.is_err() {
                return Done::Sent(None);
            }
            match tokio::time::timeout(timeout, lease.read_buf(&mut inbuf)).await {
                Ok(Ok(0)) => break framing == BodyFraming::UntilClose,
                Ok(Ok(_)) => {}
                _ => break false,
            }
        };
        if !ended {
            self.error_log(
                shared,
                "error",
                "AH01110: error reading response from the upstream: the response was cut short",
            );
            self.log_backend(shared, ex, resp_status, total, &headers);
            let _ = self.out.flush(&self.stream, timeout).await;
            return Done::Sent(None);
        }
        if reusable && framing != BodyFraming::UntilClose && inbuf.is_empty() {
            lease.park(&addr);
        }
        if chunked {
            self.out.buf.extend_from_slice(b"0\r\n\r\n");
        }
        self.log_backend(shared, ex, resp_status, total, &headers);
        Done::Sent(Some(keep))
    }

    /// An upstream's whole body (at most `COLLECT_MAX` bytes), decoded.
    async fn upstream_body(
        &mut self,
        shared: &Shared,
        lease: &mut pool::Lease,
        inbuf: &mut BytesMut,
        framing: BodyFraming,
        timeout: std::time::Duration,
    ) -> Option<Vec<u8>> {
        let mut body = Vec::new();
        let mut remaining = match framing {
            BodyFraming::Length(n) => n,
            _ => u64::MAX,
        };
        let mut dechunk = BodyReader::chunked(0, shared.limits.field_size);
        loop {
            let done = match framing {
                BodyFraming::None => true,
                BodyFraming::Length(_) => {
                    let n = (remaining.min(inbuf.len() as u64)) as usize;
                    body.extend_from_slice(&inbuf.split_to(n));
                    remaining -= n as u64;
                    remaining == 0
                }
                BodyFraming::Chunked => {
                    let n = dechunk
                        .feed_with(inbuf, &shared.limits, &mut |d| body.extend_from_slice(d))
                        .ok()?;
                    let _ = inbuf.split_to(n);
                    dechunk.is_done()
                }
                BodyFraming::UntilClose => {
                    body.extend_from_slice(&inbuf.split());
                    false
                }
            };
            if done {
                return Some(body);
            }
            if body.len() > COLLECT_MAX {
                return None;
            }
            match tokio::time::timeout(timeout, lease.read_buf(inbuf)).await {
                Ok(Ok(0)) if framing == BodyFraming::UntilClose => return Some(body),
                Ok(Ok(n)) if n > 0 => {}
                _ => return None,
            }
        }
    }

    /// Stream a `Content-Length` client body upstream as it arrives.
    async fn stream_raw(
        &mut self,
        shared: &Shared,
        ex: &mut Exchange<'_>,
        req: &Request,
        limit: u64,
        lease: &mut pool::Lease,
    ) -> Result<(), BodyStop> {
        let timeout = shared.timeouts.timeout;
        let ClientFraming::Length(n) = req.framing else {
            return Ok(());
        };
        let mut reader = BodyReader::length(n, limit);
        self.continue_100(ex);
        let mut stage = Stage::start(&self.body_stage, Instant::now());
        let mut out = BytesMut::new();
        loop {
            if !self.rbuf.is_empty() {
                let fed = reader.feed_with(&self.rbuf, &shared.limits, &mut |d| {
                    out.extend_from_slice(d)
                });
                self.take_fed(fed)?;
            }
            send(lease, &mut out, timeout).await?;
            if reader.is_done() {
                return Ok(());
            }
            self.more_body(shared, &mut stage).await?;
        }
    }

    /// Read the upstream's response head (interim 1xx answers skipped):
    /// the head and the bytes after it. On failure, whether nothing at all
    /// had come (a kept-alive connection the upstream had closed).
    async fn upstream_head(
        &mut self,
        lease: &mut pool::Lease,
        timeout: std::time::Duration,
    ) -> Result<(ResponseHead, BytesMut), (BackendError, bool)> {
        let mut buf = BytesMut::with_capacity(8 * 1024);
        let mut received = false;
        loop {
            match parse_head(&buf) {
                Ok(Some((h, n))) => {
                    let _ = buf.split_to(n);
                    if (100..200).contains(&h.status) && h.status != 101 {
                        continue;
                    }
                    return Ok((h, buf));
                }
                Ok(None) => {}
                Err(m) => {
                    return Err((BackendError::Failed(format!("AH01102: {m}")), false));
                }
            }
            match tokio::time::timeout(timeout, lease.read_buf(&mut buf)).await {
                Ok(Ok(0)) => {
                    return Err((
                        BackendError::Failed(
                            "AH01102: error reading status line from remote server".into(),
                        ),
                        !received,
                    ))
                }
                Ok(Ok(_)) => received = true,
                Ok(Err(e)) => {
                    return Err((
                        BackendError::Failed(format!(
                            "({}){e}: AH01102: error reading status line from remote server",
                            e.raw_os_error().unwrap_or(0)
                        )),
                        !received,
                    ))
                }
                Err(_) => {
                    return Err((
                        BackendError::Timeout(
                            "AH01102: error reading status line from remote server: timeout".into(),
                        ),
                        false,
                    ))
                }
            }
        }
    }
}
