//! Apache's built-in error documents (`ap_send_error_response` and
//! `get_canned_error_string` in `http_protocol.c`).
//!
//! Every error or redirect htaccel answers without an `ErrorDocument` must
//! look exactly like Apache's page: monitoring, tests and users compare
//! bodies. The page is
//!
//! ```text
//! <!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN" "http://www.w3.org/TR/html4/strict.dtd">
//! <html><head>
//! <title>404 Not Found</title>
//! </head><body>
//! <h1>Not Found</h1>
//! <p>The requested URL was not found on this server.</p>
//! [<p>Additionally, a 404 Not Found
//! error was encountered while trying to use an ErrorDocument to handle the request.</p>]
//! [<hr>
//! <address>Apache Server at host Port 80</address>]
//! </body></html>
//! ```
//!
//! with the status-specific paragraph(s) in between, sent as
//! `text/html; charset=iso-8859-1`. Apache 2.4 no longer prints the requested
//! URL in any page; it prints the method (405, 411, 413, 501), the escaped
//! `Location` (3xx), the `Expect` header (417), the server admin (500), and
//! the `error-notes` request note raw for 400, 403, 411, 414, 417, 451, 501,
//! 502. A status Apache does not know (418, 299 …) gets the 500 page.
//!
//! Headers: all headers of the failed response are dropped (Apache keeps only
//! those set with `Header always` / err_headers_out, which the caller adds),
//! `Location` is kept for 3xx and 201, `Allow` is added to 405 and 501,
//! `Content-Type` is set, and the connection is closed after 400, 408, 411,
//! 413, 414, 500, 501, 503. A HEAD request gets the headers and no body, and
//! Apache sends no `Content-Length` then. 204 and 304 get no body and no
//! `Content-Type`.

use super::status;
use super::{Body, Response};
use crate::uri::escape_html_str as escape_html;

/// `ServerSignature`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ServerSignature {
    #[default]
    Off,
    On,
    EMail,
}

/// Apache's `ServerAdmin` default, printed in the 500 page.
pub const DEFAULT_ADMIN: &str = "[no address given]";

/// The `<address>` line (`ap_psignature` without its prefix) for
/// `ServerSignature`, or `None` when it is `Off`. `banner` is the product
/// token as `ServerTokens` makes it ("Apache"), `server_name` and `port` as
/// `UseCanonicalName` decides them (by default the `Host` header's name and
/// port, the local port when the header has none).
pub fn signature_line(
    mode: ServerSignature,
    banner: &str,
    server_name: &str,
    port: u16,
    server_admin: &str,
) -> Option<String> {
    match mode {
        ServerSignature::Off => None,
        ServerSignature::On => Some(format!(
            "<address>{banner} Server at {} Port {port}</address>\n",
            escape_html(server_name)
        )),
        ServerSignature::EMail => Some(format!(
            "<address>{banner} Server at <a href=\"{}{}\">{}</a> Port {port}</address>\n",
            if is_url(server_admin) { "" } else { "mailto:" },
            escape_html(server_admin),
            escape_html(server_name)
        )),
    }
}

/// `ap_is_url`: a non-empty run of letters, digits, `+`, `-`, `.` before a `:`.
fn is_url(s: &str) -> bool {
    match s.find(':') {
        Some(0) | None => false,
        Some(i) => s[..i]
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.')),
    }
}

