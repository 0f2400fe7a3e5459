//! mod_http2's limits on a stream's request head, applied where mod_http2
//! applies them: to the fields as they arrive, before any HTTP/1.1 text
//! exists (`h2_stream_add_header`, `h2_req_add_header`). The HTTP/1.1
//! reading of the translated head (`crate::head`) then judges nothing of
//! the kind again: its limits are HTTP/1.1's (the request line, a field's
//! line, the count of lines) and would answer 400 or 414 where Apache over
//! HTTP/2 answers 431, or 200.
//!
//! What mod_http2 refuses, with the base server's limits:
//! - a pseudo-header (`:path`, `:authority`, …) longer than
//!   `LimitRequestLine`: 414, the `:path` left out (Apache then builds its
//!   request line from a missing path, fails to parse it, and says
//!   "Additionally, a 400 Bad Request error" on the 414 page);
//! - a field whose `name: value` (with the value it merges into, `, `
//!   between) is longer than `LimitRequestFieldSize`, or a cookie whose
//!   joined `Cookie` would be: 431;
//! - more fields than `LimitRequestFields`: 431, and past 100 more the
//!   stream is reset with ENHANCE_YOUR_CALM. A repeated name counts each
//!   time (Apache 2.4.71 answers 431 to one name sent 150 times, though
//!   the fields merge: `protocol/field-count`); a second cookie or `host`
//!   does not, as mod_http2 takes those before it counts.

use crate::Limits;

/// The limits the HTTP/1.1 reading of a stream's translated head runs
/// with: none of HTTP/1.1's own, since [`verdict`] judged the fields as
/// mod_http2 does, and the protocol bounds the whole head (the `h2`
/// crate's `max_header_list_size`, h3's `max_field_section_size`).
pub(crate) const HEAD_LIMITS: Limits = Limits {
    request_line: usize::MAX / 2,
    field_size: usize::MAX / 2,
    fields: 0,
    registered_methods: false,
    require_http10: false,
    strict: true,
};

/// [`HEAD_LIMITS`] with the server's method rule and conformance: a
/// stream's request line passes Apache's `ap_parse_request_line` too, so
/// `HttpProtocolOptions RegisteredMethods` answers an unregistered method
/// 501 there as well, and `Unsafe` reads it as leniently.
pub(crate) fn head_limits(server: &Limits) -> Limits {
    Limits {
        registered_methods: server.registered_methods,
        strict: server.strict,
        ..HEAD_LIMITS
    }
}

/// What becomes of a stream's request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Accept,
    /// Answered with this status through the error path (Apache's
    /// `ap_die`, with the address's default server); `path_refused`: the
    /// `:path` was not taken (the 414).
    Refuse {
        status: u16,
        path_refused: bool,
    },
    /// The stream is reset (ENHANCE_YOUR_CALM).
    Reset,
}

/// mod_http2's verdict on a request head.
pub(crate) fn verdict(parts: &http::request::Parts, limits: &Limits) -> Verdict {
    let path = parts.uri.path_and_query().map_or(0, |p| p.as_str().len());
    let authority = parts.uri.authority().map_or(0, |a| a.as_str().len());
    let scheme = parts.uri.scheme_str().map_or(0, str::len);
    let pseudo = [parts.method.as_str().len(), path, authority, scheme];
    if pseudo.iter().any(|&len| len > limits.request_line) {
        return Verdict::Refuse {
            status: 414,
            path_refused: path > limits.request_line,
        };
    }
    let max = limits.field_size;
    let mut refused = false;
    // The length each name's merged value has reached.
    let mut merged: Vec<(&http::HeaderName, usize)> = Vec::new();
    let mut added = 0usize;
    for (name, value) in parts.headers.iter() {
        if limits.fields > 0 && added > limits.fields {
            // Already over: counted, not taken.
            added += 1;
        } else {
            let vlen = trimmed_len(value.as_bytes());
            let nlen = name.as_str().len();
            let existing = merged.iter_mut().find(|(n, _)| *n == name);
            match existing {
                Some((_, len)) if name == http::header::COOKIE => {
                    if *len + vlen + nlen + 4 > max {
                        refused = true;
                        continue;
                    }
                    *len += 2 + vlen;
                }
                // A second `host` is dropped.
                Some(_) if name == http::header::HOST => {}
                Some((_, len)) => {
                    if *len + 2 + vlen + nlen + 2 > max {
                        refused = true;
                        continue;
                    }
                    *len += 2 + vlen;
                    added += 1;
                }
                None => {
                    if vlen + nlen + 2 > max {
                        refused = true;
                        continue;
                    }
                    merged.push((name, vlen));
                    added += 1;
                }
            }
        }
        if limits.fields > 0 && added > limits.fields {
            if added > limits.fields + 100 {
                return Verdict::Reset;
            }
            refused = true;
        }
    }
    if refused {
        Verdict::Refuse {
            status: 431,
            path_refused: false,
        }
    } else {
        Verdict::Accept
    }
}

