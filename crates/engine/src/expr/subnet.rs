//! Address blocks for `-R` and `-ipmatch`, read as APR reads them
//! (`apr_ipsubnet_create`): an IPv4 address, a partial IPv4 network
//! (`10.1` is `10.1.0.0/16`, only without a mask), IPv6, and a mask as a
//! bit count (1 to the address width: `/0` is refused) or, for IPv4, as a
//! dotted netmask. IPv4-mapped IPv6 networks are refused, and an IPv4
//! block matches an IPv4-mapped client address.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subnet {
    V4 { net: u32, mask: u32 },
    V6 { net: u128, mask: u128 },
}

impl Subnet {
    /// Parse `addr[/mask]`; the error is Apache's reason.
    pub fn parse(spec: &str) -> Result<Subnet, String> {
        let fail = || "parsing of subnet/netmask failed".to_string();
        let (addr, mask) = match spec.split_once('/') {
            Some((a, m)) => (a, Some(m)),
            None => (spec, None),
        };
        if !looks_like_ip(addr) {
            return Err(fail());
        }
        let mut subnet = if let Ok(v6) = addr.parse::<Ipv6Addr>() {
            if v6.to_ipv4_mapped().is_some() {
                return Err(fail());
            }
            Subnet::V6 {
                net: u128::from(v6),
                mask: u128::MAX,
            }
        } else if let Some(v4) = parse_dotted_quad(addr) {
            Subnet::V4 {
                net: u32::from(v4),
                mask: u32::MAX,
            }
        } else if mask.is_none() {
            partial_network(addr).ok_or_else(fail)?
        } else {
            return Err(fail());
        };
        if let Some(m) = mask {
            subnet = with_mask(subnet, m).ok_or_else(fail)?;
        }
        Ok(match subnet {
            Subnet::V4 { net, mask } => Subnet::V4 {
                net: net & mask,
                mask,
            },
            Subnet::V6 { net, mask } => Subnet::V6 {
                net: net & mask,
                mask,
            },
        })
    }

    /// Whether `addr` is inside the block.
    pub fn contains(&self, addr: IpAddr) -> bool {
        match (*self, addr) {
            (Subnet::V4 { net, mask }, IpAddr::V4(a)) => u32::from(a) & mask == net,
            (Subnet::V4 { net, mask }, IpAddr::V6(a)) => match a.to_ipv4_mapped() {
                Some(a) => u32::from(a) & mask == net,
                None => false,
            },
            (Subnet::V6 { net, mask }, IpAddr::V6(a)) => {
                a.to_ipv4_mapped().is_none() && u128::from(a) & mask == net
            }
            (Subnet::V6 { .. }, IpAddr::V4(_)) => false,
        }
    }
}

/// APR's first filter: something with a colon, or only digits and dots.
fn looks_like_ip(s: &str) -> bool {
    !s.is_empty() && (s.contains(':') || s.bytes().all(|b| b == b'.' || b.is_ascii_digit()))
}

/// `inet_pton(AF_INET)`: exactly four decimal octets.
fn parse_dotted_quad(s: &str) -> Option<Ipv4Addr> {
    let mut octets = [0u8; 4];
    let mut parts = s.split('.');
    for o in &mut octets {
        let p = parts.next()?;
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *o = p.parse().ok()?;
    }
    parts.next().is_none().then(|| Ipv4Addr::from(octets))
}

/// The legacy network form: one to four octets, each followed by a dot
/// except possibly the last (`10.`, `10.1`, `192.168.1.`).
fn partial_network(s: &str) -> Option<Subnet> {
    if s.len() > "255.255.255.255".len() {
        return None;
    }
    let (mut net, mut mask) = (0u32, 0u32);
    let mut shift: i32 = 24;
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return None;
        }
        let octet: u32 = s[start..i].parse().ok()?;
        if i < bytes.len() {
            if bytes[i] != b'.' {
                return None;
            }
            i += 1;
        }
        if shift < 0 || octet > 255 {
            return None;
        }
        net |= octet << shift;
        mask |= 0xff << shift;
        shift -= 8;
    }
    Some(Subnet::V4 { net, mask })
}

fn with_mask(subnet: Subnet, m: &str) -> Option<Subnet> {
    let bits = leading_number(m);
    match subnet {
        Subnet::V4 { net, .. } => match bits {
            Some(b) if (1..=32).contains(&b) => Some(Subnet::V4 {
                net,
                mask: u32::MAX << (32 - b),
            }),
            _ => parse_dotted_quad(m).map(|mask| Subnet::V4 {
                net,
                mask: u32::from(mask),
            }),
        },
        Subnet::V6 { net, .. } => match bits {
            Some(b) if (1..=128).contains(&b) => Some(Subnet::V6 {
                net,
                mask: u128::MAX << (128 - b),
            }),
            _ => None,
        },
    }
}

/// `strtol` that must consume the whole text.
fn leading_number(s: &str) -> Option<i64> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let digits = t.strip_prefix('+').unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        return None;
    }
    t.parse::<i64>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn cidr_and_netmask() {
        let s = Subnet::parse("127.0.0.0/8").unwrap();
        assert!(s.contains(ip("127.1.2.3")));
        assert!(!s.contains(ip("128.0.0.1")));
        assert!(s.contains(ip("::ffff:127.0.0.1")));
        let s = Subnet::parse("10.0.0.0/255.255.0.0").unwrap();
        assert!(s.contains(ip("10.0.9.9")));
        assert!(!s.contains(ip("10.1.0.1")));
    }

    #[test]
    fn partial_networks_only_without_mask() {
        let s = Subnet::parse("10.1").unwrap();
        assert!(s.contains(ip("10.1.200.3")));
        assert!(Subnet::parse("192.168.").is_ok());
        assert!(Subnet::parse("10.1/16").is_err());
    }

    #[test]
    fn refused_forms() {
        assert!(Subnet::parse("0.0.0.0/0").is_err());
        assert!(Subnet::parse("").is_err());
        assert!(Subnet::parse("localhost").is_err());
        assert!(Subnet::parse("::ffff:1.2.3.4").is_err());
        assert!(Subnet::parse("1.2.3.4/33").is_err());
        assert!(Subnet::parse("300.1.1.1").is_err());
    }

    #[test]
    fn ipv6() {
        let s = Subnet::parse("2001:db8::/32").unwrap();
        assert!(s.contains(ip("2001:db8::1")));
        assert!(!s.contains(ip("2001:db9::1")));
        assert!(!s.contains(ip("127.0.0.1")));
        assert!(Subnet::parse("::1").unwrap().contains(ip("::1")));
    }
}
