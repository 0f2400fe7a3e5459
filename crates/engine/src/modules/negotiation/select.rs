//! Choosing a variant: mod_negotiation's qualities for each dimension
//! (type, language, charset, encoding), its own server-driven algorithm
//! (`is_variant_better`, with its fiddles for browsers' sloppy headers)
//! or RFC 2296's RVSA/1.0 when the client's `Negotiate` asks for it, and
//! what the answer says about the choice (`Vary`, `TCN`, `Alternates`,
//! the list of variants on a 406 or 300 page).
//!
//! Qualities are `f32`, as Apache's `float`s: ties and the tiny fiddle
//! values (0.0001, 0.001, 0.01) compare exactly as they do there.

use super::accept::{AcceptRec, CGI_MAGIC_TYPE, INCLUDES_MAGIC_TYPE, INCLUDES_MAGIC_TYPE3};
use super::{FLP_FALLBACK, FLP_PREFER};

/// One candidate file and what negotiation learns about it.
#[derive(Clone, Debug)]
pub struct Variant {
    /// The file's name in the directory (path text).
    pub file_name: String,
    /// Lower case, without parameters.
    pub mime_type: String,
    pub content_encoding: Option<String>,
    pub languages: Vec<String>,
    pub content_charset: String,
    /// A type map's `Description:`.
    pub description: String,
    /// A type map's inline `Body:`: offset and length in the map file.
    pub body: Option<(u64, u64)>,
    /// The file's size (`{length}`).
    pub bytes: i64,
    /// A handler will produce the answer (no `{length}` then).
    pub has_handler: bool,
    pub source_quality: f32,
    pub level: f32,
    pub is_pseudo_html: bool,
    // Set while negotiating.
    pub lang_quality: f32,
    pub encoding_quality: f32,
    pub charset_quality: f32,
    pub mime_type_quality: f32,
    pub lang_index: i32,
    pub level_matched: f32,
    pub mime_stars: i32,
    pub definite: bool,
}

impl Variant {
    /// A variant with the type read from its content type (`set_mime_fields`).
    pub fn new(file_name: String, ct: &AcceptRec) -> Variant {
        Variant {
            file_name,
            mime_type: ct.name.clone(),
            content_encoding: None,
            languages: Vec::new(),
            content_charset: ct.charset.clone(),
            description: String::new(),
            body: None,
            bytes: -1,
            has_handler: false,
            source_quality: ct.quality,
            level: ct.level,
            is_pseudo_html: matches!(
                ct.name.as_str(),
                "text/html" | INCLUDES_MAGIC_TYPE | INCLUDES_MAGIC_TYPE3
            ),
            lang_quality: 1.0,
            encoding_quality: 1.0,
            charset_quality: 1.0,
            mime_type_quality: 1.0,
            lang_index: -1,
            level_matched: 0.0,
            mime_stars: 0,
            definite: true,
        }
    }

    fn language_list(&self) -> Option<String> {
        (!self.languages.is_empty()).then(|| self.languages.join(","))
    }
}

/// Everything the choice depends on besides the variants.
#[derive(Debug, Default)]
pub struct NegState {
    pub force_priority: u8,
    pub language_priority: Vec<String>,
    /// An `Accept` item has a quality below 1.
    pub accept_q: bool,
    pub default_lang_quality: f32,
    pub accepts: Option<Vec<AcceptRec>>,
    pub accept_encodings: Option<Vec<AcceptRec>>,
    pub accept_charsets: Option<Vec<AcceptRec>>,
    pub accept_langs: Option<Vec<AcceptRec>>,
    pub is_transparent: bool,
    pub dont_fiddle_headers: bool,
    pub ua_supports_trans: bool,
    pub send_alternates: bool,
    pub may_choose: bool,
    pub use_rvsa: bool,
    /// The `prefer-language` environment variable.
    pub prefer_language: Option<String>,
    /// `no-gzip` (1) or `gzip-only-text/html=1` (2).
    pub may_discard: u8,
}

const DISCARD_ALL_ENCODINGS: u8 = 1;
const DISCARD_ALL_BUT_HTML: u8 = 2;

