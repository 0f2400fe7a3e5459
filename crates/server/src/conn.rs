//! One connection, from accept to close: read a request head, hand it to
//! the request's exchange (`crate::exchange`: the engine's decision, the
//! body, the answer), and again while the connection stays persistent —
//! Apache's `ap_process_http_connection` with `ap_read_request` and
//! lingering close. The connection owns what outlives one request: the
//! transport, the read and write buffers, mod_reqtimeout's stages, the
//! keep-alive count and the mod_status slot.
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

use crate::exchange::Exchange;
use crate::head::{HeadError, HeadParser, Parse};
use crate::proxy_protocol::Client;
use crate::scoreboard::Slot;
use crate::shutdown::Stop;
use crate::transport::Transport;
use crate::write::Output;
use crate::{Limits, ReqTimeout, ServerSettings, Timeouts};
use bytes::{Buf, BytesMut};
use htaccel_engine::http::read_timeout::ConnReadTimeouts;
use htaccel_engine::http::{BodyFraming, Handler, ProtocolError, Request};
use htaccel_engine::stats::Counter;
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
pub(crate) const READ_BUF: usize = 8 * 1024;
/// Queued output beyond this is written before the next request is parsed.
pub(crate) const FLUSH_AT: u64 = 64 * 1024;
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

/// The settings a connection to `local_addr` reads its request heads
/// under (its base server's): the engine's, else the server's own.
pub(crate) fn address_settings(shared: &Shared, local_addr: SocketAddr) -> ServerSettings {
    shared
        .handler
        .address_settings(local_addr)
        .unwrap_or_else(|| shared.defaults())
}

impl Shared {
    /// The server's own settings, for a handler that names none.
    pub(crate) fn defaults(&self) -> ServerSettings {
        ServerSettings {
            limits: self.limits,
            timeout: self.timeouts.timeout,
            keepalive: self.keepalive,
            keepalive_timeout: self.timeouts.keepalive,
            keepalive_timeout_stated: true,
            max_keepalive_requests: self.max_keepalive_requests,
        }
    }
}

/// The wait for a connection's first bytes: mod_reqtimeout's header stage
/// (its first limit), else `Timeout`; at most `Timeout`.
pub(crate) fn header_limit(shared: &Shared, local_addr: SocketAddr) -> Duration {
    let stages = read_timeouts(shared, local_addr);
    let timeout = address_settings(shared, local_addr).timeout;
    if stages.header.is_off() {
        timeout
    } else {
        stages.header.timeout.min(timeout)
    }
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
    let settings = address_settings(&shared, local_addr);
    let mut c = Conn::new(
        stream,
        remote,
        local_addr,
        id,
        local.clone(),
        stages,
        settings,
    );
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
            // Boxed: every connection's future would otherwise carry the
            // room of a whole HTTP/2 session, and each stream's copy it.
            Box::pin(crate::h2::serve_upgraded(
                tcp, early, up, client, local_addr, shared, local,
            ))
            .await;
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
    let settings = address_settings(&shared, local_addr);
    let mut c = Conn::new(
        stream,
        remote,
        local_addr,
        id,
        local.clone(),
        stages,
        settings,
    );
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
pub(crate) enum Event {
    Data(usize),
    Eof,
    Timeout,
    Stop,
    Error,
}

/// A read deadline that grows with the bytes received (mod_reqtimeout).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stage {
    deadline: Option<Instant>,
    cap: Option<Instant>,
    per_byte: Duration,
}