/// A value's length without the spaces and tabs around it, as mod_http2
/// strips them before measuring (`strip_field_value_ws`).
fn trimmed_len(v: &[u8]) -> usize {
    let start = v.iter().position(|b| !matches!(b, b' ' | b'\t'));
    let end = v.iter().rposition(|b| !matches!(b, b' ' | b'\t'));
    match (start, end) {
        (Some(s), Some(e)) => e + 1 - s,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(path: &str, headers: &[(&str, String)]) -> http::request::Parts {
        let mut b = http::Request::builder()
            .method("GET")
            .uri(format!("https://localhost{path}"));
        for (n, v) in headers {
            b = b.header(*n, v.as_str());
        }
        b.body(()).unwrap().into_parts().0
    }

    fn long(n: usize) -> String {
        "a".repeat(n)
    }

    #[test]
    fn a_field_counts_its_name_and_two_bytes() {
        let l = Limits::default();
        // `x-long` (6) + 2 + value: 8190 is the most.
        assert_eq!(
            verdict(&parts("/", &[("x-long", long(8182))]), &l),
            Verdict::Accept
        );
        assert_eq!(
            verdict(&parts("/", &[("x-long", long(8183))]), &l),
            Verdict::Refuse {
                status: 431,
                path_refused: false
            }
        );
        // Repeated names merge, `, ` between.
        let twice = [("x-a", long(4000)), ("x-a", long(4000))];
        assert_eq!(verdict(&parts("/", &twice), &l), Verdict::Accept);
        let twice = [("x-a", long(4100)), ("x-a", long(4100))];
        assert_eq!(
            verdict(&parts("/", &twice), &l),
            Verdict::Refuse {
                status: 431,
                path_refused: false
            }
        );
    }

    #[test]
    fn cookies_join_and_count_together() {
        let l = Limits::default();
        let ok = [("cookie", long(3000)), ("cookie", long(3000))];
        assert_eq!(verdict(&parts("/", &ok), &l), Verdict::Accept);
        let over = [("cookie", long(5000)), ("cookie", long(5000))];
        assert_eq!(
            verdict(&parts("/", &over), &l),
            Verdict::Refuse {
                status: 431,
                path_refused: false
            }
        );
    }

    #[test]
    fn fields_are_counted_and_a_flood_is_reset() {
        let l = Limits::default();
        let names: Vec<(String, String)> =
            (0..101).map(|i| (format!("x-{i}"), "v".into())).collect();
        let fields: Vec<(&str, String)> =
            names.iter().map(|(n, v)| (n.as_str(), v.clone())).collect();
        assert_eq!(verdict(&parts("/", &fields[..100]), &l), Verdict::Accept);
        assert_eq!(
            verdict(&parts("/", &fields), &l),
            Verdict::Refuse {
                status: 431,
                path_refused: false
            }
        );
        // The same name many times counts each time.
        let same: Vec<(&str, String)> = (0..150).map(|_| ("x-same", "v".to_string())).collect();
        assert_eq!(
            verdict(&parts("/", &same), &l),
            Verdict::Refuse {
                status: 431,
                path_refused: false
            }
        );
        let names: Vec<(String, String)> =
            (0..202).map(|i| (format!("x-{i}"), "v".into())).collect();
        let fields: Vec<(&str, String)> =
            names.iter().map(|(n, v)| (n.as_str(), v.clone())).collect();
        assert_eq!(verdict(&parts("/", &fields), &l), Verdict::Reset);
    }

    #[test]
    fn a_long_path_is_a_414_and_the_request_line_is_not_measured() {
        let l = Limits::default();
        // The request line `GET <path> HTTP/2.0` would be over 8190; the path is not.
        assert_eq!(
            verdict(&parts(&format!("/{}", long(8189)), &[]), &l),
            Verdict::Accept
        );
        assert_eq!(
            verdict(&parts(&format!("/{}", long(8190)), &[]), &l),
            Verdict::Refuse {
                status: 414,
                path_refused: true
            }
        );
    }
}
