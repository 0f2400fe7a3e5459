//! Address lists of `Allow from`/`Deny from` and `Require ip`: APR's
//! subnet syntax (`apr_ipsubnet_create`), and a set whose lookup does not
//! depend on how many entries a file lists.
//!
//! Block lists in the wild (the 6G/8G firewalls, country blocks) run to tens
//! of thousands of networks, and Apache tests them one after another on
//! every request. Here each list is compiled once into sorted, merged,
//! disjoint ranges (one table for IPv4, one for IPv6); a lookup is a binary
//! search, so 100,000 entries cost a handful of comparisons more than ten.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// One network: an address and the number of leading bits that count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Subnet {
    pub net: IpAddr,
    pub prefix: u8,
}

/// Why a text is not a subnet, in APR's three kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubnetError {
    /// It does not look like an address at all (`APR_EINVAL`): callers
    /// such as `Allow from` then take it for a host name.
    NotAnAddress,
    /// `APR_EBADIP`.
    BadIp,
    /// `APR_EBADMASK`.
    BadMask,
    /// A valid but non-contiguous IPv4 netmask (`255.0.255.0`): Apache
    /// accepts it, a range set cannot hold it, so it is refused loudly.
    Noncontiguous,
}

impl SubnetError {
    /// The text Apache prints for the error (`%pm` of the APR status).
    pub fn message(self) -> &'static str {
        match self {
            SubnetError::NotAnAddress => "Invalid argument",
            SubnetError::BadIp => "The specified IP address is invalid.",
            SubnetError::BadMask => "The specified network mask is invalid.",
            SubnetError::Noncontiguous => "non-contiguous netmasks are not supported by htaccel",
        }
    }
}

/// APR's `looks_like_ip`: anything with a colon, or only digits and dots.
fn looks_like_ip(s: &str) -> bool {
    !s.is_empty() && (s.contains(':') || s.bytes().all(|b| b == b'.' || b.is_ascii_digit()))
}

/// A strict dotted quad as `inet_pton` accepts it (no leading zeros).
fn dotted_quad(s: &str) -> Option<Ipv4Addr> {
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    let mut o = [0u8; 4];
    for (i, p) in parts.iter().enumerate() {
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        if p.len() > 1 && p.starts_with('0') {
            return None;
        }
        o[i] = p.parse().ok()?;
    }
    Some(Ipv4Addr::from(o))
}

/// APR's `parse_network`: whole leading octets (`10`, `192.168`, `10.1.`).
fn partial_network(s: &str) -> Result<Subnet, SubnetError> {
    let s = s.strip_suffix('.').unwrap_or(s);
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() > 4 {
        return Err(SubnetError::BadIp);
    }
    let mut o = [0u8; 4];
    for (i, p) in parts.iter().enumerate() {
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return Err(SubnetError::BadIp);
        }
        o[i] = p.parse().map_err(|_| SubnetError::BadIp)?;
    }
    Ok(Subnet {
        net: IpAddr::V4(Ipv4Addr::from(o)),
        prefix: (parts.len() * 8) as u8,
    })
}

