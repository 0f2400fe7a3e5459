//! Patterns whose match needs no automaton.
//!
//! Most rules in real `.htaccess` files test a subject against `.*`,
//! `.`, `^index\.php$` or `^wp-admin`: always true, "not empty", or a
//! literal compared at the start, the end or in full. The general engine
//! answers those correctly but pays for its search machinery on every
//! request; a front-controller block evaluates several of them per
//! request. The pattern's syntax tree (parsed with the same flags the
//! engine compiles it with) says when one of these shapes is all there
//! is, and [`Shape::is_match`] then answers with a comparison.

use regex_syntax::hir::{Class, Hir, HirKind, Look};

/// What a pattern asks of a subject, when that is simple.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Only an automaton can tell.
    General,
    /// Matches every subject (`.*`, `^.*$`, the empty pattern).
    Always,
    /// Matches every subject of at least one byte (`.`, `.+`, `^.`).
    NonEmpty,
    /// The literal bytes, anchored at the start and/or the end or not.
    Literal {
        start: bool,
        end: bool,
        bytes: Box<[u8]>,
    },
}

impl Shape {
    /// The shape of `pattern` (already in the engine's syntax) compiled
    /// without Unicode, with `.` matching a newline and `$` only at the
    /// end, as `regex_engine` compiles every pattern.
    pub fn of(pattern: &str, case_insensitive: bool) -> Shape {
        let parsed = regex_syntax::ParserBuilder::new()
            .unicode(false)
            .utf8(false)
            .dot_matches_new_line(true)
            .case_insensitive(case_insensitive)
            .build()
            .parse(pattern);
        let Ok(hir) = parsed else {
            return Shape::General;
        };
        let mut items = Vec::new();
        flatten(&hir, &mut items);
        let start = items.first().is_some_and(|h| is_look(h, Look::Start));
        if start {
            items.remove(0);
        }
        let end = items.last().is_some_and(|h| is_look(h, Look::End));
        if end {
            items.pop();
        }
        match items.as_slice() {
            [] => Shape::Literal {
                start,
                end,
                bytes: Box::default(),
            },
            [one] => match one.kind() {
                HirKind::Literal(lit) => Shape::Literal {
                    start,
                    end,
                    bytes: lit.0.clone(),
                },
                HirKind::Repetition(rep) if is_any_byte(&rep.sub) => match (rep.min, rep.max) {
                    (0, None) => Shape::Always,
                    (1, None) => Shape::NonEmpty,
                    _ => Shape::General,
                },
                HirKind::Class(_) if is_any_byte(one) && !(start && end) => Shape::NonEmpty,
                _ => Shape::General,
            },
            _ => Shape::General,
        }
    }

    /// Whether `text` matches; only meaningful when the shape is not
    /// [`Shape::General`].
    pub fn is_match(&self, text: &[u8]) -> bool {
        match self {
            Shape::General => unreachable!("a general pattern needs the engine"),
            Shape::Always => true,
            Shape::NonEmpty => !text.is_empty(),
            Shape::Literal { start, end, bytes } => match (start, end) {
                (true, true) => text == &bytes[..],
                (true, false) => text.starts_with(bytes),
                (false, true) => text.ends_with(bytes),
                (false, false) => memchr::memmem::find(text, bytes).is_some(),
            },
        }
    }
}

/// The top-level sequence of a pattern, with groups opened (a group
/// changes what is captured, not what matches).
fn flatten<'a>(hir: &'a Hir, out: &mut Vec<&'a Hir>) {
    match hir.kind() {
        HirKind::Concat(parts) => parts.iter().for_each(|p| flatten(p, out)),
        HirKind::Capture(c) => flatten(&c.sub, out),
        HirKind::Empty => {}
        _ => out.push(hir),
    }
}

fn is_look(hir: &Hir, look: Look) -> bool {
    matches!(hir.kind(), HirKind::Look(l) if *l == look)
}

/// `.` with `DOTALL` in byte mode: every byte.
fn is_any_byte(hir: &Hir) -> bool {
    match hir.kind() {
        HirKind::Class(Class::Bytes(c)) => {
            let r = c.ranges();
            r.len() == 1 && r[0].start() == 0 && r[0].end() == 0xff
        }
        HirKind::Capture(c) => is_any_byte(&c.sub),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(start: bool, end: bool, s: &str) -> Shape {
        Shape::Literal {
            start,
            end,
            bytes: s.as_bytes().into(),
        }
    }

    #[test]
    fn the_shapes_of_common_rules() {
        assert_eq!(Shape::of(".*", false), Shape::Always);
        assert_eq!(Shape::of("^(.*)$", false), Shape::Always);
        assert_eq!(Shape::of("", false), lit(false, false, ""));
        assert_eq!(Shape::of(".", false), Shape::NonEmpty);
        assert_eq!(Shape::of("^(.+)$", false), Shape::NonEmpty);
        assert_eq!(
            Shape::of(r"^index\.php$", false),
            lit(true, true, "index.php")
        );
        assert_eq!(Shape::of("^wp-admin", false), lit(true, false, "wp-admin"));
        assert_eq!(Shape::of(r"\.php$", false), lit(false, true, ".php"));
        assert_eq!(Shape::of("admin", false), lit(false, false, "admin"));
        assert_eq!(Shape::of("^$", false), lit(true, true, ""));
    }

    #[test]
    fn what_stays_with_the_engine() {
        for p in [
            "^.$", "a|b", "^a.c$", r"\w+", ".{2}", "^x*$", "(?m)^a$", r"\bword",
        ] {
            assert_eq!(Shape::of(p, false), Shape::General, "{p}");
        }
        // Case-insensitive letters are classes, not a literal.
        assert_eq!(Shape::of("^abc$", true), Shape::General);
        // ... but no letter, no case.
        assert_eq!(Shape::of(r"^\.$", true), lit(true, true, "."));
    }

    #[test]
    fn answers() {
        assert!(Shape::of(".", false).is_match(b"\n"));
        assert!(!Shape::of(".", false).is_match(b""));
        assert!(Shape::of(r"^index\.php$", false).is_match(b"index.php"));
        assert!(!Shape::of(r"^index\.php$", false).is_match(b"index.php\n"));
        assert!(Shape::of("dmi", false).is_match(b"admin"));
    }
}
