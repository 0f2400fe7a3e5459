//! mod_macro: `<Macro VHost $host $dir> … </Macro>` defines a piece of
//! configuration with parameters, `Use VHost example.com /srv/example`
//! puts it in place of the `Use` line, `UndefMacro VHost` forgets it.
//! Hosting configurations template their virtual hosts this way.
//!
//! As the module, at read time (`EXEC_ON_READ`), in order with `Define`,
//! `Include` and the `<If…>` sections:
//!
//! * the body is text, read up to the matching `</Macro>` without being
//!   parsed (`htaccel_conf` keeps it verbatim); names are case-blind;
//! * a use replaces, on each line, the earliest parameter name found (the
//!   longest where two start at the same place) and goes on after the
//!   value; a name that starts with `@` is replaced by its value in double
//!   quotes, `"` and `\` escaped; a line that would outgrow Apache's 8 KB
//!   line is an error;
//! * the result is read as configuration where the `Use` line stands, its
//!   lines numbered within the macro and its "file" named
//!   `macro 'name' (defined on line N of "F") used on line M of "G"`, as
//!   Apache names it in errors; that name is also how a macro using itself
//!   is caught;
//! * the warnings Apache gives about parameter names, unused parameters,
//!   empty bodies, empty values and redefinitions are given.
//!
//! Two differences (docs/deviations.md):
//!
//! * Apache reads a macro's lines and then the rest of the enclosing file
//!   as one stream, so a section may open in a macro and close after its
//!   `Use`; here a macro's expansion must be whole sections, else the
//!   configuration does not start, saying where.
//! * In an `.htaccess` file, macros of the server configuration are used
//!   as in Apache, and a macro defined there is that file's own. Apache
//!   keeps it for the process: a later `.htaccess` read by the same child
//!   process could use it, which depends on which process served what.

use crate::config::{ConfigError, Invocation, Walker};
use crate::dirconf::DirConf;
use crate::registry::{Args, Directive, Module, Run, EXEC_ON_READ, OR_ALL};
use std::sync::Arc;

/// Apache's `MAX_STRING_LEN`: how long a substituted line may grow.
const MAX_LINE: usize = 8192;
/// The characters that start a parameter name (`ARG_PREFIX`).
const PREFIXES: &[u8] = b"$%@";

/// The macros defined so far, by lower-case name (process-wide in Apache,
/// defined as the configuration is read).
pub type MacroTable = std::collections::HashMap<String, Arc<Macro>>;

/// A defined macro.
#[derive(Debug)]
pub struct Macro {
    /// Lower-case, as uses look it up.
    name: String,
    params: Vec<String>,
    /// The body's lines as written, each with its line end.
    lines: Vec<String>,
    /// `defined on line N of "FILE"`.
    location: String,
}

const CONTEXTS: u32 = OR_ALL | EXEC_ON_READ;

pub static DIRECTIVES: &[Directive] = &[
    Directive {
        name: "<Macro",
        args: Args::Section,
        req_override: CONTEXTS,
        about: "Beginning of a macro definition section.",
        run: Run::Handler(define),
    },
    Directive {
        name: "Use",
        args: Args::Raw,
        req_override: CONTEXTS,
        about: "Use of a macro.",
        run: Run::Handler(use_macro),
    },
    Directive {
        name: "UndefMacro",
        args: Args::Take1,
        req_override: CONTEXTS,
        about: "Remove a macro definition.",
        run: Run::Handler(undefine),
    },
];

pub static MODULE: Module = Module {
    source: "mod_macro.c",
    identifier: "macro_module",
    builtin: false,
    directives: DIRECTIVES,
};

