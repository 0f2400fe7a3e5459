//! The request-target, as Apache httpd 2.4 reads it.
//!
//! Two steps, because Apache takes them at two different moments and the
//! second one depends on the virtual host chosen in between:
//!
//! 1. [`parse_target`] — what `ap_parse_uri` and the request-line checks do
//!    while the request line is read: split the target into path, query and
//!    (for the absolute form) scheme and authority, and refuse what Apache
//!    refuses there (a target that is not `/…`, `*` for `OPTIONS` or an
//!    absolute URI; fragments and user info under `HttpProtocolOptions
//!    Strict`; a scheme other than http/https).
//! 2. [`normalize`] — the start of `ap_process_request_internal`: decode the
//!    `%`-escapes of unreserved characters, remove `.` and `..` segments
//!    (`..` above the root is a 400), merge slashes (`MergeSlashes`), then
//!    decode every other escape into the path, where `%2F` and `%00` give a
//!    404 (`AllowEncodedSlashes`). The result is Apache's `r->uri`.
//!
//! The decoded path is kept as bytes: `%FF` is a legal request, Linux file
//! names are bytes, and Apache compares and maps them as bytes. Everything
//! else (the target as sent, query, host) is a slice of the request line
//! and stays text. The request phases hold the decoded path as text in
//! [`crate::path_text`]'s form, which keeps every byte.
//!
//! The escaping helpers at the end ([`escape_path`], [`escape_html`],
//! [`unescape`] and friends) are Apache's `util.c` routines of the same
//! names, shared by the modules that build URLs and pages.
//!
//! Every routine here is one left-to-right pass over its input (dot-segment
//! removal rewinds over output it already wrote, which is amortised linear):
//! no recursion, no quadratic case, whatever the number of segments.

use std::borrow::Cow;

/// `AllowEncodedSlashes`: what an encoded slash (`%2F`) in the path does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EncodedSlashes {
    /// `Off` (Apache's default): the request is answered 404.
    #[default]
    Off,
    /// `On`: decoded to `/` like any other escape.
    On,
    /// `NoDecode`: accepted but left encoded in the path.
    NoDecode,
}

/// The server/virtual-host settings that [`normalize`] obeys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NormalizeOptions {
    /// `MergeSlashes` (default `On`).
    pub merge_slashes: bool,
    /// `AllowEncodedSlashes` (default `Off`).
    pub encoded_slashes: EncodedSlashes,
}

impl Default for NormalizeOptions {
    fn default() -> Self {
        NormalizeOptions {
            merge_slashes: true,
            encoded_slashes: EncodedSlashes::Off,
        }
    }
}

/// What [`parse_target`] needs to know about the request and the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseOptions {
    /// `HttpProtocolOptions Strict` (the default): fragments and user info
    /// in the target are refused.
    pub strict: bool,
    /// The connection is TLS: the scheme whose host overrides `Host` is
    /// then `https` rather than `http`.
    pub secure: bool,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            strict: true,
            secure: false,
        }
    }
}

/// The authority of an absolute-form target (`http://host:port/…`) or of a
/// `CONNECT` target, split as APR splits it. Not validated: the virtual host
/// lookup lowercases the host and refuses bad ones (`a..b`, `h%41`: 400).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Authority {
    /// The host without brackets (`::1` for `[::1]`), as sent.
    pub host: String,
    /// Whether the host was written as a bracketed IPv6 literal.
    pub ipv6_literal: bool,
    /// The port text after `:` as sent, if a `:` was present (it may be
    /// empty: `http://h:/` keeps `Host: h:`).
    pub port_str: Option<String>,
    /// The port number: the scheme's default when no digits were given.
    /// Apache reads it with `strtol` and stores 16 bits, so `:99999` is
    /// port 34463 and `:+80` is port 80.
    pub port: u16,
    /// `user` of `user:password@`, only ever present when not strict.
    pub user: Option<String>,
    /// `password` of `user:password@`, only ever present when not strict.
    pub password: Option<String>,
}

/// A request-target split into its parts (Apache's `r->parsed_uri` right
/// after the request line was read).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedTarget {
    /// The target exactly as sent (`r->unparsed_uri`).
    pub unparsed: String,
    /// The scheme of an absolute-form target, as sent (`HTTP`, `https`).
    pub scheme: Option<String>,
    /// The authority of an absolute-form or `CONNECT` target.
    pub authority: Option<Authority>,
    /// The host that replaces the `Host` header: the authority, when the
    /// scheme is the connection's own (`http`, or `https` over TLS,
    /// compared without case) or the method is `CONNECT`. The `Host`
    /// header is then rewritten to this host and port.
    pub host_override: Option<Authority>,
    /// The path as sent (`r->parsed_uri.path`), `None` when the target has
    /// none (`http://h`, `http://h?x`, `CONNECT h:443`).
    pub path: Option<String>,
    /// The query string as sent, without `?` (`r->args`); `Some("")` for a
    /// bare `?`.
    pub query: Option<String>,
    /// The fragment, only ever present when not strict.
    pub fragment: Option<String>,
    /// `r->uri` before normalisation: the path, or `*` for `OPTIONS` and
    /// `/` for other methods when the target has no path.
    pub uri: String,
}

/// A request-target after [`normalize`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestUri {
    /// The parts as parsed; `target.query` is `r->args`,
    /// `target.unparsed` is `r->unparsed_uri`.
    pub target: ParsedTarget,
    /// The decoded, normalised path (`r->uri`): what `Alias`,
    /// `DocumentRoot`, `<Location>` and mod_rewrite's `REQUEST_URI` see.
    /// Starts with `/`, or is `*` for `OPTIONS *`.
    pub path: Vec<u8>,
    /// The path after dot-segment removal and decoding of unreserved
    /// characters but before the full decode: what Apache's
    /// `pre_translate_name` hooks see (`/a%20b` for `/x/../a%20b`).
    pub encoded_path: String,
}

impl RequestUri {
    /// The query string as sent, without `?`.
    #[cfg(test)]
    pub fn query(&self) -> Option<&str> {
        self.target.query.as_deref()
    }
}

/// Which check refused a request-target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UriErrorKind {
    /// The request line has no target at all.
    Missing,
    /// A control character or space inside the target (`AH03454`).
    BadCharacter,
    /// Unparsable, or not `/…`, `*` (with `OPTIONS`) or absolute (`AH03450`).
    Unparsable,
    /// A `#fragment` under `HttpProtocolOptions Strict` (`AH02421`).
    Fragment,
    /// `user:password@` in an absolute target under Strict (`AH02422`).
    UserInfo,
    /// A scheme other than http/https (400, nothing logged).
    Scheme,
    /// A bad `%`-escape, or `..` climbing above the root (`AH10244`).
    InvalidPath,
    /// `%2F` with `AllowEncodedSlashes Off`, or `%00` (`AH00026`).
    EncodedSlashOrNul,
}

