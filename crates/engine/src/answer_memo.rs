//! Answers kept per worker thread, so that a request that comes again and
//! would be decided exactly as before costs one map lookup and a few
//! comparisons instead of the phases.
//!
//! Apache decides every request from scratch. The decision is a function of
//! the request, the configuration, the file system and the clock; htaccel
//! already keeps the configuration and the file-system facts in caches that
//! the watcher keeps true, and moves the process-wide change counter
//! ([`crate::watch::changes`]) whenever it drops anything from them (see
//! [`crate::walk_memo`], which this extends from the walk to the whole
//! answer). What is left is the request and the clock, and for those the
//! engine *records what the decision read*, like an HTTP cache's `Vary`,
//! but exact:
//!
//! * the request line, the connection's local address, TLS, whether the
//!   connection began with a PROXY header (mod_remoteip then skips
//!   `RemoteIPHeader`) and the body framing are the key;
//! * every request header the decision looked up by name
//!   ([`crate::http::Headers::get`] and the like) is remembered with the
//!   values the request had; a header list read as a whole remembers all of
//!   them;
//! * the client's address, when anything read it (`Require ip`, `Deny from`,
//!   `%{REMOTE_ADDR}`), its IP (and its port when that was read);
//! * anything else makes the decision *volatile* and it is not kept: the
//!   clock (`Expires`, `%{TIME}`, a weak `ETag`), a line for the error log,
//!   a fact that no watch vouches for (polled directories, symlink targets),
//!   files read outside the metadata cache (password files, RewriteMap
//!   files, directory listings), random numbers.
//!
//! A kept answer is used for a later request only while the change counter
//! still has the value read before the first decision began (after the
//! request's `Watch::sync`), and when the later request has the same key and
//! the same values for everything recorded. The answer is then the one the
//! phases would give again: the same inputs, through caches that the
//! counter says are unchanged. Only complete `200` answers of `GET` and
//! `HEAD` without a body are kept (no back-end, no stream); the server
//! still adds `Date`, the connection headers and the access-log line.
//!
//! Keeping the recording exact is a matter of where the inputs can be read:
//! the client's address only through [`crate::http::Request::remote`] and
//! the request context's accessors, the request time only through
//! [`crate::request::Ctx::request_time_us`] and [`crate::engine::Engine::request_time_us`],
//! request headers only through [`crate::http::Headers`]' methods, which
//! record while a decision is being recorded.

use crate::clock::ClockMap;
use crate::http::backend::Decision;
use crate::http::{BodyFraming, Headers, Request, Response};
use crate::sightings::Sightings;
use std::cell::{Cell, RefCell};
use std::net::SocketAddr;
use std::sync::Arc;

/// Answers one worker thread keeps at most (those holding an open file
/// also bounded by the open-file cache's share of descriptors, those
/// holding their body in memory by [`BYTES_PER_THREAD`]). A site's
/// visitors ask for thousands of distinct files: at 256 entries the memo
/// answered 54 % of bench group R's mix.
pub const ENTRIES_PER_THREAD: usize = 4096;

/// Bytes of body the answers of one worker thread keep in memory at most
/// (small files, whose content the open-file cache read).
pub const BYTES_PER_THREAD: usize = 32 << 20;

/// Header names one decision may depend on before it counts as volatile.
const NAMES_MAX: usize = 32;

/// After a volatile decision, this many requests with the same key are
/// decided without recording before the next attempt.
const VOLATILE_SKIPS: u8 = 31;

/// What the decision being recorded has read so far.
#[derive(Default)]
struct Recorder {
    volatile: bool,
    all_headers: bool,
    remote_ip: bool,
    remote_port: bool,
    /// The decision found no precondition (`If-*`) header.
    no_preconditions: bool,
    /// Header names read (the first `used` entries; the strings are reused
    /// from one recording to the next).
    names: Vec<String>,
    used: usize,
}

thread_local! {
    static RECORDING: Cell<bool> = const { Cell::new(false) };
    static RECORDER: RefCell<Recorder> = RefCell::new(Recorder::default());
    static MEMO: RefCell<Memo> = RefCell::new(Memo::default());
    /// Request lines seen lately without a kept answer.
    static SEEN: RefCell<Sightings> = RefCell::new(Sightings::default());
    /// The stamp of the last sweep of old entries.
    static SWEPT: Cell<u64> = const { Cell::new(u64::MAX) };
}

