//! mod_filter's directives and the core's `SetOutputFilter`: how a
//! configuration declares smart filters, gives them providers, chains
//! them and sets their protocol flags.
//!
//! Apache keeps a table of smart filters per configuration section, fresh
//! for each one: a `FilterProvider` (or `AddOutputFilterByType`) naming a
//! filter the section itself has not declared declares a new one, which
//! replaces the parent's of that name when the sections merge. Providers
//! are put in front of the ones given before, so the last one written is
//! tried first. The chain is a list of names where `!` and `=` leave a
//! mark that drops everything before it, in the section and when
//! sections merge.

use super::{lookup, Coding, Known};
use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::expr::Expr;
use crate::registry::{
    Args, Directive, Module, Run, ACCESS_CONF, OR_FILEINFO, OR_OPTIONS, RSRC_CONF,
};
use std::sync::Arc;

/// `FilterProtocol` flags (`AP_FILTER_PROTO_*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Proto(u8);

impl Proto {
    pub const CHANGE: Proto = Proto(1);
    pub const CHANGE_LENGTH: Proto = Proto(2);
    pub const NO_BYTERANGE: Proto = Proto(4);
    pub const NO_PROXY: Proto = Proto(8);
    pub const TRANSFORM: Proto = Proto(16);
    pub const NO_CACHE: Proto = Proto(32);

    pub fn has(self, flag: Proto) -> bool {
        self.0 & flag.0 != 0
    }

    fn set(&mut self, flag: Proto) {
        self.0 |= flag.0;
    }

    fn clear(&mut self, flag: Proto) {
        self.0 &= !flag.0;
    }

    /// `FilterProtocol`'s argument: words separated by `;`, `,`, spaces or
    /// tabs, each compared without case; unknown words change nothing.
    fn parse(text: &str) -> Proto {
        let mut p = Proto::default();
        for word in text.split([';', ',', ' ', '\t']).filter(|w| !w.is_empty()) {
            let w = word.to_ascii_lowercase();
            match w.as_str() {
                "change=yes" => {
                    p.set(Proto::CHANGE);
                    p.set(Proto::CHANGE_LENGTH);
                }
                "change=no" => {
                    p.clear(Proto::CHANGE);
                    p.clear(Proto::CHANGE_LENGTH);
                }
                "change=1:1" => p.set(Proto::CHANGE),
                "byteranges=no" => p.set(Proto::NO_BYTERANGE),
                "proxy=no" => p.set(Proto::NO_PROXY),
                "proxy=transform" => p.set(Proto::TRANSFORM),
                "cache=no" => p.set(Proto::NO_CACHE),
                _ => {}
            }
        }
        p
    }
}

/// What selects a provider for a response.
#[derive(Clone, Debug)]
pub enum Dispatch {
    /// `AddOutputFilterByType`'s media types, compared without parameters.
    Types(Vec<String>),
    /// `FilterProvider`'s condition, evaluated once the handler made the
    /// response's headers.
    Expr(Arc<Expr>),
}

/// One provider of a smart filter: the content filter it runs, and what
/// selects it.
#[derive(Clone, Debug)]
pub struct Provider {
    pub coding: Coding,
    pub dispatch: Dispatch,
}

/// Where a smart filter runs among the content filters (`FilterDeclare`'s
/// type).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Place {
    /// `RESOURCE`, the default of `FilterDeclare`: before every
    /// `CONTENT_SET` filter.
    Resource,
    /// `CONTENT_SET`, the type of a filter its first provider declared.
    ContentSet,
}

/// A smart filter (`FilterDeclare`, or the first `FilterProvider` or
/// `AddOutputFilterByType` naming it in a section).
#[derive(Clone, Debug)]
pub struct SmartFilter {
    /// The name as written (Apache's table is case-sensitive).
    pub fname: String,
    /// In the order they are tried.
    pub providers: Vec<Provider>,
    /// `FilterProtocol NAME flags`: the filter's own flags.
    pub proto: Proto,
    pub place: Place,
}

/// The per-directory slot.
#[derive(Clone, Debug, Default)]
pub struct FilterDir {
    /// The smart filters by name; a section's replace its parent's.
    pub declared: Vec<Arc<SmartFilter>>,
    /// The chain of filter names; `None` entries are the marks of `!` and
    /// `=`. `None` when the section set no chain.
    pub chain: Option<Vec<Option<String>>>,
    /// The core's `SetOutputFilter` names; `None` when not set here.
    pub set_output: Option<Vec<String>>,
    /// `FilterProtocol NAME PROVIDER flags`: the flags of the content
    /// filter itself, by filter. Apache changes them for the whole
    /// process; here they hold where the directive does
    /// (docs/deviations.md).
    pub provider_proto: Vec<(Coding, Proto)>,
}

