//! One connection, from accept to close: read a request head, let the
//! engine decide, discard the body it left, write the answer, and again
//! while the connection stays persistent — Apache's
//! `ap_process_http_connection` with `ap_read_request`, `ap_set_keepalive`,
//! `ap_discard_request_body` and lingering close.
//!
//! # Timing, as Apache does it
//!
//! * Waiting for the next request on a persistent connection:
//!   `KeepAliveTimeout`; expiry closes silently. While the server stops,
//!   such idle connections are closed at once.
//! * Reading a head: mod_reqtimeout's header stage, which starts with the
//!   first byte of the request (with the connection for a first request) and
//!   grows with the bytes received; every single read also waits at most
//!   `Timeout`. Expiry after the request line is answered 408; before it the
//!   connection closes silently (observed: Apache sends nothing to
//!   `GET / HTT` and a 408 to `GET / HTTP/1.1\r\nHost: x\r\n`). End of input
//!   after the request line is a 400, before it a silent close.
//! * Reading a body: the body stage, likewise; expiry is a 408 if the
//!   response has not been sent.
//!
//! # Writing
//!
//! Responses are queued in the write buffer; the buffer is flushed before
//! the connection waits for input, so that pipelined requests already read
//! are answered in one write. Large files are flushed at once.

#[path = "backend_body.rs"]
mod backend_body;
#[path = "cgi/exchange.rs"]
mod cgi_exchange;
#[path = "fastcgi/exchange.rs"]
mod fastcgi_exchange;
#[path = "proxy_http/exchange.rs"]
mod http_exchange;

use crate::body::{BodyError, BodyReader};
use crate::chars::find_token;
use crate::head::{Checked, HeadError, HeadParser, Parse};
use crate::proxy_protocol::Client;
use crate::scoreboard::Slot;
use crate::shutdown::Stop;
use crate::transport::Transport;
use crate::write::{
    check_headers, headers_valid, status_has_no_body, write_head, Framing, HeadFacts, Output,
    PreparedHead,
};
use crate::{Limits, ReqTimeout, Timeouts};
use bytes::{Buf, Bytes, BytesMut};
use htaccel_engine::http::backend::Decision;
use htaccel_engine::http::read_timeout::ConnReadTimeouts;
use htaccel_engine::http::{
    status, AccessEntry, BodyDisposal, BodyFraming, BodyPart, Handler, ProtocolError, Request,
    Response, Unannounced,
};
use htaccel_engine::stats::Counter;
use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::future::{poll_fn, Future};
use std::net::SocketAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Poll, Waker};
use std::time::{Duration, SystemTime};
use tokio::time::{Instant, Sleep};

/// Read buffer size, and the least free space offered to a read.
const READ_BUF: usize = 8 * 1024;
/// Queued output beyond this is written before the next request is parsed.
const FLUSH_AT: u64 = 64 * 1024;
/// Lingering close: each wait for the client to finish, and the whole of it
/// (Apache's `SECONDS_TO_LINGER` and `MAX_SECS_TO_LINGER`).
pub(crate) const LINGER_READ: Duration = Duration::from_secs(2);
pub(crate) const LINGER_MAX: Duration = Duration::from_secs(30);

/// What every connection of the server shares.
pub(crate) struct Shared {
    pub handler: Arc<dyn Handler>,
    pub limits: Limits,
    pub timeouts: Timeouts,
    pub keepalive: bool,
    pub max_keepalive_requests: u32,
    pub server_header: String,
    pub stop: Stop,
    /// The addresses that speak TLS (none: every connection is plain).
    pub tls: Option<crate::tls::SharedTlsSetup>,
    /// A newer configuration generation serves new connections: this
    /// one's connections close after their next answer.
    pub retired: std::sync::atomic::AtomicBool,
}

/// Read buffers a worker thread keeps for its connections.
const SPARE_BUFFERS: usize = 64;

/// What the connections of one worker thread share: whether the server is
/// stopping, how to wake the connections that idle between requests, and
/// the read buffers of the connections that are not reading: an idle
/// keep-alive connection holds no buffer (10,000 of them would otherwise
/// keep 80 MiB), and the next one to read takes one back without the
/// allocator.
#[derive(Default)]
pub(crate) struct Local {
    stopping: Cell<bool>,
    active: Cell<usize>,
    wakers: RefCell<Vec<Option<Waker>>>,
    free: RefCell<Vec<usize>>,
    spare: RefCell<Vec<BytesMut>>,
}