/// Everything besides the status that Apache prints into, or derives headers
/// for, an error page.
#[derive(Clone, Copy, Debug, Default)]
pub struct ErrorContext<'a> {
    /// The request method as sent (printed for 405, 411, 413, 501).
    pub method: &'a str,
    /// `Location` of a 3xx (printed and sent) or 201 (sent).
    pub location: Option<&'a str>,
    /// The `error-notes` request note, inserted raw (400, 403, 411, 414,
    /// 417, 451, 501, 502; and 500 with `verbose_errors`). For an unreadable
    /// `.htaccess` Apache's 403 note is
    /// "Server unable to read htaccess file, denying access to be safe".
    pub note: Option<&'a str>,
    /// The `variant-list` note of content negotiation (300, 406), raw.
    pub variant_list: Option<&'a str>,
    /// The `verbose-error-to` note is `*`: a 500 shows `note` instead
    /// of the standard text.
    pub verbose_errors: bool,
    /// The request's `Expect` header (417).
    pub expect: Option<&'a str>,
    /// `ServerAdmin`; `None` prints [`DEFAULT_ADMIN`].
    pub server_admin: Option<&'a str>,
    /// The `<address>` line from [`signature_line`]; `None` for
    /// `ServerSignature Off`.
    pub signature: Option<&'a str>,
    /// The status of a failed `ErrorDocument` target (the "Additionally, a …
    /// error was encountered" paragraph).
    pub additional_error: Option<u16>,
    /// A status line a handler set (CGI `Status: 404 Gone`): used for the
    /// title when it starts with the right code.
    pub status_line: Option<&'a str>,
    /// The request was HEAD: headers only.
    pub head: bool,
    /// The `Allow` value for 405 and 501 (the methods the handler accepts;
    /// `TRACE` alone when none, with `TraceEnable` on).
    pub allow: Option<&'a str>,
    /// The `suppress-error-charset` environment variable is set:
    /// `Content-Type: text/html` without charset.
    pub suppress_charset: bool,
}

const HEAD: &str = "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\" \"http://www.w3.org/TR/html4/strict.dtd\">\n<html><head>\n<title>";

fn with_notes(prefix: &str, notes: Option<&str>, suffix: &str) -> String {
    format!("{prefix}{}{suffix}", notes.unwrap_or(""))
}

