//! The scanner: expression text to tokens, with the states and the
//! longest-match rule of Apache's flex scanner (`util_expr_scan.l`).
//!
//! What a token is depends on where the scanner stands: inside `'…'`
//! text, `%{` starts a variable and `$1` a back-reference; inside
//! `%{name:…}` the argument is text up to `}`; after `m#` or `/` a regex
//! runs to the next delimiter (a backslash does not escape it). Outside
//! those, among the rules that match at a position the longest wins and,
//! between equally long ones, the one Apache lists first (so `lt` is an
//! operator but `ltx` a name, and `-in` is `in` but `-inx` a binary
//! operator).

/// Apache's scan buffers (`MAX_STRING_LEN`): a string or regex must stay
/// shorter than this.
const MAX_STRING_LEN: usize = 8192;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    True,
    False,
    /// The scanner gave up; the text is Apache's reason.
    Error(String),
    /// An optionally negative decimal number, as written.
    Digit(Vec<u8>),
    Id(String),
    /// Literal text inside quotes or a variable argument.
    Str(Vec<u8>),
    /// A regex and whether it had the `i` flag.
    Regex(Vec<u8>, bool),
    Backref(u8),
    Unary(String),
    Binary(String),
    StrBegin,
    StrEnd,
    VarBegin,
    VarEnd,
    IntEq,
    IntNe,
    IntLt,
    IntLe,
    IntGt,
    IntGe,
    Reg,
    Nre,
    In,
    StrEq,
    StrNe,
    StrLt,
    StrLe,
    StrGt,
    StrGe,
    Concat,
    Or,
    And,
    Not,
    LParen,
    RParen,
    LBrace,
    RBrace,
    Comma,
    Colon,
    End,
}

impl Tok {
    /// Bison's name for the token, as Apache's syntax errors print it.
    pub fn bison_name(&self) -> &'static str {
        match self {
            Tok::True => "T_TRUE",
            Tok::False => "T_FALSE",
            Tok::Error(_) => "T_ERROR",
            Tok::Digit(_) => "T_DIGIT",
            Tok::Id(_) => "T_ID",
            Tok::Str(_) => "T_STRING",
            Tok::Regex(_, false) => "T_REGEX",
            Tok::Regex(_, true) => "T_REGEX_I",
            Tok::Backref(_) => "T_REGEX_BACKREF",
            Tok::Unary(_) => "T_OP_UNARY",
            Tok::Binary(_) => "T_OP_BINARY",
            Tok::StrBegin => "T_STR_BEGIN",
            Tok::StrEnd => "T_STR_END",
            Tok::VarBegin => "T_VAR_BEGIN",
            Tok::VarEnd => "T_VAR_END",
            Tok::IntEq => "T_OP_EQ",
            Tok::IntNe => "T_OP_NE",
            Tok::IntLt => "T_OP_LT",
            Tok::IntLe => "T_OP_LE",
            Tok::IntGt => "T_OP_GT",
            Tok::IntGe => "T_OP_GE",
            Tok::Reg => "T_OP_REG",
            Tok::Nre => "T_OP_NRE",
            Tok::In => "T_OP_IN",
            Tok::StrEq => "T_OP_STR_EQ",
            Tok::StrNe => "T_OP_STR_NE",
            Tok::StrLt => "T_OP_STR_LT",
            Tok::StrLe => "T_OP_STR_LE",
            Tok::StrGt => "T_OP_STR_GT",
            Tok::StrGe => "T_OP_STR_GE",
            Tok::Concat => "T_OP_CONCAT",
            Tok::Or => "T_OP_OR",
            Tok::And => "T_OP_AND",
            Tok::Not => "T_OP_NOT",
            Tok::LParen => "'('",
            Tok::RParen => "')'",
            Tok::LBrace => "'{'",
            Tok::RBrace => "'}'",
            Tok::Comma => "','",
            Tok::Colon => "':'",
            Tok::End => "$end",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Initial,
    /// Inside quotes (or the whole text of a string expression).
    Str,
    /// After `%{`: the name.
    Var,
    /// After `%{name:`: the argument.
    VarArg,
}

pub struct Lexer<'a> {
    input: std::borrow::Cow<'a, [u8]>,
    pos: usize,
    state: State,
    stack: Vec<State>,
    /// The closing quote of the current string; NUL for a string expression.
    delim: u8,
    /// Text collected for the next `Tok::Str`.
    buf: Vec<u8>,
    string_mode: bool,
    /// A regex scanned to its end, waiting for its flag.
    pending_regex: Option<Vec<u8>>,
}