impl Subnet {
    /// `apr_ipsubnet_create(ip, mask)`: `mask` is what followed a `/`.
    pub fn parse(ip: &str, mask: Option<&str>) -> Result<Subnet, SubnetError> {
        if !looks_like_ip(ip) {
            return Err(SubnetError::NotAnAddress);
        }
        let mut sub = if let Ok(v6) = ip.parse::<Ipv6Addr>() {
            if v6.to_ipv4_mapped().is_some() {
                return Err(SubnetError::BadIp);
            }
            Subnet {
                net: IpAddr::V6(v6),
                prefix: 128,
            }
        } else if let Some(v4) = dotted_quad(ip) {
            Subnet {
                net: IpAddr::V4(v4),
                prefix: 32,
            }
        } else if mask.is_none() && !ip.contains(':') {
            partial_network(ip)?
        } else {
            return Err(SubnetError::BadIp);
        };
        if let Some(m) = mask {
            let max = if sub.net.is_ipv4() { 32 } else { 128 };
            let bits = if !m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()) {
                m.parse::<u32>().ok().filter(|b| *b > 0 && *b <= max)
            } else {
                None
            };
            sub.prefix = match (bits, sub.net) {
                (Some(b), _) => b as u8,
                (None, IpAddr::V4(_)) => {
                    let m = dotted_quad(m).ok_or(SubnetError::BadMask)?;
                    let bits = u32::from(m);
                    if bits.leading_ones() + bits.trailing_zeros() != 32 {
                        return Err(SubnetError::Noncontiguous);
                    }
                    bits.leading_ones() as u8
                }
                (None, IpAddr::V6(_)) => return Err(SubnetError::BadMask),
            };
        }
        Ok(sub)
    }

    /// `net[/mask]` as one word.
    pub fn parse_word(word: &str) -> Result<Subnet, SubnetError> {
        match word.split_once('/') {
            Some((ip, m)) => Subnet::parse(ip, Some(m)),
            None => Subnet::parse(word, None),
        }
    }
}

fn v4_range(net: Ipv4Addr, prefix: u8) -> (u32, u32) {
    let mask = if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(prefix))
    };
    let start = u32::from(net) & mask;
    (start, start | !mask)
}

fn v6_range(net: Ipv6Addr, prefix: u8) -> (u128, u128) {
    let mask = if prefix == 0 {
        0
    } else {
        u128::MAX << (128 - u32::from(prefix))
    };
    let start = u128::from(net) & mask;
    (start, start | !mask)
}

/// Collects networks; [`IpSetBuilder::build`] sorts and merges them.
#[derive(Clone, Debug, Default)]
pub struct IpSetBuilder {
    v4: Vec<(u32, u32)>,
    v6: Vec<(u128, u128)>,
}

impl IpSetBuilder {
    pub fn add(&mut self, s: Subnet) {
        match s.net {
            IpAddr::V4(a) => self.v4.push(v4_range(a, s.prefix)),
            IpAddr::V6(a) => self.v6.push(v6_range(a, s.prefix)),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.v4.is_empty() && self.v6.is_empty()
    }

    pub fn build(self) -> IpSet {
        let v4 = merge(self.v4);
        let v4_index = (v4.len() > INDEX_FROM).then(|| {
            (0..=1u64 << 16)
                .map(|k| {
                    let base = k << 16;
                    // The first range that ends at or after the bucket's start.
                    v4.partition_point(|(_, e)| u64::from(*e) < base) as u32
                })
                .collect()
        });
        IpSet {
            v4,
            v4_index,
            v6: merge(self.v6),
        }
    }
}

/// Sort by start and fold overlapping or adjacent ranges together.
fn merge<T: Ord + Copy + num_like::One>(mut r: Vec<(T, T)>) -> Vec<(T, T)> {
    r.sort_unstable();
    let mut out: Vec<(T, T)> = Vec::with_capacity(r.len());
    for (s, e) in r {
        if let Some(last) = out.last_mut() {
            if s <= last.1 || last.1.checked_succ() == Some(s) {
                if e > last.1 {
                    last.1 = e;
                }
                continue;
            }
        }
        out.push((s, e));
    }
    out.shrink_to_fit();
    out
}

mod num_like {
    pub trait One: Sized {
        fn checked_succ(self) -> Option<Self>;
    }
    impl One for u32 {
        fn checked_succ(self) -> Option<u32> {
            self.checked_add(1)
        }
    }
    impl One for u128 {
        fn checked_succ(self) -> Option<u128> {
            self.checked_add(1)
        }
    }
}

/// Above this many IPv4 ranges a set gets a bucket index.
const INDEX_FROM: usize = 256;

/// Disjoint, sorted address ranges. Large IPv4 sets also carry an index by
/// the top 16 address bits, so a lookup searches only the few ranges of
/// one bucket (constant time, whatever the list's length).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IpSet {
    v4: Vec<(u32, u32)>,
    /// For each /16 bucket `k` (and one past the last), the first range
    /// ending at or after `k << 16`.
    v4_index: Option<Vec<u32>>,
    v6: Vec<(u128, u128)>,
}

