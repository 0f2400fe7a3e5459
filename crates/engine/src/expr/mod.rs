//! Apache's expression language (`ap_expr`), compiled once and evaluated
//! per request.
//!
//! `<If>`, `<ElseIf>`, `Require expr`, `SetEnvIfExpr`, `RewriteCond expr`,
//! `Header … "expr=…"` and `ErrorDocument` all read expressions. Apache
//! parses each one when it reads the configuration line — a misspelt
//! variable fails the file (`Cannot parse condition clause: Variable
//! 'HTTP_ACCEPT_ENCODING' does not exist`) — and walks the parse tree for
//! every request. We do the same: [`Expr::parse`] / [`StrExpr::parse`]
//! build the tree (regexes compiled, names resolved, subnets parsed), and
//! evaluation reads the request only through [`ExprContext`], so every
//! module evaluates against the same view of a request.
//!
//! Layout: `lexer` (Apache's flex scanner), `parser` (its bison grammar),
//! `ast`, `vars` (the names the core knows), `eval`, `funcs` (functions
//! and file tests), `fnmatch` and `subnet` (APR's matching rules), and
//! `request_ctx` (the [`ExprContext`] of a request in the phases).

pub mod ast;
pub mod eval;
pub mod funcs;
pub mod lexer;
pub mod parser;
pub mod request_ctx;
pub mod subnet;
pub mod vars;

pub use eval::Captures;
pub use request_ctx::RequestExpr;
pub use vars::Var;

use std::borrow::Cow;
use std::net::IpAddr;

/// What an expression may read of a request. Values are bytes: header
/// values and paths need not be UTF-8. `None` and an empty value are the
/// same to the language.
pub trait ExprContext {
    /// A variable of the request or connection: every [`Var`] except the
    /// `HTTP_*` header variables, `TIME*` and `API_VERSION`, which the
    /// evaluator answers itself.
    fn var(&self, var: Var) -> Option<Cow<'_, [u8]>>;
    /// mod_ssl's variable `%{SSL_…}` (`ssl_expr_lookup`).
    fn ssl_var(&self, _name: &str) -> Option<String> {
        None
    }
    /// A request header (repeated fields joined with `, `), for `req()`,
    /// `http()`, `req_novary()` and the `HTTP_*` variables.
    fn request_header(&self, name: &str) -> Option<Cow<'_, [u8]>>;
    /// A response header: the ordinary table, then the one kept on errors
    /// (`resp()`).
    fn response_header(&self, name: &str) -> Option<Cow<'_, [u8]>>;
    /// The request environment (`reqenv()`; `env()` after the notes).
    fn env(&self, name: &str) -> Option<Cow<'_, [u8]>>;
    /// A request note (`note()`; `env()` looks here first).
    fn note(&self, name: &str) -> Option<Cow<'_, [u8]>>;
    /// The client address (`-R`).
    fn remote_ip(&self) -> Option<IpAddr>;
    /// `-U`/`-A`: a sub-request for this URL path ends below 400.
    fn url_accessible(&self, url: &str) -> bool;
    /// `-F`: a sub-request for this file path ends below 300 and the file
    /// exists.
    fn file_accessible(&self, path: &str) -> bool;
}

/// The result of one evaluation.
#[derive(Debug)]
pub struct Outcome<T> {
    /// The value, or Apache's evaluation error (`Recursion limit reached`,
    /// `Cannot open file …`), which Apache logs and treats as false/failed.
    pub value: Result<T, String>,
    /// Request headers the expression read that belong in `Vary`, joined
    /// with `, ` (`None` when there are none). Apache merges them into the
    /// response's `Vary` after a boolean evaluation that did not fail.
    pub vary: Option<String>,
    /// `$0`–`$9` after the evaluation.
    pub captures: Captures,
}

/// A compiled condition.
#[derive(Clone, Debug)]
pub struct Expr {
    root: ast::Cond,
    source: String,
}

thread_local! {
    static SSL_VARS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether expressions compiled on this thread from now on may name
/// mod_ssl's `SSL_*` variables: the configuration walker says so before
/// each directive, as mod_ssl's `expr_lookup` hook exists only once the
/// module is loaded.
pub fn set_ssl_vars(loaded: bool) {
    SSL_VARS.with(|s| s.set(loaded));
}

pub(crate) fn ssl_vars() -> bool {
    SSL_VARS.with(|s| s.get())
}

impl Expr {
    /// Compile a condition; the error is Apache's message (callers add
    /// their prefix, e.g. `Cannot parse condition clause: `).
    pub fn parse(text: &str) -> Result<Expr, String> {
        Self::parse_restricted(text, false)
    }

    /// Compile a condition read from a `.htaccess` (`restricted`): there,
    /// as in Apache, `file()` and `filesize()` are refused.
    pub fn parse_restricted(text: &str, restricted: bool) -> Result<Expr, String> {
        Ok(Expr {
            root: parser::parse_cond(text, restricted)?,
            source: text.to_string(),
        })
    }

    /// The text it was compiled from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Evaluate with no back-references from outside.
    pub fn eval(&self, ctx: &dyn ExprContext) -> Outcome<bool> {
        self.eval_with(ctx, Captures::default())
    }

    /// Evaluate with `$0`–`$9` initially taken from `captures` (as
    /// `ap_expr_exec_re` does for mod_rewrite) and returned updated.
    pub fn eval_with(&self, ctx: &dyn ExprContext, captures: Captures) -> Outcome<bool> {
        let mut ev = eval::Eval::new(ctx, captures);
        let v = ev.cond(&self.root);
        finish(ev, v)
    }
}

/// A compiled string expression (`expr=` values, `ErrorDocument` text).
#[derive(Clone, Debug)]
pub struct StrExpr {
    root: ast::Word,
    source: String,
}

impl StrExpr {
    pub fn parse(text: &str) -> Result<StrExpr, String> {
        Self::parse_restricted(text, false)
    }

    /// As [`Expr::parse_restricted`].
    pub fn parse_restricted(text: &str, restricted: bool) -> Result<StrExpr, String> {
        Ok(StrExpr {
            root: parser::parse_string(text, restricted)?,
            source: text.to_string(),
        })
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// The text, when it has no variables or functions (Apache returns
    /// such strings without evaluating).
    pub fn constant(&self) -> Option<&[u8]> {
        match &self.root {
            ast::Word::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn eval(&self, ctx: &dyn ExprContext) -> Outcome<Vec<u8>> {
        self.eval_with(ctx, Captures::default())
    }

    pub fn eval_with(&self, ctx: &dyn ExprContext, captures: Captures) -> Outcome<Vec<u8>> {
        let mut ev = eval::Eval::new(ctx, captures);
        let v = ev.word(&self.root).into_owned();
        finish(ev, v)
    }
}

/// Two expressions are the same when compiled from the same text.
impl PartialEq for StrExpr {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl Eq for StrExpr {}

fn finish<T>(ev: eval::Eval<'_>, v: T) -> Outcome<T> {
    let vary = (!ev.vary.is_empty()).then(|| ev.vary.join(", "));
    Outcome {
        value: match ev.error {
            Some(e) => Err(e),
            None => Ok(v),
        },
        vary,
        captures: ev.captures,
    }
}

#[cfg(test)]
mod tests;
