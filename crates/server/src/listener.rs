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

use crate::conn::{self, Local, Shared};
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
        let shared = Arc::new(Shared {
            handler,
            limits: opts.limits,
            timeouts: opts.timeouts,
            keepalive: opts.keepalive,
            max_keepalive_requests: opts.max_keepalive_requests,
            server_header: opts.server_header.clone(),
            stop: stop.clone(),
            tls: opts.tls.clone().filter(|t| !t.is_empty()),
        });
        let mut threads = Vec::new();
        for (i, sockets) in self.per_thread.into_iter().enumerate() {
            let shared = shared.clone();
            let stop = stop.clone();
            let drain = opts.shutdown_timeout;
            let t = std::thread::Builder::new()
                .name(format!("htaccel-{i}"))
                .spawn(move || worker(sockets, shared, stop, drain))?;
            threads.push(t);
        }
        Ok(Server {
            addrs: self.addrs,
            stop,
            threads,
            drain: opts.shutdown_timeout,
        })
    }
}

/// A running server.
pub struct Server {
    addrs: Vec<SocketAddr>,
    stop: Stop,
    threads: Vec<JoinHandle<io::Result<()>>>,
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
            } else if now >= *end.get_or_insert(now + self.drain + STUCK_AFTER_DRAIN) {
                let stuck = self.threads.iter().filter(|t| !t.is_finished()).count();
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "{stuck} worker thread(s) still busy {:?} after the stop began; exiting without them",
                        self.drain + STUCK_AFTER_DRAIN
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

fn listen_socket(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    s.set_reuse_address(true)?;
    s.set_reuse_port(true)?;
    s.set_nonblocking(true)?;
    s.bind(&addr.into())
        .map_err(|e| io::Error::new(e.kind(), format!("could not bind to address {addr}: {e}")))?;
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
    shared: Arc<Shared>,
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
                shared.clone(),
                local.clone(),
                stop.clone(),
            )));
        }
        stop.wait().await;
        local.stop();
        for a in accepts {
            let _ = a.await;
        }
        shutdown::drain(&local, drain).await;
        htaccel_engine::stats::drop_one(htaccel_engine::stats::Counter::EventLoops);
        Ok(())
    })
}

async fn accept_loop(
    l: tokio::net::TcpListener,
    unspecified: bool,
    shared: Arc<Shared>,
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
                let tls = shared
                    .tls
                    .as_ref()
                    .and_then(|t| Some((t.clone(), t.port_for(local_addr)?)));
                match tls {
                    None => {
                        tokio::task::spawn_local(conn::serve(
                            crate::transport::Plain(stream),
                            remote,
                            local_addr,
                            shared.clone(),
                            local.clone(),
                        ));
                    }
                    Some((setup, port)) => {
                        tokio::task::spawn_local(crate::tls::serve(
                            stream,
                            remote,
                            local_addr,
                            setup,
                            port,
                            shared.clone(),
                            local.clone(),
                        ));
                    }
                }
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
