//! The HTTP/2 client (`--http2`): sends the requests a block translates to
//! (`h2request.rs`) as streams, one after the other, on one connection to
//! 127.0.0.1 — cleartext HTTP/2 with prior knowledge (h2c) on the plain
//! port, HTTP/2 selected by ALPN on the TLS port — and records what comes
//! back in the same [`Exchange`] the HTTP/1.1 client fills, so that one
//! comparison serves both protocols.
//!
//! The framing is the `h2` crate's (on tokio, with `tokio-rustls` for TLS
//! with the same settings as `tls.rs`): the harness tests servers, not its
//! own HTTP/2. A response is recorded with the status line `HTTP/2 NNN`
//! (HTTP/2 has no reason phrase), its fields in the order received and its
//! body; interim (1xx) responses precede it, as in HTTP/1.1. How the
//! exchange ended is [`End::Http2`]: every stream answered, or the stream
//! or connection error the server caused.

use crate::client::{End, Exchange};
use crate::h2request::H2Request;
use crate::requests::Request;
use crate::response::Response;
use bytes::Bytes;
use std::future::Future;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// How long the server may stay silent before the client gives up.
const DEFAULT_IDLE: Duration = Duration::from_secs(10);
/// Upper bound on one exchange, whatever the server does.
const MAX_EXCHANGE: Duration = Duration::from_secs(60);
/// Upper bound on what one exchange may receive.
const MAX_RECEIVED: usize = 300 << 20;

thread_local! {
    /// One single-threaded runtime per harness thread: each exchange is a
    /// short sequence of awaits on one connection.
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime for the HTTP/2 client");
}

/// Sends `streams` (the translation of `req`) to 127.0.0.1:`port`, or over
/// TLS to `tls_port` when the request asks for it, and reads the answers.
pub fn exchange(
    port: u16,
    tls_port: Option<u16>,
    certs: &std::path::Path,
    req: &Request,
    streams: &[H2Request],
) -> Exchange {
    let idle = req.opts.timeout.unwrap_or(DEFAULT_IDLE);
    RUNTIME.with(|rt| {
        rt.block_on(async {
            match tokio::time::timeout(
                MAX_EXCHANGE,
                connect_and_talk(port, tls_port, certs, req, streams, idle),
            )
            .await
            {
                Ok(ex) => ex,
                Err(_) => Exchange {
                    tls: None,
                    responses: Vec::new(),
                    trailing: Vec::new(),
                    end: End::Open,
                },
            }
        })
    })
}

fn no_connection(e: String) -> Exchange {
    Exchange {
        tls: None,
        responses: Vec::new(),
        trailing: Vec::new(),
        end: End::NoConnection(e),
    }
}

async fn connect_and_talk(
    port: u16,
    tls_port: Option<u16>,
    certs: &std::path::Path,
    req: &Request,
    streams: &[H2Request],
    idle: Duration,
) -> Exchange {
    let (port, scheme) = match (&req.opts.tls, tls_port) {
        (None, _) => (port, "http"),
        (Some(_), Some(p)) => (p, "https"),
        (Some(_), None) => return no_connection("the case has no TLS port (needs https)".into()),
    };
    let mut tcp = match connect(SocketAddr::from((Ipv4Addr::LOCALHOST, port)), req.opts.from).await
    {
        Ok(s) => s,
        Err(e) => return no_connection(e.to_string()),
    };
    let _ = tcp.set_nodelay(true);
    if let Some(header) = &req.opts.proxy_header {
        // The PROXY protocol header goes first, before TLS and the preface.
        use tokio::io::AsyncWriteExt;
        match within(idle, tcp.write_all(header)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return no_connection(format!("sending the PROXY header: {e}")),
            Err(_) => return no_connection("sending the PROXY header: timed out".into()),
        }
    }
    let Some(tls) = &req.opts.tls else {
        return talk(tcp, None, scheme, streams, idle).await;
    };
    let (config, name) = match crate::tls::client_config(tls, certs) {
        Ok(c) => c,
        Err(e) => return no_connection(format!("TLS handshake: {e}")),
    };
    let connector = tokio_rustls::TlsConnector::from(config);
    let session = match tokio::time::timeout(idle, connector.connect(name, tcp)).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return no_connection(format!("TLS handshake: {e}")),
        Err(_) => return no_connection("TLS handshake: timed out".into()),
    };
    let described = crate::tls::describe(session.get_ref().1);
    if session.get_ref().1.alpn_protocol() != Some(b"h2") {
        // No HTTP/2 on this port: what the handshake chose is the answer.
        return Exchange {
            tls: Some(described),
            ..no_connection("the server did not select h2 by ALPN".into())
        };
    }
    talk(session, Some(described), scheme, streams, idle).await
}

