//! Listening sockets and worker threads.
//!
//! Each worker thread runs its own single-threaded tokio runtime and accepts
//! on its own socket for every address, all bound with `SO_REUSEPORT`: the
//! kernel spreads new connections over the threads, and a connection stays
//! on the thread that accepted it, with no cross-thread hand-off, no lock
//! and no atomic on the request path. Sockets get `TCP_DEFER_ACCEPT` as
//! Apache's `AcceptFilter http data` sets it on Linux (a connection is only
//! accepted once its first bytes arrived) and a backlog of 511 (Apache's
//! `ListenBacklog`); accepted connections get `TCP_NODELAY`, as in Apache.
//! Before an address is bound, one socket without `SO_REUSEPORT` checks
//! that no other process listens there (`refuse_if_taken`): the threads
//! share a port among themselves, never with another server. IPv6 sockets
//! are dual-stack, as Apache's `Listen 80` on Linux (`wildcard`).

use crate::conn::{self, Local, Shared};
use crate::generation::{Current, Generations};
use crate::shutdown::{self, Stop};
use crate::ServerOptions;
use htaccel_engine::http::Handler;
use socket2::{Domain, Protocol, Socket, Type};
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::rc::Rc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const BACKLOG: i32 = 511;
/// `TCP_DEFER_ACCEPT` timeout, seconds (Apache uses 30).
const DEFER_ACCEPT: libc::c_int = 30;

/// Every listening socket, bound but not yet served: one per address and
/// worker thread.
pub struct Listeners {
    /// `per_thread[t]` holds thread `t`'s socket for every address.
    per_thread: Vec<Vec<std::net::TcpListener>>,
    addrs: Vec<SocketAddr>,
}

impl Listeners {
    /// Bind every address of `opts.listen`, once per worker thread. An
    /// address with port 0 gets a free port, the same for all its sockets.
    pub fn bind(opts: &ServerOptions) -> io::Result<Listeners> {
        if opts.listen.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "no address to listen on",
            ));
        }
        let threads = thread_count(opts.threads);
        let mut per_thread: Vec<Vec<std::net::TcpListener>> =
            (0..threads).map(|_| Vec::new()).collect();
        let mut addrs = Vec::new();
        for &addr in &opts.listen {
            refuse_if_taken(addr)?;
            let first = listen_socket(addr)?;
            let bound = first.local_addr()?;
            per_thread[0].push(first);
            for sockets in per_thread.iter_mut().skip(1) {
                sockets.push(listen_socket(bound)?);
            }
            addrs.push(bound);
        }
        Ok(Listeners { per_thread, addrs })
    }

    /// The addresses actually bound (ports filled in).
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// Start the worker threads.
    pub fn serve(self, handler: Arc<dyn Handler>, opts: &ServerOptions) -> io::Result<Server> {
        let stop = Stop::new();
        let generations = Generations::new(shared_for(handler, opts, &stop));
        let mut threads = Vec::new();
        for (i, sockets) in self.per_thread.into_iter().enumerate() {
            let current = generations.current();
            let stop = stop.clone();
            let drain = opts.shutdown_timeout;
            let t = std::thread::Builder::new()
                .name(format!("htaccel-{i}"))
                .spawn(move || worker(sockets, current, stop, drain))?;
            threads.push(t);
        }
        Ok(Server {
            addrs: self.addrs,
            stop,
            threads,
            generations,
            drain: opts.shutdown_timeout,
        })
    }
}

/// What the connections of one configuration generation share.
fn shared_for(handler: Arc<dyn Handler>, opts: &ServerOptions, stop: &Stop) -> Arc<Shared> {
    Arc::new(Shared {
        handler,
        limits: opts.limits,
        timeouts: opts.timeouts,
        keepalive: opts.keepalive,
        max_keepalive_requests: opts.max_keepalive_requests,
        server_header: opts.server_header.clone(),
        stop: stop.clone(),
        tls: opts.tls.clone().filter(|t| !t.is_empty()),
        retired: Default::default(),
    })
}

/// A running server.
pub struct Server {
    addrs: Vec<SocketAddr>,
    stop: Stop,
    threads: Vec<JoinHandle<io::Result<()>>>,
    generations: Generations,
    /// [`ServerOptions::shutdown_timeout`].
    drain: Duration,
}

/// How long after the drain a worker thread may take to end before
/// [`Server::wait`] gives up on it.
const STUCK_AFTER_DRAIN: Duration = Duration::from_secs(2);

impl Server {
    /// The addresses being served.
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// Begin a graceful stop: close the listening sockets, close idle
    /// connections, let requests in flight finish (their responses say
    /// `Connection: close`). Returns at once; [`Server::wait`] waits.
    pub fn shutdown(&self) {
        self.stop.trigger();
    }

