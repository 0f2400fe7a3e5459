//! mod_http2's configuration, and the core's `Protocols` and
//! `ProtocolsHonorOrder` that choose a connection's protocol (Apache's
//! `ap_select_protocol`, server/protocol.c).
//!
//! The server speaks HTTP/2 on a connection when the configuration loads
//! `http2_module` and the connection's server lists the protocol: `h2` by
//! ALPN in the TLS handshake (the server SNI chose), `h2c` by the client's
//! connection preface on a cleartext address (`H2Direct`, on by default
//! for `h2c`; the address's base server decides, before any `Host` is
//! read), or `h2c` by an HTTP/1.1 request's `Upgrade: h2c` ([`upgrade`]:
//! the core's upgrade handler, first of the handlers, with mod_http2's
//! conditions: the request's server lists `h2c`, `H2Upgrade` is not off
//! for the request's directory (on by default in clear text), the request
//! has `HTTP2-Settings` named in `Connection` and no body; the answer is
//! `101 Switching Protocols` and the request is answered again as stream 1
//! of the session). What HTTP/2 changes of a request stops at the framing:
//! each stream is served with the same request semantics as HTTP/1.1.
//!
//! Accepted without effect, as their purpose is Apache's own thread and
//! buffer management: `H2MinWorkers`, `H2MaxWorkers`,
//! `H2MaxWorkerIdleSeconds`, `H2SerializeHeaders`,
//! `H2SessionExtraFiles`, `H2TLSWarmUpSize`, `H2TLSCoolDownSecs`,
//! `H2CopyFiles`, `H2OutputBuffering`, `H2StreamMaxMemSize` (streams write
//! through flow control, not into a per-stream buffer). `H2Push` is
//! accepted and nothing is pushed (browsers no longer accept pushes);
//! `H2ModernTLSOnly` holds by construction: htaccel's TLS offers only
//! TLS 1.2 and 1.3 with AEAD suites. `H2EarlyHint` and `H2EarlyHints`
//! are mod_http2's 103 Early Hints ([`early_hints`]: the request makes
//! them in its fixups, the session's server decides whether they reach the
//! client); `H2PushResource` announces its resource there, and nothing is
//! pushed. Refused with the reason: `H2Padding` other than 0,
//! `H2StreamTimeout`, `H2ProxyRequests on` and `H2WebSockets on`.

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::http::http2::H2Settings;
use crate::registry::{Args, Directive, Module, Run, OR_AUTHCFG, OR_FILEINFO, RSRC_CONF};
use std::sync::Arc;

/// The core's protocol choice for one server.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProtocolsConf {
    /// `Protocols`, in the order given (empty: `http/1.1` only).
    pub list: Vec<String>,
    /// `ProtocolsHonorOrder` (`None`: on).
    pub honor_order: Option<bool>,
}

impl ProtocolsConf {
    /// A `<VirtualHost>` over the main server (`merge_core_server_configs`):
    /// a list given replaces the main server's whole.
    pub fn merge(main: &ProtocolsConf, vhost: &ProtocolsConf) -> ProtocolsConf {
        ProtocolsConf {
            list: if vhost.list.is_empty() {
                main.list.clone()
            } else {
                vhost.list.clone()
            },
            honor_order: vhost.honor_order.or(main.honor_order),
        }
    }

    /// `ap_get_protocol_upgrades` for an HTTP/1.1 connection: the
    /// configured protocols listed before `http/1.1`, comma-joined
    /// (`None`: nothing to announce).
    pub fn upgrade_offer(&self) -> Option<Arc<str>> {
        if self.list.is_empty() || (self.list.len() == 1 && self.lists("http/1.1")) {
            return None;
        }
        let offer: Vec<&str> = self
            .list
            .iter()
            .map(String::as_str)
            .take_while(|p| *p != "http/1.1")
            .collect();
        (!offer.is_empty()).then(|| offer.join(",").into())
    }

    pub fn lists(&self, protocol: &str) -> bool {
        self.list.iter().any(|p| p == protocol)
    }

    /// `ap_select_protocol` for a connection that speaks HTTP/1.1 now:
    /// among what the client offers (`choices`, in its order) and the
    /// server can switch to (`available`: `h2` over TLS, `h2c` in clear
    /// text, when mod_http2 is loaded), the configured protocol most
    /// preferred (the server's order, or the client's with
    /// `ProtocolsHonorOrder off`). `None`: nothing configured fits.
    pub fn select<'a>(&self, choices: &[&'a str], available: &[&str]) -> Option<&'a str> {
        if self.list.is_empty() {
            return choices.iter().copied().find(|c| *c == "http/1.1");
        }
        let mut proposals: Vec<&'a str> = choices
            .iter()
            .copied()
            .filter(|c| available.contains(c))
            .collect();
        if choices.contains(&"http/1.1") && !proposals.contains(&"http/1.1") {
            proposals.push(choices[choices.iter().position(|c| *c == "http/1.1")?]);
        }
        let client_order = self.honor_order == Some(false) && !choices.is_empty();
        let rank = |p: &str| -> Option<usize> {
            if client_order {
                choices.iter().position(|c| *c == p)
            } else {
                self.list.iter().position(|c| c == p)
            }
        };
        let mut best: Option<&'a str> = None;
        for p in proposals {
            if !self.lists(p) {
                continue;
            }
            best = match best {
                None => Some(p),
                Some(b) if prefers(rank(p), rank(b), p, b) => Some(p),
                keep => keep,
            };
        }
        best
    }
}