/// A connection to `addr`, from the loopback address `from` if given.
async fn connect(
    addr: SocketAddr,
    from: Option<Ipv4Addr>,
) -> std::io::Result<tokio::net::TcpStream> {
    let socket = tokio::net::TcpSocket::new_v4()?;
    if let Some(from) = from {
        socket.bind(SocketAddr::from((from, 0)))?;
    }
    match tokio::time::timeout(Duration::from_secs(5), socket.connect(addr)).await {
        Ok(r) => r,
        Err(_) => Err(std::io::ErrorKind::TimedOut.into()),
    }
}

/// The HTTP/2 exchange proper, over TCP or TLS.
async fn talk<T>(
    io: T,
    tls: Option<String>,
    scheme: &str,
    streams: &[H2Request],
    idle: Duration,
) -> Exchange
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut ex = Exchange {
        tls,
        responses: Vec::new(),
        trailing: Vec::new(),
        end: End::Open,
    };
    let (mut client, connection) = match within(idle, builder().handshake::<_, Bytes>(io)).await {
        Ok(Ok(pair)) => pair,
        Ok(Err(e)) => {
            ex.end = ended_by(&e);
            return ex;
        }
        Err(end) => {
            ex.end = end;
            return ex;
        }
    };
    let driver = tokio::spawn(connection);
    let mut received = 0;
    let mut outcome = End::Http2("every stream answered".into());
    for stream in streams {
        match one_stream(&mut client, scheme, stream, idle, &mut ex, &mut received).await {
            Ok(()) => {}
            Err(end) => {
                outcome = end;
                break;
            }
        }
    }
    // The client is done: the connection is closed (awaiting the aborted
    // task drops the socket now, not at the thread's next exchange).
    drop(client);
    driver.abort();
    let _ = driver.await;
    ex.end = outcome;
    ex
}

/// The client's HTTP/2 settings: the `h2` crate's defaults, but no server
/// push (SETTINGS_ENABLE_PUSH 0), as browsers have it since they dropped
/// push; a server then promises nothing.
fn builder() -> h2::client::Builder {
    let mut b = h2::client::Builder::new();
    b.enable_push(false);
    b
}