impl Local {
    pub(crate) fn stopping(&self) -> bool {
        self.stopping.get()
    }

    pub(crate) fn active(&self) -> usize {
        self.active.get()
    }

    /// Mark the thread as stopping and wake every idle connection.
    pub(crate) fn stop(&self) {
        self.stopping.set(true);
        for w in self.wakers.borrow_mut().iter_mut() {
            if let Some(w) = w.take() {
                w.wake();
            }
        }
    }

    pub(crate) fn register(&self) -> usize {
        self.active.set(self.active.get() + 1);
        if let Some(id) = self.free.borrow_mut().pop() {
            return id;
        }
        let mut w = self.wakers.borrow_mut();
        w.push(None);
        w.len() - 1
    }

    pub(crate) fn unregister(&self, id: usize) {
        self.active.set(self.active.get() - 1);
        self.wakers.borrow_mut()[id] = None;
        self.free.borrow_mut().push(id);
    }

    /// A read buffer with at least half of `READ_BUF` free.
    fn buffer(&self) -> BytesMut {
        self.spare
            .borrow_mut()
            .pop()
            .unwrap_or_else(|| BytesMut::with_capacity(READ_BUF))
    }

    /// Keep an emptied read buffer for the next connection that reads.
    fn give_back(&self, buf: BytesMut) {
        let mut spare = self.spare.borrow_mut();
        if spare.len() < SPARE_BUFFERS && buf.capacity() >= READ_BUF / 2 {
            spare.push(buf);
        }
    }

    pub(crate) fn set_waker(&self, id: usize, waker: &Waker) {
        let mut w = self.wakers.borrow_mut();
        match &mut w[id] {
            Some(old) if old.will_wake(waker) => {}
            slot => *slot = Some(waker.clone()),
        }
    }
}

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

/// mod_reqtimeout's stages for a connection to `local_addr`: the engine's,
/// else the server's own.
pub(crate) fn read_timeouts(shared: &Shared, local_addr: SocketAddr) -> ConnReadTimeouts {
    shared
        .handler
        .read_timeouts(local_addr)
        .unwrap_or(ConnReadTimeouts {
            handshake: ReqTimeout::OFF,
            header: shared.timeouts.header,
            body: shared.timeouts.body,
            enabled: false,
        })
}

/// Serve one accepted connection to its end.
pub(crate) async fn serve<T: Transport>(
    stream: T,
    remote: Client,
    local_addr: SocketAddr,
    shared: Arc<Shared>,
    local: Rc<Local>,
) {
    let id = local.register();
    let stages = read_timeouts(&shared, local_addr);
    // Unregister even if the engine panics and unwinds through this task.
    let _registered = Registered(&local, id);
    let mut c = Conn::new(stream, remote, local_addr, id, local.clone(), stages);
    let linger = c.run(&shared).await;
    if let Some(up) = c.upgrade.take() {
        // `Upgrade: h2c` accepted and the `101` sent: the connection is an
        // HTTP/2 session from here, whose first stream is that request.
        let client = Client {
            addr: c.remote,
            proxied_by: c.proxied_by,
        };
        let early = c.rbuf.split().freeze();
        // The HTTP/1.1 connection's state (its mod_status slot among it)
        // ends here; the session keeps its own.
        let tcp = {
            let c = c;
            c.stream.into_tcp()
        };
        drop(_registered);
        if let (true, Some(tcp)) = (linger, tcp) {
            crate::h2::serve_upgraded(tcp, early, up, client, local_addr, shared, local).await;
        }
        return;
    }
    if linger {
        c.linger().await;
    }
}

/// mod_ssl's answer to plain HTTP on a TLS port: a 400 with its reason,
/// through the error path of the address's server, then the close.
pub(crate) async fn refuse_plain_http<T: Transport>(
    stream: T,
    remote: Client,
    local_addr: SocketAddr,
    shared: Arc<Shared>,
    local: Rc<Local>,
) {
    const NOTE: &str = "Reason: You're speaking plain HTTP to an SSL-enabled server port.<br />\n Instead use the HTTPS scheme to access this URL, please.<br />\n";
    let id = local.register();
    let _registered = Registered(&local, id);
    let stages = read_timeouts(&shared, local_addr);
    let mut c = Conn::new(stream, remote, local_addr, id, local.clone(), stages);
    let linger = c
        .refuse(
            &shared,
            400,
            Some(NOTE),
            false,
            SystemTime::now(),
            Instant::now(),
        )
        .await;
    if linger {
        c.linger().await;
    }
}