fn find<T: Ord + Copy>(ranges: &[(T, T)], x: T) -> bool {
    // The last range starting at or before x is the only candidate.
    let i = ranges.partition_point(|(s, _)| *s <= x);
    i > 0 && ranges[i - 1].1 >= x
}

impl IpSet {
    pub fn from_subnets(subnets: impl IntoIterator<Item = Subnet>) -> IpSet {
        let mut b = IpSetBuilder::default();
        for s in subnets {
            b.add(s);
        }
        b.build()
    }

    pub fn is_empty(&self) -> bool {
        self.v4.is_empty() && self.v6.is_empty()
    }

    /// Whether `addr` is in the set. An IPv4 network also holds the
    /// IPv4-mapped IPv6 form of its addresses, as in `apr_ipsubnet_test`.
    pub fn contains(&self, addr: IpAddr) -> bool {
        match addr {
            IpAddr::V4(a) => self.contains_v4(u32::from(a)),
            IpAddr::V6(a) => match a.to_ipv4_mapped() {
                Some(v4) => self.contains_v4(u32::from(v4)),
                None => find(&self.v6, u128::from(a)),
            },
        }
    }

    fn contains_v4(&self, x: u32) -> bool {
        let Some(index) = &self.v4_index else {
            return find(&self.v4, x);
        };
        let k = (x >> 16) as usize;
        let lo = index[k] as usize;
        // The range holding x, if any, ends at or after x: it is at or
        // after `lo`, and no later than the first range of the next bucket.
        let hi = (index[k + 1] as usize + 1).min(self.v4.len());
        let bucket = &self.v4[lo..hi];
        let i = bucket.partition_point(|(_, e)| *e < x);
        i < bucket.len() && bucket[i].0 <= x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn apr_subnet_forms() {
        let p = |w: &str| Subnet::parse_word(w);
        assert_eq!(p("127").unwrap().prefix, 8);
        assert_eq!(p("10.1.").unwrap().prefix, 16);
        assert_eq!(p("127.0.0.0/255.0.0.0").unwrap().prefix, 8);
        assert_eq!(p("2001:db8::/32").unwrap().prefix, 32);
        assert_eq!(p("example.com"), Err(SubnetError::NotAnAddress));
        assert_eq!(p("1.2.3.4.5"), Err(SubnetError::BadIp));
        assert_eq!(p("10.0.0.0/0"), Err(SubnetError::BadMask));
        assert_eq!(p("10.0.0.0/33"), Err(SubnetError::BadMask));
        assert_eq!(p("::ffff:1.2.3.4"), Err(SubnetError::BadIp));
        assert_eq!(p("10.0.0.0/255.0.255.0"), Err(SubnetError::Noncontiguous));
        assert_eq!(p("10.1/8"), Err(SubnetError::BadIp));
    }

    #[test]
    fn set_lookup() {
        let set = IpSet::from_subnets(
            [
                "10.0.0.0/8",
                "192.168.1.7",
                "2001:db8::/32",
                "11.0.0.0/8",
                "10.2.0.0/16",
            ]
            .iter()
            .map(|w| Subnet::parse_word(w).unwrap()),
        );
        assert!(set.contains(ip("10.255.0.1")));
        assert!(set.contains(ip("11.0.0.0")));
        assert!(!set.contains(ip("12.0.0.0")));
        assert!(set.contains(ip("192.168.1.7")));
        assert!(!set.contains(ip("192.168.1.8")));
        assert!(set.contains(ip("::ffff:10.0.0.1")));
        assert!(set.contains(ip("2001:db8:ffff::1")));
        assert!(!set.contains(ip("2001:db9::1")));
        assert!(!set.contains(ip("0.0.0.0")));
        // 10/8 and 11/8 are adjacent: one range.
        assert_eq!(set.v4.len(), 2);
    }

    #[test]
    fn indexed_matches_plain_search() {
        let mut b = IpSetBuilder::default();
        let mut r = 0x1234_5678u32;
        for i in 0..2000u32 {
            r ^= r << 13;
            r ^= r >> 17;
            r ^= r << 5;
            b.add(Subnet {
                net: IpAddr::V4(Ipv4Addr::from(r)),
                prefix: [32, 24, 20, 12][(i % 4) as usize],
            });
        }
        let set = b.build();
        assert!(set.v4_index.is_some());
        for x in (0..u32::MAX).step_by(65_521).chain(
            set.v4
                .iter()
                .flat_map(|(s, e)| [s.wrapping_sub(1), *s, *e, e.wrapping_add(1)]),
        ) {
            assert_eq!(set.contains_v4(x), find(&set.v4, x), "{x}");
        }
    }

    #[test]
    fn whole_space() {
        let set = IpSet::from_subnets([Subnet::parse_word("::/1").unwrap()]);
        assert!(set.contains(ip("::1")));
        assert!(!set.contains(ip("8000::1")));
    }

    /// A small deterministic generator for the property tests below.
    struct XorShift(u64);

    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    #[test]
    fn parser_never_panics_on_garbage() {
        let alphabet = b"0123456789abcdefABCDEF.:/ %x[]-+";
        let mut rng = XorShift(0x5eed_1234_abcd_0001);
        for _ in 0..20_000 {
            let len = rng.below(40) as usize;
            let word: String = (0..len)
                .map(|_| alphabet[rng.below(alphabet.len() as u64) as usize] as char)
                .collect();
            let _ = Subnet::parse_word(&word);
        }
    }

    #[test]
    fn set_agrees_with_a_linear_scan() {
        let mut rng = XorShift(0x0dd_ba11_cafe_f00d);
        for round in 0..40 {
            let n = [1, 10, 300, 3000][round % 4];
            let mut subnets = Vec::new();
            for _ in 0..n {
                let prefix = 1 + rng.below(32) as u8;
                // Cluster networks so that overlaps and neighbours occur.
                let base = 0x0a00_0000u32 | (rng.below(1 << 20) as u32) << 4;
                subnets.push(Subnet {
                    net: IpAddr::V4(Ipv4Addr::from(base)),
                    prefix,
                });
                let v6 = (0x2001_0db8u128 << 96) | u128::from(rng.next() & 0xffff_ffff);
                let p6 = 64 + rng.below(65) as u8;
                subnets.push(Subnet {
                    net: IpAddr::V6(Ipv6Addr::from(v6)),
                    prefix: p6.max(1),
                });
            }
            let set = IpSet::from_subnets(subnets.clone());
            let linear = |a: IpAddr| {
                subnets.iter().any(|s| match (s.net, a) {
                    (IpAddr::V4(n), IpAddr::V4(x)) => {
                        let (lo, hi) = v4_range(n, s.prefix);
                        (lo..=hi).contains(&u32::from(x))
                    }
                    (IpAddr::V6(n), IpAddr::V6(x)) => {
                        let (lo, hi) = v6_range(n, s.prefix);
                        (lo..=hi).contains(&u128::from(x))
                    }
                    _ => false,
                })
            };
            for _ in 0..2_000 {
                let a = if rng.below(2) == 0 {
                    IpAddr::V4(Ipv4Addr::from(0x0a00_0000u32 | (rng.below(1 << 24) as u32)))
                } else {
                    IpAddr::V6(Ipv6Addr::from(
                        (0x2001_0db8u128 << 96) | u128::from(rng.next() & 0xffff_ffff),
                    ))
                };
                assert_eq!(set.contains(a), linear(a), "{a} in {n} networks");
            }
        }
    }
}
