//! `Options` and `AllowOverride`: Apache's option bits, their `+`/`-`
//! arithmetic, and the override mask that decides what a `.htaccess` may
//! say. Kept as Apache's bit sets so that the merge below can follow
//! `merge_core_dir_configs` step by step.

use crate::registry::{
    NONFATAL_ALL, NONFATAL_OVERRIDE, NONFATAL_UNKNOWN, OR_ALL, OR_AUTHCFG, OR_FILEINFO, OR_INDEXES,
    OR_LIMIT, OR_OPTIONS,
};

pub const OPT_NONE: u32 = 0;
pub const OPT_INDEXES: u32 = 1;
pub const OPT_INCLUDES: u32 = 2;
pub const OPT_SYM_LINKS: u32 = 4;
pub const OPT_EXECCGI: u32 = 8;
/// Marks an `opts` value that no absolute `Options` line has set.
pub const OPT_UNSET: u32 = 16;
pub const OPT_INC_WITH_EXEC: u32 = 32;
pub const OPT_SYM_OWNER: u32 = 64;
pub const OPT_MULTI: u32 = 128;
/// `Options All`: not MultiViews, not SymLinksIfOwnerMatch.
pub const OPT_ALL: u32 =
    OPT_INDEXES | OPT_INCLUDES | OPT_INC_WITH_EXEC | OPT_SYM_LINKS | OPT_EXECCGI;
/// What `AllowOverride All` lets a `.htaccess` name.
pub const OPT_ALL_WITH_EXTRAS: u32 = OPT_ALL | OPT_SYM_OWNER | OPT_MULTI;

/// The option bits named by one word, or `None` for an unknown word.
fn option_bits(word: &str) -> Option<u32> {
    let w = word.to_ascii_lowercase();
    Some(match w.as_str() {
        "indexes" => OPT_INDEXES,
        "includes" => OPT_INCLUDES | OPT_INC_WITH_EXEC,
        "includesnoexec" => OPT_INCLUDES,
        "followsymlinks" => OPT_SYM_LINKS,
        "symlinksifownermatch" => OPT_SYM_OWNER,
        "execcgi" => OPT_EXECCGI,
        "multiviews" => OPT_MULTI,
        "runscripts" => OPT_MULTI | OPT_EXECCGI,
        "none" => OPT_NONE,
        "all" => OPT_ALL,
        _ => return None,
    })
}

/// The three option sets of a per-directory config, as Apache keeps them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionSet {
    pub opts: u32,
    pub add: u32,
    pub remove: u32,
}

impl OptionSet {
    /// One `Options` line applied to `self`, refusing words outside
    /// `allowed` (the `AllowOverride Options=` list in force).
    pub fn apply_line(&mut self, words: &[String], allowed: u32) -> Result<(), String> {
        const MIXED: &str = "Either all Options must start with + or -, or no Option may.";
        let mut first = true;
        let mut merge = false;
        let mut all_none = false;
        for word in words {
            let (action, name) = match word.as_bytes().first() {
                Some(b'+') | Some(b'-') => {
                    if !merge && !first && !all_none {
                        return Err(MIXED.into());
                    }
                    merge = true;
                    (word.as_bytes()[0], &word[1..])
                }
                _ => {
                    if first {
                        self.opts = OPT_NONE;
                    } else if merge {
                        return Err(MIXED.into());
                    }
                    (0u8, word.as_str())
                }
            };
            let opt = option_bits(name).ok_or_else(|| format!("Illegal option {name}"))?;
            if name.eq_ignore_ascii_case("none") || name.eq_ignore_ascii_case("all") {
                let label = if name.eq_ignore_ascii_case("none") {
                    "None"
                } else {
                    "All"
                };
                if !first {
                    return Err(if label == "None" {
                        "'Options None' must be the first Option given.".into()
                    } else {
                        "'Options All' must be the first option given.".into()
                    });
                }
                if merge {
                    return Err(format!(
                        "You may not use 'Options +{label}' or 'Options -{label}'."
                    ));
                }
                all_none = true;
            }
            if allowed & opt != opt {
                return Err(format!("Option {name} not allowed here"));
            }
            match action {
                b'-' => {
                    self.remove |= opt;
                    self.add &= !opt;
                    self.opts &= !opt;
                }
                b'+' => {
                    self.add |= opt;
                    self.remove &= !opt;
                    self.opts |= opt;
                }
                _ => self.opts |= opt,
            }
            first = false;
        }
        Ok(())
    }

    /// `base` with `new` on top: relative settings accumulate and keep
    /// propagating, an absolute setting replaces everything.
    pub fn merge(base: &OptionSet, new: &OptionSet) -> OptionSet {
        if new.opts & OPT_UNSET != 0 {
            let add = (base.add & !new.remove) | new.add;
            let remove = (base.remove & !new.add) | new.remove;
            let mut opts = (base.opts & !remove) | add;
            if base.opts & (OPT_INCLUDES | OPT_INC_WITH_EXEC) == (OPT_INCLUDES | OPT_INC_WITH_EXEC)
                && new.opts & (OPT_INCLUDES | OPT_INC_WITH_EXEC) == OPT_INCLUDES
            {
                opts &= !OPT_INC_WITH_EXEC;
            }
            OptionSet { opts, add, remove }
        } else {
            *new
        }
    }
}

