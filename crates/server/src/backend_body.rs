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
//! waiting (what has arrived), mod_proxy_http waits for it.
//!
//! A child of the connection module: it reads through the connection's
//! buffer, under mod_reqtimeout's body stage.

use super::{Conn, Event, Exchange, Shared, Stage};
use crate::body::{BodyError, BodyReader};
use bytes::Buf;
use htaccel_engine::http::backend::BackendError;

/// mod_proxy's `MAX_MEM_SPOOL`: the most body data a prefetch reads.
const PREFETCH_MAX: usize = 16384;
/// A prefetch stops once it holds this much (`MAX_MEM_SPOOL - 80`).
const PREFETCH_ENOUGH: usize = PREFETCH_MAX - 80;

/// Why streaming the client's body stopped.
pub(super) enum BodyStop {
    /// The client's body failed: answer this status (and whether the
    /// answer goes without a length, as Apache's for a body error).
    Client(u16, bool),
    Backend(BackendError),
    Gone,
}

/// What a prefetch read of a chunked body.
pub(super) struct Prefetched {
    /// The body data read.
    pub data: Vec<u8>,
    /// The reader for the rest of the body; `None` when `data` is all of it.
    pub rest: Option<BodyReader>,
    /// Some of the body had arrived (Apache's `seen_data`: no
    /// `100 Continue` is sent for it any more).
    pub seen: bool,
}

impl Conn {
    /// Read the start of a chunked body: until it ends or
    /// [`PREFETCH_ENOUGH`] bytes are read; with `wait` false, only what
    /// has already arrived.
    pub(super) async fn prefetch_chunked(
        &mut self,
        shared: &Shared,
        stage: &mut Stage,
        limit: u64,
        wait: bool,
    ) -> Result<Prefetched, BodyStop> {
        let mut reader = BodyReader::chunked(limit, shared.limits.field_size);
        let mut data = Vec::new();
        let mut seen = false;
        loop {
            if !self.rbuf.is_empty() {
                seen = true;
                // (Apache's reads may take it up to PREFETCH_MAX, but a
                // body is whole only if it ends before PREFETCH_ENOUGH.)
                let budget = (PREFETCH_ENOUGH - data.len()) as u64;
                let fed = reader.feed_upto(&self.rbuf, &shared.limits, budget, &mut |d| {
                    data.extend_from_slice(d)
                });
                self.take_fed(fed)?;
            }
            if reader.is_done() {
                return Ok(Prefetched {
                    data,
                    rest: None,
                    seen,
                });
            }
            if data.len() >= PREFETCH_ENOUGH {
                break;
            }
            if wait {
                self.more_body(shared, stage).await?;
            } else if !self.read_now(stage)? {
                break;
            }
        }
        Ok(Prefetched {
            data,
            rest: Some(reader),
            seen,
        })
    }

    /// Read what the client has sent without waiting: whether anything came.
    fn read_now(&mut self, stage: &mut Stage) -> Result<bool, BodyStop> {
        if self.rbuf.capacity() - self.rbuf.len() < super::READ_BUF / 2 {
            self.rbuf.reserve(super::READ_BUF);
        }
        match self.stream.try_read_buf(&mut self.rbuf) {
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
    pub(super) fn continue_100(&mut self, ex: &mut Exchange<'_>) {
        if ex.expecting && ex.proto_num >= 1001 {
            self.out
                .buf
                .extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
            ex.expecting = false;
        }
    }

    /// Before the first wait for the body: Apache's input filter sends
    /// `100 Continue` when nothing of the body came yet, and otherwise
    /// takes what came as the client's go-ahead (no interim answer).
    pub(super) fn before_body_wait(&mut self, ex: &mut Exchange<'_>, seen: bool) {
        if seen {
            ex.expecting = false;
        } else {
            self.continue_100(ex);
        }
    }

    /// Drop the body bytes a reader consumed.
    pub(super) fn take_fed(&mut self, fed: Result<usize, BodyError>) -> Result<(), BodyStop> {
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
    pub(super) async fn more_body(
        &mut self,
        shared: &Shared,
        stage: &mut Stage,
    ) -> Result<(), BodyStop> {
        match self
            .read(shared, stage.next(shared.timeouts.timeout), false)
            .await
        {
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
