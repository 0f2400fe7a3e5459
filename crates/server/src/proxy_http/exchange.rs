//! One reverse-proxy exchange with an HTTP/1.1 upstream on behalf of a
//! client connection (see `crate::proxy_http`): a step of the request's
//! exchange (`crate::exchange`), beside the FastCGI exchange whose body
//! helpers it shares.

use crate::backend_body::{BodyStop, ChunkedBody};
use crate::body::BodyReader;
use crate::conn::{Conn, Shared, Stage};
use crate::exchange::{BodyEnd, Exchange};
use crate::fastcgi::exchange::{send, Done};
use crate::fastcgi::pool;
use crate::proxy_http::{parse_head, request_head, BodyFraming, RequestBody, ResponseHead};
use crate::spool::Spooled;
use bytes::BytesMut;
use htaccel_engine::http::backend::{
    BackendAddr, BackendAnswer, BackendError, BackendHead, Finish, HttpRequest, Interim,
    COLLECT_MAX,
};
use htaccel_engine::http::{BodyFraming as ClientFraming, Request};
use tokio::time::Instant;

/// mod_proxy_http's reason when the upstream's status line cannot be read.
const READING_FAILED: &str = "Error reading from remote server";

impl<T: crate::transport::Transport> Conn<T> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn http_backend(
        &mut self,
        shared: &Shared,
        ex: &mut Exchange<'_>,
        req: &Request,
        addr: BackendAddr,
        head: HttpRequest,
        body_limit: u64,
        send_length: bool,
        waits: pool::Waits,
        finish: Finish<'_>,
    ) -> Done {
        let timeout = self.settings.timeout;
        if let Some(refused) =
            crate::fastcgi::exchange::declared_too_large(shared, ex, req, body_limit)
        {
            return refused;
        }
        // A chunked body goes with its length when mod_proxy_http's
        // prefetch holds all of it (or `proxy-sendcl` had it spooled),
        // else chunked as it arrives.
        let mut stage = Stage::start(&self.body_stage, Instant::now());
        let chunked_body = if req.framing == ClientFraming::Chunked {
            self.continue_100(ex);
            match self
                .chunked_body(ex, &mut stage, body_limit, true, send_length)
                .await
            {
                Ok(b) => Some(b),
                Err(stop) => return self.body_stopped(shared, ex, req, stop),
            }
        } else {
            None
        };
        let body = match (req.framing, &chunked_body) {
            (ClientFraming::None, _) => RequestBody::None,
            (ClientFraming::Length(n), _) => RequestBody::Length(n),
            (ClientFraming::Chunked, b) => b
                .as_ref()
                .and_then(ChunkedBody::len)
                .map_or(RequestBody::Chunked, RequestBody::Length),
        };
        // What is sent after the head: bytes in memory, a spooled body, and
        // the rest of the client's body, read while it is sent.
        let (mut rest, mut first, spooled) = match (req.framing, chunked_body) {
            (ClientFraming::Length(n), _) if n > 0 => {
                (Some(BodyReader::length(n, body_limit)), Vec::new(), None)
            }
            (_, Some(ChunkedBody::Whole(data))) => (None, data, None),
            (_, Some(ChunkedBody::Spooled(s))) => (None, Vec::new(), Some(s)),
            (_, Some(ChunkedBody::Streamed(p))) => {
                let p = *p;
                (Some(p.rest), p.data, None)
            }
            _ => (None, Vec::new(), None),
        };
        let chunked = body == RequestBody::Chunked;
        // Some of the client's body was read before connecting.
        let consumed = req.framing == ClientFraming::Chunked;
        // Some of it is read only while it is sent (no second try then).
        let streams = rest.is_some();
        // A connection offered a protocol switch is not kept.
        let keep_upstream = !head.close && head.upgrade.is_none();
        let head_bytes = request_head(&head, body, keep_upstream);
        // A client connection's first request under
        // `proxy-initial-not-pooled` (Apache's `c->keepalives` still 0)
        // goes on a new connection, kept afterwards as any other.
        let pooled = keep_upstream && !(head.initial_not_pooled && self.keepalives == 0);
        // A kept-alive connection may have been closed by the upstream
        // meanwhile: one more try on a new one, when nothing of the
        // client's body was consumed by the failed try.
        let mut tries = 0;
        let (mut lease, response, mut inbuf) = loop {
            tries += 1;
            let reuse = pooled && !streams && tries == 1;
            let (mut lease, reused) = match pool::connect_or_reuse(&addr, waits, reuse).await {
                Ok(x) => x,
                Err(e) => {
                    if consumed {
                        ex.close = true;
                        let resp = finish(Err(e)).into_error_page();
                        return Done::Sent(self.respond(shared, ex, &resp).ok());
                    }
                    let mut r = finish(Err(e)).into_error_page();
                    r.body_limit = body_limit;
                    return Done::Answer(r);
                }
            };
            let mut out = BytesMut::from(&head_bytes[..]);
            push_body_data(&mut out, &first, chunked);
            if streams {
                // No second try: the prefetch is not needed again.
                first = Vec::new();
            }
            let mut sent = send(&mut lease, &mut out).await;
            if let (Ok(()), Some(spooled)) = (&sent, &spooled) {
                sent = send_spooled(spooled, &mut lease).await;
            }
            let sent = match sent {
                Ok(()) => match rest.take() {
                    Some(reader) => {
                        // (A `Content-Length` body: mod_proxy_http asks
                        // for it once the upstream is reached.)
                        self.continue_100(ex);
                        self.stream_raw(reader, chunked, &mut stage, &mut lease)
                            .await
                    }
                    None => Ok(()),
                },
                other => other,
            };
            let sent = match sent {
                Ok(()) if head.extra_crlf => {
                    send(&mut lease, &mut BytesMut::from(&b"\r\n"[..])).await
                }
                other => other,
            };
            if let Err(stop) = sent {
                match stop {
                    BodyStop::Backend(_) if reused => continue,
                    BodyStop::Backend(e) => {
                        ex.close = ex.close || streams;
                        let resp = finish(Err(e)).into_error_page();
                        return Done::Sent(self.respond(shared, ex, &resp).ok());
                    }
                    other => return self.body_stopped(shared, ex, req, other),
                }
            }
            match self
                .upstream_head(&mut lease, &addr, ex, head.interim.as_ref())
                .await
            {
                Ok((h, buf)) => break (lease, h, buf),
                Err((e, nothing)) if reused && nothing => {
                    let _ = e;
                    continue;
                }
                // (Logged by the engine's answer to it.)
                Err((e, _)) => {
                    let resp = finish(Err(e)).into_error_page();
                    return Done::Sent(self.respond(shared, ex, &resp).ok());
                }
            }
        };
        let framing = match response.framing(&head.method) {
            Ok(f) => f,
            Err(m) => {
                let e = BackendError::Failed(format!("AH01102: {m}"));
                self.error_log(shared, "error", e.message());
                let resp = finish(Err(e)).into_error_page();
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
        if let BackendAnswer::Collect(collect) = answer {
            // A content filter needs the whole body: read it all first.
            let Some(body) = self.upstream_body(&mut lease, &mut inbuf, framing).await else {
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
        let (resp, pass_body) = match answer {
            BackendAnswer::Send {
                response,
                pass_body,
            } => (response, pass_body),
            // An error document served by a backend instead of this answer
            // (ProxyErrorOverride): the upstream's connection is dropped
            // with what remains of its answer.
            BackendAnswer::Then(call) => {
                drop(lease);
                let req = crate::fastcgi::exchange::bodiless(req);
                return Box::pin(self.backend(shared, ex, &req, *call)).await;
            }
            BackendAnswer::Collect(_) => unreachable!("handled above"),
            BackendAnswer::Switch(response) => {
                return self
                    .switch_protocols(shared, ex, &response, lease, inbuf, head.no_half_close)
                    .await
            }
        };
        let header_only = ex.head || crate::write::status_has_no_body(resp.status);
        if pass_body && !header_only {
            ex.body_end = BodyEnd::Open;
        }
        let Ok(keep) = self.respond(shared, ex, &resp) else {
            return Done::Sent(None);
        };
        // The client's framing: the upstream's length, else chunked as the
        // head said, else the end of the connection.
        let chunked = self.sent_framing.get().chunked;
        if ex.body_end != BodyEnd::Open {
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
        let mut dechunk = BodyReader::chunked(0, self.settings.limits.field_size);
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
                    match dechunk.feed_with(&inbuf, &self.settings.limits, &mut |d| {
                        emit(&mut self.out.buf, d)
                    }) {
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
            if !self.out.is_empty() && self.flush_out(timeout).await.is_err() {
                return Done::Sent(None);
            }
            match tokio::time::timeout(lease.timeout(), lease.read_buf(&mut inbuf)).await {
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
            let _ = self.flush_out(timeout).await;
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
        lease: &mut pool::Lease,
        inbuf: &mut BytesMut,
        framing: BodyFraming,
    ) -> Option<Vec<u8>> {
        let mut body = Vec::new();
        let mut remaining = match framing {
            BodyFraming::Length(n) => n,
            _ => u64::MAX,
        };
        let mut dechunk = BodyReader::chunked(0, self.settings.limits.field_size);
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
                        .feed_with(inbuf, &self.settings.limits, &mut |d| {
                            body.extend_from_slice(d)
                        })
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
            match tokio::time::timeout(lease.timeout(), lease.read_buf(inbuf)).await {
                Ok(Ok(0)) if framing == BodyFraming::UntilClose => return Some(body),
                Ok(Ok(n)) if n > 0 => {}
                _ => return None,
            }
        }
    }

    /// Stream the rest of the client's body upstream as it arrives, each
    /// piece read a chunk when `chunked` (then the last chunk).
    async fn stream_raw(
        &mut self,
        mut reader: BodyReader,
        chunked: bool,
        stage: &mut Stage,
        lease: &mut pool::Lease,
    ) -> Result<(), BodyStop> {
        let mut out = BytesMut::new();
        let mut data = Vec::new();
        loop {
            if !self.rbuf.is_empty() {
                let fed = reader.feed_with(&self.rbuf, &self.settings.limits, &mut |d| {
                    data.extend_from_slice(d)
                });
                self.take_fed(fed)?;
                push_body_data(&mut out, &data, chunked);
                data.clear();
            }
            if chunked && reader.is_done() {
                out.extend_from_slice(b"0\r\n\r\n");
            }
            send(lease, &mut out).await?;
            if reader.is_done() {
                return Ok(());
            }
            self.more_body(stage).await?;
        }
    }

    /// Read the upstream's response head: the head and the bytes after it.
    /// An interim `100 Continue` is passed on to a client still waiting
    /// for one, as mod_proxy_http relays it (the `Expect` field went
    /// upstream); other interim answers (`102`, `103`) go to an HTTP/1.1
    /// client as `interim` makes them, at once. On failure, whether nothing
    /// at all had come (a kept-alive connection the upstream had closed).
    async fn upstream_head(
        &mut self,
        lease: &mut pool::Lease,
        upstream: &BackendAddr,
        ex: &mut Exchange<'_>,
        interim: Option<&Interim>,
    ) -> Result<(ResponseHead, BytesMut), (BackendError, bool)> {
        let mut buf = BytesMut::with_capacity(8 * 1024);
        let mut received = false;
        loop {
            match parse_head(&buf) {
                Ok(Some((h, n))) => {
                    let _ = buf.split_to(n);
                    if (100..200).contains(&h.status) && h.status != 101 {
                        if h.status == 100 {
                            self.continue_100(ex);
                        } else if let Some(interim) = interim.filter(|_| ex.proto_num >= 1001) {
                            self.pass_interim(interim, h).await;
                        }
                        continue;
                    }
                    return Ok((h, buf));
                }
                Ok(None) => {}
                Err(m) => {
                    return Err((BackendError::Failed(format!("AH01102: {m}")), false));
                }
            }
            match tokio::time::timeout(lease.timeout(), lease.read_buf(&mut buf)).await {
                Ok(Ok(0)) => {
                    return Err((
                        BackendError::Proxy {
                            status: 502,
                            message: format!(
                                "AH01102: error reading status line from remote server {upstream}"
                            ),
                            reason: READING_FAILED,
                        },
                        !received,
                    ))
                }
                Ok(Ok(_)) => received = true,
                Ok(Err(e)) => {
                    return Err((
                        BackendError::Proxy {
                            status: 502,
                            message: format!(
                                "{}: AH01102: error reading status line from remote server {upstream}",
                                htaccel_engine::log_format::os_error(&e)
                            ),
                            reason: READING_FAILED,
                        },
                        !received,
                    ))
                }
                // mod_proxy_http answers a timeout as any other failure
                // to read the status line: 502 (ap_proxyerror).
                Err(_) => {
                    return Err((
                        BackendError::Proxy {
                            status: 502,
                            message: format!("(70007)The timeout specified has expired: AH01102: error reading status line from remote server {upstream}"),
                            reason: READING_FAILED,
                        },
                        false,
                    ))
                }
            }
        }
    }
}

impl<T: crate::transport::Transport> Conn<T> {
    /// An upstream's interim answer, as the client gets it, sent at once.
    async fn pass_interim(&mut self, interim: &Interim, h: ResponseHead) {
        let status_line = format!("{} {}", h.status, h.reason);
        let head = BackendHead {
            status: Some((h.status, h.reason)),
            lines: h.lines,
            body_empty: true,
        };
        let fields = (interim.0)(&head);
        crate::write::write_interim(&mut self.out.buf, &status_line, &fields);
        // (A client gone is found by the answer's own write.)
        let _ = self.flush_out(self.settings.timeout).await;
    }
}

/// A spooled body, after the request head: its bytes in memory, then the
/// file's.
async fn send_spooled(spooled: &Spooled, lease: &mut pool::Lease) -> Result<(), BodyStop> {
    let mut out = BytesMut::from(&spooled.head[..]);
    send(lease, &mut out).await?;
    let mut offset = 0;
    let mut piece = Vec::new();
    loop {
        piece = spooled.piece(offset, piece).await.map_err(|e| {
            BodyStop::Spool(format!(
                "{}: AH01097: pass request body failed: reading the spooled body",
                htaccel_engine::log_format::os_error(&e)
            ))
        })?;
        if piece.is_empty() {
            return Ok(());
        }
        offset += piece.len() as u64;
        let mut out = BytesMut::from(&piece[..]);
        send(lease, &mut out).await?;
    }
}

/// Body data as it goes upstream: as it is, or as one chunk.
fn push_body_data(out: &mut BytesMut, data: &[u8], chunked: bool) {
    if data.is_empty() {
        return;
    }
    if chunked {
        out.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
    }
    out.extend_from_slice(data);
    if chunked {
        out.extend_from_slice(b"\r\n");
    }
}
