//! The methods Apache knows by number (`ap_method_number_of`): `M_GET` is
//! 0, `HEAD` counts as `GET`, and every other method shares `M_INVALID`.
//! Method masks (`<Limit>`, `Require method`) and the default handler's
//! 405-or-501 choice all rest on this one list.

/// Registered methods, in Apache's numbering.
pub const REGISTERED: &[&str] = &[
    "GET",
    "PUT",
    "POST",
    "DELETE",
    "CONNECT",
    "OPTIONS",
    "TRACE",
    "PATCH",
    "PROPFIND",
    "PROPPATCH",
    "MKCOL",
    "COPY",
    "MOVE",
    "LOCK",
    "UNLOCK",
    "VERSION-CONTROL",
    "CHECKOUT",
    "UNCHECKOUT",
    "CHECKIN",
    "UPDATE",
    "LABEL",
    "REPORT",
    "MKWORKSPACE",
    "MKACTIVITY",
    "BASELINE-CONTROL",
    "MERGE",
];

/// Apache's method number; `M_INVALID` (one past the last) for others.
pub fn number(method: &str) -> usize {
    let m = if method == "HEAD" { "GET" } else { method };
    REGISTERED
        .iter()
        .position(|k| *k == m)
        .unwrap_or(REGISTERED.len())
}

/// Whether Apache knows `method` without registering it (`HEAD` included).
pub fn is_registered(method: &str) -> bool {
    number(method) < REGISTERED.len()
}

/// The bit of a method in a method mask (`AP_METHOD_BIT << method_number`).
pub fn bit(method: &str) -> u64 {
    1u64 << number(method)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_is_get_and_unknown_methods_share_a_bit() {
        assert_eq!(bit("HEAD"), bit("GET"));
        assert_eq!(bit("FOO"), bit("BAR"));
        assert!(is_registered("PROPFIND") && is_registered("HEAD"));
        assert!(!is_registered("get"));
    }
}
