//! The seeded PRNG of BBR's random choices (the gain-cycle phase, the probe wait): deterministic
//! per controller, never a global source.

use crate::cc::CcContext;
use crate::params::{Kind, ParamSpec};

/// A small deterministic PRNG (splitmix64): BBR's random gain-cycle phase and probe wait come from
/// here, seeded per controller, never from a global source.
#[derive(Clone, Debug)]
pub struct Prng(u64);

impl Prng {
    /// A generator at `seed`: the same seed draws the same sequence.
    pub fn new(seed: u64) -> Self {
        Prng(seed)
    }

    /// The next 64 uniformly distributed bits (one splitmix64 step).
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n` is 0), as Linux `get_random_u32_below`.
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// The `seed` key of every BBR variant: an absent seed is [`default_seed`]'s.
pub(crate) const SEED_PARAM: ParamSpec = ParamSpec::new(
    "seed",
    Kind::Integer,
    "seed of the random PROBE_BW phase and probe waits",
    "polycc: derived per flow, so that flows differ (Linux draws from prandom_u32)",
)
.when_absent("derived from the flow's seed");

/// The seed used when the scenario gives none: the transport's per-flow seed (`CcContext::seed`;
/// the simulator derives one per flow from the run's seed and the flow's index) mixed with the
/// creation time, MSS and version, so runs are reproducible and flows created at the same
/// instant still draw their own gain-cycle phases and probe waits.
pub fn default_seed(ctx: &CcContext, version: u64) -> u64 {
    let mut p = Prng::new(ctx.seed ^ ctx.now.0 ^ ctx.mss.rotate_left(40) ^ version.rotate_left(56));
    p.next_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prng_is_deterministic_and_bounded() {
        let mut a = Prng::new(7);
        let mut b = Prng::new(7);
        for _ in 0..1000 {
            let x = a.below(7);
            assert_eq!(x, b.below(7));
            assert!(x < 7);
        }
        assert_eq!(Prng::new(1).below(0), 0);
    }
}
