//! Where a connection lives relative to the enterprise (docs/reference/algorithms.md §9.1):
//! local networks, intranet/internet scope, and the lc-rp / ls-rp / lc-ls /
//! ls-ls categories once the servers are known.

use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;

use tracelab_decode::Addr;
use tracelab_flow::TableBuild;

/// An IPv4 or IPv6 network, e.g. `10.0.0.0/8` or `fe80::/10`. IPv4 networks
/// are held in their IPv4-mapped form, like [`Addr`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    /// The network and its prefix mask over the 128-bit form, as integers
    /// of the bytes in memory order (`from_ne_bytes`): membership is one
    /// XOR and one AND, with no byte swap of the address (it is asked twice
    /// for every packet). Bitwise operations do not care about byte order.
    net: u128,
    mask: u128,
    prefix: u8,
}

impl Cidr {
    pub fn contains(&self, a: &Addr) -> bool {
        (u128::from_ne_bytes(a.0) ^ self.net) & self.mask == 0
    }
}

/// Why a `--local` network did not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CidrError {
    #[error("`{0}` is not an address or network (expected e.g. 10.0.0.0/8)")]
    NotAnAddress(String),
    #[error("`{network}`: prefix length must be 0..={max}")]
    PrefixLength { network: String, max: u8 },
}

impl FromStr for Cidr {
    type Err = CidrError;
    fn from_str(s: &str) -> Result<Cidr, CidrError> {
        let (ip, len) = match s.split_once('/') {
            Some((ip, len)) => (ip, Some(len)),
            None => (s, None),
        };
        let ip: std::net::IpAddr = ip.parse().map_err(|_| CidrError::NotAnAddress(s.to_string()))?;
        let max = if ip.is_ipv4() { 32 } else { 128 };
        let len: u8 = match len {
            Some(l) => l
                .parse()
                .ok()
                .filter(|&l: &u8| l <= max)
                .ok_or_else(|| CidrError::PrefixLength { network: s.to_string(), max })?,
            None => max,
        };
        let prefix = if ip.is_ipv4() { len + 96 } else { len };
        let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
        // Host bits cleared, so `10.1.2.3/8` means 10.0.0.0/8.
        let mask = u128::from_ne_bytes(mask.to_be_bytes());
        let net = u128::from_ne_bytes(Addr::from(ip).0) & mask;
        Ok(Cidr { net, mask, prefix })
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = Addr(self.net.to_ne_bytes());
        let len = if a.is_v4() { self.prefix - 96 } else { self.prefix };
        write!(f, "{a}/{len}")
    }
}

/// The enterprise's address space (`--local`).
#[derive(Clone, Debug, Default)]
pub struct LocalNets(pub Vec<Cidr>);

impl LocalNets {
    pub fn is_local(&self, a: &Addr) -> bool {
        self.0.iter().any(|c| c.contains(a))
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Intranet: both ends local. Internet: exactly one end local. External:
/// neither end local (transit traffic, or no `--local` given).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    Intranet,
    Internet,
    External,
}

/// Which ends of a connection are local (`--local`): worked out once per
/// connection and handed to everything that needs it (scope, conn.log's
/// `local_orig`/`local_resp`, host features). Callgrind, tcpmix 300 k
/// packets: 409.9 M -> 409.3 M instructions (97dbcae;
/// docs/performance-history.md, analyzer step 28).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Locality {
    pub orig: bool,
    pub resp: bool,
}

impl Locality {
    pub fn of(local: &LocalNets, orig: &Addr, resp: &Addr) -> Locality {
        Locality { orig: local.is_local(orig), resp: local.is_local(resp) }
    }
    pub fn scope(self) -> Scope {
        match (self.orig, self.resp) {
            (true, true) => Scope::Intranet,
            (false, false) => Scope::External,
            _ => Scope::Internet,
        }
    }
}

impl Scope {
    pub fn of(local: &LocalNets, a: &Addr, b: &Addr) -> Scope {
        Locality::of(local, a, b).scope()
    }
    pub fn name(&self) -> &'static str {
        match self {
            Scope::Intranet => "intranet",
            Scope::Internet => "internet",
            Scope::External => "external",
        }
    }
    pub const ALL: [Scope; 3] = [Scope::Intranet, Scope::Internet, Scope::External];
}

/// Traffic categories of thesis §8.2 (a host is a server if it accepted a
/// connection, or is listed in `--servers`). `Other` holds what the four
/// categories leave out: local client to local client, and external traffic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    LcRp,
    LsRp,
    LcLs,
    LsLs,
    Other,
}

