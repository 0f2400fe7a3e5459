//! The syntax tree: directives and sections, each with its origin.
//!
//! Nothing here knows what a directive means. The tree keeps what the engine
//! needs to give each directive Apache's meaning later, including the few
//! syntactic facts whose consequences depend on the section type (whether a
//! `>` was missing, how a section was closed, whether it was closed at all):
//! Apache decides those per section, in code that belongs to the engine.

use crate::error::Origin;

/// One entry of a configuration file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    Directive(Directive),
    Section(Section),
}

impl Node {
    /// The name as written: `Header`, or `IfModule` for `<IfModule ...>`.
    pub fn name(&self) -> &str {
        match self {
            Node::Directive(d) => &d.name,
            Node::Section(s) => &s.name,
        }
    }

    pub fn origin(&self) -> &Origin {
        match self {
            Node::Directive(d) => &d.origin,
            Node::Section(s) => &s.origin,
        }
    }

    pub fn raw_args(&self) -> &str {
        match self {
            Node::Directive(d) => &d.raw_args,
            Node::Section(s) => &s.raw_args,
        }
    }
}

/// A one-line directive such as `Header set X-A "a b"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Directive {
    /// The first word, with its case as written (Apache matches names
    /// case-insensitively). It went through `ap_getword_conf`, so it may
    /// have been quoted; one trailing `>` is removed, as Apache does.
    pub name: String,
    /// `raw_args` split by [`crate::split_args`].
    pub args: Vec<String>,
    /// Everything after the name, trimmed, verbatim (`${VAR}` untouched).
    pub raw_args: String,
    pub origin: Origin,
}

/// A container such as `<Files "x">` ... `</Files>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// The first word without its `<` and without one trailing `>`:
    /// `IfModule` for `<IfModule x>` and for `<IfModule>`. As in Apache, the
    /// name is the whole first word, so `<Files>x` is a section named
    /// `Files>x` (Apache then reports `Invalid command '<Files>x'`).
    pub name: String,
    /// `raw_args` split by [`crate::split_args`].
    pub args: Vec<String>,
    /// The text between the name and the last `>` of the line, trimmed.
    /// When the line has no `>` at all (`missing_gt`), the whole rest.
    pub raw_args: String,
    pub children: Vec<Node>,
    /// The line of the opening tag.
    pub origin: Origin,
    /// False when the input ended before the closing tag. Whether that is
    /// an error depends on the section: Apache accepts an unclosed section
    /// whose condition was true (`<IfModule>` and friends), reports
    /// `Expected </IfModule> before end of configuration` for one whose
    /// condition was false, and `FILE:LINE: <Files> was not closed.` for any
    /// other section that is not inside an unclosed true condition.
    pub closed: bool,
    /// True when the opening line has arguments but no `>` (`<Files x`).
    /// Apache reports `<Files> directive missing closing '>'` only when it
    /// processes the section: not for an unknown section name (that is
    /// `Invalid command '<Foo'`) and not inside a false `<IfModule>`.
    /// `<Files` with nothing after the name is *not* missing its `>` for
    /// Apache; it gets `raw_args` "" and "requires additional arguments".
    pub missing_gt: bool,
    /// The closing line, when there is one.
    pub close: Option<CloseTag>,
    /// The body's lines as written, for a section whose body is text and
    /// not configuration (mod_macro's `<Macro>`, [`crate::VERBATIM_SECTIONS`]):
    /// read up to the matching closing line without being parsed, and
    /// `children` is empty.
    pub verbatim: Option<Vec<VerbatimLine>>,
}

/// One logical line of a verbatim section's body (comment lines left out).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerbatimLine {
    pub text: String,
    pub line: u32,
}

/// The line that closed a section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CloseTag {
    /// The whole logical line, trimmed, as written: `</IfModule>`, or
    /// `</IfModule> # end`.
    pub text: String,
    pub origin: Origin,
}

impl Section {
    /// Whether the closing line was exactly `</Name>` (ASCII case ignored)
    /// and nothing else.
    ///
    /// Apache ends the body of a *true* conditional section (`<IfModule>`,
    /// `<IfDefine>`, `<IfFile>`, `<IfDirective>`, `<IfSection>`) only on such
    /// a line; `</IfModule> # end` or `</IfModule >` there is an error
    /// (`</IfModule> without matching <IfModule> section`, observed), while
    /// for other sections, and false conditions, the rest of the closing
    /// line is ignored.
    pub fn closed_exactly(&self) -> bool {
        self.close.as_ref().is_some_and(|c| {
            let t = c.text.as_bytes();
            t.len() == self.name.len() + 3
                && t.starts_with(b"</")
                && t.ends_with(b">")
                && t[2..t.len() - 1].eq_ignore_ascii_case(self.name.as_bytes())
        })
    }
}