/// `protocol_cmp`: whether `p` (at index `ip` of the preferences) beats
/// `b`; a protocol the preferences do not list loses, equal ranks go by name.
fn prefers(ip: Option<usize>, ib: Option<usize>, p: &str, b: &str) -> bool {
    match (ip, ib) {
        (Some(i), Some(j)) if i != j => i < j,
        (Some(_), None) => true,
        (None, Some(_)) => false,
        _ => p > b,
    }
}

/// mod_http2's server settings (`None`: not set here).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Http2Server {
    pub direct: Option<bool>,
    pub max_streams: Option<u32>,
    pub window_size: Option<u32>,
    pub max_data_frame_len: Option<u32>,
    /// `H2EarlyHints`.
    pub early_hints: Option<bool>,
    /// `H2EarlyHint` at server level: the fields of a request whose
    /// directories give none.
    pub hints: Vec<(String, String)>,
    /// `H2PushResource` at server level, likewise, as the `Link` fields
    /// mod_http2 announces them with.
    pub pushes: Vec<Field>,
}

/// A response field: name and value.
pub type Field = (String, String);

impl Http2Server {
    pub fn merge(main: &Http2Server, vhost: &Http2Server) -> Http2Server {
        Http2Server {
            direct: vhost.direct.or(main.direct),
            max_streams: vhost.max_streams.or(main.max_streams),
            window_size: vhost.window_size.or(main.window_size),
            max_data_frame_len: vhost.max_data_frame_len.or(main.max_data_frame_len),
            early_hints: vhost.early_hints.or(main.early_hints),
            hints: overlay(&vhost.hints, &main.hints),
            pushes: overlay(&main.pushes, &vhost.pushes),
        }
    }

    /// The settings a session of this server runs with (mod_http2's
    /// defaults where nothing is set).
    pub fn settings(&self) -> H2Settings {
        H2Settings {
            max_streams: self.max_streams.unwrap_or(100),
            window_size: self.window_size.unwrap_or(65_535),
            max_data_frame_len: self.max_data_frame_len.unwrap_or(0),
            early_hints: self.early_hints.unwrap_or(false),
        }
    }
}

/// mod_http2's per-directory settings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Http2Dir {
    /// `H2Upgrade` (`None`: not set, on in clear text).
    pub upgrade: Option<bool>,
    /// `H2EarlyHint` in sections and `.htaccess` files (`None`: none
    /// here, the server's apply).
    pub hints: Option<Arc<Vec<Field>>>,
    /// `H2PushResource` in sections and `.htaccess` files (`Link` fields).
    pub pushes: Option<Arc<Vec<Field>>>,
}

impl Http2Dir {
    pub fn merge(base: &Http2Dir, new: &Http2Dir) -> Http2Dir {
        Http2Dir {
            upgrade: new.upgrade.or(base.upgrade),
            // `apr_table_overlay`: the newer level's hints first.
            hints: merge_lists(&new.hints, &base.hints),
            // `apr_array_append`: the older level's pushes first.
            pushes: merge_lists(&base.pushes, &new.pushes),
        }
    }
}

/// Two levels' lists, `first`'s fields before `then`'s; a level without
/// a list leaves the other's.
fn merge_lists(
    first: &Option<Arc<Vec<Field>>>,
    then: &Option<Arc<Vec<Field>>>,
) -> Option<Arc<Vec<Field>>> {
    match (first, then) {
        (Some(a), Some(b)) => Some(Arc::new(overlay(a, b))),
        (a, b) => a.clone().or_else(|| b.clone()),
    }
}

/// `first`'s fields, then `then`'s.
fn overlay(first: &[Field], then: &[Field]) -> Vec<Field> {
    first.iter().chain(then).cloned().collect()
}

/// `apr_atoi64`: leading blanks, a sign, the digits; anything after them
/// is ignored and no digits read as 0.
fn atoi(value: &str) -> i64 {
    let t = value.trim_start();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let n = digits
        .bytes()
        .take_while(u8::is_ascii_digit)
        .fold(0i64, |n, d| {
            n.saturating_mul(10).saturating_add((d - b'0') as i64)
        });
    if neg {
        -n
    } else {
        n
    }
}