impl NegState {
    /// `parse_negotiate_header`: what the client's `Negotiate` allows.
    /// `user_agent` is asked for only when the header is exactly `trans`.
    pub fn read_negotiate(&mut self, negotiate: Option<&str>, user_agent: impl FnOnce() -> bool) {
        self.ua_supports_trans = false;
        self.send_alternates = false;
        self.may_choose = true;
        self.use_rvsa = false;
        self.dont_fiddle_headers = false;
        let Some(negotiate) = negotiate else { return };
        // Lynx sends `trans` without supporting it.
        if negotiate == "trans" && user_agent() {
            return;
        }
        self.may_choose = false;
        // `ap_get_list_item`: comma-separated, trimmed, lower case.
        for tok in negotiate
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
        {
            let tok = tok.to_ascii_lowercase();
            if tok == "trans"
                || tok == "vlist"
                || tok == "guess-small"
                || tok.starts_with(|c: char| c.is_ascii_digit())
                || tok == "*"
            {
                self.ua_supports_trans = true;
                self.send_alternates = true;
                if tok == "1.0" {
                    self.may_choose = true;
                    self.use_rvsa = true;
                    self.dont_fiddle_headers = true;
                } else if tok.starts_with('*') {
                    self.may_choose = true;
                    self.dont_fiddle_headers = true;
                }
            }
        }
    }

    /// `maybe_add_default_accepts`: `*/*` for a client that sent no
    /// `Accept`, and scripts, strongly preferred for a POST, a query or
    /// path info.
    pub fn add_default_accepts(&mut self, prefer_scripts: bool) {
        let accepts = self.accepts.get_or_insert_with(|| {
            vec![AcceptRec {
                name: "*/*".into(),
                quality: 1.0,
                level: 0.0,
                charset: String::new(),
            }]
        });
        let quality = if self.use_rvsa {
            0.0
        } else if prefer_scripts {
            2.0
        } else {
            0.001
        };
        accepts.push(AcceptRec {
            name: CGI_MAGIC_TYPE.into(),
            quality,
            level: 0.0,
            charset: String::new(),
        });
    }
}

/// `mime_match`: whether an `Accept` item covers the variant's type,
/// noting how exactly (stars) and the level matched.
fn mime_match(accept: &AcceptRec, v: &mut Variant) -> bool {
    let a = accept.name.as_bytes();
    let t = v.mime_type.as_bytes();
    let len = a.len();
    if a == b"*" || a == b"*/*" {
        v.mime_stars = v.mime_stars.max(1);
        return true;
    }
    if len > 2
        && a.ends_with(b"/*")
        && t.len() >= len - 2
        && t[..len - 2] == a[..len - 2]
        && t.get(len - 2) == Some(&b'/')
    {
        v.mime_stars = v.mime_stars.max(2);
        return true;
    }
    let same = a == t
        || (accept.name == "text/html"
            && (v.mime_type == INCLUDES_MAGIC_TYPE || v.mime_type == INCLUDES_MAGIC_TYPE3));
    if same && accept.level >= v.level {
        v.level_matched = v.level;
        v.mime_stars = 3;
        return true;
    }
    false
}

/// `level_cmp`: among equally good variants of one type, the highest level
/// the client named, else the lowest.
fn level_cmp(a: &Variant, b: &Variant) -> i32 {
    if a.is_pseudo_html && !b.is_pseudo_html {
        return 0;
    }
    if !a.is_pseudo_html && a.mime_type != b.mime_type {
        return 0;
    }
    if a.level_matched > b.level_matched {
        return 1;
    }
    if a.level_matched < b.level_matched {
        return -1;
    }
    if a.level < b.level {
        return 1;
    }
    if a.level > b.level {
        return -1;
    }
    0
}

/// `find_lang_index`: the first `LanguagePriority` entry that is a
/// prefix of the language (case-insensitively).
fn find_lang_index(priority: &[String], lang: &str) -> i32 {
    priority
        .iter()
        .position(|p| {
            lang.len() >= p.len() && lang.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes())
        })
        .map_or(-1, |i| i as i32)
}

