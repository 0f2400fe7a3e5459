//! The parser: tokens to the compiled tree, with the grammar of Apache
//! 2.4's `util_expr_parse.y` and its way of reporting failure.
//!
//! Grammar (lowest binding first): `||`, `&&` (both right-associative),
//! `!`, then a primary: `true`, `false`, `( cond )`, `-X word`,
//! `word -op word`, or `word` with a comparison, `in { … }`, `=~ regex`.
//! A word is a number, a quoted string, `%{…}`, `$N` or `func(word)`,
//! joined by `.` (right-associative). `( word )` is not a word in 2.4.
//!
//! Failure wording follows Apache: names are looked up as they are read
//! and a failed lookup does not stop the parse but leaves its message (the
//! last one wins); a scanner error at a place where the grammar allows one
//! ends the parse with the scanner's message alone; anything else is
//! bison's `syntax error, unexpected …`, followed by `: ` and the last
//! lookup or scanner message when there is one.

use super::ast::{BinaryOp, CmpOp, Cond, UnaryOp, Word};
use super::lexer::{Lexer, Tok};
use super::subnet::Subnet;
use super::vars::{not_found, Func, Var};
use crate::regex_engine::Regex;
use std::sync::Arc;

/// Deepest nesting accepted. Apache's parser stack allows more, but no
/// real expression comes near this and it keeps recursion (parsing,
/// evaluating, dropping) bounded for hostile input.
const MAX_DEPTH: usize = 256;

/// Why parsing stopped.
enum Stop {
    /// A scanner error where the grammar allows one (Apache's `YYABORT`).
    Abort,
    /// Bison's message.
    Syntax(String),
    /// A regex that does not compile (`YYERROR` with Apache's text).
    Regex,
}

struct Parser<'a> {
    lex: Lexer<'a>,
    tok: Tok,
    /// Apache's `error2`: the last failed lookup or scanner error.
    detail: Option<String>,
    depth: usize,
    /// Apache's `AP_EXPR_FLAG_RESTRICTED` (set for `.htaccess`): no
    /// functions that read files.
    restricted: bool,
}

type R<T> = Result<T, Stop>;

impl<'a> Parser<'a> {
    fn new(text: &'a str, string_mode: bool, restricted: bool) -> Self {
        let mut p = Parser {
            lex: Lexer::new(text, string_mode),
            tok: Tok::End,
            detail: None,
            depth: 0,
            restricted,
        };
        p.advance();
        p
    }

    fn advance(&mut self) -> Tok {
        let next = self.lex.next_token();
        if let Tok::Error(msg) = &next {
            self.detail = Some(msg.clone());
        }
        std::mem::replace(&mut self.tok, next)
    }

    fn unexpected<T>(&self) -> R<T> {
        Err(Stop::Syntax(format!(
            "syntax error, unexpected {}",
            self.tok.bison_name()
        )))
    }

    /// Bison's message where the state admits few tokens: it names them.
    fn expected<T>(&self, names: &[&str]) -> R<T> {
        Err(Stop::Syntax(format!(
            "syntax error, unexpected {}, expecting {}",
            self.tok.bison_name(),
            names.join(" or ")
        )))
    }

    /// Consume `want`, or fail naming what the state admits.
    fn expect(&mut self, want: Tok, names: &[&str]) -> R<()> {
        if self.tok == want {
            self.advance();
            Ok(())
        } else if names.is_empty() {
            self.unexpected()
        } else {
            self.expected(names)
        }
    }

    fn enter(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Stop::Syntax("memory exhausted".into()));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn lookup_failed(&mut self, msg: String) -> Word {
        self.detail = Some(msg);
        Word::Missing
    }

    /// Where a condition may start, a scanner error ends the parse quietly.
    fn abort_on_error(&self) -> R<()> {
        if matches!(self.tok, Tok::Error(_)) {
            Err(Stop::Abort)
        } else {
            Ok(())
        }
    }

    fn or(&mut self) -> R<Cond> {
        self.enter()?;
        let mut items = vec![self.and()?];
        while self.tok == Tok::Or {
            self.advance();
            self.abort_on_error()?;
            items.push(self.and()?);
        }
        self.leave();
        Ok(fold_right(items, |a, b| Cond::Or(Box::new(a), Box::new(b))))
    }

