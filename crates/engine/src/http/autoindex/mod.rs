//! Directory listings as mod_autoindex writes them: the plain `<ul>` list,
//! the fancy `<pre>` listing and the `HTMLTable` one, byte for byte
//! (observed with Apache 2.4.71, read from `mod_autoindex.c`).
//!
//! Listings are compared byte for byte by the differential tests and
//! scraped by tools, so every space of Apache's page is reproduced: the
//! column padding of the fancy listing (`NameWidth`), truncated names
//! ending in `..>`, descriptions cut to `DescriptionWidth` with their tags
//! and entities kept whole, sizes as `apr_strfsize` prints them, and the
//! column links that reverse the order of the current key.
//!
//! This module only renders: the caller (`modules::autoindex`) reads the
//! directory, runs the sub-requests, looks icons and descriptions up and
//! decides the header and readme files. The pieces are:
//!
//! * [`preamble`] and [`h1`]: the page head, unless a header file takes
//!   their place;
//! * [`sort`] and [`directories`]: the entries;
//! * [`plain_text`]: a text header or readme inside `<pre>`.
//!
//! Hrefs are escaped with `ap_os_escape_path` (names whose first segment
//! has a `:` get `./`), then HTML-escaped; names are HTML-escaped only;
//! icon URLs are HTML-escaped, alt texts and descriptions are written as
//! they were configured (they may hold HTML).

pub mod opts;
pub mod query;
pub mod strnatcmp;

use crate::uri::{escape_html, escape_os_path};
use opts::*;
use std::cmp::Ordering;
use strnatcmp::strnatcmp;

/// One line of the listing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Entry {
    /// The name (a directory's with a trailing `/`), or for the parent
    /// entry its URI path, which starts with `/`.
    pub name: Vec<u8>,
    pub icon: Option<String>,
    pub alt: Option<String>,
    /// HTML, written as it is.
    pub desc: Option<Vec<u8>>,
    /// -1: not shown (`  - `).
    pub size: i64,
    /// Modification time in microseconds; -1: not shown.
    pub lm: i64,
    /// A directory under `FoldersFirst`.
    pub isdir: bool,
}

impl Entry {
    fn is_parent(&self) -> bool {
        self.name.first() == Some(&b'/')
    }
}

/// What besides the entries shapes the listing's body.
pub struct Layout<'a> {
    pub name_width: i32,
    pub name_adjust: Adjust,
    pub desc_width: i32,
    pub desc_adjust: Adjust,
    pub icon_width: i32,
    pub icon_height: i32,
    pub default_icon: Option<&'a str>,
    /// The `^^BLANKICON^^` icon, shown above the icon column.
    pub blank_icon: Option<&'a str>,
    /// `IndexStyleSheet` is set: class names instead of layout attributes.
    pub style_sheet: bool,
    /// The modification time as the listing prints it.
    pub date: &'a dyn Fn(i64) -> String,
}

fn put(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
}

fn put_html(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(&escape_html(s));
}

/// The page title: the request path HTML-escaped, trailing slashes
/// removed (one is kept for the root).
pub fn title(uri: &[u8]) -> Vec<u8> {
    let mut t = escape_html(uri).into_owned();
    while t.len() > 1 && t.last() == Some(&b'/') {
        t.pop();
    }
    t
}

/// The document head through `<body>`.
pub fn preamble(
    out: &mut Vec<u8>,
    xhtml: bool,
    title: &[u8],
    style_sheet: Option<&str>,
    head_insert: Option<&str>,
) {
    if xhtml {
        put(out, "<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Transitional//EN\"\n\"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd\">\n<html xmlns=\"http://www.w3.org/1999/xhtml\">\n <head>\n  <title>Index of ");
    } else {
        put(out, "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\" \"http://www.w3.org/TR/html4/strict.dtd\">\n<html>\n <head>\n  <title>Index of ");
    }
    out.extend_from_slice(title);
    put(out, "</title>\n");
    if let Some(css) = style_sheet {
        put(out, "  <link rel=\"stylesheet\" href=\"");
        put(out, css);
        put(out, "\" type=\"text/css\"");
        put(out, if xhtml { " />\n" } else { ">\n" });
    }
    if let Some(h) = head_insert {
        put(out, h);
    }
    put(out, " </head>\n <body>\n");
}

