//! Tests of the public parsing API. Cases marked "observed" were checked on
//! Apache 2.4 (Debian's apache2) with the same input in a `.htaccess` file
//! or a main configuration under `apache2 -t`.

use super::*;

fn ht(text: &str) -> Vec<Node> {
    parse_str(text, "/site/.htaccess", &ParseOptions::htaccess()).unwrap_or_else(|e| panic!("{e}"))
}

fn ht_err(text: &[u8]) -> ParseError {
    match parse_bytes(text, "/site/.htaccess", &ParseOptions::htaccess()) {
        Err(e) => e,
        Ok(nodes) => panic!("expected an error, got {nodes:?}"),
    }
}

fn directive(n: &Node) -> &Directive {
    match n {
        Node::Directive(d) => d,
        Node::Section(s) => panic!("expected a directive, got section {}", s.name),
    }
}

fn section(n: &Node) -> &Section {
    match n {
        Node::Section(s) => s,
        Node::Directive(d) => panic!("expected a section, got directive {}", d.name),
    }
}

#[test]
fn directives_with_origins() {
    let nodes = ht("# comment\n\nHeader set X-A \"a b\"\n  RewriteEngine   On  \n");
    assert_eq!(nodes.len(), 2);
    let h = directive(&nodes[0]);
    assert_eq!(h.name, "Header");
    assert_eq!(h.args, ["set", "X-A", "a b"]);
    assert_eq!(h.raw_args, "set X-A \"a b\"");
    assert_eq!(h.origin, Origin::new("/site/.htaccess", 3));
    let r = directive(&nodes[1]);
    assert_eq!(
        (r.name.as_str(), r.raw_args.as_str(), r.origin.line),
        ("RewriteEngine", "On", 4)
    );
}

#[test]
fn names_keep_their_case() {
    let nodes = ht("header SET x-lower 1\n");
    assert_eq!(directive(&nodes[0]).name, "header");
}

#[test]
fn directive_without_arguments() {
    let d = directive(&ht("Satisfy\n")[0]).clone();
    assert!(d.args.is_empty());
    assert_eq!(d.raw_args, "");
}

#[test]
fn no_trailing_comments() {
    let d = directive(&ht("DirectoryIndex nope.html # home.html\n")[0]).clone();
    assert_eq!(d.args, ["nope.html", "#", "home.html"]);
    // Only a '#' at the start of the line makes a comment.
    assert!(ht("   # indented comment\n\t#tab\n").is_empty());
}

#[test]
fn crlf_file() {
    let nodes = ht("Header set X-A 1\r\n<Files \"a b\">\r\nRequire all denied\r\n</Files>\r\n");
    assert_eq!(directive(&nodes[0]).args, ["set", "X-A", "1"]);
    let s = section(&nodes[1]);
    assert_eq!(s.args, ["a b"]);
    assert!(s.closed);
    assert_eq!(directive(&s.children[0]).args, ["all", "denied"]);
}

#[test]
fn continuation_lines() {
    let nodes = ht("RewriteRule ^a$ \\\n    /b [L]\nHeader set X 1\\\r\n2\r\n");
    let r = directive(&nodes[0]);
    assert_eq!(r.args, ["^a$", "/b", "[L]"]);
    // Observed: Apache numbers a continued line by its last physical line.
    assert_eq!(r.origin.line, 2);
    assert_eq!(directive(&nodes[1]).args, ["set", "X", "12"]);
    assert_eq!(directive(&nodes[1]).origin.line, 4);
}

#[test]
fn quoting() {
    let nodes = ht(concat!(
        "ErrorDocument 404 \"Gone fishing\n",
        "Header set X-A 'it\\'s'\n",
        "SetEnv FOO \"a \\\\\\\\ b\"\n",
        "Header set X-B \"\"\n",
    ));
    assert_eq!(directive(&nodes[0]).args, ["404", "Gone fishing"]);
    assert_eq!(directive(&nodes[1]).args, ["set", "X-A", "it's"]);
    assert_eq!(directive(&nodes[2]).args, ["FOO", "a \\\\ b"]);
    assert_eq!(directive(&nodes[3]).args, ["set", "X-B", ""]);
}

