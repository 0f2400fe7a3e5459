//! Hostile input for the access phase: address arguments of `Allow from`
//! / `Require ip`, and `Authorization` header values. Neither may panic;
//! a parsed network must contain its own address.
#![no_main]

use htaccel_engine::ipset::{IpSet, Subnet};
use htaccel_engine::modules::auth_basic::basic_credentials;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = basic_credentials(data);
    if let Ok(text) = std::str::from_utf8(data) {
        for word in text.split_whitespace().take(64) {
            if let Ok(subnet) = Subnet::parse_word(word) {
                let set = IpSet::from_subnets([subnet]);
                assert!(set.contains(subnet.net), "{word}");
            }
        }
    }
});