impl FilterDir {
    pub fn merge(base: &FilterDir, new: &FilterDir) -> FilterDir {
        let mut declared = new.declared.clone();
        for d in &base.declared {
            if !declared.iter().any(|n| n.fname == d.fname) {
                declared.push(d.clone());
            }
        }
        let chain = match (&base.chain, &new.chain) {
            (Some(b), Some(n)) => {
                let mut merged = Vec::with_capacity(b.len() + n.len());
                for link in b.iter().chain(n) {
                    if link.is_none() {
                        // A mark restarts the merged chain from itself.
                        merged.clear();
                    }
                    merged.push(link.clone());
                }
                Some(merged)
            }
            (b, n) => n.clone().or_else(|| b.clone()),
        };
        FilterDir {
            declared,
            chain,
            set_output: new.set_output.clone().or_else(|| base.set_output.clone()),
            provider_proto: {
                let mut flags = new.provider_proto.clone();
                for &(coding, proto) in &base.provider_proto {
                    if !flags.iter().any(|(c, _)| *c == coding) {
                        flags.push((coding, proto));
                    }
                }
                flags
            },
        }
    }

    /// The protocol flags of a content filter as a provider.
    pub fn provider_flags(&self, coding: Coding) -> Proto {
        self.provider_proto
            .iter()
            .find(|(c, _)| *c == coding)
            .map_or_else(Proto::default, |(_, p)| *p)
    }

    /// The chain's names in force: those after its last mark.
    pub fn chain_names(&self) -> impl Iterator<Item = &str> {
        let chain = self.chain.as_deref().unwrap_or_default();
        let start = chain.iter().rposition(Option::is_none).map_or(0, |i| i + 1);
        chain[start..].iter().flatten().map(String::as_str)
    }

    fn declared_here(&self, fname: &str) -> Option<&Arc<SmartFilter>> {
        self.declared.iter().find(|d| d.fname == fname)
    }

    /// `filter_declare`: a new, empty filter of that name in this section.
    fn declare(&mut self, fname: &str, place: Place) {
        self.declared.retain(|d| d.fname != fname);
        self.declared.push(Arc::new(SmartFilter {
            fname: fname.to_string(),
            providers: Vec::new(),
            proto: Proto::default(),
            place,
        }));
    }

    /// `add_filter`: a provider in front of the filter's others, the
    /// filter declared here first (with the provider's type) if it is not.
    fn add_provider(&mut self, fname: &str, provider: Provider) {
        if self.declared_here(fname).is_none() {
            self.declare(fname, Place::ContentSet);
        }
        if let Some(d) = self.declared.iter_mut().find(|d| d.fname == fname) {
            Arc::make_mut(d).providers.insert(0, provider);
        }
    }

    /// One `FilterChain` word.
    fn chain_word(&mut self, word: &str) {
        let chain = self.chain.get_or_insert_with(Vec::new);
        let mut chars = word.chars();
        match chars.next() {
            Some('+') => chain.push(Some(chars.as_str().to_string())),
            Some('@') => chain.insert(0, Some(chars.as_str().to_string())),
            Some('-') => remove_from_chain(chain, chars.as_str()),
            Some('!') => *chain = vec![None],
            Some('=') => *chain = vec![None, Some(chars.as_str().to_string())],
            _ => chain.push(Some(word.to_string())),
        }
    }
}

/// `FilterChain -name`, as Apache walks its list: the first link alone
/// when it matches (without case), else every later match except one
/// that directly follows a removed link.
fn remove_from_chain(chain: &mut Vec<Option<String>>, name: &str) {
    let matches = |l: &Option<String>| l.as_deref().is_some_and(|n| n.eq_ignore_ascii_case(name));
    if chain.is_empty() {
        return;
    }
    if matches(&chain[0]) {
        chain.remove(0);
        return;
    }
    let mut p = 0;
    while p + 1 < chain.len() {
        if matches(&chain[p + 1]) {
            chain.remove(p + 1);
        }
        p += 1;
    }
}

/// The provider named, as `ap_get_output_filter_handle` finds it among
/// the filters of the modules loaded so far.
fn provider(w: &Walker<'_>, directive: &str, pname: &str) -> Result<Coding, String> {
    match lookup(pname, |m| w.loaded_by_reading(m)) {
        Known::Coding(c) => Ok(c),
        Known::Unsupported => Err(format!(
            "{directive} {pname}: the {pname} filter is not supported by htaccel yet"
        )),
        Known::Unknown => Err(format!("Unknown filter provider {pname}")),
    }
}

