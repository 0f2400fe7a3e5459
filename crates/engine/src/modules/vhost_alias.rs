//! mod_vhost_alias: mass virtual hosting. `VirtualDocumentRoot
//! /srv/www/%0` maps each request below a directory named after the host
//! it asked for (`VirtualDocumentRootIP`: the address it reached), with no
//! `<VirtualHost>` per site; `VirtualScriptAlias` does the same for
//! `/cgi-bin/`, as a `ScriptAlias`.
//!
//! The format's `%N.M` parts pick the host's dot-separated parts (`%0` the
//! whole name, `%1` the first part, `%-1` the last, `%2+` the second and
//! the rest) and their characters (`.M`, `.-M`, `.M+`), lower-cased; a
//! part that does not exist is `_`; `%p` is the port, `%%` a `%`. The
//! translation runs after mod_alias's and before the core's; the request's
//! `DOCUMENT_ROOT` becomes the interpolated directory
//! (`ap_set_document_root`), for `.htaccess` rules, CGI and PHP alike.

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::registry::{Args, Directive, Module, Run, RSRC_CONF};
use crate::request::{Ctx, Status};

/// One server's settings (`mva_sconf_t`): unset, `none`, or a format.
#[derive(Clone, Debug, Default)]
pub struct VhostAliasServer {
    /// `VirtualDocumentRoot`/`VirtualDocumentRootIP`.
    pub doc_root: Option<Option<Format>>,
    /// `VirtualScriptAlias`/`VirtualScriptAliasIP`.
    pub cgi_root: Option<Option<Format>>,
}

/// A format string, interpolated with the host name or the local address.
#[derive(Clone, Debug)]
pub struct Format {
    pub text: String,
    pub by_ip: bool,
}

impl VhostAliasServer {
    /// `mva_merge_server_config`: a virtual host's setting, else the main
    /// server's.
    pub fn merge(main: &VhostAliasServer, vhost: &VhostAliasServer) -> VhostAliasServer {
        VhostAliasServer {
            doc_root: vhost.doc_root.clone().or_else(|| main.doc_root.clone()),
            cgi_root: vhost.cgi_root.clone().or_else(|| main.cgi_root.clone()),
        }
    }
}

/// `vhost_alias_set`: an absolute path with a valid format, or `none`.
fn run_set(w: &mut Walker<'_>, inv: &Invocation<'_>, _c: &mut DirConf) -> Result<(), String> {
    let map = &inv.words[0];
    let name = inv.name.to_ascii_lowercase();
    let by_ip = name.ends_with("ip");
    let value = if !map.starts_with('/') {
        if !map.eq_ignore_ascii_case("none") {
            return Err("format string must be an absolute path, or 'none'".into());
        }
        None
    } else {
        check_format(map)?;
        Some(Format {
            text: map.clone(),
            by_ip,
        })
    };
    let conf = &mut w.server()?.modules.vhost_alias;
    if name.starts_with("virtualdocumentroot") {
        conf.doc_root = Some(value);
    } else {
        conf.cgi_root = Some(value);
    }
    Ok(())
}

/// The format's `%` specifiers: `%%`, `%p`, or `%[-]N[+][.[-]M[+]]`.
fn check_format(map: &str) -> Result<(), String> {
    let b = map.as_bytes();
    let mut i = 0;
    let bad = || Err("syntax error in format string".to_string());
    while i < b.len() {
        let c = b[i];
        i += 1;
        if c != b'%' {
            continue;
        }
        if matches!(b.get(i), Some(b'p' | b'%')) {
            i += 1;
            continue;
        }
        for part in 0..2 {
            if part == 1 {
                if b.get(i) != Some(&b'.') {
                    break;
                }
                i += 1;
            }
            if b.get(i) == Some(&b'-') {
                i += 1;
            }
            if !b.get(i).is_some_and(u8::is_ascii_digit) {
                return bad();
            }
            i += 1;
            if b.get(i) == Some(&b'+') {
                i += 1;
            }
        }
    }
    Ok(())
}

