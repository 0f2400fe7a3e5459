//! Directory listings as `mod_autoindex` writes them with no `IndexOptions`
//! (plain `<ul>` list, `FancyIndexing` off), which is what the oracle
//! configuration gives: it loads the module but no `autoindex.conf`.
//!
//! Listings are compared byte for byte by the differential tests and scraped
//! by tools, so the page is reproduced exactly (observed with Apache 2.4.71):
//!
//! ```text
//! <!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN" "http://www.w3.org/TR/html4/strict.dtd">
//! <html>
//!  <head>
//!   <title>Index of /dir</title>
//!  </head>
//!  <body>
//! <h1>Index of /dir</h1>
//! <ul><li><a href="/"> Parent Directory</a></li>
//! <li><a href="a.txt"> a.txt</a></li>
//! <li><a href="sub/"> sub/</a></li>
//! </ul>
//! [<address>Apache Server at host Port 80</address>]
//! </body></html>
//! ```
//!
//! * The title is the request path HTML-escaped, trailing slashes removed.
//! * "Parent Directory" links to the parent path (absolute); the root has none.
//! * Entries are sorted by plain byte comparison of their names (directories
//!   carry a trailing `/` and are not grouped); `?O=D` reverses, `?V=1` sorts
//!   "naturally" (`apr_strnatcmp`), `?P=glob` filters names; `?C=` has no
//!   visible effect without fancy indexing.
//! * Nothing is hidden by name: dot files are listed. What is hidden is what
//!   a sub-request for the entry would not serve (`.htaccess` under the
//!   standard `<FilesMatch "^\.ht">` deny, entries denied by access rules)
//!   and anything not a regular file or directory; the caller decides that
//!   through `is_visible`.
//! * Hrefs are escaped with `ap_os_escape_path` (names whose first segment
//!   has a `:` get `./`), then HTML-escaped; the text is HTML-escaped only.
//! * `Content-Type: text/html;charset=ISO-8859-1` (no space), no
//!   `Last-Modified`, no `ETag`; HEAD gets the header only.
//!
//! Not reproduced: `?F=1`/`?F=2` switch Apache to the fancy (`<pre>`) and
//! table formats, which this plain renderer does not produce.

use crate::uri::{escape_html, escape_os_path, unescape};

/// `ap_escape_html` appended to `out`.
fn escape_html_bytes(s: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&escape_html(s));
}
use super::{Body, Response};
use std::cmp::Ordering;

/// One directory entry as the caller read it (symbolic links resolved).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntryInfo {
    /// The file name, as bytes (names need not be UTF-8).
    pub name: Vec<u8>,
    pub is_dir: bool,
}

/// What besides the entries shapes a listing.
#[derive(Clone, Copy, Debug, Default)]
pub struct ListingOptions<'a> {
    /// The request's query string (`r->args`), without `?`.
    pub query: Option<&'a str>,
    /// The `<address>` line for `ServerSignature` (see
    /// [`super::error_page::signature_line`]); `None` for `Off`.
    pub signature: Option<&'a str>,
    /// HEAD: headers only.
    pub head: bool,
    /// `IndexIgnore` covers the parent (`..`): no "Parent Directory" link.
    pub hide_parent: bool,
}

/// The `Content-Type` of a listing.
pub const LISTING_CONTENT_TYPE: &str = "text/html;charset=ISO-8859-1";

/// Sorting and filtering requested in the query string.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct QueryOptions {
    descending: bool,
    version_sort: bool,
    pattern: Option<Vec<u8>>,
}

