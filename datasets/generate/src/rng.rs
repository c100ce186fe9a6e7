//! A seeded xoshiro256** generator and the few distributions the trace
//! needs. Written out (no crate) so the same seed gives the same trace on
//! every platform and compiler version. The state is seeded with SplitMix64,
//! the generator of the C++ cores and engine (click-elements/core/rng.hh);
//! docs/reference/random.md says why this one stays xoshiro256** and which
//! seed serves which purpose.

pub struct Rng {
    s: [u64; 4],
}

fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        Rng {
            s: [
                splitmix64(&mut x),
                splitmix64(&mut x),
                splitmix64(&mut x),
                splitmix64(&mut x),
            ],
        }
    }

    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let r = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        r
    }

    pub fn u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in (0, 1]: never 0, so `ln` is always finite.
    pub fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// Uniform integer in [0, n).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() <= p
    }

    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    pub fn exp(&mut self, mean: f64) -> f64 {
        -mean * self.unit().ln()
    }

    /// Log-normal with the given median, clamped to [lo, hi].
    pub fn lognormal(&mut self, median: f64, sigma: f64, lo: f64, hi: f64) -> f64 {
        // Box-Muller; one of the pair is enough here.
        let n = (-2.0 * self.unit().ln()).sqrt() * (std::f64::consts::TAU * self.unit()).cos();
        (median * (sigma * n).exp()).clamp(lo, hi)
    }

    /// Pareto(xm, alpha), capped at `cap` (heavy-tailed transfer sizes).
    pub fn pareto(&mut self, xm: f64, alpha: f64, cap: f64) -> f64 {
        (xm / self.unit().powf(1.0 / alpha)).min(cap)
    }

    /// Index drawn from cumulative weights (last entry = total).
    pub fn pick(&mut self, cumulative: &[f64]) -> usize {
        let total = *cumulative.last().expect("weights");
        let x = self.unit() * total;
        cumulative.iter().position(|&c| x <= c).unwrap_or(cumulative.len() - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_seeds_differ() {
        let (mut a, mut b, mut c) = (Rng::new(7), Rng::new(7), Rng::new(8));
        let xa: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        let xc: Vec<u64> = (0..4).map(|_| c.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
    }

    #[test]
    fn exponential_mean_and_unit_range() {
        let mut r = Rng::new(1);
        let n = 200_000;
        let mean = (0..n).map(|_| r.exp(2.0)).sum::<f64>() / n as f64;
        // Standard error of the mean is 2/sqrt(n) ~ 0.0045.
        assert!((mean - 2.0).abs() < 0.03, "mean {mean}");
        assert!((0..10_000).all(|_| {
            let u = r.unit();
            u > 0.0 && u <= 1.0
        }));
    }

    #[test]
    fn below_and_pick_stay_in_range() {
        let mut r = Rng::new(3);
        assert!((0..10_000).all(|_| r.below(7) < 7));
        let mut hits = [0u32; 3];
        for _ in 0..30_000 {
            hits[r.pick(&[1.0, 3.0, 4.0])] += 1;
        }
        // Weights 1:2:1.
        assert!((hits[1] as f64 / 30_000.0 - 0.5).abs() < 0.02, "{hits:?}");
    }
}