    /// Begin a graceful stop whose requests in flight may run for `limit`
    /// (`None`: as long as they take), as Apache's `graceful-stop`.
    pub fn shutdown_draining(&self, limit: Option<Duration>) {
        self.stop.trigger_draining(limit);
    }

    /// Serve connections accepted from now on with `handler` and the
    /// per-configuration settings of `opts` (limits, timeouts, keep-alive,
    /// `Server` header); connections already open finish with what they
    /// had (see `crate::generation`). `opts.listen` and `opts.threads` are
    /// not read: the listening sockets stay as they are.
    pub fn reload(&self, handler: Arc<dyn Handler>, opts: &ServerOptions) {
        self.generations
            .publish(shared_for(handler, opts, &self.stop));
    }

    /// The handler serving new connections now.
    pub fn handler(&self) -> Arc<dyn Handler> {
        self.generations.latest().handler.clone()
    }

    /// Wait until every worker thread has ended (after [`Server::shutdown`]
    /// and the drain). A thread still busy two seconds after the drain
    /// could end (one stuck in a system call that never returns, such as a
    /// read from a hung file system) is left behind with an error, so that
    /// the process can still exit: a stop must not depend on every read
    /// returning.
    pub fn wait(self) -> io::Result<()> {
        let mut end = None;
        while !self.threads.iter().all(|t| t.is_finished()) {
            let now = Instant::now();
            if !self.stop.requested() {
                // Serving: no bound yet.
            } else if now
                >= *end.get_or_insert(now + self.stop.drain_limit(self.drain) + STUCK_AFTER_DRAIN)
            {
                let stuck = self.threads.iter().filter(|t| !t.is_finished()).count();
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "{stuck} worker thread(s) still busy {:?} after the stop began; exiting without them",
                        self.stop.drain_limit(self.drain) + STUCK_AFTER_DRAIN
                    ),
                ));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let mut result = Ok(());
        for t in self.threads {
            match t.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => result = result.and(Err(e)),
                Err(_) => result = result.and(Err(io::Error::other("worker thread panicked"))),
            }
        }
        result
    }
}

/// Check that every address of `opts.listen` can be bound now (for
/// `configtest`); the sockets are closed again at once.
pub fn bind_check(opts: &ServerOptions) -> io::Result<()> {
    for &addr in &opts.listen {
        let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
        s.set_reuse_address(true)?;
        s.bind(&addr.into()).map_err(|e| {
            io::Error::new(e.kind(), format!("could not bind to address {addr}: {e}"))
        })?;
    }
    Ok(())
}

