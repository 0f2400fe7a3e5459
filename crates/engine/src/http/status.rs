//! Status codes as Apache 2.4 puts them on the wire.
//!
//! Apache knows a fixed table of statuses (`status_lines` in
//! `http_protocol.c`). A status outside that table — 418, 425, 299, 600 — is
//! *not* sent as is: the status line becomes `500 Internal Server Error` and
//! the built-in error page is the 500 page, although the request keeps the
//! original number internally (the access log shows it). Clients therefore see
//! a 500 for every unknown code, and this module is where that is decided.
//!
//! The response always says `HTTP/1.1`, whatever the request version (Apache
//! only answers `HTTP/1.0` when `force-response-1.0` is set for a 1.0 client).

use std::borrow::Cow;

macro_rules! status_table {
    ($(($code:literal, $reason:literal)),* $(,)?) => {
        /// `(code, reason phrase, full status line)` for every status Apache knows.
        const TABLE: &[(u16, &str, &str)] = &[
            $(($code, $reason, concat!("HTTP/1.1 ", stringify!($code), " ", $reason)),)*
        ];
    };
}

// Observed with Apache 2.4.71: every code 100..=599 was produced with
// `Redirect <code> /s<code>` and the status line read back; these are exactly
// the codes that came back unchanged (418 and 425 are trunk-only).
status_table![
    (100, "Continue"),
    (101, "Switching Protocols"),
    (102, "Processing"),
    (103, "Early Hints"),
    (200, "OK"),
    (201, "Created"),
    (202, "Accepted"),
    (203, "Non-Authoritative Information"),
    (204, "No Content"),
    (205, "Reset Content"),
    (206, "Partial Content"),
    (207, "Multi-Status"),
    (208, "Already Reported"),
    (226, "IM Used"),
    (300, "Multiple Choices"),
    (301, "Moved Permanently"),
    (302, "Found"),
    (303, "See Other"),
    (304, "Not Modified"),
    (305, "Use Proxy"),
    (307, "Temporary Redirect"),
    (308, "Permanent Redirect"),
    (400, "Bad Request"),
    (401, "Unauthorized"),
    (402, "Payment Required"),
    (403, "Forbidden"),
    (404, "Not Found"),
    (405, "Method Not Allowed"),
    (406, "Not Acceptable"),
    (407, "Proxy Authentication Required"),
    (408, "Request Timeout"),
    (409, "Conflict"),
    (410, "Gone"),
    (411, "Length Required"),
    (412, "Precondition Failed"),
    (413, "Request Entity Too Large"),
    (414, "Request-URI Too Long"),
    (415, "Unsupported Media Type"),
    (416, "Requested Range Not Satisfiable"),
    (417, "Expectation Failed"),
    (421, "Misdirected Request"),
    (422, "Unprocessable Entity"),
    (423, "Locked"),
    (424, "Failed Dependency"),
    (426, "Upgrade Required"),
    (428, "Precondition Required"),
    (429, "Too Many Requests"),
    (431, "Request Header Fields Too Large"),
    (451, "Unavailable For Legal Reasons"),
    (500, "Internal Server Error"),
    (501, "Not Implemented"),
    (502, "Bad Gateway"),
    (503, "Service Unavailable"),
    (504, "Gateway Timeout"),
    (505, "HTTP Version Not Supported"),
    (506, "Variant Also Negotiates"),
    (507, "Insufficient Storage"),
    (508, "Loop Detected"),
    (510, "Not Extended"),
    (511, "Network Authentication Required"),
];

const INTERNAL_ERROR: usize = {
    let mut i = 0;
    while TABLE[i].0 != 500 {
        i += 1;
    }
    i
};

fn index(status: u16) -> Option<usize> {
    TABLE.binary_search_by_key(&status, |e| e.0).ok()
}

/// Whether Apache has a reason phrase (and a status line) for `status`.
pub fn is_known(status: u16) -> bool {
    index(status).is_some()
}

/// The reason phrase for a known status, `None` for any other number.
pub fn known_reason(status: u16) -> Option<&'static str> {
    index(status).map(|i| TABLE[i].1)
}

/// The status code Apache puts on the wire for `status`: itself if known,
/// else 500.
pub fn wire_status(status: u16) -> u16 {
    if is_known(status) {
        status
    } else {
        500
    }
}

/// The reason phrase Apache sends for `status` ("Not Found"); for a status it
/// does not know, the one of 500, because that is the line it sends.
pub fn reason(status: u16) -> &'static str {
    TABLE[index(status).unwrap_or(INTERNAL_ERROR)].1
}

/// The status line without the protocol, as Apache names it internally and
/// prints it in error pages ("404 Not Found"); "500 Internal Server Error" for
/// an unknown status.
pub fn code_and_reason(status: u16) -> &'static str {
    &TABLE[index(status).unwrap_or(INTERNAL_ERROR)].2["HTTP/1.1 ".len()..]
}

/// The full status line without CRLF, e.g. "HTTP/1.1 404 Not Found".
pub fn status_line(status: u16) -> &'static str {
    TABLE[index(status).unwrap_or(INTERNAL_ERROR)].2
}

