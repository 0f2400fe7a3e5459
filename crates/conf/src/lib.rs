//! Apache httpd 2.4 configuration syntax: `.htaccess` files and the main
//! configuration, read into a tree of directives and sections that remembers
//! file and line, plus the file selection of `Include`.
//!
//! This crate gives no directive any meaning. It exists so that everything
//! Apache decides *before* meaning (where a line ends, how words split, how
//! sections nest, when a line is too long, which files an `Include` reads)
//! is decided once, the way Apache decides it, and tested against it. The
//! engine then interprets the tree.
//!
//! What is deliberately left to the engine, because Apache decides it per
//! directive or per section:
//! * `${VAR}` substitution (`Define` is order-dependent): text is verbatim;
//! * whether an unclosed section, a missing `>` or a closing line with
//!   extra text is an error (see [`Section`]);
//! * the registered spelling of names in messages.
//!
//! Where the tree alone cannot follow Apache: Apache reads the body of a
//! true `<IfModule>` (and the other `<If...>` conditionals) as a separate
//! nested file, so a stray `</Files>` there is reported as
//! `</Files> without matching <Files> section` by Apache and as
//! `Expected </IfModule> but saw </Files>` here; and the body of a false
//! one is only scanned for tags. Both are errors either way; only the text
//! differs.

mod ast;
mod error;
pub mod fnmatch;
mod include;
mod lex;
mod parse;
mod text;
mod words;

use std::path::Path;

pub use ast::{CloseTag, Directive, Node, Section, VerbatimLine};

/// Sections whose body is read as text up to their closing line, as the
/// module that owns them reads it (`<Macro>`: mod_macro's
/// `get_lines_till_end_token`, which counts nested `<Macro` lines).
pub const VERBATIM_SECTIONS: &[&str] = &["Macro"];
pub use error::{Origin, ParseError};
pub use include::include_paths;
pub use parse::MAX_NESTING;
pub use text::{bytes_to_str, bytes_to_string, string_to_bytes, vec_to_string};
pub use words::{getword_conf, split_args};

/// Limits for one parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseOptions {
    /// Apache's maximum logical line length (its `max_len`): the bytes of a
    /// logical line, joined continuations included, *counting the CR/LF
    /// that ends it*. 16 MiB for the main configuration, 8192 for
    /// `.htaccess`, where it means 8191 bytes before the LF.
    pub max_line_len: usize,
}

impl ParseOptions {
    /// The main configuration's limit (Apache's `VARBUF_MAX_LEN`).
    pub const MAIN_MAX_LINE_LEN: usize = 16 * 1024 * 1024;
    /// The `.htaccess` limit (Apache's `HUGE_STRING_LEN`).
    pub const HTACCESS_MAX_LINE_LEN: usize = 8192;

    /// Options for a `.htaccess` file: a physical line of more than 8191
    /// bytes before its LF (a CR counts) is `Line too long`.
    pub fn htaccess() -> Self {
        ParseOptions {
            max_line_len: Self::HTACCESS_MAX_LINE_LEN,
        }
    }
}

impl Default for ParseOptions {
    /// Options for the main configuration and included files.
    fn default() -> Self {
        ParseOptions {
            max_line_len: Self::MAIN_MAX_LINE_LEN,
        }
    }
}

/// Parses configuration text. `file` is the name used in origins and
/// messages.
pub fn parse_str(text: &str, file: &str, opts: &ParseOptions) -> Result<Vec<Node>, ParseError> {
    parse::parse(text.as_bytes(), file, opts)
}

/// Parses configuration bytes as Apache does (bytes, not characters).
/// Strings in the tree are decoded as [`bytes_to_string`] describes: UTF-8
/// stays UTF-8 (a BOM is kept, as Apache on Unix keeps it, and becomes part
/// of the first word), other bytes map to private-use characters that
/// [`string_to_bytes`] turns back into the original bytes.
pub fn parse_bytes(bytes: &[u8], file: &str, opts: &ParseOptions) -> Result<Vec<Node>, ParseError> {
    parse::parse(bytes, file, opts)
}

/// Reads and parses a file, named in origins as `path` displays.
///
/// Fails like Apache's `ap_process_resource_config`:
/// `Could not open configuration file PATH: REASON`, also for anything that
/// is not a regular file (except `/dev/null`), where Apache's reason is
/// `Bad file descriptor`. Such errors have line 0.
pub fn parse_file(path: &Path, opts: &ParseOptions) -> Result<Vec<Node>, ParseError> {
    let name = path.to_string_lossy();
    let fail = |reason: String| {
        ParseError::new(
            Origin::new(&*name, 0),
            format!("Could not open configuration file {name}: {reason}"),
        )
    };
    let meta = std::fs::metadata(path).map_err(|e| fail(include::os_error_text(&e)))?;
    if !meta.is_file() && path != Path::new("/dev/null") {
        return Err(fail("Bad file descriptor".into()));
    }
    let bytes = std::fs::read(path).map_err(|e| fail(include::os_error_text(&e)))?;
    parse_bytes(&bytes, &name, opts)
}

#[cfg(test)]
mod tests;
