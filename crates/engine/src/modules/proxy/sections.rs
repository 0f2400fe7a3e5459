//! `<Proxy>` and `<ProxyMatch>`: per-directory settings for proxied
//! requests (access control, mostly: `<Proxy *> Require all granted`),
//! matched against the URL a request is proxied to.
//!
//! As mod_proxy's `proxy_walk`: a proxied request (`proxy:URL`) has no
//! directory walk; its settings are the server's, merged with every
//! section whose URL matches, in configuration order (the main server's
//! before a virtual host's). A URL with a wildcard matches as
//! `apr_fnmatch` without flags (a `*` crosses `/`); one without is a
//! prefix (compared with case); `<ProxyMatch>`'s is a regex.
//! Then the `<Location>` walk runs, as for any request.

use crate::config::server::ProxySection;
use crate::config::{Invocation, SectionKind, Walker};
use crate::dirconf::DirConf;
use crate::modules::core::sections::{
    compile_regex, first_arg, not_within, require_closed, walk_section_body,
};
use crate::request::{Ctx, Status};
use std::sync::Arc;

/// `<Proxy URL>` and `<ProxyMatch REGEX>`.
pub fn section(w: &mut Walker<'_>, inv: &Invocation<'_>, _c: &mut DirConf) -> Result<(), String> {
    not_within(
        w,
        inv,
        &[
            SectionKind::Directory,
            SectionKind::Location,
            SectionKind::Files,
            SectionKind::Proxy,
            SectionKind::Limit,
        ],
    )?;
    require_closed(inv)?;
    // (A section's name comes without its `<`.)
    let is_match = inv.name.eq_ignore_ascii_case("ProxyMatch");
    let mut url = first_arg(inv)?;
    if url.len() >= 6 && url[..6].eq_ignore_ascii_case("proxy:") {
        url = url[6..].to_string();
    }
    let regex = if is_match {
        Some(compile_regex(&url)?)
    } else {
        None
    };
    // Words after the URL are the parameters of the worker it names.
    if inv.words.len() > 1 {
        let name = inv.name;
        return Err(if is_match {
            "Multiple <ProxyMatch> arguments not (yet) supported.".into()
        } else if has_wildcard(&url) {
            format!("<{name}> arguments are not supported for wildchar url.")
        } else if !url.contains(':') {
            format!("<{name}> arguments are not supported for non url.")
        } else {
            format!("<{name}> arguments (worker parameters) are not supported by htaccel yet")
        });
    }
    let conf = walk_section_body(w, inv, SectionKind::Proxy, url.clone())?;
    w.server()?.proxies.push(ProxySection {
        url,
        regex,
        conf: Arc::new(conf),
    });
    Ok(())
}

/// `proxy_map_location`: a proxied request's settings are the server's
/// with every matching section's (`proxy_walk`), and it has no directory
/// walk (`Ok(true)`: mapped).
pub fn map_to_storage(ctx: &mut Ctx<'_>) -> Result<bool, Status> {
    let Some(url) = ctx.filename.strip_prefix("proxy:") else {
        return Ok(false);
    };
    let mut conf = ctx.site.base.clone();
    for section in &ctx.site.proxies {
        if matches(section, url) {
            conf = Arc::new(DirConf::merge(&conf, &section.conf));
        }
    }
    ctx.conf = conf;
    Ok(true)
}

fn matches(section: &ProxySection, url: &str) -> bool {
    match &section.regex {
        Some(re) => re.is_match(url.as_bytes()),
        None if has_wildcard(&section.url) => htaccel_conf::fnmatch::fnmatch(
            section.url.as_bytes(),
            url.as_bytes(),
            htaccel_conf::fnmatch::Flags::default(),
        ),
        None => url.starts_with(section.url.as_str()),
    }
}

/// `apr_fnmatch_test`: whether a pattern has a wildcard (`*`, `?`, or a
/// `[` closed by a `]`).
fn has_wildcard(pattern: &str) -> bool {
    let mut open = false;
    for c in pattern.chars() {
        match c {
            '*' | '?' => return true,
            '[' => open = true,
            ']' if open => return true,
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(url: &str) -> ProxySection {
        ProxySection {
            url: url.into(),
            regex: None,
            conf: Arc::new(DirConf::default()),
        }
    }

    #[test]
    fn wildcards_cross_slashes_and_plain_urls_are_prefixes() {
        assert!(matches(&section("*"), "http://up:8080/a/b?c"));
        assert!(matches(&section("http://up:8080/*"), "http://up:8080/a/b"));
        assert!(!matches(&section("http://other/*"), "http://up:8080/a"));
        assert!(matches(&section("http://up:8080/a"), "http://up:8080/a/b"));
        assert!(!matches(&section("http://up:8080/A"), "http://up:8080/a/b"));
        assert!(has_wildcard("http://x/[ab]") && !has_wildcard("http://x/[ab"));
    }
}
