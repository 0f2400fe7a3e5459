//! Session resumption bounded by `SSLSessionCacheTimeout`, as OpenSSL
//! bounds it for mod_ssl (`SSL_CTX_set_timeout`): a session, whether kept
//! in the cache (`SSLSessionCache`) or carried by a ticket
//! (`SSLSessionTickets`), resumes only until its age exceeds the timeout,
//! and a ticket announces the timeout as its lifetime.
//!
//! rustls has neither bound: its session cache keeps sessions until they
//! are evicted, and its ticketer announces and accepts tickets for hours.
//! So each stored session and each ticket's contents carry the time they
//! were made (eight bytes before what rustls stores or encrypts), checked
//! when rustls asks for them back.
//!
//! rustls rotates its ticket keys every 6 hours and forgets a key after
//! 12: a ticket older than that cannot be resumed whatever the timeout. The
//! stateful tickets TLS 1.3 sends with `SSLSessionTickets off` announce
//! rustls's fixed day; the cache still refuses them past the timeout.

use rustls::server::{ProducesTickets, StoresServerSessions};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// The current time in seconds since the epoch.
fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `made` (seconds since the epoch) followed by `value`.
fn stamped(made: u64, value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + value.len());
    out.extend_from_slice(&made.to_be_bytes());
    out.extend_from_slice(value);
    out
}

/// What [`stamped`] wrapped, if it is not older than `timeout` seconds at
/// `now` (OpenSSL's test: expired once made + timeout < now).
fn unstamped(stored: Vec<u8>, timeout: u32, now: u64) -> Option<Vec<u8>> {
    let made = u64::from_be_bytes(stored.get(..8)?.try_into().ok()?);
    if made.saturating_add(u64::from(timeout)) < now {
        return None;
    }
    Some(stored[8..].to_vec())
}

/// A session store whose sessions expire after the timeout.
#[derive(Debug)]
pub(crate) struct TimedSessions {
    inner: Arc<dyn StoresServerSessions + Send + Sync>,
    timeout: u32,
}

impl TimedSessions {
    pub(crate) fn new(
        inner: Arc<dyn StoresServerSessions + Send + Sync>,
        timeout: u32,
    ) -> Arc<Self> {
        Arc::new(TimedSessions { inner, timeout })
    }
}

impl StoresServerSessions for TimedSessions {
    fn put(&self, key: Vec<u8>, value: Vec<u8>) -> bool {
        self.inner.put(key, stamped(now(), &value))
    }

    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        unstamped(self.inner.get(key)?, self.timeout, now())
    }

    fn take(&self, key: &[u8]) -> Option<Vec<u8>> {
        unstamped(self.inner.take(key)?, self.timeout, now())
    }

    fn can_cache(&self) -> bool {
        self.inner.can_cache()
    }
}

/// A ticketer whose tickets announce the timeout and expire after it.
#[derive(Debug)]
pub(crate) struct TimedTickets {
    inner: Arc<dyn ProducesTickets>,
    timeout: u32,
}

impl TimedTickets {
    pub(crate) fn new(inner: Arc<dyn ProducesTickets>, timeout: u32) -> Arc<Self> {
        Arc::new(TimedTickets { inner, timeout })
    }
}

impl ProducesTickets for TimedTickets {
    fn enabled(&self) -> bool {
        self.inner.enabled()
    }

    fn lifetime(&self) -> u32 {
        self.timeout
    }

    fn encrypt(&self, plain: &[u8]) -> Option<Vec<u8>> {
        self.inner.encrypt(&stamped(now(), plain))
    }

    fn decrypt(&self, cipher: &[u8]) -> Option<Vec<u8>> {
        unstamped(self.inner.decrypt(cipher)?, self.timeout, now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_expires_once_older_than_the_timeout() {
        let stored = stamped(1000, b"session");
        assert_eq!(
            unstamped(stored.clone(), 300, 1300).as_deref(),
            Some(&b"session"[..])
        );
        assert_eq!(unstamped(stored.clone(), 300, 1301), None);
        assert_eq!(unstamped(stored, 0, 1001), None);
        assert_eq!(unstamped(b"short".to_vec(), 300, 0), None);
    }

    #[test]
    fn tickets_announce_the_timeout_and_expire() {
        let inner = rustls::crypto::ring::Ticketer::new().unwrap();
        let tickets = TimedTickets::new(inner.clone(), 300);
        assert_eq!(tickets.lifetime(), 300);
        let ticket = tickets.encrypt(b"session").unwrap();
        assert_eq!(tickets.decrypt(&ticket).as_deref(), Some(&b"session"[..]));
        // A ticket made 301 seconds ago, by the same keys.
        let old = inner.encrypt(&stamped(now() - 301, b"session")).unwrap();
        assert_eq!(tickets.decrypt(&old), None);
    }

    #[test]
    fn cached_sessions_expire() {
        let cache = rustls::server::ServerSessionMemoryCache::new(4);
        let sessions = TimedSessions::new(cache.clone(), 300);
        assert!(sessions.put(b"id".to_vec(), b"session".to_vec()));
        assert_eq!(sessions.get(b"id").as_deref(), Some(&b"session"[..]));
        cache.put(b"old".to_vec(), stamped(now() - 301, b"session"));
        assert_eq!(sessions.get(b"old"), None);
        assert_eq!(sessions.take(b"id").as_deref(), Some(&b"session"[..]));
        assert_eq!(sessions.take(b"id"), None);
    }
}
