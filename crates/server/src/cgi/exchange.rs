//! One CGI exchange on behalf of a client connection (see `crate::cgi`).
//! A step of the request's exchange (`crate::exchange`), as FastCGI's is:
//! it reads the client's body and writes the response through the
//! connection's own buffers, with the connection's timeouts.

use crate::backend_body::BodyStop;
use crate::body::BodyReader;
use crate::cgi;
use crate::conn::{Conn, Shared, Stage};
use crate::exchange::{BodyEnd, Exchange};
use crate::fastcgi::exchange::Done;
use crate::fastcgi::{head_end, head_lines};
use crate::write::status_has_no_body;
use htaccel_engine::http::backend::{
    BackendAnswer, BackendError, BackendHead, CgiRequest, Finish, COLLECT_MAX,
};
use htaccel_engine::http::{BodyFraming, Request};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::time::Instant;

/// The longest header block accepted from a script.
const HEAD_MAX: usize = 1 << 20;
/// How much of the script's output is read at a time.
const READ_SIZE: usize = 16 * 1024;

/// What reading the script's output came to.
enum Output {
    Data,
    End,
    /// Nothing within the time limit, or a read error: the message for
    /// the error log.
    Failed(BackendError),
}

impl<T: crate::transport::Transport> Conn<T> {
    pub(crate) async fn cgi_backend(
        &mut self,
        shared: &Shared,
        ex: &mut Exchange<'_>,
        req: &Request,
        script: CgiRequest,
        body_limit: u64,
        finish: Finish<'_>,
    ) -> Done {
        if let Some(refused) =
            crate::fastcgi::exchange::declared_too_large(shared, ex, req, body_limit)
        {
            return refused;
        }
        let mut child = match cgi::spawn(&script) {
            Ok(c) => c,
            Err(e) => {
                // Nothing read from the client yet: the ordinary path
                // answers and discards the body.
                let error = BackendError::Failed(cgi::spawn_error(&script, &e));
                let mut r = finish(Err(error)).into_error_page();
                r.body_limit = body_limit;
                return Done::Answer(r);
            }
        };
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        // Standard error is logged, and the script reaped, apart from the
        // connection: all along the exchange, and after it for as long as
        // the script goes on (see `cgi::finish`).
        let (over, over_rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(cgi::finish(
            child,
            over_rx,
            shared.handler.clone(),
            self.remote,
            script.clone(),
        ));
        let done = self
            .cgi_run(shared, ex, req, &script, body_limit, stdin, stdout, finish)
            .await;
        drop(over);
        done
    }

    #[allow(clippy::too_many_arguments)]
    async fn cgi_run(
        &mut self,
        shared: &Shared,
        ex: &mut Exchange<'_>,
        req: &Request,
        script: &CgiRequest,
        body_limit: u64,
        stdin: Option<ChildStdin>,
        stdout: Option<ChildStdout>,
        finish: Finish<'_>,
    ) -> Done {
        let timeout = script.timeout.unwrap_or(self.settings.timeout);
        if let Err(stop) = self
            .cgi_body(shared, ex, req, script, body_limit, stdin, timeout)
            .await
        {
            return self.body_stopped(shared, ex, req, stop);
        }
        let Some(mut stdout) = stdout else {
            let e = BackendError::Failed("the script's output could not be read".into());
            let resp = finish(Err(e)).into_error_page();
            return Done::Sent(self.respond(shared, ex, &resp).ok());
        };
        if script.nph {
            drop(finish);
            return self.cgi_nph(shared, ex, script, &mut stdout, timeout).await;
        }
        // The header block.
        let mut buf: Vec<u8> = Vec::with_capacity(READ_SIZE);
        let (lines, mut rest) = loop {
            if let Some((h, b)) = head_end(&buf) {
                break (head_lines(&buf[..h]), buf.split_off(b));
            }
            if buf.len() > HEAD_MAX {
                let e = BackendError::Failed(format!(
                    "AH01070: Error parsing script headers: too long: {}",
                    basename(&script.script)
                ));
                let resp = finish(Err(e)).into_error_page();
                return Done::Sent(self.respond(shared, ex, &resp).ok());
            }
            let failure = match read_some(&mut stdout, &mut buf, timeout, script).await {
                Output::Data => continue,
                Output::End => BackendError::Failed(format!(
                    "End of script output before headers: {}",
                    basename(&script.script)
                )),
                Output::Failed(BackendError::Timeout(_)) => BackendError::Timeout(format!(
                    "Script timed out before returning headers: {}",
                    basename(&script.script)
                )),
                Output::Failed(e) => e,
            };
            let resp = finish(Err(failure)).into_error_page();
            return Done::Sent(self.respond(shared, ex, &resp).ok());
        };
        // Whether anything follows the block: what already came, else
        // what the script has written or closed by now.
        let mut ended = false;
        if rest.is_empty() {
            match tokio::time::timeout(Duration::ZERO, stdout.read_buf(&mut rest)).await {
                Ok(Ok(0)) => ended = true,
                Ok(Ok(_)) | Err(_) => {}
                Ok(Err(_)) => ended = true,
            }
        }
        let head = BackendHead {
            status: None,
            lines,
            body_empty: ended && rest.is_empty(),
        };
        let answer = finish(Ok(head));
        if let BackendAnswer::Then(call) = answer {
            // A local redirect to another script: this one's output is
            // read and dropped, then the other runs, for a request whose
            // body is gone.
            if !ended {
                if let Err(e) = drain(&mut stdout, timeout, script).await {
                    self.cgi_log(shared, script, e.message());
                }
            }
            let req = crate::fastcgi::exchange::bodiless(req);
            return Box::pin(self.backend(shared, ex, &req, *call)).await;
        }
        if let BackendAnswer::Collect(collect) = answer {
            // A content filter needs the whole body: read it all first.
            let mut body = rest;
            while !ended {
                if body.len() > COLLECT_MAX {
                    break;
                }
                match read_some(&mut stdout, &mut body, timeout, script).await {
                    Output::Data => {}
                    Output::End => ended = true,
                    Output::Failed(e) => {
                        self.cgi_log(shared, script, e.message());
                        break;
                    }
                }
            }
            if !ended {
                self.cgi_log(
                    shared,
                    script,
                    "the script's output was cut short or too long to filter",
                );
                return Done::Sent(None);
            }
            let resp = collect(bytes::Bytes::from(body));
            return Done::Sent(self.respond(shared, ex, &resp).ok());
        }
        let BackendAnswer::Send {
            response: resp,
            pass_body,
        } = answer
        else {
            unreachable!("a local redirect and a collected body are answered above");
        };
        let header_only = ex.head || status_has_no_body(resp.status);
        if pass_body && !header_only {
            ex.body_end = BodyEnd::Open;
        }
        let Ok(keep) = self.respond(shared, ex, &resp) else {
            return Done::Sent(None);
        };
        if ex.body_end != BodyEnd::Open {
            // mod_cgi reads what the script still writes and drops it.
            if !ended {
                if self.flush_out(self.settings.timeout).await.is_err() {
                    return Done::Sent(None);
                }
                if let Err(e) = drain(&mut stdout, timeout, script).await {
                    self.cgi_log(shared, script, e.message());
                    return Done::Sent(None);
                }
            }
            return Done::Sent(Some(keep));
        }
        let status = resp.status;
        // Chunked as the head said, else ended by the close.
        let chunked = self.sent_framing.get().chunked;
        let headers = resp.headers;
        let mut total = rest.len() as u64;
        crate::write::push_body_piece(&mut self.out.buf, &rest, chunked);
        let mut piece = rest;
        let complete = ended
            || loop {
                if !self.out.is_empty() && self.flush_out(self.settings.timeout).await.is_err() {
                    break false;
                }
                piece.clear();
                match read_some(&mut stdout, &mut piece, timeout, script).await {
                    Output::Data => {
                        total += piece.len() as u64;
                        crate::write::push_body_piece(&mut self.out.buf, &piece, chunked);
                    }
                    Output::End => break true,
                    Output::Failed(e) => {
                        self.cgi_log(shared, script, e.message());
                        break false;
                    }
                }
            };
        if !complete {
            self.log_backend(shared, ex, status, total, &headers);
            let _ = self.flush_out(self.settings.timeout).await;
            return Done::Sent(None);
        }
        if chunked {
            self.out.buf.extend_from_slice(b"0\r\n\r\n");
        }
        self.log_backend(shared, ex, status, total, &headers);
        Done::Sent(Some(keep))
    }

    /// The request body to the script's standard input as it arrives,
    /// de-chunked, then the end of its input. A script that stops reading
    /// gets no more, and the rest of the body is read and dropped (as
    /// mod_cgi does, with its error-log line).
    #[allow(clippy::too_many_arguments)]
    async fn cgi_body(
        &mut self,
        shared: &Shared,
        ex: &mut Exchange<'_>,
        req: &Request,
        script: &CgiRequest,
        body_limit: u64,
        mut stdin: Option<ChildStdin>,
        timeout: Duration,
    ) -> Result<(), BodyStop> {
        let mut reader = match req.framing {
            BodyFraming::None | BodyFraming::Length(0) => return Ok(()),
            BodyFraming::Length(n) => BodyReader::length(n, body_limit),
            BodyFraming::Chunked => {
                BodyReader::chunked(body_limit, self.settings.limits.field_size)
            }
        };
        // mod_cgi's first read of the body blocks, and Apache's input
        // filter answers a waiting client first, whatever already came.
        self.continue_100(ex);
        let mut stage = Stage::start(&self.body_stage, Instant::now());
        let mut seen = false;
        let mut piece: Vec<u8> = Vec::new();
        loop {
            if !self.rbuf.is_empty() {
                seen = true;
                let fed = reader.feed_with(&self.rbuf, &self.settings.limits, &mut |d| {
                    piece.extend_from_slice(d)
                });
                self.take_fed(fed)?;
            }
            if !piece.is_empty() {
                if let Some(input) = stdin.as_mut() {
                    let failure = match tokio::time::timeout(timeout, input.write_all(&piece)).await
                    {
                        Ok(Ok(())) => None,
                        Ok(Err(e)) => Some(format!(
                            "{}: AH02651: Error writing request body to script {}",
                            htaccel_engine::log_format::os_error(&e),
                            script.script
                        )),
                        Err(_) => Some(format!(
                            "(70007)The timeout specified has expired: AH02651: Error writing request body to script {}",
                            script.script
                        )),
                    };
                    if let Some(line) = failure {
                        self.cgi_log(shared, script, &line);
                        stdin = None;
                    }
                }
                piece.clear();
            }
            if reader.is_done() {
                return Ok(());
            }
            if self.before_body_wait(ex, seen, &mut stage)? {
                continue;
            }
            self.more_body(&mut stage).await?;
        }
    }

    /// An `nph-` script: its output is the response, status line
    /// included, passed on as it comes; the connection closes after it.
    async fn cgi_nph(
        &mut self,
        shared: &Shared,
        ex: &mut Exchange<'_>,
        script: &CgiRequest,
        stdout: &mut ChildStdout,
        timeout: Duration,
    ) -> Done {
        ex.close = true;
        let mut total = 0u64;
        let mut piece = Vec::with_capacity(READ_SIZE);
        loop {
            piece.clear();
            match read_some(stdout, &mut piece, timeout, script).await {
                Output::Data => {
                    total += piece.len() as u64;
                    self.out.buf.extend_from_slice(&piece);
                    if self.flush_out(self.settings.timeout).await.is_err() {
                        break;
                    }
                }
                Output::End => break,
                Output::Failed(e) => {
                    self.cgi_log(shared, script, e.message());
                    break;
                }
            }
        }
        // Apache's log has the status the request had: 200.
        self.log_backend(shared, ex, 200, total, &[]);
        let _ = self.flush_out(self.settings.timeout).await;
        // The script's end is the answer's end: on a stream the body ends
        // with it (the stream is not reset), on a connection the close
        // follows.
        self.stream.shutdown_write();
        Done::Sent(None)
    }

    fn cgi_log(&self, shared: &Shared, script: &CgiRequest, message: &str) {
        shared
            .handler
            .log()
            .error("error", script.module, Some(self.remote), message);
    }
}

/// Read the rest of the script's output and drop it.
async fn drain(
    stdout: &mut ChildStdout,
    timeout: Duration,
    script: &CgiRequest,
) -> Result<(), BackendError> {
    let mut sink = Vec::with_capacity(READ_SIZE);
    loop {
        sink.clear();
        match read_some(stdout, &mut sink, timeout, script).await {
            Output::Data => {}
            Output::End => return Ok(()),
            Output::Failed(e) => return Err(e),
        }
    }
}

/// One read of the script's output into `buf`, within `timeout`.
async fn read_some(
    stdout: &mut ChildStdout,
    buf: &mut Vec<u8>,
    timeout: Duration,
    script: &CgiRequest,
) -> Output {
    buf.reserve(READ_SIZE);
    match tokio::time::timeout(timeout, stdout.read_buf(buf)).await {
        Ok(Ok(0)) => Output::End,
        Ok(Ok(_)) => Output::Data,
        Ok(Err(e)) => Output::Failed(BackendError::Failed(format!(
            "{}: reading the output of CGI script {}",
            htaccel_engine::log_format::os_error(&e),
            script.script
        ))),
        Err(_) => Output::Failed(BackendError::Timeout(format!(
            "AH01220: Timeout waiting for output from CGI script {}",
            script.script
        ))),
    }
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}