impl Stage {
    pub(crate) fn start(cfg: &ReqTimeout, now: Instant) -> Self {
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

    pub(crate) fn extend(&mut self, n: usize) {
        if let Some(d) = &mut self.deadline {
            *d += self.per_byte * n as u32;
            if let Some(cap) = self.cap {
                *d = (*d).min(cap);
            }
        }
    }

    /// The deadline of the next read: the stage's, and at most `Timeout` away.
    pub(crate) fn next(&self, timeout: Duration) -> Instant {
        let t = Instant::now() + timeout;
        self.deadline.map_or(t, |d| d.min(t))
    }
}

pub(crate) struct Conn<T> {
    pub(crate) stream: T,
    /// The client: the connection's peer, or the one its PROXY header named.
    pub(crate) remote: SocketAddr,
    /// The connection's peer when a PROXY header was read (`%{c}a`).
    pub(crate) proxied_by: Option<SocketAddr>,
    pub(crate) local_addr: SocketAddr,
    pub(crate) rbuf: BytesMut,
    pub(crate) out: Output,
    pub(crate) parser: HeadParser,
    /// Responses so far that kept the connection open (Apache's `keepalives`).
    pub(crate) keepalives: u32,
    /// Requests read so far.
    pub(crate) served: u64,
    /// The timer of the connection's waits for input, and the instant it
    /// is set for: never after the current wait's deadline (`read`).
    pub(crate) sleep: Pin<Box<Sleep>>,
    pub(crate) sleep_at: Option<Instant>,
    pub(crate) peer_closed: bool,
    pub(crate) id: usize,
    pub(crate) local: Rc<Local>,
    /// mod_reqtimeout's stages for this connection (its base server's).
    pub(crate) stages: ConnReadTimeouts,
    /// The body stage of the request being served (its own server's).
    pub(crate) body_stage: ReqTimeout,
    /// The core's settings of the connection's base server, which its
    /// request heads are read under.
    pub(crate) base: ServerSettings,
    /// The settings in force: the base server's while a head is read, the
    /// request's own server's for the rest of its exchange.
    pub(crate) settings: ServerSettings,
    /// Where mod_status shows this connection.
    pub(crate) slot: Slot,
    /// `out.position()` when the current answer began (for `%O`).
    pub(crate) answer_start: Cell<Option<u64>>,
    /// The current answer's `log_vars`, for its access-log line.
    pub(crate) log_vars: RefCell<Option<Box<htaccel_engine::http::LogVars>>>,
    /// The fields the current answer's head got from this layer: a
    /// streamed body follows its chunking, and its access-log line reads
    /// them (`%{Connection}o` and the like).
    pub(crate) sent_framing: Cell<htaccel_engine::http::FramingFields>,
    /// How the connection ends its TLS session, as its first request had
    /// mod_ssl choose (`ssl-unclean-shutdown`).
    pub(crate) tls_shutdown: Option<htaccel_engine::http::tls::TlsShutdown>,
    /// The current answer's client name for `%h`, if it has one.
    pub(crate) log_remote_host: RefCell<Option<String>>,
    /// Bytes read from the client so far, and where the current request
    /// began among them (for `%I`: consumed since then).
    pub(crate) total_read: u64,
    pub(crate) request_start: u64,
    /// The request just answered switched the connection to `h2c`.
    pub(crate) upgrade: Option<Box<htaccel_engine::http::http2::H2cUpgrade>>,
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
    pub(crate) fn new(
        stream: T,
        remote: Client,
        local_addr: SocketAddr,
        id: usize,
        local: Rc<Local>,
        stages: ConnReadTimeouts,
        settings: ServerSettings,
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
            base: settings,
            settings,
            slot: Slot::accepted(),
            answer_start: Cell::new(None),
            sent_framing: Cell::new(Default::default()),
            tls_shutdown: None,
            log_vars: RefCell::new(None),
            log_remote_host: RefCell::new(None),
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
                        Some(true) => return self.finish().await,
                        Some(false) => return self.finish().await,
                        None => return false,
                    }
                }
                Next::Refuse(e, received, started) => {
                    self.slot.set(Counter::ConnsWriting);
                    return self
                        .refuse(shared, e.status, e.note, e.head_only, received, started)
                        .await;
                }
                Next::Close => return self.finish().await,
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
        return self.finish().await;
    }

    /// Write what is queued; whether to linger afterwards.
    async fn finish(&mut self) -> bool {
        if self.flush_out(self.settings.timeout).await.is_err() {
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
        // The wait for a next request is the last one's server's; the head
        // is read under the connection's base server.
        let idle_wait = self.settings.keepalive_wait(&self.base);
        self.settings = self.base;
        loop {
            if !self.rbuf.is_empty() {
                let stream_limits;
                let limits = if self.stream.carries_one_request() {
                    stream_limits = crate::stream_limits::head_limits(&self.settings.limits);
                    &stream_limits
                } else {
                    &self.settings.limits
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
                None => now + idle_wait,
                Some(s) => s.next(self.settings.timeout),
            };
            match self.read(deadline, idle).await {
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
    pub(crate) async fn read(&mut self, deadline: Instant, idle: bool) -> Event {
        if !self.out.is_empty() && self.flush_out(self.settings.timeout).await.is_err() {
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
            // The timer moves only for a deadline earlier than it is set
            // for. A later one (each keep-alive wait ends a little later
            // than the last) is checked when the timer fires, which then
            // moves to it: one timer update per timeout instead of one per
            // request.
            if self.sleep_at.is_none_or(|at| at > deadline) {
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
                Event::Timeout if Instant::now() < deadline => {
                    self.sleep.as_mut().reset(deadline);
                    self.sleep_at = Some(deadline);
                }
                other => return other,
            }
        }
    }

    /// The connection's own peer (the proxy, when a PROXY header named
    /// another client).
    pub(crate) fn peer(&self) -> SocketAddr {
        self.proxied_by.unwrap_or(self.remote)
    }

    /// Bytes read from the client and consumed (not waiting in the
    /// read buffer).
    pub(crate) fn consumed(&self) -> u64 {
        self.total_read - self.rbuf.len() as u64
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
        if self.tls_shutdown == Some(htaccel_engine::http::tls::TlsShutdown::Unclean) {
            self.stream.shutdown_write_unclean();
        } else {
            self.stream.shutdown_write();
        }
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
