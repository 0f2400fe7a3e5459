//! mod_unique_id: every request gets a `UNIQUE_ID` variable, a token no
//! other request of the server has (for logs, scripts and headers that
//! trace one request through a fleet).
//!
//! The token is the module's: 20 bytes written in base64url without
//! padding (27 characters), in this order:
//!
//! * the request's time, whole seconds, big-endian (4 bytes);
//! * a root of 10 random bytes drawn once per serving process (Apache
//!   draws it in each child);
//! * a counter, started at a random value and advanced by every token,
//!   modulo 65,535, big-endian (2 bytes);
//! * the index of the worker thread that serves the request, big-endian
//!   (4 bytes; Apache writes the connection's id, its child and thread
//!   slot).
//!
//! An internal redirect keeps its request's token (`REDIRECT_UNIQUE_ID`
//! becomes `UNIQUE_ID` again), as the module does.
//!
//! The answer memo keeps answers across requests, and a token belongs to
//! one request only: an answer that reads the variable is never kept
//! (`crate::env`), and the token an access log writes for a kept answer is
//! drawn again for each request that answer serves ([`refresh_logged`]).

use crate::registry::Module;
use crate::request::Ctx;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

pub static MODULE: Module = Module {
    source: "mod_unique_id.c",
    identifier: "unique_id_module",
    builtin: false,
    directives: &[],
};

/// The variable the module sets.
pub const VARIABLE: &str = "UNIQUE_ID";

/// Whether the configuration loads the module (engine-wide, as `LoadModule`
/// is).
#[derive(Clone, Copy, Debug, Default)]
pub struct UniqueIds {
    pub loaded: bool,
}

/// The module's start: loaded or not.
pub(crate) fn start(
    loaded: &crate::engine::Loaded,
    _log: &std::sync::Arc<dyn crate::http::Log>,
) -> Result<UniqueIds, String> {
    Ok(UniqueIds {
        loaded: loaded.env.is_loaded(MODULE.identifier),
    })
}

/// `post_read_request`: the request's token in `UNIQUE_ID`, its original
/// request's for an internal redirect.
pub fn post_read_request(ctx: &mut Ctx<'_>) {
    if !ctx.engine.modules.unique_id.loaded {
        return;
    }
    let inherited = if ctx.redirects > 0 {
        ctx.env
            .get_unrecorded("REDIRECT_UNIQUE_ID")
            .map(str::to_string)
    } else {
        None
    };
    let token = inherited.unwrap_or_else(|| token(ctx.request_time_unrecorded()));
    ctx.env.set(VARIABLE, token);
}

/// Whether `name` is the module's variable, under any number of
/// `REDIRECT_` prefixes (what an internal redirect renames it to).
pub fn is_token_name(name: &str) -> bool {
    let mut rest = name.as_bytes();
    while rest.len() > 9 && rest[..9].eq_ignore_ascii_case(b"REDIRECT_") {
        rest = &rest[9..];
    }
    rest.eq_ignore_ascii_case(VARIABLE.as_bytes())
}

/// The variables an access log keeps for a kept answer (`env`), with a new
/// token in place of the one the answer was first made with: `None` when
/// they hold none.
pub fn refresh_logged(
    env: &[(String, String)],
    request_time_us: i64,
) -> Option<Vec<(String, String)>> {
    if !env.iter().any(|(name, _)| is_token_name(name)) {
        return None;
    }
    let fresh = token(request_time_us);
    Some(
        env.iter()
            .map(|(name, value)| {
                if is_token_name(name) {
                    (name.clone(), fresh.clone())
                } else {
                    (name.clone(), value.clone())
                }
            })
            .collect(),
    )
}

/// The random root of this process's tokens.
fn root() -> &'static [u8; 10] {
    static ROOT: OnceLock<[u8; 10]> = OnceLock::new();
    ROOT.get_or_init(|| {
        let mut root = [0u8; 10];
        crate::os::random_bytes(&mut root);
        root
    })
}

