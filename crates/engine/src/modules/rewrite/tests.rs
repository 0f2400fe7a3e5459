//! Unit tests of the parser, the expansion and the rule loop over a fake
//! request. Behaviour against Apache itself is proven by the differential
//! cases in `tests/cases/rewrite/`.

use super::exec::{self, Outcome, PerDir, State};
use super::parse::{self, cflag, flag, CondKind};
use super::vars::{self, Fact, Host, Template};
use super::{opt, PerDirConf, RewriteDir};
use htaccel_conf::Origin;
use std::collections::HashMap;
use std::sync::Arc;

fn origin() -> Origin {
    Origin::new("/t/.htaccess", 1)
}

/// A request with fixed answers.
#[derive(Default)]
struct Fake {
    headers: HashMap<String, String>,
    env: Vec<(String, String)>,
    files: HashMap<String, crate::fs::Kind>,
    subreq: bool,
    cookies: Vec<String>,
    maps: HashMap<(String, String), String>,
    stats: usize,
}

impl Host for Fake {
    fn header(&self, name: &str) -> Option<String> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    }
    fn env(&self, name: &str) -> Option<String> {
        self.env
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    }
    fn set_env(&mut self, name: &str, value: String) {
        self.env.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        self.env.push((name.into(), value));
    }
    fn unset_env(&mut self, name: &str) {
        self.env.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
    }
    fn fact(&mut self, f: Fact) -> Option<String> {
        Some(
            match f {
                Fact::RequestUri => "/uri",
                Fact::ServerName => "example.com",
                Fact::ServerPort => "80",
                Fact::RequestScheme => "http",
                Fact::Https => "off",
                Fact::RemoteAddr => "127.0.0.1",
                Fact::TheRequest => "GET /uri HTTP/1.1",
                Fact::DocumentRoot => "/docroot",
                _ => return None,
            }
            .to_string(),
        )
    }
    fn stat(&mut self, path: &str) -> Option<crate::fs::FileInfo> {
        self.stats += 1;
        self.files.get(path).map(|k| crate::fs::FileInfo {
            kind: *k,
            size: 1,
            mtime: std::time::SystemTime::UNIX_EPOCH,
            mtime_us: 0,
            inode: 1,
            dev: 1,
            uid: 0,
            mode: 0o644,
            ctime_ns: 0,
        })
    }
    fn lstat(&mut self, path: &str) -> Option<crate::fs::FileInfo> {
        self.stat(path)
    }
    fn subreq_ok(&self) -> bool {
        true
    }
    fn matches_vhost(&self, host: &str, port: u16) -> bool {
        host == "example.com" && port == 80
    }
    fn is_subreq(&self) -> bool {
        self.subreq
    }
    fn subreq_uri_status(&mut self, _uri: &str) -> u16 {
        200
    }
    fn subreq_file(&mut self, _path: &str) -> (u16, bool) {
        (200, true)
    }
    fn lookahead(&mut self, _path: &str, _file: bool, _var: &str) -> String {
        String::new()
    }
    fn map(&mut self, name: &str, key: &str) -> Option<String> {
        self.maps.get(&(name.to_string(), key.to_string())).cloned()
    }
    fn add_cookie(&mut self, spec: &str) {
        self.cookies.push(spec.to_string());
    }
    fn now(&self) -> i64 {
        0
    }
}

/// Compile a file's worth of `RewriteCond`/`RewriteRule` lines.
fn rules(lines: &[&str]) -> Vec<Arc<parse::Rule>> {
    let mut out = Vec::new();
    let mut conds = Vec::new();
    for l in lines {
        if let Some(c) = l.strip_prefix("RewriteCond ") {
            conds.push(parse::parse_cond(c, &origin(), true, &mut |_| {}).unwrap());
        } else if let Some(r) = l.strip_prefix("RewriteRule ") {
            out.push(Arc::new(
                parse::parse_rule(r, &origin(), std::mem::take(&mut conds)).unwrap(),
            ));
        }
    }
    out
}

