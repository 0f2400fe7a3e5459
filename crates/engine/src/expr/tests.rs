//! Evaluation tables against a fixed request, and random input that must
//! neither panic nor take long.

use super::*;
use std::collections::HashMap;

struct Fake {
    vars: HashMap<Var, &'static str>,
    headers: HashMap<&'static str, &'static str>,
    env: HashMap<&'static str, &'static str>,
}

fn fake() -> Fake {
    Fake {
        vars: HashMap::from([
            (Var::RequestUri, "/app/login"),
            (Var::QueryString, "a=1&v=3"),
            (Var::RequestMethod, "GET"),
            (Var::RemoteAddr, "127.0.0.1"),
            (Var::RequestFilename, "/"),
        ]),
        headers: HashMap::from([
            ("user-agent", "curl/8"),
            ("host", "example.com"),
            ("accept-encoding", "gzip, br"),
        ]),
        env: HashMap::from([("FOO", "bar")]),
    }
}

impl ExprContext for Fake {
    fn var(&self, var: Var) -> Option<Cow<'_, [u8]>> {
        self.vars.get(&var).map(|v| Cow::Borrowed(v.as_bytes()))
    }
    fn request_header(&self, name: &str) -> Option<Cow<'_, [u8]>> {
        self.headers
            .get(name.to_ascii_lowercase().as_str())
            .map(|v| Cow::Borrowed(v.as_bytes()))
    }
    fn response_header(&self, _name: &str) -> Option<Cow<'_, [u8]>> {
        None
    }
    fn env(&self, name: &str) -> Option<Cow<'_, [u8]>> {
        self.env.get(name).map(|v| Cow::Borrowed(v.as_bytes()))
    }
    fn note(&self, _name: &str) -> Option<Cow<'_, [u8]>> {
        None
    }
    fn remote_ip(&self) -> Option<IpAddr> {
        "127.0.0.1".parse().ok()
    }
    fn url_accessible(&self, url: &str) -> bool {
        url == "/ok"
    }
    fn file_accessible(&self, _path: &str) -> bool {
        false
    }
}