pub(crate) struct Registered<'a>(pub(crate) &'a Local, pub(crate) usize);

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.0.unregister(self.1);
    }
}

/// How a read wait ended.
enum Event {
    Data(usize),
    Eof,
    Timeout,
    Stop,
    Error,
}

/// A read deadline that grows with the bytes received (mod_reqtimeout).
#[derive(Clone, Copy, Debug)]
struct Stage {
    deadline: Option<Instant>,
    cap: Option<Instant>,
    per_byte: Duration,
}

impl Stage {
    fn start(cfg: &ReqTimeout, now: Instant) -> Self {
        if cfg.timeout.is_zero() {
            return Stage {
                deadline: None,
                cap: None,
                per_byte: Duration::ZERO,
            };
        }
        Stage {
            deadline: Some(now + cfg.timeout),
            cap: (!cfg.max_timeout.is_zero()).then(|| now + cfg.max_timeout),
            per_byte: if cfg.min_rate == 0 {
                Duration::ZERO
            } else {
                Duration::from_secs(1) / cfg.min_rate
            },
        }
    }

    fn extend(&mut self, n: usize) {
        if let Some(d) = &mut self.deadline {
            *d += self.per_byte * n as u32;
            if let Some(cap) = self.cap {
                *d = (*d).min(cap);
            }
        }
    }

    /// The deadline of the next read: the stage's, and at most `Timeout` away.
    fn next(&self, timeout: Duration) -> Instant {
        let t = Instant::now() + timeout;
        self.deadline.map_or(t, |d| d.min(t))
    }
}

/// How a request ended up, for the response and its connection.
struct Exchange<'a> {
    request: Option<&'a Request>,
    head: bool,
    proto_num: u32,
    http09: bool,
    /// The connection cannot be reused whatever the response says.
    close: bool,
    /// `Expect: 100-continue` was received and no `100 Continue` sent.
    expecting: bool,
    client_close: bool,
    client_keep_alive: bool,
    /// The response is an error raised while the body was read: Apache
    /// sends it without `Content-Length`, delimited by the close.
    no_length: bool,
    received: SystemTime,
    started: Instant,
    /// A backend's body follows the head: the response is not finished
    /// (no last chunk) nor logged when its head is queued.
    open_body: bool,
}

impl<'a> Exchange<'a> {
    /// An answer the connection layer gives for an error: the connection
    /// closes after it, no body and no `100 Continue` pending.
    fn error(
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
            http09: false,
            close: true,
            expecting: false,
            client_close: false,
            client_keep_alive: false,
            no_length: false,
            received,
            started,
            open_body: false,
        }
    }
}

pub(crate) struct Conn<T> {
    stream: T,
    /// The client: the connection's peer, or the one its PROXY header named.
    remote: SocketAddr,
    /// The connection's peer when a PROXY header was read (`%{c}a`).
    proxied_by: Option<SocketAddr>,
    local_addr: SocketAddr,
    rbuf: BytesMut,
    out: Output,
    parser: HeadParser,
    /// Responses so far that kept the connection open (Apache's `keepalives`).
    keepalives: u32,
    /// Requests read so far.
    served: u64,
    sleep: Pin<Box<Sleep>>,
    sleep_at: Option<Instant>,
    peer_closed: bool,
    id: usize,
    local: Rc<Local>,
    /// mod_reqtimeout's stages for this connection (its base server's).
    stages: ConnReadTimeouts,
    /// The body stage of the request being served (its own server's).
    body_stage: ReqTimeout,
    /// Where mod_status shows this connection.
    slot: Slot,
    /// `out.position()` when the current answer began (for `%O`).
    answer_start: Cell<Option<u64>>,
    /// The current answer's `log_env`, for its access-log line.
    log_env: RefCell<Vec<(String, String)>>,
    /// Bytes read from the client so far, and where the current request
    /// began among them (for `%I`: consumed since then).
    total_read: u64,
    request_start: u64,
    /// The request just answered switched the connection to `h2c`.
    upgrade: Option<Box<htaccel_engine::http::http2::H2cUpgrade>>,
}

