//! One request's exchange on a connection, whatever the protocol carries
//! it: let the engine decide, run the backend it names
//! (`crate::fastcgi::exchange`, `crate::cgi::exchange`,
//! `crate::proxy_http::exchange`), read or drop the request body as the
//! answer requires, then frame and queue the answer and log it — Apache's
//! `ap_process_request` with `ap_discard_request_body`, `ap_set_keepalive`
//! and the HTTP header filter. The connection loop (`crate::conn`) reads
//! heads and owns the buffers; HTTP/2 and HTTP/3 streams reach this same
//! exchange through their `Transport`s (`crate::stream_exchange`).

use crate::body::{BodyError, BodyReader};
use crate::conn::{Conn, Event, Shared, Stage, FLUSH_AT};
use crate::head::{Checked, ClientAsked, HeadError};
use crate::transport::{StreamReset, Transport};
use crate::write::{
    check_headers, headers_valid, status_has_no_body, write_head, Framing, HeadFacts, PreparedHead,
};
use bytes::{Buf, Bytes};
use htaccel_engine::http::backend::Decision;
use htaccel_engine::http::protocol_env::ProtocolEnv;
use htaccel_engine::http::{
    status, AccessEntry, BodyDisposal, BodyFraming, BodyPart, FramingFields, ProtocolError,
    Request, Response, Unannounced,
};
use std::borrow::Cow;
use std::time::SystemTime;
use tokio::time::Instant;

/// The answer to send: the engine's own, or one it kept and shares.
enum Answer {
    Owned(Response),
    Shared(std::sync::Arc<Response>),
}

impl std::ops::Deref for Answer {
    type Target = Response;
    fn deref(&self) -> &Response {
        match self {
            Answer::Owned(r) => r,
            Answer::Shared(r) => r,
        }
    }
}

/// How the answer's body ends on the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BodyEnd {
    /// The response holds its whole body: framed by a length or chunks.
    Framed,
    /// An error raised while the request body was read: Apache sends it
    /// without `Content-Length`, delimited by the close.
    ByClose,
    /// A backend's body follows the head: the response is neither
    /// finished (no last chunk) nor logged when its head is queued.
    Open,
}

/// How a request ended up, for the response and its connection.
pub(crate) struct Exchange<'a> {
    pub(crate) request: Option<&'a Request>,
    /// The request is a `HEAD`.
    pub(crate) head: bool,
    /// Apache's `r->proto_num` (9 for HTTP/0.9, 1000 when the request line
    /// could not be read).
    pub(crate) proto_num: u32,
    /// The connection cannot be reused whatever the response says.
    pub(crate) close: bool,
    /// `Expect: 100-continue` was received and no `100 Continue` sent.
    pub(crate) expecting: bool,
    pub(crate) client: ClientAsked,
    pub(crate) body_end: BodyEnd,
    pub(crate) received: SystemTime,
    pub(crate) started: Instant,
}

impl<'a> Exchange<'a> {
    /// An answer the connection layer gives for an error: the connection
    /// closes after it, no body and no `100 Continue` pending.
    pub(crate) fn error(
        request: Option<&'a Request>,
        head: bool,
        proto_num: u32,
        received: SystemTime,
        started: Instant,
    ) -> Exchange<'a> {
        Exchange {
            request,
            head,
            proto_num,
            close: true,
            expecting: false,
            client: ClientAsked::Nothing,
            body_end: BodyEnd::Framed,
            received,
            started,
        }
    }

    /// The answer is an error found while the request body was read: the
    /// connection closes after it, and an error of the request's own
    /// handler (`no_length`) goes without a length, ended by the close.
    pub(crate) fn body_failed(&mut self, no_length: bool) {
        self.close = true;
        if no_length {
            self.body_end = BodyEnd::ByClose;
        }
    }

    /// An HTTP/0.9 request: its answer is the body alone.
    pub(crate) fn http09(&self) -> bool {
        self.proto_num == 9
    }
}