/// `mva_translate`: the URI below the interpolated directory.
pub fn translate(ctx: &mut Ctx<'_>) -> Result<bool, Status> {
    // The site outlives the request: its formats are borrowed, not copied.
    let conf = &ctx.site.modules.vhost_alias;
    let cgi_format = conf.cgi_root.as_ref().and_then(Option::as_ref);
    let doc_format = conf.doc_root.as_ref().and_then(Option::as_ref);
    if cgi_format.is_none() && doc_format.is_none() {
        return Ok(false);
    }
    // `/cgi-bin/…` (after any leading slashes) with VirtualScriptAlias.
    let cgi = cgi_format.and_then(|_| {
        let at = ctx.uri.find("cgi-bin/")?;
        (at == ctx.uri.len() - ctx.uri.trim_start_matches('/').len()).then_some(at)
    });
    let (format, uri_from) = match cgi {
        Some(at) => (cgi_format, at + "cgi-bin".len()),
        None if ctx.uri.starts_with('/') => (doc_format, 0),
        None => return Ok(false),
    };
    let Some(format) = format else {
        return Ok(false);
    };
    let name = if format.by_ip {
        ctx.req.local.ip().to_string()
    } else {
        ctx.server_name()
    };
    let root = interpolate(&format.text, &name, ctx.server_port());
    ctx.filename = format!("{root}{}", &ctx.uri[uri_from..]);
    ctx.document_root = Some(root.clone());
    ctx.context_document_root = Some(root);
    if cgi.is_some() {
        // As a ScriptAlias (mod_cgi's `is_scriptaliased`).
        ctx.handler = Some("cgi-script".into());
        ctx.script_aliased = true;
        ctx.context_prefix = Some("/cgi-bin".into());
    }
    Ok(true)
}

/// `vhost_alias_interpolate`: the directory `map` names for `name`, with
/// no slash at its end.
fn interpolate(map: &str, name: &str, port: u16) -> String {
    // The boundaries of the name's parts: before the first, each dot (at
    // most 19), after the last.
    let bytes = name.as_bytes();
    let mut dots: Vec<isize> = vec![-1];
    for (i, &c) in bytes.iter().enumerate() {
        if c == b'.' && dots.len() < 19 {
            dots.push(i as isize);
        }
    }
    let ndots = dots.len();
    dots.push(bytes.len() as isize);
    let m = map.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(map.len() + name.len());
    let mut i = 0;
    while i < m.len() {
        if m[i] != b'%' {
            out.push(m[i]);
            i += 1;
            continue;
        }
        i += 1;
        match m.get(i) {
            Some(b'%') => {
                out.push(b'%');
                i += 1;
                continue;
            }
            Some(b'p') => {
                out.extend_from_slice(port.to_string().as_bytes());
                i += 1;
                continue;
            }
            _ => {}
        }
        // `%[-]N[+][.[-]M[+]]`, checked when read.
        let mut take = |c: u8| {
            let hit = m.get(i) == Some(&c);
            if hit {
                i += 1;
            }
            hit
        };
        let n_dash = take(b'-');
        let n = usize::from(m.get(i).map_or(0, |d| d - b'0'));
        i += 1;
        let mut take = |c: u8| {
            let hit = m.get(i) == Some(&c);
            if hit {
                i += 1;
            }
            hit
        };
        let n_plus = take(b'+');
        let (mut m_val, mut m_dash, mut m_plus) = (0usize, false, false);
        if take(b'.') {
            m_dash = take(b'-');
            m_val = usize::from(m.get(i).map_or(0, |d| d - b'0'));
            i += 1;
            m_plus = m.get(i) == Some(&b'+');
            if m_plus {
                i += 1;
            }
        }
        // Byte offsets into `name` of the part chosen.
        let (mut start, mut end): (isize, isize) = (dots[0] + 1, dots[ndots]);
        let mut missing = false;
        if n != 0 {
            if n > ndots {
                missing = true;
            } else if !n_dash {
                start = dots[n - 1] + 1;
                if !n_plus {
                    end = dots[n];
                }
            } else {
                if !n_plus {
                    start = dots[ndots - n] + 1;
                }
                end = dots[ndots - n + 1];
            }
        }
        if !missing && m_val != 0 {
            let len = end - start;
            if m_val as isize > len {
                missing = true;
            } else if !m_dash {
                start += m_val as isize - 1;
                if !m_plus {
                    end = start + 1;
                }
            } else {
                if !m_plus {
                    start = end - m_val as isize;
                }
                end = end - m_val as isize + 1;
            }
        }
        if missing {
            out.push(b'_');
        } else {
            out.extend(
                bytes[start as usize..end as usize]
                    .iter()
                    .map(u8::to_ascii_lowercase),
            );
        }
    }
    if out.last() == Some(&b'/') {
        out.pop();
    }
    String::from_utf8_lossy(&out).into_owned()
}

