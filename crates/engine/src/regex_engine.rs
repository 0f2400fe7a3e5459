//! Regular expressions with the meaning Apache gives them.
//!
//! Apache compiles every configuration regex (`<If>` expressions,
//! `RewriteRule`, `RewriteCond`, `*Match` sections) with PCRE in byte mode
//! (no UTF), with `DOTALL` (`.` matches a newline) and `DOLLAR_ENDONLY`
//! (`$` is the very end of the subject, not before a final newline).
//!
//! Most real patterns are regular and the `regex` crate runs them in
//! linear time with that exact meaning: byte mode without Unicode classes,
//! `s` flag on, and its `$` is already end-only. Real `.htaccess` files
//! also use what only a backtracking engine offers (look-ahead in front
//! controller rules, back-references, `\Z`, atomic groups); for those the
//! pattern goes to `fancy-regex` in its ASCII byte mode, with a bound on
//! backtracking so a hostile `.htaccess` cannot stall a worker. When that
//! bound is hit the match fails, as PCRE's match limit makes
//! `ap_regexec` fail.
//!
//! Before either engine sees it, a pattern's PCRE-only spellings
//! (`\Q…\E`, a `{` that is no quantifier, `[` inside a class) are
//! rewritten to what PCRE means by them (`pcre_syntax`).
//!
//! One type, [`Regex`], hides which engine runs: every module that
//! matches configuration regexes uses it.

mod pcre_syntax;
mod shape;

use shape::Shape;

use std::fmt;

/// Upper bound on the compiled program of one pattern: large enough for
/// any real rule, small enough that a file full of huge repetitions cannot
/// exhaust memory.
const SIZE_LIMIT: usize = 2 << 20;

/// Upper bound on the lazy DFA cache of one pattern.
const DFA_SIZE_LIMIT: usize = 2 << 20;

/// Upper bound on backtracking steps of one match in the fallback engine
/// (PCRE's own default match limit is of the same order).
const BACKTRACK_LIMIT: usize = 1_000_000;

/// A compiled configuration regex.
#[derive(Clone)]
pub struct Regex {
    pattern: String,
    engine: Engine,
    /// When the pattern is a literal, `.*` or `.`, a comparison answers
    /// [`Regex::is_match`] without the engine.
    shape: Shape,
}

#[derive(Clone)]
enum Engine {
    /// Linear-time automata; the common case.
    Fast(regex::bytes::Regex),
    /// Backtracking, for look-around, back-references and friends.
    Backtrack(Box<fancy_regex::Regex>),
}

impl Regex {
    /// Compile `pattern` as Apache would (PCRE, byte mode, `DOTALL`,
    /// `DOLLAR_ENDONLY`), optionally case-insensitive (`REG_ICASE`, ASCII
    /// letters only, as PCRE without UTF). The error is a short reason.
    ///
    /// `pattern` is configuration text as `htaccel_conf` decodes it: bytes
    /// that were not UTF-8 in the file are matched as those bytes.
    pub fn new(pattern: &str, case_insensitive: bool) -> Result<Regex, String> {
        let mut re = Self::new_bytes(&htaccel_conf::string_to_bytes(pattern), case_insensitive)?;
        re.pattern = pattern.to_string();
        Ok(re)
    }

    /// Compile a pattern given as the bytes Apache would see. Every byte
    /// of 0x80 and above is one character, as in PCRE without UTF.
    pub fn new_bytes(pattern: &[u8], case_insensitive: bool) -> Result<Regex, String> {
        Self::compile(pattern, case_insensitive, true)
    }

    /// Compile `pattern` as a module that asks for `AP_REG_NO_DEFAULT`
    /// does (mod_substitute): `DOLLAR_ENDONLY` kept, but no `DOTALL`, so
    /// `.` does not match a newline.
    pub fn new_without_dotall(pattern: &str, case_insensitive: bool) -> Result<Regex, String> {
        let mut re = Self::compile(
            &htaccel_conf::string_to_bytes(pattern),
            case_insensitive,
            false,
        )?;
        re.pattern = pattern.to_string();
        Ok(re)
    }