/// A request-target Apache refuses: the status it answers and the error-log
/// line it writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UriError {
    pub kind: UriErrorKind,
    /// 400 or 404.
    pub status: u16,
    /// The error-log level of Apache's line (`debug`, `info`, `error`, all
    /// from module `core`); `None` when Apache logs nothing.
    pub level: Option<&'static str>,
    /// The message part of the log line, unescaped (the error-log writer
    /// escapes control bytes), e.g. `AH10244: invalid URI path (/..)`.
    pub message: String,
    /// Apache detects this while reading the request line, before any
    /// header is read: the request then has no headers (the access log
    /// shows `-` for `%{Host}i`) and it is never mapped to a file.
    pub in_request_line: bool,
}

impl std::fmt::Display for UriError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.status)
    }
}

impl std::error::Error for UriError {}

fn request_line_error(kind: UriErrorKind, message: String) -> UriError {
    UriError {
        kind,
        status: 400,
        level: Some("debug"),
        message,
        in_request_line: true,
    }
}

/// The part of a value Apache quotes in its request-line messages
/// (`'%.*s'` bounded by `field_name_len`): up to the first `:`, at most 80
/// bytes, cut back to a character boundary.
fn log_name(s: &str) -> &str {
    let mut end = s.find(':').unwrap_or(s.len()).min(80);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Splits a request-target as Apache does when it reads the request line
/// (`ap_parse_uri` and the checks of `read_request_line` and
/// `ap_post_read_request`). `method` is compared case-sensitively, as
/// Apache's method numbers are.
pub fn parse_target(
    method: &str,
    target: &str,
    opts: &ParseOptions,
) -> Result<ParsedTarget, UriError> {
    if target.is_empty() {
        return Err(request_line_error(
            UriErrorKind::Missing,
            "AH03446: HTTP Request Line; Missing URI".to_string(),
        ));
    }
    if target.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err(request_line_error(
            UriErrorKind::BadCharacter,
            format!(
                "AH03454: HTTP Request Line; URI incorrectly encoded: '{}'",
                log_name(target)
            ),
        ));
    }

    // A path is not a network-path reference: leading "//" pairs go first.
    let mut rest = target;
    while rest.starts_with("//") {
        rest = &rest[1..];
    }
    let is_connect = method == "CONNECT";
    let parts = if is_connect {
        split_hostinfo(rest)
    } else {
        split_uri(rest)
    };
    let Some(parts) = parts else {
        return Err(unparsable(rest));
    };

    let own_scheme = if opts.secure { "https" } else { "http" };
    let host_override = match &parts.scheme {
        Some(s) if s.eq_ignore_ascii_case(own_scheme) => parts.authority.clone(),
        _ if is_connect => parts.authority.clone(),
        _ => None,
    };
    let uri = match &parts.path {
        Some(p) => p.to_string(),
        None if method == "OPTIONS" => "*".to_string(),
        None => "/".to_string(),
    };
    if let Some(p) = &parts.path {
        let options_star = method == "OPTIONS" && *p == "*";
        if !p.starts_with('/') && !options_star {
            return Err(unparsable(p));
        }
    }
    if opts.strict {
        if parts.fragment.is_some() {
            return Err(request_line_error(
                UriErrorKind::Fragment,
                "AH02421: HTTP Request Line; URI must not contain a fragment".to_string(),
            ));
        }
        if let Some(a) = &parts.authority {
            if a.user.is_some() || a.password.is_some() {
                return Err(request_line_error(
                    UriErrorKind::UserInfo,
                    "AH02422: HTTP Request Line; URI must not contain a username/password"
                        .to_string(),
                ));
            }
        }
    }
    if let Some(s) = &parts.scheme {
        if !s.eq_ignore_ascii_case("http") && !s.eq_ignore_ascii_case("https") {
            return Err(UriError {
                kind: UriErrorKind::Scheme,
                status: 400,
                level: None,
                message: String::new(),
                in_request_line: false,
            });
        }
    }
    Ok(ParsedTarget {
        unparsed: target.to_string(),
        scheme: parts.scheme.map(str::to_string),
        authority: parts.authority,
        host_override,
        path: parts.path.map(str::to_string),
        query: parts.query.map(str::to_string),
        fragment: parts.fragment.map(str::to_string),
        uri,
    })
}

fn unparsable(uri: &str) -> UriError {
    request_line_error(
        UriErrorKind::Unparsable,
        format!(
            "AH03450: HTTP Request Line; Unable to parse URI: '{}'",
            log_name(uri)
        ),
    )
}

struct Parts<'a> {
    scheme: Option<&'a str>,
    authority: Option<Authority>,
    path: Option<&'a str>,
    query: Option<&'a str>,
    fragment: Option<&'a str>,
}

/// APR's `apr_uri_parse`, for the shapes a request-target can take.
fn split_uri(uri: &str) -> Option<Parts<'_>> {
    let b = uri.as_bytes();
    let mut parts = Parts {
        scheme: None,
        authority: None,
        path: None,
        query: None,
        fragment: None,
    };
    if b.first() == Some(&b'/') {
        split_path(uri, &mut parts);
        return Some(parts);
    }
    // scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"
    let mut i = 0;
    if b.first().is_some_and(u8::is_ascii_alphabetic) {
        i = 1;
        while b
            .get(i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || b"+-.".contains(c))
        {
            i += 1;
        }
    }
    let after_scheme = if i > 0 && b.get(i) == Some(&b':') {
        parts.scheme = Some(&uri[..i]);
        i + 1
    } else {
        0
    };
    let rest = &uri[after_scheme..];
    if !rest.starts_with("//") {
        if parts.scheme.is_none() {
            // A relative reference: its first segment may not hold a ':'.
            let first_seg = rest.find('/').map_or(rest, |s| &rest[..s]);
            if first_seg.contains(':') {
                return None;
            }
        }
        split_path(rest, &mut parts);
        return Some(parts);
    }
    let rest = &rest[2..];
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (hostinfo, tail) = rest.split_at(end);
    let mut authority = Authority {
        host: String::new(),
        ipv6_literal: false,
        port_str: None,
        port: 0,
        user: None,
        password: None,
    };
    let hostport = match hostinfo.rfind('@') {
        Some(at) => {
            let userinfo = &hostinfo[..at];
            match userinfo.split_once(':') {
                Some((u, p)) => {
                    authority.user = Some(u.to_string());
                    authority.password = Some(p.to_string());
                }
                None => authority.user = Some(userinfo.to_string()),
            }
            &hostinfo[at + 1..]
        }
        None => hostinfo,
    };
    let port_sep = if hostport.starts_with('[') {
        let close = hostport.find(']')?;
        authority.ipv6_literal = true;
        if hostport.as_bytes().get(close + 1) == Some(&b':') {
            authority.host = hostport[1..close].to_string();
            Some(close + 1)
        } else {
            // APR drops the first and the last byte, whatever follows ']'.
            authority.host = hostport[1..hostport.len() - 1].to_string();
            None
        }
    } else {
        let colon = hostport.find(':');
        authority.host = hostport[..colon.unwrap_or(hostport.len())].to_string();
        colon
    };
    let default_port = default_port(parts.scheme);
    authority.port = default_port;
    if let Some(sep) = port_sep {
        let port_str = &hostport[sep + 1..];
        if !port_str.is_empty() {
            authority.port = strtol_port(port_str)?;
        }
        authority.port_str = Some(port_str.to_string());
    }
    parts.authority = Some(authority);
    split_path(tail, &mut parts);
    Some(parts)
}