/// The kept answers of one thread, by request line, dropped by the clock
/// ([`ClockMap`]) when full, with what they hold counted as they come and
/// go (a walk over every entry on each miss cost more than the rest of
/// `put`): how many hold an open file, how many bytes of body they keep
/// in memory.
#[derive(Default)]
struct Memo {
    clock: ClockMap<Entry>,
    holding_files: usize,
    holding_bytes: usize,
}

impl Memo {
    fn len(&self) -> usize {
        self.clock.len()
    }

    /// The entry for `key`, marked as used.
    fn get_mut(&mut self, key: &str) -> Option<&mut Entry> {
        self.clock.get_mut(key)
    }

    fn hash(&self, key: &str) -> u64 {
        self.clock.hash(key)
    }

    fn count(&mut self, e: &Entry) {
        self.holding_files += usize::from(holds_file(e));
        self.holding_bytes += bytes_held(e);
    }

    fn uncount(&mut self, e: &Entry) {
        self.holding_files -= usize::from(holds_file(e));
        self.holding_bytes -= bytes_held(e);
    }

    fn remove(&mut self, key: &str) {
        if let Some(old) = self.clock.remove(key) {
            self.uncount(&old);
        }
    }

    /// Insert or replace.
    fn insert(&mut self, key: &str, entry: Entry) {
        self.count(&entry);
        if let Some(old) = self.clock.insert(key, entry) {
            self.uncount(&old);
        }
    }

    /// Keep only the entries of `stamp`.
    fn retain_stamp(&mut self, stamp: u64) {
        for old in self.clock.retain(|e| e.stamp == stamp) {
            self.uncount(&old);
        }
    }

    /// Drop one entry by the clock: whether there was one.
    fn evict_one(&mut self) -> bool {
        match self.clock.evict_one() {
            Some(old) => {
                self.uncount(&old);
                true
            }
            None => false,
        }
    }

    #[cfg(test)]
    fn clear(&mut self) {
        *self = Memo::default();
    }
}

fn recording() -> bool {
    RECORDING.with(Cell::get)
}

fn with_recorder(f: impl FnOnce(&mut Recorder)) {
    if recording() {
        RECORDER.with(|r| f(&mut r.borrow_mut()));
    }
}

/// The decision read the request header `name`.
pub fn note_header(name: &str) {
    with_recorder(|r| {
        if r.all_headers || r.volatile {
            return;
        }
        if r.names[..r.used]
            .iter()
            .any(|n| n.eq_ignore_ascii_case(name))
        {
            return;
        }
        if r.used == NAMES_MAX {
            r.all_headers = true;
            return;
        }
        if r.used == r.names.len() {
            r.names.push(String::new());
        }
        let slot = &mut r.names[r.used];
        slot.clear();
        slot.push_str(name);
        r.used += 1;
    });
}

/// The decision read the whole header list (iterated, counted).
pub fn note_all_headers() {
    with_recorder(|r| r.all_headers = true);
}

/// The decision looked for precondition headers (any `If-*` name) and
/// found none.
pub fn note_no_preconditions() {
    with_recorder(|r| r.no_preconditions = true);
}

/// The decision read the client's IP address.
pub fn note_remote_ip() {
    with_recorder(|r| r.remote_ip = true);
}

/// The decision read the client's address and port.
pub fn note_remote() {
    with_recorder(|r| {
        r.remote_ip = true;
        r.remote_port = true;
    });
}

/// The decision read something that is not the request and that the
/// change counter does not cover (the clock, a file outside the caches), or
/// had an effect besides its answer (a log line): it is not kept.
pub fn note_volatile() {
    with_recorder(|r| r.volatile = true);
}

/// What the decision of one request depended on.
struct Deps {
    all_headers: bool,
    no_preconditions: bool,
    names: Box<[Box<str>]>,
    remote_ip: bool,
    remote_port: bool,
}

