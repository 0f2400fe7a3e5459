//! The client's host name, as the core's `ap_get_remote_host` finds it.
//!
//! Host-based `Allow`/`Deny` and `Require host` look it up whatever
//! `HostnameLookups` says, double-reverse ([`double_reverse`]): the address
//! is turned into a name (PTR), and the name is kept only if it resolves
//! back (A/AAAA) to the same address, so a client cannot claim a domain by
//! controlling its own reverse zone. `HostnameLookups On` gives the PTR
//! name alone to logs (`%h`), `REMOTE_HOST` and the variables that show it
//! ([`reverse_name`]); `Double` gives the double-reverse one there too.
//!
//! The system resolver (`getnameinfo`/`getaddrinfo`, so `/etc/hosts` and
//! nsswitch apply as for Apache) has no timeout of its own; each lookup
//! runs on a helper thread and the request waits at most [`TIMEOUT`]. An
//! answer, or its absence, is remembered for [`TTL`] in a bounded cache,
//! which also keeps a slow resolver from being asked once per request.

use std::collections::HashMap;
use std::ffi::CStr;
use std::net::{IpAddr, SocketAddr};
use std::sync::{mpsc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Longest wait for the resolver on a request.
pub const TIMEOUT: Duration = Duration::from_secs(5);
/// How long an answer is reused.
pub const TTL: Duration = Duration::from_secs(60);
const CACHE_MAX: usize = 4096;

/// Answers by address and by kind of lookup (double-reverse or not).
type Cache = Mutex<HashMap<(IpAddr, bool), (Instant, Option<String>)>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The verified, lower-cased host name of `addr`, or `None` (no PTR, the
/// name does not resolve back, or the resolver timed out).
pub fn double_reverse(addr: IpAddr) -> Option<String> {
    cached(addr, true, lookup)
}

/// The lower-cased name the address's PTR record gives, unchecked
/// (`HostnameLookups On`), or `None`.
pub fn reverse_name(addr: IpAddr) -> Option<String> {
    cached(addr, false, |a| reverse(a).map(|n| n.to_ascii_lowercase()))
}

/// `look(addr)` on a helper thread within [`TIMEOUT`], remembered [`TTL`].
fn cached(addr: IpAddr, double: bool, look: fn(IpAddr) -> Option<String>) -> Option<String> {
    // DNS answers expire: a decision that asked is not kept.
    crate::answer_memo::note_volatile();
    let now = Instant::now();
    if let Some((at, name)) = cache().lock().ok()?.get(&(addr, double)) {
        if now.duration_since(*at) < TTL {
            return name.clone();
        }
    }
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("dns".into())
        .spawn(move || {
            let _ = tx.send(look(addr));
        })
        .ok()?;
    let name = rx.recv_timeout(TIMEOUT).ok().flatten();
    if let Ok(mut c) = cache().lock() {
        if c.len() >= CACHE_MAX {
            c.retain(|_, (at, _)| now.duration_since(*at) < TTL);
            if c.len() >= CACHE_MAX {
                c.clear();
            }
        }
        c.insert((addr, double), (now, name.clone()));
    }
    name
}

/// Apache's `in_domain`: `what` ends with `domain` on a label boundary
/// (`example.com` matches `www.example.com`, not `notexample.com`).
pub fn in_domain(domain: &str, what: &str) -> bool {
    let (d, w) = (domain.as_bytes(), what.as_bytes());
    if w.len() < d.len() || !w[w.len() - d.len()..].eq_ignore_ascii_case(d) {
        return false;
    }
    w.len() == d.len() || d.first() == Some(&b'.') || w[w.len() - d.len() - 1] == b'.'
}

/// The addresses `name` resolves to (`Require forward-dns`), waiting at
/// most [`TIMEOUT`]; none when it does not resolve in time.
pub fn resolve(name: &str) -> Vec<IpAddr> {
    crate::answer_memo::note_volatile();
    let (tx, rx) = mpsc::channel();
    let owned = name.to_string();
    let spawned = std::thread::Builder::new()
        .name("dns".into())
        .spawn(move || {
            let _ = tx.send(forward(&owned));
        });
    if spawned.is_err() {
        return Vec::new();
    }
    rx.recv_timeout(TIMEOUT).unwrap_or_default()
}

/// Whether two addresses are the same host (`apr_sockaddr_equal`: an
/// IPv4-mapped IPv6 address equals its IPv4 form).
pub fn same_host(a: IpAddr, b: IpAddr) -> bool {
    same(a, b)
}

fn lookup(addr: IpAddr) -> Option<String> {
    let name = reverse(addr)?.to_ascii_lowercase();
    forward(&name)
        .iter()
        .any(|a| same(*a, addr))
        .then_some(name)
}

fn same(a: IpAddr, b: IpAddr) -> bool {
    let canon = |x: IpAddr| match x {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(x, IpAddr::V4),
        v4 => v4,
    };
    canon(a) == canon(b)
}

/// The name the address's PTR record gives, as written, asked now and
/// waited for (`apr_getnameinfo`): for start-up, where Apache asks the
/// same way (`-S`'s names of address-only virtual hosts).
pub fn reverse(addr: IpAddr) -> Option<String> {
    let sa = raw_addr(SocketAddr::new(addr, 0));
    let mut host = [0 as libc::c_char; 1025];
    // SAFETY: `sa` is a valid sockaddr of the length given; `host` is a
    // writable buffer of the length given; no service buffer is asked for.
    let rc = unsafe {
        libc::getnameinfo(
            sa.as_ptr(),
            sa.len,
            host.as_mut_ptr(),
            host.len() as libc::socklen_t,
            std::ptr::null_mut(),
            0,
            libc::NI_NAMEREQD,
        )
    };
    if rc != 0 {
        return None;
    }
    // SAFETY: getnameinfo wrote a NUL-terminated string into `host`.
    let name = unsafe { CStr::from_ptr(host.as_ptr()) };
    name.to_str().ok().map(str::to_string)
}

fn forward(name: &str) -> Vec<IpAddr> {
    std::net::ToSocketAddrs::to_socket_addrs(&(name, 0))
        .map(|it| it.map(|a| a.ip()).collect())
        .unwrap_or_default()
}

/// A `sockaddr_storage` filled from a std address.
struct RawAddr {
    storage: libc::sockaddr_storage,
    len: libc::socklen_t,
}

impl RawAddr {
    fn as_ptr(&self) -> *const libc::sockaddr {
        std::ptr::addr_of!(self.storage).cast()
    }
}

fn raw_addr(addr: SocketAddr) -> RawAddr {
    // SAFETY: an all-zero sockaddr_storage is a valid value.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is larger than sockaddr_in and suitably aligned.
            unsafe { std::ptr::write(std::ptr::addr_of_mut!(storage).cast(), sin) };
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: sockaddr_storage is larger than sockaddr_in6 and suitably aligned.
            unsafe { std::ptr::write(std::ptr::addr_of_mut!(storage).cast(), sin6) };
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    RawAddr {
        storage,
        len: len as libc::socklen_t,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_localhost() {
        // /etc/hosts maps 127.0.0.1 to localhost on every system we build on.
        let name = double_reverse("127.0.0.1".parse().unwrap());
        assert_eq!(name.as_deref(), Some("localhost"));
    }

    #[test]
    fn domain_suffix_on_label_boundary() {
        assert!(in_domain("example.com", "www.example.com"));
        assert!(in_domain("example.com", "EXAMPLE.com"));
        assert!(!in_domain("example.com", "notexample.com"));
        assert!(in_domain(".example.com", "a.example.com"));
        assert!(!in_domain("www.example.com", "example.com"));
    }

    #[test]
    fn mapped_addresses_compare_equal() {
        assert!(same(
            "::ffff:127.0.0.1".parse().unwrap(),
            "127.0.0.1".parse().unwrap()
        ));
    }
}