fn set_default_lang_quality(neg: &mut NegState, vars: &[Variant]) {
    neg.default_lang_quality =
        if !neg.dont_fiddle_headers && vars.iter().any(|v| !v.languages.is_empty()) {
            0.0001
        } else {
            1.0
        };
}

/// `set_language_quality`, with `ForceLanguagePriority`.
fn set_language_quality(neg: &NegState, v: &mut Variant) {
    let force = if neg.force_priority == 0 {
        FLP_PREFER
    } else {
        neg.force_priority
    };
    if v.languages.is_empty() {
        if !neg.dont_fiddle_headers {
            v.lang_quality = neg.default_lang_quality;
        }
        return;
    }
    match &neg.accept_langs {
        None => v.definite = false,
        Some(accs) => {
            let mut best: Option<&AcceptRec> = None;
            let mut star: Option<&AcceptRec> = None;
            let mut fiddle_q = 0.0f32;
            let mut any_match_on_star = false;
            for lang in &v.languages {
                let lb = lang.as_bytes();
                let mut best_this_tag: Option<&AcceptRec> = None;
                let mut longest = 0usize;
                for acc in accs {
                    if acc.name == "*" {
                        star.get_or_insert(acc);
                        continue;
                    }
                    let an = acc.name.as_bytes();
                    let alen = an.len();
                    if lb.len() >= alen
                        && &lb[..alen] == an
                        && (lb.len() == alen || lb[alen] == b'-')
                        && alen > longest
                    {
                        longest = alen;
                        best_this_tag = Some(acc);
                    }
                    // A more specific range than the variant's (en-US for
                    // en) matches its prefix at a very low quality.
                    if best_this_tag.is_none() && !neg.dont_fiddle_headers {
                        if let Some(p) = an.iter().position(|&c| c == b'-') {
                            if lb.len() >= p && lb[..p] == an[..p] {
                                fiddle_q = 0.001;
                            }
                        }
                    }
                }
                if best.is_none()
                    || best_this_tag.is_some_and(|b| b.quality > best.map_or(0.0, |x| x.quality))
                {
                    best = best_this_tag;
                }
                if best_this_tag.is_none() && star.is_some() {
                    any_match_on_star = true;
                }
            }
            if any_match_on_star {
                let s = star.expect("a star was seen");
                if best.is_none_or(|b| s.quality > b.quality) {
                    best = Some(s);
                    v.definite = false;
                }
            }
            v.lang_quality = best.map_or(fiddle_q, |b| b.quality);
        }
    }
    if ((force & FLP_PREFER) != 0 && v.lang_index < 0)
        || ((force & FLP_FALLBACK) != 0 && v.lang_quality == 0.0)
    {
        let mut bestidx = -1;
        for lang in &v.languages {
            let idx = find_lang_index(&neg.language_priority, lang);
            if idx >= 0 && (bestidx == -1 || idx < bestidx) {
                bestidx = idx;
            }
        }
        if bestidx >= 0 {
            if v.lang_quality != 0.0 {
                if force & FLP_PREFER != 0 {
                    v.lang_index = bestidx;
                }
            } else if force & FLP_FALLBACK != 0 {
                v.lang_index = bestidx;
                v.lang_quality = 0.0001;
                v.definite = false;
            }
        }
    }
}

/// `set_accept_quality`: the quality of the best-matching `Accept` item,
/// with wildcards made very low when the client gave no qualities.
fn set_accept_quality(neg: &NegState, v: &mut Variant) {
    let Some(accepts) = &neg.accepts else {
        if !v.mime_type.is_empty() {
            v.definite = false;
        }
        return;
    };
    let mut q = 0.0f32;
    let mut q_definite = true;
    for acc in accepts {
        let prev = v.mime_stars;
        if !mime_match(acc, v) || prev == v.mime_stars {
            continue;
        }
        q = if !neg.dont_fiddle_headers && !neg.accept_q && v.mime_stars == 1 {
            0.01
        } else if !neg.dont_fiddle_headers && !neg.accept_q && v.mime_stars == 2 {
            0.02
        } else {
            acc.quality
        };
        q_definite = v.mime_stars == 3;
    }
    v.mime_type_quality = q;
    v.definite = v.definite && q_definite;
}