/// Sends one request and reads its interim and final responses.
async fn one_stream(
    client: &mut h2::client::SendRequest<Bytes>,
    scheme: &str,
    stream: &H2Request,
    idle: Duration,
    ex: &mut Exchange,
    received: &mut usize,
) -> Result<(), End> {
    let request = build(scheme, stream).map_err(End::NoConnection)?;
    let ready = within(idle, client.clone().ready()).await?;
    *client = ready.map_err(|e| ended_by(&e))?;
    let (mut response, mut body_out) = client
        .send_request(request, stream.body.is_empty())
        .map_err(|e| ended_by(&e))?;
    if !stream.body.is_empty() {
        body_out
            .send_data(Bytes::copy_from_slice(&stream.body), true)
            .map_err(|e| ended_by(&e))?;
    }
    // Interim answers first, then the final one.
    let head = loop {
        let next = within(
            idle,
            std::future::poll_fn(|cx| {
                use std::task::Poll;
                if let Poll::Ready(Some(interim)) = response.poll_informational(cx) {
                    return Poll::Ready(Err(interim));
                }
                std::pin::Pin::new(&mut response).poll(cx).map(Ok)
            }),
        )
        .await?;
        match next {
            Err(interim) => {
                let (parts, ()) = interim.map_err(|e| ended_by(&e))?.into_parts();
                ex.responses.push(to_response(&parts, Vec::new()));
            }
            Ok(fin) => break fin.map_err(|e| ended_by(&e))?,
        }
    };
    let (parts, mut body_in) = head.into_parts();
    let mut body = Vec::new();
    let result = loop {
        match within(idle, body_in.data()).await {
            Err(end) => break Err(end),
            Ok(None) => break Ok(()),
            Ok(Some(Err(e))) => break Err(ended_by(&e)),
            Ok(Some(Ok(chunk))) => {
                let _ = body_in.flow_control().release_capacity(chunk.len());
                *received += chunk.len();
                body.extend_from_slice(&chunk);
                if *received > MAX_RECEIVED {
                    break Err(End::Open);
                }
            }
        }
    };
    ex.responses.push(to_response(&parts, body));
    result
}

/// `stream` as a request of the `http` crate, which `h2` turns into
/// pseudo-header fields.
fn build(scheme: &str, stream: &H2Request) -> Result<http::Request<()>, String> {
    let uri = format!("{scheme}://{}{}", stream.authority, stream.path);
    let mut builder = http::Request::builder()
        .method(stream.method.as_str())
        .uri(uri);
    for (name, value) in &stream.headers {
        builder = builder.header(name.as_str(), value.as_slice());
    }
    builder
        .body(())
        .map_err(|e| format!("request not sendable: {e}"))
}

fn to_response(parts: &http::response::Parts, body: Vec<u8>) -> Response {
    Response {
        status_line: format!("HTTP/2 {}", parts.status.as_u16()),
        status: parts.status.as_u16(),
        headers: parts
            .headers
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body,
    }
}

/// `fut` within the idle time; a silent server leaves the exchange open.
async fn within<F: Future>(idle: Duration, fut: F) -> Result<F::Output, End> {
    tokio::time::timeout(idle, fut).await.map_err(|_| End::Open)
}

/// How an `h2` error ended the exchange, as a client sees it.
fn ended_by(e: &h2::Error) -> End {
    // As the HTTP/1.1 client judges a connection: a plain end of the
    // stream is a close; a reset, a TLS alert (a refused client
    // certificate), or a write the server no longer reads (which of these
    // the client meets first is a race) are a reset.
    if let Some(io) = e.get_io() {
        return match io.kind() {
            std::io::ErrorKind::UnexpectedEof => End::Closed,
            _ => End::Reset,
        };
    }
    let by = if e.is_remote() { "server" } else { "client" };
    let what = if e.is_go_away() {
        "GOAWAY"
    } else if e.is_reset() {
        "RST_STREAM"
    } else {
        "error"
    };
    match e.reason() {
        Some(reason) => End::Http2(format!("{what} from the {by}: {reason:?}")),
        None => End::Http2(format!("{what} from the {by}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::build;
    use crate::h2request::H2Request;

    fn stream(method: &str, path: &str) -> H2Request {
        H2Request {
            method: method.into(),
            path: path.into(),
            authority: "localhost:8080".into(),
            headers: vec![("x-a".into(), b"1".to_vec()), ("x-a".into(), b"2".to_vec())],
            body: Vec::new(),
        }
    }

    #[test]
    fn requests_carry_scheme_authority_path_and_every_field() {
        let r = build("https", &stream("GET", "/a?b")).unwrap();
        assert_eq!(r.uri().scheme_str(), Some("https"));
        assert_eq!(r.uri().authority().unwrap().as_str(), "localhost:8080");
        assert_eq!(r.uri().path_and_query().unwrap().as_str(), "/a?b");
        let values: Vec<_> = r.headers().get_all("x-a").iter().collect();
        assert_eq!(values, ["1", "2"]);
    }
}