fn run_dir(
    lines: &[&str],
    filename: &str,
    args: Option<&str>,
    host: &mut Fake,
) -> (Outcome, State) {
    let rules = rules(lines);
    let mut st = State {
        filename: filename.into(),
        args: args.map(str::to_string),
        status: 200,
        ..State::default()
    };
    let pd = PerDir {
        directory: "/docroot/",
        base: None,
    };
    let res = exec::apply_list(&rules, Some(pd), &mut st, host, 16380);
    (res.outcome, st)
}

#[test]
fn split_line_quotes_and_escaped_spaces() {
    let (a, b, c) = parse::split_line(r#""^a b$" 'x y' [L]"#).unwrap();
    assert_eq!(
        (a.as_str(), b.as_str(), c.as_deref()),
        ("^a b$", "x y", Some("[L]"))
    );
    let (a, b, c) = parse::split_line(r"^a\ b$ c").unwrap();
    assert_eq!((a.as_str(), b.as_str(), c), (r"^a\ b$", "c", None));
    let (_, _, c) = parse::split_line("a b [L] trailing words").unwrap();
    assert_eq!(c.as_deref(), Some("[L]"));
    assert!(parse::split_line("onlyone").is_err());
    let e = parse::split_line("a b L").unwrap_err();
    assert!(e.message.contains("must begin with '['"), "{}", e.message);
    let e = parse::split_line("a b [L").unwrap_err();
    assert!(e.message.contains("must end with ']'"));
}

#[test]
fn flag_field_items() {
    assert_eq!(
        parse::flag_items("[L, R=301 ,E=a:b]"),
        vec![
            ("L".into(), "".into()),
            ("R".into(), "301".into()),
            ("E".into(), "a:b".into())
        ]
    );
    assert_eq!(parse::flag_items("[L,]").last().unwrap().0, "");
    assert_eq!(parse::flag_items("[]"), vec![("".into(), "".into())]);
}

#[test]
fn rule_flags_parse_like_apache() {
    let r = parse::parse_rule("^a$ b [R=permanent,L,NC,QSA]", &origin(), vec![]).unwrap();
    assert_eq!(r.status, 301);
    assert!(r.flags & flag::FORCEREDIRECT != 0 && r.flags & flag::NOCASE != 0);
    let r = parse::parse_rule("^a$ - [R=404]", &origin(), vec![]).unwrap();
    assert!(r.flags & flag::STATUS != 0 && r.flags & flag::NOSUB != 0);
    assert_eq!(r.status, 404);
    let r = parse::parse_rule("^a$ b [R=foo]", &origin(), vec![]).unwrap();
    assert_eq!(r.status, 0);
    let e = parse::parse_rule("^a$ b [R=399]", &origin(), vec![]).unwrap_err();
    assert_eq!(
        e,
        "RewriteRule: invalid HTTP response code '399' for flag 'R'"
    );
    assert!(parse::parse_rule("^a$ b [R=418]", &origin(), vec![]).is_err());
    let e = parse::parse_rule("^a$ b [XYZ]", &origin(), vec![]).unwrap_err();
    assert_eq!(e, "RewriteRule: unknown flag 'XYZ'");
    // Any word starting with D is accepted.
    assert!(parse::parse_rule("^a$ b [Dummy]", &origin(), vec![]).is_ok());
    assert!(parse::parse_rule("^a$ b [BNE]", &origin(), vec![]).is_err());
    let e = parse::parse_rule("^( x", &origin(), vec![]).unwrap_err();
    assert_eq!(e, "RewriteRule: cannot compile regular expression '^('");
    let r = parse::parse_rule("^a$ b? [L]", &origin(), vec![]).unwrap();
    assert!(r.flags & flag::QSNONE != 0);
    assert_eq!(r.output, "b");
    let r = parse::parse_rule("^a$ b? [QSA]", &origin(), vec![]).unwrap();
    assert!(r.flags & flag::QSLAST != 0);
    let r = parse::parse_rule("^a$ b [QSD]", &origin(), vec![]).unwrap();
    assert!(r.flags & flag::QSNONE != 0);
    let r = parse::parse_rule("!^a$ b", &origin(), vec![]).unwrap();
    assert!(r.flags & flag::NOTMATCH != 0);
    let r = parse::parse_rule("^a$ b [N=5,S=2]", &origin(), vec![]).unwrap();
    assert_eq!((r.max_rounds, r.skip), (5, 2));
    let e = parse::parse_rule("^a$", &origin(), vec![]).unwrap_err();
    assert_eq!(e, "RewriteRule: bad argument line: at least two arguments required (pattern='^a$', substitution='(null)', flags='(null)')");
}

#[test]
fn cond_patterns_parse_like_apache() {
    let mut warnings = Vec::new();
    let mut w = |m: String| warnings.push(m);
    let c = parse::parse_cond("%{X} !-f", &origin(), true, &mut w).unwrap();
    assert_eq!(c.kind, CondKind::FileExists);
    assert!(c.flags & cflag::NOTMATCH != 0);
    let c = parse::parse_cond("%{X} -ne5", &origin(), true, &mut w).unwrap();
    assert_eq!((c.kind, c.operand.as_str()), (CondKind::IntEq, "5"));
    assert!(c.flags & cflag::NOTMATCH != 0);
    let c = parse::parse_cond("%{X} -lt", &origin(), true, &mut w).unwrap();
    assert_eq!(c.kind, CondKind::Regex);
    let c = parse::parse_cond(r#"%{X} ="""#, &origin(), true, &mut w).unwrap();
    assert_eq!((c.kind, c.operand.as_str()), (CondKind::StrEq, ""));
    let c = parse::parse_cond("%{X} <=b", &origin(), true, &mut w).unwrap();
    assert_eq!((c.kind, c.operand.as_str()), (CondKind::StrLe, "b"));
    let c = parse::parse_cond("%{X} =", &origin(), true, &mut w).unwrap();
    assert_eq!(c.kind, CondKind::Regex);
    let c = parse::parse_cond("%{X} -d [NC,OR]", &origin(), true, &mut w).unwrap();
    assert_eq!(c.flags & cflag::NOCASE, 0);
    assert!(c.flags & cflag::ORNEXT != 0);
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].starts_with("AH00665"));
    assert!(parse::parse_cond("%{X} y [FOO]", &origin(), true, &mut |_| {}).is_err());
    let c = parse::parse_cond(
        "expr \"%{QUERY_STRING} =~ /q/\"",
        &origin(),
        true,
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(c.kind, CondKind::Expr);
    let e = parse::parse_cond("expr \"%{NOPE} == 1\"", &origin(), true, &mut |_| {}).unwrap_err();
    assert!(
        e.starts_with("RewriteCond: cannot compile expression"),
        "{e}"
    );
}

#[test]
fn atoi_is_c_atoi() {
    assert_eq!(parse::atoi("  42abc"), 42);
    assert_eq!(parse::atoi("-7"), -7);
    assert_eq!(parse::atoi("abc"), 0);
    assert_eq!(parse::atoi("+3"), 3);
}

struct Refs {
    rule: Vec<u8>,
}
impl vars::Scope for Refs {
    fn variable(&mut self, var: &super::variable::Var) -> std::borrow::Cow<'_, str> {
        format!("<{}>", var.text).into()
    }
    fn backref(&self, rule: bool, n: usize) -> Option<&[u8]> {
        if rule && n == 1 {
            Some(&self.rule)
        } else {
            None
        }
    }
    fn map(&mut self, name: &str, key: &str) -> Option<String> {
        (name == "m" && key == "k").then(|| "V".to_string())
    }
}