    fn and(&mut self) -> R<Cond> {
        self.enter()?;
        let mut items = vec![self.not()?];
        while self.tok == Tok::And {
            self.advance();
            self.abort_on_error()?;
            items.push(self.not()?);
        }
        self.leave();
        Ok(fold_right(items, |a, b| {
            Cond::And(Box::new(a), Box::new(b))
        }))
    }

    fn not(&mut self) -> R<Cond> {
        let mut count = 0usize;
        while self.tok == Tok::Not {
            self.advance();
            self.abort_on_error()?;
            count += 1;
            if count > MAX_DEPTH {
                return Err(Stop::Syntax("memory exhausted".into()));
            }
        }
        let mut c = self.primary()?;
        for _ in 0..count {
            c = Cond::Not(Box::new(c));
        }
        Ok(c)
    }

    fn primary(&mut self) -> R<Cond> {
        match self.tok.clone() {
            Tok::True => {
                self.advance();
                Ok(Cond::True)
            }
            Tok::False => {
                self.advance();
                Ok(Cond::False)
            }
            Tok::Error(_) => Err(Stop::Abort),
            Tok::LParen => {
                self.advance();
                self.abort_on_error()?;
                let c = self.or()?;
                self.expect(Tok::RParen, &["T_OP_OR", "T_OP_AND", "')'"])?;
                Ok(c)
            }
            Tok::Unary(name) => {
                self.advance();
                let arg = self.word()?;
                Ok(self.unary(&name, arg))
            }
            Tok::Digit(_) | Tok::VarBegin | Tok::Backref(_) | Tok::Id(_) | Tok::StrBegin => {
                let left = self.word()?;
                self.comparison(left)
            }
            _ => self.unexpected(),
        }
    }

    fn comparison(&mut self, left: Word) -> R<Cond> {
        let int = |op| move |l, r| Cond::IntCmp(op, l, r);
        let string = |op| move |l, r| Cond::StrCmp(op, l, r);
        let make: Box<dyn Fn(Word, Word) -> Cond> = match self.tok.clone() {
            Tok::IntEq => Box::new(int(CmpOp::Eq)),
            Tok::IntNe => Box::new(int(CmpOp::Ne)),
            Tok::IntLt => Box::new(int(CmpOp::Lt)),
            Tok::IntLe => Box::new(int(CmpOp::Le)),
            Tok::IntGt => Box::new(int(CmpOp::Gt)),
            Tok::IntGe => Box::new(int(CmpOp::Ge)),
            Tok::StrEq => Box::new(string(CmpOp::Eq)),
            Tok::StrNe => Box::new(string(CmpOp::Ne)),
            Tok::StrLt => Box::new(string(CmpOp::Lt)),
            Tok::StrLe => Box::new(string(CmpOp::Le)),
            Tok::StrGt => Box::new(string(CmpOp::Gt)),
            Tok::StrGe => Box::new(string(CmpOp::Ge)),
            Tok::Binary(name) => {
                self.advance();
                let right = self.word()?;
                return Ok(self.binary(&name, left, right));
            }
            Tok::In => {
                self.advance();
                return self.list(left);
            }
            Tok::Reg | Tok::Nre => {
                let negate = self.tok == Tok::Nre;
                self.advance();
                let Tok::Regex(pattern, icase) = self.tok.clone() else {
                    return self.expected(&["T_REGEX", "T_REGEX_I"]);
                };
                self.advance();
                let regex = Regex::new_bytes(&pattern, icase).map_err(|_| Stop::Regex)?;
                return Ok(Cond::Match {
                    word: left,
                    regex: Arc::new(regex),
                    negate,
                });
            }
            _ => return self.unexpected(),
        };
        self.advance();
        let right = self.word()?;
        Ok(make(left, right))
    }

    /// After `in`: `{ word, … }` or a list function (the core has none).
    fn list(&mut self, needle: Word) -> R<Cond> {
        match self.tok.clone() {
            Tok::LBrace => {
                self.advance();
                let mut items = vec![self.word()?];
                while self.tok == Tok::Comma {
                    self.advance();
                    items.push(self.word()?);
                    if items.len() > MAX_DEPTH * 16 {
                        return Err(Stop::Syntax("memory exhausted".into()));
                    }
                }
                self.expect(Tok::RBrace, &["'}'", "','"])?;
                // Apache's list is built newest first and walked that way.
                items.reverse();
                Ok(Cond::In(needle, items))
            }
            Tok::Id(name) => {
                self.advance();
                self.expect(Tok::LParen, &["'('"])?;
                let _arg = self.word()?;
                self.expect(Tok::RParen, &["T_OP_CONCAT", "')'"])?;
                self.detail = Some(not_found("List-returning function", &name));
                Ok(Cond::False)
            }
            _ => self.expected(&["T_ID", "'{'"]),
        }
    }

