//! `htaccel explain DOCROOT URL [--header 'Name: value' …]`: answer one
//! request without a socket and say why — every rewrite rule and
//! condition tried with its outcome, every internal redirect, the error-log
//! lines the request caused, and the final response with the file it
//! serves.
//!
//! The request goes through the same engine as a served one; the rule
//! trace is switched on only around it (a thread-local sink, so serving
//! pays nothing for it).

use htaccel_conf::ParseOptions;
use htaccel_engine::engine::{self, Engine};
use htaccel_engine::http::{AccessEntry, BodyPart, Handler, Headers, Log, Request, Version};
use htaccel_engine::modules::rewrite::trace;
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// What to ask.
pub struct Query {
    pub docroot: PathBuf,
    pub url: String,
    pub method: String,
    pub headers: Vec<String>,
    pub file: Option<PathBuf>,
    pub defines: Vec<String>,
}

/// Error-log lines, kept to be printed with the trace.
#[derive(Default)]
struct Collect(Mutex<Vec<String>>);

impl Log for Collect {
    fn access(&self, _entry: &AccessEntry<'_>) {}
    fn error(&self, level: &str, module: &str, _c: Option<SocketAddr>, message: &str) {
        if let Ok(mut v) = self.0.lock() {
            v.push(format!("[{module}:{level}] {message}"));
        }
    }
}

pub fn execute(q: Query) -> i32 {
    match run(&q, &mut std::io::stdout()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("htaccel explain: {e}");
            2
        }
    }
}

/// Split `URL` into the request-target and the `Host` it names.
fn target_of(url: &str) -> (String, Option<String>) {
    for scheme in ["http://", "https://"] {
        if let Some(rest) = url.strip_prefix(scheme) {
            let (host, path) = match rest.find('/') {
                Some(i) => (&rest[..i], &rest[i..]),
                None => (rest, "/"),
            };
            return (path.to_string(), Some(host.to_string()));
        }
    }
    (url.to_string(), None)
}

fn run(q: &Query, out: &mut dyn Write) -> Result<(), String> {
    let root =
        std::fs::canonicalize(&q.docroot).map_err(|e| format!("{}: {e}", q.docroot.display()))?;
    let nodes = match &q.file {
        Some(f) => {
            htaccel_conf::parse_file(f, &ParseOptions::default()).map_err(|e| e.to_string())?
        }
        None => {
            let text = include_str!("serve.conf")
                .replace("@DOCROOT@", &root.to_string_lossy())
                .replace("@LISTEN@", "127.0.0.1:80");
            htaccel_conf::parse_str(&text, "serve.conf", &ParseOptions::default())
                .map_err(|e| e.to_string())?
        }
    };
    let loaded = engine::load(
        &nodes,
        Path::new("/etc/htaccel").to_path_buf(),
        q.defines.clone(),
    )
    .map_err(|e| e.to_string())?;
    let log = Arc::new(Collect::default());
    let engine = Engine::new(&loaded, log.clone())?;

    let (target, url_host) = target_of(&q.url);
    let mut headers = Headers::new();
    let mut has_host = false;
    for h in &q.headers {
        let (n, v) = h
            .split_once(':')
            .ok_or_else(|| format!("--header {h:?}: expected 'Name: value'"))?;
        has_host |= n.trim().eq_ignore_ascii_case("Host");
        headers.push(n.trim().to_string(), v.trim().as_bytes().to_vec());
    }
    if !has_host {
        headers.push(
            "Host",
            url_host.unwrap_or_else(|| "localhost".into()).into_bytes(),
        );
    }
    let req = Request {
        method: q.method.clone(),
        target: target.clone(),
        version: Version::Http11,
        request_line: format!("{} {target} HTTP/1.1", q.method),
        headers,
        framing: Default::default(),
        peer: SocketAddr::from(([127, 0, 0, 1], 50_000)),
        proxied_by: None,
        local: SocketAddr::from(([127, 0, 0, 1], 80)),
        secure: q.url.starts_with("https://"),
        tls: None,
        h2_stream: None,
    };
    let (resp, lines) = trace::capture(|| engine.handle(&req));
    let w = |out: &mut dyn Write, s: String| writeln!(out, "{s}").map_err(|e| e.to_string());
    w(out, format!("request: {}", req.request_line))?;
    for l in lines {
        w(out, l)?;
    }
    for l in log.0.lock().map(|v| v.clone()).unwrap_or_default() {
        w(out, format!("error log: {l}"))?;
    }
    w(out, format!("response: {}", resp.status))?;
    for (n, v) in &resp.headers {
        w(out, format!("  {n}: {v}"))?;
    }
    for part in &resp.body.parts {
        match part {
            BodyPart::File { file, len, .. } => {
                use std::os::unix::io::AsRawFd;
                let path = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|_| "(file)".into());
                w(out, format!("body: file {path} ({len} bytes)"))?;
            }
            // Generated bodies, and small files the server keeps in memory.
            BodyPart::Bytes(b) => w(out, format!("body: {} bytes in memory", b.len()))?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explains_a_front_controller() {
        let dir = std::env::temp_dir().join(format!("htaccel-explain-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("index.php"), "front\n").unwrap();
        std::fs::write(
            dir.join(".htaccess"),
            "RewriteEngine On\nRewriteCond %{REQUEST_FILENAME} !-f\nRewriteRule . /index.php [L]\n",
        )
        .unwrap();
        let q = Query {
            docroot: dir.clone(),
            url: "http://example.com/some/page".into(),
            method: "GET".into(),
            headers: vec!["X-A: 1".into()],
            file: None,
            defines: Vec::new(),
        };
        let mut out = Vec::new();
        run(&q, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        std::fs::remove_dir_all(&dir).ok();
        assert!(text.contains("RewriteCond"), "{text}");
        assert!(
            text.contains("internal redirect /some/page -> /index.php"),
            "{text}"
        );
        assert!(text.contains("response: 200"), "{text}");
        assert!(text.contains("/index.php -> file "), "{text}");
        assert!(text.contains("body: 6 bytes"), "{text}");
    }

    #[test]
    fn absolute_urls_name_the_host() {
        assert_eq!(
            target_of("http://h:8080/a?b"),
            ("/a?b".to_string(), Some("h:8080".to_string()))
        );
        assert_eq!(target_of("/x"), ("/x".to_string(), None));
    }
}