/// `<Macro name params…>`.
fn define(w: &mut Walker<'_>, inv: &Invocation<'_>, _c: &mut DirConf) -> Result<(), String> {
    if inv.raw.trim().is_empty() {
        return Err("<Macro macro definition: empty name".into());
    }
    let mut words = htaccel_conf::split_args(&inv.raw).into_iter();
    let name = match words.next() {
        Some(n) if !n.is_empty() => n.to_ascii_lowercase(),
        _ => return Err("<Macro macro definition: name not found".into()),
    };
    let location = format!(
        "defined on line {} of \"{}\"",
        inv.origin.line, inv.origin.file
    );
    let here = format!("macro '{name}' ({location})");
    if let Some(old) = w.env.read.macros.get(&name) {
        let warning = format!(
            "AH02802: macro '{name}' multiply defined: {}, redefined on line {} of \"{}\"",
            old.location, inv.origin.line, inv.origin.file
        );
        w.warn(inv.origin, warning);
    }
    if name
        .as_bytes()
        .first()
        .is_some_and(|b| PREFIXES.contains(b))
    {
        w.warn(
            inv.origin,
            format!("AH02803: {here} better prefix a macro name with any of '$%@'"),
        );
    }
    let params: Vec<String> = words.collect();
    check_params(w, inv, &here, &params)?;
    let body = inv.verbatim.unwrap_or_default();
    // Apache's log shows the message's line break and tab escaped, as
    // `\n\t`: so does this one.
    if !inv.closed {
        return Err(format!(
            "{here}\\n\\tcontents error: expected token not found: </Macro>"
        ));
    }
    let m = Macro {
        name: name.clone(),
        params,
        lines: body.iter().map(|l| format!("{}\n", l.text)).collect(),
        location,
    };
    if m.lines.is_empty() {
        w.warn(inv.origin, format!("AH02799: {here}: empty contents!"));
    } else {
        let mut used = vec![false; m.params.len()];
        for (i, line) in m.lines.iter().enumerate() {
            expand_line(line, &m.params, &m.params, &mut used).map_err(|e| {
                format!(
                    "{here}\\n\\tcontents checking error: while processing line {} of {here} {e}",
                    i + 1
                )
            })?;
        }
        for (i, p) in m.params.iter().enumerate() {
            if !used[i] {
                w.warn(
                    inv.origin,
                    format!("AH02800: {here}: argument '{p}' (#{}) never used", i + 1),
                );
            }
        }
    }
    w.env.read.macros.insert(name, Arc::new(m));
    Ok(())
}

/// `check_macro_arguments`: errors for an empty or repeated name,
/// warnings for a name without a prefix and for names one of which
/// begins the other.
fn check_params(
    w: &mut Walker<'_>,
    inv: &Invocation<'_>,
    here: &str,
    params: &[String],
) -> Result<(), String> {
    for (i, a) in params.iter().enumerate() {
        if a.is_empty() {
            return Err(format!("{here}: empty argument #{} name", i + 1));
        }
        if !a.as_bytes().first().is_some_and(|b| PREFIXES.contains(b)) {
            w.warn(inv.origin, format!(
                "AH02796: {here} argument name '{a}' (#{}) without expected prefix, better prefix argument names with one of '$%@'.",
                i + 1
            ));
        }
        for (j, b) in params.iter().enumerate().skip(i + 1) {
            if a == b {
                return Err(format!(
                    "argument name conflict in {here}: argument '{a}': #{} and #{}, change argument names!",
                    i + 1,
                    j + 1
                ));
            }
            if !b.is_empty() && (a.starts_with(b.as_str()) || b.starts_with(a.as_str())) {
                w.warn(inv.origin, format!(
                    "AH02797: {here}: argument name prefix conflict ({a} #{} and {b} #{}), be careful about your macro definition!",
                    i + 1,
                    j + 1
                ));
            }
        }
    }
    Ok(())
}

/// `Use name values…`.
fn use_macro(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    let mut words = htaccel_conf::split_args(&inv.raw).into_iter();
    if w.env.read.macros.is_empty() {
        return Err("no macro defined before Use".into());
    }
    let name = match words.next() {
        Some(n) if !n.is_empty() => n.to_ascii_lowercase(),
        _ => return Err("no macro name specified with Use".into()),
    };
    let Some(m) = w.env.read.macros.get(&name).cloned() else {
        return Err(format!("macro '{name}' undefined"));
    };
    if inv.origin.file.contains(&format!("macro '{}'", m.name)) {
        return Err(format!("recursive use of macro '{}' is invalid", m.name));
    }
    let values: Vec<String> = words.collect();
    if values.len() != m.params.len() {
        return Err(format!(
            "macro '{}' ({}) used with {} arguments instead of {}",
            m.name,
            m.location,
            values.len(),
            m.params.len()
        ));
    }
    let here = format!(
        "macro '{}' ({}) used on line {} of \"{}\"",
        m.name, m.location, inv.origin.line, inv.origin.file
    );
    for (i, v) in values.iter().enumerate() {
        if v.is_empty() {
            w.warn(
                inv.origin,
                format!("AH02798: {here}: empty argument #{}", i + 1),
            );
        }
    }
    let mut text = String::new();
    let mut used = vec![false; m.params.len()];
    for (i, line) in m.lines.iter().enumerate() {
        let expanded = expand_line(line, &m.params, &values, &mut used).map_err(|e| {
            format!(
                "{here} error while substituting: while processing line {} of macro '{}' ({}) {e}",
                i + 1,
                m.name,
                m.location
            )
        })?;
        text.push_str(&expanded);
    }
    // Read where the `Use` line stands: what goes wrong inside is reported
    // at its line of the macro, as from a file of that name.
    let nodes = match htaccel_conf::parse_str(&text, &here, &htaccel_conf::ParseOptions::default())
    {
        Ok(nodes) => nodes,
        Err(e) => {
            return Err(w.nested(ConfigError {
                origin: e.origin,
                message: e.message,
                read_time: true,
            }))
        }
    };
    w.walk(&nodes, c).map_err(|e| w.nested(e))
}