    /// `word ('.' word)*`, right-associative.
    fn word(&mut self) -> R<Word> {
        self.enter()?;
        let mut items = vec![self.atom()?];
        while self.tok == Tok::Concat {
            self.advance();
            items.push(self.atom()?);
            if items.len() > MAX_DEPTH {
                return Err(Stop::Syntax("memory exhausted".into()));
            }
        }
        self.leave();
        Ok(fold_right(items, |a, b| {
            Word::Concat(Box::new(a), Box::new(b))
        }))
    }

    fn atom(&mut self) -> R<Word> {
        match self.tok.clone() {
            Tok::Digit(d) => {
                self.advance();
                Ok(Word::Digit(d))
            }
            Tok::VarBegin => self.var(),
            Tok::Backref(n) => {
                self.advance();
                Ok(Word::Backref(n))
            }
            Tok::Id(name) => {
                self.advance();
                self.expect(Tok::LParen, &["'('"])?;
                let arg = self.word()?;
                self.expect(Tok::RParen, &["T_OP_CONCAT", "')'"])?;
                Ok(self.func(&name, arg))
            }
            Tok::StrBegin => {
                self.advance();
                if self.tok == Tok::StrEnd {
                    self.advance();
                    return Ok(Word::Str(Vec::new()));
                }
                let s = self.string()?;
                self.expect(
                    Tok::StrEnd,
                    &["T_STRING", "T_REGEX_BACKREF", "T_STR_END", "T_VAR_BEGIN"],
                )?;
                Ok(s)
            }
            _ => self.unexpected(),
        }
    }

    /// Text parts (`string` in Apache's grammar), left-associative.
    fn string(&mut self) -> R<Word> {
        self.enter()?;
        let mut acc = match self.tok {
            Tok::Error(_) => return Err(Stop::Abort),
            _ => self.string_part()?,
        };
        let mut n = 1;
        while matches!(self.tok, Tok::Str(_) | Tok::VarBegin | Tok::Backref(_)) {
            let part = self.string_part()?;
            acc = Word::Concat(Box::new(acc), Box::new(part));
            n += 1;
            if n > MAX_DEPTH {
                return Err(Stop::Syntax("memory exhausted".into()));
            }
        }
        self.leave();
        Ok(acc)
    }

    fn string_part(&mut self) -> R<Word> {
        match self.tok.clone() {
            Tok::Str(s) => {
                self.advance();
                Ok(Word::Str(s))
            }
            Tok::VarBegin => self.var(),
            Tok::Backref(n) => {
                self.advance();
                Ok(Word::Backref(n))
            }
            _ => self.unexpected(),
        }
    }

    /// `%{NAME}` or `%{func:arg}`.
    fn var(&mut self) -> R<Word> {
        self.advance();
        let Tok::Id(name) = self.tok.clone() else {
            return self.expected(&["T_ID"]);
        };
        self.advance();
        match self.tok {
            Tok::VarEnd => {
                self.advance();
                Ok(match Var::lookup(&name) {
                    Some(v) => Word::Var(v),
                    None if name.starts_with("SSL_") && super::ssl_vars() => Word::Ssl(name),
                    None => self.lookup_failed(not_found("Variable", &name)),
                })
            }
            Tok::Colon => {
                self.advance();
                if !matches!(
                    self.tok,
                    Tok::Error(_) | Tok::Str(_) | Tok::VarBegin | Tok::Backref(_)
                ) {
                    return self.expected(&[
                        "T_ERROR",
                        "T_STRING",
                        "T_REGEX_BACKREF",
                        "T_VAR_BEGIN",
                    ]);
                }
                let arg = self.string()?;
                self.expect(
                    Tok::VarEnd,
                    &["T_STRING", "T_REGEX_BACKREF", "T_VAR_BEGIN", "T_VAR_END"],
                )?;
                Ok(self.func(&name, arg))
            }
            _ => self.expected(&["T_VAR_END", "':'"]),
        }
    }