/// The counter every token advances, from a random start.
fn next_count() -> u16 {
    static COUNTER: OnceLock<AtomicU32> = OnceLock::new();
    let counter = COUNTER.get_or_init(|| {
        let mut start = [0u8; 4];
        crate::os::random_bytes(&mut start);
        AtomicU32::new(u32::from_ne_bytes(start))
    });
    (counter.fetch_add(1, Ordering::Relaxed) % u32::from(u16::MAX)) as u16
}

/// This worker thread's index, the token's last field.
fn thread_index() -> u32 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    thread_local! {
        static INDEX: u32 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    INDEX.with(|i| *i)
}

/// A new token for a request that arrived at `request_time_us`
/// (microseconds since the epoch).
fn token(request_time_us: i64) -> String {
    let mut record = [0u8; 20];
    let seconds = request_time_us.div_euclid(1_000_000) as u32;
    record[..4].copy_from_slice(&seconds.to_be_bytes());
    record[4..14].copy_from_slice(root());
    record[14..16].copy_from_slice(&next_count().to_be_bytes());
    record[16..].copy_from_slice(&thread_index().to_be_bytes());
    base64url(&record)
}

/// `bytes` in base64url (RFC 4648, section 5) without padding.
fn base64url(bytes: &[u8]) -> String {
    crate::http::digest::base64(bytes)
        .trim_end_matches('=')
        .replace('+', "-")
        .replace('/', "_")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 20 bytes a token encodes.
    fn decode(token: &str) -> Vec<u8> {
        let value = |c: u8| {
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                .iter()
                .position(|a| *a == c)
                .expect("base64url") as u32
        };
        let bits: Vec<u32> = token.bytes().map(value).collect();
        let mut out = Vec::new();
        let (mut acc, mut n) = (0u32, 0);
        for b in bits {
            acc = (acc << 6) | b;
            n += 6;
            if n >= 8 {
                n -= 8;
                out.push((acc >> n) as u8);
                acc &= (1 << n) - 1;
            }
        }
        out
    }

    #[test]
    fn base64url_is_rfc_4648s() {
        assert_eq!(base64url(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64url(b"fo"), "Zm8");
        assert_eq!(base64url(b"f"), "Zg");
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
    }

    #[test]
    fn tokens_have_the_modules_fields() {
        let time = 1_796_000_000_123_456;
        let (a, b) = (token(time), token(time));
        assert_eq!(a.len(), 27);
        assert_ne!(a, b);
        let (da, db) = (decode(&a), decode(&b));
        assert_eq!(da.len(), 20);
        assert_eq!(da[..4], 1_796_000_000u32.to_be_bytes());
        assert_eq!(da[4..14], root()[..]);
        let count = |d: &[u8]| u16::from_be_bytes([d[14], d[15]]);
        // One step on (two when another test drew a token in between).
        let step = (u32::from(count(&db)) + 65_535 - u32::from(count(&da))) % 65_535;
        assert!((1..=2).contains(&step), "{step}");
        assert_eq!(da[16..], thread_index().to_be_bytes());
    }

    #[test]
    fn redirect_names_are_the_tokens_too() {
        assert!(is_token_name("UNIQUE_ID"));
        assert!(is_token_name("unique_id"));
        assert!(is_token_name("REDIRECT_REDIRECT_UNIQUE_ID"));
        assert!(!is_token_name("MY_UNIQUE_ID"));
        assert!(!is_token_name("REDIRECT_"));
        let env = vec![
            ("A".to_string(), "1".to_string()),
            ("UNIQUE_ID".to_string(), "old".to_string()),
            ("REDIRECT_UNIQUE_ID".to_string(), "old".to_string()),
        ];
        let fresh = refresh_logged(&env, 0).expect("a token to refresh");
        assert_eq!(fresh[0], env[0]);
        assert_eq!(fresh[1].1.len(), 27);
        assert_eq!(fresh[1].1, fresh[2].1);
        assert!(refresh_logged(&env[..1], 0).is_none());
    }
}