fn on_off(value: &str) -> Result<bool, String> {
    if value.eq_ignore_ascii_case("on") {
        Ok(true)
    } else if value.eq_ignore_ascii_case("off") {
        Ok(false)
    } else {
        Err("value must be On or Off".into())
    }
}

fn set_protocols(w: &mut Walker<'_>, inv: &Invocation<'_>, _: &mut DirConf) -> Result<(), String> {
    let server = w.server()?;
    server
        .modules
        .protocols
        .list
        .extend(inv.words.iter().cloned());
    Ok(())
}

fn set_honor_order(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    _: &mut DirConf,
) -> Result<(), String> {
    let v = &inv.words[0];
    let on = if v.eq_ignore_ascii_case("on") {
        true
    } else if v.eq_ignore_ascii_case("off") {
        false
    } else {
        return Err("ProtocolsHonorOrder must be 'on' or 'off'".into());
    };
    w.server()?.modules.protocols.honor_order = Some(on);
    Ok(())
}

/// mod_http2's fixup: what a request on an HTTP/2 stream shows scripts
/// (`HTTP2`, the push state, the stream's id and tag). Nothing is ever
/// pushed here, so the push variables say so.
pub(crate) fn fixup(ctx: &mut crate::request::Ctx<'_>) -> Result<(), crate::request::Status> {
    let Some(stream) = ctx.req.h2_stream else {
        return Ok(());
    };
    ctx.env.set("HTTP2", "on");
    ctx.env.set("H2PUSH", "off");
    ctx.env.set("H2_PUSH", "off");
    ctx.env.set("H2_PUSHED", "");
    ctx.env.set("H2_PUSHED_ON", "");
    ctx.env.set("H2_STREAM_ID", stream.id.to_string());
    // mod_http2's tag: the serving process, the session (the connection's
    // number) and the stream.
    ctx.env.set(
        "H2_STREAM_TAG",
        format!("{}-{}-{}", std::process::id(), stream.session, stream.id),
    );
    Ok(())
}

/// The `103 Early Hints` answers a request sent on its way (each its
/// fields in order): the main request's, then each internal redirect's.
#[derive(Clone, Debug, Default)]
pub struct SentHints(pub Vec<Vec<(String, String)>>);

impl SentHints {
    /// What was sent, for the answer (or exchange) that goes out after it.
    pub fn take(&mut self) -> Vec<Vec<(String, String)>> {
        std::mem::take(&mut self.0)
    }
}

impl crate::request::RequestSlot for SentHints {
    /// An internal redirect goes on after what was sent before it.
    fn for_redirect(from: &crate::request::Ctx<'_>) -> Self {
        from.modules.early_hints.clone()
    }
}

/// mod_http2's last fixup (`check_early_hints`). On a stream, a
/// `Link: <URI>; rel=preload` for each `H2PushResource` and the
/// request's `H2EarlyHint` fields (each list its directories', else its
/// server's) join `headers_out`; a request that is no sub-request then sends
/// `headers_out` whole as a `103 Early Hints`, and its final answer no
/// longer has what was there. A sub-request sends nothing (Apache gives it
/// no protocol version): the fields stay in its `headers_out`, which
/// mod_dir's and mod_negotiation's fast redirects hand to the request they
/// serve, whose own 103 then carries them twice. Nothing for a request
/// waiting for `100 Continue`. Whether a 103 reaches the client is the
/// session's `H2EarlyHints`: the server drops it otherwise.
pub(crate) fn early_hints(ctx: &mut crate::request::Ctx<'_>) -> Result<(), crate::request::Status> {
    if !ctx.req.on_stream() {
        return Ok(());
    }
    let server = ctx.site.http2.as_ref();
    let pushes = dir_or_server(&ctx.conf.http2.pushes, server.map(|s| &s.pushes));
    let hints = dir_or_server(&ctx.conf.http2.hints, server.map(|s| &s.hints));
    if hints.is_empty() && pushes.is_empty() {
        return Ok(());
    }
    let expect = ctx.headers_in.get_str("Expect");
    if expect.is_some_and(|e| e.eq_ignore_ascii_case("100-continue")) {
        return Ok(());
    }
    ctx.headers_out.extend(pushes.iter().chain(hints).cloned());
    if !ctx.is_subreq {
        let sent = std::mem::take(&mut ctx.headers_out);
        ctx.modules.early_hints.0.push(sent);
    }
    Ok(())
}

/// A directory's list, else its server's.
fn dir_or_server<'c>(
    dir: &'c Option<Arc<Vec<Field>>>,
    server: Option<&'c Vec<Field>>,
) -> &'c [Field] {
    match (dir, server) {
        (Some(dir), _) => dir,
        (None, Some(server)) => server,
        (None, None) => &[],
    }
}