    fn func(&mut self, name: &str, arg: Word) -> Word {
        match Func::lookup(name) {
            Some(f) if self.restricted && f.is_restricted() => {
                self.lookup_failed(format!("{} not available in restricted context", f.name()))
            }
            Some(f) => Word::Func(f, Box::new(arg)),
            None => self.lookup_failed(not_found("Function", name)),
        }
    }

    fn unary(&mut self, name: &str, arg: Word) -> Cond {
        let op = match name {
            "n" => UnaryOp::NotEmpty,
            "z" => UnaryOp::Empty,
            "R" => match self.subnet_arg(name, &arg) {
                Some(s) => UnaryOp::RemoteIn(s),
                None => return Cond::False,
            },
            "T" => UnaryOp::Truth,
            "d" => UnaryOp::IsDir,
            "e" => UnaryOp::Exists,
            "f" => UnaryOp::IsFile,
            "s" => UnaryOp::NonEmptyFile,
            "L" | "h" => UnaryOp::IsSymlink,
            "x" => UnaryOp::Executable,
            "F" => UnaryOp::FileAccessible,
            "U" | "A" => UnaryOp::UrlAccessible,
            _ => {
                self.detail = Some(not_found("Unary operator", name));
                return Cond::False;
            }
        };
        Cond::Unary(op, arg)
    }

    fn binary(&mut self, name: &str, left: Word, right: Word) -> Cond {
        let op = match name.to_ascii_lowercase().as_str() {
            "ipmatch" => match self.subnet_arg(name, &right) {
                Some(s) => BinaryOp::IpMatch(s),
                None => return Cond::False,
            },
            "fnmatch" => BinaryOp::FnMatch,
            "strmatch" => BinaryOp::StrMatch,
            "strcmatch" => BinaryOp::StrCMatch,
            _ => {
                self.detail = Some(not_found("Binary operator", name));
                return Cond::False;
            }
        };
        Cond::Binary(op, left, right)
    }

    /// `-R` and `-ipmatch` take a constant string, parsed now.
    fn subnet_arg(&mut self, name: &str, arg: &Word) -> Option<Subnet> {
        let Word::Str(text) = arg else {
            self.detail = Some(format!(
                "-{name} requires subnet/netmask as constant argument"
            ));
            return None;
        };
        match Subnet::parse(&String::from_utf8_lossy(text)) {
            Ok(s) => Some(s),
            Err(e) => {
                self.detail = Some(e);
                None
            }
        }
    }

    /// The message for a parse that stopped, or for lookups that failed.
    fn message(&self, stop: Option<Stop>) -> Option<String> {
        let main = match stop {
            None => return self.detail.clone(),
            Some(Stop::Abort) => {
                return self.detail.clone().or_else(|| Some("syntax error".into()))
            }
            Some(Stop::Syntax(m)) => m,
            Some(Stop::Regex) => "Failed to compile regular expression".to_string(),
        };
        Some(match &self.detail {
            Some(d) => format!("{main}: {d}"),
            None => main,
        })
    }
}

/// `a, b, c` → `f(a, f(b, c))`.
fn fold_right<T>(items: Vec<T>, f: impl Fn(T, T) -> T) -> T {
    let mut it = items.into_iter().rev();
    let last = it.next().expect("at least one item");
    it.fold(last, |acc, x| f(x, acc))
}

/// Parse a condition; the error is Apache's message.
pub fn parse_cond(text: &str, restricted: bool) -> Result<Cond, String> {
    let mut p = Parser::new(text, false, restricted);
    let result = p.abort_on_error().and_then(|()| p.or()).and_then(|c| {
        if p.tok == Tok::End {
            Ok(c)
        } else {
            p.expected(&["$end"])
        }
    });
    match result {
        Ok(c) => match p.message(None) {
            Some(e) => Err(e),
            None => Ok(c),
        },
        Err(stop) => Err(p.message(Some(stop)).unwrap_or_default()),
    }
}

