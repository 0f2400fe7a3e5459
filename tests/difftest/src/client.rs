//! The client side: sends one request block to a server on 127.0.0.1 over a
//! fresh TCP connection (or a TLS session on the server's TLS port, see
//! `tls.rs`) and records everything that comes back (responses, stray
//! bytes, how the connection ended, the TLS session's protocol and
//! certificate), with bounded waits so that a server that hangs costs
//! seconds, never the whole run.

use crate::requests::{methods_in, Gap, Request};
use crate::response::{parse, Parsed, Response};
use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// How long the server may stay silent before the client gives up.
const DEFAULT_IDLE: Duration = Duration::from_secs(10);
/// Upper bound on one exchange, whatever the server does.
const MAX_EXCHANGE: Duration = Duration::from_secs(60);
/// Upper bound on what one exchange may receive.
const MAX_RECEIVED: usize = 300 << 20;

/// How the connection looked when the client stopped reading.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// The server closed it.
    Closed,
    /// The server reset it.
    Reset,
    /// The server kept it open and said nothing more within the timeout.
    Open,
    /// The client could not connect.
    NoConnection(String),
    /// HTTP/2 (`--http2`): every stream answered (the client then closes),
    /// or the stream or connection error that ended the exchange.
    Http2(String),
}

impl End {
    pub fn describe(&self) -> String {
        match self {
            End::Closed => "connection closed by the server".into(),
            End::Reset => "connection reset by the server".into(),
            End::Open => "connection left open (client timed out)".into(),
            End::NoConnection(e) => format!("could not connect: {e}"),
            End::Http2(e) => format!("HTTP/2: {e}"),
        }
    }
}

/// Everything a client saw on one connection.
#[derive(Clone, Debug)]
pub struct Exchange {
    /// The TLS session (protocol and the certificate the server sent), for
    /// a request sent over TLS.
    pub tls: Option<String>,
    pub responses: Vec<Response>,
    /// Bytes after the last response that do not parse as one.
    pub trailing: Vec<u8>,
    pub end: End,
}

/// A connection to `addr`, from the loopback address `from` if given.
fn connect(addr: SocketAddr, from: Option<Ipv4Addr>) -> std::io::Result<TcpStream> {
    let Some(from) = from else {
        return TcpStream::connect_timeout(&addr, Duration::from_secs(5));
    };
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
    socket.bind(&SocketAddr::from((from, 0)).into())?;
    socket.connect_timeout(&addr.into(), Duration::from_secs(5))?;
    Ok(socket.into())
}

fn no_connection(e: String) -> Exchange {
    Exchange {
        tls: None,
        responses: Vec::new(),
        trailing: Vec::new(),
        end: End::NoConnection(e),
    }
}

/// Sends `req` to 127.0.0.1:`port` (over TLS to `tls_port` when the
/// request asks for it, with a client certificate from `certs` if it names
/// one) and reads what comes back.
pub fn exchange(
    port: u16,
    tls_port: Option<u16>,
    certs: &std::path::Path,
    req: &Request,
) -> Exchange {
    let port = match (req.opts.tls.is_some(), tls_port) {
        (false, _) => port,
        (true, Some(p)) => p,
        (true, None) => return no_connection("the case has no TLS port (needs https)".into()),
    };
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let stream = match connect(addr, req.opts.from) {
        Ok(s) => s,
        Err(e) => return no_connection(e.to_string()),
    };
    let _ = stream.set_nodelay(true);
    let idle = req.opts.timeout.unwrap_or(DEFAULT_IDLE);
    let _ = stream.set_read_timeout(Some(idle));
    let _ = stream.set_write_timeout(Some(idle));
    if let Some(header) = &req.opts.proxy_header {
        if let Err(e) = (&stream).write_all(header) {
            return no_connection(format!("sending the PROXY header: {e}"));
        }
    }
    match &req.opts.tls {
        None => talk(stream, req, None),
        Some(tls) if tls.plain => talk(stream, req, None),
        Some(tls) => match crate::tls::handshake(stream, tls, certs) {
            Ok((session, described)) => talk(session, req, Some(described)),
            Err(e) => no_connection(format!("TLS handshake: {e}")),
        },
    }
}