/// `AddOutputFilterByType name[;name…] type…`.
fn run_by_type(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    if inv.words.len() < 2 {
        return Err("AddOutputFilterByType requires at least two arguments".into());
    }
    for pname in inv.words[0].split(';').filter(|p| !p.is_empty()) {
        let coding = provider(w, "AddOutputFilterByType", pname)?;
        let fname = format!("BYTYPE:{pname}");
        let f = &mut c.filter;
        let seen = f.declared_here(&fname).is_some();
        let dispatch = Dispatch::Types(inv.words[1..].to_vec());
        f.add_provider(&fname, Provider { coding, dispatch });
        if !seen {
            f.chain_word(&fname);
        }
    }
    Ok(())
}

/// `FilterDeclare name [type]`.
fn run_declare(_: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    let fname = &inv.words[0];
    if let Some(place) = inv.words.get(1) {
        for late in ["PROTOCOL", "CONNECTION", "NETWORK"] {
            if place.eq_ignore_ascii_case(late) {
                return Err(format!(
                    "FilterDeclare {fname} {place}: a smart filter placed among the {late} filters is not supported by htaccel (its providers change content: declare it without a type, or RESOURCE or CONTENT_SET)"
                ));
            }
        }
    }
    let content_set = inv
        .words
        .get(1)
        .is_some_and(|p| p.eq_ignore_ascii_case("CONTENT_SET"));
    let place = if content_set {
        Place::ContentSet
    } else {
        Place::Resource
    };
    c.filter.declare(fname, place);
    Ok(())
}

/// `FilterProvider name provider expression`.
fn run_provider(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    let (fname, pname, text) = (&inv.words[0], &inv.words[1], &inv.words[2]);
    let coding = provider(w, "FilterProvider", pname)?;
    let expr = Expr::parse_restricted(text, w.ctx.htaccess)
        .map_err(|err| format!("Error parsing FilterProvider expression:{err}"))?;
    let dispatch = Dispatch::Expr(Arc::new(expr));
    c.filter.add_provider(fname, Provider { coding, dispatch });
    Ok(())
}

/// `FilterChain [+@-!=]name…`.
fn run_chain(_: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    for word in &inv.words {
        c.filter.chain_word(word);
    }
    Ok(())
}

/// `FilterProtocol name [provider] flags`.
fn run_protocol(_: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    let fname = &inv.words[0];
    let f = &mut c.filter;
    let Some(declared) = f.declared_here(fname) else {
        return Err("FilterProtocol: No such filter".into());
    };
    match inv.words.get(2) {
        None => {
            let proto = Proto::parse(&inv.words[1]);
            if let Some(d) = f.declared.iter_mut().find(|d| &d.fname == fname) {
                Arc::make_mut(d).proto = proto;
            }
        }
        Some(flags) => {
            let pname = &inv.words[1];
            let Some(coding) = declared
                .providers
                .iter()
                .map(|p| p.coding)
                .find(|&c| lookup(pname, |_| true) == Known::Coding(c))
            else {
                return Err("FilterProtocol: No such provider for this filter".into());
            };
            let proto = Proto::parse(flags);
            f.provider_proto.retain(|(c, _)| *c != coding);
            f.provider_proto.push((coding, proto));
        }
    }
    Ok(())
}

/// `FilterTrace name level`: the filter must be declared in the section.
/// Its debug lines (a line per brigade and bucket) are not written
/// (docs/deviations.md).
fn run_trace(_: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    let fname = &inv.words[0];
    if c.filter.declared_here(fname).is_none() {
        return Err(format!("Undeclared smart filter {fname}"));
    }
    Ok(())
}

/// `SetOutputFilter name[;name…]` (the core's).
fn run_set_output(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf) -> Result<(), String> {
    let names: Vec<String> = inv.words[0]
        .split(';')
        .take_while(|n| !n.is_empty())
        .map(str::to_string)
        .collect();
    for n in &names {
        if lookup(n, |m| w.loaded_by_reading(m)) == Known::Unsupported {
            return Err(format!(
                "SetOutputFilter {n}: the {n} filter is not supported by htaccel yet"
            ));
        }
    }
    c.filter.set_output = Some(names);
    Ok(())
}