static DIRECTIVES: &[Directive] = &[
    Directive {
        name: "VirtualScriptAlias",
        args: Args::Take1,
        req_override: RSRC_CONF,
        about: "how to create a ScriptAlias based on the host",
        run: Run::Handler(run_set),
    },
    Directive {
        name: "VirtualDocumentRoot",
        args: Args::Take1,
        req_override: RSRC_CONF,
        about: "how to create the DocumentRoot based on the host",
        run: Run::Handler(run_set),
    },
    Directive {
        name: "VirtualScriptAliasIP",
        args: Args::Take1,
        req_override: RSRC_CONF,
        about: "how to create a ScriptAlias based on the host",
        run: Run::Handler(run_set),
    },
    Directive {
        name: "VirtualDocumentRootIP",
        args: Args::Take1,
        req_override: RSRC_CONF,
        about: "how to create the DocumentRoot based on the host",
        run: Run::Handler(run_set),
    },
];

pub static MODULE: Module = Module {
    source: "mod_vhost_alias.c",
    identifier: "vhost_alias_module",
    builtin: false,
    directives: DIRECTIVES,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_of_the_name_as_mod_vhost_alias_picks_them() {
        let name = "www.Example.co.uk";
        let i = |map: &str| interpolate(map, name, 8080);
        assert_eq!(i("/srv/%0"), "/srv/www.example.co.uk");
        assert_eq!(i("/srv/%1"), "/srv/www");
        assert_eq!(i("/srv/%2"), "/srv/example");
        assert_eq!(i("/srv/%-1"), "/srv/uk");
        assert_eq!(i("/srv/%-2"), "/srv/co");
        assert_eq!(i("/srv/%2+"), "/srv/example.co.uk");
        assert_eq!(i("/srv/%-2+"), "/srv/www.example.co");
        assert_eq!(i("/srv/%5"), "/srv/_");
        assert_eq!(i("/srv/%2.1/%2.2/%2.3+"), "/srv/e/x/ample");
        assert_eq!(i("/srv/%2.-1"), "/srv/e");
        assert_eq!(i("/srv/%2.-2+"), "/srv/exampl");
        assert_eq!(i("/srv/%2.9"), "/srv/_");
        assert_eq!(i("/srv/%p/%%/"), "/srv/8080/%");
        assert_eq!(i("/srv/%0/"), "/srv/www.example.co.uk");
    }

    #[test]
    fn formats_are_checked_as_they_are_read() {
        assert!(check_format("/srv/%0/%-1.2+/%p/%%").is_ok());
        assert!(check_format("/srv/%x").is_err());
        assert!(check_format("/srv/%1.x").is_err());
        assert!(check_format("/srv/%").is_err());
    }
}