/// The core's upgrade handler (`core_upgrade_handler`, the first handler
/// Apache runs) for mod_http2's `h2c`: the `101 Switching Protocols`
/// answer when the request asks to switch to `h2c` and may, `None` when it
/// is answered as it is. Only a request read from an HTTP/1.x connection in
/// clear text can switch (over TLS, mod_http2 offers `h2` only with
/// `H2Upgrade on`, which htaccel does not switch to).
pub(crate) fn upgrade(ctx: &crate::request::Ctx<'_>) -> Option<crate::http::Response> {
    use crate::http::Version;
    let req = ctx.req;
    let http2 = ctx.site.http2.as_ref()?;
    if req.tls.is_some()
        || req.h2_stream.is_some()
        || !matches!(req.version, Version::Http10 | Version::Http11)
        || !ctx.site.modules.protocols.lists("h2c")
    {
        return None;
    }
    let headers = &ctx.headers_in;
    let offered = headers.get_str("Upgrade").filter(|u| !u.is_empty())?;
    if !find_token(headers.get_str("Connection").unwrap_or_default(), "upgrade") {
        return None;
    }
    let offers = parse_token_list_strict(offered)?;
    if offers.is_empty() {
        return None;
    }
    // mod_http2's proposal (`h2_protocol_propose`): `H2Upgrade` for the
    // request's directory, `HTTP2-Settings` named in `Connection`, no body.
    let settings = headers.get_str("HTTP2-Settings");
    let proposes = ctx.conf.http2.upgrade != Some(false)
        && settings.is_some()
        && find_token(
            headers.get_str("Connection").unwrap_or_default(),
            "http2-settings",
        )
        && match headers.get_str("Content-Length") {
            Some(cl) => cl == "0",
            None => !headers.contains("Transfer-Encoding"),
        };
    let available: &[&str] = if proposes { &["h2c"] } else { &[] };
    let choices: Vec<&str> = offers.iter().map(String::as_str).collect();
    if ctx.site.modules.protocols.select(&choices, available)? != "h2c" {
        return None;
    }
    // The stream's request, as `h2_request_rcreate` makes it: the host the
    // request named, with its port, else the server's when not the default.
    let (host, port) =
        crate::engine::request_host(req).unwrap_or_else(|| (ctx.site.server_name.clone(), None));
    let authority = match port.or(ctx.site.port.filter(|p| *p != 80)) {
        Some(p) if !host.contains(':') || host.starts_with('[') => format!("{host}:{p}"),
        _ => host,
    };
    // mod_http2 writes the request's parsed path, which Apache decoded
    // and normalised in place, with its query as sent: the path where an
    // internal redirect took it (a local `ErrorDocument`'s request has
    // handlers, this one first), else the request's own, before any
    // rewrite. A decoded path HTTP/2's `:path` cannot hold here goes as
    // the client sent it.
    let decoded = if ctx.redirects > 0 {
        let mut p = crate::path_text::bytes(&ctx.uri).into_owned();
        if let Some(args) = &ctx.args {
            p.push(b'?');
            p.extend_from_slice(args.as_bytes());
        }
        Some(p)
    } else {
        crate::handler::request_uri(ctx.site, req).ok().map(|u| {
            let mut p = u.path;
            if let Some(q) = &u.target.query {
                p.push(b'?');
                p.extend_from_slice(q.as_bytes());
            }
            p
        })
    };
    let path = match decoded.filter(|p| carriable_path(p)) {
        Some(p) => bytes::Bytes::from(p),
        None => bytes::Bytes::from(
            match req
                .target
                .strip_prefix("http://")
                .or_else(|| req.target.strip_prefix("https://"))
            {
                Some(rest) => match rest.find('/') {
                    Some(i) => rest[i..].to_string(),
                    None => "/".to_string(),
                },
                None => req.target.clone(),
            },
        ),
    };
    let fields = headers
        .iter()
        .filter(|(n, _)| {
            !IGNORED_REQUEST_FIELDS
                .iter()
                .any(|i| n.eq_ignore_ascii_case(i))
        })
        .map(|(n, v)| (n.to_ascii_lowercase(), v.clone()))
        .collect();
    let mut resp = crate::http::Response::new(101);
    resp.add_header("Upgrade", "h2c");
    resp.add_header("Connection", "Upgrade");
    resp.h2c_upgrade = Some(Box::new(crate::http::http2::H2cUpgrade {
        settings: http2.settings(),
        client_settings_valid: settings.is_some_and(settings_payload_valid),
        interim: req.version == Version::Http11,
        method: ctx.method.to_string(),
        scheme: "http",
        authority,
        path,
        headers: fields,
    }));
    Some(resp)
}

