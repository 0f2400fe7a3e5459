//! `SSLProtocol`: Apache's grammar (`all -SSLv3 +TLSv1.2`, words applied
//! left to right, a bare word replacing what came before) over the
//! protocols OpenSSL knows, then what htaccel can speak of them.
//!
//! rustls speaks TLS 1.2 and 1.3 only. `all` means those two here (with
//! Debian's OpenSSL at security level 2, Apache cannot complete a TLS 1.0
//! or 1.1 handshake either). A configuration that *names* TLSv1 or TLSv1.1
//! gets a start-up warning saying they are not offered; one that leaves
//! only them is refused: never a silent downgrade.

/// The protocols a server enables, as OpenSSL flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Protocols {
    pub tls1: bool,
    pub tls1_1: bool,
    pub tls1_2: bool,
    pub tls1_3: bool,
}

impl Protocols {
    /// mod_ssl's default: `all -SSLv3` (TLS 1.0 to 1.3).
    pub const DEFAULT: Protocols = Protocols {
        tls1: true,
        tls1_1: true,
        tls1_2: true,
        tls1_3: true,
    };
    const NONE: Protocols = Protocols {
        tls1: false,
        tls1_1: false,
        tls1_2: false,
        tls1_3: false,
    };

    fn apply(&mut self, other: Protocols, action: Option<char>) {
        let f = |a: &mut bool, b: bool| match action {
            Some('-') => *a = *a && !b,
            Some(_) => *a = *a || b,
            None => *a = b,
        };
        f(&mut self.tls1, other.tls1);
        f(&mut self.tls1_1, other.tls1_1);
        f(&mut self.tls1_2, other.tls1_2);
        f(&mut self.tls1_3, other.tls1_3);
    }
}

/// What a `SSLProtocol` line sets, and the warnings it deserves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedProtocols {
    pub protocols: Protocols,
    /// Old protocols named explicitly (enabled by name): not offered.
    pub named_old: Vec<&'static str>,
}

/// Parse the argument text of `SSLProtocol` as `ssl_cmd_protocol_parse` does.
pub fn parse(name: &str, words: &[String]) -> Result<ParsedProtocols, String> {
    let mut p = Protocols::NONE;
    let mut named_old = Vec::new();
    for word in words {
        let (action, w) = match word.chars().next() {
            Some(c @ ('+' | '-')) => (Some(c), &word[1..]),
            _ => (None, word.as_str()),
        };
        let mut this = Protocols::NONE;
        if w.eq_ignore_ascii_case("SSLv2") {
            if action == Some('-') {
                continue;
            }
            return Err(format!("{name}: SSLv2 is no longer supported"));
        } else if w.eq_ignore_ascii_case("SSLv3") {
            if action == Some('-') {
                continue;
            }
            return Err("SSLv3 not supported by this version of OpenSSL".into());
        } else if w.eq_ignore_ascii_case("TLSv1") {
            this.tls1 = true;
            if action != Some('-') {
                named_old.push("TLSv1");
            }
        } else if w.eq_ignore_ascii_case("TLSv1.1") {
            this.tls1_1 = true;
            if action != Some('-') {
                named_old.push("TLSv1.1");
            }
        } else if w.eq_ignore_ascii_case("TLSv1.2") {
            this.tls1_2 = true;
        } else if w.eq_ignore_ascii_case("TLSv1.3") {
            this.tls1_3 = true;
        } else if w.eq_ignore_ascii_case("all") {
            this = Protocols::DEFAULT;
        } else {
            return Err(format!("{name}: Illegal protocol '{w}'"));
        }
        p.apply(this, action);
    }
    named_old.retain(|n| match *n {
        "TLSv1" => p.tls1,
        _ => p.tls1_1,
    });
    Ok(ParsedProtocols {
        protocols: p,
        named_old,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn apache_grammar() {
        let p = parse("SSLProtocol", &words("all -SSLv3"))
            .unwrap()
            .protocols;
        assert_eq!(p, Protocols::DEFAULT);
        let p = parse("SSLProtocol", &words("all -SSLv2 -SSLv3 -TLSv1 -TLSv1.1"))
            .unwrap()
            .protocols;
        assert!(!p.tls1 && !p.tls1_1 && p.tls1_2 && p.tls1_3);
        let p = parse("SSLProtocol", &words("-all +TLSv1.3"))
            .unwrap()
            .protocols;
        assert!(!p.tls1_2 && p.tls1_3);
        let p = parse("SSLProtocol", &words("TLSv1.2")).unwrap().protocols;
        assert!(p.tls1_2 && !p.tls1_3);
        let r = parse("SSLProtocol", &words("+TLSv1 +TLSv1.2")).unwrap();
        assert_eq!(r.named_old, vec!["TLSv1"]);
        assert!(parse("SSLProtocol", &words("SSLv3")).is_err());
        assert_eq!(
            parse("SSLProtocol", &words("TLSv9")).unwrap_err(),
            "SSLProtocol: Illegal protocol 'TLSv9'"
        );
    }
}