/// The status-specific paragraphs (`get_canned_error_string`).
fn canned(status: u16, ctx: &ErrorContext<'_>) -> String {
    let method = escape_html(ctx.method);
    let notes = ctx.note;
    let location = escape_html(ctx.location.unwrap_or(""));
    match status {
        301 | 302 | 307 | 308 => format!("<p>The document has moved <a href=\"{location}\">here</a>.</p>\n"),
        303 => format!("<p>The answer to your request is located <a href=\"{location}\">here</a>.</p>\n"),
        305 => "<p>This resource is only accessible through the proxy\n<br />\nYou will need to configure your client to use that proxy.</p>\n".into(),
        401 | 407 => "<p>This server could not verify that you\nare authorized to access the document\nrequested.  Either you supplied the wrong\ncredentials (e.g., bad password), or your\nbrowser doesn't understand how to supply\nthe credentials required.</p>\n".into(),
        400 => with_notes("<p>Your browser sent a request that this server could not understand.<br />\n", notes, "</p>\n"),
        403 => with_notes("<p>You don't have permission to access this resource.", notes, "</p>\n"),
        404 => "<p>The requested URL was not found on this server.</p>\n".into(),
        405 => format!("<p>The requested method {method} is not allowed for this URL.</p>\n"),
        406 => with_notes(
            "<p>An appropriate representation of the requested resource could not be found on this server.</p>\n",
            ctx.variant_list,
            "",
        ),
        300 => with_notes("", ctx.variant_list, ""),
        411 => with_notes(
            &format!("<p>A request of the requested method {method} requires a valid Content-length.<br />\n"),
            notes,
            "</p>\n",
        ),
        412 => "<p>The precondition on the request for this URL evaluated to false.</p>\n".into(),
        501 => with_notes(&format!("<p>{method} not supported for current URL.<br />\n"), notes, "</p>\n"),
        502 => with_notes(
            "<p>The proxy server received an invalid\r\nresponse from an upstream server.<br />\r\n",
            notes,
            "</p>\n",
        ),
        506 => "<p>A variant for the requested resource\n<pre>\n\n</pre>\nis itself a negotiable resource. This indicates a configuration error.</p>\n".into(),
        408 => "<p>Server timeout waiting for the HTTP request from the client.</p>\n".into(),
        410 => "<p>The requested resource is no longer available on this server and there is no forwarding address.\nPlease remove all references to this resource.</p>\n".into(),
        413 => format!("The requested resource does not allow request data with {method} requests, or the amount of data provided in\nthe request exceeds the capacity limit.\n"),
        414 => with_notes("<p>The requested URL's length exceeds the capacity\nlimit for this server.<br />\n", notes, "</p>\n"),
        415 => "<p>The supplied request data is not in a format\nacceptable for processing by this resource.</p>\n".into(),
        416 => "<p>None of the range-specifier values in the Range\nrequest-header field overlap the current extent\nof the selected resource.</p>\n".into(),
        417 => {
            let first = match ctx.expect {
                Some(e) => format!(
                    "<p>The expectation given in the Expect request-header\nfield could not be met by this server.\nThe client sent<pre>\n    Expect: {}\n</pre>\n",
                    escape_html(e)
                ),
                None => "<p>No expectation was seen, the Expect request-header \nfield was not presented by the client.\n".into(),
            };
            with_notes(&first, notes, "</p><p>Only the 100-continue expectation is supported.</p>\n")
        }
        422 => "<p>The server understands the media type of the\nrequest entity, but was unable to process the\ncontained instructions.</p>\n".into(),
        423 => "<p>The requested resource is currently locked.\nThe lock must be released or proper identification\ngiven before the method can be applied.</p>\n".into(),
        424 => "<p>The method could not be performed on the resource\nbecause the requested action depended on another\naction and that other action failed.</p>\n".into(),
        426 => "<p>The requested resource can only be retrieved\nusing SSL.  The server is willing to upgrade the current\nconnection to SSL, but your client doesn't support it.\nEither upgrade your client, or try requesting the page\nusing https://\n".into(),
        428 => "<p>The request is required to be conditional.</p>\n".into(),
        429 => "<p>The user has sent too many requests\nin a given amount of time.</p>\n".into(),
        431 => "<p>The server refused this request because\nthe request header fields are too large.</p>\n".into(),
        507 => "<p>The method could not be performed on the resource\nbecause the server is unable to store the\nrepresentation needed to successfully complete the\nrequest.  There is insufficient free space left in\nyour storage allocation.</p>\n".into(),
        503 => "<p>The server is temporarily unable to service your\nrequest due to maintenance downtime or capacity\nproblems. Please try again later.</p>\n".into(),
        504 => "<p>The gateway did not receive a timely response\nfrom the upstream server or application.</p>\n".into(),
        508 => "<p>The server terminated an operation because\nit encountered an infinite loop.</p>\n".into(),
        510 => "<p>A mandatory extension policy in the request is not\naccepted by the server for this resource.</p>\n".into(),
        511 => "<p>The client needs to authenticate to gain\nnetwork access.</p>\n".into(),
        421 => "<p>The client needs a new connection for this\nrequest as the requested host name does not match\nthe Server Name Indication (SNI) in use for this\nconnection.</p>\n".into(),
        451 => with_notes("<p>Access to this URL has been denied for legal reasons.<br />\n", notes, "</p>\n"),
        _ => match notes {
            Some(n) if ctx.verbose_errors => format!("{n}<p />\n"),
            _ => format!(
                "<p>The server encountered an internal error or\nmisconfiguration and was unable to complete\nyour request.</p>\n<p>Please contact the server administrator at \n {} to inform them of the time this error occurred,\n and the actions you performed just before this error.</p>\n<p>More information about this error may be available\nin the server error log.</p>\n",
                escape_html(ctx.server_admin.unwrap_or(DEFAULT_ADMIN))
            ),
        },
    }
}

/// The page title: the table's status line, or a handler's own when it
/// starts with the status' three digits (a bare code gets "Unknown Reason").
fn title(status: u16, custom: Option<&str>) -> String {
    if let Some(line) = custom {
        let b = line.as_bytes();
        let ok = b.len() >= 3
            && b[..3].iter().all(u8::is_ascii_digit)
            && line[..3].parse::<u16>().ok() == Some(status)
            && (b.len() < 4 || b[3].is_ascii_whitespace() || b[3] == 0x0b)
            && (b.len() < 5 || b[4].is_ascii_alphanumeric());
        if ok {
            return match b.len() {
                3 => format!("{line} Unknown Reason"),
                4 => format!("{line}Unknown Reason"),
                _ => line.to_string(),
            };
        }
    }
    status::code_and_reason(status).to_string()
}

