//! The client's listing arguments: `C=` (sort column), `O=` (order), `F=`
//! (format), `V=` (version sort) and `P=` (a name pattern), each ended by
//! `&`, `;` or the end, read as mod_autoindex reads them: parsing stops at
//! the first item it does not know, and what was read is carried into the
//! column links (`colargs`).

use super::opts::*;
use crate::uri::{escape_path, unescape};

/// What the listing does after the query is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View {
    /// `IndexOptions` with `F=` and `V=` applied.
    pub opts: u32,
    /// `N`, `M`, `S` or `D`.
    pub key: u8,
    /// `A` or `D`.
    pub direction: u8,
    /// Appended to the column links: `;F=n`, `;V=n`, `;P=pattern`.
    pub colargs: String,
    /// `P=`, decoded.
    pub pattern: Option<Vec<u8>>,
}

/// The view for `query` under the options `opts` and the default order.
/// `IgnoreClient` ignores the query and fixes the columns.
pub fn view(query: Option<&str>, opts: u32, key: u8, direction: u8) -> View {
    let mut v = View {
        opts,
        key,
        direction,
        colargs: String::new(),
        pattern: None,
    };
    if opts & IGNORE_CLIENT != 0 {
        v.opts |= SUPPRESS_COLSORT;
        return v;
    }
    let (mut fval, mut vval, mut epattern) = (String::new(), String::new(), String::new());
    let mut s = query.unwrap_or("").as_bytes();
    let ends_item = |s: &[u8]| matches!(s.get(3), None | Some(b'&') | Some(b';'));
    let skip = |s: &[u8]| if s.len() > 3 { 4 } else { 3 };
    while !s.is_empty() {
        match (s[0], s.get(1).copied(), s.get(2).copied()) {
            (b'C', Some(b'='), Some(c)) if b"NMSD".contains(&c) && ends_item(s) => {
                v.key = c;
                s = &s[skip(s)..];
            }
            (b'O', Some(b'='), Some(c)) if (c == b'A' || c == b'D') && ends_item(s) => {
                v.direction = c;
                s = &s[skip(s)..];
            }
            (b'F', Some(b'='), Some(c)) if b"012".contains(&c) && ends_item(s) => {
                v.opts = match c {
                    b'0' => v.opts & !(FANCY_INDEXING | TABLE_INDEXING),
                    b'1' => (v.opts | FANCY_INDEXING) & !TABLE_INDEXING,
                    _ => v.opts | FANCY_INDEXING | TABLE_INDEXING,
                };
                fval = format!(";F={}", c as char);
                s = &s[skip(s)..];
            }
            (b'V', Some(b'='), Some(c)) if (c == b'0' || c == b'1') && ends_item(s) => {
                if c == b'0' {
                    v.opts &= !VERSION_SORT;
                } else {
                    v.opts |= VERSION_SORT;
                }
                vval = format!(";V={}", c as char);
                s = &s[skip(s)..];
            }
            (b'P', Some(b'='), _) => {
                let rest = &s[2..];
                let end = rest
                    .iter()
                    .position(|&c| c == b'&' || c == b';')
                    .unwrap_or(rest.len());
                v.pattern = None;
                if end > 0 {
                    if let Ok(p) = unescape(&rest[..end]) {
                        epattern = format!(";P={}", escape_path(&p));
                        v.pattern = Some(p.into_owned());
                    }
                }
                s = if end + 1 < rest.len() {
                    &rest[end + 1..]
                } else {
                    &[]
                };
            }
            _ => break,
        }
    }
    v.colargs = format!("{fval}{vval}{epattern}");
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> View {
        view(Some(s), FANCY_INDEXING, b'N', b'A')
    }

    #[test]
    fn items_in_any_order() {
        let v = q("O=D");
        assert_eq!((v.key, v.direction), (b'N', b'D'));
        let v = q("C=X;O=D");
        assert_eq!(v.direction, b'A', "parsing stops at C=X");
        assert_eq!(q("O=Dx").direction, b'A');
        let v = q("P=a%2A;V=1&C=S");
        assert_eq!(v.pattern.as_deref(), Some(&b"a*"[..]));
        assert_eq!(v.key, b'S');
        assert_eq!(v.colargs, ";V=1;P=a*");
        assert_eq!(q("P=a%2fb").pattern, None);
        assert_eq!(q("P=&O=D").direction, b'D');
        let v = q("F=2;F=0");
        assert_eq!(v.opts & (FANCY_INDEXING | TABLE_INDEXING), 0);
        assert_eq!(v.colargs, ";F=0");
    }

    #[test]
    fn ignore_client() {
        let v = view(Some("C=S;O=D"), IGNORE_CLIENT, b'N', b'A');
        assert_eq!((v.key, v.direction), (b'N', b'A'));
        assert_ne!(v.opts & SUPPRESS_COLSORT, 0);
    }
}