impl<T: Transport> Conn<T> {
    /// Handle one request whose head is the first `n` bytes of the buffer.
    /// `Some(true)`: the connection stays; `Some(false)`: close after the
    /// queued output; `None`: drop at once.
    pub(crate) async fn exchange(
        &mut self,
        shared: &Shared,
        n: usize,
        received: SystemTime,
        started: Instant,
    ) -> Option<bool> {
        let head: Bytes = self.rbuf.split_to(n).freeze();
        let mut finished = self.parser.finish(
            &head,
            self.remote,
            self.local_addr,
            self.stream.tls(),
            self.stream.h2_stream(),
        );
        // `StrictHostCheck`: a host no server of the address names is
        // refused where a bad `Host` is (the checked request is moved only
        // then).
        if matches!(&finished, Ok(c) if shared.handler.host_refused(&c.req)) {
            if let Ok(c) = finished {
                let e = HeadError {
                    head_only: c.req.method == "HEAD",
                    ..HeadError::new(400)
                };
                finished = Err(Box::new((e, c.req)));
            }
        }
        let checked = match finished {
            Ok(mut c) => {
                c.req.proxied_by = self.proxied_by;
                c
            }
            Err(refused) => {
                let (e, req) = *refused;
                let conn = req.headers.get_joined("Connection");
                let conn = conn.as_deref().unwrap_or_default();
                if e.status == 417 {
                    // Boxed, as every wait for a request body here: the
                    // exchange's future holds only what its own path
                    // needs, and the bodiless request (most) does not
                    // carry (and copy) the room of a body's reading.
                    if let Some(answer) =
                        Box::pin(self.discard_before_417(shared, &req, received, started)).await
                    {
                        return answer;
                    }
                }
                let ex = Exchange {
                    // Apache computes the headers of these answers as usual
                    // (a 417 may say Keep-Alive) and closes regardless.
                    close: false,
                    client: ClientAsked::of_field(conn),
                    ..Exchange::error(
                        Some(&req),
                        e.head_only,
                        self.parser.proto_num(),
                        received,
                        started,
                    )
                };
                let expect = e
                    .expect
                    .as_ref()
                    .map(|v| String::from_utf8_lossy(v).into_owned());
                let mut resp = shared.handler.protocol_error(&ProtocolError {
                    status: e.status,
                    note: e.note,
                    method: Some(&req.method),
                    expect: expect.as_deref(),
                    head: e.head_only,
                    request: Some(&req),
                    additional: None,
                });
                resp.close = false;
                self.respond(shared, &ex, &resp).ok()?;
                return Some(false);
            }
        };
        let Checked {
            req,
            proto_num,
            expect_100,
            close,
            client,
        } = checked;
        if let Some(status) = self.stream.refusal() {
            // mod_http2 refused the stream's fields: Apache dies with that
            // status before `Host` chooses a virtual host (the address's
            // default server answers), and a `:path` it did not take makes
            // its request line fail to parse too (the 414 page names the
            // 400 as well).
            let ex = Exchange {
                client,
                ..Exchange::error(
                    Some(&req),
                    req.method == "HEAD",
                    proto_num,
                    received,
                    started,
                )
            };
            let resp = shared.handler.protocol_error(&ProtocolError {
                request: Some(&req),
                additional: (status == 414).then_some(400),
                ..ProtocolError::of_request(status, &req)
            });
            self.respond(shared, &ex, &resp).ok()?;
            return Some(false);
        }
        // The rest of the exchange is the request's own server's
        // (Apache's `apply_server_config` once `Host` chose it).
        if let Some(own) = shared.handler.request_settings(&req) {
            self.settings = own;
        }
        // mod_reqtimeout's body stage is the request's own server's.
        if self.stages.enabled && req.framing != BodyFraming::None {
            self.body_stage = shared
                .handler
                .body_read_timeout(&req)
                .unwrap_or(self.stages.body);
        }
        let mut ex = Exchange {
            request: Some(&req),
            head: req.method == "HEAD",
            proto_num,
            // A stream (HTTP/2, HTTP/3) carries one request: as mod_http2's
            // secondary connections, the exchange is its connection's last,
            // so a body the answer does not need is not waited for.
            close: close || self.stream.carries_one_request(),
            expecting: expect_100,
            client,
            body_end: BodyEnd::Framed,
            received,
            started,
        };
        let mut resp = match shared.handler.decide(&req) {
            Decision::Respond(r) => Answer::Owned(r),
            Decision::Kept(r) => Answer::Shared(r),
            // Boxed: the back-end exchange is the largest state of this
            // future, which every connection would otherwise carry while idle.
            Decision::Backend(call) => {
                match Box::pin(self.backend(shared, &mut ex, &req, call)).await {
                    crate::fastcgi::exchange::Done::Sent(keep) => {
                        if keep == Some(true) && self.out.queued() > FLUSH_AT {
                            self.flush_out(self.settings.timeout).await.ok()?;
                        }
                        return keep;
                    }
                    crate::fastcgi::exchange::Done::Answer(r) => Answer::Owned(r),
                }
            }
        };
        if !resp.early_hints.is_empty() {
            self.early_hints(shared, &req, &resp.early_hints);
        }
        if let Answer::Owned(r) = &mut resp {
            if let Some(up) = r.h2c_upgrade.take() {
                // `101 Switching Protocols` (none to an HTTP/1.0 client, as
                // Apache's interim answers), logged as the request's own
                // answer; the session follows once it is sent.
                self.answer_start.set(Some(self.out.position()));
                if up.interim {
                    self.out.buf.extend_from_slice(
                        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n",
                    );
                }
                self.log(shared, Some(&req), 101, 0, &r.headers, received, started);
                self.upgrade = Some(up);
                return Some(false);
            }
        }
        let has_body = match req.framing {
            BodyFraming::None => false,
            BodyFraming::Length(n) => n > 0,
            BodyFraming::Chunked => true,
        };
        let mut after = None;
        if has_body {
            let limit = resp.body_limit;
            let reader = match req.framing {
                BodyFraming::Chunked => BodyReader::chunked(limit, self.settings.limits.field_size),
                BodyFraming::Length(n) => BodyReader::length(n, limit),
                BodyFraming::None => BodyReader::length(0, limit),
            };
            // Apache's input filter refuses a declared length over the
            // limit before it reads anything, whatever the answer.
            let over_limit =
                matches!(req.framing, BodyFraming::Length(n) if limit != 0 && n > limit);
            match resp.disposal {
                // A connection that will close anyway is not read from.
                BodyDisposal::Discard if ex.close => {}
                // Nor is a stream for an answer made before any handler:
                // Apache's error path discards nothing there, so a length
                // over the limit is no 413.
                BodyDisposal::AfterResponse if self.stream.carries_one_request() => {}
                BodyDisposal::Unread => ex.close = true,
                // An error answer to a client waiting for `100 Continue`:
                // no interim response, the body (if it comes) is read after.
                BodyDisposal::AfterResponse if ex.expecting && !over_limit => after = Some(reader),
                disposal => {
                    // Read before the answer is sent, as Apache reads (and
                    // drops) the body before its handler or error page.
                    let failed = if over_limit {
                        Some(Failure::Body(BodyError::TooLarge))
                    } else {
                        if disposal == BodyDisposal::Discard && ex.expecting && proto_num >= 1001 {
                            self.out
                                .buf
                                .extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
                            ex.expecting = false;
                        }
                        Box::pin(self.discard(reader)).await.err()
                    };
                    if let Some(f) = failed {
                        let (status, no_length) = match f {
                            Failure::Body(e @ (BodyError::TooLarge | BodyError::Malformed)) => {
                                (e.status(), true)
                            }
                            Failure::Body(BodyError::BadTrailer) | Failure::Eof => (400, false),
                            Failure::Timeout => (408, false),
                            Failure::Io => return None,
                        };
                        resp = Answer::Owned(if no_length {
                            // Found while the request's handler read its
                            // body: an error of that request.
                            shared.handler.body_error(&req, status)
                        } else {
                            shared
                                .handler
                                .protocol_error(&ProtocolError::of_request(status, &req))
                        });
                        ex.body_failed(no_length);
                    }
                }
            }
        }
        let keep = self.respond(shared, &ex, &resp).ok()?;
        drop(resp);
        if let (Some(reader), true) = (after, keep) {
            if Box::pin(self.discard(reader)).await.is_err() {
                return Some(false);
            }
        }
        if keep && (self.out.has_file() || self.out.queued() > FLUSH_AT) {
            self.flush_out(self.settings.timeout).await.ok()?;
        }
        Some(keep)
    }

