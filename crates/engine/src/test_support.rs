//! What the engine's unit tests share: an engine made from configuration
//! text, a log that keeps nothing, and a request as a client would send
//! it. One place, so that a field added to `Request` or a step added to
//! loading is written once for every test.

use crate::engine::{load, Engine};
use crate::http::{AccessEntry, Headers, Log, Request, Version};
use std::net::SocketAddr;
use std::sync::Arc;

/// Owned copies of `words`, as a directive's arguments are held.
pub(crate) fn strings(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

/// A log that keeps nothing.
pub(crate) struct Quiet;

impl Log for Quiet {
    fn access(&self, _: &AccessEntry<'_>) {}
    fn error(&self, _: &str, _: &str, _: Option<SocketAddr>, _: &str) {}
}

/// An engine made from `text` with `root` as its `ServerRoot`, logging to
/// `log`; loading's error as text.
pub(crate) fn engine_logging(text: &str, root: &str, log: Arc<dyn Log>) -> Result<Engine, String> {
    let nodes = htaccel_conf::parse_str(text, "t.conf", &htaccel_conf::ParseOptions::default())
        .map_err(|e| e.to_string())?;
    let loaded = load(&nodes, root.into(), Vec::new()).map_err(|e| e.to_string())?;
    Engine::new(&loaded, log)
}

/// An engine made from `text` with `root` as its `ServerRoot`, logging to
/// [`Quiet`].
pub(crate) fn engine_at(text: &str, root: &str) -> Result<Engine, String> {
    engine_logging(text, root, Arc::new(Quiet))
}

/// An engine made from `text` with `/` as its `ServerRoot`.
pub(crate) fn engine(text: &str) -> Engine {
    engine_at(text, "/").unwrap()
}

/// `method target` over HTTP/1.1 from 127.0.0.1 to 127.0.0.1:80, with
/// `Host: host`.
pub(crate) fn request(method: &str, target: &str, host: &str) -> Request {
    let mut headers = Headers::new();
    headers.push("Host", host.to_string());
    Request {
        method: method.into(),
        target: target.into(),
        version: Version::Http11,
        request_line: format!("{method} {target} HTTP/1.1"),
        headers,
        framing: Default::default(),
        peer: "127.0.0.1:4000".parse().unwrap(),
        proxied_by: None,
        local: "127.0.0.1:80".parse().unwrap(),
        secure: false,
        tls: None,
        h2_stream: None,
    }
}
