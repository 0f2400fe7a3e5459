//! Fuzzes the configuration parser: any bytes, with the `.htaccess` and the
//! main-configuration limits, must parse without panicking, the same way
//! twice, into a tree whose invariants hold; the word splitter must accept
//! any text.

#![no_main]

use htaccel_conf::{parse_bytes, split_args, string_to_bytes, Node, ParseOptions, MAX_NESTING};
use libfuzzer_sys::fuzz_target;

fn check(nodes: &[Node], depth: usize) {
    assert!(depth <= MAX_NESTING);
    for node in nodes {
        assert!(node.origin().line >= 1);
        if let Node::Section(s) = node {
            assert_eq!(s.closed, s.close.is_some());
            check(&s.children, depth + 1);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    for opts in [ParseOptions::htaccess(), ParseOptions::default()] {
        let first = parse_bytes(data, "fuzz.conf", &opts);
        let second = parse_bytes(data, "fuzz.conf", &opts);
        assert_eq!(first, second, "parsing is not deterministic");
        match &first {
            Ok(nodes) => check(nodes, 0),
            Err(e) => assert!(!e.message.is_empty()),
        }
    }
    let text = htaccel_conf::bytes_to_string(data);
    assert_eq!(
        string_to_bytes(&text).as_ref(),
        data,
        "byte mapping must round-trip"
    );
    let _ = split_args(&text);
});