    fn compile(pattern: &[u8], case_insensitive: bool, dotall: bool) -> Result<Regex, String> {
        if pcre_syntax::calls_a_group(pattern) {
            // The fallback engine would read these as subroutine calls,
            // which it expands: two that call the whole pattern took
            // gigabytes to compile.
            return Err("subroutine calls, recursion and \\g references are not supported".into());
        }
        let source = String::from_utf8_lossy(pattern);
        let pattern = &*pcre_syntax::translate(pattern);
        let fast = regex::bytes::RegexBuilder::new(pattern)
            .unicode(false)
            .dot_matches_new_line(dotall)
            .case_insensitive(case_insensitive)
            .size_limit(SIZE_LIMIT)
            .dfa_size_limit(DFA_SIZE_LIMIT)
            .build();
        let mut shape = Shape::General;
        let engine = match fast {
            Ok(re) => {
                // The shortcuts read `.` as DOTALL reads it.
                if dotall {
                    shape = Shape::of(pattern, case_insensitive);
                }
                Engine::Fast(re)
            }
            Err(fast_err) => {
                let backtrack = fancy_regex::RegexBuilder::new(pattern)
                    .bytes_mode(fancy_regex::BytesMode::Ascii)
                    .dot_matches_new_line(dotall)
                    .case_insensitive(case_insensitive)
                    .backtrack_limit(BACKTRACK_LIMIT)
                    .delegate_size_limit(SIZE_LIMIT)
                    .delegate_dfa_size_limit(DFA_SIZE_LIMIT)
                    .build();
                match backtrack {
                    Ok(re) => Engine::Backtrack(Box::new(re)),
                    Err(_) => return Err(short_reason(&fast_err)),
                }
            }
        };
        Ok(Regex {
            pattern: source.to_string(),
            engine,
            shape,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// Whether the pattern matches anywhere in `text`.
    pub fn is_match(&self, text: &[u8]) -> bool {
        if !matches!(self.shape, Shape::General) {
            return self.shape.is_match(text);
        }
        match &self.engine {
            Engine::Fast(re) => re.is_match(text),
            // A backtracking error (limit reached) is a failed match.
            Engine::Backtrack(re) => re.is_match(text).unwrap_or(false),
        }
    }

    /// The spans of the whole match (index 0) and of each group, `None`
    /// for a group that did not take part; `None` when nothing matches.
    pub fn captures(&self, text: &[u8]) -> Option<Vec<Option<(usize, usize)>>> {
        match &self.engine {
            Engine::Fast(re) => {
                let mut locs = re.capture_locations();
                re.captures_read(&mut locs, text)?;
                Some((0..locs.len()).map(|i| locs.get(i)).collect())
            }
            Engine::Backtrack(re) => {
                let caps = re.captures(text).ok()??;
                Some(
                    (0..re.captures_len())
                        .map(|i| caps.get(i).map(|m| (m.start(), m.end())))
                        .collect(),
                )
            }
        }
    }

    /// Number of groups including the whole match (group 0).
    pub fn captures_len(&self) -> usize {
        match &self.engine {
            Engine::Fast(re) => re.captures_len(),
            Engine::Backtrack(re) => re.captures_len(),
        }
    }

    /// Whether the backtracking engine runs this pattern (for tests and
    /// diagnostics).
    pub fn is_backtracking(&self) -> bool {
        matches!(self.engine, Engine::Backtrack(_))
    }
}

impl fmt::Debug for Regex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Regex").field(&self.pattern).finish()
    }
}

/// First line of the `regex` crate's error: both engines failed, and the
/// linear engine's wording is the more precise one.
fn short_reason(err: &regex::Error) -> String {
    match err {
        regex::Error::CompiledTooBig(_) => "regular expression too large".to_string(),
        other => other
            .to_string()
            .lines()
            .rfind(|l| l.starts_with("error:"))
            .unwrap_or("invalid regular expression")
            .to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by fuzzing: the fallback engine read `\g000` as a call of the
    /// whole pattern, and two such calls took gigabytes to compile.
    #[test]
    fn group_calls_are_refused_at_once() {
        let p = "Z/aQ+qb';\\g000/f^\\\\QUEST_URI +qb';\\g000/f^qb';||m";
        assert!(Regex::new(p, false).is_err());
        assert!(Regex::new("(a)(?1)", false).is_err());
    }

    fn m(p: &str, t: &[u8]) -> bool {
        Regex::new(p, false).unwrap().is_match(t)
    }

    #[test]
    fn shapes_answer_as_the_engine_does() {
        let patterns = [
            ".*",
            "^.*$",
            ".",
            ".+",
            "^.",
            ".$",
            "^(.+)$",
            "",
            "^$",
            r"^index\.php$",
            "^wp-",
            r"\.php$",
            "adm",
            r"^\.$",
            "(x)",
            "^(a)(b)$",
        ];
        let subjects: [&[u8]; 11] = [
            b"",
            b"\n",
            b"index.php",
            b"index.php\n",
            b"xindex.php",
            b"wp-admin/",
            b"a.php",
            b"ab",
            b"admin",
            b".",
            b"x",
        ];
        for p in patterns {
            for ci in [false, true] {
                let re = Regex::new(p, ci).unwrap();
                let Engine::Fast(engine) = &re.engine else {
                    panic!("{p} is regular")
                };
                for s in subjects {
                    assert_eq!(re.is_match(s), engine.is_match(s), "{p} ci={ci} on {s:?}");
                }
            }
        }
        assert!(!matches!(
            Regex::new(".*", false).unwrap().shape,
            Shape::General
        ));
    }

    #[test]
    fn dot_matches_newline_and_dollar_is_end_only() {
        assert!(m("^a.b$", b"a\nb"));
        assert!(!m("^ab$", b"ab\n"));
    }

    #[test]
    fn byte_mode_without_unicode() {
        assert!(m("^.$", b"\xff"));
        assert!(m(r"^\w+$", b"abc_1"));
        assert!(!m(r"^\w$", "é".as_bytes()));
        assert!(m(r"^\xff$", b"\xff"));
    }

    #[test]
    fn case_insensitive_flag() {
        let re = Regex::new("^abc$", true).unwrap();
        assert!(re.is_match(b"AbC"));
        assert!(!Regex::new("^abc$", false).unwrap().is_match(b"AbC"));
    }

    #[test]
    fn lookahead_uses_backtracking_engine() {
        let re = Regex::new(r"^(?!index\.php).*\.php$", false).unwrap();
        assert!(re.is_backtracking());
        assert!(re.is_match(b"foo.php"));
        assert!(!re.is_match(b"index.php"));
        assert!(re.is_match(b"a\nb.php"));
        assert!(!re.is_match(b"a.php\n"));
        let re = Regex::new(r"^(?!x).$", false).unwrap();
        assert!(re.is_match(b"\xfe"));
    }

    #[test]
    fn backreference_and_captures() {
        let re = Regex::new(r"^(a+)-\1$", false).unwrap();
        assert!(re.is_match(b"aa-aa"));
        assert!(!re.is_match(b"aa-a"));
        let caps = re.captures(b"a-a").unwrap();
        assert_eq!(caps, vec![Some((0, 3)), Some((0, 1))]);
    }

    #[test]
    fn captures_with_unset_group() {
        let re = Regex::new(r"^(a)|(b)$", false).unwrap();
        assert_eq!(
            re.captures(b"b").unwrap(),
            vec![Some((0, 1)), None, Some((0, 1))]
        );
        assert!(re.captures(b"c").is_none());
        assert_eq!(re.captures_len(), 3);
    }

    #[test]
    fn inline_flag_group() {
        let re = Regex::new(r"(?i:\.JPG)$", false).unwrap();
        assert!(re.is_match(b"x.jpg"));
    }

    #[test]
    fn pcre_spellings() {
        assert!(m(r"^\Qa b.c#&~-\E$", b"a b.c#&~-"));
        assert!(!m(r"^\Qa.c\E$", b"abc"));
        assert!(m("^a{,2}$", b"a{,2}"));
        assert!(m("^x{$", b"x{"));
        assert!(m("^[a[]+$", b"[a["));
        assert!(m("^[]x]+$", b"]x"));
        assert!(m("^[a&&b]+$", b"&a"));
        assert!(m("^[[:digit:]]+$", b"42"));
        assert!(m("a]", b"a]"));
    }

    #[test]
    fn invalid_pattern_is_an_error() {
        assert!(Regex::new("(", false).is_err());
        assert!(Regex::new("a{99999}{99999}", false).is_err());
    }

    #[test]
    fn catastrophic_pattern_is_bounded() {
        let re = Regex::new(r"^(a+)+\1$", false).unwrap();
        let text = vec![b'a'; 64];
        let mut t = text.clone();
        t.push(b'b');
        let start = std::time::Instant::now();
        assert!(!re.is_match(&t));
        assert!(start.elapsed().as_secs() < 5);
    }
}
