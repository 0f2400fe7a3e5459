//! The least an HTTP/2 server built on the `h2` crate can do per request:
//! answer every stream with a fixed 19-byte page and a static file's
//! usual fields, on one thread, over cleartext (`h2c` with prior
//! knowledge). `bench/h2.py --floor` measures it beside htaccel and h2o
//! on the same cleartext port, to tell what the crate itself costs from
//! what htaccel adds.
//!
//! It allocates with htaccel's own allocator, so that the difference is
//! the work, not the allocator.
//!
//!     cargo run --release --example h2_floor -p htaccel -- 127.0.0.1:PORT

use bytes::Bytes;
use std::net::SocketAddr;

#[path = "../src/allocator.rs"]
mod allocator;

#[global_allocator]
static ALLOCATOR: allocator::Mimalloc = allocator::Mimalloc;

const PAGE: &[u8] = b"<h1>It works</h1>\n\n";

fn main() {
    let addr: SocketAddr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:28999".into())
        .parse()
        .expect("an address");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async move {
        let listener = tokio::net::TcpListener::bind(addr).await.expect("bind");
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                continue;
            };
            let _ = tcp.set_nodelay(true);
            tokio::task::spawn_local(async move {
                let Ok(mut conn) = h2::server::handshake(tcp).await else {
                    return;
                };
                // Each stream a task, as in htaccel (and hyper): answered
                // where it is accepted instead, every stream's answer is
                // written on its own (a write per request, not one per
                // batch of streams), which costs more than the task.
                while let Some(Ok((_, mut respond))) = conn.accept().await {
                    tokio::task::spawn_local(async move {
                        let response = http::Response::builder()
                            .header("last-modified", "Sat, 28 Nov 2026 10:00:00 GMT")
                            .header("etag", "\"13-5f0a1b2c3d4e5\"")
                            .header("accept-ranges", "bytes")
                            .header("content-length", "19")
                            .header("content-type", "text/html")
                            .header("date", httpdate())
                            .header("server", "Apache")
                            .body(())
                            .expect("a response");
                        if let Ok(mut send) = respond.send_response(response, false) {
                            let _ = send.send_data(Bytes::from_static(PAGE), true);
                        }
                    });
                }
            });
        }
    });
}

/// A date field's value (fixed: what it costs to format one is not the
/// crate's).
fn httpdate() -> &'static str {
    "Sun, 29 Nov 2026 12:00:00 GMT"
}