enum Kept {
    /// The last recorded decision for this key was volatile.
    Volatile { skips: u8 },
    Answer {
        deps: Deps,
        /// The request headers it was decided for (values are slices of
        /// that request's head).
        headers: Headers,
        remote: SocketAddr,
        response: Arc<Response>,
    },
}

struct Entry {
    engine: u64,
    stamp: u64,
    local: SocketAddr,
    secure: bool,
    /// The connection began with a PROXY header.
    proxied: bool,
    /// The request came on an HTTP/2 stream (mod_http2's `HTTP2` and the
    /// push variables are set for it).
    h2: bool,
    /// The TLS facts mod_ssl reads without marking the answer volatile
    /// (its request checks, `HTTPS` and `SSL_TLS_SNI` in the environment):
    /// the server of the handshake and the SNI name.
    tls: TlsKey,
    kept: Kept,
}

type TlsKey = Option<(Option<usize>, Option<String>)>;

fn tls_key(req: &Request) -> TlsKey {
    req.tls
        .as_deref()
        .map(|t| (t.handshake_site, t.sni.clone()))
}

/// [`tls_key`] compared without building it.
fn same_tls(key: &TlsKey, req: &Request) -> bool {
    match (key, req.tls.as_deref()) {
        (None, None) => true,
        (Some((site, sni)), Some(t)) => *site == t.handshake_site && *sni == t.sni,
        _ => false,
    }
}

/// What to do with a request.
pub enum Lookup {
    /// This answer, decided for an earlier request with the same inputs.
    Hit(Arc<Response>),
    /// Decide it and record what the decision reads.
    Record,
    /// Decide it without recording (a request that cannot be kept, or a key
    /// whose decisions were volatile lately).
    Decide,
}

/// Whether the request's own shape allows keeping its answer.
fn keepable_request(req: &Request) -> bool {
    req.framing == BodyFraming::None && (req.method == "GET" || req.method == "HEAD")
}

/// The kept answer for `req` if there is one for engine `engine` under the
/// change counter's current value `stamp`.
pub fn lookup(engine: u64, req: &Request, stamp: u64) -> Lookup {
    if !keepable_request(req) {
        return Lookup::Decide;
    }
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        let Some(e) = m.get_mut(req.request_line.as_str()) else {
            // Kept from its second sighting on: most request lines of a
            // site's long tail come once, and recording and keeping their
            // answers would only cost.
            let h = m.hash(req.request_line.as_str());
            let seen = SEEN.with(|s| s.borrow_mut().replace(h));
            return if seen { Lookup::Record } else { Lookup::Decide };
        };
        if e.engine != engine
            || e.stamp != stamp
            || e.local != req.local
            || e.secure != req.secure
            || e.proxied != req.proxied_by.is_some()
            || e.h2 != req.h2_stream.is_some()
            || !same_tls(&e.tls, req)
        {
            return Lookup::Record;
        }
        match &mut e.kept {
            Kept::Volatile { skips } => {
                if *skips == 0 {
                    *skips = VOLATILE_SKIPS;
                    Lookup::Record
                } else {
                    *skips -= 1;
                    Lookup::Decide
                }
            }
            Kept::Answer {
                deps,
                headers,
                remote,
                response,
            } => {
                if same_inputs(deps, headers, *remote, req) {
                    Lookup::Hit(Arc::clone(response))
                } else {
                    Lookup::Record
                }
            }
        }
    })
}

fn same_inputs(deps: &Deps, headers: &Headers, remote: SocketAddr, req: &Request) -> bool {
    if deps.remote_ip && remote.ip() != req.peer.ip() {
        return false;
    }
    if deps.remote_port && remote.port() != req.peer.port() {
        return false;
    }
    if deps.all_headers {
        return headers.same_fields(&req.headers);
    }
    if deps.no_preconditions && crate::http::conditional::any_precondition(&req.headers) {
        return false;
    }
    deps.names
        .iter()
        .all(|n| same_values(headers.get_all(n), req.headers.get_all(n)))
}