/// The client's listing arguments (`C=`, `O=`, `F=`, `V=`, `P=`), each ended
/// by `&`, `;` or the end; parsing stops at the first item it does not know.
fn parse_query(q: &str) -> QueryOptions {
    let mut out = QueryOptions::default();
    let mut s = q.as_bytes();
    let ends_item = |s: &[u8]| matches!(s.get(3), None | Some(b'&') | Some(b';'));
    let skip = |s: &[u8]| if s.len() > 3 { 4 } else { 3 };
    while !s.is_empty() {
        let key = (s[0], s.get(1).copied(), s.get(2).copied());
        match key {
            (b'C', Some(b'='), Some(c)) if b"NMSD".contains(&c) && ends_item(s) => {
                s = &s[skip(s)..]
            }
            (b'O', Some(b'='), Some(c)) if (c == b'A' || c == b'D') && ends_item(s) => {
                out.descending = c == b'D';
                s = &s[skip(s)..];
            }
            (b'F', Some(b'='), Some(c)) if b"012".contains(&c) && ends_item(s) => s = &s[skip(s)..],
            (b'V', Some(b'='), Some(c)) if (c == b'0' || c == b'1') && ends_item(s) => {
                out.version_sort = c == b'1';
                s = &s[skip(s)..];
            }
            (b'P', Some(b'='), _) => {
                let v = &s[2..];
                let end = v
                    .iter()
                    .position(|&c| c == b'&' || c == b';')
                    .unwrap_or(v.len());
                out.pattern = if end == 0 {
                    None
                } else {
                    unescape(&v[..end]).ok().map(|c| c.into_owned())
                };
                s = if end + 1 < v.len() {
                    &v[end + 1..]
                } else {
                    &[]
                };
            }
            _ => break,
        }
    }
    out
}

/// `apr_fnmatch` with `APR_FNM_NOESCAPE | APR_FNM_PERIOD`: `*`, `?`,
/// `[…]` classes (`!` or `^` negates, ranges, a leading `]` is literal, an
/// unterminated `[` is literal); a leading `.` in the name must be matched
/// by a literal `.`.
pub fn fnmatch_period(pattern: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0usize, 0usize);
    if name.first() == Some(&b'.') {
        if pattern.first() != Some(&b'.') {
            return false;
        }
        p = 1;
        n = 1;
    }
    // Classic backtracking on the last `*`: linear per star position.
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        if p < pattern.len() {
            match pattern[p] {
                b'*' => {
                    while p < pattern.len() && pattern[p] == b'*' {
                        p += 1;
                    }
                    star = Some((p, n));
                    continue;
                }
                b'?' => {
                    p += 1;
                    n += 1;
                    continue;
                }
                b'[' => {
                    if let Some((matched, next)) = class(&pattern[p..], name[n]) {
                        if matched {
                            p += next;
                            n += 1;
                            continue;
                        }
                    } else if name[n] == b'[' {
                        p += 1;
                        n += 1;
                        continue;
                    }
                }
                c if c == name[n] => {
                    p += 1;
                    n += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, sn)) => {
                p = sp;
                n = sn + 1;
                star = Some((sp, sn + 1));
            }
            None => return false,
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

/// A bracket expression at the start of `pat` tested against `c`:
/// `Some((matched, length))`, or `None` when it is not terminated (then
/// the `[` is an ordinary character). Range ends compare as signed chars,
/// as in APR.
fn class(pat: &[u8], c: u8) -> Option<(bool, usize)> {
    let mut i = 1;
    let negate = matches!(pat.get(i), Some(b'!') | Some(b'^'));
    if negate {
        i += 1;
    }
    let mut found = false;
    let mut first = true;
    while i < pat.len() {
        if pat[i] == b']' && !first {
            return Some((found != negate, i + 1));
        }
        first = false;
        if pat.get(i + 1) == Some(&b'-') && pat.get(i + 2).is_some_and(|&e| e != b']') {
            let (lo, hi) = (pat[i] as i8, pat[i + 2] as i8);
            if (c as i8) >= lo && (c as i8) <= hi {
                found = true;
            }
            i += 3;
            continue;
        }
        if pat[i] == c {
            found = true;
        }
        i += 1;
    }
    None
}

/// `apr_strnatcmp`: runs of digits compare by value (with leading zeros
/// compared digit by digit), white space is skipped, other bytes compare as
/// signed chars.
pub fn strnatcmp(a: &[u8], b: &[u8]) -> Ordering {
    let at = |s: &[u8], i: usize| s.get(i).copied().unwrap_or(0);
    let is_space = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c);
    let (mut ai, mut bi) = (0usize, 0usize);
    loop {
        let (mut ca, mut cb) = (at(a, ai), at(b, bi));
        while is_space(ca) {
            ai += 1;
            ca = at(a, ai);
        }
        while is_space(cb) {
            bi += 1;
            cb = at(b, bi);
        }
        if ca.is_ascii_digit() && cb.is_ascii_digit() {
            let r = if ca == b'0' || cb == b'0' {
                compare_left(&a[ai..], &b[bi..])
            } else {
                compare_right(&a[ai..], &b[bi..])
            };
            if r != Ordering::Equal {
                return r;
            }
        }
        if ca == 0 && cb == 0 {
            return Ordering::Equal;
        }
        match (ca as i8).cmp(&(cb as i8)) {
            Ordering::Equal => {}
            o => return o,
        }
        ai += 1;
        bi += 1;
    }
}