    /// Queue the `103 Early Hints` a request sent before its answer.
    pub(crate) fn early_hints(
        &mut self,
        shared: &Shared,
        req: &Request,
        hints: &[Vec<(String, String)>],
    ) {
        for name in crate::write::write_early_hints(&mut self.out.buf, hints) {
            shared.handler.log().error(
                "error",
                "http2",
                Some(req.remote()),
                &format!("field {name:?} left out of a 103 Early Hints answer: not a valid field"),
            );
        }
    }

    /// A 417 is answered through Apache's `ap_die`, whose end
    /// (`ap_finalize_request_protocol`) reads and drops the request body
    /// before the page leaves: the client's body is waited for, and a body
    /// that fails (a malformed chunk, the client gone or too slow) turns the
    /// answer into that failure's, with the 417 named as the error being
    /// handled, closing the connection without a length. `None`: the body
    /// was read, the 417 follows; `Some`: what [`Conn::exchange`] returns.
    async fn discard_before_417(
        &mut self,
        shared: &Shared,
        req: &Request,
        received: SystemTime,
        started: Instant,
    ) -> Option<Option<bool>> {
        // LimitRequestBody's default: the 417 dies with the server's
        // configuration, before any directory's is known.
        const LIMIT: u64 = 1 << 30;
        let reader = match req.framing {
            BodyFraming::None | BodyFraming::Length(0) => return None,
            BodyFraming::Length(n) => BodyReader::length(n, LIMIT),
            BodyFraming::Chunked => BodyReader::chunked(LIMIT, self.settings.limits.field_size),
        };
        let status = match self.discard(reader).await {
            Ok(()) => return None,
            Err(Failure::Io) => return Some(None),
            Err(Failure::Timeout) => 408,
            Err(Failure::Body(e @ BodyError::TooLarge)) => e.status(),
            Err(Failure::Body(_) | Failure::Eof) => 400,
        };
        let ex = Exchange {
            client: ClientAsked::Close,
            body_end: BodyEnd::ByClose,
            ..Exchange::error(
                Some(req),
                req.method == "HEAD",
                self.parser.proto_num(),
                received,
                started,
            )
        };
        let resp = shared.handler.protocol_error(&ProtocolError {
            request: Some(req),
            additional: Some(417),
            ..ProtocolError::of_request(status, req)
        });
        self.respond(shared, &ex, &resp).ok()?;
        Some(Some(false))
    }