fn holds(s: &str) -> bool {
    let e = Expr::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    e.eval(&fake()).value.unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn text(s: &str) -> String {
    let e = StrExpr::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    String::from_utf8(e.eval(&fake()).value.unwrap()).unwrap()
}

#[test]
fn boolean_logic() {
    for (s, want) in [
        ("true", true),
        ("false", false),
        ("!true", false),
        ("!!true", true),
        ("true && false", false),
        ("false || true", true),
        ("!false && (false || true)", true),
        ("not true or true", true),
        ("!(true && false)", true),
        ("-n %{QUERY_STRING}", true),
        ("-z %{PATH_INFO}", true),
        ("-T 'off'", false),
        ("-T 'yes'", true),
    ] {
        assert_eq!(holds(s), want, "{s}");
    }
}

#[test]
fn comparisons() {
    for (s, want) in [
        ("%{REQUEST_METHOD} == 'GET'", true),
        ("%{REQUEST_METHOD} = 'GET'", true),
        ("%{REQUEST_METHOD} != 'GET'", false),
        ("'abc' < 'abd'", true),
        ("'b' >= 'a'", true),
        ("'10' < '9'", true),
        ("10 -lt 9", false),
        ("'10' -gt '9'", true),
        ("' 7x' -eq 7", true),
        ("-3 lt 2", true),
        ("2 ge 2", true),
        ("%{REQUEST_METHOD} in {'POST', 'GET'}", true),
        ("%{REQUEST_METHOD} -in {'POST'}", false),
        ("%{REQUEST_URI} =~ m#/login$#", true),
        ("%{REQUEST_URI} =~ /LOGIN/", false),
        ("%{REQUEST_URI} =~ /LOGIN/i", true),
        ("%{REQUEST_URI} !~ /x/", true),
        ("%{QUERY_STRING} =~ /(^|&)v=/", true),
        ("%{HTTP_HOST} == 'example.com'", true),
        ("%{HTTP:Accept-Encoding} =~ /gzip/", true),
        ("req('User-Agent') -strmatch 'curl*'", true),
        ("%{REQUEST_URI} -fnmatch '/app/*'", true),
        ("%{REQUEST_URI} -fnmatch '/*'", false),
        ("%{REQUEST_URI} -strmatch '/*'", true),
        ("%{REQUEST_URI} -strcmatch '/APP/*'", true),
        ("%{REMOTE_ADDR} -ipmatch '127.0.0.0/8'", true),
        ("%{REMOTE_ADDR} -ipmatch '10.0.0.0/8'", false),
        ("-R '127.0.0.1'", true),
        ("-d %{REQUEST_FILENAME}", true),
        ("-f %{REQUEST_FILENAME}", false),
        ("-U '/ok'", true),
        ("-A '/nope'", false),
        ("%{env:FOO} == 'bar'", true),
        ("env('FOO') == 'bar' && reqenv('FOO') == 'bar'", true),
    ] {
        assert_eq!(holds(s), want, "{s}");
    }
}

#[test]
fn backreferences() {
    assert!(holds("%{REQUEST_URI} =~ m#^/(\\w+)/# && $1 == 'app'"));
    assert!(holds("%{REQUEST_URI} =~ m#^/(\\w+)/# && '$0' == '/app/'"));
    // A failed match with groups clears them.
    assert!(holds(
        "%{REQUEST_URI} =~ m#^/(\\w+)/# && !(%{REQUEST_URI} =~ /(x)/) && -z $1"
    ));
    // A regex without groups leaves them.
    assert!(holds(
        "%{REQUEST_URI} =~ m#^/(\\w+)/# && 'x' =~ /x/ && $1 == 'app'"
    ));
}

#[test]
fn string_functions_and_expressions() {
    assert_eq!(text("%{REQUEST_URI}"), "/app/login");
    assert_eq!(
        text("uri=%{REQUEST_URI} q=%{QUERY_STRING}"),
        "uri=/app/login q=a=1&v=3"
    );
    assert_eq!(text("%{tolower:ABC}%{toupper:def}"), "abcDEF");
    assert_eq!(text("%{base64:hello}"), "aGVsbG8=");
    assert_eq!(text("%{unbase64:aGVsbG8=}"), "hello");
    assert!(holds("md5('') == 'd41d8cd98f00b204e9800998ecf8427e'"));
    // An empty variable argument is a syntax error, as in Apache.
    assert!(StrExpr::parse("%{md5:}").is_err());
    assert_eq!(text("%{escape:a b?c}"), "a%20b%3fc");
    assert_eq!(text("%{unescape:a%20b}"), "a b");
    assert_eq!(text("it's \"quoted\""), "it's \"quoted\"");
    assert_eq!(text("100% sure}"), "100% sure}");
    assert!(holds("tolower('ABC') . 'd' == 'abcd'"));
    assert!(holds(
        "sha1('abc') == 'a9993e364706816aba3e25717850c26c9cd0d89d'"
    ));
    assert!(holds("filesize('/nonexistent') == '0'"));
}

#[test]
fn vary_collects_request_headers_but_host() {
    let e = Expr::parse("%{HTTP_HOST} == 'x' || %{HTTP_USER_AGENT} == 'y' || req('Accept') == ''")
        .unwrap();
    let out = e.eval(&fake());
    assert_eq!(out.value, Ok(true));
    assert_eq!(out.vary.as_deref(), Some("User-Agent, Accept"));
    let e = Expr::parse("req_novary('Accept') == ''").unwrap();
    assert_eq!(e.eval(&fake()).vary, None);
}

#[test]
fn recursion_limit_is_an_error() {
    let nested = "tolower(".repeat(25) + "'x'" + &")".repeat(25) + " == 'x'";
    let e = Expr::parse(&nested).unwrap();
    let out = e.eval(&fake());
    assert_eq!(out.value, Err("Recursion limit reached".to_string()));
    let shallow = "tolower(".repeat(10) + "'x'" + &")".repeat(10) + " == 'x'";
    assert_eq!(Expr::parse(&shallow).unwrap().eval(&fake()).value, Ok(true));
}

#[test]
fn file_function_error() {
    let e = Expr::parse("file('/nonexistent/x') == ''").unwrap();
    assert_eq!(
        e.eval(&fake()).value,
        Err("Cannot open file /nonexistent/x".to_string())
    );
}

#[test]
fn typo3_expression_compiles_and_matches() {
    let src = r"%{REQUEST_URI} =~ m#(?i:/\.|/\x23.*\x23|/(?:ChangeLog|ToDo|Readme|License)(?:\.md|\.txt)?|/composer\.(?:json|lock)|/ext_conf_template\.txt|/ext_typoscript_constants\.txt|/ext_typoscript_setup\.txt|flexform[^.]*\.xml|locallang[^.]*\.(?:xml|xlf)|\.(?:bak|co?nf|cfg|neon|ya?ml|ts|typoscript|tsconfig|dist|fla|in[ci]|log|sh|sql(?:\..*)?|sqlite(?:\..*)?|sw[op]|git.*|rc)|.*~)$#";
    assert!(Expr::parse(src).is_ok());
}

/// A small deterministic generator (xorshift) for the random tests.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}

#[test]
fn random_input_never_panics_and_is_quick() {
    const PIECES: &[&str] = &[
        "%{",
        "}",
        "REQUEST_URI",
        "HTTP:Accept",
        "'",
        "\"",
        "(",
        ")",
        "{",
        "}",
        ",",
        "=~",
        "/a(b)?/",
        "m#x#i",
        "==",
        "!=",
        "-eq",
        "-lt",
        "in",
        "&&",
        "||",
        "!",
        "true",
        "false",
        "-f",
        "-n",
        "-ipmatch",
        "'127.0.0.1/8'",
        "$1",
        "$0",
        ".",
        "tolower(",
        "req(",
        " ",
        "\\",
        "\\101",
        "x",
        "1",
        "-2",
        "%",
        "$",
        ":",
        "env",
        "\n",
        "\t",
        "m",
        "/",
        "#",
        "*",
        "[",
        "]",
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let start = std::time::Instant::now();
    for _ in 0..20_000 {
        let n = (rng.next() % 24) as usize;
        let s: String = (0..n).map(|_| rng.pick(PIECES)).collect();
        if let Ok(e) = Expr::parse(&s) {
            let _ = e.eval(&fake());
        }
        if let Ok(e) = StrExpr::parse(&s) {
            let _ = e.eval(&fake());
        }
    }
    // Arbitrary bytes, too.
    for _ in 0..5_000 {
        let n = (rng.next() % 40) as usize;
        let bytes: Vec<u8> = (0..n).map(|_| (rng.next() % 128) as u8).collect();
        let s = String::from_utf8_lossy(&bytes);
        if let Ok(e) = Expr::parse(&s) {
            let _ = e.eval(&fake());
        }
        let _ = StrExpr::parse(&s);
    }
    assert!(start.elapsed().as_secs() < 60);
}

/// Bytes that were not UTF-8 in the file reach the language as bytes.
#[test]
fn raw_bytes_in_configuration_text() {
    let text = htaccel_conf::bytes_to_string(b"'caf\xe9' =~ /^caf\xe9$/");
    let e = Expr::parse(&text).unwrap();
    assert_eq!(e.eval(&fake()).value, Ok(true));
}

#[test]
fn ssl_variables_exist_only_with_mod_ssl() {
    super::set_ssl_vars(false);
    let err = Expr::parse("%{SSL_PROTOCOL} == 'TLSv1.3'").unwrap_err();
    assert!(err.contains("SSL_PROTOCOL"), "{err}");
    super::set_ssl_vars(true);
    assert!(Expr::parse("%{SSL_PROTOCOL} == 'TLSv1.3'").is_ok());
    super::set_ssl_vars(false);
}