/// Path, `?query` and `#fragment` of what follows the authority.
fn split_path<'a>(s: &'a str, parts: &mut Parts<'a>) {
    let end = memchr::memchr2(b'?', b'#', s.as_bytes()).unwrap_or(s.len());
    if end > 0 {
        parts.path = Some(&s[..end]);
    }
    let rest = &s[end..];
    if let Some(q) = rest.strip_prefix('?') {
        match q.split_once('#') {
            Some((q, f)) => {
                parts.query = Some(q);
                parts.fragment = Some(f);
            }
            None => parts.query = Some(q),
        }
    } else if let Some(f) = rest.strip_prefix('#') {
        parts.fragment = Some(f);
    }
}

/// APR's `apr_uri_parse_hostinfo`: the `host:port` target of `CONNECT`,
/// where the port is required.
fn split_hostinfo(s: &str) -> Option<Parts<'_>> {
    let (host, ipv6_literal, port_str) = if let Some(v6) = s.strip_prefix('[') {
        let close = v6.find(']')?;
        (&v6[..close], true, v6[close + 1..].strip_prefix(':')?)
    } else {
        let (h, p) = s.split_once(':')?;
        (h, false, p)
    };
    if port_str.is_empty() {
        return None;
    }
    let authority = Authority {
        host: host.to_string(),
        ipv6_literal,
        port: strtol_port(port_str)?,
        port_str: Some(port_str.to_string()),
        user: None,
        password: None,
    };
    Some(Parts {
        scheme: None,
        authority: Some(authority),
        path: None,
        query: None,
        fragment: None,
    })
}

/// A port as C's `strtol` reads it, cut to 16 bits as APR stores it; the
/// whole text must be the number.
fn strtol_port(s: &str) -> Option<u16> {
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    // strtol saturates at the bounds of a 64-bit long.
    let mut v: i64 = 0;
    for c in digits.bytes() {
        v = v.saturating_mul(10).saturating_add(i64::from(c - b'0'));
    }
    if neg {
        v = v.checked_neg().unwrap_or(i64::MIN);
    }
    // long -> int -> apr_port_t: keep the low 16 bits.
    Some(v as u16)
}

fn default_port(scheme: Option<&str>) -> u16 {
    match scheme {
        Some(s) if s.eq_ignore_ascii_case("http") => 80,
        Some(s) if s.eq_ignore_ascii_case("https") => 443,
        _ => 0,
    }
}

/// Normalises a parsed target into `r->uri` as `ap_process_request_internal`
/// does with Apache's default flags (`..` may not climb above the root,
/// slashes merged unless `MergeSlashes Off`).
pub fn normalize(target: &ParsedTarget, opts: &NormalizeOptions) -> Result<RequestUri, UriError> {
    normalize_owned(target.clone(), opts)
}

/// [`normalize`] for a target the caller no longer needs: its parts move
/// into the result instead of being copied (the path of every request).
fn normalize_owned(target: ParsedTarget, opts: &NormalizeOptions) -> Result<RequestUri, UriError> {
    let Some(raw) = &target.path else {
        // No path in the target: r->uri is "/" or "*" and is not touched.
        return Ok(RequestUri {
            path: target.uri.clone().into_bytes(),
            encoded_path: target.uri.clone(),
            target,
        });
    };
    let flags = NormalizeFlags {
        decode_unreserved: true,
        merge_slashes: opts.merge_slashes,
        not_above_root: true,
        allow_relative: false,
    };
    let mut buf = raw.as_bytes().to_vec();
    if !normalize_path(&mut buf, flags) {
        return Err(UriError {
            kind: UriErrorKind::InvalidPath,
            status: 400,
            level: Some("error"),
            message: format!("AH10244: invalid URI path ({})", target.unparsed),
            in_request_line: false,
        });
    }

    let mode = UnescapeMode {
        keep_unreserved: true,
        forbid_slashes: opts.encoded_slashes == EncodedSlashes::Off,
        keep_slashes: opts.encoded_slashes == EncodedSlashes::NoDecode,
        ..UnescapeMode::default()
    };
    let decoded = match unescape_with(&buf, &mode) {
        // Nothing to decode: the path is the buffer (copied below).
        Ok(Cow::Borrowed(_)) => None,
        Ok(Cow::Owned(p)) => Some(p),
        Err(e) => {
            let logged = opts.encoded_slashes == EncodedSlashes::Off;
            return Err(UriError {
                kind: match e {
                    UnescapeError::BadEscape => UriErrorKind::InvalidPath,
                    UnescapeError::Forbidden => UriErrorKind::EncodedSlashOrNul,
                },
                status: e.status(),
                level: (logged && e == UnescapeError::Forbidden).then_some("info"),
                message: if logged && e == UnescapeError::Forbidden {
                    format!(
                        "AH00026: found %2f (encoded '/') in URI path ({}), returning 404",
                        target.unparsed
                    )
                } else {
                    String::new()
                },
                in_request_line: false,
            });
        }
    };
    // Only ASCII was decoded and only ASCII removed: still UTF-8.
    let encoded_path = String::from_utf8(buf).expect("normalisation keeps UTF-8");
    let mut path = decoded.unwrap_or_else(|| encoded_path.as_bytes().to_vec());
    if opts.encoded_slashes == EncodedSlashes::On {
        // Decoded slashes may have made new "//", "/./" or "/../": Apache
        // normalises again and ignores the verdict.
        normalize_path(
            &mut path,
            NormalizeFlags {
                decode_unreserved: false,
                ..flags
            },
        );
    }
    Ok(RequestUri {
        target,
        path,
        encoded_path,
    })
}

/// Parses and normalises in one go with the server defaults.
pub fn request_uri(method: &str, target: &str, secure: bool) -> Result<RequestUri, UriError> {
    let parse = ParseOptions {
        strict: true,
        secure,
    };
    request_uri_with(method, target, &parse, &NormalizeOptions::default())
}

/// [`request_uri`] with the chosen server's settings (`HttpProtocolOptions`,
/// `AllowEncodedSlashes`, `MergeSlashes`).
pub fn request_uri_with(
    method: &str,
    target: &str,
    parse: &ParseOptions,
    opts: &NormalizeOptions,
) -> Result<RequestUri, UriError> {
    normalize_owned(parse_target(method, target, parse)?, opts)
}