/// `AllowOverride` as parsed: the class mask (with Nonfatal bits) and the
/// options a `.htaccess` may name.
pub fn parse_allow_override(words: &[String]) -> Result<(u32, Option<u32>), String> {
    let mut mask = 0;
    let mut opts = None;
    for w in words {
        let (k, v) = match w.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (w.as_str(), None),
        };
        match k.to_ascii_lowercase().as_str() {
            "limit" if v.is_none() => mask |= OR_LIMIT,
            "options" => {
                mask |= OR_OPTIONS;
                opts = Some(match v {
                    Some(list) => parse_allow_opts(list)?,
                    None => OPT_ALL,
                });
            }
            "fileinfo" if v.is_none() => mask |= OR_FILEINFO,
            "authconfig" if v.is_none() => mask |= OR_AUTHCFG,
            "indexes" if v.is_none() => mask |= OR_INDEXES,
            "nonfatal" => match v.map(str::to_ascii_lowercase).as_deref() {
                None => return Err(format!("=Override, =Unknown or =All expected after {w}")),
                Some("override") => mask |= NONFATAL_OVERRIDE,
                Some("unknown") => mask |= NONFATAL_UNKNOWN,
                Some("all") => mask |= NONFATAL_ALL,
                Some(_) => {}
            },
            "none" if v.is_none() => mask = 0,
            // `All` leaves the option list as inherited: Apache only sets it
            // for `Options` and `Options=…`.
            "all" if v.is_none() => mask = OR_ALL,
            _ => return Err(format!("Illegal override option {w}")),
        }
    }
    Ok((mask, opts))
}

/// The `Options=a,b` list of `AllowOverride`.
fn parse_allow_opts(list: &str) -> Result<u32, String> {
    let mut opts = OPT_NONE;
    for w in list.split(',').filter(|w| !w.is_empty()) {
        let bits = option_bits(w).ok_or_else(|| format!("Illegal option {w}"))?;
        opts |= if w.eq_ignore_ascii_case("includes") {
            OPT_INCLUDES | OPT_INC_WITH_EXEC
        } else {
            bits
        };
    }
    Ok(opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn line(base: OptionSet, s: &str) -> Result<OptionSet, String> {
        let mut new = OptionSet {
            opts: OPT_UNSET,
            add: 0,
            remove: 0,
        };
        new.apply_line(&words(s), OPT_ALL_WITH_EXTRAS)?;
        Ok(OptionSet::merge(&base, &new))
    }

    #[test]
    fn relative_lines_accumulate_and_absolute_replaces() {
        let root = OptionSet {
            opts: OPT_SYM_LINKS,
            add: 0,
            remove: 0,
        };
        let a = line(root, "+Indexes").unwrap();
        assert_eq!(a.opts, OPT_SYM_LINKS | OPT_INDEXES);
        let b = line(a, "-FollowSymLinks").unwrap();
        assert_eq!(b.opts, OPT_INDEXES);
        let c = line(b, "ExecCGI").unwrap();
        assert_eq!(c.opts, OPT_EXECCGI);
        assert_eq!(c.add | c.remove, 0);
    }

    #[test]
    fn wording_of_errors() {
        let root = OptionSet {
            opts: OPT_SYM_LINKS,
            add: 0,
            remove: 0,
        };
        assert_eq!(
            line(root, "Indexes +FollowSymLinks").unwrap_err(),
            "Either all Options must start with + or -, or no Option may."
        );
        assert_eq!(
            line(root, "+All").unwrap_err(),
            "You may not use 'Options +All' or 'Options -All'."
        );
        assert_eq!(line(root, "Bogus").unwrap_err(), "Illegal option Bogus");
        assert_eq!(line(root, "None +Indexes").unwrap().opts, OPT_INDEXES);
    }

    #[test]
    fn allow_override_options_list_restricts() {
        let (mask, opts) =
            parse_allow_override(&words("Options=Indexes,FollowSymLinks FileInfo")).unwrap();
        assert_eq!(mask, OR_OPTIONS | OR_FILEINFO);
        assert_eq!(opts, Some(OPT_INDEXES | OPT_SYM_LINKS));
        let mut set = OptionSet {
            opts: OPT_UNSET,
            add: 0,
            remove: 0,
        };
        assert_eq!(
            set.apply_line(&words("+ExecCGI"), opts.unwrap())
                .unwrap_err(),
            "Option ExecCGI not allowed here"
        );
        let (_, bare) = parse_allow_override(&words("Options")).unwrap();
        assert_eq!(
            set.apply_line(&words("-MultiViews"), bare.unwrap())
                .unwrap_err(),
            "Option MultiViews not allowed here"
        );
    }
}
