//! mod_speling: `CheckSpelling On` answers a `GET` for a name that is not
//! there with the one that is, when one entry of the directory differs from
//! it by case, by one character (missing, extra, mistyped) or by two
//! characters swapped: a 301 to it when one candidate is best, else a
//! `300 Multiple Choices` page listing them. `CheckCaseOnly` keeps to case
//! differences; `CheckBasenameMatch` (on by default) adds the entries with
//! the same name before the first dot, which are only ever listed. Sites
//! moved from a case-blind file system use it.
//!
//! As the module (`check_speling`, a fixup run last):
//!
//! * only for a main request whose file does not exist, never for `/`;
//! * the missing name is the last component of the request's file name,
//!   the rest of the path following as path info; the directory is read
//!   in its own order (`.` and `..` included, as `apr_dir_read` gives them),
//!   and the candidates sorted by how close they are, ties kept in that
//!   order;
//! * an entry spelt exactly as asked (a dangling link) ends the search
//!   with no answer of its own;
//! * the 300 page lists each candidate with its reason, `VARIANTS` holds
//!   them for scripts and logs, and a `Referer` is named on the page.
//!
//! mod_speling merges no configuration: a section that sets any of its
//! directives starts from the defaults (`CheckSpelling Off`), which is why
//! the slot holds the whole setting of the innermost such section.

use crate::registry::{Args, Directive, Module, Run, OR_OPTIONS};
use crate::request::{Ctx, Status};

/// The settings of the innermost section that named one of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Speling {
    pub enabled: bool,
    pub case_only: bool,
    pub basename_match: bool,
}

impl Default for Speling {
    fn default() -> Self {
        Speling {
            enabled: false,
            case_only: false,
            basename_match: true,
        }
    }
}

/// The per-directory slot.
#[derive(Clone, Debug, Default)]
pub struct SpelingDir {
    pub set: Option<Speling>,
}

impl SpelingDir {
    /// No merge function in the module: the newer section's whole setting.
    pub fn merge(base: &SpelingDir, new: &SpelingDir) -> SpelingDir {
        SpelingDir {
            set: new.set.or(base.set),
        }
    }
}

macro_rules! flag_directive {
    ($name:literal, $field:ident, $about:literal) => {
        Directive {
            name: $name,
            args: Args::Flag,
            req_override: OR_OPTIONS,
            about: $about,
            run: Run::Handler(|_w, inv, c| {
                c.speling.set.get_or_insert_with(Speling::default).$field =
                    crate::registry::flag(&inv.words);
                Ok(())
            }),
        }
    };
}

pub static DIRECTIVES: &[Directive] = &[
    flag_directive!(
        "CheckSpelling",
        enabled,
        "whether or not to fix miscapitalized/misspelled requests"
    ),
    flag_directive!(
        "CheckCaseOnly",
        case_only,
        "whether or not to fix only miscapitalized requests"
    ),
    flag_directive!(
        "CheckBasenameMatch",
        basename_match,
        "whether or not to fix files with the same base name"
    ),
];

pub static MODULE: Module = Module {
    source: "mod_speling.c",
    identifier: "speling_module",
    builtin: false,
    directives: DIRECTIVES,
};

/// How close an entry is to the name asked for, closest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Reason {
    Miscapitalized,
    Transposition,
    MissingChar,
    ExtraChar,
    SimpleTypo,
    /// Only the part before the first dot matches.
    CommonBasename,
}

impl Reason {
    fn text(self) -> &'static str {
        match self {
            Reason::Miscapitalized => "miscapitalized",
            Reason::Transposition => "transposed characters",
            Reason::MissingChar => "character missing",
            Reason::ExtraChar => "extra character",
            Reason::SimpleTypo => "mistyped character",
            Reason::CommonBasename => "common basename",
        }
    }
}

fn eq_nocase(a: &[u8], b: &[u8]) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// `spdist`: how `s` (asked) differs from `t` (an entry), `None` when by
/// more than one slip.
fn distance(s: &[u8], t: &[u8]) -> Option<Reason> {
    let same = s
        .iter()
        .zip(t)
        .take_while(|(a, b)| a.eq_ignore_ascii_case(b))
        .count();
    if same == s.len() && same == t.len() {
        return Some(Reason::Miscapitalized);
    }
    let (s, t) = (&s[same..], &t[same..]);
    if !s.is_empty() {
        if !t.is_empty() {
            if s.len() > 1
                && t.len() > 1
                && s[0].eq_ignore_ascii_case(&t[1])
                && t[0].eq_ignore_ascii_case(&s[1])
                && eq_nocase(&s[2..], &t[2..])
            {
                return Some(Reason::Transposition);
            }
            if eq_nocase(&s[1..], &t[1..]) {
                return Some(Reason::SimpleTypo);
            }
        }
        if eq_nocase(&s[1..], t) {
            return Some(Reason::ExtraChar);
        }
    }
    if !t.is_empty() && eq_nocase(s, &t[1..]) {
        return Some(Reason::MissingChar);
    }
    None
}