/// The request of a head whose request line could not be used: only the
/// connection is known (Apache's request method there is not shown).
fn unread_request(head: bool, remote: SocketAddr, local: SocketAddr) -> Request {
    Request {
        method: if head { "HEAD" } else { "GET" }.into(),
        target: String::new(),
        version: htaccel_engine::http::Version::Http11,
        request_line: String::new(),
        headers: Default::default(),
        framing: BodyFraming::None,
        peer: remote,
        proxied_by: None,
        local,
        secure: false,
        tls: None,
        h2_stream: None,
    }
}

/// What reading a head gave.
enum Next {
    Head(usize, SystemTime, Instant),
    Refuse(HeadError, SystemTime, Instant),
    Close,
}

/// Apache's `DEFAULT_LIMIT_BLANK_LINES`, as `ap_check_pipeline` uses it.
const PIPELINED_BLANK_LINES: u32 = 10;

impl<T: Transport> Conn<T> {
    fn new(
        stream: T,
        remote: Client,
        local_addr: SocketAddr,
        id: usize,
        local: Rc<Local>,
        stages: ConnReadTimeouts,
    ) -> Self {
        Conn {
            stream,
            remote: remote.addr,
            proxied_by: remote.proxied_by,
            local_addr,
            rbuf: BytesMut::new(),
            out: Output::default(),
            parser: HeadParser::new(),
            keepalives: 0,
            served: 0,
            sleep: Box::pin(tokio::time::sleep_until(
                Instant::now() + Duration::from_secs(3600),
            )),
            sleep_at: None,
            peer_closed: false,
            id,
            local,
            stages,
            body_stage: stages.body,
            slot: Slot::accepted(),
            answer_start: Cell::new(None),
            log_env: RefCell::new(Vec::new()),
            total_read: 0,
            request_start: 0,
            upgrade: None,
        }
    }

    /// Serve requests until the connection is done; whether to linger.
    async fn run(&mut self, shared: &Shared) -> bool {
        loop {
            match self.read_head(shared).await {
                Next::Head(n, received, started) => {
                    self.served += 1;
                    self.slot.set(Counter::ConnsWriting);
                    match self.exchange(shared, n, received, started).await {
                        Some(true) if self.skip_pipelined_blank_lines() => continue,
                        Some(true) => return self.finish(shared).await,
                        Some(false) => return self.finish(shared).await,
                        None => return false,
                    }
                }
                Next::Refuse(e, received, started) => {
                    self.slot.set(Counter::ConnsWriting);
                    return self
                        .refuse(shared, e.status, e.note, e.head_only, received, started)
                        .await;
                }
                Next::Close => return self.finish(shared).await,
            }
        }
    }

    /// Apache's `ap_check_pipeline` after a request that keeps the
    /// connection: empty lines (CRLF or a bare LF) the client already sent
    /// after it are dropped, up to [`PIPELINED_BLANK_LINES`]; one more and
    /// the connection closes after the answer. Only bytes already received
    /// are looked at (Apache reads without blocking): an empty line that
    /// comes later is read as part of the next request, where a bare LF is
    /// a 400. Whether the connection goes on.
    fn skip_pipelined_blank_lines(&mut self) -> bool {
        let mut blank = 0;
        loop {
            let len = match self.rbuf.first() {
                Some(b'\n') => 1,
                Some(b'\r') if self.rbuf.get(1) == Some(&b'\n') => 2,
                // A CR not followed by LF (or not yet) is data.
                _ => return true,
            };
            self.rbuf.advance(len);
            blank += 1;
            if blank > PIPELINED_BLANK_LINES {
                return false;
            }
        }
    }

