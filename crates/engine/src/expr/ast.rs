//! The compiled form of an expression: what the parser builds once per
//! configuration line and the evaluator walks per request.
//!
//! The shapes follow Apache's parse tree where the shape is observable:
//! concatenation stays a binary tree and `&&`/`||` chains stay right-nested,
//! because Apache's evaluator counts its recursion over that tree and gives
//! up past a fixed depth ("Recursion limit reached").

use super::subnet::Subnet;
use super::vars::{Func, Var};
use crate::regex_engine::Regex;
use std::sync::Arc;

/// A condition (`<If>`, `Require expr`, `SetEnvIfExpr`, `RewriteCond expr`).
#[derive(Clone, Debug)]
pub enum Cond {
    True,
    False,
    Not(Box<Cond>),
    And(Box<Cond>, Box<Cond>),
    Or(Box<Cond>, Box<Cond>),
    /// `-eq -ne -lt -le -gt -ge`: both sides read as 64-bit integers.
    IntCmp(CmpOp, Word, Word),
    /// `== != < <= > >=`: byte-wise string comparison.
    StrCmp(CmpOp, Word, Word),
    /// `word in { a, b, … }`.
    In(Word, Vec<Word>),
    /// `=~` (`negate` false) and `!~`.
    Match {
        word: Word,
        regex: Arc<Regex>,
        negate: bool,
    },
    Unary(UnaryOp, Word),
    Binary(BinaryOp, Word, Word),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    pub fn holds(self, ord: std::cmp::Ordering) -> bool {
        match self {
            CmpOp::Eq => ord.is_eq(),
            CmpOp::Ne => ord.is_ne(),
            CmpOp::Lt => ord.is_lt(),
            CmpOp::Le => ord.is_le(),
            CmpOp::Gt => ord.is_gt(),
            CmpOp::Ge => ord.is_ge(),
        }
    }
}

/// A string-valued part of an expression.
#[derive(Clone, Debug)]
pub enum Word {
    /// A number as written (`-12`).
    Digit(Vec<u8>),
    /// Literal text (never containing NUL).
    Str(Vec<u8>),
    Concat(Box<Word>, Box<Word>),
    Var(Var),
    /// `%{SSL_…}`: a mod_ssl variable (with mod_ssl loaded).
    Ssl(String),
    Func(Func, Box<Word>),
    /// `$0` … `$9`: a group of the last regex match with groups.
    Backref(u8),
    /// What a failed name lookup leaves behind; the parse fails anyway.
    Missing,
}

/// The unary operators of Apache's core (`-n`, `-f` …).
#[derive(Clone, Debug)]
pub enum UnaryOp {
    /// `-n`: not empty.
    NotEmpty,
    /// `-z`: empty.
    Empty,
    /// `-R`: the client address is in the subnet.
    RemoteIn(Subnet),
    /// `-T`: a truth value (`off`, `no`, `false`, `0` and empty are false).
    Truth,
    /// `-d`: a directory.
    IsDir,
    /// `-e`: exists.
    Exists,
    /// `-f`: a regular file.
    IsFile,
    /// `-s`: a regular file that is not empty.
    NonEmptyFile,
    /// `-L`, `-h`: a symbolic link.
    IsSymlink,
    /// `-x`: someone may execute it.
    Executable,
    /// `-F`: a sub-request for the file path is allowed and it exists.
    FileAccessible,
    /// `-U`, `-A`: a sub-request for the URL succeeds.
    UrlAccessible,
}

/// The binary operators of Apache's core (`-ipmatch` …).
#[derive(Clone, Debug)]
pub enum BinaryOp {
    IpMatch(Subnet),
    /// Shell wildcard where `*`/`?` never match `/`.
    FnMatch,
    /// Shell wildcard over the whole string.
    StrMatch,
    /// As `StrMatch`, ignoring ASCII case.
    StrCMatch,
}