/// The HTML of Apache's built-in page for `status` (empty for 204 and 304,
/// which have no body).
pub fn error_body(status: u16, ctx: &ErrorContext<'_>) -> String {
    if status::is_header_only(status) {
        return String::new();
    }
    let title = title(status, ctx.status_line);
    let h1 = title.get(4..).unwrap_or("");
    let mut out = String::with_capacity(600);
    out.push_str(HEAD);
    out.push_str(&title);
    out.push_str("</title>\n</head><body>\n<h1>");
    out.push_str(h1);
    out.push_str("</h1>\n");
    out.push_str(&canned(status, ctx));
    if let Some(rec) = ctx.additional_error {
        out.push_str("<p>Additionally, a ");
        out.push_str(status::code_and_reason(rec));
        out.push_str("\nerror was encountered while trying to use an ErrorDocument to handle the request.</p>\n");
    }
    if let Some(sig) = ctx.signature {
        out.push_str("<hr>\n");
        out.push_str(sig);
    }
    out.push_str("</body></html>\n");
    out
}

/// The `Content-Type` of Apache's generated error responses.
pub fn error_content_type(suppress_charset: bool) -> &'static str {
    if suppress_charset {
        "text/html"
    } else {
        "text/html; charset=iso-8859-1"
    }
}

/// Headers common to the built-in page and to `ErrorDocument` text.
fn base_response(status: u16, ctx: &ErrorContext<'_>) -> Response {
    let mut resp = Response::new(status);
    resp.close = status::drops_connection(status);
    if status::is_redirect(status) || status == 201 {
        if let Some(loc) = ctx.location.filter(|l| !l.is_empty()) {
            resp.add_header("Location", loc);
        }
    }
    if status::is_header_only(status) {
        return resp;
    }
    if status == 405 || status == 501 {
        if let Some(allow) = ctx.allow {
            resp.add_header("Allow", allow);
        }
    }
    resp.add_header("Content-Type", error_content_type(ctx.suppress_charset));
    resp
}

/// The complete built-in error response for `status`: headers as Apache
/// sends them (server-added `Date`, `Server`, framing and `Connection`
/// aside; `close` is set where Apache closes) and, unless HEAD, the page.
pub fn error_response(status: u16, ctx: &ErrorContext<'_>) -> Response {
    let mut resp = base_response(status, ctx);
    if !ctx.head && !status::is_header_only(status) {
        resp.body = Body::bytes(error_body(status, ctx));
    }
    resp
}