/// Runs of `/` collapsed into one (Apache's `ap_no2slash`).
pub fn merge_slashes(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if !(c == '/' && out.ends_with('/')) {
            out.push(c);
        }
    }
    out
}

/// The flags of Apache's `ap_normalize_path`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct NormalizeFlags {
    /// Decode `%XX` escapes of unreserved characters (letters, digits,
    /// `-._~`) before looking at segments; a malformed escape fails.
    pub decode_unreserved: bool,
    /// Collapse runs of `/` into one.
    pub merge_slashes: bool,
    /// Fail when `..` would climb above the root (it is dropped otherwise).
    pub not_above_root: bool,
    /// Accept a path that does not start with `/`.
    pub allow_relative: bool,
}

/// Removes `.` and `..` segments in place (Apache's `ap_normalize_path`).
/// Returns `false` for a path Apache calls invalid: not starting with `/`
/// (unless `allow_relative`; `*` alone is always accepted), a malformed
/// `%`-escape when decoding unreserved characters, or `..` above the root
/// with `not_above_root`. The buffer is normalised even when it fails.
pub fn normalize_path(buf: &mut Vec<u8>, flags: NormalizeFlags) -> bool {
    is_normal(buf, flags) || normalize_segments(buf, flags)
}

/// [`normalize_path`]'s work, byte by byte.
fn normalize_segments(buf: &mut Vec<u8>, flags: NormalizeFlags) -> bool {
    let len = buf.len();
    let at = |b: &[u8], i: usize| b.get(i).copied().unwrap_or(0);
    let slash_or_end = |b: &[u8], i: usize| i >= len || b[i] == b'/';
    let mut ok = true;
    let (mut r, mut w) = (1, 1);
    if buf.first() != Some(&b'/') {
        if buf.as_slice() == b"*" {
            return true;
        }
        if !flags.allow_relative || buf.is_empty() {
            return false;
        }
        (r, w) = (0, 0);
    }
    while r < len {
        if flags.decode_unreserved && buf[r] == b'%' {
            match (hex_value(at(buf, r + 1)), hex_value(at(buf, r + 2))) {
                (Some(hi), Some(lo)) => {
                    let c = hi << 4 | lo;
                    if is_unreserved(c) {
                        // The decoded byte takes the place of the last hex
                        // digit and is read from there.
                        r += 2;
                        buf[r] = c;
                    }
                }
                _ => ok = false,
            }
        }
        if w == 0 || buf[w - 1] == b'/' {
            if flags.merge_slashes && buf[r] == b'/' {
                while r < len && buf[r] == b'/' {
                    r += 1;
                }
                continue;
            }
            if buf[r] == b'.' {
                if slash_or_end(buf, r + 1) {
                    // "." segment
                    r = (r + 2).min(len);
                    continue;
                }
                // ".." segment; its second dot may still be "%2e".
                let mut n = r + 1;
                let dotdot = if buf[n] == b'.' {
                    true
                } else if flags.decode_unreserved
                    && buf[n] == b'%'
                    && at(buf, n + 1) == b'2'
                    && at(buf, n + 2) | 0x20 == b'e'
                {
                    n += 2;
                    true
                } else {
                    false
                };
                if dotdot && slash_or_end(buf, n + 1) {
                    if w > 1 {
                        loop {
                            w -= 1;
                            if w == 0 || buf[w - 1] == b'/' {
                                break;
                            }
                        }
                    } else if flags.not_above_root {
                        ok = false;
                    }
                    r = (n + 2).min(len);
                    continue;
                }
            }
        }
        buf[w] = buf[r];
        w += 1;
        r += 1;
    }
    buf.truncate(w);
    ok
}

/// Whether [`normalize_path`] would leave `buf` as it is and accept it: an
/// absolute path with no dot segment (every one follows a `/`), no slashes
/// to merge and no escape to decode. One pass over the bytes, looking
/// after each `/`: most request paths are already normal, and short
/// enough that a plain scan costs less than searches set up per slash.
fn is_normal(buf: &[u8], flags: NormalizeFlags) -> bool {
    if buf.first() != Some(&b'/') {
        return false;
    }
    let mut previous = 0u8;
    for &b in buf {
        match (previous, b) {
            (b'/', b'.') => return false,
            (b'/', b'/') if flags.merge_slashes => return false,
            (_, b'%') if flags.decode_unreserved => return false,
            _ => {}
        }
        previous = b;
    }
    true
}

/// RFC 3986 unreserved: ALPHA / DIGIT / "-" / "." / "_" / "~".
fn is_unreserved(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~')
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Why [`unescape`] refused its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnescapeError {
    /// A `%` not followed by two hex digits (Apache answers 400).
    BadEscape,
    /// An escape decoding to NUL or to a forbidden byte such as `/`
    /// (Apache answers 404).
    Forbidden,
}

impl UnescapeError {
    /// The status Apache answers when a request path fails this way.
    pub fn status(self) -> u16 {
        match self {
            UnescapeError::BadEscape => 400,
            UnescapeError::Forbidden => 404,
        }
    }
}

/// How [`unescape_with`] treats particular escapes (the flags and
/// character sets of Apache's `unescape_url`). NUL is always forbidden.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct UnescapeMode<'a> {
    /// Bytes whose escapes are refused ([`UnescapeError::Forbidden`]).
    pub forbid: &'a [u8],
    /// Bytes whose escapes are left as they are.
    pub reserved: &'a [u8],
    /// Refuse `%2F`.
    pub forbid_slashes: bool,
    /// Leave `%2F` encoded.
    pub keep_slashes: bool,
    /// Leave escapes of unreserved characters encoded.
    pub keep_unreserved: bool,
}

/// Decodes every `%XX` escape but those `mode` keeps. Apache finishes
/// decoding before it reports a failure; a bad escape outranks a forbidden
/// byte.
pub fn unescape_with<'a>(
    input: &'a [u8],
    mode: &UnescapeMode<'_>,
) -> Result<Cow<'a, [u8]>, UnescapeError> {
    let Some(first) = memchr::memchr(b'%', input) else {
        return Ok(Cow::Borrowed(input));
    };
    let decoded = decode(input, first, mode);
    if decoded.bad_escape {
        Err(UnescapeError::BadEscape)
    } else if decoded.forbidden {
        Err(UnescapeError::Forbidden)
    } else {
        Ok(Cow::Owned(decoded.out))
    }
}

/// Apache's `ap_unescape_url_keep2f` where its caller ignores the
/// verdict (mod_proxy_fcgi's `PATH_INFO`): the bytes as decoded in
/// place, every valid escape but `%2F` decoded, a bad one left as it is.
pub fn unescape_keep2f_lossy(input: &[u8]) -> Vec<u8> {
    let mode = UnescapeMode {
        keep_slashes: true,
        ..UnescapeMode::default()
    };
    match memchr::memchr(b'%', input) {
        Some(first) => decode(input, first, &mode).out,
        None => input.to_vec(),
    }
}