/// Whether two lists of a field's values are equal. Written out rather
/// than `Iterator::eq`, whose generic body the compiler may or may not
/// inline here: this runs for every request answered from the memo.
fn same_values<'a>(
    mut kept: impl Iterator<Item = &'a bytes::Bytes>,
    mut now: impl Iterator<Item = &'a bytes::Bytes>,
) -> bool {
    loop {
        match (kept.next(), now.next()) {
            (None, None) => return true,
            (Some(a), Some(b)) if a == b => {}
            _ => return false,
        }
    }
}

/// A recording in progress on this thread; ends when dropped.
pub struct Recording(());

impl Recording {
    /// Start recording what the decision of a request reads.
    pub fn start() -> Recording {
        RECORDER.with(|r| {
            let mut r = r.borrow_mut();
            r.volatile = false;
            r.all_headers = false;
            r.remote_ip = false;
            r.remote_port = false;
            r.no_preconditions = false;
            r.used = 0;
        });
        RECORDING.with(|c| c.set(true));
        Recording(())
    }

    /// Stop recording; keep the answer `decision` holds as the answer to
    /// `req` when the decision read nothing volatile and the answer is one
    /// that is kept. A kept answer is handed back shared
    /// (`Decision::Kept`), as later requests get it: it is not copied, and
    /// the head the server prepares for this request serves them too.
    pub fn finish<'a>(
        self,
        engine: u64,
        req: &Request,
        stamp: u64,
        decision: Decision<'a>,
    ) -> Decision<'a> {
        RECORDING.with(|c| c.set(false));
        let (kept, decision) = RECORDER.with(|r| {
            let r = r.borrow();
            match decision {
                Decision::Respond(mut resp) if !r.volatile && keepable_response(&resp) => {
                    resp.head_cache = Some(crate::http::HeadCache::default());
                    let response = Arc::new(resp);
                    let kept = Kept::Answer {
                        deps: Deps {
                            all_headers: r.all_headers,
                            no_preconditions: r.no_preconditions,
                            names: r.names[..r.used]
                                .iter()
                                .map(|n| n.as_str().into())
                                .collect(),
                            remote_ip: r.remote_ip,
                            remote_port: r.remote_port,
                        },
                        headers: req.headers.clone(),
                        remote: req.peer,
                        response: Arc::clone(&response),
                    };
                    (kept, Decision::Kept(response))
                }
                other => (
                    Kept::Volatile {
                        skips: VOLATILE_SKIPS,
                    },
                    other,
                ),
            }
        });
        put(
            req.request_line.as_str(),
            Entry {
                engine,
                stamp,
                local: req.local,
                secure: req.secure,
                proxied: req.proxied_by.is_some(),
                h2: req.h2_stream.is_some(),
                tls: tls_key(req),
                kept,
            },
        );
        decision
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        RECORDING.with(|c| c.set(false));
    }
}

/// A complete answer the server sends as it is: a `200` with its whole
/// body.
fn keepable_response(resp: &Response) -> bool {
    resp.status == 200
        && resp.stream == crate::http::Unannounced::No
        && resp.arrival != crate::http::Arrival::Later
        && !resp.close
        && resp.status_line.is_none()
}

fn capacity() -> usize {
    ENTRIES_PER_THREAD
}

/// Bytes of body an entry keeps in memory.
fn bytes_held(e: &Entry) -> usize {
    match &e.kept {
        Kept::Answer { response, .. } => response
            .body
            .parts
            .iter()
            .map(|p| match p {
                crate::http::BodyPart::Bytes(b) => b.len(),
                crate::http::BodyPart::File { .. } => 0,
            })
            .sum(),
        Kept::Volatile { .. } => 0,
    }
}

/// Whether a kept entry holds an open file (a body too large to be kept in
/// memory): those count against the open-file cache's share of descriptors.
fn holds_file(e: &Entry) -> bool {
    match &e.kept {
        Kept::Answer { response, .. } => response
            .body
            .parts
            .iter()
            .any(|p| matches!(p, crate::http::BodyPart::File { .. })),
        Kept::Volatile { .. } => false,
    }
}

