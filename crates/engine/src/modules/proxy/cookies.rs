//! `ProxyPassReverseCookiePath` and `ProxyPassReverseCookieDomain`: an
//! upstream's `Set-Cookie` with its `path=` and `domain=` mapped back to
//! this server (`ap_proxy_cookie_reverse_map`).
//!
//! The value is cut at `;` into attributes (leading blanks skipped, empty
//! pieces dropped, as `apr_strtok` does); an attribute `path=P` whose `P`
//! starts with a configured internal path (compared exactly), or
//! `domain=D` whose `D` starts with an internal domain (compared without
//! case), has its whole value replaced by the public one. The first
//! mapping that matches is used; when an attribute appears twice, the last
//! one alone is looked at (Apache 2.4.71, observed).

use super::conf::CookieMap;

/// `value` (a `Set-Cookie` field) with its path and domain mapped.
pub fn reverse_map(paths: &[CookieMap], domains: &[CookieMap], value: &str) -> String {
    // (start, end) of the last `path=` and `domain=` values, and the
    // replacement found for each.
    let mut path: Option<(usize, usize)> = None;
    let mut domain: Option<(usize, usize)> = None;
    let mut new_path: Option<&str> = None;
    let mut new_domain: Option<&str> = None;
    let mut start = 0;
    for piece in value.split(';') {
        let piece_start = start;
        start += piece.len() + 1;
        let trimmed = piece.trim_start_matches(|c: char| c.is_ascii_whitespace());
        let at = piece_start + (piece.len() - trimmed.len());
        if starts_with_ignore_case(trimmed, "path=") {
            let v = &trimmed[5..];
            path = Some((at + 5, at + 5 + v.len()));
            new_path = paths
                .iter()
                .find(|m| v.starts_with(m.internal.as_str()))
                .map(|m| m.public.as_str());
        } else if starts_with_ignore_case(trimmed, "domain=") {
            let v = &trimmed[7..];
            domain = Some((at + 7, at + 7 + v.len()));
            new_domain = domains
                .iter()
                .find(|m| starts_with_ignore_case(v, &m.internal))
                .map(|m| m.public.as_str());
        }
    }
    let mut edits: Vec<((usize, usize), &str)> = Vec::new();
    if let (Some(span), Some(new)) = (path, new_path) {
        edits.push((span, new));
    }
    if let (Some(span), Some(new)) = (domain, new_domain) {
        edits.push((span, new));
    }
    if edits.is_empty() {
        return value.to_string();
    }
    edits.sort_by_key(|((s, _), _)| *s);
    let mut out = String::with_capacity(value.len() + 32);
    let mut at = 0;
    for ((s, e), new) in edits {
        out.push_str(&value[at..s]);
        out.push_str(new);
        at = e;
    }
    out.push_str(&value[at..]);
    out
}

fn starts_with_ignore_case(text: &str, prefix: &str) -> bool {
    text.len() >= prefix.len()
        && text.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(internal: &str, public: &str) -> CookieMap {
        CookieMap {
            internal: internal.into(),
            public: public.into(),
        }
    }

    #[test]
    fn path_and_domain_values_are_replaced_whole() {
        let paths = [map("/", "/app/")];
        let domains = [map("backend.internal", "example.com")];
        assert_eq!(
            reverse_map(
                &paths,
                &domains,
                "sid=1; Path=/x; Domain=BACKEND.internal; HttpOnly"
            ),
            "sid=1; Path=/app/; Domain=example.com; HttpOnly"
        );
        assert_eq!(
            reverse_map(&paths, &domains, "sid=1; domain=backend.internal;path=/"),
            "sid=1; domain=example.com;path=/app/"
        );
        // No match: unchanged; path is compared with its case.
        let upper = [map("/A", "/b")];
        assert_eq!(reverse_map(&upper, &[], "a=1; path=/a"), "a=1; path=/a");
        assert_eq!(reverse_map(&[], &domains, "a=1; path=/a"), "a=1; path=/a");
    }

    #[test]
    fn the_first_mapping_that_matches_and_the_last_attribute() {
        let paths = [map("/one", "/1"), map("/", "/root")];
        assert_eq!(reverse_map(&paths, &[], "a=1; path=/one/x"), "a=1; path=/1");
        assert_eq!(
            reverse_map(&paths, &[], "a=1; path=/two"),
            "a=1; path=/root"
        );
        // Two path attributes: the last decides.
        assert_eq!(
            reverse_map(&paths[..1], &[], "a=1; path=/one; path=/zzz"),
            "a=1; path=/one; path=/zzz"
        );
        assert_eq!(
            reverse_map(&paths[..1], &[], "a=1; path=/zzz; path=/one"),
            "a=1; path=/zzz; path=/1"
        );
    }
}