/// What [`decode`] made of its input, and what it met on the way.
struct Decoded {
    out: Vec<u8>,
    bad_escape: bool,
    forbidden: bool,
}

/// Apache's `unescape_url` loop from the first `%` (at `first`) on.
fn decode(input: &[u8], first: usize, mode: &UnescapeMode<'_>) -> Decoded {
    let mut out = Vec::with_capacity(input.len());
    out.extend_from_slice(&input[..first]);
    let (mut bad_escape, mut forbidden) = (false, false);
    let mut i = first;
    while i < input.len() {
        let c = input[i];
        if c != b'%' {
            out.push(c);
            i += 1;
            continue;
        }
        let hex = (
            input.get(i + 1).copied().and_then(hex_value),
            input.get(i + 2).copied().and_then(hex_value),
        );
        let (Some(hi), Some(lo)) = hex else {
            bad_escape = true;
            out.push(b'%');
            i += 1;
            continue;
        };
        let d = hi << 4 | lo;
        if d == 0 || (mode.forbid_slashes && d == b'/') || mode.forbid.contains(&d) {
            forbidden = true;
            out.push(d);
        } else if (mode.keep_unreserved && is_unreserved(d))
            || (mode.keep_slashes && d == b'/')
            || mode.reserved.contains(&d)
        {
            out.extend_from_slice(&input[i..i + 3]);
        } else {
            out.push(d);
        }
        i += 3;
    }
    Decoded {
        out,
        bad_escape,
        forbidden,
    }
}

/// Apache's `ap_unescape_url`: decodes every escape, refusing `%2F` and
/// `%00`.
pub fn unescape(input: &[u8]) -> Result<Cow<'_, [u8]>, UnescapeError> {
    unescape_with(
        input,
        &UnescapeMode {
            forbid: b"/",
            ..UnescapeMode::default()
        },
    )
}

/// Apache's `ap_unescape_all`: decodes every escape, `%2F` included; only
/// `%00` is refused.
#[cfg(test)]
pub fn unescape_all(input: &[u8]) -> Result<Cow<'_, [u8]>, UnescapeError> {
    unescape_with(input, &UnescapeMode::default())
}

/// Apache's `ap_unescape_urlencoded`: a form value, `+` meaning space.
#[cfg(test)]
pub fn unescape_urlencoded(input: &[u8]) -> Result<Vec<u8>, UnescapeError> {
    let plus_free: Cow<'_, [u8]> = if input.contains(&b'+') {
        Cow::Owned(
            input
                .iter()
                .map(|&c| if c == b'+' { b' ' } else { c })
                .collect(),
        )
    } else {
        Cow::Borrowed(input)
    };
    unescape_all(&plus_free).map(Cow::into_owned)
}

const HEX_LOWER: &[u8; 16] = b"0123456789abcdef";

/// Escapes with `%xx` (lowercase hex, as Apache writes them) every byte
/// for which `keep` is false.
fn escape_bytes(input: &[u8], keep: impl Fn(u8) -> bool) -> Cow<'_, str> {
    if input.iter().all(|&c| keep(c)) {
        // Every kept byte is ASCII.
        return Cow::Borrowed(std::str::from_utf8(input).expect("kept bytes are ASCII"));
    }
    let mut out = String::with_capacity(input.len() + input.len() / 2);
    for &c in input {
        if keep(c) {
            out.push(c as char);
        } else {
            out.push('%');
            out.push(HEX_LOWER[usize::from(c >> 4)] as char);
            out.push(HEX_LOWER[usize::from(c & 15)] as char);
        }
    }
    Cow::Owned(out)
}

/// Apache's `ap_escape_uri` (`ap_os_escape_path` with `partial`): turns a
/// decoded path back into URL text, as mod_dir does for the trailing-slash
/// `Location` (`/a b` → `/a%20b`, `/q?d` → `/q%3fd`, `/ü` → `/%c3%bc`).
/// Letters, digits, `/` and `$-_.+!*'(),:;@&=~` stay as they are.
pub fn escape_path(path: &[u8]) -> Cow<'_, str> {
    escape_bytes(path, |c| {
        c.is_ascii_alphanumeric() || b"$-_.+!*'(),:;@&=/~".contains(&c)
    })
}

/// Apache's `ap_os_escape_path` without `partial`: [`escape_path`], with
/// `./` put in front when a `:` comes before the first `/` (so that the
/// result is not read as a scheme).
pub fn escape_os_path(path: &[u8]) -> Cow<'_, str> {
    let colon_first = match (memchr::memchr(b':', path), memchr::memchr(b'/', path)) {
        (Some(colon), Some(slash)) => colon < slash,
        (colon, _) => colon.is_some(),
    };
    if colon_first {
        Cow::Owned(format!("./{}", escape_path(path)))
    } else {
        escape_path(path)
    }
}

/// Apache's `ap_escape_path_segment`: like [`escape_path`] but `/` and `;`
/// are escaped too (one segment of a path, e.g. a file name in a listing).
pub fn escape_path_segment(segment: &[u8]) -> Cow<'_, str> {
    escape_bytes(segment, |c| {
        c.is_ascii_alphanumeric() || b"$-_.+!*'(),:@&=~".contains(&c)
    })
}

/// Apache's `ap_escape_urlencoded`: form encoding, space as `+`, only
/// letters, digits and `.-*_` left alone.
#[cfg(test)]
pub fn escape_urlencoded(input: &[u8]) -> String {
    let mut out = String::with_capacity(input.len());
    for &c in input {
        if c == b' ' {
            out.push('+');
        } else if c.is_ascii_alphanumeric() || b".-*_".contains(&c) {
            out.push(c as char);
        } else {
            out.push('%');
            out.push(HEX_LOWER[usize::from(c >> 4)] as char);
            out.push(HEX_LOWER[usize::from(c & 15)] as char);
        }
    }
    out
}