/// The status line when a handler supplied its own (a CGI or FastCGI
/// `Status: 404 Gone fishing` header becomes `r->status_line`). Apache keeps
/// the handler's text if it starts with exactly the 3 digits of `status`
/// followed by white space (even "404 " with nothing after it); a bare "404"
/// becomes the table line when the code is known and "404 " otherwise; any
/// other text (another number, no space) is dropped for the table line.
pub fn status_line_custom(status: u16, custom: &str) -> Cow<'static, str> {
    let b = custom.as_bytes();
    let three_digits = b.len() >= 3
        && b[..3].iter().all(u8::is_ascii_digit)
        && custom[..3].parse::<u16>().ok() == Some(status);
    if !three_digits || (b.len() >= 4 && !is_c_space(b[3])) {
        return Cow::Borrowed(status_line(status));
    }
    if b.len() > 3 {
        return Cow::Owned(format!("HTTP/1.1 {custom}"));
    }
    match index(status) {
        Some(i) => Cow::Borrowed(TABLE[i].2),
        None => Cow::Owned(format!("HTTP/1.1 {custom} ")),
    }
}

fn is_c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Statuses after which Apache closes the connection (`Connection: close`):
/// 400, 408, 411, 413, 414, 500, 501, 503 (`ap_status_drops_connection`).
/// Applies to the internal status, so an unknown code sent as 500 does not
/// close.
pub fn drops_connection(status: u16) -> bool {
    matches!(status, 400 | 408 | 411 | 413 | 414 | 500 | 501 | 503)
}

/// Statuses that never carry a body or content headers (204, 304).
pub fn is_header_only(status: u16) -> bool {
    status == 204 || status == 304
}

/// 3xx, as Apache tests it for adding `Location` to an error page.
pub fn is_redirect(status: u16) -> bool {
    (300..400).contains(&status)
}

/// 2xx.
pub fn is_success(status: u16) -> bool {
    (200..300).contains(&status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_and_unique() {
        assert!(TABLE.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(TABLE.len(), 60);
    }

    #[test]
    fn known_lines() {
        // Observed with Apache 2.4.71 (curl -i): the first line of responses
        // produced by `Redirect <code>`.
        assert_eq!(status_line(404), "HTTP/1.1 404 Not Found");
        assert_eq!(status_line(413), "HTTP/1.1 413 Request Entity Too Large");
        assert_eq!(status_line(414), "HTTP/1.1 414 Request-URI Too Long");
        assert_eq!(
            status_line(416),
            "HTTP/1.1 416 Requested Range Not Satisfiable"
        );
        assert_eq!(status_line(103), "HTTP/1.1 103 Early Hints");
        assert_eq!(status_line(226), "HTTP/1.1 226 IM Used");
        assert_eq!(status_line(308), "HTTP/1.1 308 Permanent Redirect");
        assert_eq!(
            status_line(451),
            "HTTP/1.1 451 Unavailable For Legal Reasons"
        );
        assert_eq!(
            status_line(511),
            "HTTP/1.1 511 Network Authentication Required"
        );
        assert_eq!(reason(302), "Found");
        assert_eq!(code_and_reason(405), "405 Method Not Allowed");
    }

    #[test]
    fn unknown_codes_are_sent_as_500() {
        // Observed with Apache 2.4.71: `Redirect 418 /s418` answers
        // "HTTP/1.1 500 Internal Server Error" with the 500 page; the same for
        // 104..199, 209..225, 306, 418..420, 425, 427, 430, 432..450, 452..499, 509, 512..599.
        for c in [
            104, 199, 209, 225, 306, 418, 419, 420, 425, 427, 430, 432, 450, 452, 499, 509, 512,
            599,
        ] {
            assert_eq!(status_line(c), "HTTP/1.1 500 Internal Server Error", "{c}");
            assert_eq!(wire_status(c), 500);
            assert!(known_reason(c).is_none());
        }
        assert_eq!(status_line(0), "HTTP/1.1 500 Internal Server Error");
        assert_eq!(status_line(1000), "HTTP/1.1 500 Internal Server Error");
    }

    #[test]
    fn custom_lines() {
        assert_eq!(
            status_line_custom(404, "404 Gone fishing"),
            "HTTP/1.1 404 Gone fishing"
        );
        assert_eq!(status_line_custom(404, "404"), "HTTP/1.1 404 Not Found");
        assert_eq!(status_line_custom(404, "404 "), "HTTP/1.1 404 ");
        assert_eq!(
            status_line_custom(404, "403 Forbidden"),
            "HTTP/1.1 404 Not Found"
        );
        assert_eq!(status_line_custom(404, "404x"), "HTTP/1.1 404 Not Found");
        assert_eq!(status_line_custom(299, "299 Odd"), "HTTP/1.1 299 Odd");
        assert_eq!(status_line_custom(299, "299"), "HTTP/1.1 299 ");
        assert_eq!(
            status_line_custom(299, "2990 x"),
            "HTTP/1.1 500 Internal Server Error"
        );
    }

    #[test]
    fn connection_dropping_statuses() {
        // Observed with Apache 2.4.71: `Connection: close` on 400, 408, 411,
        // 413, 414, 500, 501, 503 and on no other Redirect-produced status
        // (418, sent as 500, kept the connection).
        for c in 100..600 {
            assert_eq!(
                drops_connection(c),
                [400, 408, 411, 413, 414, 500, 501, 503].contains(&c)
            );
        }
    }
}