    /// Read and drop a request body.
    pub(crate) async fn discard(&mut self, mut reader: BodyReader) -> Result<(), Failure> {
        let mut stage = Stage::start(&self.body_stage, Instant::now());
        loop {
            if !self.rbuf.is_empty() {
                let n = reader
                    .feed(&self.rbuf, &self.settings.limits)
                    .map_err(Failure::Body)?;
                self.rbuf.advance(n);
            }
            if reader.is_done() {
                return Ok(());
            }
            match self.read(stage.next(self.settings.timeout), false).await {
                Event::Data(n) => stage.extend(n),
                Event::Eof => {
                    self.peer_closed = true;
                    return Err(Failure::Eof);
                }
                Event::Timeout => return Err(Failure::Timeout),
                Event::Stop | Event::Error => return Err(Failure::Io),
            }
        }
    }

    /// Queue one response (head and body) as Apache would write it; returns
    /// whether the connection stays open.
    pub(crate) fn respond(
        &mut self,
        shared: &Shared,
        ex: &Exchange<'_>,
        resp: &Response,
    ) -> std::io::Result<bool> {
        if resp.renegotiation_forbidden && self.stream.carries_one_request() {
            // mod_http2 does not send this 403: it resets the stream, and
            // the request is logged with its status.
            self.stream.reset_stream(StreamReset::Http11Required);
            self.log(
                shared,
                ex.request,
                resp.status,
                0,
                &resp.headers,
                ex.received,
                ex.started,
            );
            return Ok(false);
        }
        if let Some(prepared) = self.prepared(shared, ex, resp) {
            return self.respond_checked(shared, ex, resp, prepared.facts, Some(prepared));
        }
        // HTTP/2 and HTTP/3 fields carry token names only.
        let strict = self.settings.limits.strict || self.stream.carries_one_request();
        match check_headers(&resp.headers, strict) {
            // HTTP/2 and HTTP/3 fields cannot hold an obs-fold either.
            Some(true) | None if self.stream.carries_one_request() => {
                // mod_http2 has no HTTP/1.1 header filter to answer 500:
                // nghttp2 refuses the field and the stream is reset.
                self.stream.reset_stream(StreamReset::Protocol);
                return Ok(false);
            }
            Some(folded) => {
                let facts = HeadFacts::of(resp, folded);
                return self.respond_checked(shared, ex, resp, facts, None);
            }
            None => {}
        }
        // Apache's header filter refuses to send a header that could split
        // the response, and answers 500 instead.
        if let Some((n, v)) = resp
            .headers
            .iter()
            .find(|h| !headers_valid(std::slice::from_ref(*h), strict))
        {
            let msg = format!(
                "Response header '{n}' value of '{}' contains invalid characters, aborting request",
                v.escape_debug()
            );
            shared
                .handler
                .log()
                .error("error", "http", Some(self.remote), &msg);
        }
        let mut err = shared.handler.protocol_error(&ProtocolError {
            status: 500,
            ..Default::default()
        });
        if !headers_valid(&err.headers, strict) {
            err = Response::new(500);
        }
        let facts = HeadFacts::of(&err, true);
        self.respond_checked(shared, ex, &err, facts, None)
    }