/// Apache's `ap_escape_html`: `<`, `>`, `&` and `"` as entities; every
/// other byte unchanged (so UTF-8 stays UTF-8).
pub fn escape_html(input: &[u8]) -> Cow<'_, [u8]> {
    if !input.iter().any(|c| matches!(c, b'<' | b'>' | b'&' | b'"')) {
        return Cow::Borrowed(input);
    }
    let mut out = Vec::with_capacity(input.len() + 16);
    for &c in input {
        match c {
            b'<' => out.extend_from_slice(b"&lt;"),
            b'>' => out.extend_from_slice(b"&gt;"),
            b'&' => out.extend_from_slice(b"&amp;"),
            b'"' => out.extend_from_slice(b"&quot;"),
            _ => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// [`escape_html`] for text.
pub fn escape_html_str(input: &str) -> Cow<'_, str> {
    match escape_html(input.as_bytes()) {
        Cow::Borrowed(_) => Cow::Borrowed(input),
        // Only ASCII bytes were replaced by ASCII: still UTF-8.
        Cow::Owned(v) => Cow::Owned(String::from_utf8(v).expect("escaping keeps UTF-8")),
    }
}

/// Apache's `ap_escape_html2` with `toasc`: [`escape_html`], and every
/// non-ASCII byte as a decimal character reference (`&#195;`).
pub fn escape_html_ascii(input: &[u8]) -> String {
    let mut out = String::with_capacity(input.len());
    for &c in input {
        match c {
            b'<' => out.push_str("&lt;"),
            b'>' => out.push_str("&gt;"),
            b'&' => out.push_str("&amp;"),
            b'"' => out.push_str("&quot;"),
            c if c.is_ascii() => out.push(c as char),
            c => out.push_str(&format!("&#{c:03};")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_found_normal_is_one_the_loop_leaves_alone() {
        let paths = [
            "/",
            "/a",
            "/a/b.c",
            "/a/.b",
            "/a/b.",
            "/a//b",
            "/a/./b",
            "/a/../b",
            "/..",
            "/.",
            "/a/%2e%2e/b",
            "/a/%41",
            "/a/%zz",
            "/a%2fb",
            "a/b",
            "*",
            "",
            "/a/b/",
            "//",
            "/a/..b",
            "/wp-content/uploads/2019/05/image-01234-300x200.jpg",
            "/a/%2E./b",
            "/~user/x",
        ];
        for p in paths {
            for bits in 0..16u8 {
                let flags = NormalizeFlags {
                    decode_unreserved: bits & 1 != 0,
                    merge_slashes: bits & 2 != 0,
                    not_above_root: bits & 4 != 0,
                    allow_relative: bits & 8 != 0,
                };
                let mut slow = p.as_bytes().to_vec();
                let slow_ok = normalize_segments(&mut slow, flags);
                if is_normal(p.as_bytes(), flags) {
                    assert!(slow_ok, "{p} {flags:?}");
                    assert_eq!(slow, p.as_bytes(), "{p} {flags:?}");
                }
                let mut fast = p.as_bytes().to_vec();
                assert_eq!(normalize_path(&mut fast, flags), slow_ok, "{p} {flags:?}");
                assert_eq!(fast, slow, "{p} {flags:?}");
            }
        }
    }

    /// `r->uri` for a GET of `target`, or the error's status.
    fn get(target: &str) -> Result<Vec<u8>, u16> {
        request_uri("GET", target, false)
            .map(|u| u.path)
            .map_err(|e| e.status)
    }

    fn ok(target: &str, path: &str) {
        assert_eq!(
            get(target),
            Ok(path.as_bytes().to_vec()),
            "target {target:?}"
        );
    }

    fn err(target: &str) -> UriError {
        request_uri("GET", target, false).expect_err(target)
    }

    // Every expectation below was observed with Apache 2.4.71 (the path
    // through the access log's %U, the status on the wire, the message in
    // the error log at LogLevel debug).

    #[test]
    fn dot_segments() {
        ok("/sub/./a.txt", "/sub/a.txt");
        ok("/sub/../sub/a.txt", "/sub/a.txt");
        ok("/x/./../sub/./a.txt", "/sub/a.txt");
        ok("/sub/.", "/sub/");
        ok("/sub/..", "/");
        ok("/.", "/");
        ok("/sub/a.txt/.", "/sub/a.txt/");
        ok("/sub/a.txt/..", "/sub/");
        ok("/x/..//sub/a.txt", "/sub/a.txt");
        ok("/x//../sub/a.txt", "/sub/a.txt");
    }

    #[test]
    fn dot_dot_above_root_is_400() {
        for t in [
            "/..",
            "/../sub/a.txt",
            "/sub/../../x",
            "/./..",
            "/%2e%2e/x",
            "/%2e./x",
            "/.%2e/x",
        ] {
            let e = err(t);
            assert_eq!((e.status, e.kind), (400, UriErrorKind::InvalidPath), "{t}");
            assert_eq!(e.level, Some("error"));
            assert_eq!(e.message, format!("AH10244: invalid URI path ({t})"));
        }
        assert_eq!(get("/x/%2E%2E/%2e%2E/"), Err(400));
    }

    #[test]
    fn encoded_dots_are_segments() {
        ok("/sub/%2e%2e/x/f.txt", "/x/f.txt");
        ok("/sub/.%2E/x/f.txt", "/x/f.txt");
        ok("/sub/%2e%2e", "/");
        ok("/sub/.%2e", "/");
        ok("/%2e", "/");
        ok("/sub/%2e", "/sub/");
        ok("/sub/a%2etxt", "/sub/a.txt");
        // %25 is not unreserved: decoded once, after the segments are done.
        ok("/%252e%252e/x", "/%2e%2e/x");
        ok("/sub/%2561.txt", "/sub/%61.txt");
    }

    #[test]
    fn unreserved_and_other_escapes() {
        ok("/%41", "/A");
        ok("/%7e", "/~");
        ok("/s%75b", "/sub");
        ok("/sub/%61.txt", "/sub/a.txt");
        ok("/a%20b.txt", "/a b.txt");
        ok("/h%23d", "/h#d");
        ok("/q%3fd", "/q?d");
        ok("/pct%25dir", "/pct%dir");
        ok("/a/..%5cb", "/a/..\\b");
        assert_eq!(get("/%c3%bc"), Ok(vec![b'/', 0xc3, 0xbc]));
        ok("/\u{fc}", "/\u{fc}");
        ok("/sub/a.txt;x", "/sub/a.txt;x");
    }

    #[test]
    fn merge_slashes() {
        ok("//sub//a.txt", "/sub/a.txt");
        ok("///sub/a.txt", "/sub/a.txt");
        ok("//", "/");
        // "//h/sub" is a path, not an authority.
        ok("//h/sub", "/h/sub");
        let p = parse_target("GET", "/a//b", &ParseOptions::default()).unwrap();
        let off = NormalizeOptions {
            merge_slashes: false,
            ..Default::default()
        };
        assert_eq!(normalize(&p, &off).unwrap().path, b"/a//b");
    }

    #[test]
    fn encoded_slash_and_nul_are_404() {
        for t in [
            "/sub%2fa.txt",
            "/sub%2Fa.txt",
            "/a/..%2fb",
            "/sub/%2e%2e%2fx",
            "/%2F",
        ] {
            let e = err(t);
            assert_eq!(
                (e.status, e.kind),
                (404, UriErrorKind::EncodedSlashOrNul),
                "{t}"
            );
            assert_eq!(e.level, Some("info"));
            assert_eq!(
                e.message,
                format!("AH00026: found %2f (encoded '/') in URI path ({t}), returning 404")
            );
        }
        // NUL gets the same answer and the same (misleading) message.
        for t in ["/sub/a.txt%00", "/sub/a%00.txt", "/..%00"] {
            let e = err(t);
            assert_eq!(e.status, 404, "{t}");
            assert!(e.message.starts_with("AH00026: found %2f"));
        }
        // A "%00" segment removed by a following ".." is gone before decoding.
        ok("/%00/..", "/");
        assert_eq!(get("/x/..%2F..%2Fetc"), Err(404));
    }

    #[test]
    fn allow_encoded_slashes() {
        let p = parse_target("GET", "/a%2fb/..%2Fc%00", &ParseOptions::default()).unwrap();
        let on = NormalizeOptions {
            encoded_slashes: EncodedSlashes::On,
            ..Default::default()
        };
        let e = normalize(&p, &on).unwrap_err();
        assert_eq!((e.status, e.level), (404, None));
        let p = parse_target("GET", "/a%2fb/..%2Fc", &ParseOptions::default()).unwrap();
        assert_eq!(normalize(&p, &on).unwrap().path, b"/a/c");
        let keep = NormalizeOptions {
            encoded_slashes: EncodedSlashes::NoDecode,
            ..Default::default()
        };
        assert_eq!(normalize(&p, &keep).unwrap().path, b"/a%2fb/..%2Fc");
    }

    #[test]
    fn bad_escapes_are_400() {
        for t in [
            "/sub/a.%zz",
            "/sub/a.%4",
            "/sub/a.txt%",
            "/%",
            "/%%",
            "/sub/a.txt%2",
        ] {
            let e = err(t);
            assert_eq!((e.status, e.kind), (400, UriErrorKind::InvalidPath), "{t}");
            assert_eq!(e.message, format!("AH10244: invalid URI path ({t})"));
        }
        // The query is not looked at.
        let u = request_uri("GET", "/sub/a.txt?x=%zz", false).unwrap();
        assert_eq!(
            (u.path.as_slice(), u.query()),
            (&b"/sub/a.txt"[..], Some("x=%zz"))
        );
    }

    #[test]
    fn query() {
        let q = |t: &str| request_uri("GET", t, false).unwrap().target.query;
        assert_eq!(q("/sub?x=1"), Some("x=1".into()));
        assert_eq!(q("/sub/a.txt?"), Some(String::new()));
        assert_eq!(q("/sub/a.txt"), None);
        assert_eq!(q("/sp%20ace?a=b%20c"), Some("a=b%20c".into()));
    }

    #[test]
    fn fragment_and_userinfo_are_400_in_the_request_line() {
        for t in ["/sub/a.txt#frag", "/sub/a.txt?q#frag", "http://h#f"] {
            let e = err(t);
            assert_eq!(
                (e.status, e.kind, e.in_request_line),
                (400, UriErrorKind::Fragment, true)
            );
            assert_eq!(
                e.message,
                "AH02421: HTTP Request Line; URI must not contain a fragment"
            );
            assert_eq!(e.level, Some("debug"));
        }
        for t in ["http://u:p@other/sub/a.txt", "http://u@h/"] {
            let e = err(t);
            assert_eq!((e.status, e.kind), (400, UriErrorKind::UserInfo), "{t}");
        }
        // HttpProtocolOptions Unsafe lets both through.
        let lax = ParseOptions {
            strict: false,
            secure: false,
        };
        let p = parse_target("GET", "http://u:p@h/x?q#f", &lax).unwrap();
        assert_eq!(p.fragment.as_deref(), Some("f"));
        assert_eq!(p.authority.unwrap().password.as_deref(), Some("p"));
    }

    #[test]
    fn targets_that_are_not_paths() {
        let e = err("sub/a.txt");
        assert_eq!((e.status, e.kind), (400, UriErrorKind::Unparsable));
        assert_eq!(
            e.message,
            "AH03450: HTTP Request Line; Unable to parse URI: 'sub/a.txt'"
        );
        assert_eq!(
            err("*").message,
            "AH03450: HTTP Request Line; Unable to parse URI: '*'"
        );
        // Authority form outside CONNECT: scheme "localhost", path "18082".
        assert_eq!(
            err("localhost:18082").message,
            "AH03450: HTTP Request Line; Unable to parse URI: '18082'"
        );
        assert_eq!(
            err("http:sub").message,
            "AH03450: HTTP Request Line; Unable to parse URI: 'sub'"
        );
        // APR refuses the port; the message is cut at the first ':'.
        assert_eq!(
            err("http://h:abc/").message,
            "AH03450: HTTP Request Line; Unable to parse URI: 'http'"
        );
        assert_eq!(
            err("http://[::1/").message,
            "AH03450: HTTP Request Line; Unable to parse URI: 'http'"
        );
        let e = err("/sub\x7f");
        assert_eq!((e.status, e.kind), (400, UriErrorKind::BadCharacter));
        assert_eq!(
            e.message,
            "AH03454: HTTP Request Line; URI incorrectly encoded: '/sub\x7f'"
        );
        assert_eq!(err("").kind, UriErrorKind::Missing);
    }

    #[test]
    fn schemes() {
        // Not http(s): 400 after the headers, nothing logged.
        let e = err("ftp://h/sub");
        assert_eq!(
            (e.status, e.kind, e.level, e.in_request_line),
            (400, UriErrorKind::Scheme, None, false)
        );
        // https on a plain connection: accepted, but Host is not overridden.
        let u = request_uri("GET", "https://h/sub", false).unwrap();
        assert_eq!(
            (u.path.as_slice(), u.target.host_override),
            (&b"/sub"[..], None)
        );
        let u = request_uri("GET", "https://h/sub", true).unwrap();
        assert_eq!(u.target.host_override.unwrap().host, "h");
        // A scheme and a path without authority.
        let u = request_uri("GET", "http:/sub", false).unwrap();
        assert_eq!(
            (u.path.as_slice(), u.target.host_override),
            (&b"/sub"[..], None)
        );
    }

    #[test]
    fn absolute_form() {
        let u = request_uri("GET", "http://other.example:8080/sub/a.txt?x", false).unwrap();
        assert_eq!(u.path, b"/sub/a.txt");
        assert_eq!(u.query(), Some("x"));
        let h = u.target.host_override.unwrap();
        assert_eq!(
            (h.host.as_str(), h.port_str.as_deref(), h.port),
            ("other.example", Some("8080"), 8080)
        );
        // Scheme without case; the host is lowercased later, by the vhost lookup.
        let h = request_uri("GET", "HTTP://EXAMPLE.Com./sub", false)
            .unwrap()
            .target
            .host_override;
        assert_eq!(h.unwrap().host, "EXAMPLE.Com.");
        // No path: "/" (index.html was served).
        let u = request_uri("GET", "http://other.example", false).unwrap();
        assert_eq!((u.path.as_slice(), u.target.path), (&b"/"[..], None));
        let u = request_uri("GET", "http://h?x", false).unwrap();
        assert_eq!((u.path.as_slice(), u.query()), (&b"/"[..], Some("x")));
        // Empty host (Location came back as "http:///sub/").
        let h = request_uri("GET", "http:///sub", false)
            .unwrap()
            .target
            .host_override
            .unwrap();
        assert_eq!((h.host.as_str(), h.port_str), ("", None));
        // Empty port: Host becomes "h:", the port the scheme's default.
        let h = request_uri("GET", "http://h:/sub", false)
            .unwrap()
            .target
            .host_override
            .unwrap();
        assert_eq!((h.port_str.as_deref(), h.port), (Some(""), 80));
        // strtol and a 16-bit port: Location showed h:34463, h and h.
        let port = |t: &str| {
            request_uri("GET", t, false)
                .unwrap()
                .target
                .host_override
                .unwrap()
                .port
        };
        assert_eq!(port("http://h:99999/sub"), 34463);
        assert_eq!(port("http://h:+80/sub"), 80);
        assert_eq!(port("http://h:0080/sub"), 80);
        let h = request_uri("GET", "http://[::1]:80/sub", false)
            .unwrap()
            .target
            .host_override
            .unwrap();
        assert_eq!((h.host.as_str(), h.ipv6_literal, h.port), ("::1", true, 80));
        // The absolute path is normalised like any other.
        assert_eq!(
            request_uri("GET", "http://h/a/../b", false).unwrap().path,
            b"/b"
        );
    }

    #[test]
    fn options_and_connect() {
        let u = request_uri("OPTIONS", "*", false).unwrap();
        assert_eq!(
            (u.path.as_slice(), u.encoded_path.as_str()),
            (&b"*"[..], "*")
        );
        assert_eq!(
            request_uri("OPTIONS", "http://h", false).unwrap().path,
            b"*"
        );
        assert_eq!(
            request_uri("OPTIONS", "http://h?x", false).unwrap().query(),
            Some("x")
        );
        // CONNECT takes host:port (answered 405 without mod_proxy).
        let u = request_uri("CONNECT", "localhost:443", false).unwrap();
        let h = u.target.host_override.unwrap();
        assert_eq!(
            (h.host.as_str(), h.port, u.path.as_slice()),
            ("localhost", 443, &b"/"[..])
        );
        let e = request_uri("CONNECT", "/sub", false).unwrap_err();
        assert_eq!(
            e.message,
            "AH03450: HTTP Request Line; Unable to parse URI: '/sub'"
        );
        // Method names are case-sensitive.
        assert_eq!(request_uri("options", "*", false).unwrap_err().status, 400);
    }

    #[test]
    fn encoded_path_keeps_reserved_escapes() {
        let u = request_uri("GET", "/x/../a%20b/%7e/%2e", false).unwrap();
        assert_eq!(u.encoded_path, "/a%20b/~/");
        assert_eq!(u.path, b"/a b/~/");
    }

    #[test]
    fn unescape_helpers() {
        assert_eq!(unescape(b"/a%20b").unwrap().as_ref(), b"/a b");
        assert!(matches!(unescape(b"plain"), Ok(Cow::Borrowed(_))));
        assert_eq!(unescape(b"a%2fb"), Err(UnescapeError::Forbidden));
        assert_eq!(unescape(b"a%00"), Err(UnescapeError::Forbidden));
        assert_eq!(unescape(b"a%2fb%zz"), Err(UnescapeError::BadEscape));
        assert_eq!(unescape_all(b"a%2Fb").unwrap().as_ref(), b"a/b");
        assert_eq!(unescape_urlencoded(b"a+b%2B").unwrap(), b"a b+");
        let keep = UnescapeMode {
            reserved: b"?",
            ..Default::default()
        };
        assert_eq!(unescape_with(b"%3F%41", &keep).unwrap().as_ref(), b"%3FA");
        // What a refused decoding still leaves in place.
        assert_eq!(
            unescape_keep2f_lossy(b"/a%20b%2Fc%zz%2f"),
            b"/a b%2Fc%zz%2f"
        );
        assert_eq!(unescape_keep2f_lossy(b"plain"), b"plain");
    }

    #[test]
    fn escape_helpers() {
        // The Locations of mod_dir's trailing-slash redirect.
        assert_eq!(escape_path(b"/sp ace"), "/sp%20ace");
        assert_eq!(escape_path(b"/h#d"), "/h%23d");
        assert_eq!(escape_path(b"/q?d"), "/q%3fd");
        assert_eq!(escape_path(b"/pct%dir"), "/pct%25dir");
        assert_eq!(escape_path("/\u{fc}".as_bytes()), "/%c3%bc");
        assert_eq!(escape_path(b"/$-_.+!*'(),:;@&=~"), "/$-_.+!*'(),:;@&=~");
        assert_eq!(escape_os_path(b"a:b/c"), "./a:b/c");
        assert_eq!(escape_os_path(b"/a:b"), "/a:b");
        assert_eq!(escape_path_segment(b"a/b;c d"), "a%2fb%3bc%20d");
        assert_eq!(escape_urlencoded(b"a b&c=d/~"), "a+b%26c%3dd%2f%7e");
        assert_eq!(
            escape_html(b"<a href=\"x\">&</a>").as_ref(),
            b"&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;"
        );
        assert_eq!(escape_html_str("plain \u{fc}"), "plain \u{fc}");
        assert_eq!(escape_html_ascii("<\u{fc}".as_bytes()), "&lt;&#195;&#188;");
    }

    #[test]
    fn normalize_path_flags() {
        let run = |p: &str, f: NormalizeFlags| {
            let mut b = p.as_bytes().to_vec();
            let ok = normalize_path(&mut b, f);
            (ok, String::from_utf8(b).unwrap())
        };
        let rel = NormalizeFlags {
            allow_relative: true,
            ..Default::default()
        };
        assert_eq!(run("a/./b/../c", rel), (true, "a/c".into()));
        assert_eq!(run("../a", rel), (true, "a".into()));
        let strict_rel = NormalizeFlags {
            not_above_root: true,
            ..rel
        };
        assert!(!run("../a", strict_rel).0);
        assert!(!run("a", NormalizeFlags::default()).0);
        assert!(!run("", rel).0);
        // Without decoding, "%2e" is an ordinary segment.
        assert_eq!(
            run("/a/%2e%2e/b", NormalizeFlags::default()),
            (true, "/a/%2e%2e/b".into())
        );
        assert_eq!(
            run("/a/.%2e/b", NormalizeFlags::default()),
            (true, "/a/.%2e/b".into())
        );
    }

    #[test]
    fn huge_inputs_stay_linear() {
        let n = 1_000_000;
        let mut t = String::with_capacity(n * 4);
        for _ in 0..n {
            t.push_str("/a/.");
        }
        t.push_str("/..");
        assert_eq!(get(&t).unwrap().len(), 2 * n - 2 + 1);
        let deep = "/a".repeat(n) + &"/..".repeat(n) + "/x";
        ok(&deep, "/x");
        let slashes = "/".repeat(n) + "x";
        ok(&slashes, "/x");
        let escapes = "/%41".repeat(n);
        assert_eq!(get(&escapes).unwrap().len(), 2 * n);
        assert_eq!(get(&("/..".repeat(n))), Err(400));
    }
}
