//! A server that answers every request with the same 612-byte page, shaped
//! like Apache's answer for a static file: for measuring the connection
//! layer alone, and for probing it with raw requests next to Apache.
//!
//! ```text
//! cargo run --release -p htaccel-server --example fixed -- [ADDR] [THREADS] [--file PATH]
//! taskset -c 0 target/release/examples/fixed 127.0.0.1:8080 1
//! taskset -c 1 wrk -t1 -c50 -d10s http://127.0.0.1:8080/
//! ```
//!
//! With `--file PATH` the body is that file, sent as a file part (read into
//! the write buffer when small, `sendfile(2)` when large). Stops on SIGTERM
//! or SIGINT.

use bytes::Bytes;
use htaccel_engine::http::{AccessEntry, Body, Handler, Log, ProtocolError, Request, Response};
use htaccel_server::{run, ServerOptions};
use std::fs::File;
use std::net::SocketAddr;
use std::sync::Arc;

struct Fixed {
    body: Body,
    len: u64,
}

struct NoLog;

impl Log for NoLog {
    fn access(&self, _: &AccessEntry<'_>) {}
    fn error(&self, _: &str, _: &str, _: Option<SocketAddr>, _: &str) {}
}

impl Handler for Fixed {
    fn handle(&self, _req: &Request) -> Response {
        let mut r = Response::new(200);
        r.headers.reserve(5);
        r.add_header("Last-Modified", "Sat, 21 Nov 2026 06:33:33 GMT");
        r.add_header("ETag", "\"264-660c38a328c71\"");
        r.add_header("Accept-Ranges", "bytes");
        r.add_header("Content-Length", self.len.to_string());
        r.add_header("Content-Type", "text/html");
        r.body = self.body.clone();
        r
    }

    fn protocol_error(&self, e: &ProtocolError<'_>) -> Response {
        let (status, note) = (e.status, e.note.or(e.expect));
        let mut r = Response::new(status);
        let body = format!(
            "<!DOCTYPE HTML PUBLIC \"-//IETF//DTD HTML 2.0//EN\">\n<html><head>\n<title>{status}</title>\n</head><body>\n<p>{}</p>\n</body></html>\n",
            note.unwrap_or("")
        );
        r.add_header("Content-Type", "text/html; charset=iso-8859-1");
        r.body = Body::bytes(body);
        r.close = true;
        r
    }

    fn log(&self) -> &dyn Log {
        &NoLog
    }
}

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let mut positional = Vec::new();
    let mut file = None;
    while let Some(a) = args.next() {
        if a == "--file" {
            file = args.next();
        } else {
            positional.push(a);
        }
    }
    let addr: SocketAddr = positional
        .first()
        .map_or("127.0.0.1:8080", String::as_str)
        .parse()
        .expect("address");
    let threads: usize = positional
        .get(1)
        .map_or(Ok(1), |t| t.parse())
        .expect("thread count");
    let (body, len) = match file {
        Some(p) => {
            let f = File::open(&p)?;
            let len = f.metadata()?.len();
            (Body::file(Arc::new(f), 0, len), len)
        }
        None => {
            let mut page = vec![b'x'; 611];
            page.push(b'\n');
            (Body::bytes(Bytes::from(page)), 612)
        }
    };
    let opts = ServerOptions {
        listen: vec![addr],
        threads,
        server_header: "Apache".into(),
        ..ServerOptions::default()
    };
    run(Arc::new(Fixed { body, len }), opts, Box::new(|| Ok(())))
}