    /// The head of an answer the engine kept, prepared by the first
    /// exchange that sent a copy of it (`None` for other answers, and for
    /// an exchange it was not prepared for).
    fn prepared<'r>(
        &self,
        shared: &Shared,
        ex: &Exchange<'_>,
        resp: &'r Response,
    ) -> Option<&'r PreparedHead> {
        if ex.body_end == BodyEnd::Open || ex.http09() {
            return None;
        }
        let slot = resp
            .head_cache
            .as_ref()?
            .0
            .get_or_init(|| Box::new(PreparedHead::new(resp, ex.head, &shared.server_header)));
        slot.downcast_ref::<Option<PreparedHead>>()?
            .as_ref()
            .filter(|p| p.head == ex.head)
    }

    fn respond_checked(
        &mut self,
        shared: &Shared,
        ex: &Exchange<'_>,
        resp: &Response,
        facts: HeadFacts,
        prepared: Option<&PreparedHead>,
    ) -> std::io::Result<bool> {
        self.answer_start.set(Some(self.out.position()));
        let mut vars = resp.log_vars.clone();
        if let Some(v) = vars.as_mut().filter(|v| v.track_ttfb) {
            v.ttfb = Some(ex.started.elapsed());
        }
        self.log_vars.replace(vars);
        self.log_remote_host.replace(resp.remote_host.clone());
        let status = resp.status;
        let header_only = ex.head || status_has_no_body(status);
        let engine_cl = facts.engine_cl;
        let engine_chunked = facts.engine_chunked;
        // What the request's environment asks of HTTP/1.x (`downgrade-1.0`,
        // `force-response-1.0`, `nokeepalive`): only Apache's HTTP/1.x
        // header filter reads it, a stream's answer goes as it is.
        let env = if self.stream.carries_one_request() {
            ProtocolEnv::default()
        } else {
            resp.protocol
        };
        let proto_num = if env.downgrade && ex.proto_num > 1000 {
            1000
        } else {
            ex.proto_num
        };
        // An HTTP/1.0 status line, and a connection marked closing before
        // the keep-alive tests (`AP_CONN_CLOSE`).
        let http10 = env.force_response_10 && proto_num == 1000;
        let closing = ex.close || http10;
        if self.tls_shutdown.is_none() {
            self.tls_shutdown = env.tls_shutdown;
        }
        // Apache decides on chunking where it decides on keep-alive, after
        // the pending `100 Continue` check: a client still waiting for one
        // gets a body ended by the close.
        let chunked = engine_chunked && !header_only && proto_num >= 1001 && !ex.expecting;
        // A body of unannounced length: chunked, else ended by closing the
        // connection.
        let unannounced = if header_only || engine_cl || engine_chunked {
            Unannounced::No
        } else {
            resp.stream
        };
        let stream = unannounced != Unannounced::No;
        let synth_cl = !engine_cl
            && !header_only
            && ex.body_end != BodyEnd::ByClose
            && !engine_chunked
            && !stream;
        let length_known = header_only || engine_cl || synth_cl || chunked || proto_num >= 1001;
        let wimpy = facts.wimpy;
        let max = self.settings.max_keepalive_requests;
        let left = max.saturating_sub(self.keepalives);
        let keep = !closing
            && !ex.http09()
            && !ex.expecting
            && length_known
            && self.settings.keepalive
            && !self.settings.keepalive_timeout.is_zero()
            && (max == 0 || left > 0)
            && !status::drops_connection(status)
            && !wimpy
            && ex.client != ClientAsked::Close
            && !resp.close
            && !env.no_keepalive
            && (ex.client == ClientAsked::KeepAlive || proto_num >= 1001)
            && !shared.stop.requested()
            && !shared.retired.load(std::sync::atomic::Ordering::Relaxed);
        // Apache chunks such a body wherever the connection was not marked
        // closing before the answer (`ap_set_keepalive` sets `r->chunked`
        // ahead of its keep-alive tests): a client's `Connection: close`,
        // `KeepAlive Off` or the last request allowed still get chunks.
        let chunked = chunked
            || match unannounced {
                Unannounced::No => false,
                Unannounced::Chunked => {
                    proto_num >= 1001 && !ex.expecting && !closing && !resp.close
                }
                Unannounced::ChunkedIfKept => keep,
            };
        let mut framing = Framing {
            content_length: synth_cl.then(|| resp.body.len()),
            chunked,
            status_line: resp.status_line.clone(),
            http10,
            ..Framing::fixed(
                status,
                resp.entity_in_headers,
                resp.body.len(),
                ex.head,
                ex.body_end == BodyEnd::Open,
                &facts,
            )
        };
        // Apache's core announces other protocols on a connection's first
        // answer only (`c->keepalives` still 0).
        if self.keepalives == 0 && !ex.http09() {
            framing.upgrade.clone_from(&resp.upgrade_offer);
        }
        if let Some(alt) = resp.alt_svc {
            if resp.header("Alt-Svc").is_none() {
                let port = alt.port.unwrap_or(self.local_addr.port());
                framing.alt_svc = Some(format!("h3=\":{port}\"; ma={}", alt.max_age));
            }
        }
        if keep {
            self.keepalives += 1;
            if ex.client == ClientAsked::KeepAlive {
                framing.keep_alive = Some((
                    self.settings.keepalive_timeout.as_secs(),
                    (max != 0).then_some(left),
                ));
                framing.connection = Some("Keep-Alive");
            }
        } else if !wimpy {
            framing.connection = Some("close");
        }
        self.sent_framing.set(FramingFields {
            connection: framing.connection,
            keep_alive: framing.keep_alive,
            content_length: framing.content_length,
            chunked: framing.chunked,
        });
        if !ex.http09() {
            self.stream.final_status(status);
            // `Date` is the time the request arrived, as Apache's `request_time`.
            match prepared {
                Some(p) => match self
                    .stream
                    .sends_fields()
                    .then(|| p.stream_fields(ex.received, &framing))
                    .flatten()
                {
                    Some(fields) => self
                        .out
                        .push_head(|buf| p.write(buf, ex.received, &framing), fields),
                    None => p.write(&mut self.out.buf, ex.received, &framing),
                },
                None => write_head(
                    &mut self.out.buf,
                    status,
                    &resp.headers,
                    &shared.server_header,
                    ex.received,
                    &framing,
                ),
            }
        }
        let mut sent = 0;
        if !header_only {
            for part in &resp.body.parts {
                let len = part.len();
                if len == 0 {
                    continue;
                }
                if chunked {
                    self.out
                        .buf
                        .extend_from_slice(format!("{len:x}\r\n").as_bytes());
                }
                match part {
                    BodyPart::Bytes(b) => self.out.push_bytes(b),
                    BodyPart::File { file, offset, len } => {
                        self.out.push_file(file, *offset, *len)?
                    }
                }
                if chunked {
                    self.out.buf.extend_from_slice(b"\r\n");
                }
                sent += len;
            }
            if chunked && ex.body_end != BodyEnd::Open {
                self.out.buf.extend_from_slice(b"0\r\n\r\n");
            }
        }
        if ex.body_end == BodyEnd::Open {
            return Ok(keep);
        }
        self.log(
            shared,
            ex.request,
            status,
            sent,
            &resp.headers,
            ex.received,
            ex.started,
        );
        Ok(keep)
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn log(
        &self,
        shared: &Shared,
        request: Option<&Request>,
        status: u16,
        bytes_sent: u64,
        headers: &[(Cow<'static, str>, String)],
        received: SystemTime,
        started: Instant,
    ) {
        let answer_start = self.answer_start.take();
        let vars = self.log_vars.take();
        let remote_host = self.log_remote_host.take();
        let duration = started.elapsed();
        htaccel_engine::stats::request_done(bytes_sent, duration.as_micros() as u64);
        shared.handler.log().access(&AccessEntry {
            request,
            // Without a request (a first request that timed out), Apache's
            // client is still the connection's peer.
            remote: if request.is_some() {
                self.remote
            } else {
                self.peer()
            },
            conn_peer: self.peer(),
            local: self.local_addr,
            status,
            bytes_sent,
            response_headers: headers,
            received,
            duration,
            remote_user: None,
            bytes_out: Some(
                answer_start.map_or(0, |start| self.out.position().saturating_sub(start)),
            ),
            env: vars.as_ref().map_or(&[], |v| &v.env),
            notes: vars.as_ref().map_or(&[], |v| &v.notes),
            remote_host: remote_host.as_deref(),
            bytes_in: Some(self.consumed().saturating_sub(self.request_start)),
            ttfb: vars.as_ref().and_then(|v| v.ttfb),
            framing: self.sent_framing.take(),
        });
    }
}

/// Why a body could not be discarded.
pub(crate) enum Failure {
    Body(BodyError),
    Eof,
    Timeout,
    Io,
}