impl Category {
    pub fn name(&self) -> &'static str {
        match self {
            Category::LcRp => "lc-rp",
            Category::LsRp => "ls-rp",
            Category::LcLs => "lc-ls",
            Category::LsLs => "ls-ls",
            Category::Other => "other",
        }
    }
    pub const ALL: [Category; 5] = [Category::LcRp, Category::LsRp, Category::LcLs, Category::LsLs, Category::Other];
}

/// The hosts that act as servers.
#[derive(Clone, Debug, Default)]
pub struct Servers(pub HashSet<Addr, TableBuild>);

impl Servers {
    pub fn is_server(&self, a: &Addr) -> bool {
        self.0.contains(a)
    }

    /// Category of a connection between `orig` and `resp`, whose local
    /// ends are `ends`; also which end is the client, for upload/download
    /// (upload = client to server bytes).
    pub fn category(&self, ends: Locality, orig: &Addr, resp: &Addr) -> Category {
        let (lo, lr) = (ends.orig, ends.resp);
        match (lo, lr) {
            (true, false) | (false, true) => {
                let local_end = if lo { orig } else { resp };
                if self.is_server(local_end) {
                    Category::LsRp
                } else {
                    Category::LcRp
                }
            }
            (true, true) => match (self.is_server(orig), self.is_server(resp)) {
                (true, true) => Category::LsLs,
                (false, false) => Category::Other,
                _ => Category::LcLs,
            },
            (false, false) => Category::Other,
        }
    }

    /// True when the originator is the client side of the connection: it is
    /// not a server, or both ends are (then the initiator acts as client).
    pub fn orig_is_client(&self, orig: &Addr, resp: &Addr) -> bool {
        !self.is_server(orig) || self.is_server(resp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> Addr {
        Addr::from(s.parse::<std::net::IpAddr>().unwrap())
    }

    #[test]
    fn cidr_matches_by_prefix() {
        let c: Cidr = "10.1.2.3/8".parse().unwrap();
        assert_eq!(c.to_string(), "10.0.0.0/8");
        assert!(c.contains(&a("10.255.0.1")));
        assert!(!c.contains(&a("11.0.0.1")));
        let c: Cidr = "192.168.4.0/22".parse().unwrap();
        assert!(c.contains(&a("192.168.7.255")));
        assert!(!c.contains(&a("192.168.8.0")));
        let c: Cidr = "fe80::/10".parse().unwrap();
        assert!(c.contains(&a("febf::1")));
        assert!(!c.contains(&a("fec0::1")));
        // An IPv4 network never matches an IPv6 address.
        let c: Cidr = "0.0.0.0/0".parse().unwrap();
        assert!(c.contains(&a("1.2.3.4")));
        assert!(!c.contains(&a("2001:db8::1")));
        let host: Cidr = "10.0.0.6".parse().unwrap();
        assert!(host.contains(&a("10.0.0.6")) && !host.contains(&a("10.0.0.7")));
    }

    #[test]
    fn cidr_rejects_bad_input() {
        assert!("10.0.0.0/33".parse::<Cidr>().is_err());
        assert!("10.0.0/8".parse::<Cidr>().is_err());
        assert!("fe80::/129".parse::<Cidr>().is_err());
    }

    #[test]
    fn categories_follow_thesis_8_2() {
        let local = LocalNets(vec!["10.0.0.0/8".parse().unwrap()]);
        let mut servers = Servers::default();
        servers.0.insert(a("10.0.0.1"));
        servers.0.insert(a("10.0.0.2"));
        let c = |o: &str, r: &str| servers.category(Locality::of(&local, &a(o), &a(r)), &a(o), &a(r));
        assert_eq!(c("10.0.0.9", "8.8.8.8"), Category::LcRp);
        assert_eq!(c("8.8.8.8", "10.0.0.9"), Category::LcRp);
        assert_eq!(c("10.0.0.1", "8.8.8.8"), Category::LsRp);
        assert_eq!(c("10.0.0.9", "10.0.0.1"), Category::LcLs);
        assert_eq!(c("10.0.0.1", "10.0.0.2"), Category::LsLs);
        assert_eq!(c("10.0.0.8", "10.0.0.9"), Category::Other);
        assert_eq!(c("8.8.8.8", "9.9.9.9"), Category::Other);
        assert_eq!(Scope::of(&local, &a("10.0.0.8"), &a("10.9.0.9")), Scope::Intranet);
        assert_eq!(Scope::of(&local, &a("10.0.0.8"), &a("1.1.1.1")), Scope::Internet);
        assert_eq!(Scope::of(&local, &a("2.2.2.2"), &a("1.1.1.1")), Scope::External);
    }
}