#[test]
fn quoted_directive_name() {
    // Observed: `"Header" set X-A q` works; a line whose first word is ""
    // is skipped.
    let nodes = ht("\"Header\" set X-A q\n\"\" set X-A q\nHeader set X-B 1\n");
    assert_eq!(nodes.len(), 2);
    assert_eq!(directive(&nodes[0]).name, "Header");
    assert_eq!(directive(&nodes[0]).raw_args, "set X-A q");
}

#[test]
fn trailing_gt_is_removed_from_names() {
    // Observed: `Header> set X-A 1` is Header; a lone `>` is the command ''.
    let nodes = ht("Header> set X-A 1\n>\n");
    assert_eq!(directive(&nodes[0]).name, "Header");
    assert_eq!(directive(&nodes[1]).name, "");
}

#[test]
fn bom_is_kept() {
    let nodes = parse_bytes(
        b"\xef\xbb\xbfHeader set X 1\n",
        "f",
        &ParseOptions::htaccess(),
    )
    .unwrap();
    let d = directive(&nodes[0]);
    assert_eq!(d.name, "\u{feff}Header");
    assert_eq!(string_to_bytes(&d.name).as_ref(), b"\xef\xbb\xbfHeader");
}

#[test]
fn non_utf8_bytes_survive() {
    let nodes = parse_bytes(
        b"ErrorDocument 404 \"Datei f\xfcr Sie\"\n",
        "f",
        &ParseOptions::htaccess(),
    )
    .unwrap();
    let d = directive(&nodes[0]);
    assert_eq!(string_to_bytes(&d.args[1]).as_ref(), b"Datei f\xfcr Sie");
    assert_eq!(
        string_to_bytes(&d.raw_args).as_ref(),
        b"404 \"Datei f\xfcr Sie\""
    );
}

#[test]
fn variables_are_not_substituted() {
    let d = directive(&ht("Header set X ${NAME}\n")[0]).clone();
    assert_eq!(d.args, ["set", "X", "${NAME}"]);
}

#[test]
fn sections_nest() {
    let nodes = ht(concat!(
        "<IfModule mod_rewrite.c>\n",
        "  RewriteEngine On\n",
        "  <Files ~ \"\\.php$\">\n",
        "    <Limit GET POST>\n",
        "      Require all denied\n",
        "    </Limit>\n",
        "  </Files>\n",
        "</IfModule>\n",
        "Header set X 1\n",
    ));
    assert_eq!(nodes.len(), 2);
    let m = section(&nodes[0]);
    assert_eq!(
        (m.name.as_str(), m.raw_args.as_str(), m.origin.line),
        ("IfModule", "mod_rewrite.c", 1)
    );
    assert!(m.closed && m.closed_exactly() && !m.missing_gt);
    assert_eq!(m.close.as_ref().map(|c| c.origin.line), Some(8));
    let f = section(&m.children[1]);
    assert_eq!(f.args, ["~", "\\.php$"]);
    assert_eq!(f.raw_args, "~ \"\\.php$\"");
    let l = section(&f.children[0]);
    assert_eq!(
        (l.name.as_str(), l.args.clone()),
        ("Limit", vec!["GET".to_string(), "POST".to_string()])
    );
    assert_eq!(directive(&l.children[0]).origin.line, 5);
    assert_eq!(directive(&nodes[1]).origin.line, 9);
}

#[test]
fn section_arguments_end_at_the_last_gt() {
    let s = section(&ht("<If \"%{QUERY_STRING} =~ /a>b/\">\n</If>\n")[0]).clone();
    assert_eq!(s.raw_args, "\"%{QUERY_STRING} =~ /a>b/\"");
    // Text after the last '>' is ignored, as Apache's handlers do.
    let s = section(&ht("<IfModule mod_x.c> trailing\n</IfModule>\n")[0]).clone();
    assert_eq!(s.raw_args, "mod_x.c");
    let s = section(&ht("<Files a >\n</Files>\n")[0]).clone();
    assert_eq!(s.raw_args, "a");
}