fn put(key: &str, entry: Entry) {
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        if holds_file(&entry) && m.holding_files >= crate::filecache::capacity() {
            // Descriptors are bounded: this answer is decided each time.
            m.remove(key);
            return;
        }
        let bytes = bytes_held(&entry);
        if bytes > BYTES_PER_THREAD / 64 {
            // One answer may not take a large share of the memory.
            m.remove(key);
            return;
        }
        m.remove(key);
        if m.len() >= capacity() || m.holding_bytes + bytes > BYTES_PER_THREAD {
            // Entries of an older stamp are of no use: swept once per
            // stamp, so that a working set larger than the memo does not
            // pay a sweep on every request. Else the clock decides.
            let stamp = entry.stamp;
            if SWEPT.with(|s| s.replace(stamp)) != stamp {
                m.retain_stamp(stamp);
            }
            while (m.len() >= capacity() || m.holding_bytes + bytes > BYTES_PER_THREAD)
                && m.evict_one()
            {}
        }
        m.insert(key, entry);
    });
}

/// Forget every kept answer of this thread (tests).
#[cfg(test)]
pub fn clear() {
    MEMO.with(|m| m.borrow_mut().clear());
    SEEN.with(|s| *s.borrow_mut() = Sightings::default());
    SWEPT.with(|s| s.set(u64::MAX));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(line: &str, headers: &[(&'static str, &'static str)], peer: &str) -> Request {
        let mut h = Headers::new();
        for (n, v) in headers {
            h.push(*n, *v);
        }
        let mut parts = line.split(' ');
        let (method, target) = (parts.next().unwrap(), parts.next().unwrap());
        Request {
            request_line: line.into(),
            headers: h,
            peer: peer.parse().unwrap(),
            ..crate::test_support::request(method, target, "")
        }
    }

    fn ok(body: &str) -> Response {
        let mut r = Response::new(200);
        r.body = crate::http::Body::bytes(body.as_bytes().to_vec());
        r
    }

    fn miss(l: Lookup) -> bool {
        !matches!(l, Lookup::Hit(_))
    }

    #[test]
    fn a_request_line_is_kept_from_its_second_sighting() {
        clear();
        let a = request("GET /once HTTP/1.1", &[], "10.0.0.1:5000");
        assert!(matches!(lookup(1, &a, 1), Lookup::Decide));
        assert!(matches!(lookup(1, &a, 1), Lookup::Record));
    }

    fn body(l: Lookup) -> Option<Vec<u8>> {
        match l {
            Lookup::Hit(r) => match &r.body.parts[..] {
                [crate::http::BodyPart::Bytes(b)] => Some(b.to_vec()),
                _ => panic!("unexpected body"),
            },
            _ => None,
        }
    }

    /// Record a decision of `req` that reads what `read` reads.
    fn decide(req: &Request, stamp: u64, resp: &Response, read: impl FnOnce(&Request)) {
        // A line seen for the first time is only noted; the second is recorded.
        if !matches!(lookup(1, req, stamp), Lookup::Record) {
            assert!(matches!(lookup(1, req, stamp), Lookup::Record));
        }
        let rec = Recording::start();
        read(req);
        let decision = rec.finish(1, req, stamp, Decision::Respond(resp.clone()));
        // A kept answer is handed back shared, as later requests get it.
        assert_eq!(
            matches!(decision, Decision::Kept(_)),
            keepable_response(resp) && !RECORDER.with(|r| r.borrow().volatile)
        );
    }

    #[test]
    fn a_header_read_must_match_and_others_do_not_matter() {
        clear();
        let a = request(
            "GET /a HTTP/1.1",
            &[("Host", "x"), ("Accept", "1")],
            "10.0.0.1:5000",
        );
        decide(&a, 3, &ok("A"), |r| {
            r.headers.get("Range");
            r.headers.get("host");
        });
        // Another Accept, another client: not read, so the same answer.
        let b = request(
            "GET /a HTTP/1.1",
            &[("Host", "x"), ("Accept", "2")],
            "10.0.0.2:6000",
        );
        assert_eq!(body(lookup(1, &b, 3)), Some(b"A".to_vec()));
        // A header that was read as absent, now present: decided again.
        let c = request(
            "GET /a HTTP/1.1",
            &[("Host", "x"), ("Range", "bytes=0-1")],
            "10.0.0.1:5000",
        );
        assert!(miss(lookup(1, &c, 3)));
        // Another value of a header that was read.
        let d = request("GET /a HTTP/1.1", &[("Host", "y")], "10.0.0.1:5000");
        assert!(miss(lookup(1, &d, 3)));
        // A repeated header that was read: every value counts.
        let e = request(
            "GET /a HTTP/1.1",
            &[("Host", "x"), ("Host", "y")],
            "10.0.0.1:5000",
        );
        assert!(miss(lookup(1, &e, 3)));
    }

    #[test]
    fn the_change_counter_the_key_and_the_engine_decide() {
        clear();
        let a = request("GET /a HTTP/1.1", &[], "10.0.0.1:5000");
        decide(&a, 3, &ok("A"), |_| {});
        assert!(body(lookup(1, &a, 3)).is_some());
        assert!(miss(lookup(1, &a, 4)), "used after a change");
        assert!(miss(lookup(2, &a, 3)), "used by another engine");
        let other = request("GET /a HTTP/1.0", &[], "10.0.0.1:5000");
        assert!(miss(lookup(1, &other, 3)), "another request line");
        let mut tls = a.clone();
        tls.secure = true;
        assert!(miss(lookup(1, &tls, 3)), "over TLS");
        let mut proxied = a.clone();
        proxied.proxied_by = Some("127.0.0.1:6000".parse().unwrap());
        assert!(miss(lookup(1, &proxied, 3)), "behind a PROXY header");
        let mut post = request("POST /a HTTP/1.1", &[], "10.0.0.1:5000");
        assert!(
            matches!(lookup(1, &post, 3), Lookup::Decide),
            "not GET or HEAD"
        );
        post.method = "GET".into();
        post.framing = BodyFraming::Length(3);
        assert!(matches!(lookup(1, &post, 3), Lookup::Decide), "with a body");
    }

    #[test]
    fn the_client_address_counts_when_read() {
        clear();
        let a = request("GET /ip HTTP/1.1", &[], "10.0.0.1:5000");
        decide(&a, 1, &ok("ip"), |r| {
            r.remote_ip();
        });
        let same_ip = request("GET /ip HTTP/1.1", &[], "10.0.0.1:7000");
        assert!(body(lookup(1, &same_ip, 1)).is_some());
        let other_ip = request("GET /ip HTTP/1.1", &[], "10.0.0.9:5000");
        assert!(miss(lookup(1, &other_ip, 1)));
        let b = request("GET /port HTTP/1.1", &[], "10.0.0.1:5000");
        decide(&b, 1, &ok("port"), |r| {
            r.remote();
        });
        let other_port = request("GET /port HTTP/1.1", &[], "10.0.0.1:5001");
        assert!(miss(lookup(1, &other_port, 1)));
    }

    #[test]
    fn a_whole_header_list_read_must_match_whole() {
        clear();
        let a = request(
            "GET /all HTTP/1.1",
            &[("A", "1"), ("B", "2")],
            "10.0.0.1:5000",
        );
        decide(&a, 1, &ok("all"), |r| {
            let _ = r.headers.iter().count();
        });
        let same = request(
            "GET /all HTTP/1.1",
            &[("a", "1"), ("b", "2")],
            "10.0.0.2:5000",
        );
        assert!(body(lookup(1, &same, 1)).is_some());
        let more = request(
            "GET /all HTTP/1.1",
            &[("A", "1"), ("B", "2"), ("C", "3")],
            "10.0.0.1:5000",
        );
        assert!(miss(lookup(1, &more, 1)));
    }

    #[test]
    fn volatile_decisions_and_other_answers_are_not_kept() {
        clear();
        let a = request("GET /t HTTP/1.1", &[], "10.0.0.1:5000");
        decide(&a, 1, &ok("t"), |_| note_volatile());
        // Decided without recording for a while, then recorded again.
        for _ in 0..VOLATILE_SKIPS {
            assert!(matches!(lookup(1, &a, 1), Lookup::Decide));
        }
        assert!(matches!(lookup(1, &a, 1), Lookup::Record));
        let b = request("GET /missing HTTP/1.1", &[], "10.0.0.1:5000");
        decide(&b, 1, &Response::new(404), |_| {});
        assert!(matches!(lookup(1, &b, 1), Lookup::Decide));
        // Nothing is recorded outside a recording.
        note_volatile();
        let c = request("GET /c HTTP/1.1", &[], "10.0.0.1:5000");
        decide(&c, 1, &ok("c"), |_| {});
        assert!(body(lookup(1, &c, 1)).is_some());
    }

    #[test]
    fn answers_holding_files_stay_within_the_descriptor_share() {
        clear();
        let path = std::env::temp_dir().join(format!("htaccel-memo-{}", std::process::id()));
        std::fs::write(&path, b"x").unwrap();
        let file = std::sync::Arc::new(std::fs::File::open(&path).unwrap());
        let _ = std::fs::remove_file(&path);
        let cap = crate::filecache::capacity();
        for i in 0..cap + 5 {
            let mut resp = Response::new(200);
            resp.body = crate::http::Body::file(file.clone(), 0, 1);
            let r = request(&format!("GET /big{i} HTTP/1.1"), &[], "10.0.0.1:5000");
            decide(&r, 1, &resp, |_| {});
        }
        MEMO.with(|m| {
            let m = m.borrow();
            assert_eq!(m.holding_files, cap);
        });
        // Answers in memory are still kept.
        let r = request("GET /small HTTP/1.1", &[], "10.0.0.1:5000");
        decide(&r, 1, &ok("s"), |_| {});
        assert!(body(lookup(1, &r, 1)).is_some());
    }

    #[test]
    fn the_clock_spares_an_answer_used_since_the_hand_passed() {
        clear();
        for i in 0..capacity() {
            let r = request(&format!("GET /f{i} HTTP/1.1"), &[], "10.0.0.1:5000");
            decide(&r, 3, &ok("f"), |_| {});
        }
        // The hand's first stop is the second place: used, it is spared.
        let first = request("GET /f1 HTTP/1.1", &[], "10.0.0.1:5000");
        assert!(body(lookup(1, &first, 3)).is_some());
        for i in 0..capacity() / 2 {
            let r = request(&format!("GET /new{i} HTTP/1.1"), &[], "10.0.0.1:5000");
            decide(&r, 3, &ok("n"), |_| {});
        }
        MEMO.with(|m| assert_eq!(m.borrow().len(), capacity()));
        assert!(
            body(lookup(1, &first, 3)).is_some(),
            "a used answer was dropped"
        );
        let second = request("GET /f2 HTTP/1.1", &[], "10.0.0.1:5000");
        assert!(
            body(lookup(1, &second, 3)).is_none(),
            "an unused one stayed"
        );
    }

    #[test]
    fn stays_bounded() {
        clear();
        for i in 0..capacity() + 10 {
            let r = request(&format!("GET /f{i} HTTP/1.1"), &[], "10.0.0.1:5000");
            decide(&r, 3, &ok("f"), |_| {});
        }
        MEMO.with(|m| assert_eq!(m.borrow().len(), capacity()));
        let r = request("GET /new HTTP/1.1", &[], "10.0.0.1:5000");
        decide(&r, 4, &ok("new"), |_| {});
        MEMO.with(|m| assert_eq!(m.borrow().len(), 1));
    }

    #[test]
    fn bodies_kept_in_memory_stay_within_their_bytes() {
        clear();
        // Larger than a sixty-fourth of the budget: decided each time.
        let big = "b".repeat(BYTES_PER_THREAD / 64 + 1);
        let r = request("GET /big HTTP/1.1", &[], "10.0.0.1:5000");
        decide(&r, 5, &ok(&big), |_| {});
        assert!(miss(lookup(1, &r, 5)));
        // Bodies that together pass the budget: older ones make room.
        let chunk = "m".repeat(BYTES_PER_THREAD / 64);
        for i in 0..100 {
            let r = request(&format!("GET /m{i} HTTP/1.1"), &[], "10.0.0.1:5000");
            decide(&r, 5, &ok(&chunk), |_| {});
        }
        MEMO.with(|m| {
            let m = m.borrow();
            assert!(m.holding_bytes <= BYTES_PER_THREAD);
            assert_eq!(m.len(), 64);
        });
        let last = request("GET /m99 HTTP/1.1", &[], "10.0.0.1:5000");
        assert!(body(lookup(1, &last, 5)).is_some());
    }
}