/// The `<h1>` line, when no header file replaced it.
pub fn h1(out: &mut Vec<u8>, title: &[u8], style_sheet: bool) {
    put(
        out,
        if style_sheet {
            "  <h1 id=\"indextitle\">Index of "
        } else {
            "<h1>Index of "
        },
    );
    out.extend_from_slice(title);
    put(out, "</h1>\n");
}

/// A text file inside `<pre>`, with `<`, `>` and `&` escaped (Apache's
/// `do_emit_plain`; quotes stay).
pub fn plain_text(out: &mut Vec<u8>, text: &[u8]) {
    put(out, "<pre>\n");
    for &c in text {
        match c {
            b'<' => put(out, "&lt;"),
            b'>' => put(out, "&gt;"),
            b'&' => put(out, "&amp;"),
            // do_emit_plain writes through C strings: a NUL ends a chunk.
            0 => {}
            c => out.push(c),
        }
    }
    put(out, "</pre>\n");
}

/// `apr_strfsize`: four characters, `  - ` for no size.
pub fn strfsize(size: i64) -> String {
    const ORDERS: &[u8] = b"KMGTPE";
    if size < 0 {
        return "  - ".into();
    }
    if size < 973 {
        return format!("{size:3} ");
    }
    let mut size = size;
    let mut o = 0;
    loop {
        let mut remain = size & 1023;
        size >>= 10;
        if size >= 973 {
            o += 1;
            continue;
        }
        let unit = ORDERS[o.min(ORDERS.len() - 1)] as char;
        if size < 9 || (size == 9 && remain < 973) {
            remain = (remain * 5 + 256) / 512;
            if remain >= 10 {
                size += 1;
                remain = 0;
            }
            return format!("{size}.{remain}{unit}");
        }
        if remain >= 512 {
            size += 1;
        }
        return format!("{size:3}{unit}");
    }
}

/// A description cut to `width` visible characters (tags count for
/// nothing, an entity for one), the cut marked by a `>` in place of the
/// last character kept (Apache's `terminate_description`). Without a
/// `DescriptionWidth`, suppressed columns lend their room.
pub fn terminate_description(desc: &[u8], opts: u32, width: i32, adjust: Adjust) -> Vec<u8> {
    let mut maxsize = width;
    if adjust == Adjust::Unset {
        if opts & SUPPRESS_ICON != 0 {
            maxsize += 6;
        }
        if opts & SUPPRESS_LAST_MOD != 0 {
            maxsize += 19;
        }
        if opts & SUPPRESS_SIZE != 0 {
            maxsize += 7;
        }
    }
    let len = desc.len();
    let mut x = 0;
    while x < len && (maxsize > 0 || desc[x] == b'<') {
        match desc[x] {
            b'<' => match desc[x..].iter().position(|&c| c == b'>') {
                Some(i) => x += i,
                // An unclosed tag: the rest is kept as it is.
                None => return desc.to_vec(),
            },
            b'&' => {
                maxsize -= 1;
                match desc[x..].iter().position(|&c| c == b';') {
                    Some(i) => x += i,
                    None => return desc.to_vec(),
                }
            }
            _ => maxsize -= 1,
        }
        x += 1;
    }
    if maxsize == 0 && x < len && x > 0 {
        let mut cut = desc[..x].to_vec();
        cut[x - 1] = b'>';
        return cut;
    }
    desc.to_vec()
}