fn is_text(mime: &str) -> bool {
    mime.starts_with("text/") || mime == INCLUDES_MAGIC_TYPE || mime == INCLUDES_MAGIC_TYPE3
}

/// `set_charset_quality`; a text variant of unknown charset counts as
/// ISO-8859-1.
fn set_charset_quality(neg: &NegState, v: &mut Variant) {
    let Some(charsets) = &neg.accept_charsets else {
        if !v.content_charset.is_empty() {
            v.definite = false;
        }
        return;
    };
    let charset = if v.content_charset.is_empty() {
        if !is_text(&v.mime_type) || neg.dont_fiddle_headers {
            return;
        }
        "iso-8859-1"
    } else {
        v.content_charset.as_str()
    };
    let mut star = None;
    for acc in charsets {
        if acc.name == charset {
            v.charset_quality = acc.quality;
            return;
        } else if acc.name == "*" {
            star = Some(acc);
        }
    }
    if let Some(s) = star {
        v.charset_quality = s.quality;
        v.definite = false;
        return;
    }
    v.charset_quality = if charset == "iso-8859-1" { 1.0 } else { 0.0 };
}

/// `is_identity_encoding`.
pub fn is_identity_encoding(enc: Option<&str>) -> bool {
    matches!(enc, None | Some("" | "7bit" | "8bit" | "binary"))
}

/// `set_encoding_quality`: without `Accept-Encoding` everything goes,
/// unencoded preferred; with it, what it lists (`x-` ignored), and the
/// unencoded variant unless `identity` is refused.
fn set_encoding_quality(neg: &NegState, v: &mut Variant) {
    let enc = v.content_encoding.as_deref();
    let Some(encodings) = &neg.accept_encodings else {
        v.encoding_quality = if is_identity_encoding(enc) { 1.0 } else { 0.5 };
        return;
    };
    let (enc, value_if_not_found) = if is_identity_encoding(enc) {
        ("identity", 0.0001f32)
    } else {
        (enc.unwrap_or(""), 0.0)
    };
    let enc = enc.strip_prefix("x-").unwrap_or(enc);
    let mut star = None;
    for acc in encodings {
        let name = acc.name.strip_prefix("x-").unwrap_or(&acc.name);
        if name == enc {
            v.encoding_quality = acc.quality;
            return;
        }
        if name == "*" {
            star = Some(acc);
        }
    }
    v.encoding_quality = match star {
        Some(s) => s.quality,
        None => value_if_not_found,
    };
}

/// `is_variant_better_rvsa` (RFC 2296).
fn is_better_rvsa(v: &Variant, best: Option<&Variant>, bestq: &mut f32) -> bool {
    if v.encoding_quality == 0.0 {
        return false;
    }
    let q = v.mime_type_quality * v.source_quality * v.charset_quality * v.lang_quality;
    if q <= 0.0 {
        return false;
    }
    if q > *bestq {
        *bestq = q;
        return true;
    }
    if q == *bestq {
        if let Some(b) = best {
            if v.encoding_quality > b.encoding_quality {
                *bestq = q;
                return true;
            }
        }
    }
    false
}