pub static DIRECTIVES: &[Directive] = &[
    Directive {
        name: "FilterDeclare",
        args: Args::Take12,
        req_override: OR_OPTIONS,
        about: "filter-name [filter-type]",
        run: Run::Handler(run_declare),
    },
    Directive {
        name: "FilterProvider",
        args: Args::Take3,
        req_override: OR_OPTIONS,
        about: "filter-name provider-name match-expression",
        run: Run::Handler(run_provider),
    },
    Directive {
        name: "FilterChain",
        args: Args::Iterate,
        req_override: OR_OPTIONS,
        about: "list of filter names with optional [+-=!@]",
        run: Run::Handler(run_chain),
    },
    Directive {
        name: "FilterTrace",
        args: Args::Take2,
        req_override: RSRC_CONF | ACCESS_CONF,
        about: "filter-name debug-level",
        run: Run::Handler(run_trace),
    },
    Directive {
        name: "AddOutputFilterByType",
        args: Args::Argv,
        req_override: OR_FILEINFO,
        about: "output filter name followed by one or more content-types",
        run: Run::Handler(run_by_type),
    },
    Directive {
        name: "FilterProtocol",
        args: Args::Take23,
        req_override: OR_OPTIONS,
        about: "filter-name [provider-name] protocol-args",
        run: Run::Handler(run_protocol),
    },
];

pub static MODULE: Module = Module {
    source: "mod_filter.c",
    identifier: "filter_module",
    builtin: false,
    directives: DIRECTIVES,
};

/// The core's `SetOutputFilter`.
pub static CORE_DIRECTIVES: &[Directive] = &[Directive {
    name: "SetOutputFilter",
    args: Args::Take1,
    req_override: OR_FILEINFO,
    about: "filter (or ; delimited list of filters) to be run on the request content",
    run: Run::Handler(run_set_output),
}];

pub static CORE_MODULE: Module = Module {
    source: "core.c",
    identifier: "core_module",
    builtin: true,
    directives: CORE_DIRECTIVES,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn chain_of(words: &[&str]) -> FilterDir {
        let mut f = FilterDir::default();
        for w in words {
            f.chain_word(w);
        }
        f
    }

    fn names(f: &FilterDir) -> Vec<&str> {
        f.chain_names().collect()
    }

    #[test]
    fn chain_words_as_apache_reads_them() {
        assert_eq!(names(&chain_of(&["A", "+B", "@C"])), ["C", "A", "B"]);
        assert_eq!(names(&chain_of(&["A", "B", "-a"])), ["B"]);
        // The link after a removed one is not looked at.
        assert_eq!(names(&chain_of(&["A", "B", "C", "-b"])), ["A", "C"]);
        assert_eq!(
            names(&chain_of(&["A", "B", "B", "C", "-B"])),
            ["A", "B", "C"]
        );
        assert_eq!(names(&chain_of(&["A", "!", "B"])), ["B"]);
        assert_eq!(names(&chain_of(&["A", "=B", "C"])), ["B", "C"]);
    }

    #[test]
    fn marks_drop_the_parent_chain_when_merged() {
        let parent = chain_of(&["A", "B"]);
        let child = chain_of(&["C"]);
        assert_eq!(names(&FilterDir::merge(&parent, &child)), ["A", "B", "C"]);
        let reset = chain_of(&["=D"]);
        assert_eq!(names(&FilterDir::merge(&parent, &reset)), ["D"]);
        let cleared = chain_of(&["!"]);
        assert!(names(&FilterDir::merge(&parent, &cleared)).is_empty());
    }

    fn by_type(t: &str) -> Provider {
        Provider {
            coding: Coding::Deflate,
            dispatch: Dispatch::Types(vec![t.into()]),
        }
    }

    #[test]
    fn a_section_declares_its_own_filters() {
        let mut parent = FilterDir::default();
        parent.add_provider("BYTYPE:DEFLATE", by_type("text/html"));
        let mut child = FilterDir::default();
        child.add_provider("BYTYPE:DEFLATE", by_type("text/css"));
        child.add_provider("BYTYPE:DEFLATE", by_type("text/plain"));
        let m = FilterDir::merge(&parent, &child);
        assert_eq!(m.declared.len(), 1);
        let types: Vec<&str> = m.declared[0]
            .providers
            .iter()
            .map(|p| match &p.dispatch {
                Dispatch::Types(t) => t[0].as_str(),
                Dispatch::Expr(_) => "expr",
            })
            .collect();
        assert_eq!(types, ["text/plain", "text/css"], "the last one first");
    }

    #[test]
    fn protocol_flags() {
        let p = Proto::parse("change=yes;byteranges=no");
        assert!(p.has(Proto::CHANGE) && p.has(Proto::CHANGE_LENGTH) && p.has(Proto::NO_BYTERANGE));
        let p = Proto::parse("Change=1:1, cache=no");
        assert!(p.has(Proto::CHANGE) && !p.has(Proto::CHANGE_LENGTH) && p.has(Proto::NO_CACHE));
        assert_eq!(Proto::parse("change=yes change=no"), Proto::default());
    }
}
