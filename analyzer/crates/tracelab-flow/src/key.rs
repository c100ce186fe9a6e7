//! Connection keys, the shard hash and the uid.
//!
//! A key is direction independent (Zeek's `addr_port_canon_lt` ordering), so
//! both directions of a connection find the same table entry and the same
//! shard. The one exception is Zeek's: one-way ICMP messages (errors,
//! redirects, ...) keep their direction, because their "ports" (type, code)
//! have no counterpart to pair with.

use std::hash::{Hash, Hasher};

use tracelab_decode::{ip_proto, Addr, PacketMeta};

use crate::record::Uid;

/// The bidirectional 5-tuple (plus Zeek's one-way ICMP flag): endpoint
/// `a` (address, port) and endpoint `b`, the protocol and the flag. The
/// ports, protocol and flag are kept as the one word the table hashes and
/// compares (`tail`), built once per packet.
#[derive(Clone, Copy, Debug, Eq)]
pub struct FlowKey {
    pub(crate) a: Addr,
    pub(crate) b: Addr,
    /// `pa << 32 | pb << 16 | proto << 1 | one_way`.
    tail: u64,
}

/// The "ports" Zeek uses for a packet: TCP/UDP ports, or for ICMP the type
/// and the counterpart type (echo request <-> reply, ...) or, for one-way
/// messages, the code. Returns (src port, dst port, one_way). Inlined: it
/// runs for every packet; the TCP/UDP case is tested first and the ICMP
/// types are looked up out of line (the three-way match inline cost ~14
/// instructions per packet).
#[inline]
pub fn zeek_ports(p: &PacketMeta) -> (u16, u16, bool) {
    if p.ip_proto != ip_proto::ICMP && p.ip_proto != ip_proto::ICMPV6 {
        return (p.sport, p.dport, false);
    }
    icmp_ports(p)
}

#[inline(never)]
fn icmp_ports(p: &PacketMeta) -> (u16, u16, bool) {
    let (c, one_way) = if p.ip_proto == ip_proto::ICMP {
        icmp4_counterpart(p.sport as u8, p.dport as u8)
    } else {
        icmp6_counterpart(p.sport as u8, p.dport as u8)
    };
    (p.sport, c as u16, one_way)
}

impl FlowKey {
    /// The key of a packet whose [`zeek_ports`] are `ports`, and whether
    /// the packet runs from `b` to `a` (its endpoints were swapped). Two
    /// packets of one connection came from the same side exactly when
    /// their flags are equal (endpoints that compare equal are never
    /// swapped, and one-way ICMP keys never are), so the tracker tells the
    /// sides apart without comparing addresses again.
    pub fn oriented(p: &PacketMeta, (sp, dp, one_way): (u16, u16, bool)) -> (FlowKey, bool) {
        if one_way || (p.src, sp) < (p.dst, dp) {
            (FlowKey::new(p.src, sp, p.dst, dp, p.ip_proto, one_way), false)
        } else {
            (FlowKey::new(p.dst, dp, p.src, sp, p.ip_proto, one_way), true)
        }
    }

    pub fn new(a: Addr, pa: u16, b: Addr, pb: u16, proto: u8, one_way: bool) -> FlowKey {
        let tail = (pa as u64) << 32 | (pb as u64) << 16 | (proto as u64) << 1 | one_way as u64;
        FlowKey { a, b, tail }
    }

    /// A hash that is the same on every run, machine and thread count (it
    /// picks the shard and feeds the uid). The table's five words: the
    /// same words `FxHasher::write` makes of each address, fed directly.
    pub fn stable_hash(&self) -> u64 {
        let mut h = FxHasher::default();
        self.hash(&mut h);
        splitmix64(h.finish())
    }
}

/// Equality as the table asks it on every lookup: the addresses as two
/// 128-bit words and the tail word, combined without branches.
impl PartialEq for FlowKey {
    #[inline]
    fn eq(&self, o: &FlowKey) -> bool {
        let word = |a: &Addr| u128::from_ne_bytes(a.0);
        (word(&self.a) == word(&o.a)) & (word(&self.b) == word(&o.b)) & (self.tail == o.tail)
    }
}

