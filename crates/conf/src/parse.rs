//! Building the tree from logical lines, as Apache's `ap_build_config_sub`
//! does.
//!
//! Apache decides what a line is from its first word alone (after
//! `ap_getword_conf`, so even a quoted `"<Files"` opens a section): `<Name`
//! opens a section, `</Name>` closes the innermost one, anything else is a
//! directive. The error texts below are Apache's, because users search for
//! them. Apache's parent name in `Expected </X> but saw </Y>` is the
//! registered spelling of the directive; this crate knows no registry and
//! uses the spelling of the opening tag.

use std::sync::Arc;

use crate::ast::{CloseTag, Directive, Node, Section};
use crate::error::{Origin, ParseError};
use crate::lex::{Lines, LogicalLine};
use crate::text::bytes_to_string;
use crate::words::{getword, split_bytes, trim};
use crate::ParseOptions;

/// How deep sections may nest. Apache has no limit of its own (it recurses
/// on the C stack); this one keeps recursive consumers of the tree, and
/// dropping it, safe from hostile input. Real files nest a handful deep.
pub const MAX_NESTING: usize = 256;

pub(crate) fn parse(
    input: &[u8],
    file: &str,
    opts: &ParseOptions,
) -> Result<Vec<Node>, ParseError> {
    let file: Arc<str> = Arc::from(file);
    let origin = |line: u32| Origin {
        file: file.clone(),
        line,
    };
    let mut lines = Lines::new(input, opts.max_line_len);
    let mut root: Vec<Node> = Vec::new();
    let mut open: Vec<Section> = Vec::new();

    while let Some(line) = next_line(&mut lines, &file)? {
        let text = &line.text[..];
        if text.is_empty() || text[0] == b'#' {
            continue;
        }
        let mut pos = 0;
        let mut word = getword(text, &mut pos);
        if word.is_empty() {
            // A line whose first word is an empty quoted string: Apache
            // skips it silently.
            continue;
        }
        let rest = trim(&text[pos..]);
        if word.get(1) != Some(&b'/') && word.last() == Some(&b'>') {
            word.pop();
        }

        match (word.first(), word.get(1)) {
            (Some(b'<'), Some(b'/')) => {
                let closed = close_section(&mut open, &word, text, origin(line.line))?;
                attach(&mut root, &mut open, Node::Section(closed));
            }
            (Some(b'<'), _) => {
                if open.len() >= MAX_NESTING {
                    return Err(ParseError::new(
                        origin(line.line),
                        format!("Sections nested more than {MAX_NESTING} deep"),
                    ));
                }
                let mut section = open_section(&word[1..], rest, origin(line.line));
                let verbatim = crate::VERBATIM_SECTIONS
                    .iter()
                    .any(|v| v.as_bytes().eq_ignore_ascii_case(&word[1..]));
                if verbatim {
                    read_verbatim(&mut lines, &mut section, &file)?;
                    attach(&mut root, &mut open, Node::Section(section));
                } else {
                    open.push(section);
                }
            }
            _ => {
                let directive = Directive {
                    name: bytes_to_string(&word),
                    args: to_strings(split_bytes(rest)),
                    raw_args: bytes_to_string(rest),
                    origin: origin(line.line),
                };
                attach(&mut root, &mut open, Node::Directive(directive));
            }
        }
    }

    // End of input with sections still open: keep them, marked unclosed.
    while let Some(section) = open.pop() {
        attach(&mut root, &mut open, Node::Section(section));
    }
    Ok(root)
}

/// The body of a verbatim section, up to the closing line that matches its
/// opening one (sections of the same name nest), as mod_macro reads a
/// `<Macro>`: logical lines, comment lines dropped, the closing line
/// recognised by its first word alone (`</Macro>`, any case). The section
/// stays unclosed when the input ends first.
fn read_verbatim(
    lines: &mut Lines<'_>,
    section: &mut Section,
    file: &Arc<str>,
) -> Result<(), ParseError> {
    let open_tag = format!("<{}", section.name).into_bytes();
    let close_tag = format!("</{}>", section.name).into_bytes();
    let mut body = Vec::new();
    let mut nesting = 1usize;
    while let Some(line) = next_line(lines, file)? {
        let text = &line.text[..];
        if text.first() == Some(&b'#') {
            continue;
        }
        let mut pos = 0;
        let first = getword(text, &mut pos);
        if first.eq_ignore_ascii_case(&close_tag) {
            nesting -= 1;
            if nesting == 0 {
                section.closed = true;
                section.close = Some(CloseTag {
                    text: bytes_to_string(text),
                    origin: Origin {
                        file: file.clone(),
                        line: line.line,
                    },
                });
                break;
            }
        } else if first.eq_ignore_ascii_case(&open_tag) {
            nesting += 1;
        }
        body.push(crate::ast::VerbatimLine {
            text: bytes_to_string(text),
            line: line.line,
        });
    }
    section.verbatim = Some(body);
    Ok(())
}

/// The next logical line of `file`, or Apache's error for one too long.
fn next_line(lines: &mut Lines<'_>, file: &Arc<str>) -> Result<Option<LogicalLine>, ParseError> {
    lines.next_line().map_err(|e| {
        ParseError::new(
            Origin {
                file: file.clone(),
                line: e.line,
            },
            format!("Error reading {file} at line {}: Line too long", e.line),
        )
    })
}

fn open_section(name: &[u8], rest: &[u8], origin: Origin) -> Section {
    // Apache hands the section handler the rest of the line, or ">" when
    // there is none; the handler cuts at the last '>'.
    let (raw, missing_gt) = if rest.is_empty() {
        (&b""[..], false)
    } else {
        match rest.iter().rposition(|&b| b == b'>') {
            Some(gt) => (trim(&rest[..gt]), false),
            None => (rest, true),
        }
    };
    Section {
        name: bytes_to_string(name),
        args: to_strings(split_bytes(raw)),
        raw_args: bytes_to_string(raw),
        children: Vec::new(),
        origin,
        closed: false,
        missing_gt,
        close: None,
        verbatim: None,
    }
}

/// Handles a line whose first word starts with `</`; returns the section it
/// closes. On error the parse is over, so the stack is left as it is.
fn close_section(
    open: &mut Vec<Section>,
    word: &[u8],
    text: &[u8],
    origin: Origin,
) -> Result<Section, ParseError> {
    let shown = bytes_to_string(word);
    let Some(mut section) = open.pop() else {
        let name = bytes_to_string(&word[2..]);
        return Err(ParseError::new(
            origin,
            format!("{shown} without matching <{name} section"),
        ));
    };
    let Some(name) = word.strip_prefix(b"</").and_then(|w| w.strip_suffix(b">")) else {
        return Err(ParseError::new(
            origin,
            format!("{shown}> directive missing closing '>'"),
        ));
    };
    if !name.eq_ignore_ascii_case(section.name.as_bytes()) {
        return Err(ParseError::new(
            origin,
            format!("Expected </{}> but saw {shown}", section.name),
        ));
    }
    section.closed = true;
    section.close = Some(CloseTag {
        text: bytes_to_string(text),
        origin,
    });
    Ok(section)
}

fn attach(root: &mut Vec<Node>, open: &mut [Section], node: Node) {
    match open.last_mut() {
        Some(parent) => parent.children.push(node),
        None => root.push(node),
    }
}

fn to_strings(words: Vec<Vec<u8>>) -> Vec<String> {
    words.iter().map(|w| bytes_to_string(w)).collect()
}
