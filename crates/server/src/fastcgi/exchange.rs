//! One FastCGI exchange on behalf of a client connection (see
//! `crate::fastcgi`), a step of the request's exchange (`crate::exchange`)
//! on the connection's `Conn`: it reads the client's body and writes the
//! response through the connection's own buffers, with the connection's
//! timeouts.

use crate::backend_body::{BodyStop, ChunkedBody, Prefetched};
use crate::body::BodyReader;
use crate::conn::{Conn, Shared, Stage};
use crate::exchange::{BodyEnd, Exchange};
use crate::fastcgi::{codec, head_end, head_lines, pool};
use crate::spool::Spooled;
use crate::write::status_has_no_body;
use bytes::BytesMut;
use htaccel_engine::http::backend::{
    BackendAnswer, BackendCall, BackendError, BackendHead, BackendRequest, COLLECT_MAX,
};
use htaccel_engine::http::{BodyFraming, ProtocolError, Request, Response};
use std::borrow::Cow;
use tokio::time::Instant;

/// The one request id used per connection (no multiplexing, as PHP-FPM).
const ID: u16 = 1;
/// The longest header block accepted from a backend.
const HEAD_MAX: usize = 1 << 20;

/// How an exchange ended for the client connection.
pub(crate) enum Done {
    /// The response was queued: `Some(keep)`, or `None` to drop the
    /// connection at once.
    Sent(Option<bool>),
    /// Nothing was read from the client or sent yet: answer `Response`
    /// along the ordinary path (which discards the body).
    Answer(Response),
}

/// A backend's header block and what came after it.
struct HeadRead {
    head: BackendHead,
    /// Records received and not read yet.
    inbuf: BytesMut,
    /// Body bytes that came with the block.
    rest: Vec<u8>,
    /// `FCGI_END_REQUEST` was read (the body is empty).
    ended: bool,
}

/// A body whose declared length is over `LimitRequestBody`: Apache's
/// input filter refuses it before the backend is called, as an error of
/// the request (its `ErrorDocument`, no length, the connection closed),
/// on a connection and on a stream alike.
pub(crate) fn declared_too_large(
    shared: &Shared,
    ex: &mut Exchange<'_>,
    req: &Request,
    body_limit: u64,
) -> Option<Done> {
    match req.framing {
        BodyFraming::Length(n) if body_limit != 0 && n > body_limit => {
            ex.body_failed(true);
            Some(Done::Answer(shared.handler.body_error(req, 413)))
        }
        _ => None,
    }
}