    /// Answer a request refused while its head was read (or a client
    /// speaking plain HTTP to a TLS port) and close; whether to linger.
    async fn refuse(
        &mut self,
        shared: &Shared,
        status: u16,
        note: Option<&str>,
        head: bool,
        received: SystemTime,
        started: Instant,
    ) -> bool {
        self.served += 1;
        // For the access log: the request line, when one was read.
        let partial = self
            .parser
            .line_request(&self.rbuf, self.peer(), self.local_addr);
        let ex = Exchange::error(partial.as_ref(), head, 1000, received, started);
        // The error path needs a request: the one read so
        // far, or (request line unusable) just the connection.
        let failed = partial
            .clone()
            .unwrap_or_else(|| unread_request(head, self.peer(), self.local_addr));
        let resp = shared.handler.protocol_error(&ProtocolError {
            status,
            note,
            head,
            request: Some(&failed),
            ..Default::default()
        });
        if self.respond(shared, &ex, &resp).is_err() {
            return false;
        }
        return self.finish(shared).await;
    }

    /// Write what is queued; whether to linger afterwards.
    async fn finish(&mut self, shared: &Shared) -> bool {
        if self.flush_out(shared.timeouts.timeout).await.is_err() {
            return false;
        }
        !self.peer_closed
    }

    /// Read until a request head is complete or the connection is over.
    async fn read_head(&mut self, shared: &Shared) -> Next {
        self.parser.reset();
        self.request_start = self.consumed();
        let first = self.served == 0;
        let now = Instant::now();
        let mut stage =
            (first || !self.rbuf.is_empty()).then(|| Stage::start(&self.stages.header, now));
        self.slot.set(if stage.is_some() {
            Counter::ConnsReading
        } else {
            Counter::ConnsKeepAlive
        });
        let mut received = (!self.rbuf.is_empty()).then(SystemTime::now);
        let mut started = now;
        loop {
            if !self.rbuf.is_empty() {
                let limits = if self.stream.carries_one_request() {
                    &crate::stream_limits::HEAD_LIMITS
                } else {
                    &shared.limits
                };
                match self
                    .parser
                    .parse(&self.rbuf, limits, self.stream.tls().is_some())
                {
                    Parse::Done(n) => {
                        return Next::Head(n, received.unwrap_or_else(SystemTime::now), started)
                    }
                    Parse::Error(e) => {
                        return Next::Refuse(e, received.unwrap_or_else(SystemTime::now), started)
                    }
                    Parse::Partial => {}
                }
            }
            let idle = stage.is_none();
            if idle && self.local.stopping() {
                return Next::Close;
            }
            let deadline = match &stage {
                None => Instant::now() + shared.timeouts.keepalive,
                Some(s) => s.next(shared.timeouts.timeout),
            };
            match self.read(shared, deadline, idle).await {
                Event::Data(n) => {
                    if received.is_none() {
                        received = Some(SystemTime::now());
                        started = Instant::now();
                        self.slot.set(Counter::ConnsReading);
                    }
                    stage
                        .get_or_insert_with(|| Stage::start(&self.stages.header, started))
                        .extend(n);
                }
                Event::Eof => {
                    self.peer_closed = true;
                    if self.parser.line_complete() {
                        return Next::Refuse(
                            self.parser.error(&self.rbuf, 400, None),
                            received.unwrap_or_else(SystemTime::now),
                            started,
                        );
                    }
                    return Next::Close;
                }
                Event::Timeout => {
                    if idle {
                        return Next::Close;
                    }
                    if self.parser.line_complete() {
                        return Next::Refuse(
                            self.parser.error(&self.rbuf, 408, None),
                            received.unwrap_or_else(SystemTime::now),
                            started,
                        );
                    }
                    if first {
                        // Apache logs the 408 of a first request that never
                        // completed its request line, and sends nothing.
                        self.log(
                            shared,
                            None,
                            408,
                            0,
                            &[],
                            received.unwrap_or_else(SystemTime::now),
                            started,
                        );
                    }
                    return Next::Close;
                }
                Event::Stop | Event::Error => return Next::Close,
            }
        }
    }