/// The protocols the core announces in `Upgrade` on a handler's answer
/// (sent on a connection's first answer only): those of the request's
/// server, to a request that asked for none (no `Upgrade`, or an empty one).
pub(crate) fn upgrade_offer(ctx: &crate::request::Ctx<'_>) -> Option<Arc<str>> {
    ctx.site.upgrade_offer.as_ref()?;
    if ctx.headers_in.get("Upgrade").is_some_and(|u| !u.is_empty()) {
        return None;
    }
    ctx.site.upgrade_offer.clone()
}

/// What mod_http2 leaves out of a stream's request made from an HTTP/1.1
/// one (`h2_req_ignore_header`).
const IGNORED_REQUEST_FIELDS: &[&str] = &[
    "upgrade",
    "connection",
    "keep-alive",
    "http2-settings",
    "proxy-connection",
    "transfer-encoding",
];

/// Whether a `:path` the `h2` crate takes can hold `p` as it is: UTF-8,
/// no blanks, controls, `#` nor characters a URI never holds bare.
fn carriable_path(p: &[u8]) -> bool {
    p.first() == Some(&b'/')
        && std::str::from_utf8(p).is_ok()
        && p.iter().all(|&b| {
            b >= 0x80 || b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/%?".contains(&b)
        })
}

/// `ap_find_token` over header values.
fn find_token(list: &str, tok: &str) -> bool {
    crate::header_table::find_token(list.as_bytes(), tok.as_bytes())
}

/// `ap_parse_token_list_strict` (invalid characters refused): the tokens
/// of a comma-separated list, as written; `None` when the list is invalid.
fn parse_token_list_strict(list: &str) -> Option<Vec<String>> {
    let mut tokens = Vec::new();
    for item in list.split(',') {
        let item = item.trim_start_matches([' ', '\t']);
        let token = item.trim_end_matches([' ', '\t']);
        if !token
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c))
        {
            return None;
        }
        if !token.is_empty() {
            tokens.push(token.to_string());
        }
    }
    Some(tokens)
}

/// Whether an `HTTP2-Settings` value is a SETTINGS payload nghttp2 takes
/// (`nghttp2_session_upgrade`): mod_http2 decodes the base64url characters
/// it starts with (`h2_util_base64url_decode`), and the payload must be
/// whole six-byte entries whose values are in range.
fn settings_payload_valid(value: &str) -> bool {
    let payload = crate::http::digest::base64url_decode_prefix(value.as_bytes());
    if !payload.len().is_multiple_of(6) {
        return false;
    }
    payload.chunks(6).all(|e| {
        let id = u16::from_be_bytes([e[0], e[1]]);
        let v = u32::from_be_bytes([e[2], e[3], e[4], e[5]]);
        match id {
            // ENABLE_PUSH, ENABLE_CONNECT_PROTOCOL, NO_RFC7540_PRIORITIES
            0x2 | 0x8 | 0x9 => v <= 1,
            // INITIAL_WINDOW_SIZE
            0x4 => v <= i32::MAX as u32,
            // MAX_FRAME_SIZE
            0x5 => (16_384..=16_777_215).contains(&v),
            _ => true,
        }
    })
}

/// The core's two directives (registered with the core's own).
pub static CORE_DIRECTIVES: &[Directive] = &[
    Directive { name: "Protocols", args: Args::Iterate, req_override: RSRC_CONF, about: "Controls which protocols are allowed", run: Run::Handler(set_protocols) },
    Directive { name: "ProtocolsHonorOrder", args: Args::Take1, req_override: RSRC_CONF, about: "'off' (default) or 'on' to respect given order of protocols, by default the client specified order determines selection", run: Run::Handler(set_honor_order) },
];

/// A directive of Apache's thread or buffer management: its value is
/// checked as Apache checks it and has no effect here.
fn accept_number(min: i64, message: &'static str) -> impl Fn(&str) -> Result<(), String> {
    move |v| {
        if atoi(v) < min {
            Err(message.into())
        } else {
            Ok(())
        }
    }
}