fn digit_at(s: &[u8], i: usize) -> Option<u8> {
    s.get(i).copied().filter(u8::is_ascii_digit)
}

/// Right-aligned numbers: the longer run wins, else the first difference.
fn compare_right(a: &[u8], b: &[u8]) -> Ordering {
    let mut bias = Ordering::Equal;
    let mut i = 0;
    loop {
        match (digit_at(a, i), digit_at(b, i)) {
            (None, None) => return bias,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                if bias == Ordering::Equal {
                    bias = x.cmp(&y);
                }
            }
        }
        i += 1;
    }
}

/// Left-aligned (fractional) numbers: the first difference wins.
fn compare_left(a: &[u8], b: &[u8]) -> Ordering {
    let mut i = 0;
    loop {
        match (digit_at(a, i), digit_at(b, i)) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x != y => return x.cmp(&y),
            _ => {}
        }
        i += 1;
    }
}

/// The parent link of `uri` (`ap_make_full_path(uri, "../")` normalised), or
/// `None` at the root.
fn parent_of(uri: &[u8]) -> Option<Vec<u8>> {
    let mut path = uri.to_vec();
    if path.last() != Some(&b'/') {
        path.push(b'/');
    }
    path.extend_from_slice(b"../");
    normalize_not_above_root(&path)
}

/// `ap_normalize_path` with `AP_NORMALIZE_ALLOW_RELATIVE |
/// AP_NORMALIZE_NOT_ABOVE_ROOT`: remove `.` and `seg/..` segments (no slash
/// merging); `None` when `..` would climb above the root or nothing is left.
fn normalize_not_above_root(path: &[u8]) -> Option<Vec<u8>> {
    let at = |i: usize| path.get(i).copied().unwrap_or(0);
    let slash_or_end = |c: u8| c == b'/' || c == 0;
    let mut out: Vec<u8> = Vec::with_capacity(path.len());
    let mut ok = true;
    let mut l = 0;
    if path.first() == Some(&b'/') {
        out.push(b'/');
        l = 1;
    }
    while l < path.len() {
        if matches!(out.last(), None | Some(b'/')) && path[l] == b'.' {
            if slash_or_end(at(l + 1)) {
                l += if l + 1 < path.len() { 2 } else { 1 };
                continue;
            }
            if at(l + 1) == b'.' && slash_or_end(at(l + 2)) {
                if out.len() > 1 {
                    out.pop();
                    while out.last().is_some_and(|&c| c != b'/') {
                        out.pop();
                    }
                } else {
                    ok = false;
                }
                l += if l + 2 < path.len() { 3 } else { 2 };
                continue;
            }
        }
        out.push(path[l]);
        l += 1;
    }
    (ok && !out.is_empty()).then_some(out)
}

