//! The deterministic pseudo-random source of the PCC controllers (monitor-interval lengths,
//! the order of the trials in a randomized controlled trial). Seeded from the `seed` parameter, or
//! by default from the flow's own transport seed, so that a scenario replays bit for bit and
//! flows of one run differ.

/// SplitMix64 (Steele, Lea and Flood, OOPSLA 2014): a 64-bit state, one multiply-xorshift
/// finaliser per draw. Small, fast and good enough for choosing trial orders.
#[derive(Clone, Debug)]
pub(crate) struct SplitMix64 {
    state: u64,
}

/// SplitMix64's increment (the golden-ratio constant).
const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [lo, hi).
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next_f64()
    }

    pub fn coin(&mut self) -> bool {
        self.next_u64() >> 63 == 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence_and_uniform_range() {
        let mut a = SplitMix64::new(7);
        let mut b = SplitMix64::new(7);
        let mut heads = 0;
        for _ in 0..10_000 {
            let x = a.uniform(1.7, 2.2);
            assert_eq!(x, b.uniform(1.7, 2.2));
            assert!((1.7..2.2).contains(&x));
            heads += a.coin() as u32;
            b.coin();
        }
        assert!((4_800..5_200).contains(&heads), "{heads}");
        assert_ne!(SplitMix64::new(1).next_u64(), SplitMix64::new(2).next_u64());
    }
}