#[test]
fn section_without_arguments() {
    for text in [
        "<IfModule>\n</IfModule>\n",
        "<IfModule >\n</IfModule>\n",
        "<IfModule\n</IfModule>\n",
    ] {
        let s = section(&ht(text)[0]).clone();
        assert_eq!(s.name, "IfModule", "{text:?}");
        assert_eq!(s.raw_args, "", "{text:?}");
        assert!(s.args.is_empty());
        // Observed: `<IfModule` alone gives "requires additional
        // arguments", not "missing closing '>'".
        assert!(!s.missing_gt, "{text:?}");
    }
}

#[test]
fn missing_gt_is_recorded_not_fatal() {
    // Observed: inside a false <IfModule> this is accepted; elsewhere Apache
    // reports "<Files> directive missing closing '>'" when it runs <Files>.
    let nodes = ht("<IfModule mod_nope.c>\n<Files x\n</Files>\n</IfModule>\n");
    let f = section(&section(&nodes[0]).children[0]).clone();
    assert!(f.missing_gt);
    assert_eq!(f.raw_args, "x");
    assert!(f.closed);
}

#[test]
fn section_name_is_the_whole_first_word() {
    // Observed: "Expected </IfModule>foo> but saw </IfModule>".
    let e = ht_err(b"<IfModule>foo\n</IfModule>\n");
    assert_eq!(e.message, "Expected </IfModule>foo> but saw </IfModule>");
    assert_eq!(e.origin.line, 2);
}

#[test]
fn quoted_tags_still_open_and_close() {
    // Observed: `"<Files" index.html>` ... `'</Files>'` is a Files section.
    let nodes = ht("\"<Files\" index.html>\nHeader set X-B 1\n'</Files>'\n");
    let s = section(&nodes[0]);
    assert_eq!(
        (s.name.as_str(), s.raw_args.as_str()),
        ("Files", "index.html")
    );
    assert!(s.closed && !s.closed_exactly());
}

#[test]
fn closing_names_ignore_case() {
    let s = section(&ht("<files a>\n</FILES>\n")[0]).clone();
    assert!(s.closed && s.closed_exactly());
}

#[test]
fn closing_line_text_is_kept() {
    // Observed: for a true <IfModule> this is an error; for <Files> and a
    // false <IfModule> the rest of the line is ignored.
    let s = section(&ht("<IfModule mod_headers.c>\n</IfModule> # end\n")[0]).clone();
    assert!(s.closed);
    assert!(!s.closed_exactly());
    assert_eq!(
        s.close.map(|c| c.text),
        Some("</IfModule> # end".to_string())
    );
}

#[test]
fn mismatched_closing_tag() {
    let e = ht_err(b"<Files a>\n</Directory>\n");
    assert_eq!(e.message, "Expected </Files> but saw </Directory>");
    assert_eq!(e.origin, Origin::new("/site/.htaccess", 2));
    assert_eq!(
        e.to_string(),
        "/site/.htaccess:2: Expected </Files> but saw </Directory>"
    );
}

#[test]
fn closing_tag_with_arguments() {
    // Observed: `</Files b>` is "</Files> directive missing closing '>'".
    let e = ht_err(b"<Files a>\n</Files b>\n");
    assert_eq!(e.message, "</Files> directive missing closing '>'");
    let e = ht_err(b"<Files a>\n</Files >\n");
    assert_eq!(e.message, "</Files> directive missing closing '>'");
}

#[test]
fn stray_closing_tag() {
    let e = ht_err(b"Header set X 1\n</IfModule>\n");
    assert_eq!(e.message, "</IfModule> without matching <IfModule> section");
    assert_eq!(e.origin.line, 2);
    // Observed: with arguments the '>' is not part of the first word.
    let e = ht_err(b"</Files b>\n");
    assert_eq!(e.message, "</Files without matching <Files section");
}