/// Render the listing of the directory at request path `uri_path` (decoded,
/// as `r->uri`; bytes, since a decoded path need not be UTF-8). `entries` are the directory's entries other than `.` and
/// `..` that are regular files or directories; `is_visible` answers whether
/// a sub-request for an entry would succeed (so `.htaccess` under the usual
/// deny is left out). At most `entries.len()` entries are listed.
pub fn listing(
    uri_path: impl AsRef<[u8]>,
    entries: &[DirEntryInfo],
    mut is_visible: impl FnMut(&DirEntryInfo) -> bool,
    opts: &ListingOptions<'_>,
) -> Response {
    let mut resp = Response::new(200);
    resp.add_header("Content-Type", LISTING_CONTENT_TYPE);
    if opts.head {
        return resp;
    }
    let query = opts.query.map(parse_query).unwrap_or_default();

    let mut names: Vec<Vec<u8>> = Vec::with_capacity(entries.len());
    for e in entries {
        if e.name.is_empty() || e.name == b"." || e.name == b".." || e.name.contains(&b'/') {
            continue;
        }
        if let Some(p) = &query.pattern {
            if !fnmatch_period(p, &e.name) {
                continue;
            }
        }
        if !is_visible(e) {
            continue;
        }
        let mut name = e.name.clone();
        if e.is_dir {
            name.push(b'/');
        }
        names.push(name);
    }
    names.sort_by(|a, b| {
        let o = if query.version_sort {
            match strnatcmp(a, b) {
                Ordering::Equal => a.cmp(b),
                o => o,
            }
        } else {
            a.cmp(b)
        };
        if query.descending {
            o.reverse()
        } else {
            o
        }
    });

    let uri_path = uri_path.as_ref();
    let mut title = Vec::with_capacity(uri_path.len() + 8);
    escape_html_bytes(uri_path, &mut title);
    while title.len() > 1 && title.last() == Some(&b'/') {
        title.pop();
    }
    let mut out: Vec<u8> = Vec::with_capacity(400 + names.len() * 64);
    out.extend_from_slice(b"<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\" \"http://www.w3.org/TR/html4/strict.dtd\">\n<html>\n <head>\n  <title>Index of ");
    out.extend_from_slice(&title);
    out.extend_from_slice(b"</title>\n </head>\n <body>\n<h1>Index of ");
    out.extend_from_slice(&title);
    out.extend_from_slice(b"</h1>\n<ul>");
    if let Some(parent) = parent_of(uri_path).filter(|_| !opts.hide_parent) {
        out.extend_from_slice(b"<li><a href=\"");
        escape_html_bytes(escape_os_path(&parent).as_bytes(), &mut out);
        out.extend_from_slice(b"\"> Parent Directory</a></li>\n");
    }
    for name in &names {
        out.extend_from_slice(b"<li><a href=\"");
        escape_html_bytes(escape_os_path(name).as_bytes(), &mut out);
        out.extend_from_slice(b"\"> ");
        escape_html_bytes(name, &mut out);
        out.extend_from_slice(b"</a></li>\n");
    }
    out.extend_from_slice(b"</ul>\n");
    if let Some(sig) = opts.signature {
        out.extend_from_slice(sig.as_bytes());
    }
    out.extend_from_slice(b"</body></html>\n");
    resp.body = Body::bytes(out);
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(list: &[&[u8]], dirs: &[&[u8]]) -> Vec<DirEntryInfo> {
        let mut v: Vec<DirEntryInfo> = list
            .iter()
            .map(|n| DirEntryInfo {
                name: n.to_vec(),
                is_dir: false,
            })
            .collect();
        v.extend(dirs.iter().map(|n| DirEntryInfo {
            name: n.to_vec(),
            is_dir: true,
        }));
        v
    }

    fn body(r: &Response) -> String {
        String::from_utf8(r.body.to_vec().unwrap()).unwrap()
    }

    fn not_ht(e: &DirEntryInfo) -> bool {
        !e.name.starts_with(b".ht")
    }

    #[test]
    fn observed_dir() {
        // Observed with Apache 2.4.71: GET /dir/ (Options +Indexes in its
        // .htaccess, which is omitted from the listing), Content-Length 459.
        let e = entries(
            &[b"b.txt", b".htaccess", b"x y&<z>.txt", b"a.txt", b".hidden"],
            &[b"sub"],
        );
        let r = listing("/dir/", &e, not_ht, &ListingOptions::default());
        assert_eq!(
            r.headers,
            [(
                "Content-Type".into(),
                "text/html;charset=ISO-8859-1".to_string()
            )]
        );
        let want = "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\" \"http://www.w3.org/TR/html4/strict.dtd\">\n\
<html>\n <head>\n  <title>Index of /dir</title>\n </head>\n <body>\n<h1>Index of /dir</h1>\n\
<ul><li><a href=\"/\"> Parent Directory</a></li>\n\
<li><a href=\".hidden\"> .hidden</a></li>\n\
<li><a href=\"a.txt\"> a.txt</a></li>\n\
<li><a href=\"b.txt\"> b.txt</a></li>\n\
<li><a href=\"sub/\"> sub/</a></li>\n\
<li><a href=\"x%20y&amp;%3cz%3e.txt\"> x y&amp;&lt;z&gt;.txt</a></li>\n\
</ul>\n</body></html>\n";
        assert_eq!(body(&r), want);
        assert_eq!(r.body.len(), 459);
        // HEAD: the type only.
        let r = listing(
            "/dir/",
            &e,
            not_ht,
            &ListingOptions {
                head: true,
                ..Default::default()
            },
        );
        assert_eq!(r.header("Content-Type"), Some(LISTING_CONTENT_TYPE));
        assert!(r.body.is_empty());
    }

    fn dir2() -> Vec<DirEntryInfo> {
        entries(
            &[
                b"B.txt",
                b"a.txt",
                b"10.txt",
                b"9.txt",
                b"q?x",
                b"h#x",
                b"p%20x",
                b"quo\"te",
                b"apo'st",
                "é.txt".as_bytes(),
                b"_u",
                b"-dash",
                b"~tilde",
                b"a+b",
                b"semi;c",
                b"colon:x",
                b".dot",
                b"..dd",
                b"amp&x",
                b"lt<x",
                b"bs\\x",
                b"A.txt",
                b"a.TXT",
                b"ab",
                b"a-b",
                b"a.b",
                b"Ab",
                b"nl\nx",
                b".htaccess",
            ],
            &[b"Zdir", b"adir", b"sp ace"],
        )
    }

    const DIR2_ITEMS: &str = "<li><a href=\"-dash\"> -dash</a></li>\n\
<li><a href=\"..dd\"> ..dd</a></li>\n\
<li><a href=\".dot\"> .dot</a></li>\n\
<li><a href=\"10.txt\"> 10.txt</a></li>\n\
<li><a href=\"9.txt\"> 9.txt</a></li>\n\
<li><a href=\"A.txt\"> A.txt</a></li>\n\
<li><a href=\"Ab\"> Ab</a></li>\n\
<li><a href=\"B.txt\"> B.txt</a></li>\n\
<li><a href=\"Zdir/\"> Zdir/</a></li>\n\
<li><a href=\"_u\"> _u</a></li>\n\
<li><a href=\"a+b\"> a+b</a></li>\n\
<li><a href=\"a-b\"> a-b</a></li>\n\
<li><a href=\"a.TXT\"> a.TXT</a></li>\n\
<li><a href=\"a.b\"> a.b</a></li>\n\
<li><a href=\"a.txt\"> a.txt</a></li>\n\
<li><a href=\"ab\"> ab</a></li>\n\
<li><a href=\"adir/\"> adir/</a></li>\n\
<li><a href=\"amp&amp;x\"> amp&amp;x</a></li>\n\
<li><a href=\"apo'st\"> apo'st</a></li>\n\
<li><a href=\"bs%5cx\"> bs\\x</a></li>\n\
<li><a href=\"./colon:x\"> colon:x</a></li>\n\
<li><a href=\"h%23x\"> h#x</a></li>\n\
<li><a href=\"lt%3cx\"> lt&lt;x</a></li>\n\
<li><a href=\"nl%0ax\"> nl\nx</a></li>\n\
<li><a href=\"p%2520x\"> p%20x</a></li>\n\
<li><a href=\"q%3fx\"> q?x</a></li>\n\
<li><a href=\"quo%22te\"> quo&quot;te</a></li>\n\
<li><a href=\"semi;c\"> semi;c</a></li>\n\
<li><a href=\"sp%20ace/\"> sp ace/</a></li>\n\
<li><a href=\"~tilde\"> ~tilde</a></li>\n\
<li><a href=\"%c3%a9.txt\"> é.txt</a></li>\n";

    #[test]
    fn observed_sorting_and_escaping() {
        // Observed with Apache 2.4.71: GET /dir2/ with these names.
        let r = listing("/dir2/", &dir2(), not_ht, &ListingOptions::default());
        let b = body(&r);
        let start = b.find("<ul>").unwrap() + 4;
        let end = b.find("</ul>").unwrap();
        assert_eq!(
            &b[start..end],
            format!("<li><a href=\"/\"> Parent Directory</a></li>\n{DIR2_ITEMS}")
        );
    }

    #[test]
    fn observed_query_options() {
        // Observed with Apache 2.4.71: ?O=D reverses (Parent Directory stays
        // first); ?C=M;O=D&P=a* lists the a* names descending; ?P=.* lists
        // the two dot names.
        let items = |q: &str| {
            let r = listing(
                "/dir2/",
                &dir2(),
                not_ht,
                &ListingOptions {
                    query: Some(q),
                    ..Default::default()
                },
            );
            let b = body(&r);
            let start = b.find("Parent Directory</a></li>\n").unwrap() + 26;
            let end = b.find("</ul>").unwrap();
            b[start..end]
                .lines()
                .map(|l| l.to_string())
                .collect::<Vec<_>>()
        };
        let mut reversed: Vec<String> = DIR2_ITEMS.lines().map(|l| l.to_string()).collect();
        // The name with a newline spans two lines; reverse whole entries.
        let mut whole: Vec<String> = Vec::new();
        for l in reversed.drain(..) {
            if l.starts_with("<li>") {
                whole.push(l);
            } else {
                let last = whole.last_mut().unwrap();
                last.push('\n');
                last.push_str(&l);
            }
        }
        whole.reverse();
        let got = items("O=D").join("\n");
        assert_eq!(got, whole.join("\n"));
        assert_eq!(
            items("C=M;O=D&P=a*"),
            [
                "<li><a href=\"apo'st\"> apo'st</a></li>",
                "<li><a href=\"amp&amp;x\"> amp&amp;x</a></li>",
                "<li><a href=\"adir/\"> adir/</a></li>",
                "<li><a href=\"ab\"> ab</a></li>",
                "<li><a href=\"a.txt\"> a.txt</a></li>",
                "<li><a href=\"a.b\"> a.b</a></li>",
                "<li><a href=\"a.TXT\"> a.TXT</a></li>",
                "<li><a href=\"a-b\"> a-b</a></li>",
                "<li><a href=\"a+b\"> a+b</a></li>",
            ]
        );
        assert_eq!(
            items("P=.*"),
            [
                "<li><a href=\"..dd\"> ..dd</a></li>",
                "<li><a href=\".dot\"> .dot</a></li>"
            ]
        );
    }

    #[test]
    fn observed_root_and_signature() {
        // Observed with Apache 2.4.71: the root has no Parent Directory;
        // with ServerSignature On the address line follows </ul> directly.
        let e = entries(&[b"a.html"], &[b"dir"]);
        let r = listing("/", &e, not_ht, &ListingOptions::default());
        assert!(body(&r).contains("<title>Index of /</title>"));
        assert!(
            body(&r).contains("<h1>Index of /</h1>\n<ul><li><a href=\"a.html\"> a.html</a></li>\n")
        );
        let sig = "<address>Apache Server at 127.0.0.1 Port 18181</address>\n";
        let e = entries(&[b"b", b"a"], &[]);
        let r = listing(
            "/sig/list/",
            &e,
            not_ht,
            &ListingOptions {
                signature: Some(sig),
                ..Default::default()
            },
        );
        assert!(body(&r).ends_with(
            "<h1>Index of /sig/list</h1>\n<ul><li><a href=\"/sig/\"> Parent Directory</a></li>\n\
             <li><a href=\"a\"> a</a></li>\n<li><a href=\"b\"> b</a></li>\n</ul>\n\
             <address>Apache Server at 127.0.0.1 Port 18181</address>\n</body></html>\n"
        ));
    }

    #[test]
    fn parents() {
        let p = |u: &str| parent_of(u.as_bytes()).map(|v| String::from_utf8(v).unwrap());
        assert_eq!(p("/"), None);
        assert_eq!(p("/dir/"), Some("/".into()));
        assert_eq!(p("/dir"), Some("/".into()));
        assert_eq!(p("/a/b/"), Some("/a/".into()));
        assert_eq!(p("/a//b/"), Some("/a//".into()));
        assert_eq!(p("/a:b/c/"), Some("/a:b/".into()));
        assert_eq!(p("/a b&c/d/"), Some("/a b&c/".into()));
        let e = entries(&[], &[]);
        let r = listing("/a b&c/d/", &e, |_| true, &ListingOptions::default());
        assert!(body(&r).contains("<title>Index of /a b&amp;c/d</title>"));
        assert!(body(&r).contains("<a href=\"/a%20b&amp;c/\"> Parent Directory</a>"));
    }

    #[test]
    fn glob() {
        let m = |p: &str, n: &str| fnmatch_period(p.as_bytes(), n.as_bytes());
        assert!(m("a*", "abc"));
        assert!(m("*", "abc"));
        assert!(!m("*", ".dot"));
        assert!(m(".*", ".dot"));
        assert!(m(".*", "..dd"));
        assert!(!m("?dot", ".dot"));
        assert!(m("*.txt", "a.b.txt"));
        assert!(!m("*.txt", "a.txt.bak"));
        assert!(m("a?c", "abc"));
        assert!(m("[ab]*", "b1"));
        assert!(!m("[!ab]*", "b1"));
        assert!(m("[^ab]*", "c1"));
        assert!(m("[a-c]x", "bx"));
        assert!(m("[]]x", "]x"));
        assert!(m("[x", "[x"));
        assert!(m("a\\b", "a\\b"));
        assert!(m("*a*b*c*", "xxaxxbxxcxx"));
        assert!(!m("*a*b*c*d", "xxaxxbxxcxx"));
        assert!(!m("abc", "ab"));
        assert!(m("ab**", "ab"));
    }

    #[test]
    fn natural_order() {
        use Ordering::*;
        let c = |a: &str, b: &str| strnatcmp(a.as_bytes(), b.as_bytes());
        assert_eq!(c("9.txt", "10.txt"), Less);
        assert_eq!(c("a2", "a10"), Less);
        assert_eq!(c("a010", "a02"), Less);
        assert_eq!(c("x 1", "x1"), Equal);
        assert_eq!(c("abc", "abd"), Less);
        assert_eq!(c("é", "a"), Less);
        let e = entries(&[b"10.txt", b"9.txt", b"1.txt"], &[]);
        let r = listing(
            "/d/",
            &e,
            |_| true,
            &ListingOptions {
                query: Some("V=1"),
                ..Default::default()
            },
        );
        let b = body(&r);
        let (i1, i9, i10) = (
            b.find(" 1.txt").unwrap(),
            b.find(" 9.txt").unwrap(),
            b.find(" 10.txt").unwrap(),
        );
        assert!(i1 < i9 && i9 < i10);
    }

    #[test]
    fn query_parsing() {
        assert_eq!(
            parse_query("O=D"),
            QueryOptions {
                descending: true,
                ..Default::default()
            }
        );
        assert_eq!(parse_query("C=X;O=D"), QueryOptions::default());
        assert_eq!(parse_query("O=Dx"), QueryOptions::default());
        assert_eq!(
            parse_query("P=a%2A;V=1"),
            QueryOptions {
                version_sort: true,
                pattern: Some(b"a*".to_vec()),
                ..Default::default()
            }
        );
        assert_eq!(parse_query("P=a%2fb").pattern, None);
        assert_eq!(
            parse_query("P=&O=D"),
            QueryOptions {
                descending: true,
                ..Default::default()
            }
        );
    }
}