/// Characters that may follow `m` to open a regex.
const REGEX_DELIMS: &[u8] = b"/#$%^,;:_?|-!.'\"";

/// The fixed operators of the initial state, in Apache's rule order.
type Operator = (&'static [u8], Tok);

const OPERATORS: &[Operator] = &[
    (b"==", Tok::StrEq),
    (b"=", Tok::StrEq),
    (b"!=", Tok::StrNe),
    (b"<", Tok::StrLt),
    (b"<=", Tok::StrLe),
    (b">", Tok::StrGt),
    (b">=", Tok::StrGe),
    (b"=~", Tok::Reg),
    (b"!~", Tok::Nre),
    (b"and", Tok::And),
    (b"&&", Tok::And),
    (b"or", Tok::Or),
    (b"||", Tok::Or),
    (b"not", Tok::Not),
    (b"!", Tok::Not),
    (b".", Tok::Concat),
    (b"-in", Tok::In),
    (b"-eq", Tok::IntEq),
    (b"-ne", Tok::IntNe),
    (b"-ge", Tok::IntGe),
    (b"-le", Tok::IntLe),
    (b"-gt", Tok::IntGt),
    (b"-lt", Tok::IntLt),
    (b"lt", Tok::IntLt),
    (b"le", Tok::IntLe),
    (b"gt", Tok::IntGt),
    (b"ge", Tok::IntGe),
    (b"ne", Tok::IntNe),
    (b"eq", Tok::IntEq),
    (b"in", Tok::In),
];

fn is_id_start(c: u8) -> bool {
    c.is_ascii_alphabetic()
}

fn is_id_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

impl<'a> Lexer<'a> {
    /// A scanner for a condition (`string_mode` false) or for a string
    /// expression, whose whole text is string content.
    pub fn new(text: &'a str, string_mode: bool) -> Self {
        // The bytes Apache read from the file, which to it are a C string
        // ending at a NUL.
        let mut input = htaccel_conf::string_to_bytes(text);
        if let Some(end) = input.iter().position(|&b| b == 0) {
            input.to_mut().truncate(end);
        }
        Lexer {
            input,
            pos: 0,
            state: if string_mode {
                State::Str
            } else {
                State::Initial
            },
            stack: Vec::new(),
            delim: 0,
            buf: Vec::new(),
            string_mode,
            pending_regex: None,
        }
    }

    fn peek(&self, off: usize) -> Option<u8> {
        self.input.get(self.pos + off).copied()
    }

    fn error(&mut self, msg: impl Into<String>) -> Tok {
        // Nothing after an error is read.
        self.pos = self.input.len();
        self.state = State::Initial;
        self.stack.clear();
        Tok::Error(msg.into())
    }

    /// Append to the string buffer, failing as Apache does when it fills.
    fn append(&mut self, c: u8) -> Result<(), Tok> {
        self.buf.push(c);
        if self.buf.len() >= MAX_STRING_LEN {
            return Err(self.error("String too long"));
        }
        Ok(())
    }

    /// The collected text as a token; Apache's copy stops at a NUL.
    fn take_string(&mut self) -> Tok {
        let mut s = std::mem::take(&mut self.buf);
        if let Some(n) = s.iter().position(|&b| b == 0) {
            s.truncate(n);
        }
        Tok::Str(s)
    }

    fn push_state(&mut self, s: State) {
        self.stack.push(self.state);
        self.state = s;
    }

    fn pop_state(&mut self) {
        self.state = self.stack.pop().unwrap_or(State::Initial);
    }

    /// The next token.
    pub fn next_token(&mut self) -> Tok {
        if let Some(re) = self.pending_regex.take() {
            self.state = State::Initial;
            if self.peek(0) == Some(b'i') {
                self.pos += 1;
                return Tok::Regex(re, true);
            }
            return Tok::Regex(re, false);
        }
        match self.state {
            State::Initial => self.initial(),
            State::Str | State::VarArg => self.text(),
            State::Var => self.var(),
        }
    }

    fn initial(&mut self) -> Tok {
        loop {
            let Some(c) = self.peek(0) else {
                return Tok::End;
            };
            if matches!(c, b' ' | b'\t' | b'\n') {
                self.pos += 1;
                continue;
            }
            break;
        }
        let rest = &self.input[self.pos..];
        let c = rest[0];
        // Candidates: (length, rule order, token maker).
        let mut best: Option<(usize, Tok)> = None;
        let mut offer = |len: usize, tok: &dyn Fn() -> Tok| {
            let longer = match &best {
                Some((l, _)) => len > *l,
                None => true,
            };
            if len > 0 && longer {
                best = Some((len, tok()));
            }
        };
        if c == b'"' || c == b'\'' {
            offer(1, &|| Tok::StrBegin);
        }
        if rest.starts_with(b"%{") {
            offer(2, &|| Tok::VarBegin);
        }
        if c == b'$' && rest.get(1).is_some_and(u8::is_ascii_digit) {
            offer(2, &|| Tok::Backref(rest[1] - b'0'));
        }
        // Regex openers are handled below once chosen: mark them with End.
        let regex_len = if c == b'm' && rest.get(1).is_some_and(|d| REGEX_DELIMS.contains(d)) {
            2
        } else if c == b'/' {
            1
        } else {
            0
        };
        offer(regex_len, &|| Tok::End);
        for (text, tok) in OPERATORS {
            if rest.starts_with(text) {
                offer(text.len(), &|| tok.clone());
            }
        }
        if c == b'-'
            && rest
                .get(1)
                .is_some_and(|&d| d.is_ascii_alphabetic() || d == b'_')
        {
            let name_len = 1 + rest[2..].iter().take_while(|&&d| is_id_char(d)).count();
            let name = String::from_utf8_lossy(&rest[1..1 + name_len]).into_owned();
            if name_len == 1 {
                offer(2, &|| Tok::Unary(name.clone()));
            } else {
                offer(1 + name_len, &|| Tok::Binary(name.clone()));
            }
        }
        if rest.starts_with(b"true") {
            offer(4, &|| Tok::True);
        }
        if rest.starts_with(b"false") {
            offer(5, &|| Tok::False);
        }
        {
            let sign = usize::from(c == b'-');
            let digits = rest[sign..]
                .iter()
                .take_while(|d| d.is_ascii_digit())
                .count();
            if digits > 0 {
                offer(sign + digits, &|| {
                    Tok::Digit(rest[..sign + digits].to_vec())
                });
            }
        }
        if is_id_start(c) {
            let len = rest.iter().take_while(|&&d| is_id_char(d)).count();
            offer(len, &|| {
                Tok::Id(String::from_utf8_lossy(&rest[..len]).into_owned())
            });
        }
        match c {
            b'(' => offer(1, &|| Tok::LParen),
            b')' => offer(1, &|| Tok::RParen),
            b'{' => offer(1, &|| Tok::LBrace),
            b'}' => offer(1, &|| Tok::RBrace),
            b',' => offer(1, &|| Tok::Comma),
            b':' => offer(1, &|| Tok::Colon),
            _ => {}
        }
        let Some((len, tok)) = best else {
            let msg = format!("Parse error near '{}'", c as char);
            return self.error(msg);
        };
        self.pos += len;
        match tok {
            Tok::End => self.regex(rest[len - 1]),
            Tok::StrBegin => {
                self.delim = c;
                self.buf.clear();
                self.state = State::Str;
                Tok::StrBegin
            }
            Tok::VarBegin => {
                self.push_state(State::Var);
                Tok::VarBegin
            }
            other => other,
        }
    }

    /// A regex body up to `delim`; its flag is read by the next call.
    fn regex(&mut self, delim: u8) -> Tok {
        let mut re = Vec::new();
        loop {
            let Some(c) = self.peek(0) else {
                // Apache's scanner just stops: the parser sees the end.
                return Tok::End;
            };
            self.pos += 1;
            if c == delim {
                break;
            }
            re.push(c);
            if re.len() >= MAX_STRING_LEN {
                return self.error("Regexp too long");
            }
        }
        self.pending_regex = Some(re);
        self.next_token()
    }

    /// Text inside quotes, a string expression, or a variable argument.
    fn text(&mut self) -> Tok {
        let in_str = self.state == State::Str;
        loop {
            let Some(c) = self.peek(0) else {
                if in_str && self.string_mode {
                    self.state = State::Initial;
                    return self.take_string();
                }
                return self.error("Unterminated string or variable");
            };
            match c {
                b'"' | b'\'' if in_str => {
                    if c != self.delim {
                        self.pos += 1;
                        if let Err(e) = self.append(c) {
                            return e;
                        }
                        continue;
                    }
                    if self.buf.is_empty() {
                        self.pos += 1;
                        self.state = State::Initial;
                        return Tok::StrEnd;
                    }
                    return self.take_string();
                }
                b'\n' => return self.error("Unterminated string or variable"),
                b'\\' => {
                    if let Err(e) = self.escape() {
                        return e;
                    }
                }
                b'$' if self.peek(1).is_some_and(|d| d.is_ascii_digit()) => {
                    if !self.buf.is_empty() {
                        return self.take_string();
                    }
                    let n = self.peek(1).unwrap_or(b'0') - b'0';
                    self.pos += 2;
                    return Tok::Backref(n);
                }
                b'%' if self.peek(1) == Some(b'{') => {
                    if !self.buf.is_empty() {
                        return self.take_string();
                    }
                    self.pos += 2;
                    self.push_state(State::Var);
                    return Tok::VarBegin;
                }
                b'}' if !in_str => {
                    if !self.buf.is_empty() {
                        return self.take_string();
                    }
                    self.pos += 1;
                    self.pop_state();
                    return Tok::VarEnd;
                }
                b'"' | b'\'' => {
                    // No rule of Apache's scanner takes a quote inside a
                    // variable argument: its scanner stops there.
                    return self.error("flex scanner jammed");
                }
                _ => {
                    self.pos += 1;
                    if let Err(e) = self.append(c) {
                        return e;
                    }
                }
            }
        }
    }

    /// A backslash sequence in text.
    fn escape(&mut self) -> Result<(), Tok> {
        let after = &self.input[self.pos + 1..];
        let digits = after.iter().take_while(|d| d.is_ascii_digit()).count();
        let octal = after
            .iter()
            .take(3)
            .take_while(|d| (b'0'..=b'7').contains(d))
            .count();
        if digits > octal {
            return Err(self.error("Bad escape sequence"));
        }
        if octal > 0 {
            let v = after[..octal]
                .iter()
                .fold(0u32, |acc, d| acc * 8 + u32::from(d - b'0'));
            if v > 0xff {
                return Err(self.error("Escape sequence out of bound"));
            }
            self.pos += 1 + octal;
            return self.append(v as u8);
        }
        let Some(&next) = after.first() else {
            return Err(self.error("flex scanner jammed"));
        };
        self.pos += 2;
        self.append(match next {
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'b' => 0x08,
            b'f' => 0x0c,
            other => other,
        })
    }

    /// A variable name, `:` or `}` after `%{`.
    fn var(&mut self) -> Tok {
        let Some(c) = self.peek(0) else {
            return self.error("Unterminated string or variable");
        };
        if is_id_start(c) {
            let len = self.input[self.pos..]
                .iter()
                .take_while(|&&d| is_id_char(d))
                .count();
            let name = String::from_utf8_lossy(&self.input[self.pos..self.pos + len]).into_owned();
            self.pos += len;
            return Tok::Id(name);
        }
        self.pos += 1;
        match c {
            b'}' => {
                self.pop_state();
                Tok::VarEnd
            }
            b':' => {
                self.state = State::VarArg;
                self.buf.clear();
                Tok::Colon
            }
            other => {
                let msg = format!("Invalid character in variable name '{}'", other as char);
                self.error(msg)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        let mut l = Lexer::new(s, false);
        let mut out = Vec::new();
        loop {
            let t = l.next_token();
            let end = matches!(t, Tok::End | Tok::Error(_));
            out.push(t);
            if end {
                return out;
            }
        }
    }

    #[test]
    fn longest_match_and_rule_order() {
        assert_eq!(toks("lt ltx")[..2], [Tok::IntLt, Tok::Id("ltx".into())]);
        assert_eq!(toks("-in")[0], Tok::In);
        assert_eq!(toks("-inx")[0], Tok::Binary("inx".into()));
        assert_eq!(toks("-f")[0], Tok::Unary("f".into()));
        assert_eq!(toks("-12")[0], Tok::Digit(b"-12".to_vec()));
        assert_eq!(toks("true")[0], Tok::True);
        assert_eq!(toks("trueish")[0], Tok::Id("trueish".into()));
        assert_eq!(toks("= == =~")[..3], [Tok::StrEq, Tok::StrEq, Tok::Reg]);
        assert_eq!(toks("m_x")[0], Tok::Id("m_x".into()));
    }

    #[test]
    fn regexes() {
        assert_eq!(toks("/a b/")[0], Tok::Regex(b"a b".to_vec(), false));
        assert_eq!(toks("m#a/b#i")[0], Tok::Regex(b"a/b".to_vec(), true));
        assert_eq!(toks("/a\\/")[0], Tok::Regex(b"a\\".to_vec(), false));
        assert_eq!(toks("/abc")[0], Tok::End);
        assert_eq!(
            toks("/x/ix")[..2],
            [Tok::Regex(b"x".to_vec(), true), Tok::Id("x".into())]
        );
    }

    #[test]
    fn strings_and_variables() {
        assert_eq!(
            toks("'a%{X}b\\n$1'"),
            vec![
                Tok::StrBegin,
                Tok::Str(b"a".to_vec()),
                Tok::VarBegin,
                Tok::Id("X".into()),
                Tok::VarEnd,
                Tok::Str(b"b\n".to_vec()),
                Tok::Backref(1),
                Tok::StrEnd,
                Tok::End
            ]
        );
        assert_eq!(
            toks("%{HTTP:Accept}"),
            vec![
                Tok::VarBegin,
                Tok::Id("HTTP".into()),
                Tok::Colon,
                Tok::Str(b"Accept".to_vec()),
                Tok::VarEnd,
                Tok::End
            ]
        );
        assert_eq!(toks("'\"'")[1], Tok::Str(b"\"".to_vec()));
        assert_eq!(toks("'\\101'")[1], Tok::Str(b"A".to_vec()));
    }

    #[test]
    fn scanner_errors() {
        assert_eq!(
            toks("'abc").last(),
            Some(&Tok::Error("Unterminated string or variable".into()))
        );
        assert_eq!(
            toks("%{A B}").last(),
            Some(&Tok::Error("Invalid character in variable name ' '".into()))
        );
        assert_eq!(
            toks("'\\18'").last(),
            Some(&Tok::Error("Bad escape sequence".into()))
        );
        assert_eq!(
            toks("'\\777'").last(),
            Some(&Tok::Error("Escape sequence out of bound".into()))
        );
        assert_eq!(toks("a # b")[1], Tok::Error("Parse error near '#'".into()));
        assert_eq!(toks("\r")[0], Tok::Error("Parse error near '\r'".into()));
    }

    #[test]
    fn string_mode() {
        let mut l = Lexer::new("x %{A} y", true);
        assert_eq!(l.next_token(), Tok::Str(b"x ".to_vec()));
        assert_eq!(l.next_token(), Tok::VarBegin);
        assert_eq!(l.next_token(), Tok::Id("A".into()));
        assert_eq!(l.next_token(), Tok::VarEnd);
        assert_eq!(l.next_token(), Tok::Str(b" y".to_vec()));
        assert_eq!(l.next_token(), Tok::End);
        let mut l = Lexer::new("a'b\"", true);
        assert_eq!(l.next_token(), Tok::Str(b"a'b\"".to_vec()));
    }
}