fn ex(t: &str) -> String {
    let mut s = Refs {
        rule: b"a?b".to_vec(),
    };
    vars::expand(&Template::parse(t), &mut s, None, None)
}

#[test]
fn template_expansion() {
    assert_eq!(ex("x%{HTTP_HOST}y"), "x<HTTP_HOST>y");
    assert_eq!(ex("$1-%1-$10"), "a?b--a?b0");
    assert_eq!(ex(r"\$1\%1\\"), r"$1%1\");
    assert_eq!(ex("trail\\"), "trail\\");
    assert_eq!(ex("%{unclosed"), "%{unclosed");
    assert_eq!(ex("${nomap}"), "${nomap}");
    assert_eq!(ex("${m:k}|${m:z|dflt}|${m:z}"), "V|dflt|");
    assert_eq!(ex("${m:${x:y}|d}"), "d");
    assert_eq!(ex("%%$x"), "%%$x");
    assert_eq!(ex("a%20b"), "a0b");
    assert_eq!(ex("%{a{b}c}"), "<a{b}c>");
}

#[test]
fn unsafe_question_marks() {
    let mut s = Refs {
        rule: b"a?b".to_vec(),
    };
    let mut q = vars::Qmark::new(false);
    vars::expand(&Template::parse("/x/$1?y"), &mut s, None, Some(&mut q));
    assert!(q.is_unsafe());
    let mut q = vars::Qmark::new(false);
    vars::expand(&Template::parse("/x?$1"), &mut s, None, Some(&mut q));
    assert!(!q.is_unsafe());
    let mut q = vars::Qmark::new(true);
    vars::expand(&Template::parse("/x?$1"), &mut s, None, Some(&mut q));
    assert!(q.is_unsafe());
}

#[test]
fn backref_escaping() {
    let r = parse::parse_rule("^(.*)$ x?p=$1 [B]", &origin(), vec![]).unwrap();
    assert_eq!(vars::escape_backref(b"dir/x y&z", &r), b"dir%2fx+y%26z");
    let r = parse::parse_rule("^(.*)$ x [B,BNP]", &origin(), vec![]).unwrap();
    assert_eq!(vars::escape_backref(b"x y", &r), b"x%20y");
    let r = parse::parse_rule("^(.*)$ x [B=&]", &origin(), vec![]).unwrap();
    assert_eq!(vars::escape_backref(b"a b&c", &r), b"a b%26c");
    let r = parse::parse_rule("^(.*)$ x [B,BNE=/]", &origin(), vec![]).unwrap();
    assert_eq!(vars::escape_backref(b"a/b c", &r), b"a/b+c");
    let r = parse::parse_rule("^(.*)$ x [BCTLS]", &origin(), vec![]).unwrap();
    assert_eq!(vars::escape_backref(b"a/b c\x01", &r), b"a/b+c%01");
}

#[test]
fn front_controller_costs_two_lookups() {
    let mut h = Fake::default();
    h.files
        .insert("/docroot/exists.css".into(), crate::fs::Kind::File);
    let lines = [
        "RewriteRule ^index\\.php$ - [L]",
        "RewriteCond %{REQUEST_FILENAME} !-f",
        "RewriteCond %{REQUEST_FILENAME} !-d",
        "RewriteRule . /index.php [L]",
    ];
    let (o, st) = run_dir(&lines, "/docroot/some/page", None, &mut h);
    assert_eq!(o, Outcome::Changed { noescape: false });
    assert_eq!(st.filename, "/index.php");
    assert_eq!(h.stats, 2);
    let mut h2 = Fake::default();
    h2.files
        .insert("/docroot/exists.css".into(), crate::fs::Kind::File);
    let (o, _) = run_dir(&lines, "/docroot/exists.css", None, &mut h2);
    assert_eq!(o, Outcome::Unchanged);
    assert_eq!(h2.stats, 1);
}

#[test]
fn relative_substitution_gets_the_directory_and_query_rules_apply() {
    let mut h = Fake::default();
    let (_, st) = run_dir(
        &["RewriteRule ^(.*)$ env.cgi?p=$1 [L,QSA]"],
        "/docroot/foo",
        Some("a=1"),
        &mut h,
    );
    assert_eq!(st.filename, "/docroot/env.cgi");
    assert_eq!(st.args.as_deref(), Some("p=foo&a=1"));
    let (_, st) = run_dir(
        &["RewriteRule ^(.*)$ /x? [L]"],
        "/docroot/foo",
        Some("a=1"),
        &mut h,
    );
    assert_eq!((st.filename.as_str(), st.args.as_deref()), ("/x", None));
    let (_, st) = run_dir(
        &["RewriteRule ^(.*)$ /x [QSD]"],
        "/docroot/foo",
        Some("a=1"),
        &mut h,
    );
    assert_eq!(st.args, None);
    let (_, st) = run_dir(
        &["RewriteRule ^(.*)$ /x?a?b [QSL]"],
        "/docroot/foo",
        None,
        &mut h,
    );
    assert_eq!(
        (st.filename.as_str(), st.args.as_deref()),
        ("/x?a", Some("b"))
    );
}

#[test]
fn chain_skip_next_and_status() {
    let mut h = Fake::default();
    let lines = [
        "RewriteRule ^a$ - [C]",
        "RewriteRule ^(.*)$ /chain?$1 [L]",
        "RewriteRule ^(.*)$ /after?$1 [L]",
    ];
    let (_, st) = run_dir(&lines, "/docroot/a", None, &mut h);
    assert_eq!(st.filename, "/chain");
    let (_, st) = run_dir(&lines, "/docroot/z", None, &mut h);
    assert_eq!(st.filename, "/after");
    let lines = [
        "RewriteRule ^(.*)-(.*)$ $1_$2 [N]",
        "RewriteRule ^(.*)$ /n?$1 [L]",
    ];
    let (_, st) = run_dir(&lines, "/docroot/a-b-c", None, &mut h);
    assert_eq!(st.args.as_deref(), Some("a_b_c"));
    let (o, _) = run_dir(
        &["RewriteRule ^(.*)$ $1 [N=20]"],
        "/docroot/x",
        None,
        &mut h,
    );
    assert!(matches!(o, Outcome::Status { code: 500, .. }));
    let lines = [
        "RewriteRule ^a - [S=1]",
        "RewriteRule ^ /skipped",
        "RewriteRule ^ /landed [L]",
    ];
    let (_, st) = run_dir(&lines, "/docroot/a", None, &mut h);
    assert_eq!(st.filename, "/landed");
    let (o, _) = run_dir(&["RewriteRule ^x - [G]"], "/docroot/x", None, &mut h);
    assert_eq!(
        o,
        Outcome::Status {
            code: 410,
            log: None,
            reset: true
        }
    );
    let (o, _) = run_dir(
        &["RewriteRule ^x$ /a%{HTTP:X}? [L]"],
        "/docroot/x",
        None,
        &mut h,
    );
    assert_eq!(o, Outcome::Changed { noescape: false });
}

#[test]
fn conditions_or_groups_backrefs_and_vary() {
    let mut h = Fake::default();
    h.headers.insert("User-Agent".into(), "curl/8".into());
    let lines = [
        "RewriteCond %{QUERY_STRING} ^zzz$ [OR]",
        "RewriteCond %{HTTP_USER_AGENT} ^(curl)",
        "RewriteCond %{QUERY_STRING} (^|&)id=([0-9]+)",
        "RewriteRule ^(.*)$ /x?id=%2&ua=$1",
    ];
    let (_, st) = run_dir(&lines, "/docroot/item", Some("y=1&id=42"), &mut h);
    assert_eq!(st.args.as_deref(), Some("id=42&ua=item"));
    assert_eq!(st.vary, vec!["User-Agent".to_string()]);
    let (_, st) = run_dir(&lines, "/docroot/item", Some("zzz"), &mut h);
    assert_eq!(st.filename, "/docroot/item");
    // A trailing [OR] makes a false last condition harmless.
    let (o, _) = run_dir(
        &[
            "RewriteCond %{QUERY_STRING} ^zzz$ [OR]",
            "RewriteRule ^o$ /t [L]",
        ],
        "/docroot/o",
        Some("c"),
        &mut h,
    );
    assert_eq!(o, Outcome::Changed { noescape: false });
    // Length first, then bytes.
    let t = |q: &str| {
        let mut h = Fake::default();
        run_dir(
            &["RewriteCond %{QUERY_STRING} <aa", "RewriteRule ^ /t [L]"],
            "/docroot/o",
            Some(q),
            &mut h,
        )
        .0 != Outcome::Unchanged
    };
    assert!(t("b") && t("a") && !t("aaa"));
}

#[test]
fn env_and_cookies_apply_also_for_dash() {
    let mut h = Fake::default();
    run_dir(
        &["RewriteRule ^ - [E=A:1,E=B,CO=c:v:example.com]"],
        "/docroot/x",
        None,
        &mut h,
    );
    assert!(h.env.contains(&("A".into(), "1".into())));
    assert!(h.env.contains(&("B".into(), "".into())));
    assert_eq!(h.cookies, vec!["c:v:example.com".to_string()]);
    run_dir(&["RewriteRule ^ - [E=!A]"], "/docroot/x", None, &mut h);
    assert!(!h.env.iter().any(|(k, _)| k == "A"));
}

#[test]
fn redirects_qualify_and_reduce() {
    let mut h = Fake::default();
    let (_, st) = run_dir(
        &["RewriteRule ^old$ /new [R=301]"],
        "/docroot/old",
        None,
        &mut h,
    );
    assert_eq!(
        (st.filename.as_str(), st.status),
        ("http://example.com/new", 301)
    );
    let (_, st) = run_dir(
        &["RewriteRule ^old$ http://example.com/local"],
        "/docroot/old",
        None,
        &mut h,
    );
    assert_eq!(st.filename, "/local");
    let (_, st) = run_dir(
        &["RewriteRule ^old$ http://other.org/x"],
        "/docroot/old",
        None,
        &mut h,
    );
    assert_eq!(st.filename, "http://other.org/x");
    let (_, st) = run_dir(
        &["RewriteRule ^old$ ftp://h/x?q"],
        "/docroot/old",
        Some("a"),
        &mut h,
    );
    assert_eq!(
        (st.filename.as_str(), st.args.as_deref()),
        ("ftp://h/x?q", None)
    );
    h.subreq = true;
    let (o, _) = run_dir(
        &["RewriteRule ^old$ /new [R]", "RewriteRule ^old$ - [NS,F]"],
        "/docroot/old",
        None,
        &mut h,
    );
    assert_eq!(o, Outcome::Unchanged);
}

#[test]
fn unsafe_3f_is_refused_unless_allowed() {
    let mut h = Fake::default();
    let (o, _) = run_dir(
        &["RewriteRule ^(.*)$ /e/$1 [L]"],
        "/docroot/a?b",
        None,
        &mut h,
    );
    assert!(matches!(o, Outcome::Status { code: 403, .. }));
    let (_, st) = run_dir(
        &["RewriteRule ^(.*)$ /e/$1 [L,UnsafeAllow3F]"],
        "/docroot/a?b",
        None,
        &mut h,
    );
    assert_eq!(
        (st.filename.as_str(), st.args.as_deref()),
        ("/e/a", Some("b"))
    );
}

#[test]
fn inheritance_merges_like_apache() {
    let conf = |opts: Option<u32>, rules_: &[&str], dir: &str| RewriteDir {
        conf: Some(Arc::new(PerDirConf {
            state: Some(true),
            options: opts,
            directory: Some(dir.into()),
            rules: Arc::new(rules(rules_)),
            ..Default::default()
        })),
    };
    let parent = conf(None, &["RewriteRule ^p$ /p"], "/d/");
    let child = conf(None, &["RewriteRule ^c$ /c"], "/d/s/");
    let m = RewriteDir::merge(&parent, &child);
    assert_eq!(m.get().unwrap().rules.len(), 1);
    assert_eq!(m.get().unwrap().directory.as_deref(), Some("/d/s/"));
    let inherit = conf(Some(opt::INHERIT), &["RewriteRule ^c$ /c"], "/d/s/");
    let m = RewriteDir::merge(&parent, &inherit);
    let r = &m.get().unwrap().rules;
    assert_eq!(
        (r[0].pattern.as_str(), r[1].pattern.as_str()),
        ("^c$", "^p$")
    );
    let before = conf(Some(opt::INHERIT_BEFORE), &["RewriteRule ^c$ /c"], "/d/s/");
    let r = RewriteDir::merge(&parent, &before)
        .get()
        .unwrap()
        .rules
        .clone();
    assert_eq!(r[0].pattern, "^p$");
    let down = conf(Some(opt::INHERIT_DOWN), &["RewriteRule ^p$ /p"], "/d/");
    assert_eq!(
        RewriteDir::merge(&down, &child).get().unwrap().rules.len(),
        2
    );
    let ignoring = conf(Some(opt::IGNORE_INHERIT), &["RewriteRule ^c$ /c"], "/d/s/");
    assert_eq!(
        RewriteDir::merge(&down, &ignoring)
            .get()
            .unwrap()
            .rules
            .len(),
        1
    );
    // A scope without mod_rewrite directives keeps the parent's, directory too.
    let m = RewriteDir::merge(&parent, &RewriteDir::default());
    assert_eq!(m.get().unwrap().directory.as_deref(), Some("/d/"));
}

#[test]
fn absolute_uri_schemes() {
    assert_eq!(exec::absolute_uri("http://x/"), Some((7, true)));
    assert_eq!(exec::absolute_uri("HTTPS://x/"), Some((8, true)));
    assert_eq!(exec::absolute_uri("mailto:a@b"), Some((7, true)));
    assert_eq!(exec::absolute_uri("ftp://x/"), Some((6, false)));
    assert_eq!(exec::absolute_uri("unix:/a|http://b"), Some((5, true)));
    assert_eq!(exec::absolute_uri("/http://x"), None);
    assert_eq!(exec::absolute_uri("http:"), None);
}

#[test]
fn cookie_values() {
    let (n, c) =
        super::host::cookie("mycookie:val:.example.com:60:/path:secure:httponly", 0).unwrap();
    assert_eq!(n, "mycookie");
    assert_eq!(
        c,
        "mycookie=val; path=/path; domain=.example.com; expires=Thu, 01-Jan-1970 01:00:00 GMT; secure; HttpOnly"
    );
    let (_, c) = super::host::cookie(";c;d;localhost;0;/;false;true;Strict", 0).unwrap();
    assert_eq!(c, "c=d; path=/; domain=localhost; SameSite=Strict");
    assert!(super::host::cookie("a:b", 0).is_none());
}

#[test]
fn prefix_path_substitution() {
    use super::hooks::subst_prefix_path;
    assert_eq!(
        subst_prefix_path("/d/s/t.html", "/d/s/", "/sub/").as_deref(),
        Some("/sub/t.html")
    );
    assert_eq!(
        subst_prefix_path("/d/s/t.html", "/d/s/", "/sub").as_deref(),
        Some("/sub/t.html")
    );
    assert_eq!(subst_prefix_path("/d/sx/t", "/d/s/", "/b/"), None);
    assert_eq!(subst_prefix_path("d/s/t", "d/s/", "").as_deref(), Some("t"));
}

#[test]
fn text_maps() {
    let m = super::maps::parse_text(b"# c\nk1 v1 extra\n k2 v2\nk3\nk3 v3\nk1 again\n");
    assert_eq!(m.get("k1").map(String::as_str), Some("v1"));
    assert_eq!(m.get("k2"), None);
    assert_eq!(m.get("k3").map(String::as_str), Some("v3"));
    use super::maps::{int_map, IntFunc};
    assert_eq!(int_map(IntFunc::ToLower, "AbC"), "abc");
    assert_eq!(int_map(IntFunc::Escape, "a b?"), "a%20b%3f");
    assert_eq!(int_map(IntFunc::Unescape, "a%20b%zz%00c"), "a b%zz");
}

#[test]
fn variables_by_name() {
    let mut h = Fake::default();
    h.headers.insert("Host".into(), "example.com".into());
    h.env.push(("Proto".into(), "https".into()));
    let cur = vars::Current {
        filename: "/docroot/f",
        path_info: "/pi",
        args: Some("q=1"),
        subject: Some("f"),
        perdir: None,
    };
    let mut vary = vars::VaryNote::default();
    let mut l = |n: &str| vars::lookup(n, &cur, &mut h, &mut vary);
    assert_eq!(l("request_filename"), "/docroot/f");
    assert_eq!(l("PATH_INFO"), "/pi");
    assert_eq!(l("QUERY_STRING"), "q=1");
    assert_eq!(l("ENV:PROTO"), "https");
    assert_eq!(l("HTTP_HOST"), "example.com");
    assert_eq!(l("HTTP_ACCEPT_ENCODING"), "");
    assert_eq!(l("SSL:SSL_PROTOCOL"), "");
    assert_eq!(l("TIME").len(), 14);
    assert_eq!(l("XYZ"), "");
    assert_eq!(l("HTTP:"), "");
    assert!(vary.names.is_empty(), "Host never varies");
}

/// Random patterns and subjects: compiling and running never panics and
/// each run stays bounded.
#[test]
fn random_rules_never_panic() {
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    const ATOMS: &[&str] = &[
        "a", ".", "*", "+", "?", "(", ")", "[", "]", "^", "$", "\\", "|", "{2}", "%", "$1", "%1",
        "%{", "}", "${", ":", "-", "/", "?", "&", " ", "\\ ", "(?!x)", "\\1", "é",
    ];
    let start = std::time::Instant::now();
    for _ in 0..3000 {
        let mut pat = String::new();
        let mut sub = String::new();
        let mut subj = String::from("/docroot/");
        for _ in 0..(next() % 8) {
            pat.push_str(ATOMS[(next() % ATOMS.len() as u64) as usize]);
        }
        for _ in 0..(next() % 8) {
            sub.push_str(ATOMS[(next() % ATOMS.len() as u64) as usize]);
        }
        for _ in 0..(next() % 12) {
            subj.push_str(ATOMS[(next() % ATOMS.len() as u64) as usize]);
        }
        let flags = [
            "",
            " [L]",
            " [B,NE]",
            " [QSA,R]",
            " [N=3]",
            " [C]",
            " [S=9]",
            " [QSL,END]",
        ];
        let line = format!(
            "\"{pat}\" \"{}\"{}",
            if sub.is_empty() { "-" } else { &sub },
            flags[(next() % 8) as usize]
        );
        let Ok(rule) = parse::parse_rule(&line, &origin(), vec![]) else {
            continue;
        };
        let mut st = State {
            filename: subj,
            args: Some("x=1".into()),
            ..State::default()
        };
        let mut h = Fake::default();
        let pd = PerDir {
            directory: "/docroot/",
            base: None,
        };
        exec::apply_list(&[Arc::new(rule)], Some(pd), &mut st, &mut h, 16380);
        let _ = Template::parse(&sub);
    }
    assert!(start.elapsed().as_secs() < 60);
}

#[test]
fn simulation_runs_rule_text() {
    let r = super::simulate::run(
        "RewriteEngine On\nRewriteCond %{QUERY_STRING} a\nRewriteRule ^(x)$ y?$1 [QSA]\n",
        "/docroot/x",
        Some("a"),
    )
    .unwrap();
    assert_eq!(r.filename, "/docroot/y");
    assert_eq!(r.args.as_deref(), Some("x&a"));
    assert!(super::simulate::run("RewriteRule (", "/docroot/x", None).is_err());
}

#[test]
fn growing_next_rounds_hit_the_work_bound_quickly() {
    let start = std::time::Instant::now();
    let mut h = Fake::default();
    let (o, _) = run_dir(
        &["RewriteRule ^(.*)$ $1-ab [N]"],
        "/docroot/x",
        None,
        &mut h,
    );
    assert!(matches!(o, Outcome::Status { code: 500, .. }), "{o:?}");
    assert!(start.elapsed().as_secs() < 10);
}