fn run_h2(w: &mut Walker<'_>, inv: &Invocation<'_>, dc: &mut DirConf) -> Result<(), String> {
    let v = inv.words.first().map(String::as_str).unwrap_or_default();
    let name = inv.name.to_ascii_lowercase();
    // Directory-context forms (`H2Upgrade`, `H2Push`, `H2CopyFiles`, …)
    // are allowed there by their override class; the rest need a server.
    match name.as_str() {
        "h2direct" => w.server()?.modules.http2.direct = Some(on_off(v)?),
        "h2maxsessionstreams" => {
            let n = atoi(v);
            if n < 1 {
                return Err("value must be > 0".into());
            }
            w.server()?.modules.http2.max_streams = Some(n.min(u32::MAX as i64) as u32);
        }
        "h2windowsize" => {
            let n = atoi(v) as i32 as i64;
            if n < 1024 {
                return Err("value must be >= 1024".into());
            }
            w.server()?.modules.http2.window_size = Some(n.min(i32::MAX as i64) as u32);
        }
        "h2streamtimeout" => {
            return Err("H2StreamTimeout: a stream's every wait is bounded by Timeout in htaccel; set Timeout instead".into())
        }
        "h2maxdataframelen" => {
            let n = atoi(v);
            if n < 0 {
                return Err("value must be 0 or larger".into());
            }
            w.server()?.modules.http2.max_data_frame_len = Some(n.min(u32::MAX as i64) as u32);
        }
        "h2streammaxmemsize" | "h2tlswarmupsize" => {
            accept_number(1024, "value must be >= 1024")(v)?;
        }
        "h2minworkers" | "h2maxworkers" => accept_number(1, "value must be > 0")(v)?,
        "h2maxworkeridleseconds" | "h2tlscooldownsecs" | "h2pushdiarysize" => {
            accept_number(0, "value must be >= 0")(v)?
        }
        "h2serializeheaders" | "h2sessionextrafiles" => {}
        "h2moderntlsonly" | "h2copyfiles" | "h2outputbuffering" | "h2push" => {
            on_off(v)?;
        }
        // Read per request from its directory's configuration (a server's
        // own value is the base of its directories').
        "h2upgrade" => dc.http2.upgrade = Some(on_off(v)?),
        "h2earlyhints" => w.server()?.modules.http2.early_hints = Some(on_off(v)?),
        "h2padding" => {
            let n = atoi(v);
            if n < 0 {
                return Err("number of bits must be >= 0".into());
            }
            if n > 8 {
                return Err("number of bits must be <= 8".into());
            }
            if n != 0 {
                return Err("H2Padding: htaccel does not pad HTTP/2 frames; only 0 is accepted".into());
            }
        }
        "h2proxyrequests" | "h2websockets" => {
            if on_off(v)? {
                return Err(format!("{} on is not supported by htaccel", inv.name));
            }
        }
        "h2pushpriority" => {}
        "h2pushresource" => {
            let push = push_resource(&inv.words)?;
            if w.ctx.path.is_some() {
                let pushes = dc.http2.pushes.get_or_insert_with(Default::default);
                Arc::make_mut(pushes).push(push);
            } else {
                w.server()?.modules.http2.pushes.push(push);
            }
        }
        "h2earlyhint" => {
            let field = early_hint(v, inv.words.get(1).map(String::as_str))?;
            if w.ctx.path.is_some() {
                let hints = dc.http2.hints.get_or_insert_with(Default::default);
                Arc::make_mut(hints).push(field);
            } else {
                w.server()?.modules.http2.hints.push(field);
            }
        }
        _ => return Err(format!("{} is not supported by htaccel yet", inv.name)),
    }
    Ok(())
}

/// `H2PushResource [add] URI [critical]`, with mod_http2's messages: the
/// `Link` field mod_http2 announces the resource with in the 103 (and
/// would push it by, which htaccel never does).
fn push_resource(words: &[String]) -> Result<Field, String> {
    let (uri, last) = match words {
        [add, uri, rest @ ..] if add.eq_ignore_ascii_case("add") => (uri, rest.first()),
        [uri, rest @ ..] => {
            if rest.len() > 1 {
                return Err("too many parameter".into());
            }
            (uri, rest.first())
        }
        [] => return Err("H2PushResource takes 1-3 arguments".into()),
    };
    let critical = match last {
        None => false,
        Some(l) if l.eq_ignore_ascii_case("critical") => true,
        Some(_) => return Err("unknown last parameter".into()),
    };
    let critical = if critical { "; critical" } else { "" };
    Ok(("Link".into(), format!("<{uri}>; rel=preload{critical}")))
}

/// `H2EarlyHint NAME VALUE`: mod_http2's checks (a name, a value that is
/// not only blanks and holds only a field's characters), and a name that
/// can be sent as a field: Apache writes any name into the 103, which an
/// HTTP/2 client then refuses.
fn early_hint(name: &str, value: Option<&str>) -> Result<(String, String), String> {
    if name.is_empty() {
        return Err("Early Hint header name must not be empty".into());
    }
    let value = value
        .ok_or("Early Hint header value must not be empty")?
        .trim_start_matches(|c: char| c.is_ascii_whitespace());
    if value.is_empty() {
        return Err("Early Hint header value must not be empty/only space".into());
    }
    if !value
        .bytes()
        .all(|b| b == b' ' || b == b'\t' || (b >= 0x21 && b != 0x7f))
    {
        return Err("Early Hint header value contains invalid characters".into());
    }
    if !crate::header_table::is_token(name.as_bytes()) {
        return Err(format!(
            "Early Hint header name '{name}' is not a valid field name (htaccel refuses what a client would refuse)"
        ));
    }
    Ok((name.to_string(), value.to_string()))
}