impl<T: crate::transport::Transport> Conn<T> {
    pub(crate) async fn backend(
        &mut self,
        shared: &Shared,
        ex: &mut Exchange<'_>,
        req: &Request,
        call: BackendCall<'_>,
    ) -> Done {
        let BackendCall {
            addr,
            request,
            body_limit,
            body_read,
            send_length,
            early_hints,
            timeouts,
            finish,
        } = call;
        let waits = pool::Waits::of(timeouts, self.settings.timeout);
        if !early_hints.is_empty() {
            // Sent while the backend works, which is what they are for.
            self.early_hints(shared, req, &early_hints);
            if self.flush_out(self.settings.timeout).await.is_err() {
                ex.close = true;
            }
        }
        // A body a content handler already read (an error document's
        // backend): dropped first, and the exchange sends none, with a
        // length of 0 (mod_proxy measures what is left).
        let without_body;
        let req = if body_read && req.framing != BodyFraming::None {
            let reader = match req.framing {
                BodyFraming::Chunked => {
                    BodyReader::chunked(body_limit, self.settings.limits.field_size)
                }
                BodyFraming::Length(n) => BodyReader::length(n, body_limit),
                BodyFraming::None => BodyReader::length(0, body_limit),
            };
            // Apache's default handler asks for the body it drops.
            if ex.expecting && ex.proto_num >= 1001 {
                self.out
                    .buf
                    .extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
                ex.expecting = false;
            }
            if self.discard(reader).await.is_err() {
                ex.close = true;
            }
            without_body = Request {
                framing: BodyFraming::Length(0),
                ..req.clone()
            };
            &without_body
        } else {
            req
        };
        let (params, keep_conn) = match request {
            BackendRequest::FastCgi { params, keep_conn } => (params, keep_conn),
            BackendRequest::Http(head) => {
                return self
                    .http_backend(
                        shared,
                        ex,
                        req,
                        addr,
                        head,
                        body_limit,
                        send_length,
                        waits,
                        finish,
                    )
                    .await
            }
            BackendRequest::Cgi(script) => {
                return self
                    .cgi_backend(shared, ex, req, *script, body_limit, finish)
                    .await
            }
        };
        let timeout = self.settings.timeout;
        let has_body = match req.framing {
            BodyFraming::None => false,
            BodyFraming::Length(n) => n > 0,
            BodyFraming::Chunked => true,
        };
        if let Some(refused) = declared_too_large(shared, ex, req, body_limit) {
            return refused;
        }
        // What has arrived of a chunked body decides how PHP-FPM learns of
        // it, as in mod_proxy_fcgi: all of it, with CONTENT_LENGTH; else
        // streamed with no length (PHP then reads none of it) and the
        // client's Transfer-Encoding, or with `proxy-sendcl` spooled and
        // sent with its length.
        let mut params = params;
        let mut stage = Stage::start(&self.body_stage, Instant::now());
        let chunked = if req.framing == BodyFraming::Chunked {
            match self
                .chunked_body(ex, &mut stage, body_limit, false, send_length)
                .await
            {
                Ok(b) => Some(b),
                Err(stop) => return self.body_stopped(shared, ex, req, stop),
            }
        } else {
            None
        };
        if let Some(len) = chunked.as_ref().and_then(ChunkedBody::len) {
            params.retain(|(n, _)| n != "HTTP_TRANSFER_ENCODING" && n != "CONTENT_LENGTH");
            params.push(("CONTENT_LENGTH".into(), len.to_string().into_bytes()));
        }
        let mut lease = match pool::connect_or_reuse(&addr, waits, keep_conn)
            .await
            .map(|(l, _)| l)
        {
            Ok(l) => l,
            Err(e) if chunked.is_some() => {
                // Some of the body was read already: the ordinary path
                // cannot discard the rest; the connection ends after the
                // answer (as Apache's does).
                ex.close = true;
                let resp = finish(Err(e)).into_error_page();
                return Done::Sent(self.respond(shared, ex, &resp).ok());
            }
            Err(e) => {
                let mut r = finish(Err(e)).into_error_page();
                r.body_limit = body_limit;
                return Done::Answer(r);
            }
        };
        let mut out = BytesMut::with_capacity(4096);
        codec::put_begin(&mut out, ID, keep_conn);
        let skipped = codec::put_params(
            &mut out,
            ID,
            params.iter().map(|(n, v)| (n.as_str(), v.as_slice())),
        );
        for name in skipped {
            self.error_log(
                shared,
                "warn",
                &format!("AH02536: couldn't encode envvar '{name}' in 16384 bytes"),
            );
        }
        let sent = match chunked {
            Some(ChunkedBody::Whole(data)) => {
                codec::put_stream(&mut out, codec::STDIN, ID, &data);
                codec::put_stream(&mut out, codec::STDIN, ID, &[]);
                send(&mut lease, &mut out).await
            }
            Some(ChunkedBody::Spooled(spooled)) => {
                self.send_spooled(&spooled, &mut lease, &mut out).await
            }
            Some(ChunkedBody::Streamed(p)) => {
                let Prefetched { data, rest, seen } = *p;
                codec::put_stream(&mut out, codec::STDIN, ID, &data);
                drop(data);
                self.stream_body(ex, Some(rest), seen, &mut stage, &mut lease, &mut out)
                    .await
            }
            None => {
                let reader = has_body.then(|| match req.framing {
                    BodyFraming::Length(n) => BodyReader::length(n, body_limit),
                    _ => BodyReader::chunked(body_limit, self.settings.limits.field_size),
                });
                self.stream_body(ex, reader, false, &mut stage, &mut lease, &mut out)
                    .await
            }
        };
        let head = match sent {
            Ok(()) => self.backend_head(shared, &mut lease).await,
            Err(BodyStop::Backend(e)) => {
                // The client's body was not all read.
                ex.close = true;
                Err(e)
            }
            Err(stop) => return self.body_stopped(shared, ex, req, stop),
        };
        let HeadRead {
            head,
            mut inbuf,
            rest,
            ended: head_ended,
        } = match head {
            Ok(h) => h,
            Err(e) => {
                let resp = finish(Err(e)).into_error_page();
                return Done::Sent(self.respond(shared, ex, &resp).ok());
            }
        };
        let answer = finish(Ok(head));
        if let BackendAnswer::Collect(collect) = answer {
            // A content filter needs the whole body: read it all first.
            let mut body = rest;
            let mut ended = head_ended;
            while !ended {
                loop {
                    match codec::take_record(&mut inbuf) {
                        Ok(Some(r)) if r.id != ID => {}
                        Ok(Some(r)) => match r.kind {
                            codec::STDOUT => body.extend_from_slice(&r.content),
                            codec::STDERR => self.backend_stderr(shared, &r.content),
                            codec::END_REQUEST => {
                                ended = true;
                                break;
                            }
                            _ => {}
                        },
                        Ok(None) | Err(_) => break,
                    }
                }
                if ended || body.len() > COLLECT_MAX {
                    break;
                }
                match tokio::time::timeout(lease.timeout(), lease.read_buf(&mut inbuf)).await {
                    Ok(Ok(n)) if n > 0 => {}
                    _ => break,
                }
            }
            if !ended {
                self.error_log(
                    shared,
                    "error",
                    "AH01075: Error dispatching request to backend: the response was cut short or too long to filter",
                );
                return Done::Sent(None);
            }
            if keep_conn && inbuf.is_empty() {
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
            // (ProxyErrorOverride): this backend's connection is dropped
            // with what remains of its output, and the other exchange runs
            // for a request whose body is gone.
            BackendAnswer::Then(call) => {
                drop(lease);
                return Box::pin(self.backend(shared, ex, &bodiless(req), *call)).await;
            }
            BackendAnswer::Collect(_) => unreachable!("handled above"),
            BackendAnswer::Switch(_) => unreachable!("only an HTTP upstream switches protocols"),
        };
        let header_only = ex.head || status_has_no_body(resp.status);
        if pass_body && !header_only {
            ex.body_end = BodyEnd::Open;
        }
        let Ok(keep) = self.respond(shared, ex, &resp) else {
            return Done::Sent(None);
        };
        if ex.body_end != BodyEnd::Open {
            // A kept connection is reused only once its request ended.
            if keep_conn && head_ended && inbuf.is_empty() {
                lease.park(&addr);
            }
            return Done::Sent(Some(keep));
        }
        let status = resp.status;
        // Chunked as the head said, else ended by the close.
        let chunked = self.sent_framing.get().chunked;
        let headers = resp.headers;
        let mut total = 0u64;
        let mut emit = |buf: &mut Vec<u8>, data: &[u8]| {
            crate::write::push_body_piece(buf, data, chunked);
            total += data.len() as u64;
        };
        emit(&mut self.out.buf, &rest);
        let ended = head_ended
            || loop {
                let mut ended = false;
                loop {
                    match codec::take_record(&mut inbuf) {
                        Ok(Some(r)) if r.id != ID => {}
                        Ok(Some(r)) => match r.kind {
                            codec::STDOUT => emit(&mut self.out.buf, &r.content),
                            codec::STDERR => self.backend_stderr(shared, &r.content),
                            codec::END_REQUEST => {
                                ended = true;
                                break;
                            }
                            _ => {}
                        },
                        Ok(None) => break,
                        Err(_) => break,
                    }
                }
                if ended {
                    break true;
                }
                if !self.out.is_empty() && self.flush_out(timeout).await.is_err() {
                    break false;
                }
                match tokio::time::timeout(lease.timeout(), lease.read_buf(&mut inbuf)).await {
                    Ok(Ok(n)) if n > 0 => {}
                    _ => break false,
                }
            };
        if ended && keep_conn && inbuf.is_empty() {
            lease.park(&addr);
        } else {
            drop(lease);
        }
        if !ended {
            self.error_log(
                shared,
                "error",
                "AH01075: Error dispatching request to backend: the backend broke off the response",
            );
            self.log_backend(shared, ex, status, total, &headers);
            let _ = self.flush_out(timeout).await;
            return Done::Sent(None);
        }
        if chunked {
            self.out.buf.extend_from_slice(b"0\r\n\r\n");
        }
        self.log_backend(shared, ex, status, total, &headers);
        Done::Sent(Some(keep))
    }

    /// The answer when reading the client's body failed.
    pub(crate) fn body_stopped(
        &mut self,
        shared: &Shared,
        ex: &mut Exchange<'_>,
        req: &Request,
        stop: BodyStop,
    ) -> Done {
        let (status, no_length) = match stop {
            BodyStop::Client(status, no_length) => (status, no_length),
            BodyStop::Gone => return Done::Sent(None),
            BodyStop::Backend(e) => (e.status(), false),
            BodyStop::Spool(message) => {
                shared
                    .handler
                    .log()
                    .error("error", "proxy", Some(self.remote), &message);
                (500, false)
            }
        };
        let resp = shared
            .handler
            .protocol_error(&ProtocolError::of_request(status, req));
        ex.body_failed(no_length);
        Done::Sent(self.respond(shared, ex, &resp).ok().map(|_| false))
    }

    /// Send what is already in `out` (the parameters, perhaps prefetched
    /// body data), then the rest of the client's body as `FCGI_STDIN` as
    /// it arrives, then the end of the stream. `seen`: some of the body
    /// had already arrived.
    #[allow(clippy::too_many_arguments)]
    async fn stream_body(
        &mut self,
        ex: &mut Exchange<'_>,
        reader: Option<BodyReader>,
        mut seen: bool,
        stage: &mut Stage,
        lease: &mut pool::Lease,
        out: &mut BytesMut,
    ) -> Result<(), BodyStop> {
        if let Some(mut reader) = reader {
            loop {
                if !self.rbuf.is_empty() {
                    seen = true;
                    let fed = reader.feed_with(&self.rbuf, &self.settings.limits, &mut |d| {
                        codec::put_stream(out, codec::STDIN, ID, d)
                    });
                    self.take_fed(fed)?;
                }
                // Sent in pieces of 16 KiB, and before waiting for more.
                if out.len() >= 16 * 1024 || reader.is_done() || self.rbuf.is_empty() {
                    send(lease, out).await?;
                }
                if reader.is_done() {
                    break;
                }
                // mod_proxy_fcgi's blocking reads go through Apache's input
                // filter, which asks for the body only when none came yet.
                if self.before_body_wait(ex, seen, stage)? {
                    continue;
                }
                self.more_body(stage).await?;
            }
        }
        codec::put_stream(out, codec::STDIN, ID, &[]);
        send(lease, out).await
    }

    /// Send what is in `out`, then a spooled body as `FCGI_STDIN`, then the
    /// end of the stream.
    async fn send_spooled(
        &mut self,
        spooled: &Spooled,
        lease: &mut pool::Lease,
        out: &mut BytesMut,
    ) -> Result<(), BodyStop> {
        codec::put_stream(out, codec::STDIN, ID, &spooled.head);
        send(lease, out).await?;
        let mut offset = 0;
        let mut piece = Vec::new();
        loop {
            piece = spooled.piece(offset, piece).await.map_err(|e| {
                BodyStop::Spool(format!(
                    "{}: AH01075: Error dispatching request: reading the spooled body",
                    htaccel_engine::log_format::os_error(&e)
                ))
            })?;
            if piece.is_empty() {
                break;
            }
            offset += piece.len() as u64;
            codec::put_stream(out, codec::STDIN, ID, &piece);
            send(lease, out).await?;
        }
        codec::put_stream(out, codec::STDIN, ID, &[]);
        send(lease, out).await
    }

    /// Read records until the header block is complete and it is known
    /// whether a body follows (Apache announces `Content-Length: 0` for a
    /// script that wrote nothing after its headers).
    async fn backend_head(
        &mut self,
        shared: &Shared,
        lease: &mut pool::Lease,
    ) -> Result<HeadRead, BackendError> {
        let mut inbuf = BytesMut::with_capacity(16 * 1024);
        let mut stdout: Vec<u8> = Vec::new();
        let mut head: Option<BackendHead> = None;
        loop {
            loop {
                let r = match codec::take_record(&mut inbuf) {
                    Ok(Some(r)) => r,
                    Ok(None) => break,
                    Err(e) => return Err(BackendError::Failed(format!("AH01068: {}", e.0))),
                };
                if r.id != ID {
                    continue;
                }
                match r.kind {
                    codec::STDOUT if head.is_some() && !r.content.is_empty() => {
                        return Ok(HeadRead {
                            head: head.take().unwrap_or_default(),
                            inbuf,
                            rest: r.content.to_vec(),
                            ended: false,
                        });
                    }
                    codec::STDOUT if head.is_some() => {}
                    codec::STDOUT => {
                        stdout.extend_from_slice(&r.content);
                        if let Some((h, b)) = head_end(&stdout) {
                            let lines = head_lines(&stdout[..h]);
                            if b < stdout.len() {
                                return Ok(HeadRead {
                                    head: BackendHead {
                                        status: None,
                                        lines,
                                        body_empty: false,
                                    },
                                    inbuf,
                                    rest: stdout[b..].to_vec(),
                                    ended: false,
                                });
                            }
                            head = Some(BackendHead {
                                status: None,
                                lines,
                                body_empty: false,
                            });
                        } else if stdout.len() > HEAD_MAX {
                            return Err(BackendError::Failed(
                                "AH01070: Error parsing script headers: too long".into(),
                            ));
                        }
                    }
                    codec::STDERR => self.backend_stderr(shared, &r.content),
                    codec::END_REQUEST => {
                        return match head.take() {
                            Some(mut h) => {
                                h.body_empty = true;
                                Ok(HeadRead {
                                    head: h,
                                    inbuf,
                                    rest: Vec::new(),
                                    ended: true,
                                })
                            }
                            None => Err(BackendError::Failed(
                                "AH01070: Error parsing script headers: the backend ended the request without them".into(),
                            )),
                        };
                    }
                    _ => {}
                }
            }
            match tokio::time::timeout(lease.timeout(), lease.read_buf(&mut inbuf)).await {
                Ok(Ok(0)) => {
                    return Err(BackendError::Failed(
                        "AH01075: Error dispatching request: the backend closed the connection"
                            .into(),
                    ))
                }
                Ok(Ok(_)) => {}
                Ok(Err(e)) => {
                    return Err(BackendError::Failed(format!(
                        "{}: AH01075: Error dispatching request",
                        htaccel_engine::log_format::os_error(&e)
                    )))
                }
                Err(_) => {
                    return Err(BackendError::Timeout(
                        "(70007)The timeout specified has expired: AH01075: Error dispatching request to : (polling)"
                            .into(),
                    ))
                }
            }
        }
    }

    /// `FCGI_STDERR` to the error log, one line per line, as Apache's
    /// "Got error" messages.
    pub(crate) fn backend_stderr(&self, shared: &Shared, data: &[u8]) {
        let text = String::from_utf8_lossy(data);
        let text = text.trim_end_matches(['\n', '\r', '\0']);
        if !text.is_empty() {
            self.error_log(shared, "error", &format!("AH01071: Got error '{text}'"));
        }
    }

    pub(crate) fn error_log(&self, shared: &Shared, level: &str, message: &str) {
        shared
            .handler
            .log()
            .error(level, "proxy_fcgi", Some(self.remote), message);
    }

    pub(crate) fn log_backend(
        &self,
        shared: &Shared,
        ex: &Exchange<'_>,
        status: u16,
        sent: u64,
        headers: &[(Cow<'static, str>, String)],
    ) {
        self.log(
            shared,
            ex.request,
            status,
            sent,
            headers,
            ex.received,
            ex.started,
        );
    }
}

/// Write `out` to the backend within the lease's timeout.
/// The request as the exchange after a first one sees it: its body went
/// to the first backend.
pub(crate) fn bodiless(req: &Request) -> Request {
    Request {
        framing: BodyFraming::None,
        ..req.clone()
    }
}

pub(crate) async fn send(lease: &mut pool::Lease, out: &mut BytesMut) -> Result<(), BodyStop> {
    if out.is_empty() {
        return Ok(());
    }
    let r = tokio::time::timeout(lease.timeout(), lease.write_all(out)).await;
    out.clear();
    match r {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(BodyStop::Backend(BackendError::Failed(format!(
            "{}: AH01075: Error dispatching request: sending to the backend",
            htaccel_engine::log_format::os_error(&e)
        )))),
        Err(_) => Err(BodyStop::Backend(BackendError::Timeout(
            "AH01075: Error dispatching request: timeout sending to the backend".into(),
        ))),
    }
}