/// Parse a string expression (the whole text is string content).
pub fn parse_string(text: &str, restricted: bool) -> Result<Word, String> {
    let mut p = Parser::new(text, true, restricted);
    let result = p.string().and_then(|w| {
        if p.tok == Tok::End {
            Ok(w)
        } else {
            p.unexpected()
        }
    });
    match result {
        Ok(w) => match p.message(None) {
            Some(e) => Err(e),
            None => Ok(w),
        },
        Err(stop) => Err(p.message(Some(stop)).unwrap_or_default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(s: &str) -> String {
        parse_cond(s, false)
            .err()
            .unwrap_or_else(|| panic!("{s} parsed"))
    }

    #[test]
    fn accepts_apache_forms() {
        for s in [
            "true",
            "!false && (true || false)",
            "%{REQUEST_URI} =~ m#/login$#",
            "%{QUERY_STRING} =~ /(^|&)v=/",
            "%{HTTP:Accept-Encoding} =~ /gzip/i",
            "%{REQUEST_METHOD} in {'GET', 'HEAD'}",
            "-f %{REQUEST_FILENAME}",
            "%{REMOTE_ADDR} -ipmatch '127.0.0.0/8'",
            "-R '10.0.0.0/8' || -z %{QUERY_STRING}",
            "tolower(%{HTTP_HOST}) == 'example.com'",
            "%{TIME_HOUR} -ge 8 and %{TIME_HOUR} lt 17",
            "'a' . %{REQUEST_URI} . 'b' == 'x'",
            "%{env:FOO} = ''",
            "$1 == 'x'",
        ] {
            assert!(
                parse_cond(s, false).is_ok(),
                "{s}: {:?}",
                parse_cond(s, false).err()
            );
        }
    }

    #[test]
    fn lookups_fail_with_apache_wording() {
        assert_eq!(
            err("%{HTTP_ACCEPT_ENCODING} =~ /gzip/"),
            "Variable 'HTTP_ACCEPT_ENCODING' does not exist"
        );
        assert_eq!(err("foo('x') == 'y'"), "Function 'foo' does not exist");
        assert_eq!(err("-q 'x'"), "Unary operator '-q' does not exist");
        assert_eq!(err("'a' -foo 'b'"), "Binary operator '-foo' does not exist");
        assert_eq!(
            err("-R 10"),
            "-R requires subnet/netmask as constant argument"
        );
        assert_eq!(
            err("%{REMOTE_ADDR} -ipmatch 'x'"),
            "parsing of subnet/netmask failed"
        );
        assert_eq!(
            err("'a' in f('b')"),
            "List-returning function 'f' does not exist"
        );
    }

    #[test]
    fn scanner_and_syntax_errors() {
        assert_eq!(
            err("%{REQUEST_URI} == 'abc"),
            "Unterminated string or variable"
        );
        assert_eq!(
            err("%{A B}"),
            "syntax error, unexpected T_ERROR, expecting T_VAR_END or ':': Invalid character in variable name ' '"
        );
        assert!(err("%{REQUEST_URI} ==").starts_with("syntax error, unexpected $end"));
        assert!(err("(%{REQUEST_URI}) == 'x'").starts_with("syntax error"));
        assert_eq!(
            err("%{QUERY_STRING} =~ /(/"),
            "Failed to compile regular expression"
        );
        assert_eq!(
            err("%{NOPE} =="),
            "syntax error, unexpected $end: Variable 'NOPE' does not exist"
        );
        assert!(err("").starts_with("syntax error, unexpected $end"));
    }

    /// Messages Apache 2.4 logs for these conditions (`apache2 -t`).
    #[test]
    fn syntax_errors_word_for_word() {
        for (src, want) in [
            (r#"%{REQUEST_URI} =="#, r#"syntax error, unexpected $end"#),
            (r#"%{REQUEST_URI}"#, r#"syntax error, unexpected $end"#),
            (
                r#"true false"#,
                r#"syntax error, unexpected T_FALSE, expecting $end"#,
            ),
            (r#"true &&"#, r#"syntax error, unexpected $end"#),
            (
                r#"(true"#,
                r#"syntax error, unexpected $end, expecting T_OP_OR or T_OP_AND or ')'"#,
            ),
            (
                r#"(true false"#,
                r#"syntax error, unexpected T_FALSE, expecting T_OP_OR or T_OP_AND or ')'"#,
            ),
            (
                r#"%{REQUEST_URI} =~ 'x'"#,
                r#"syntax error, unexpected T_STR_BEGIN, expecting T_REGEX or T_REGEX_I"#,
            ),
            (
                r#"%{REQUEST_URI} in 'x'"#,
                r#"syntax error, unexpected T_STR_BEGIN, expecting T_ID or '{'"#,
            ),
            (
                r#"%{REQUEST_URI} in {'a' 'b'}"#,
                r#"syntax error, unexpected T_STR_BEGIN, expecting '}' or ','"#,
            ),
            (
                r#"%{REQUEST_URI} in {'a',}"#,
                r#"syntax error, unexpected '}'"#,
            ),
            (
                r#"tolower 'x'"#,
                r#"syntax error, unexpected T_STR_BEGIN, expecting '('"#,
            ),
            (
                r#"tolower('x' 'y') == 1"#,
                r#"syntax error, unexpected T_STR_BEGIN, expecting T_OP_CONCAT or ')'"#,
            ),
            (
                r#"'a' == 'b' == 'c'"#,
                r#"syntax error, unexpected T_OP_STR_EQ, expecting $end"#,
            ),
            (
                r#"%{}"#,
                r#"syntax error, unexpected T_VAR_END, expecting T_ID"#,
            ),
            (
                r#"%{:x}"#,
                r#"syntax error, unexpected ':', expecting T_ID"#,
            ),
            (
                r#"%{A:}"#,
                r#"syntax error, unexpected T_VAR_END, expecting T_ERROR or T_STRING or T_REGEX_BACKREF or T_VAR_BEGIN"#,
            ),
            (r#"%{HTTP:x y"#, r#"Unterminated string or variable"#),
            (
                r#"'abc%{REQUEST_URI}"#,
                r#"syntax error, unexpected T_ERROR, expecting T_STRING or T_REGEX_BACKREF or T_STR_END or T_VAR_BEGIN: Unterminated string or variable"#,
            ),
            (
                r#"'abc%{REQUEST_URI}def"#,
                r#"syntax error, unexpected T_ERROR, expecting T_STRING or T_REGEX_BACKREF or T_STR_END or T_VAR_BEGIN: Unterminated string or variable"#,
            ),
            (r#"== 1"#, r#"syntax error, unexpected T_OP_STR_EQ"#),
            (r#"-z"#, r#"syntax error, unexpected $end"#),
            (r#"-z -z"#, r#"syntax error, unexpected T_OP_UNARY"#),
            (r#"!"#, r#"syntax error, unexpected $end"#),
            (r#") "#, r#"syntax error, unexpected ')'"#),
            (r#"{ "#, r#"syntax error, unexpected '{'"#),
            (r#"'a' . == 'b'"#, r#"syntax error, unexpected T_OP_STR_EQ"#),
            (r#"1 2"#, r#"syntax error, unexpected T_DIGIT"#),
            (r#"'x' -ipmatch"#, r#"syntax error, unexpected $end"#),
            (
                r#"-R '1.2.3.4' 5"#,
                r#"syntax error, unexpected T_DIGIT, expecting $end"#,
            ),
            (
                r#"%{REQUEST_URI} =~ /x/ 'y'"#,
                r#"syntax error, unexpected T_STR_BEGIN, expecting $end"#,
            ),
            (
                r#"$1 == $"#,
                r#"syntax error, unexpected T_ERROR: Parse error near '$'"#,
            ),
            (
                r#"'a' -strmatch 'b' 'c'"#,
                r#"syntax error, unexpected T_STR_BEGIN, expecting $end"#,
            ),
            (r#"'\8'"#, r#"Bad escape sequence"#),
            (
                r#"'x' == 'y' && false)"#,
                r#"syntax error, unexpected ')', expecting $end"#,
            ),
        ] {
            assert_eq!(err(src), want, "{src}");
        }
    }

    #[test]
    fn deep_nesting_is_bounded() {
        let deep = "(".repeat(5000) + "true" + &")".repeat(5000);
        assert!(parse_cond(&deep, false).is_err());
        let long = vec!["'a'"; 5000].join(" . ") + " == 'x'";
        assert!(parse_cond(&long, false).is_err());
    }

    #[test]
    fn string_expressions() {
        assert!(parse_string("%{REQUEST_URI}", false).is_ok());
        assert!(parse_string("plain text, with 'quotes'", false).is_ok());
        assert!(parse_string("", false).is_ok());
        assert_eq!(
            parse_string("%{NOPE}", false).err().as_deref(),
            Some("Variable 'NOPE' does not exist")
        );
    }
}