/// Orders the entries as Apache's `dsortf`: the parent first, then
/// (`FoldersFirst`) directories, then by the key, ties broken by name
/// (naturally under `VersionSort`, case-blind first under `IgnoreCase`,
/// finally byte by byte).
pub fn sort(entries: &mut [Entry], opts: u32, key: u8, direction: u8) {
    let version = opts & VERSION_SORT != 0;
    let fold = opts & IGNORE_CASE != 0;
    let ascending = direction == b'A';
    entries.sort_by(|e1, e2| {
        if e1.is_parent() {
            return Ordering::Less;
        }
        if e2.is_parent() {
            return Ordering::Greater;
        }
        if e1.isdir != e2.isdir {
            return if e1.isdir {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        let (c1, c2) = if ascending { (e1, e2) } else { (e2, e1) };
        let by_key = match key {
            b'M' => c1.lm.cmp(&c2.lm),
            b'S' => c1.size.cmp(&c2.size),
            b'D' => {
                let d1 = c1.desc.as_deref().unwrap_or(b"");
                let d2 = c2.desc.as_deref().unwrap_or(b"");
                if version {
                    strnatcmp(d1, d2, false)
                } else {
                    d1.cmp(d2)
                }
            }
            _ => Ordering::Equal,
        };
        if by_key != Ordering::Equal {
            return by_key;
        }
        let mut r = Ordering::Equal;
        if version {
            if fold {
                r = strnatcmp(&c1.name, &c2.name, true);
            }
            if r == Ordering::Equal {
                r = strnatcmp(&c1.name, &c2.name, false);
            }
        }
        if r == Ordering::Equal && fold {
            r = c1
                .name
                .iter()
                .map(u8::to_ascii_lowercase)
                .cmp(c2.name.iter().map(u8::to_ascii_lowercase));
        }
        if r == Ordering::Equal {
            r = c1.name.cmp(&c2.name);
        }
        r
    });
}

/// A column heading: a link that sorts by the column (reversing the order
/// when it is already the key, ascending), or the bare text.
fn column_link(
    out: &mut Vec<u8>,
    text: &str,
    column: u8,
    key: u8,
    direction: u8,
    colargs: &str,
    nosort: bool,
) {
    if nosort {
        put(out, text);
        return;
    }
    let order = if key == column && direction == b'A' {
        'D'
    } else {
        'A'
    };
    put(
        out,
        &format!(
            "<a href=\"?C={};O={order}{colargs}\">{text}</a>",
            column as char
        ),
    );
}

/// ` width="n" height="n"` and the XHTML slash of an `<img>`.
fn img_tail(out: &mut Vec<u8>, layout: &Layout<'_>, xhtml: bool) {
    if layout.icon_width != 0 {
        put(out, &format!(" width=\"{}\"", layout.icon_width));
    }
    if layout.icon_height != 0 {
        put(out, &format!(" height=\"{}\"", layout.icon_height));
    }
    if xhtml {
        put(out, " /");
    }
}

/// `name` cut to `width` bytes with `..>` at the end when longer.
fn fit_name(name: &[u8], width: usize) -> Vec<u8> {
    if name.len() > width {
        let keep = width.saturating_sub(3);
        let mut v = name[..keep].to_vec();
        v.extend_from_slice(&b"..>"[..width - keep]);
        v
    } else {
        name.to_vec()
    }
}

/// The entries, sorted, in the format the options select (Apache's
/// `output_directories`).
pub fn directories(
    out: &mut Vec<u8>,
    entries: &[Entry],
    layout: &Layout<'_>,
    opts: u32,
    key: u8,
    direction: u8,
    colargs: &str,
) {
    let nosort = opts & SUPPRESS_COLSORT != 0;
    let xhtml = opts & EMIT_XHTML != 0;
    let table = opts & TABLE_INDEXING != 0;
    let fancy = opts & FANCY_INDEXING != 0;
    let style = layout.style_sheet;
    let mut name_width = layout.name_width.max(0) as usize;
    let mut desc_width = layout.desc_width;
    if fancy && !table {
        if layout.name_adjust == Adjust::Fit {
            for e in entries {
                name_width = name_width.max(e.name.len());
            }
        }
        if layout.desc_adjust == Adjust::Fit {
            for d in entries.iter().filter_map(|e| e.desc.as_ref()) {
                desc_width = desc_width.max(d.len() as i32);
            }
        }
    }
    let pad = |out: &mut Vec<u8>, used: usize| {
        out.extend(std::iter::repeat_n(b' ', name_width.saturating_sub(used)));
    };
    let link = |out: &mut Vec<u8>, text: &str, column: u8| {
        column_link(out, text, column, key, direction, colargs, nosort)
    };
    let pick =
        |with_style: &'static str, without: &'static str| if style { with_style } else { without };
    let mut breakrow = String::new();

    if table {
        put(
            out,
            pick(
                "  <table id=\"indexlist\">\n   <tr class=\"indexhead\">",
                "  <table>\n   <tr>",
            ),
        );
        let mut cols = 1;
        if opts & SUPPRESS_ICON == 0 {
            put(out, "<th");
            put(out, pick(" class=\"indexcolicon\">", " valign=\"top\">"));
            match layout.blank_icon {
                Some(icon) => {
                    put(out, "<img src=\"");
                    put_html(out, icon.as_bytes());
                    put(out, "\" alt=\"[ICO]\"");
                    img_tail(out, layout, xhtml);
                    put(out, "></th>");
                }
                None => put(out, "&nbsp;</th>"),
            }
            cols += 1;
        }
        put(out, "<th");
        put(out, pick(" class=\"indexcolname\">", ">"));
        link(out, "Name", b'N');
        if opts & SUPPRESS_LAST_MOD == 0 {
            put(out, "</th><th");
            put(out, pick(" class=\"indexcollastmod\">", ">"));
            link(out, "Last modified", b'M');
            cols += 1;
        }
        if opts & SUPPRESS_SIZE == 0 {
            put(out, "</th><th");
            put(out, pick(" class=\"indexcolsize\">", ">"));
            link(out, "Size", b'S');
            cols += 1;
        }
        if opts & SUPPRESS_DESC == 0 {
            put(out, "</th><th");
            put(out, pick(" class=\"indexcoldesc\">", ">"));
            link(out, "Description", b'D');
            cols += 1;
        }
        if opts & SUPPRESS_RULES == 0 {
            breakrow = format!(
                "   <tr{}><th colspan=\"{cols}\"><hr{}></th></tr>\n",
                pick(" class=\"indexbreakrow\"", ""),
                if xhtml { " /" } else { "" }
            );
        }
        put(out, "</th></tr>\n");
        put(out, &breakrow);
    } else if fancy {
        put(out, "<pre>");
        if opts & SUPPRESS_ICON == 0 {
            match layout.blank_icon {
                Some(icon) => {
                    put(out, "<img src=\"");
                    put_html(out, icon.as_bytes());
                    put(out, "\" alt=\"Icon \"");
                    img_tail(out, layout, xhtml);
                    put(out, "> ");
                }
                None => put(out, "      "),
            }
        }
        link(out, "Name", b'N');
        pad(out, 4);
        put(out, " ");
        if opts & SUPPRESS_LAST_MOD == 0 {
            link(out, "Last modified", b'M');
            put(out, "      ");
        }
        if opts & SUPPRESS_SIZE == 0 {
            link(out, "Size", b'S');
            put(out, "  ");
        }
        if opts & SUPPRESS_DESC == 0 {
            link(out, "Description", b'D');
        }
        if opts & SUPPRESS_RULES == 0 {
            put(out, if xhtml { "<hr />" } else { "<hr>" });
        } else {
            put(out, "\n");
        }
    } else {
        put(out, "<ul>");
    }

    for (x, e) in entries.iter().enumerate() {
        let anchor = escape_html(escape_os_path(&e.name).as_bytes()).into_owned();
        let shown: &[u8] = if x == 0 && e.is_parent() {
            b"Parent Directory"
        } else {
            &e.name
        };
        let icon = e.icon.as_deref().or(layout.default_icon);
        let alt = e.alt.as_deref().unwrap_or("   ");
        if table {
            if style {
                let parity = if x & 1 == 1 { "odd" } else { "even" };
                match &e.alt {
                    Some(a) if opts & ADD_ALT_CLASS != 0 => put(
                        out,
                        &format!("   <tr class=\"{parity}-{}\">", a.to_ascii_lowercase()),
                    ),
                    _ => put(out, &format!("   <tr class=\"{parity}\">")),
                }
            } else {
                put(out, "<tr>");
            }
            if opts & SUPPRESS_ICON == 0 {
                put(out, "<td");
                put(out, pick(" class=\"indexcolicon\">", " valign=\"top\">"));
                if opts & ICONS_ARE_LINKS != 0 {
                    put(out, "<a href=\"");
                    out.extend_from_slice(&anchor);
                    put(out, "\">");
                }
                match icon {
                    Some(icon) => {
                        put(out, "<img src=\"");
                        put_html(out, icon.as_bytes());
                        put(out, &format!("\" alt=\"[{alt}]\""));
                        img_tail(out, layout, xhtml);
                        put(out, ">");
                    }
                    None => put(out, "&nbsp;"),
                }
                put(
                    out,
                    if opts & ICONS_ARE_LINKS != 0 {
                        "</a></td>"
                    } else {
                        "</td>"
                    },
                );
            }
            put(out, "<td");
            put(out, pick(" class=\"indexcolname\">", ">"));
            put(out, "<a href=\"");
            out.extend_from_slice(&anchor);
            put(out, "\">");
            if layout.name_adjust == Adjust::Fit {
                put_html(out, shown);
                put(out, "</a>");
            } else {
                let fitted = fit_name(shown, name_width);
                put_html(out, &fitted);
                put(out, "</a>");
                pad(out, fitted.len());
            }
            if opts & SUPPRESS_LAST_MOD == 0 {
                if e.lm != -1 {
                    put(out, "</td><td");
                    put(
                        out,
                        pick(" class=\"indexcollastmod\">", " align=\"right\">"),
                    );
                    put(out, &(layout.date)(e.lm));
                    put(out, "  ");
                } else {
                    put(out, "</td><td");
                    put(out, pick(" class=\"indexcollastmod\">&nbsp;", ">&nbsp;"));
                }
            }
            if opts & SUPPRESS_SIZE == 0 {
                put(out, "</td><td");
                put(out, pick(" class=\"indexcolsize\">", " align=\"right\">"));
                put(out, &strfsize(e.size));
            }
            if opts & SUPPRESS_DESC == 0 {
                put(out, "</td><td");
                put(out, pick(" class=\"indexcoldesc\">", ">"));
                match &e.desc {
                    Some(d) if layout.desc_adjust == Adjust::Fit => out.extend_from_slice(d),
                    Some(d) => out.extend_from_slice(&terminate_description(
                        d,
                        opts,
                        desc_width,
                        layout.desc_adjust,
                    )),
                    None => put(out, "&nbsp;"),
                }
            }
            put(out, "</td></tr>\n");
        } else if fancy {
            if opts & SUPPRESS_ICON == 0 {
                if opts & ICONS_ARE_LINKS != 0 {
                    put(out, "<a href=\"");
                    out.extend_from_slice(&anchor);
                    put(out, "\">");
                }
                match icon {
                    Some(icon) => {
                        put(out, "<img src=\"");
                        put_html(out, icon.as_bytes());
                        put(out, &format!("\" alt=\"[{alt}]\""));
                        img_tail(out, layout, xhtml);
                        put(out, ">");
                    }
                    None => put(out, "     "),
                }
                put(
                    out,
                    if opts & ICONS_ARE_LINKS != 0 {
                        "</a> "
                    } else {
                        " "
                    },
                );
            }
            let fitted = fit_name(shown, name_width);
            put(out, "<a href=\"");
            out.extend_from_slice(&anchor);
            put(out, "\">");
            put_html(out, &fitted);
            put(out, "</a>");
            pad(out, fitted.len());
            put(out, " ");
            if opts & SUPPRESS_LAST_MOD == 0 {
                if e.lm != -1 {
                    put(out, &(layout.date)(e.lm));
                    put(out, "  ");
                } else {
                    put(out, "                   ");
                }
            }
            if opts & SUPPRESS_SIZE == 0 {
                put(out, &strfsize(e.size));
                put(out, "  ");
            }
            if opts & SUPPRESS_DESC == 0 {
                if let Some(d) = &e.desc {
                    out.extend_from_slice(&terminate_description(
                        d,
                        opts,
                        desc_width,
                        layout.desc_adjust,
                    ));
                }
            }
            put(out, "\n");
        } else {
            put(out, "<li><a href=\"");
            out.extend_from_slice(&anchor);
            put(out, "\"> ");
            put_html(out, shown);
            put(out, "</a></li>\n");
        }
    }
    if table {
        put(out, &breakrow);
        put(out, "</table>\n");
    } else if fancy {
        if opts & SUPPRESS_RULES == 0 {
            put(
                out,
                if xhtml {
                    "<hr /></pre>\n"
                } else {
                    "<hr></pre>\n"
                },
            );
        } else {
            put(out, "</pre>\n");
        }
    } else {
        put(out, "</ul>\n");
    }
}

/// The parent link of `uri` (`ap_make_full_path(uri, "../")` normalised), or
/// `None` at the root.
pub fn parent_of(uri: &[u8]) -> Option<Vec<u8>> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A plain page as the handler assembles one with no options.
    fn plain_page(
        uri: &str,
        files: &[&[u8]],
        dirs: &[&[u8]],
        query_opts: u32,
        direction: u8,
    ) -> String {
        let mut entries: Vec<Entry> = parent_of(uri.as_bytes())
            .map(|name| Entry {
                name,
                size: -1,
                lm: -1,
                ..Default::default()
            })
            .into_iter()
            .collect();
        for (list, slash) in [(files, false), (dirs, true)] {
            for n in list {
                let mut name = n.to_vec();
                if slash {
                    name.push(b'/');
                }
                entries.push(Entry {
                    name,
                    size: -1,
                    lm: -1,
                    ..Default::default()
                });
            }
        }
        sort(&mut entries, query_opts, b'N', direction);
        let date = |_: i64| String::new();
        let layout = Layout {
            name_width: DEFAULT_NAME_WIDTH,
            name_adjust: Adjust::Unset,
            desc_width: DEFAULT_DESC_WIDTH,
            desc_adjust: Adjust::Unset,
            icon_width: 0,
            icon_height: 0,
            default_icon: None,
            blank_icon: None,
            style_sheet: false,
            date: &date,
        };
        let t = title(uri.as_bytes());
        let mut out = Vec::new();
        preamble(&mut out, false, &t, None, None);
        h1(&mut out, &t, false);
        directories(&mut out, &entries, &layout, query_opts, b'N', direction, "");
        out.extend_from_slice(b"</body></html>\n");
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn observed_plain_listing() {
        // Observed with Apache 2.4.71: GET /dir/ (Options +Indexes in its
        // .htaccess, which the sub-request leaves out), Content-Length 459.
        let page = plain_page(
            "/dir/",
            &[b"b.txt", b"x y&<z>.txt", b"a.txt", b".hidden"],
            &[b"sub"],
            0,
            b'A',
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
        assert_eq!(page, want);
        assert_eq!(page.len(), 459);
    }

    #[test]
    fn observed_sorting_and_escaping() {
        // Observed with Apache 2.4.71: GET /dir2/ with these names, then
        // ?O=D (the parent stays first) and ?V=1.
        let files: &[&[u8]] = &[
            b"B.txt",
            b"10.txt",
            b"9.txt",
            b"q?x",
            b"h#x",
            b"p%20x",
            b"quo\"te",
            "é.txt".as_bytes(),
            b"colon:x",
            b".dot",
            b"..dd",
            b"amp&x",
            b"lt<x",
            b"bs\\x",
            b"a.TXT",
            b"nl\nx",
        ];
        let page = plain_page("/dir2/", files, &[b"Zdir", b"sp ace"], 0, b'A');
        let items = "<ul><li><a href=\"/\"> Parent Directory</a></li>\n\
<li><a href=\"..dd\"> ..dd</a></li>\n\
<li><a href=\".dot\"> .dot</a></li>\n\
<li><a href=\"10.txt\"> 10.txt</a></li>\n\
<li><a href=\"9.txt\"> 9.txt</a></li>\n\
<li><a href=\"B.txt\"> B.txt</a></li>\n\
<li><a href=\"Zdir/\"> Zdir/</a></li>\n\
<li><a href=\"a.TXT\"> a.TXT</a></li>\n\
<li><a href=\"amp&amp;x\"> amp&amp;x</a></li>\n\
<li><a href=\"bs%5cx\"> bs\\x</a></li>\n\
<li><a href=\"./colon:x\"> colon:x</a></li>\n\
<li><a href=\"h%23x\"> h#x</a></li>\n\
<li><a href=\"lt%3cx\"> lt&lt;x</a></li>\n\
<li><a href=\"nl%0ax\"> nl\nx</a></li>\n\
<li><a href=\"p%2520x\"> p%20x</a></li>\n\
<li><a href=\"q%3fx\"> q?x</a></li>\n\
<li><a href=\"quo%22te\"> quo&quot;te</a></li>\n\
<li><a href=\"sp%20ace/\"> sp ace/</a></li>\n\
<li><a href=\"%c3%a9.txt\"> é.txt</a></li>\n</ul>";
        assert!(page.contains(items), "{page}");
        let reversed = plain_page("/dir2/", files, &[], 0, b'D');
        assert!(reversed.contains("Parent Directory</a></li>\n<li><a href=\"%c3%a9.txt\">"));
        let natural = plain_page(
            "/d/",
            &[b"10.txt", b"9.txt", b"1.txt"],
            &[],
            VERSION_SORT,
            b'A',
        );
        let (i1, i9, i10) = (
            natural.find(" 1.txt").unwrap(),
            natural.find(" 9.txt").unwrap(),
            natural.find(" 10.txt").unwrap(),
        );
        assert!(i1 < i9 && i9 < i10);
    }

    #[test]
    fn root_title_and_parents() {
        let page = plain_page("/", &[b"a.html"], &[b"dir"], 0, b'A');
        assert!(page.contains("<h1>Index of /</h1>\n<ul><li><a href=\"a.html\"> a.html</a></li>\n"));
        let p = |u: &str| parent_of(u.as_bytes()).map(|v| String::from_utf8(v).unwrap());
        assert_eq!(p("/"), None);
        assert_eq!(p("/dir/"), Some("/".into()));
        assert_eq!(p("/dir"), Some("/".into()));
        assert_eq!(p("/a/b/"), Some("/a/".into()));
        assert_eq!(p("/a//b/"), Some("/a//".into()));
        assert_eq!(p("/a b&c/d/"), Some("/a b&c/".into()));
        let page = plain_page("/a b&c/d/", &[], &[], 0, b'A');
        assert!(page.contains("<title>Index of /a b&amp;c/d</title>"));
        assert!(page.contains("<a href=\"/a%20b&amp;c/\"> Parent Directory</a>"));
    }

    #[test]
    fn sizes_as_apr_strfsize() {
        assert_eq!(strfsize(-1), "  - ");
        assert_eq!(strfsize(0), "  0 ");
        assert_eq!(strfsize(972), "972 ");
        assert_eq!(strfsize(973), "1.0K");
        assert_eq!(strfsize(5000), "4.9K");
        assert_eq!(strfsize(10240), " 10K");
        assert_eq!(strfsize(1_100_000), "1.0M");
        assert_eq!(strfsize(9 * 1024 + 1000), " 10K");
    }

    #[test]
    fn descriptions_cut_outside_tags() {
        let cut = |d: &str, w: i32| {
            String::from_utf8(terminate_description(d.as_bytes(), 0, w, Adjust::Fixed)).unwrap()
        };
        assert_eq!(cut("short", 23), "short");
        assert_eq!(cut("abcdefghijklmnop", 12), "abcdefghijk>");
        // A tag right after the last character kept is kept whole, and its
        // `>` stands for the mark.
        assert_eq!(cut("<b>abcdefghijkl</b>mnop", 12), "<b>abcdefghijkl</b>");
        assert_eq!(cut("<b>abcdefghijklm</b>nop", 12), "<b>abcdefghijk>");
        assert_eq!(cut("a&amp;bcdefghijklmn", 12), "a&amp;bcdefghij>");
        // Without a DescriptionWidth, suppressed columns lend their room.
        let long = "x".repeat(60);
        let d = terminate_description(long.as_bytes(), SUPPRESS_SIZE, 23, Adjust::Unset);
        assert_eq!(d.len(), 30);
    }

    #[test]
    fn fancy_row() {
        let date = |_: i64| "2020-01-02 03:04".to_string();
        let layout = Layout {
            name_width: 10,
            name_adjust: Adjust::Fixed,
            desc_width: 23,
            desc_adjust: Adjust::Unset,
            icon_width: 20,
            icon_height: 0,
            default_icon: Some("/u.gif"),
            blank_icon: None,
            style_sheet: false,
            date: &date,
        };
        let e = Entry {
            name: b"a-long-name.txt".to_vec(),
            alt: Some("TXT".into()),
            size: 5000,
            lm: 1,
            desc: Some(b"Text".to_vec()),
            ..Default::default()
        };
        let mut out = Vec::new();
        directories(
            &mut out,
            &[e],
            &layout,
            FANCY_INDEXING | ICONS_ARE_LINKS,
            b'N',
            b'A',
            ";F=1",
        );
        let s = String::from_utf8(out).unwrap();
        assert_eq!(
            s,
            "<pre>      <a href=\"?C=N;O=D;F=1\">Name</a>       <a href=\"?C=M;O=A;F=1\">Last modified</a>      \
<a href=\"?C=S;O=A;F=1\">Size</a>  <a href=\"?C=D;O=A;F=1\">Description</a><hr>\
<a href=\"a-long-name.txt\"><img src=\"/u.gif\" alt=\"[TXT]\" width=\"20\"></a> \
<a href=\"a-long-name.txt\">a-long-..&gt;</a> 2020-01-02 03:04  4.9K  Text\n<hr></pre>\n"
        );
    }
}