    /// Wait for input until `deadline` and read what came. The queued output
    /// is written first: the client may be waiting for it.
    async fn read(&mut self, shared: &Shared, deadline: Instant, idle: bool) -> Event {
        if !self.out.is_empty() && self.flush_out(shared.timeouts.timeout).await.is_err() {
            return Event::Error;
        }
        loop {
            if self.rbuf.capacity() == 0 {
                self.rbuf = self.local.buffer();
            }
            if self.rbuf.capacity() - self.rbuf.len() < READ_BUF / 2 {
                self.rbuf.reserve(READ_BUF);
            }
            match self.stream.try_read(&mut self.rbuf) {
                Ok(0) => return Event::Eof,
                Ok(n) => {
                    self.total_read += n as u64;
                    return Event::Data(n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return Event::Error,
            }
            if idle && self.rbuf.is_empty() {
                // Waiting for the next request: the buffer goes back to the
                // thread until the client sends something.
                self.local.give_back(std::mem::take(&mut self.rbuf));
            }
            if self.sleep_at != Some(deadline) {
                self.sleep.as_mut().reset(deadline);
                self.sleep_at = Some(deadline);
            }
            let (stream, sleep, local, id) = (&self.stream, &mut self.sleep, &self.local, self.id);
            let ready = poll_fn(|cx| {
                if idle {
                    if local.stopping() {
                        return Poll::Ready(Event::Stop);
                    }
                    local.set_waker(id, cx.waker());
                }
                match stream.poll_read_ready(cx) {
                    Poll::Ready(Ok(())) => return Poll::Ready(Event::Data(0)),
                    Poll::Ready(Err(_)) => return Poll::Ready(Event::Error),
                    Poll::Pending => {}
                }
                if sleep.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Event::Timeout);
                }
                Poll::Pending
            })
            .await;
            match ready {
                Event::Data(_) => continue,
                other => return other,
            }
        }
    }

