//! A request body on its way to a backend (FastCGI or HTTP), as Apache's
//! mod_proxy moves it: a prefetch of at most [`PREFETCH_MAX`] bytes decides
//! how the body is announced, then the rest is streamed as it arrives.
//!
//! Why a prefetch, and why no more: a chunked body has no length, and
//! both mod_proxy_fcgi and mod_proxy_http first read what they can of it
//! (`ap_proxy_prefetch_input`, 16,384 bytes, stopping 80 short): when that
//! is the whole body it goes with its length (`CONTENT_LENGTH`,
//! `Content-Length`), otherwise it is streamed (to PHP-FPM without
//! `CONTENT_LENGTH`, to an upstream `Transfer-Encoding: chunked`). So no
//! connection ever holds more than one prefetch of a body, however large
//! or slow the body is: memory per connection is bounded by buffers, not
//! by what a client chooses to send. mod_proxy_fcgi prefetches without
//! waiting (what has arrived), mod_proxy_http waits for it. Where the body
//! must go with its length (`proxy-sendcl`), the rest goes to a temporary
//! file first (`crate::spool`), not to memory.
//!
//! It reads through the connection's buffer (`crate::conn::Conn`), under
//! mod_reqtimeout's body stage.

use crate::body::{BodyError, BodyReader};
use crate::conn::{Conn, Event, Stage};
use crate::exchange::Exchange;
use crate::spool::{Spooled, SPOOL_MAX};
use bytes::Buf;
use htaccel_engine::http::backend::BackendError;

/// mod_proxy's `MAX_MEM_SPOOL`: the most body data a prefetch reads.
const PREFETCH_MAX: usize = 16384;
/// A prefetch stops once it holds this much (`MAX_MEM_SPOOL - 80`).
const PREFETCH_ENOUGH: usize = PREFETCH_MAX - 80;

/// Why streaming the client's body stopped.
pub(crate) enum BodyStop {
    /// The client's body failed: answer this status (and whether the
    /// answer goes without a length, as Apache's for a body error).
    Client(u16, bool),
    Backend(BackendError),
    /// The temporary file of a spooled body failed: 500, and this for
    /// the error log.
    Spool(String),
    Gone,
}

/// The start of a chunked body that a prefetch did not hold whole.
pub(crate) struct Prefetched {
    /// The body data read.
    pub data: Vec<u8>,
    /// The reader for the rest of the body.
    pub rest: BodyReader,
    /// Some of the body had arrived (Apache's `seen_data`: no
    /// `100 Continue` is sent for it any more).
    pub seen: bool,
}

/// How a chunked body goes to a backend.
pub(crate) enum ChunkedBody {
    /// All of it, read by the prefetch: sent with its length.
    Whole(Vec<u8>),
    /// All of it, spooled (`proxy-sendcl`): sent with its length.
    Spooled(Spooled),
    /// Its start; the rest is streamed as it arrives, without a length.
    Streamed(Box<Prefetched>),
}

impl ChunkedBody {
    /// The length it is sent with, if any.
    pub(crate) fn len(&self) -> Option<u64> {
        match self {
            ChunkedBody::Whole(d) => Some(d.len() as u64),
            ChunkedBody::Spooled(s) => Some(s.len()),
            ChunkedBody::Streamed(_) => None,
        }
    }
}

impl<T: crate::transport::Transport> Conn<T> {
    /// Read as much of a chunked body as decides how it is sent: the
    /// prefetch, and with `send_length` (`proxy-sendcl`) the rest too.
    pub(crate) async fn chunked_body(
        &mut self,
        ex: &mut Exchange<'_>,
        stage: &mut Stage,
        limit: u64,
        wait: bool,
        send_length: bool,
    ) -> Result<ChunkedBody, BodyStop> {
        match self.prefetch_chunked(stage, limit, wait).await? {
            ChunkedBody::Streamed(p) if send_length => self
                .spool_rest(ex, stage, *p)
                .await
                .map(ChunkedBody::Spooled),
            other => Ok(other),
        }
    }

    /// Read the start of a chunked body: until it ends or
    /// [`PREFETCH_ENOUGH`] bytes are read; with `wait` false, only what
    /// has already arrived.
    async fn prefetch_chunked(
        &mut self,
        stage: &mut Stage,
        limit: u64,
        wait: bool,
    ) -> Result<ChunkedBody, BodyStop> {
        let mut reader = BodyReader::chunked(limit, self.settings.limits.field_size);
        let mut data = Vec::new();
        let mut seen = false;
        loop {
            if !self.rbuf.is_empty() {
                seen = true;
                // (Apache's reads may take it up to PREFETCH_MAX, but a
                // body is whole only if it ends before PREFETCH_ENOUGH.)
                let budget = (PREFETCH_ENOUGH - data.len()) as u64;
                let fed = reader.feed_upto(&self.rbuf, &self.settings.limits, budget, &mut |d| {
                    data.extend_from_slice(d)
                });
                self.take_fed(fed)?;
            }
            if reader.is_done() {
                return Ok(ChunkedBody::Whole(data));
            }
            if data.len() >= PREFETCH_ENOUGH {
                break;
            }
            if wait {
                self.more_body(stage).await?;
            } else if !self.read_now(stage)? {
                break;
            }
        }
        Ok(ChunkedBody::Streamed(Box::new(Prefetched {
            data,
            rest: reader,
            seen,
        })))
    }