macro_rules! h2 {
    ($($name:literal, $args:expr, $ovr:expr, $about:literal;)*) => {
        &[ $( Directive { name: $name, args: $args, req_override: $ovr, about: $about, run: Run::Handler(run_h2) }, )* ]
    };
}

pub static DIRECTIVES: &[Directive] = h2![
    "H2MaxSessionStreams", Args::Take1, RSRC_CONF, "maximum number of open streams per session";
    "H2WindowSize", Args::Take1, RSRC_CONF, "window size on client DATA";
    "H2MinWorkers", Args::Take1, RSRC_CONF, "minimum number of worker threads per child";
    "H2MaxWorkers", Args::Take1, RSRC_CONF, "maximum number of worker threads per child";
    "H2MaxWorkerIdleSeconds", Args::Take1, RSRC_CONF, "maximum number of idle seconds before a worker shuts down";
    "H2StreamMaxMemSize", Args::Take1, RSRC_CONF, "maximum number of bytes buffered in memory for a stream";
    "H2SerializeHeaders", Args::Take1, RSRC_CONF, "disabled, this directive has no longer an effect.";
    "H2ModernTLSOnly", Args::Take1, RSRC_CONF, "off to not impose RFC 7540 restrictions on TLS";
    "H2Upgrade", Args::Take1, RSRC_CONF | OR_AUTHCFG, "on to allow HTTP/1 Upgrades to h2/h2c";
    "H2Direct", Args::Take1, RSRC_CONF, "on to enable direct HTTP/2 mode";
    "H2SessionExtraFiles", Args::Take1, RSRC_CONF, "number of extra file a session might keep open (obsolete)";
    "H2TLSWarmUpSize", Args::Take1, RSRC_CONF, "number of bytes on TLS connection before doing max writes";
    "H2TLSCoolDownSecs", Args::Take1, RSRC_CONF, "seconds of idle time on TLS before shrinking writes";
    "H2Push", Args::Take1, RSRC_CONF | OR_AUTHCFG, "off to disable HTTP/2 server push";
    "H2PushPriority", Args::Take23, RSRC_CONF, "define priority of PUSHed resources per content type";
    "H2PushDiarySize", Args::Take1, RSRC_CONF, "size of push diary";
    "H2CopyFiles", Args::Take1, OR_FILEINFO, "on to perform copy of file data";
    "H2PushResource", Args::Take123, OR_FILEINFO | OR_AUTHCFG, "add a resource to be pushed in this location/on this server.";
    "H2EarlyHints", Args::Take1, RSRC_CONF, "on to enable interim status 103 responses";
    "H2Padding", Args::Take1, RSRC_CONF, "set payload padding";
    "H2OutputBuffering", Args::Take1, RSRC_CONF, "set stream output buffer on/off";
    "H2StreamTimeout", Args::Take1, RSRC_CONF, "set stream timeout";
    "H2MaxDataFrameLen", Args::Take1, RSRC_CONF, "maximum number of bytes in a single HTTP/2 DATA frame";
    "H2EarlyHint", Args::Take2, OR_FILEINFO | OR_AUTHCFG, "add a a 'Link:' header for a 103 Early Hints response.";
    "H2ProxyRequests", Args::Take1, OR_FILEINFO, "Enables forward proxy requests via HTTP/2";
    "H2WebSockets", Args::Take1, RSRC_CONF, "off to disable WebSockets over HTTP/2";
];

/// The core's part: `Protocols` exists whether mod_http2 is loaded or not.
pub static CORE_MODULE: Module = Module {
    source: "core.c",
    identifier: "core_module",
    builtin: true,
    directives: CORE_DIRECTIVES,
};