/// The fixup.
pub fn fixup(ctx: &mut Ctx<'_>) -> Result<(), Status> {
    let Some(conf) = ctx.conf.speling.set.filter(|s| s.enabled) else {
        return Ok(());
    };
    if crate::http::method::number(&ctx.method) != 0
        || ctx.finfo.is_some()
        || ctx.is_subreq
        || ctx.filename.is_empty()
        || ctx.filename.starts_with("proxy:")
    {
        return Ok(());
    }
    let Some(slash) = ctx.filename.rfind('/') else {
        return Ok(());
    };
    if ctx.uri == "/" {
        return Ok(());
    }
    let good = ctx.filename[..slash].to_string();
    let bad = ctx.filename[slash + 1..].to_string();
    let post_good = format!("{bad}{}", ctx.path_info);
    let Some(url) = ctx.uri.strip_suffix(post_good.as_str()).map(str::to_string) else {
        return Ok(());
    };
    let dir = crate::path_text::os_path(std::path::Path::new(&good));
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(());
    };
    let names = [".".into(), "..".into()]
        .into_iter()
        .chain(entries.filter_map(|e| e.ok().map(|e| e.file_name())));
    let bad_bytes = bad.as_bytes();
    let dot = |n: &[u8]| n.iter().position(|&b| b == b'.').unwrap_or(n.len());
    let mut candidates: Vec<(String, Reason)> = Vec::new();
    for name in names {
        let text = crate::path_text::from_os(&name);
        let n = text.as_bytes();
        if n == bad_bytes {
            // A dangling link, or the like: no redirect to itself.
            return Ok(());
        }
        let reason = if eq_nocase(bad_bytes, n) {
            Some(Reason::Miscapitalized)
        } else if let Some(r) = (!conf.case_only).then(|| distance(bad_bytes, n)).flatten() {
            Some(r)
        } else if conf.basename_match
            && dot(bad_bytes) == dot(n)
            && eq_nocase(&bad_bytes[..dot(bad_bytes)], &n[..dot(n)])
        {
            Some(Reason::CommonBasename)
        } else {
            None
        };
        if let Some(r) = reason {
            candidates.push((text.into_owned(), r));
        }
    }
    if candidates.is_empty() {
        return Ok(());
    }
    // Stable, as glibc's `qsort` sorts these.
    candidates.sort_by_key(|c| c.1);
    let referer = ctx
        .headers_in
        .get("Referer")
        .map(|r| String::from_utf8_lossy(r).into_owned());
    let query = ctx.args.clone();
    let best = candidates[0].1;
    if best != Reason::CommonBasename && (candidates.len() == 1 || best != candidates[1].1) {
        let mut target = crate::uri::escape_path(
            format!("{url}{}{}", candidates[0].0, ctx.path_info).as_bytes(),
        )
        .into_owned();
        if let Some(q) = &query {
            target.push('?');
            target.push_str(q);
        }
        let message = match &referer {
            Some(r) => format!("AH03224: Fixed spelling: {} to {target} from {r}", ctx.uri),
            None => format!("AH03225: Fixed spelling: {} to {target}", ctx.uri),
        };
        ctx.site
            .log
            .error("info", "speling", Some(ctx.req.remote()), &message);
        let location = ctx.construct_url(&target);
        ctx.headers_out.push(("Location".into(), location));
        return Err(301);
    }
    let mut page = format!(
        "The document name you requested (<code>{}</code>) could not be found on this server.\n\
         However, we found documents with names similar to the one you requested.<p>\
         Available documents:\n<ul>\n",
        crate::uri::escape_html_str(&ctx.uri)
    );
    let mut variants = Vec::new();
    for (i, (name, reason)) in candidates.iter().enumerate() {
        let mut vuri = format!("{url}{name}{}", ctx.path_info);
        if let Some(q) = &query {
            vuri.push('?');
            vuri.push_str(q);
        }
        let escaped = crate::uri::escape_path(vuri.as_bytes()).into_owned();
        variants.push(format!("\"{escaped}\";\"{}\"", reason.text()));
        page.push_str(&format!(
            "<li><a href=\"{escaped}\">{}</a> ({})\n",
            crate::uri::escape_html_str(&vuri),
            reason.text()
        ));
        if i > 0
            && i < candidates.len() - 1
            && *reason != Reason::CommonBasename
            && candidates[i + 1].1 == Reason::CommonBasename
        {
            page.push_str(
                "</ul>\nFurthermore, the following related documents were found:\n<ul>\n",
            );
        }
    }
    page.push_str("</ul>\n");
    if let Some(r) = &referer {
        page.push_str(&format!(
            "Please consider informing the owner of the referring page <tt>{}</tt> about the broken link.\n",
            crate::uri::escape_html_str(r)
        ));
    }
    ctx.variant_list = Some(page);
    // `apr_table_mergen`: after a value already there, `, ` between.
    let joined = variants.join(",");
    let merged = match ctx.env.get("VARIANTS") {
        Some(old) => format!("{old}, {joined}"),
        None => joined,
    };
    ctx.env.set("VARIANTS", merged);
    let message = match &referer {
        Some(r) => format!(
            "AH03226: Spelling fix: {}: {} candidates from {r}",
            ctx.uri,
            candidates.len()
        ),
        None => format!(
            "AH03227: Spelling fix: {}: {} candidates",
            ctx.uri,
            candidates.len()
        ),
    };
    ctx.site
        .log
        .error("info", "speling", Some(ctx.req.remote()), &message);
    Err(300)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_as_spdist_gives_them() {
        let d = |a: &str, b: &str| distance(a.as_bytes(), b.as_bytes());
        assert_eq!(d("Index.html", "index.html"), Some(Reason::Miscapitalized));
        assert_eq!(d("inedx.html", "index.html"), Some(Reason::Transposition));
        assert_eq!(d("indx.html", "index.html"), Some(Reason::MissingChar));
        assert_eq!(d("inddex.html", "index.html"), Some(Reason::ExtraChar));
        assert_eq!(d("indox.html", "index.html"), Some(Reason::SimpleTypo));
        assert_eq!(d("x", "."), Some(Reason::SimpleTypo));
        assert_eq!(d("abcd", "dcba"), None);
    }
}
