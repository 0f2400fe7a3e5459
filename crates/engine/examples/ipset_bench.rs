//! Lookup time of an `Allow from`/`Require ip` address list with 10, 1,000
//! and 100,000 entries: the compiled set answers in about the same time
//! whatever the size (a binary search over merged ranges).
//!
//! `cargo run --release -p htaccel-engine --example ipset_bench`

use htaccel_engine::ipset::{IpSet, Subnet};
use std::hint::black_box;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Instant;

/// A small deterministic generator (xorshift), so runs are comparable.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn set_of(n: usize, rng: &mut Rng) -> IpSet {
    IpSet::from_subnets((0..n).map(|i| {
        let r = rng.next();
        match i % 4 {
            0 => Subnet {
                net: IpAddr::V4(Ipv4Addr::from(r as u32)),
                prefix: 24,
            },
            1 => Subnet {
                net: IpAddr::V4(Ipv4Addr::from(r as u32)),
                prefix: 32,
            },
            2 => Subnet {
                net: IpAddr::V4(Ipv4Addr::from(r as u32)),
                prefix: 16 + (r % 16) as u8,
            },
            _ => Subnet {
                net: IpAddr::V6(Ipv6Addr::from(u128::from(r) << 64)),
                prefix: 48,
            },
        }
    }))
}

fn main() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let probes: Vec<IpAddr> = (0..1_000_000)
        .map(|i| {
            let r = rng.next();
            if i % 4 == 3 {
                IpAddr::V6(Ipv6Addr::from(u128::from(r) << 64 | 1))
            } else {
                IpAddr::V4(Ipv4Addr::from(r as u32))
            }
        })
        .collect();
    println!("{:>8} entries  {:>10}  {:>8}", "", "ns/lookup", "hits");
    for n in [10usize, 1_000, 100_000] {
        let set = set_of(n, &mut rng);
        // Warm up, then measure.
        for p in &probes[..10_000] {
            black_box(black_box(&set).contains(*p));
        }
        let mut hits = 0usize;
        let start = Instant::now();
        for p in &probes {
            hits += usize::from(black_box(&set).contains(black_box(*p)));
        }
        let ns = start.elapsed().as_nanos() as f64 / probes.len() as f64;
        println!("{n:>8} entries  {ns:>10.1}  {hits:>8}");
    }
}