pub static MODULE: Module = Module {
    source: "mod_http2.c",
    identifier: "http2_module",
    builtin: false,
    directives: DIRECTIVES,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(list: &[&str], honor: Option<bool>) -> ProtocolsConf {
        ProtocolsConf {
            list: list.iter().map(|s| s.to_string()).collect(),
            honor_order: honor,
        }
    }

    #[test]
    fn early_hints_are_checked_as_mod_http2_checks_them() {
        let hint = |n: &str, v: &str| early_hint(n, Some(v));
        assert_eq!(
            hint("Link", "  </a.css>; rel=preload"),
            Ok(("Link".into(), "</a.css>; rel=preload".into()))
        );
        assert_eq!(
            hint("", "v"),
            Err("Early Hint header name must not be empty".into())
        );
        assert_eq!(
            hint("X", " \t "),
            Err("Early Hint header value must not be empty/only space".into())
        );
        assert_eq!(
            hint("X", "a\u{1}b"),
            Err("Early Hint header value contains invalid characters".into())
        );
        assert!(hint("X Y", "v")
            .unwrap_err()
            .contains("not a valid field name"));
    }

    #[test]
    fn push_resources_are_read_as_mod_http2_reads_them() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let link = |v: &str| Ok(("Link".to_string(), v.to_string()));
        assert_eq!(
            push_resource(&words(&["/a.css"])),
            link("</a.css>; rel=preload")
        );
        assert_eq!(
            push_resource(&words(&["ADD", "/a.css", "Critical"])),
            link("</a.css>; rel=preload; critical")
        );
        assert_eq!(
            push_resource(&words(&["/a.css", "critical"])),
            link("</a.css>; rel=preload; critical")
        );
        assert_eq!(
            push_resource(&words(&["/a.css", "x", "y"])),
            Err("too many parameter".into())
        );
        assert_eq!(
            push_resource(&words(&["/a.css", "soon"])),
            Err("unknown last parameter".into())
        );
    }

    #[test]
    fn early_hints_merge_newest_first() {
        let dir = |f: &[(&str, &str)]| Http2Dir {
            hints: Some(Arc::new(
                f.iter()
                    .map(|(n, v)| (n.to_string(), v.to_string()))
                    .collect(),
            )),
            ..Default::default()
        };
        let merged = Http2Dir::merge(&dir(&[("A", "parent")]), &dir(&[("A", "child")]));
        let values: Vec<_> = merged
            .hints
            .unwrap()
            .iter()
            .map(|(_, v)| v.clone())
            .collect();
        assert_eq!(values, ["child", "parent"]);
        // A level without hints keeps its parent's.
        let kept = Http2Dir::merge(&dir(&[("A", "parent")]), &Http2Dir::default());
        assert_eq!(kept.hints.unwrap().len(), 1);
    }

    #[test]
    fn selection_follows_the_server_order_unless_told_otherwise() {
        let tls = ["h2"];
        let both = conf(&["h2", "http/1.1"], None);
        assert_eq!(both.select(&["http/1.1", "h2"], &tls), Some("h2"));
        let h1_first = conf(&["http/1.1", "h2"], None);
        assert_eq!(h1_first.select(&["h2", "http/1.1"], &tls), Some("http/1.1"));
        let client = conf(&["http/1.1", "h2"], Some(false));
        assert_eq!(client.select(&["h2", "http/1.1"], &tls), Some("h2"));
        // Nothing configured: HTTP/1.1 only.
        assert_eq!(
            conf(&[], None).select(&["h2", "http/1.1"], &tls),
            Some("http/1.1")
        );
        // h2 configured, the client offers only what is not.
        assert_eq!(conf(&["h2"], None).select(&["http/1.1"], &tls), None);
        // h2c is not a TLS protocol.
        assert_eq!(
            conf(&["h2c", "http/1.1"], None).select(&["h2c", "http/1.1"], &tls),
            Some("http/1.1")
        );
    }

    #[test]
    fn upgrade_lists_are_read_strictly() {
        assert_eq!(
            parse_token_list_strict(" h2c , foo,,"),
            Some(vec!["h2c".to_string(), "foo".to_string()])
        );
        assert_eq!(parse_token_list_strict("h2c;v=1"), None);
        assert_eq!(parse_token_list_strict("h2 c"), None);
        assert!(find_token("Upgrade, HTTP2-Settings", "http2-settings"));
        assert!(find_token("keep-alive, upgrade", "upgrade"));
        assert!(!find_token("close", "upgrade"));
    }

    #[test]
    fn http2_settings_decode_as_nghttp2_takes_them() {
        // curl's: MAX_CONCURRENT_STREAMS 100, INITIAL_WINDOW_SIZE, ENABLE_PUSH 0.
        assert!(settings_payload_valid("AAMAAABkAAQCAAAAAAIAAAAA"));
        // Empty, or nothing base64url before another character: no entries.
        assert!(settings_payload_valid(""));
        assert!(settings_payload_valid("!!!!"));
        // Three bytes: not a whole entry.
        assert!(!settings_payload_valid("AAMA"));
        // ENABLE_PUSH 2, MAX_FRAME_SIZE below 16384.
        assert!(!settings_payload_valid("AAIAAAAC"));
        assert!(!settings_payload_valid("AAUAAAAB"));
        // Padding ends the value; what precedes it counts.
        assert!(settings_payload_valid("AAMAAABk=="));
    }

    #[test]
    fn numbers_read_as_apr_atoi64() {
        assert_eq!(atoi(" 42abc"), 42);
        assert_eq!(atoi("x"), 0);
        assert_eq!(atoi("-5"), -5);
    }
}