/// The response for `ErrorDocument <status> "text"`: the text as the whole
/// body (nothing added), with the same headers as the built-in page.
pub fn custom_text_response(status: u16, text: &str, ctx: &ErrorContext<'_>) -> Response {
    let mut resp = base_response(status, ctx);
    if !ctx.head && !status::is_header_only(status) {
        resp.body = Body::bytes(text.to_string());
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pages observed with Apache 2.4.71, see the header of the file.
    fn observed() -> Vec<(u16, String)> {
        let text = include_str!("testdata/error_pages.txt");
        let mut out: Vec<(u16, String)> = Vec::new();
        for line in text.split_inclusive('\n') {
            if let Some(code) = line.strip_prefix("=== ") {
                out.push((code.trim().parse().unwrap(), String::new()));
            } else if let Some(last) = out.last_mut() {
                last.1.push_str(line);
            }
        }
        out
    }

    #[test]
    fn every_observed_page() {
        let pages = observed();
        assert_eq!(pages.len(), 55);
        let ctx = ErrorContext {
            method: "GET",
            location: Some("http://example.com/t?a=1&b=<x>"),
            ..Default::default()
        };
        for (code, body) in pages {
            assert_eq!(error_body(code, &ctx), body, "status {code}");
        }
    }

    #[test]
    fn observed_variants() {
        // Observed with Apache 2.4.71:
        // PUT /a.html → 405 naming PUT; FOO /a.html → 501 naming FOO.
        let put = ErrorContext {
            method: "PUT",
            ..Default::default()
        };
        assert!(error_body(405, &put)
            .contains("<p>The requested method PUT is not allowed for this URL.</p>\n"));
        let foo = ErrorContext {
            method: "FOO",
            ..Default::default()
        };
        assert!(error_body(501, &foo).contains(
            "<h1>Not Implemented</h1>\n<p>FOO not supported for current URL.<br />\n</p>\n"
        ));
        // Unreadable .htaccess: the note is appended without a space.
        let ht = ErrorContext {
            note: Some("Server unable to read htaccess file, denying access to be safe"),
            ..Default::default()
        };
        assert_eq!(
            error_body(403, &ht),
            "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\" \"http://www.w3.org/TR/html4/strict.dtd\">\n\
             <html><head>\n<title>403 Forbidden</title>\n</head><body>\n<h1>Forbidden</h1>\n\
             <p>You don't have permission to access this resource.Server unable to read htaccess file, denying access to be safe</p>\n\
             </body></html>\n"
        );
        // A header field over LimitRequestFieldSize.
        let big = ErrorContext {
            note: Some("Size of a request header field exceeds server limit."),
            ..Default::default()
        };
        assert!(error_body(400, &big).contains(
            "<p>Your browser sent a request that this server could not understand.<br />\nSize of a request header field exceeds server limit.</p>\n</body>"
        ));
    }

    #[test]
    fn observed_recursive_and_signature() {
        // Observed with Apache 2.4.71: `ErrorDocument 404 /nonexistent-errdoc.html`
        // on a missing file, with ServerSignature Off and On.
        let rec = ErrorContext {
            additional_error: Some(404),
            ..Default::default()
        };
        assert_eq!(
            error_body(404, &rec),
            "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\" \"http://www.w3.org/TR/html4/strict.dtd\">\n\
             <html><head>\n<title>404 Not Found</title>\n</head><body>\n<h1>Not Found</h1>\n\
             <p>The requested URL was not found on this server.</p>\n\
             <p>Additionally, a 404 Not Found\nerror was encountered while trying to use an ErrorDocument to handle the request.</p>\n\
             </body></html>\n"
        );
        let sig = signature_line(
            ServerSignature::On,
            "Apache",
            "127.0.0.1",
            18181,
            DEFAULT_ADMIN,
        )
        .unwrap();
        assert_eq!(
            sig,
            "<address>Apache Server at 127.0.0.1 Port 18181</address>\n"
        );
        let both = ErrorContext {
            additional_error: Some(404),
            signature: Some(&sig),
            ..Default::default()
        };
        assert!(error_body(404, &both).ends_with(
            "to handle the request.</p>\n<hr>\n<address>Apache Server at 127.0.0.1 Port 18181</address>\n</body></html>\n"
        ));
        // ServerSignature EMail with ServerAdmin "web<master>@example.com".
        assert_eq!(
            signature_line(ServerSignature::EMail, "Apache", "127.0.0.1", 18181, "web<master>@example.com").unwrap(),
            "<address>Apache Server at <a href=\"mailto:web&lt;master&gt;@example.com\">127.0.0.1</a> Port 18181</address>\n"
        );
        assert_eq!(
            signature_line(ServerSignature::EMail, "Apache", "h", 80, "http://example.com/contact").unwrap(),
            "<address>Apache Server at <a href=\"http://example.com/contact\">h</a> Port 80</address>\n"
        );
        assert_eq!(
            signature_line(ServerSignature::Off, "Apache", "h", 80, DEFAULT_ADMIN),
            None
        );
        // Host: foo.example:99 → the name and port of the Host header.
        assert_eq!(
            signature_line(
                ServerSignature::On,
                "Apache",
                "foo.example",
                99,
                DEFAULT_ADMIN
            )
            .unwrap(),
            "<address>Apache Server at foo.example Port 99</address>\n"
        );
    }

    #[test]
    fn responses() {
        // Observed with Apache 2.4.71 (headers other than Date/Server/Content-Length):
        //   301: Location (raw), Content-Type
        //   405 for PUT on a static file: Allow, Content-Type
        //   400/408/411/413/414/500/501/503: Connection: close
        //   HEAD on a missing file: 404, Content-Type, no Content-Length, no body
        let r = error_response(
            301,
            &ErrorContext {
                location: Some("http://example.com/t?a=1&b=<x>"),
                ..Default::default()
            },
        );
        assert_eq!(
            r.headers,
            [
                (
                    "Location".into(),
                    "http://example.com/t?a=1&b=<x>".to_string()
                ),
                (
                    "Content-Type".into(),
                    "text/html; charset=iso-8859-1".to_string()
                )
            ]
        );
        assert_eq!(r.body.len(), 288);
        assert!(!r.close);
        let allow = "GET,POST,OPTIONS,HEAD,TRACE";
        let r = error_response(
            405,
            &ErrorContext {
                method: "PUT",
                allow: Some(allow),
                ..Default::default()
            },
        );
        assert_eq!(r.header("Allow"), Some(allow));
        assert_eq!(r.body.len(), 260);
        let r = error_response(
            501,
            &ErrorContext {
                method: "FOO",
                allow: Some(allow),
                ..Default::default()
            },
        );
        assert_eq!(r.header("Allow"), Some(allow));
        assert_eq!(r.body.len(), 242);
        assert!(r.close);
        let r = error_response(
            404,
            &ErrorContext {
                method: "HEAD",
                head: true,
                ..Default::default()
            },
        );
        assert_eq!(
            r.header("Content-Type"),
            Some("text/html; charset=iso-8859-1")
        );
        assert!(r.body.is_empty());
        // 304/204 produced as errors: no body, no type, Location kept.
        let r = error_response(
            304,
            &ErrorContext {
                location: Some("http://x/"),
                ..Default::default()
            },
        );
        assert_eq!(r.headers, [("Location".into(), "http://x/".to_string())]);
        assert!(r.body.is_empty());
        // Location is only for redirects and 201.
        let r = error_response(
            404,
            &ErrorContext {
                location: Some("http://x/"),
                ..Default::default()
            },
        );
        assert_eq!(r.header("Location"), None);
        // Unknown status: internal status kept (the status line maps it), 500 page.
        let r = error_response(418, &ErrorContext::default());
        assert_eq!(r.status, 418);
        assert!(!r.close);
        assert!(r.body.to_vec().unwrap().starts_with(b"<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\" \"http://www.w3.org/TR/html4/strict.dtd\">\n<html><head>\n<title>500 Internal Server Error</title>"));
        let r = error_response(
            404,
            &ErrorContext {
                suppress_charset: true,
                ..Default::default()
            },
        );
        assert_eq!(r.header("Content-Type"), Some("text/html"));
        let r = custom_text_response(404, "Gone fishing", &ErrorContext::default());
        assert_eq!(r.body.to_vec().unwrap(), b"Gone fishing");
        assert_eq!(
            r.header("Content-Type"),
            Some("text/html; charset=iso-8859-1")
        );
    }

    #[test]
    fn other_texts() {
        let admin = ErrorContext {
            server_admin: Some("web<master>@example.com"),
            ..Default::default()
        };
        assert!(error_body(500, &admin)
            .contains("administrator at \n web&lt;master&gt;@example.com to inform"));
        let verbose = ErrorContext {
            note: Some("<b>detail</b>"),
            verbose_errors: true,
            ..Default::default()
        };
        assert!(error_body(500, &verbose)
            .contains("<h1>Internal Server Error</h1>\n<b>detail</b><p />\n</body>"));
        let expect = ErrorContext {
            expect: Some("x<y"),
            ..Default::default()
        };
        assert!(error_body(417, &expect)
            .contains("The client sent<pre>\n    Expect: x&lt;y\n</pre>\n</p><p>Only"));
        let see = ErrorContext {
            location: Some("/x"),
            ..Default::default()
        };
        assert!(error_body(303, &see)
            .contains("<p>The answer to your request is located <a href=\"/x\">here</a>.</p>\n"));
        let none = ErrorContext::default();
        assert!(error_body(302, &none)
            .contains("<p>The document has moved <a href=\"\">here</a>.</p>\n"));
        let custom = ErrorContext {
            status_line: Some("404 Gone fishing"),
            ..Default::default()
        };
        assert!(error_body(404, &custom)
            .contains("<title>404 Gone fishing</title>\n</head><body>\n<h1>Gone fishing</h1>"));
        let bare = ErrorContext {
            status_line: Some("404"),
            ..Default::default()
        };
        assert!(error_body(404, &bare).contains("<title>404 Unknown Reason</title>"));
        let wrong = ErrorContext {
            status_line: Some("403 Nope"),
            ..Default::default()
        };
        assert!(error_body(404, &wrong).contains("<title>404 Not Found</title>"));
        assert_eq!(error_body(204, &none), "");
    }
}
