//! The `Vary` clean-up of Apache's HTTP header filter (`fixup_vary`):
//! every `Vary` field of the response is split into names (at commas and
//! white space), repeated names are dropped (ignoring ASCII case, the
//! first spelling kept), and what is left becomes one field joined with
//! `,`. Several modules add to `Vary` independently (`<If>` conditions
//! that read request headers, mod_headers, mod_rewrite); this is what
//! makes their contributions look the way Apache sends them.

/// Rewrite the `Vary` fields of `headers` in place: one field, where the
/// first one was, holding the distinct names.
pub fn fixup_vary<N: AsRef<str>>(headers: &mut Vec<(N, String)>) {
    let mut names: Vec<&str> = Vec::new();
    let mut first = None;
    for (i, (n, v)) in headers.iter().enumerate() {
        if !n.as_ref().eq_ignore_ascii_case("Vary") {
            continue;
        }
        first.get_or_insert(i);
        for name in v
            .split(|c: char| c == ',' || c.is_ascii_whitespace() || c == '\x0b')
            .filter(|s| !s.is_empty())
        {
            if !names.iter().any(|k| k.eq_ignore_ascii_case(name)) {
                names.push(name);
            }
        }
    }
    let Some(first) = first else {
        return;
    };
    if names.is_empty() {
        return;
    }
    let joined = names.join(",");
    headers[first].1 = joined;
    let mut i = 0;
    headers.retain(|(n, _)| {
        let keep = i <= first || !n.as_ref().eq_ignore_ascii_case("Vary");
        i += 1;
        keep
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn joins_and_dedups() {
        let mut v = h(&[
            ("X", "1"),
            ("Vary", "User-Agent, Accept"),
            ("Y", "2"),
            ("vary", "accept,  Cookie"),
        ]);
        fixup_vary(&mut v);
        assert_eq!(
            v,
            h(&[("X", "1"), ("Vary", "User-Agent,Accept,Cookie"), ("Y", "2")])
        );
    }

    #[test]
    fn empty_or_absent_left_alone() {
        let mut v = h(&[("Vary", " , ")]);
        fixup_vary(&mut v);
        assert_eq!(v, h(&[("Vary", " , ")]));
        let mut v = h(&[("X", "1")]);
        fixup_vary(&mut v);
        assert_eq!(v, h(&[("X", "1")]));
    }
}
