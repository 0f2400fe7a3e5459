//! One HTTP/3 request stream as the exchange sees it: the `h3` crate's
//! request and response under the HTTP/1.1 translation every multiplexed
//! stream shares (`crate::stream_exchange`). What is HTTP/3's own is
//! here: whether a request without `content-length` has a body is only
//! known from the stream (its end may come with the head), so its first
//! event is awaited before the exchange starts, unless the client waits
//! for `100 Continue`.

use super::Session;
use crate::conn;
use crate::stream_exchange::{self, BodyEvent, RequestBody, ResponseSink, StreamTransport};
use crate::transport::StreamReset;
use bytes::{Buf, Bytes};
use h3::server::{RequestResolver, RequestStream};
use std::future::{poll_fn, Future};
use std::io;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

type Quic = h3_quinn::Connection;
type Recv = RequestStream<h3_quinn::RecvStream, Bytes>;
type Send = RequestStream<h3_quinn::SendStream<Bytes>, Bytes>;

/// The largest piece of body handed to one send (each bounded by `Timeout`).
const SEND_PIECE: usize = 64 * 1024;

/// Serve one stream, then tell the session it ended.
pub(super) async fn serve(resolver: RequestResolver<Quic, Bytes>, session: Rc<Session>) {
    answer(resolver, &session).await;
    session.open.set(session.open.get() - 1);
    session.ended.notify_one();
}

async fn answer(resolver: RequestResolver<Quic, Bytes>, session: &Session) {
    let timeout = session.server.timeout;
    let Ok(Ok((request, stream))) = tokio::time::timeout(timeout, resolver.resolve_request()).await
    else {
        return;
    };
    let (send, mut recv) = stream.split();
    let (parts, ()) = request.into_parts();
    let declared = parts.headers.contains_key(http::header::CONTENT_LENGTH);
    let expects = parts.headers.contains_key(http::header::EXPECT);
    // The body's first event, unless its presence is declared or the
    // client waits for an interim answer before sending it.
    let first = if declared || expects {
        None
    } else {
        match tokio::time::timeout(timeout, poll_fn(|cx| H3Body::poll(&mut recv, cx))).await {
            Ok(event) => Some(event),
            Err(_) => return,
        }
    };
    let has_body = match &first {
        None => true,
        Some(BodyEvent::End(None)) => false,
        Some(_) => true,
    };
    // mod_http2's limits, as HTTP/3 has no Apache of its own; a request
    // HTTP/2 would reset is answered 431 here.
    let verdict = match crate::stream_limits::verdict(&parts, &session.server.limits) {
        stream_exchange::Verdict::Reset => stream_exchange::Verdict::Refuse {
            status: 431,
            path_refused: false,
        },
        v => v,
    };
    let (head, chunked) = stream_exchange::request_head(&parts, has_body, "HTTP/3.0", verdict);
    let mut transport = StreamTransport::new(
        head,
        chunked,
        has_body.then_some(H3Body(recv)),
        parts.method == http::Method::HEAD,
        H3Sink {
            send,
            responded: false,
            ended: false,
        },
        Some(session.tls.clone()),
    )
    .draining_for(session.server.timeout)
    .refused_by(verdict)
    .sending_early_hints(session.early_hints);
    match first {
        Some(BodyEvent::Data(d)) => transport.push_body(&d),
        Some(BodyEvent::End(t @ Some(_))) => transport.end_body(t),
        Some(BodyEvent::Failed(_)) => return,
        _ => {}
    }
    conn::serve(
        transport,
        crate::proxy_protocol::Client::direct(session.remote),
        session.local_addr,
        session.shared.clone(),
        session.local.clone(),
    )
    .await;
}

/// A request stream's body.
struct H3Body(Recv);

impl H3Body {
    fn poll(recv: &mut Recv, cx: &mut Context<'_>) -> Poll<BodyEvent> {
        match recv.poll_recv_data(cx) {
            Poll::Ready(Ok(Some(mut data))) => {
                Poll::Ready(BodyEvent::Data(data.copy_to_bytes(data.remaining())))
            }
            Poll::Ready(Ok(None)) => match recv.poll_recv_trailers(cx) {
                Poll::Ready(Ok(t)) => Poll::Ready(BodyEvent::End(t)),
                Poll::Ready(Err(e)) => Poll::Ready(BodyEvent::Failed(io::Error::other(e))),
                Poll::Pending => Poll::Pending,
            },
            Poll::Ready(Err(e)) => Poll::Ready(BodyEvent::Failed(io::Error::other(e))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl RequestBody for H3Body {
    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<BodyEvent> {
        H3Body::poll(&mut self.0, cx)
    }
}

/// A request stream's response: HEADERS frames, then DATA.
struct H3Sink {
    send: Send,
    responded: bool,
    /// The stream's end was sent.
    ended: bool,
}

impl H3Sink {
    /// End the stream (QUIC's FIN). Without GREASE frames, `h3` finishes
    /// at once, so this never waits.
    fn finish_now(&mut self) {
        if self.ended {
            return;
        }
        self.ended = true;
        let finish = self.send.finish();
        let mut finish = std::pin::pin!(finish);
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let _ = finish.as_mut().poll(&mut cx);
    }
}

impl Drop for H3Sink {
    /// An exchange that ended without finishing the stream (an error, an
    /// answer cut short): the stream is reset rather than left open.
    fn drop(&mut self) {
        if !self.ended {
            self.send.stop_stream(h3::error::Code::H3_INTERNAL_ERROR);
        }
    }
}

impl ResponseSink for H3Sink {
    async fn informational(&mut self, head: http::Response<()>) -> io::Result<()> {
        if self.responded {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        self.send
            .send_response(head)
            .await
            .map_err(io::Error::other)
    }

    async fn response(&mut self, head: http::Response<()>, end: bool) -> io::Result<()> {
        if self.responded {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        self.responded = true;
        self.send
            .send_response(head)
            .await
            .map_err(io::Error::other)?;
        if end {
            self.finish_now();
        }
        Ok(())
    }

    async fn data(&mut self, data: &[u8], end: bool, timeout: Duration) -> io::Result<()> {
        if self.ended {
            return Ok(());
        }
        for piece in data.chunks(SEND_PIECE) {
            tokio::time::timeout(timeout, self.send.send_data(Bytes::copy_from_slice(piece)))
                .await
                .map_err(|_| io::Error::from(io::ErrorKind::TimedOut))?
                .map_err(io::Error::other)?;
        }
        if end {
            self.finish_now();
        }
        Ok(())
    }

    fn end(&mut self) {
        self.finish_now();
    }

    fn reset(&mut self, why: StreamReset) {
        if !self.ended {
            self.ended = true;
            self.send.stop_stream(match why {
                StreamReset::Protocol => h3::error::Code::H3_GENERAL_PROTOCOL_ERROR,
                // HTTP/3's own "ask again over HTTP/1.1". Not reached
                // today: its one cause, a directory that needs a new
                // client verification, needs `SSLVerifyClient`, which a
                // server with `H3Engine on` refuses at start-up.
                StreamReset::Http11Required => h3::error::Code::H3_VERSION_FALLBACK,
            });
        }
    }
}