/// `UndefMacro name`.
fn undefine(w: &mut Walker<'_>, inv: &Invocation<'_>, _c: &mut DirConf) -> Result<(), String> {
    if w.env.read.macros.is_empty() {
        return Err("no macro defined before UndefMacro".into());
    }
    let name = inv.words[0].to_ascii_lowercase();
    if name.is_empty() {
        return Err("no macro name specified with UndefMacro".into());
    }
    if w.env.read.macros.remove(&name).is_none() {
        return Err(format!("cannot remove undefined macro '{name}'"));
    }
    Ok(())
}

/// One line of a macro with `params` replaced by `values`
/// (`substitute_macro_args`), noting in `used` which names were met.
fn expand_line(
    line: &str,
    params: &[String],
    values: &[String],
    used: &mut [bool],
) -> Result<String, &'static str> {
    let mut buf = line.as_bytes().to_vec();
    let mut at = 0;
    while let Some((pos, i)) = next_param(&buf[at..], params) {
        let pos = at + pos;
        let (name, value) = (params[i].as_bytes(), values[i].as_bytes());
        if name != value {
            let replacement = if name[0] == b'@' {
                quoted(value)
            } else {
                value.to_vec()
            };
            if buf.len() - name.len() + replacement.len() >= MAX_LINE {
                return Err("cannot substitute, buffer size too small");
            }
            buf.splice(pos..pos + name.len(), replacement);
        }
        // On from the value's length, quotes or not, as the module does.
        at = pos + value.len();
        used[i] = true;
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// The earliest parameter in `text`, the longest of those starting there:
/// its offset and index.
fn next_param(text: &[u8], params: &[String]) -> Option<(usize, usize)> {
    let mut best: Option<(usize, usize)> = None;
    for (i, p) in params.iter().enumerate() {
        let Some(pos) = memchr::memmem::find(text, p.as_bytes()) else {
            continue;
        };
        let better = match best {
            None => true,
            Some((b, j)) => pos < b || (pos == b && params[j].len() < p.len()),
        };
        if better {
            best = Some((pos, i));
        }
    }
    best
}

/// `"value"` with `"` and `\` escaped by `\`.
fn quoted(value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.len() + 2);
    out.push(b'"');
    for &b in value {
        if b == b'"' || b == b'\\' {
            out.push(b'\\');
        }
        out.push(b);
    }
    out.push(b'"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_support::strings as s;

    #[test]
    fn substitutes_as_the_module_does() {
        let params = s(&["$host", "$hostname", "@dir"]);
        let values = s(&["a.test", "b.test", "/srv/x \"y\""]);
        let mut used = vec![false; 3];
        let out = expand_line(
            "ServerName $hostname $host\nDocumentRoot @dir\n",
            &params,
            &values,
            &mut used,
        )
        .unwrap();
        assert_eq!(
            out,
            "ServerName b.test a.test\nDocumentRoot \"/srv/x \\\"y\\\"\"\n"
        );
        assert_eq!(used, vec![true, true, true]);
    }

    #[test]
    fn a_value_is_not_searched_again() {
        let params = s(&["$a", "$b"]);
        let values = s(&["$b", "x"]);
        let mut used = vec![false; 2];
        assert_eq!(
            expand_line("$a $b\n", &params, &values, &mut used).unwrap(),
            "$b x\n"
        );
    }

    #[test]
    fn lines_stay_within_apaches_length() {
        let params = s(&["$a"]);
        let values = vec!["x".repeat(MAX_LINE)];
        let mut used = vec![false];
        assert!(expand_line("$a\n", &params, &values, &mut used).is_err());
    }
}