#[test]
fn unclosed_sections_are_returned() {
    let nodes = ht("<IfModule mod_rewrite.c>\nRewriteEngine On\n<Files x>\nRequire all denied\n");
    assert_eq!(nodes.len(), 1);
    let m = section(&nodes[0]);
    assert!(!m.closed && m.close.is_none());
    assert_eq!(m.children.len(), 2);
    let f = section(&m.children[1]);
    assert!(!f.closed);
    assert_eq!(f.origin.line, 3);
    assert_eq!(f.children.len(), 1);
}

#[test]
fn closed_section_after_unclosed_sibling_level() {
    let nodes = ht("<A>\n<B>\n</B>\nx\n");
    let a = section(&nodes[0]);
    assert!(!a.closed);
    assert!(section(&a.children[0]).closed);
    assert_eq!(directive(&a.children[1]).name, "x");
}

#[test]
fn empty_section_name() {
    let nodes = ht("<>\n</>\n<\n</>\n");
    assert_eq!(nodes.len(), 2);
    assert_eq!(section(&nodes[0]).name, "");
    assert_eq!(section(&nodes[1]).name, "");
    let e = ht_err(b"<Files a>\n</\n");
    assert_eq!(e.message, "</> directive missing closing '>'");
}

#[test]
fn nesting_is_bounded() {
    let deep = "<A>\n".repeat(MAX_NESTING);
    assert!(parse_str(&deep, "f", &ParseOptions::htaccess()).is_ok());
    let deeper = "<A>\n".repeat(MAX_NESTING + 1);
    let e = parse_str(&deeper, "f", &ParseOptions::htaccess()).unwrap_err();
    assert_eq!(e.origin.line, MAX_NESTING as u32 + 1);
}

#[test]
fn line_too_long() {
    let ok = format!("#{}\nHeader set X 1\n", "x".repeat(8190));
    assert_eq!(ht(&ok).len(), 1);
    let long = format!("Header set X 1\n#{}\n", "x".repeat(8191));
    let e = ht_err(long.as_bytes());
    assert_eq!(
        e.message,
        "Error reading /site/.htaccess at line 2: Line too long"
    );
    assert_eq!(e.origin.line, 2);
    let crlf = format!("#{}\r\n", "x".repeat(8190));
    assert_eq!(ht_err(crlf.as_bytes()).origin.line, 1);
    // The main configuration takes it.
    assert!(parse_str(&long, "httpd.conf", &ParseOptions::default()).is_ok());
}

#[test]
fn final_line_filling_the_first_buffer_is_ignored() {
    // Observed: a last line of exactly 206 bytes with no newline is never
    // seen by Apache (its first read buffer ends there).
    let line = format!("Foo {}", "x".repeat(202));
    assert_eq!(line.len(), 206);
    assert!(ht(&line).is_empty());
    assert_eq!(ht(&format!("{line}\n")).len(), 1);
    assert_eq!(ht(&line[..205]).len(), 1);
}

#[test]
fn nul_truncates_the_line() {
    // Observed: `Header set X-A a<NUL>b` sets "a".
    let nodes = parse_bytes(
        b"Header set X-A a\0b\nHeader set X-B 2\n",
        "f",
        &ParseOptions::htaccess(),
    )
    .unwrap();
    assert_eq!(directive(&nodes[0]).args, ["set", "X-A", "a"]);
    assert_eq!(directive(&nodes[1]).origin.line, 2);
}

#[test]
fn vertical_tab_and_form_feed_separate_words() {
    let nodes = ht("Header\x0bset X-A 1\x0c\n");
    assert_eq!(directive(&nodes[0]).name, "Header");
    assert_eq!(directive(&nodes[0]).args, ["set", "X-A", "1"]);
}