    /// Read the rest of a body whose start was prefetched, keeping the
    /// prefetch in memory and the rest in a temporary file
    /// (`ap_proxy_spool_input`): for a body that must go with its length.
    async fn spool_rest(
        &mut self,
        ex: &mut Exchange<'_>,
        stage: &mut Stage,
        prefetched: Prefetched,
    ) -> Result<Spooled, BodyStop> {
        /// What is gathered before it is written.
        const WRITE_AT: usize = 64 * 1024;
        let Prefetched {
            data,
            rest: mut reader,
            mut seen,
        } = prefetched;
        let mut spooled = Spooled::new(data);
        let mut pending = Vec::with_capacity(2 * WRITE_AT);
        loop {
            if !self.rbuf.is_empty() {
                seen = true;
                let fed = reader.feed_with(&self.rbuf, &self.settings.limits, &mut |d| {
                    pending.extend_from_slice(d)
                });
                self.take_fed(fed)?;
            }
            if spooled.len() + pending.len() as u64 > SPOOL_MAX {
                return Err(BodyStop::Client(413, true));
            }
            if pending.len() >= WRITE_AT || (reader.is_done() && !pending.is_empty()) {
                let data = std::mem::take(&mut pending);
                pending = spooled.append(data).await.map_err(|e| {
                    BodyStop::Spool(format!(
                        "{}: AH01091: write to temporary file failed",
                        htaccel_engine::log_format::os_error(&e)
                    ))
                })?;
            }
            if reader.is_done() {
                return Ok(spooled);
            }
            if self.before_body_wait(ex, seen, stage)? {
                continue;
            }
            self.more_body(stage).await?;
        }
    }

    /// Read what the client has sent without waiting: whether anything came.
    fn read_now(&mut self, stage: &mut Stage) -> Result<bool, BodyStop> {
        if self.rbuf.capacity() - self.rbuf.len() < crate::conn::READ_BUF / 2 {
            self.rbuf.reserve(crate::conn::READ_BUF);
        }
        match self.stream.try_read(&mut self.rbuf) {
            Ok(0) => {
                self.peer_closed = true;
                Err(BodyStop::Client(400, false))
            }
            Ok(n) => {
                stage.extend(n);
                Ok(true)
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(false),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ok(true),
            Err(_) => Err(BodyStop::Gone),
        }
    }

    /// `100 Continue` for a client waiting for it.
    pub(crate) fn continue_100(&mut self, ex: &mut Exchange<'_>) {
        if ex.expecting && ex.proto_num >= 1001 {
            self.out
                .buf
                .extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
            ex.expecting = false;
        }
    }

    /// Before the first wait for the body: Apache's input filter sends
    /// `100 Continue` when nothing of the body came yet, and otherwise
    /// takes what came as the client's go-ahead (no interim answer). On a
    /// stream, what the stream has received already came (mod_http2 holds
    /// it before any read): it is taken first, and `true` tells the caller
    /// to read it before waiting.
    pub(crate) fn before_body_wait(
        &mut self,
        ex: &mut Exchange<'_>,
        seen: bool,
        stage: &mut Stage,
    ) -> Result<bool, BodyStop> {
        if !seen && ex.expecting && self.stream.carries_one_request() && self.read_now(stage)? {
            return Ok(true);
        }
        if seen {
            ex.expecting = false;
        } else {
            self.continue_100(ex);
        }
        Ok(false)
    }

    /// Drop the body bytes a reader consumed.
    pub(crate) fn take_fed(&mut self, fed: Result<usize, BodyError>) -> Result<(), BodyStop> {
        match fed {
            Ok(n) => {
                self.rbuf.advance(n);
                Ok(())
            }
            Err(e @ (BodyError::TooLarge | BodyError::Malformed)) => {
                Err(BodyStop::Client(e.status(), true))
            }
            Err(BodyError::BadTrailer) => Err(BodyStop::Client(400, false)),
        }
    }

    /// Wait for more of the client's body.
    pub(crate) async fn more_body(&mut self, stage: &mut Stage) -> Result<(), BodyStop> {
        match self.read(stage.next(self.settings.timeout), false).await {
            Event::Data(n) => {
                stage.extend(n);
                Ok(())
            }
            Event::Eof => {
                self.peer_closed = true;
                Err(BodyStop::Client(400, false))
            }
            Event::Timeout => Err(BodyStop::Client(408, false)),
            Event::Stop | Event::Error => Err(BodyStop::Gone),
        }
    }
}
