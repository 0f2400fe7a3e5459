//! Fuzzes mod_ssl's argument grammars, which the configuration (and so a
//! hosting customer's panel) feeds: OpenSSL cipher strings for
//! `SSLCipherSuite` (TLS 1.2 and TLS 1.3 forms) and the `SSLProtocol`
//! list. Any text is mapped or refused with a message, never a panic, and
//! a mapped list names only suites rustls offers, each once.

#![no_main]

use htaccel_engine::modules::ssl::{ciphers, protocol};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for parse in [ciphers::parse_tls12, ciphers::parse_tls13] {
        match parse(&text) {
            Ok(list) => {
                let mut seen = list.clone();
                seen.sort_unstable();
                seen.dedup();
                assert_eq!(seen.len(), list.len(), "a suite named twice: {list:?}");
            }
            Err(e) => assert!(!e.is_empty()),
        }
    }
    let words: Vec<String> = text.split_whitespace().map(str::to_string).collect();
    if let Err(e) = protocol::parse("SSLProtocol", &words) {
        assert!(!e.is_empty());
    }
});