#[test]
fn parse_file_reads_and_names() {
    let dir = std::env::temp_dir().join(format!("htaccel-conf-pf-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("a.conf");
    std::fs::write(&f, "Listen 80\n").unwrap();
    let nodes = parse_file(&f, &ParseOptions::default()).unwrap();
    assert_eq!(nodes[0].origin().to_string(), format!("{}:1", f.display()));

    let missing = dir.join("none.conf");
    let e = parse_file(&missing, &ParseOptions::default()).unwrap_err();
    assert_eq!(
        e.message,
        format!(
            "Could not open configuration file {}: No such file or directory",
            missing.display()
        )
    );
    let e = parse_file(&dir, &ParseOptions::default()).unwrap_err();
    assert!(
        e.message.ends_with(": Bad file descriptor"),
        "{}",
        e.message
    );
    assert!(parse_file(Path::new("/dev/null"), &ParseOptions::default())
        .unwrap()
        .is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn node_accessors() {
    let nodes = ht("A b\n<C d>\n</C>\n");
    assert_eq!((nodes[0].name(), nodes[0].raw_args()), ("A", "b"));
    assert_eq!(
        (nodes[1].name(), nodes[1].raw_args(), nodes[1].origin().line),
        ("C", "d", 2)
    );
}

/// A small deterministic generator (xorshift64*), so that the garbage
/// tests need no extra crate and fail reproducibly.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Input built mostly from the bytes the syntax cares about.
fn garbage(rng: &mut Rng) -> Vec<u8> {
    const PIECES: &[&[u8]] = &[
        b"<",
        b">",
        b"</",
        b"/",
        b"\"",
        b"'",
        b"\\",
        b"\\\n",
        b"\\\r\n",
        b"\n",
        b"\r",
        b"\r\n",
        b" ",
        b"\t",
        b"#",
        b"\0",
        b"\xef\xbb\xbf",
        b"\xff",
        b"\xc3",
        b"\xa9",
        b"\xf4\x8f\xba\x80",
        b"Files",
        b"IfModule",
        b"Header",
        b"x",
        b"${A}",
        b"<Files a>\n",
        b"</Files>\n",
        b"<IfModule m>\n",
        b"</IfModule>\n",
    ];
    let len = rng.below(400);
    let mut out = Vec::new();
    for _ in 0..len {
        if rng.below(8) == 0 {
            out.push(rng.next() as u8);
        } else {
            out.extend_from_slice(PIECES[rng.below(PIECES.len())]);
        }
    }
    if rng.below(10) == 0 {
        let n = 200 + rng.below(9000);
        let fill = rng.next() as u8;
        out.extend(std::iter::repeat_n(fill, n));
    }
    out
}

fn check_tree(nodes: &[Node], depth: usize) {
    assert!(depth <= MAX_NESTING);
    for n in nodes {
        assert!(n.origin().line >= 1);
        if let Node::Section(s) = n {
            assert_eq!(s.closed, s.close.is_some());
            check_tree(&s.children, depth + 1);
        }
    }
}

#[test]
fn garbage_never_panics_and_is_deterministic() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..3000 {
        let input = garbage(&mut rng);
        for opts in [
            ParseOptions::htaccess(),
            ParseOptions::default(),
            ParseOptions { max_line_len: 50 },
        ] {
            let first = parse_bytes(&input, "fuzz", &opts);
            let second = parse_bytes(&input, "fuzz", &opts);
            assert_eq!(first, second);
            if let Ok(nodes) = &first {
                check_tree(nodes, 0);
            }
        }
        assert_eq!(
            string_to_bytes(&bytes_to_string(&input)).as_ref(),
            &input[..]
        );
        let text = String::from_utf8_lossy(&input);
        let _ = split_args(&text);
        let _ = parse_str(&text, "fuzz", &ParseOptions::htaccess());
    }
}

#[test]
fn split_args_round_trips_simple_words() {
    let mut rng = Rng(42);
    for _ in 0..2000 {
        let words: Vec<String> = (0..rng.below(6))
            .map(|_| {
                let alphabet = b"ab \t\"'\\>#";
                (0..rng.below(6))
                    .map(|_| alphabet[rng.below(alphabet.len())] as char)
                    .collect()
            })
            .collect();
        // Quote each word the safe way and check it comes back.
        let line: Vec<String> = words
            .iter()
            .map(|w| format!("\"{}\"", w.replace('\\', "\\\\").replace('"', "\\\"")))
            .collect();
        assert_eq!(split_args(&line.join(" ")), words, "{line:?}");
    }
}