/// A connection whose output the client can end while it reads on.
trait HalfClose {
    fn close_write(&mut self);
}

impl HalfClose for TcpStream {
    fn close_write(&mut self) {
        let _ = self.shutdown(std::net::Shutdown::Write);
    }
}

impl HalfClose for rustls::StreamOwned<rustls::ClientConnection, TcpStream> {
    fn close_write(&mut self) {
        self.conn.send_close_notify();
        let _ = self.conn.complete_io(&mut self.sock);
        let _ = self.sock.shutdown(std::net::Shutdown::Write);
    }
}

/// The exchange proper, over TCP or TLS.
fn talk(mut stream: impl Read + Write + HalfClose, req: &Request, tls: Option<String>) -> Exchange {
    let mut reader = Reader::new(req.bytes(), Instant::now() + MAX_EXCHANGE);
    let mut sent = Vec::new();
    for (k, segment) in req.segments.iter().enumerate() {
        if stream.write_all(segment).is_err() {
            break; // the server stopped reading; what it answered still counts
        }
        sent.extend_from_slice(segment);
        if req.gaps[k] == Gap::Shutdown {
            stream.close_write();
        }
        if k + 1 < req.segments.len() {
            if let Gap::Sleep(d) = req.gaps[k] {
                std::thread::sleep(d);
                continue;
            }
            // wait for the answers to everything sent so far, or for an
            // interim answer (`100 Continue` invites the body)
            let want = methods_in(&sent).len();
            let seen = reader.responses.len();
            while reader.end.is_none()
                && reader.finals() < want
                && !reader.responses[seen..].iter().any(Response::is_interim)
            {
                reader.read_once(&mut stream);
            }
            if reader.end.is_some() {
                break;
            }
        }
    }
    while reader.end.is_none() {
        reader.read_once(&mut stream);
    }
    let mut ex = reader.finish();
    ex.tls = tls;
    ex
}

/// Accumulates bytes and cuts them into responses as they complete.
struct Reader {
    methods: Vec<String>,
    buf: Vec<u8>,
    pos: usize,
    responses: Vec<Response>,
    invalid: bool,
    end: Option<End>,
    deadline: Instant,
}

impl Reader {
    fn new(request: Vec<u8>, deadline: Instant) -> Self {
        Reader {
            methods: methods_in(&request),
            buf: Vec::new(),
            pos: 0,
            responses: Vec::new(),
            invalid: false,
            end: None,
            deadline,
        }
    }

    /// Number of final (non-1xx) responses so far.
    fn finals(&self) -> usize {
        self.responses.iter().filter(|r| !r.is_interim()).count()
    }

    fn read_once(&mut self, stream: &mut impl Read) {
        if Instant::now() > self.deadline || self.buf.len() > MAX_RECEIVED {
            self.end = Some(End::Open);
            return;
        }
        let mut chunk = [0u8; 65536];
        match stream.read(&mut chunk) {
            Ok(0) => self.end = Some(End::Closed),
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                self.cut(false);
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                self.end = Some(End::Open)
            }
            // A TLS peer that closed without close_notify: closed all the same.
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => self.end = Some(End::Closed),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => self.end = Some(End::Reset),
        }
    }

    fn cut(&mut self, eof: bool) {
        while !self.invalid && self.pos < self.buf.len() {
            let head = self
                .methods
                .get(self.finals())
                .is_some_and(|m| m.eq_ignore_ascii_case("HEAD"));
            match parse(&self.buf[self.pos..], head, eof) {
                Parsed::Complete(r, used) => {
                    self.responses.push(r);
                    self.pos += used;
                }
                Parsed::Incomplete => break,
                Parsed::Invalid => self.invalid = true,
            }
        }
    }

    fn finish(mut self) -> Exchange {
        self.cut(true);
        Exchange {
            tls: None,
            trailing: self.buf[self.pos..].to_vec(),
            responses: self.responses,
            end: self.end.unwrap_or(End::Open),
        }
    }
}