/// The order of the fields (a, pa, b, pb, proto, one_way): records that
/// start at the same time come out in it. The tail's high half is `pa`,
/// its low half orders as (pb, proto, one_way).
impl Ord for FlowKey {
    fn cmp(&self, o: &FlowKey) -> std::cmp::Ordering {
        (self.a, self.tail >> 32, self.b, self.tail as u32).cmp(&(o.a, o.tail >> 32, o.b, o.tail as u32))
    }
}

impl PartialOrd for FlowKey {
    fn partial_cmp(&self, o: &FlowKey) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

/// The table hash: five words, one multiply each with [`FxHasher`] (the
/// derived impl feeds the addresses byte-slice-wise, several times slower).
impl Hash for FlowKey {
    fn hash<H: Hasher>(&self, h: &mut H) {
        for a in [&self.a.0, &self.b.0] {
            let (hi, lo) = a.split_at(8);
            h.write_u64(u64::from_le_bytes(hi.try_into().expect("8 bytes")));
            h.write_u64(u64::from_le_bytes(lo.try_into().expect("8 bytes")));
        }
        h.write_u64(self.tail);
    }
}

/// ICMPv4 counterpart types (Zeek's `ICMP4_counterpart`).
fn icmp4_counterpart(t: u8, code: u8) -> (u8, bool) {
    match t {
        8 => (0, false),
        0 => (8, false),
        13 => (14, false),
        14 => (13, false),
        15 => (16, false),
        16 => (15, false),
        10 => (9, false),
        9 => (10, false),
        17 => (18, false),
        18 => (17, false),
        _ => (code, true),
    }
}

/// ICMPv6 counterpart types (Zeek's `ICMP6_counterpart`).
fn icmp6_counterpart(t: u8, code: u8) -> (u8, bool) {
    match t {
        128 => (129, false),
        129 => (128, false),
        133 => (134, false),
        134 => (133, false),
        135 => (136, false),
        136 => (135, false),
        130 => (131, false),
        131 => (130, false),
        139 => (140, false),
        140 => (139, false),
        144 => (145, false),
        145 => (144, false),
        _ => (code, true),
    }
}

/// The FxHash word mixer (rustc's hasher): fast and deterministic; the
/// stable hash finishes it with [`splitmix64`], the tables' hash
/// ([`TableBuild`]) keys and folds it.
#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher {
    hash: u64,
}

const FX_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(w));
        }
    }
    fn write_u64(&mut self, i: u64) {
        self.hash = (self.hash.rotate_left(5) ^ i).wrapping_mul(FX_SEED);
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(i as u64)
    }
    fn write_u16(&mut self, i: u16) {
        self.write_u64(i as u64)
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64)
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64)
    }
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// The hash of every table the analyzer keys by what the traffic chooses
/// (the flow table, the host tables): FxHash's word mixer started from a
/// per-run random key, xored with a second key and finished by
/// [`splitmix64`].
///
/// The finish is what bounds an adversary: FxHash alone ends in a
/// multiply, whose low bits (the ones the table indexes by) depend only on
/// the low bits of its input, so keys that differ only in the ports (bits
/// 16-47 of the last word) shared a handful of buckets: 300 k SYNs on one
/// address pair took 10x the time of 300 k SYNs over distinct pairs.
/// splitmix64 makes every output bit depend on every input bit (a single
/// folded multiply, foldhash's finish, left the control bytes of the
/// one-pair flood visibly non-uniform: chi-square 3.4x its expectation),
/// and the random keys keep collisions from being computed ahead.
/// Outputs never depend on the key: no table's iteration order reaches
/// them (they are sorted), and uids and shards use [`FlowKey::stable_hash`].
#[derive(Clone, Copy)]
pub struct TableBuild {
    k0: u64,
    k1: u64,
}

impl TableBuild {
    /// A builder with the given keys (tests; runs use [`Default`]).
    pub fn with_keys(k0: u64, k1: u64) -> TableBuild {
        TableBuild { k0, k1 }
    }
}

/// The process's random keys, drawn once from std's `RandomState` (the OS
/// random source): one draw per run, not per table.
impl Default for TableBuild {
    fn default() -> TableBuild {
        static KEYS: std::sync::OnceLock<(u64, u64)> = std::sync::OnceLock::new();
        let &(k0, k1) = KEYS.get_or_init(|| {
            use std::hash::BuildHasher;
            let r = std::collections::hash_map::RandomState::new();
            (r.hash_one(0x7472_6163_656c_6162u64), r.hash_one(0x6b65_7973u64))
        });
        TableBuild::with_keys(k0, k1)
    }
}