    /// Handle one request whose head is the first `n` bytes of the buffer.
    /// `Some(true)`: the connection stays; `Some(false)`: close after the
    /// queued output; `None`: drop at once.
    async fn exchange(
        &mut self,
        shared: &Shared,
        n: usize,
        received: SystemTime,
        started: Instant,
    ) -> Option<bool> {
        let head: Bytes = self.rbuf.split_to(n).freeze();
        let checked = match self.parser.finish(
            &head,
            self.remote,
            self.local_addr,
            self.stream.tls(),
            self.stream.h2_stream(),
        ) {
            Ok(mut c) => {
                c.req.proxied_by = self.proxied_by;
                c
            }
            Err(refused) => {
                let (e, req) = *refused;
                let conn = req.headers.get_joined("Connection");
                let conn = conn.as_deref().unwrap_or_default();
                if e.status == 417 {
                    if let Some(answer) = self
                        .discard_before_417(shared, &req, received, started)
                        .await
                    {
                        return answer;
                    }
                }
                let ex = Exchange {
                    // Apache computes the headers of these answers as usual
                    // (a 417 may say Keep-Alive) and closes regardless.
                    close: false,
                    client_close: find_token(conn, b"close"),
                    client_keep_alive: find_token(conn, b"keep-alive"),
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
            http09,
            expect_100,
            close,
            client_close,
            client_keep_alive,
        } = checked;
        if let Some(status) = self.stream.refusal() {
            // mod_http2 refused the stream's fields: Apache dies with that
            // status before `Host` chooses a virtual host (the address's
            // default server answers), and a `:path` it did not take makes
            // its request line fail to parse too (the 414 page names the
            // 400 as well).
            let ex = Exchange {
                http09,
                client_close,
                client_keep_alive,
                ..Exchange::error(
                    Some(&req),
                    req.method == "HEAD",
                    proto_num,
                    received,
                    started,
                )
            };
            let resp = shared.handler.protocol_error(&ProtocolError {
                status,
                method: Some(&req.method),
                head: req.method == "HEAD",
                request: Some(&req),
                additional: (status == 414).then_some(400),
                ..Default::default()
            });
            self.respond(shared, &ex, &resp).ok()?;
            return Some(false);
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
            http09,
            // A stream (HTTP/2, HTTP/3) carries one request: as mod_http2's
            // secondary connections, the exchange is its connection's last,
            // so a body the answer does not need is not waited for.
            close: close || self.stream.carries_one_request(),
            expecting: expect_100,
            client_close,
            client_keep_alive,
            no_length: false,
            received,
            started,
            open_body: false,
        };
        let mut resp = match shared.handler.decide(&req) {
            Decision::Respond(r) => Answer::Owned(r),
            Decision::Kept(r) => Answer::Shared(r),
            // Boxed: the back-end exchange is the largest state of this
            // future, which every connection would otherwise carry while idle.
            Decision::Backend(call) => {
                match Box::pin(self.backend(shared, &mut ex, &req, call)).await {
                    fastcgi_exchange::Done::Sent(keep) => {
                        if keep == Some(true) && self.out.queued() > FLUSH_AT {
                            self.flush_out(shared.timeouts.timeout).await.ok()?;
                        }
                        return keep;
                    }
                    fastcgi_exchange::Done::Answer(r) => Answer::Owned(r),
                }
            }
        };
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
                BodyFraming::Chunked => BodyReader::chunked(limit, shared.limits.field_size),
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
                        self.discard(shared, reader).await.err()
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
                            shared.handler.protocol_error(&ProtocolError {
                                status,
                                method: Some(&req.method),
                                head: req.method == "HEAD",
                                ..Default::default()
                            })
                        });
                        ex.close = true;
                        ex.no_length = no_length;
                    }
                }
            }
        }
        let keep = self.respond(shared, &ex, &resp).ok()?;
        drop(resp);
        if let (Some(reader), true) = (after, keep) {
            if self.discard(shared, reader).await.is_err() {
                return Some(false);
            }
        }
        if keep && (self.out.has_file() || self.out.queued() > FLUSH_AT) {
            self.flush_out(shared.timeouts.timeout).await.ok()?;
        }
        Some(keep)
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
            BodyFraming::Chunked => BodyReader::chunked(LIMIT, shared.limits.field_size),
        };
        let status = match self.discard(shared, reader).await {
            Ok(()) => return None,
            Err(Failure::Io) => return Some(None),
            Err(Failure::Timeout) => 408,
            Err(Failure::Body(e @ BodyError::TooLarge)) => e.status(),
            Err(Failure::Body(_) | Failure::Eof) => 400,
        };
        let ex = Exchange {
            client_close: true,
            no_length: true,
            ..Exchange::error(
                Some(req),
                req.method == "HEAD",
                self.parser.proto_num(),
                received,
                started,
            )
        };
        let resp = shared.handler.protocol_error(&ProtocolError {
            status,
            method: Some(&req.method),
            head: req.method == "HEAD",
            request: Some(req),
            additional: Some(417),
            ..Default::default()
        });
        self.respond(shared, &ex, &resp).ok()?;
        Some(Some(false))
    }

    /// Read and drop a request body.
    async fn discard(&mut self, shared: &Shared, mut reader: BodyReader) -> Result<(), Failure> {
        let mut stage = Stage::start(&self.body_stage, Instant::now());
        loop {
            if !self.rbuf.is_empty() {
                let n = reader
                    .feed(&self.rbuf, &shared.limits)
                    .map_err(Failure::Body)?;
                self.rbuf.advance(n);
            }
            if reader.is_done() {
                return Ok(());
            }
            match self
                .read(shared, stage.next(shared.timeouts.timeout), false)
                .await
            {
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
    fn respond(
        &mut self,
        shared: &Shared,
        ex: &Exchange<'_>,
        resp: &Response,
    ) -> std::io::Result<bool> {
        if let Some(prepared) = self.prepared(shared, ex, resp) {
            return self.respond_checked(shared, ex, resp, prepared.facts, Some(prepared));
        }
        match check_headers(&resp.headers) {
            // HTTP/2 and HTTP/3 fields cannot hold an obs-fold either.
            Some(true) | None if self.stream.carries_one_request() => {
                // mod_http2 has no HTTP/1.1 header filter to answer 500:
                // nghttp2 refuses the field and the stream is reset.
                self.stream.reset_stream();
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
            .find(|h| !headers_valid(std::slice::from_ref(*h)))
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
        if !headers_valid(&err.headers) {
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
        if ex.open_body || ex.http09 {
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
        self.log_env.replace(resp.log_env.clone());
        let status = resp.status;
        let header_only = ex.head || status_has_no_body(status);
        let engine_cl = facts.engine_cl;
        let engine_chunked = facts.engine_chunked;
        // Apache decides on chunking where it decides on keep-alive, after
        // the pending `100 Continue` check: a client still waiting for one
        // gets a body ended by the close.
        let chunked = engine_chunked && !header_only && ex.proto_num >= 1001 && !ex.expecting;
        // A body of unannounced length: chunked, else ended by closing the
        // connection.
        let unannounced = if header_only || engine_cl || engine_chunked {
            Unannounced::No
        } else {
            resp.stream
        };
        let stream = unannounced != Unannounced::No;
        let synth_cl = !engine_cl && !header_only && !ex.no_length && !engine_chunked && !stream;
        let length_known = header_only || engine_cl || synth_cl || chunked || ex.proto_num >= 1001;
        let wimpy = facts.wimpy;
        let max = shared.max_keepalive_requests;
        let left = max.saturating_sub(self.keepalives);
        let keep = !ex.close
            && !ex.http09
            && !ex.expecting
            && length_known
            && shared.keepalive
            && !shared.timeouts.keepalive.is_zero()
            && (max == 0 || left > 0)
            && !status::drops_connection(status)
            && !wimpy
            && !ex.client_close
            && !resp.close
            && (ex.client_keep_alive || ex.proto_num >= 1001)
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
                    ex.proto_num >= 1001 && !ex.expecting && !ex.close && !resp.close
                }
                Unannounced::ChunkedIfKept => keep,
            };
        let mut framing = Framing {
            content_length: synth_cl.then(|| resp.body.len()),
            chunked,
            status_line: resp.status_line.clone(),
            ..Framing::fixed(
                status,
                resp.entity_in_headers,
                resp.body.len(),
                ex.head,
                ex.open_body,
                &facts,
            )
        };
        // Apache's core announces other protocols on a connection's first
        // answer only (`c->keepalives` still 0).
        if self.keepalives == 0 && !ex.http09 {
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
            if ex.client_keep_alive {
                framing.keep_alive = Some((
                    shared.timeouts.keepalive.as_secs(),
                    (max != 0).then_some(left),
                ));
                framing.connection = Some("Keep-Alive");
            }
        } else if !wimpy {
            framing.connection = Some("close");
        }
        if !ex.http09 {
            // `Date` is the time the request arrived, as Apache's `request_time`.
            match prepared {
                Some(p) => p.write(&mut self.out.buf, ex.received, &framing),
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
            if chunked && !ex.open_body {
                self.out.buf.extend_from_slice(b"0\r\n\r\n");
            }
        }
        if ex.open_body {
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

    /// The connection's own peer (the proxy, when a PROXY header named
    /// another client).
    fn peer(&self) -> SocketAddr {
        self.proxied_by.unwrap_or(self.remote)
    }

    /// Bytes read from the client and consumed (not waiting in the
    /// read buffer).
    fn consumed(&self) -> u64 {
        self.total_read - self.rbuf.len() as u64
    }

    #[allow(clippy::too_many_arguments)]
    fn log(
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
        let env = self.log_env.take();
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
            env: &env,
            bytes_in: Some(self.consumed().saturating_sub(self.request_start)),
        });
    }

    /// Write what is queued, through the transport.
    pub(crate) async fn flush_out(&mut self, timeout: Duration) -> std::io::Result<()> {
        self.stream.flush(&mut self.out, timeout).await
    }

    /// Lingering close: stop sending, then read and drop what the client
    /// still sends until it closes, so that the answer is not lost to a
    /// reset (Apache's `ap_lingering_close`).
    async fn linger(&mut self) {
        self.slot.set(Counter::ConnsClosing);
        self.stream.shutdown_write();
        let end = Instant::now() + LINGER_MAX;
        loop {
            self.rbuf.clear();
            let deadline = (Instant::now() + LINGER_READ).min(end);
            match self.read_raw(deadline).await {
                Event::Data(_) => continue,
                _ => return,
            }
        }
    }

    /// Read without flushing and without watching for the server to stop.
    async fn read_raw(&mut self, deadline: Instant) -> Event {
        let stream = &self.stream;
        match tokio::time::timeout_at(deadline, poll_fn(|cx| stream.poll_read_ready(cx))).await {
            Err(_) => Event::Timeout,
            Ok(Err(_)) => Event::Error,
            Ok(Ok(())) => {
                self.rbuf.reserve(READ_BUF);
                match self.stream.try_read(&mut self.rbuf) {
                    Ok(0) => Event::Eof,
                    Ok(n) => {
                        self.total_read += n as u64;
                        Event::Data(n)
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Event::Data(0),
                    Err(_) => Event::Error,
                }
            }
        }
    }
}

/// Why a body could not be discarded.
enum Failure {
    Body(BodyError),
    Eof,
    Timeout,
    Io,
}
