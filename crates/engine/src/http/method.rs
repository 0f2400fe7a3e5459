//! The methods Apache knows by number (`ap_method_number_of`): `M_GET` is
//! 0, `HEAD` counts as `GET`, a method the configuration registered
//! (`RegisterHttpMethod`, or named by a `<Limit>` of the server
//! configuration) has its own number after `M_INVALID`, and every other
//! method shares `M_INVALID`.
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

/// `M_INVALID`.
const INVALID: usize = REGISTERED.len();

/// The last number a registered method may have (Apache's
/// `METHOD_NUMBER_LAST`: method masks are 64 bits).
const LAST: usize = 62;

/// Methods the configuration registered, numbered from `M_INVALID + 1`
/// in order. Registrations last for the process, as a method a kept
/// `.htaccess` tree was compiled against keeps its number.
static EXTENSIONS: std::sync::RwLock<Vec<String>> = std::sync::RwLock::new(Vec::new());

/// Apache's method number; `M_INVALID` (one past the last) for others.
pub fn number(method: &str) -> usize {
    let m = if method == "HEAD" { "GET" } else { method };
    match REGISTERED.iter().position(|k| *k == m) {
        Some(n) => n,
        None => extension_number(m).unwrap_or(INVALID),
    }
}

fn extension_number(method: &str) -> Option<usize> {
    let extensions = EXTENSIONS.read().unwrap_or_else(|e| e.into_inner());
    extensions
        .iter()
        .position(|k| k == method)
        .map(|i| INVALID + 1 + i)
}

/// Register `method` (`ap_method_register`): its number, new or already
/// given; an error once the numbers run out.
pub fn register(method: &str) -> Result<usize, String> {
    let n = number(method);
    if n != INVALID {
        return Ok(n);
    }
    let mut extensions = EXTENSIONS.write().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = extensions.iter().position(|k| k == method) {
        return Ok(INVALID + 1 + i);
    }
    let n = INVALID + 1 + extensions.len();
    if n > LAST {
        return Err(format!(
            "Maximum new request methods {LAST} reached while registering method {method}."
        ));
    }
    extensions.push(method.to_string());
    Ok(n)
}

/// Whether Apache knows `method` (`HEAD` included): one of its own or
/// one the configuration registered.
pub fn is_registered(method: &str) -> bool {
    number(method) != INVALID
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

    #[test]
    fn a_registered_method_has_its_own_number() {
        let n = register("HTACCEL-TEST-EXT").unwrap();
        assert!(n > INVALID);
        assert_eq!(register("HTACCEL-TEST-EXT"), Ok(n));
        assert_eq!(number("HTACCEL-TEST-EXT"), n);
        assert!(is_registered("HTACCEL-TEST-EXT"));
        assert_ne!(bit("HTACCEL-TEST-EXT"), bit("HTACCEL-TEST-OTHER"));
        assert_eq!(register("GET"), Ok(0));
    }
}
