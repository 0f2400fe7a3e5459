//! One HTTP/2 stream as the exchange sees it: the `h2` crate's request
//! body and response under the HTTP/1.1 translation every multiplexed
//! stream shares (`crate::stream_exchange`). What is HTTP/2's own is
//! here: the receive window given back as the body is read, and DATA
//! frames sent within the client's window (and `H2MaxDataFrameLen`).

use super::Session;
use crate::conn;
use crate::stream_exchange::{self, BodyEvent, RequestBody, ResponseSink, StreamTransport};
use crate::transport::StreamReset;
use bytes::Bytes;
use h2::server::SendResponse;
use h2::{RecvStream, SendStream};
use std::future::poll_fn;
use std::io;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

/// Serve one stream, then tell the session it ended.
pub(super) async fn serve(
    request: http::Request<RecvStream>,
    respond: SendResponse<Bytes>,
    session: Rc<Session>,
) {
    let stream_id = u32::from(respond.stream_id());
    let (parts, body) = request.into_parts();
    let has_body = !body.is_end_stream();
    let verdict = crate::stream_limits::verdict(&parts, &session.server.limits);
    if verdict == stream_exchange::Verdict::Reset {
        let mut respond = respond;
        respond.send_reset(h2::Reason::ENHANCE_YOUR_CALM);
        session.open.set(session.open.get() - 1);
        session.ended.notify_one();
        return;
    }
    let (head, chunked) = stream_exchange::request_head(&parts, has_body, "HTTP/2.0", verdict);
    let sink = H2Sink {
        respond: Some(respond),
        send: None,
        max_data_frame: session.max_data_frame,
    };
    let transport = StreamTransport::new(
        head,
        chunked,
        has_body.then_some(H2Body(body)),
        parts.method == http::Method::HEAD,
        sink,
        session.tls.clone(),
    )
    .draining_for(session.server.timeout)
    .refused_by(verdict)
    .sending_early_hints(session.early_hints)
    .on_h2_stream(htaccel_engine::http::http2::H2Stream {
        session: session.number,
        id: stream_id,
    });
    conn::serve(
        transport,
        session.remote,
        session.local_addr,
        session.shared.clone(),
        session.local.clone(),
    )
    .await;
    session.open.set(session.open.get() - 1);
    session.ended.notify_one();
}

/// A stream's request body, its window given back as it is read.
struct H2Body(RecvStream);

impl RequestBody for H2Body {
    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<BodyEvent> {
        let body = &mut self.0;
        if !body.is_end_stream() {
            match body.poll_data(cx) {
                Poll::Ready(Some(Ok(data))) => {
                    let _ = body.flow_control().release_capacity(data.len());
                    return Poll::Ready(BodyEvent::Data(data));
                }
                Poll::Ready(Some(Err(e))) => {
                    return Poll::Ready(BodyEvent::Failed(io::Error::other(e)))
                }
                Poll::Ready(None) => {}
                Poll::Pending => return Poll::Pending,
            }
        }
        match body.poll_trailers(cx) {
            Poll::Ready(Ok(t)) => Poll::Ready(BodyEvent::End(t)),
            Poll::Ready(Err(e)) => Poll::Ready(BodyEvent::Failed(io::Error::other(e))),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// A stream's response: HEADERS, then DATA on the stream they open.
struct H2Sink {
    respond: Option<SendResponse<Bytes>>,
    send: Option<SendStream<Bytes>>,
    /// `H2MaxDataFrameLen` (0: the client's limit).
    max_data_frame: usize,
}

impl ResponseSink for H2Sink {
    async fn informational(&mut self, head: http::Response<()>) -> io::Result<()> {
        let Some(respond) = self.respond.as_mut() else {
            return Err(io::ErrorKind::BrokenPipe.into());
        };
        respond.send_informational(head).map_err(io::Error::other)
    }

    async fn response(&mut self, head: http::Response<()>, end: bool) -> io::Result<()> {
        let Some(mut respond) = self.respond.take() else {
            return Err(io::ErrorKind::BrokenPipe.into());
        };
        let send = respond.send_response(head, end).map_err(io::Error::other)?;
        if !end {
            self.send = Some(send);
        }
        Ok(())
    }

    /// Send body bytes as DATA within the client's window, each wait for
    /// window at most `timeout`.
    async fn data(&mut self, mut data: &[u8], end: bool, timeout: Duration) -> io::Result<()> {
        let Some(send) = self.send.as_mut() else {
            return Ok(());
        };
        let frame = if self.max_data_frame == 0 {
            usize::MAX
        } else {
            self.max_data_frame
        };
        let mut ended = false;
        while !data.is_empty() {
            let want = data.len().min(frame);
            send.reserve_capacity(want);
            let granted = tokio::time::timeout(
                timeout,
                poll_fn(|cx| loop {
                    if send.capacity() > 0 {
                        return Poll::Ready(Ok(send.capacity()));
                    }
                    match send.poll_capacity(cx) {
                        Poll::Ready(Some(Ok(_))) => continue,
                        Poll::Ready(Some(Err(e))) => return Poll::Ready(Err(io::Error::other(e))),
                        Poll::Ready(None) => {
                            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()))
                        }
                        Poll::Pending => return Poll::Pending,
                    }
                }),
            )
            .await
            .map_err(|_| io::Error::from(io::ErrorKind::TimedOut))??;
            let n = granted.min(want);
            ended = end && n == data.len();
            send.send_data(Bytes::copy_from_slice(&data[..n]), ended)
                .map_err(io::Error::other)?;
            data = &data[n..];
        }
        if end && !ended {
            send.send_data(Bytes::new(), true)
                .map_err(io::Error::other)?;
        }
        Ok(())
    }

    fn end(&mut self) {
        if let Some(send) = self.send.as_mut() {
            let _ = send.send_data(Bytes::new(), true);
        }
    }

    fn reset(&mut self, why: StreamReset) {
        let reason = match why {
            StreamReset::Protocol => h2::Reason::PROTOCOL_ERROR,
            StreamReset::Http11Required => h2::Reason::HTTP_1_1_REQUIRED,
        };
        if let Some(mut respond) = self.respond.take() {
            respond.send_reset(reason);
        } else if let Some(send) = self.send.as_mut() {
            send.send_reset(reason);
        }
    }
}