/// `is_variant_better`: Apache's own order — type, language, language
/// priority, level, charset, encoding, then the smaller file.
fn is_better(v: &Variant, best: Option<&Variant>, bestq: &mut f32) -> bool {
    if v.encoding_quality == 0.0
        || v.lang_quality == 0.0
        || v.source_quality == 0.0
        || v.charset_quality == 0.0
        || v.mime_type_quality == 0.0
    {
        return false;
    }
    let q = v.mime_type_quality * v.source_quality;
    if q == 0.0 || q < *bestq {
        return false;
    }
    let Some(b) = best.filter(|_| q <= *bestq) else {
        *bestq = q;
        return true;
    };
    if v.lang_quality < b.lang_quality {
        return false;
    }
    if v.lang_quality > b.lang_quality {
        *bestq = q;
        return true;
    }
    if b.lang_index != -1 && (v.lang_index == -1 || v.lang_index > b.lang_index) {
        return false;
    }
    if v.lang_index != -1 && (b.lang_index == -1 || v.lang_index < b.lang_index) {
        *bestq = q;
        return true;
    }
    match level_cmp(v, b) {
        -1 => return false,
        1 => {
            *bestq = q;
            return true;
        }
        _ => {}
    }
    if v.charset_quality < b.charset_quality {
        return false;
    }
    let not_latin1 = |c: &str| !c.is_empty() && c != "iso-8859-1";
    if v.charset_quality > b.charset_quality
        || (not_latin1(&v.content_charset) && !not_latin1(&b.content_charset))
    {
        *bestq = q;
        return true;
    }
    if v.encoding_quality < b.encoding_quality {
        return false;
    }
    if v.encoding_quality > b.encoding_quality {
        *bestq = q;
        return true;
    }
    if v.bytes >= b.bytes {
        return false;
    }
    *bestq = q;
    true
}

fn discard_by_env(v: &Variant, discard: u8) -> bool {
    let enc = v.content_encoding.as_deref();
    if is_identity_encoding(enc) || enc == Some("identity") {
        return false;
    }
    discard == DISCARD_ALL_ENCODINGS
        || (discard == DISCARD_ALL_BUT_HTML && !v.mime_type.starts_with("text/html"))
}

/// `best_match`: computes every variant's qualities and, when the client
/// lets the server choose, the best one. Returns it and whether the
/// algorithm chose (`alg_choice`) rather than listed.
pub fn best_match(neg: &mut NegState, vars: &mut [Variant]) -> (Option<usize>, bool) {
    let mut preferred = neg.prefer_language.clone();
    set_default_lang_quality(neg, vars);
    loop {
        let mut best: Option<usize> = None;
        let mut bestq = 0.0f32;
        for j in 0..vars.len() {
            if neg.may_discard != 0 && discard_by_env(&vars[j], neg.may_discard) {
                continue;
            }
            if let Some(p) = &preferred {
                if !vars[j].languages.iter().any(|l| l == p) {
                    continue;
                }
            }
            set_accept_quality(neg, &mut vars[j]);
            if preferred.is_some() {
                vars[j].lang_quality = 1.0;
                vars[j].definite = true;
            } else {
                set_language_quality(neg, &mut vars[j]);
            }
            set_encoding_quality(neg, &mut vars[j]);
            set_charset_quality(neg, &mut vars[j]);
            if neg.may_choose {
                let better = {
                    let b = best.map(|i| &vars[i]);
                    if neg.use_rvsa {
                        is_better_rvsa(&vars[j], b, &mut bestq)
                    } else {
                        is_better(&vars[j], b, &mut bestq)
                    }
                };
                if better {
                    best = Some(j);
                }
            }
        }
        let choice = if neg.use_rvsa {
            best.is_some_and(|i| vars[i].definite) && bestq > 0.0
        } else {
            bestq > 0.0
        };
        if preferred.is_some() && (best.is_none() || !choice) {
            preferred = None;
            continue;
        }
        return (best, choice);
    }
}

/// `apr_table_mergen`: a value added to an existing field after ", ".
fn merge_header(headers: &mut Vec<(String, String)>, name: &str, value: &str) {
    match headers
        .iter_mut()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
    {
        Some((_, v)) => {
            v.push_str(", ");
            v.push_str(value);
        }
        None => headers.push((name.to_string(), value.to_string())),
    }
}

/// `%1.3f` with its trailing zeros dropped, as in `Alternates`.
fn source_quality_text(q: f32) -> String {
    let mut s = format!("{q:1.3}");
    s.truncate(5);
    let b = s.as_bytes();
    if b.len() == 5 && b[4] == b'0' {
        s.truncate(4);
        if s.as_bytes()[3] == b'0' {
            s.truncate(3);
            if s.as_bytes()[2] == b'0' {
                s.truncate(1);
            }
        }
    }
    s
}