fn thread_count(n: usize) -> usize {
    if n > 0 {
        n
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}

/// Apache's refusal of a port another process listens on. The worker
/// threads' sockets share their port through `SO_REUSEPORT`, which would
/// also let them join another process's group on that port and split its
/// traffic; binding once without it first fails (`EADDRINUSE`) if anything
/// else listens there, with or without `SO_REUSEPORT`.
fn refuse_if_taken(addr: SocketAddr) -> io::Result<()> {
    if addr.port() == 0 {
        return Ok(());
    }
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    s.set_reuse_address(true)?;
    if addr.is_ipv6() {
        s.set_only_v6(false)?;
    }
    s.bind(&addr.into()).map_err(|e| not_bound(addr, e))
}

/// Apache's words for a socket that cannot be bound (`AH00072`), then its
/// conclusion.
fn not_bound(addr: SocketAddr, e: io::Error) -> io::Error {
    let errno = e.raw_os_error().unwrap_or(0);
    let reason = io::Error::from_raw_os_error(errno).to_string();
    let reason = reason.split(" (os error").next().unwrap_or(&reason);
    io::Error::new(
        e.kind(),
        format!(
            "({errno}){reason}: AH00072: make_sock: could not bind to address {addr}\nno listening sockets available, shutting down\nAH00015: Unable to open logs"
        ),
    )
}

/// The address `Listen PORT` binds: `[::]:PORT`, which also accepts IPv4
/// (dual-stack, `IPV6_V6ONLY` off, as Apache on Linux), or `0.0.0.0:PORT`
/// where the machine has no IPv6.
pub fn wildcard(port: u16) -> SocketAddr {
    let v6 = SocketAddr::from((std::net::Ipv6Addr::UNSPECIFIED, port));
    let usable = Socket::new(Domain::IPV6, Type::STREAM, Some(Protocol::TCP)).is_ok_and(|s| {
        s.bind(&SocketAddr::from((std::net::Ipv6Addr::UNSPECIFIED, 0)).into())
            .is_ok()
    });
    if usable {
        v6
    } else {
        SocketAddr::from(([0, 0, 0, 0], port))
    }
}

fn listen_socket(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    s.set_reuse_address(true)?;
    if addr.is_ipv6() {
        // `[::]` takes IPv4 connections too (they show as `::ffff:a.b.c.d`,
        // see `unmap`), whatever `net.ipv6.bindv6only` says.
        s.set_only_v6(false)?;
    }
    s.set_reuse_port(true)?;
    s.set_nonblocking(true)?;
    s.bind(&addr.into()).map_err(|e| not_bound(addr, e))?;
    s.listen(BACKLOG)?;
    // Not fatal: without it, connections are accepted before their first bytes.
    let _ = set_defer_accept(&s);
    Ok(s.into())
}

fn set_defer_accept(s: &Socket) -> io::Result<()> {
    // SAFETY: the descriptor is the open socket owned by `s`; the option
    // value is a c_int that lives for the duration of the call, and its size
    // is passed with it.
    let rc = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_DEFER_ACCEPT,
            (&DEFER_ACCEPT as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// One worker thread: its runtime, its accept loops, then the drain.
fn worker(
    sockets: Vec<std::net::TcpListener>,
    current: Current,
    stop: Stop,
    drain: Duration,
) -> io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()?;
    let set = tokio::task::LocalSet::new();
    set.block_on(&rt, async move {
        crate::watch_ready::install();
        // mod_status counts the event loops as its idle workers.
        htaccel_engine::stats::bump(htaccel_engine::stats::Counter::EventLoops);
        let local = Rc::new(Local::default());
        let mut accepts = Vec::new();
        for s in sockets {
            let l = tokio::net::TcpListener::from_std(s)?;
            let unspecified = l.local_addr()?.ip().is_unspecified();
            accepts.push(tokio::task::spawn_local(accept_loop(
                l,
                unspecified,
                current.clone(),
                local.clone(),
                stop.clone(),
            )));
        }
        stop.wait().await;
        local.stop();
        for a in accepts {
            let _ = a.await;
        }
        shutdown::drain(&local, stop.drain_limit(drain)).await;
        htaccel_engine::stats::drop_one(htaccel_engine::stats::Counter::EventLoops);
        Ok(())
    })
}

async fn accept_loop(
    l: tokio::net::TcpListener,
    unspecified: bool,
    mut current: Current,
    local: Rc<Local>,
    stop: Stop,
) {
    let bound = l.local_addr().ok();
    loop {
        let accepted = tokio::select! {
            biased;
            _ = stop.wait() => return,
            r = l.accept() => r,
        };
        match accepted {
            Ok((stream, remote)) => {
                let _ = stream.set_nodelay(true);
                let local_addr = match (unspecified, bound) {
                    (false, Some(a)) => a,
                    _ => match stream.local_addr() {
                        Ok(a) => a,
                        Err(_) => continue,
                    },
                };
                let (remote, local_addr) = (unmap(remote), unmap(local_addr));
                let shared = current.get().clone();
                let tls = shared
                    .tls
                    .as_ref()
                    .and_then(|t| Some((t.clone(), t.port_for(local_addr)?)));
                let local = local.clone();
                // mod_remoteip's PROXY header comes first, before TLS.
                tokio::task::spawn_local(async move {
                    let Some(remote) = crate::proxy_protocol::client(
                        &stream,
                        remote,
                        local_addr,
                        &shared,
                        tls.is_some(),
                    )
                    .await
                    else {
                        return;
                    };
                    match tls {
                        None => match shared.handler.h2c(local_addr) {
                            None => {
                                conn::serve(
                                    crate::transport::Plain(stream),
                                    remote,
                                    local_addr,
                                    shared,
                                    local,
                                )
                                .await
                            }
                            Some(h2) => {
                                crate::h2::serve_cleartext(
                                    stream, remote, local_addr, h2, shared, local,
                                )
                                .await
                            }
                        },
                        Some((setup, port)) => {
                            crate::tls::serve(
                                stream, remote, local_addr, setup, port, shared, local,
                            )
                            .await
                        }
                    }
                });
            }
            Err(e) => {
                // Out of descriptors or memory: wait a little rather than spin.
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
                ) {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }
        }
    }
}

/// An IPv4 peer of a dual-stack socket shows as `::ffff:a.b.c.d`; Apache
/// reports it as the IPv4 address it is.
fn unmap(a: SocketAddr) -> SocketAddr {
    match a {
        SocketAddr::V6(v6) => match v6.ip().to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(v4.into(), v6.port()),
            None => a,
        },
        v4 => v4,
    }
}