impl std::hash::BuildHasher for TableBuild {
    type Hasher = TableHasher;
    #[inline]
    fn build_hasher(&self) -> TableHasher {
        TableHasher { fx: FxHasher { hash: self.k0 }, k1: self.k1 }
    }
}

/// [`TableBuild`]'s hasher.
#[derive(Clone, Copy)]
pub struct TableHasher {
    fx: FxHasher,
    k1: u64,
}

impl Hasher for TableHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.fx.write(bytes)
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.fx.write_u64(i)
    }
    fn write_u32(&mut self, i: u32) {
        self.fx.write_u64(i as u64)
    }
    fn write_u16(&mut self, i: u16) {
        self.fx.write_u64(i as u64)
    }
    fn write_usize(&mut self, i: usize) {
        self.fx.write_u64(i as u64)
    }
    #[inline]
    fn finish(&self) -> u64 {
        splitmix64(self.fx.hash ^ self.k1)
    }
}

/// Finaliser with full avalanche, so `hash % shards` uses every input bit.
pub(crate) fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Zeek-style uid: "C" + base62 of 96 bits keyed by (first ts, key). Zeek's
/// own uids come from a seeded RNG, so we cannot (and do not) match them;
/// ours are a pure function of the input, hence identical across runs and
/// thread counts. `seq` counts the earlier connections of the same key
/// and first timestamp (0 but for a 5-tuple reused within one timestamp):
/// it keeps every uid of a run distinct, and 0 leaves the uid as it was.
pub(crate) fn uid(ts_ns: i64, key: &FlowKey, seq: u32) -> Uid {
    const KEY: u64 = 0x7472_6163_656c_6162; // "tracelab"
    let mut h = key.stable_hash();
    if seq != 0 {
        h = splitmix64(h ^ splitmix64(u64::from(seq) ^ KEY.rotate_left(32)));
    }
    let lo = splitmix64(h ^ splitmix64(ts_ns as u64 ^ KEY));
    let hi = splitmix64(lo ^ h.rotate_left(17)) & 0xffff_ffff;
    let v: u128 = (hi as u128) << 64 | lo as u128;
    const DIGITS: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    // 96 bits need 17 base62 digits (least significant first); a fixed
    // width keeps uids aligned. One u128 division splits the number into
    // its low 10 digits and its high 7, each then taken in u64 arithmetic
    // (a u128 division per digit cost more than the rest of the record).
    const P10: u64 = 62u64.pow(10);
    let mut low = (v % P10 as u128) as u64;
    let mut high = (v / P10 as u128) as u64;
    let mut text = [b'C'; 18];
    for (i, d) in text[1..].iter_mut().enumerate() {
        let part = if i < 10 { &mut low } else { &mut high };
        *d = DIGITS[(*part % 62) as usize];
        *part /= 62;
    }
    Uid::from_ascii(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word-wise stable hash equals its definition: the addresses fed
    /// byte-slice-wise (8-byte chunks), then the ports word.
    #[test]
    fn stable_hash_is_the_bytewise_fxhash() {
        let mut x: u64 = 7;
        for _ in 0..1000 {
            let mut bytes = [0u8; 38];
            for b in bytes.iter_mut() {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                *b = (x >> 56) as u8;
            }
            let (a, b) = (&bytes[..16], &bytes[16..32]);
            let pa = u16::from_le_bytes([bytes[32], bytes[33]]);
            let pb = u16::from_le_bytes([bytes[34], bytes[35]]);
            let (proto, one_way) = (bytes[36], bytes[37] & 1 == 1);
            let key = FlowKey::new(Addr(a.try_into().unwrap()), pa, Addr(b.try_into().unwrap()), pb, proto, one_way);
            let mut h = FxHasher::default();
            h.write(a);
            h.write(b);
            h.write_u64((pa as u64) << 32 | (pb as u64) << 16 | (proto as u64) << 1 | one_way as u64);
            assert_eq!(key.stable_hash(), splitmix64(h.finish()));
        }
    }

    /// The word-wise equality is the field-wise one: a key equals its copy
    /// and differs from it once any one field differs.
    #[test]
    fn equality_is_field_wise() {
        let a = Addr::v4([10, 0, 0, 1]);
        let b = Addr([0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9]);
        let k = FlowKey::new(a, 1234, b, 443, 6, false);
        assert!(k == FlowKey::new(a, 1234, b, 443, 6, false));
        let mut a2 = a;
        a2.0[15] ^= 1;
        let mut b2 = b;
        b2.0[0] ^= 0x80;
        let changed = [
            FlowKey::new(a2, 1234, b, 443, 6, false),
            FlowKey::new(a, 1234, b2, 443, 6, false),
            FlowKey::new(a, 1235, b, 443, 6, false),
            FlowKey::new(a, 1234, b, 442, 6, false),
            FlowKey::new(a, 1234, b, 443, 17, false),
            FlowKey::new(a, 1234, b, 443, 6, true),
            // The ports swapped: same bits in the tail word, other places.
            FlowKey::new(a, 443, b, 1234, 6, false),
        ];
        for c in changed {
            assert!(c != k, "{c:?}");
        }
    }

    /// The order is the fields' lexicographic one (a, pa, b, pb, proto,
    /// one_way), on keys drawn from few values so that every field ties.
    #[test]
    fn order_is_field_wise() {
        let mut x: u64 = 13;
        let mut next = move |n: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        let addrs = [
            Addr::v4([10, 0, 0, 1]),
            Addr::v4([10, 0, 0, 2]),
            Addr([0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]),
        ];
        let ports = [0u16, 1, 80, 443, 65535];
        let fields: Vec<_> = (0..3000)
            .map(|_| {
                let a = addrs[next(3) as usize];
                let pa = ports[next(5) as usize];
                let b = addrs[next(3) as usize];
                let pb = ports[next(5) as usize];
                let proto = [1u8, 6, 17, 255][next(4) as usize];
                (a, pa, b, pb, proto, next(2) == 1)
            })
            .collect();
        let key = |f: &(Addr, u16, Addr, u16, u8, bool)| FlowKey::new(f.0, f.1, f.2, f.3, f.4, f.5);
        for w in fields.windows(2) {
            assert_eq!(key(&w[0]).cmp(&key(&w[1])), w[0].cmp(&w[1]), "{:?}", w);
            assert_eq!(key(&w[0]) == key(&w[1]), w[0] == w[1]);
        }
    }

    /// The two SYN floods of issue 17: 300 k keys on one address pair with
    /// the ports varying, and 300 k keys over distinct address pairs.
    fn floods() -> [Vec<FlowKey>; 2] {
        let one_pair = (0..300_000u32)
            .map(|i| {
                let (sport, dport) = (1024 + (i % 64_000) as u16, 1 + (i / 64_000) as u16);
                FlowKey::new(Addr::v4([10, 0, 0, 1]), sport, Addr::v4([10, 0, 0, 2]), dport, 6, false)
            })
            .collect();
        let spread = (1..=300_000u32)
            .map(|a| {
                let src = Addr::v4([10, (a >> 16) as u8, (a >> 8) as u8, a as u8]);
                FlowKey::new(src, 40_000, Addr::v4([192, 168, 0, 2]), 80, 6, false)
            })
            .collect();
        [one_pair, spread]
    }

    /// Pearson's chi-square of `keys` over 2^`bits` buckets picked the way
    /// hashbrown picks them: the hash's low bits (the bucket index) and,
    /// for bits = 7, its top 7 bits (the control byte compared in a group).
    fn chi_square(keys: &[FlowKey], hash: impl Fn(&FlowKey) -> u64, bits: u32, top: bool) -> f64 {
        let m = 1usize << bits;
        let mut counts = vec![0u64; m];
        for k in keys {
            let h = hash(k);
            let b = if top { (h >> (64 - bits)) as usize } else { h as usize & (m - 1) };
            counts[b] += 1;
        }
        let expected = keys.len() as f64 / m as f64;
        counts.iter().map(|&c| (c as f64 - expected).powi(2) / expected).sum()
    }

    /// The flow table's hash spreads the one-pair flood over the buckets
    /// as uniformly as the spread flood, and as a uniform hash would: the
    /// chi-square of both, over 2^16 bucket indices and over the 128
    /// control-byte values, stays within 6 standard deviations of its
    /// expectation (m - 1, sd sqrt(2(m - 1))), for several keys. The same
    /// statistic catches the previous table hash (plain FxHash, no
    /// finish): the one-pair flood's ports never reached the low bits.
    #[test]
    fn table_hash_spreads_a_one_pair_flood() {
        let floods = floods();
        let bound = |bits: u32| {
            let df = ((1u64 << bits) - 1) as f64;
            df + 6.0 * (2.0 * df).sqrt()
        };
        for (k0, k1) in [(0, 0), (1, 2), (0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210)] {
            let build = TableBuild::with_keys(k0, k1);
            let hash = |k: &FlowKey| std::hash::BuildHasher::hash_one(&build, k);
            for keys in &floods {
                for (bits, top) in [(16, false), (7, true)] {
                    let chi = chi_square(keys, hash, bits, top);
                    assert!(chi < bound(bits), "keys ({k0:x}, {k1:x}), {bits} bits (top {top}): chi-square {chi:.0}");
                }
            }
        }
        let fx = |k: &FlowKey| {
            let mut h = FxHasher::default();
            k.hash(&mut h);
            h.finish()
        };
        let chi = chi_square(&floods[0], fx, 16, false);
        assert!(chi > 100.0 * bound(16), "plain FxHash: chi-square {chi:.0}");
    }

    /// The table hash depends on the run's key; the stable hash (shards,
    /// uids) does not.
    #[test]
    fn table_hash_is_keyed() {
        let k = FlowKey::new(Addr::v4([10, 0, 0, 1]), 1234, Addr::v4([10, 0, 0, 2]), 80, 6, false);
        let h = |b: TableBuild| std::hash::BuildHasher::hash_one(&b, k);
        assert_eq!(h(TableBuild::with_keys(1, 2)), h(TableBuild::with_keys(1, 2)));
        assert_ne!(h(TableBuild::with_keys(1, 2)), h(TableBuild::with_keys(3, 2)));
        assert_ne!(h(TableBuild::with_keys(1, 2)), h(TableBuild::with_keys(1, 4)));
        // One draw per run: every table of the run shares it.
        assert_eq!(h(TableBuild::default()), h(TableBuild::default()));
    }

    /// The chunked base62 digits equal the plain u128 ones (the uid
    /// format is a contract: conn.log, Parquet and the tests read it).
    #[test]
    fn uid_digits_match_u128_division() {
        const DIGITS: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        let reference = |ts: i64, key: &FlowKey| {
            const KEY: u64 = 0x7472_6163_656c_6162;
            let h = key.stable_hash();
            let lo = splitmix64(h ^ splitmix64(ts as u64 ^ KEY));
            let hi = splitmix64(lo ^ h.rotate_left(17)) & 0xffff_ffff;
            let mut v: u128 = (hi as u128) << 64 | lo as u128;
            let mut s = String::from("C");
            for _ in 0..17 {
                s.push(DIGITS[(v % 62) as usize] as char);
                v /= 62;
            }
            s
        };
        for i in 0..2000i64 {
            let key = FlowKey::new(Addr::v4([10, 0, 0, 1]), i as u16, Addr::v4([192, 168, 1, 1]), 443, 6, false);
            let ts = 1_700_000_000_000_000_000 + i * 7_919_000_003;
            assert_eq!(uid(ts, &key, 0).as_str(), reference(ts, &key));
        }
    }

    /// Zeek's counterpart tables (ICMP.cc, `ICMP4_counterpart` and
    /// `ICMP6_counterpart`): each request/reply pair maps both ways and is
    /// two-way; every other type is one-way and keeps its code as the
    /// responder port. Checked for all 256 types, so no arm can go missing.
    #[test]
    fn icmp_counterparts_are_zeeks_pairs() {
        let v4 = [(8, 0), (13, 14), (15, 16), (10, 9), (17, 18)];
        let v6 = [(128, 129), (133, 134), (135, 136), (130, 131), (139, 140), (144, 145)];
        for (pairs, counterpart) in
            [(&v4[..], icmp4_counterpart as fn(u8, u8) -> (u8, bool)), (&v6[..], icmp6_counterpart)]
        {
            for t in 0..=255u8 {
                let paired = pairs.iter().find_map(|&(a, b)| {
                    if t == a {
                        Some(b)
                    } else if t == b {
                        Some(a)
                    } else {
                        None
                    }
                });
                let code = t.wrapping_mul(7);
                assert_eq!(counterpart(t, code), paired.map_or((code, true), |other| (other, false)), "type {t}");
            }
        }
    }
}
