//! Positions and parse errors.
//!
//! Every node and every error carries the file and line it came from, because
//! a broken configuration is only fixable when the message says where, and
//! because Apache's own messages (`Syntax error on line N of FILE`,
//! `FILE:N: <Files> was not closed.`) are built from exactly these two facts.

use std::fmt;
use std::sync::Arc;

/// Where a logical line came from: the file name as the caller gave it and
/// the line number Apache would report for it.
///
/// For a line continued with `\`, Apache reports the number of the *last*
/// physical line it read (one more than that when the continuation ran into
/// the end of the file), not the first; so does this crate.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Origin {
    pub file: Arc<str>,
    pub line: u32,
}

impl Origin {
    pub fn new(file: impl Into<Arc<str>>, line: u32) -> Self {
        Origin {
            file: file.into(),
            line,
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// A syntax error: the input cannot be turned into a tree at all.
///
/// `message` is the text Apache puts in its log for the same input (without
/// Apache's `Syntax error on line N of FILE:` prefix, which depends on the
/// context and is left to the caller); `origin` says where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub origin: Origin,
    pub message: String,
}

impl ParseError {
    pub(crate) fn new(origin: Origin, message: impl Into<String>) -> Self {
        ParseError {
            origin,
            message: message.into(),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.origin, self.message)
    }
}

impl std::error::Error for ParseError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_forms() {
        let o = Origin::new("/srv/.htaccess", 7);
        assert_eq!(o.to_string(), "/srv/.htaccess:7");
        let e = ParseError::new(o, "Line too long");
        assert_eq!(e.to_string(), "/srv/.htaccess:7: Line too long");
    }
}