/// `set_neg_headers`: `Alternates` when asked for, `Vary` naming the
/// dimensions in which the variants differ, `TCN` for a transparent
/// resource; into the headers every answer carries (`err_headers_out`).
pub fn set_neg_headers(
    neg: &NegState,
    vars: &[Variant],
    choice: bool,
    hdrs: &mut Vec<(String, String)>,
) {
    let (mut by_type, mut by_lang, mut by_charset, mut by_enc) = (false, false, false, false);
    let mut alternates = Vec::new();
    let first = vars.first();
    let first_lang = first.and_then(Variant::language_list);
    for (j, v) in vars.iter().enumerate() {
        let lang = v.language_list();
        if j > 0 {
            let f = first.expect("there is a first variant");
            by_type |= f.mime_type != v.mime_type;
            by_charset |= f.content_charset != v.content_charset;
            by_lang |= first_lang.as_deref().unwrap_or("") != lang.as_deref().unwrap_or("");
            by_enc |= f.content_encoding.as_deref().unwrap_or("")
                != v.content_encoding.as_deref().unwrap_or("");
        }
        if !neg.send_alternates {
            continue;
        }
        let mut item = format!(
            "{{\"{}\" {}",
            crate::uri::escape_path_segment(&crate::path_text::bytes(&v.file_name)),
            source_quality_text(v.source_quality)
        );
        if !v.mime_type.is_empty() {
            item.push_str(&format!(" {{type {}}}", v.mime_type));
        }
        if !v.content_charset.is_empty() {
            item.push_str(&format!(" {{charset {}}}", v.content_charset));
        }
        if let Some(l) = &lang {
            item.push_str(&format!(" {{language {l}}}"));
        }
        if let Some(e) = v.content_encoding.as_deref().filter(|e| !e.is_empty()) {
            item.push_str(&format!(" {{encoding {e}}}"));
        }
        if !v.has_handler && v.bytes >= 0 {
            item.push_str(&format!(" {{length {}}}", v.bytes));
        }
        item.push('}');
        alternates.push(item);
    }
    if neg.send_alternates && !vars.is_empty() {
        merge_header(hdrs, "Alternates", &alternates.join(", "));
    }
    if neg.is_transparent || by_type || by_lang || by_charset || by_enc {
        let mut vary = String::new();
        for (on, word) in [
            (neg.is_transparent, ", negotiate"),
            (by_type, ", accept"),
            (by_lang, ", accept-language"),
            (by_charset, ", accept-charset"),
            (by_enc, ", accept-encoding"),
        ] {
            if on {
                vary.push_str(word);
            }
        }
        merge_header(hdrs, "Vary", &vary[2..]);
    }
    if neg.is_transparent {
        let tcn = if choice { "choice" } else { "list" };
        match hdrs.iter_mut().find(|(n, _)| n.eq_ignore_ascii_case("TCN")) {
            Some((_, v)) => *v = tcn.into(),
            None => hdrs.push(("TCN".into(), tcn.into())),
        }
    }
}

/// `make_variant_list`: the HTML list on a 406 or 300 page.
pub fn variant_list(vars: &[Variant]) -> String {
    let mut out = String::from("Available variants:\n<ul>\n");
    for v in vars {
        let name = crate::path_text::bytes(&v.file_name);
        out.push_str("<li><a href=\"");
        out.push_str(&crate::uri::escape_path_segment(&name));
        out.push_str("\">");
        out.push_str(&String::from_utf8_lossy(&crate::uri::escape_html(&name)));
        out.push_str("</a> ");
        out.push_str(&v.description);
        if !v.mime_type.is_empty() {
            out.push_str(", type ");
            out.push_str(&v.mime_type);
        }
        if let Some(l) = v.language_list() {
            out.push_str(", language ");
            out.push_str(&l);
        }
        if !v.content_charset.is_empty() {
            out.push_str(", charset ");
            out.push_str(&v.content_charset);
        }
        if let Some(e) = &v.content_encoding {
            out.push_str(", encoding ");
            out.push_str(e);
        }
        out.push_str("</li>\n");
    }
    out.push_str("</ul>\n");
    out
}
