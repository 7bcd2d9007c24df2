//! PolyCC's fusion function (Zhu et al., SIGCOMM'23 demo, §2 "Fusion Controller", Fig. 2 step
//! 3): the calibrated window or rate computed from every member's own value.
//!
//! Built in: `max`, `min`, `closest` (argmin |x_i − x*| for a target x* given or derived),
//! `mean` (weighted). Anything else implements [`Fusion`]: registered by name in a
//! [`crate::registry::Registry`] ([`super::register_fusion`], how the Python bindings add
//! `py:<name>` fusions) or built into its own CCA with [`super::build_with_fusion`].
//!
//! When it runs ([`Every`]): the paper fuses on every feedback (§2: each CCA "receives feedback
//! (i.e., ACK) and computes" its value; the fusion follows), which is [`Every::Event`]: every ACK,
//! loss, receiver feedback and due timer. [`Every::Rtt`] fuses once per measurement window (one
//! smoothed RTT, [`super::signals`]) for functions too slow for the ACK path (a Python callable).

use super::members::Quantity;

/// What a fusion function sees, once per event that can change a member's value.
#[derive(Clone, Copy, Debug)]
pub struct FusionInput<'a> {
    /// The fused quantity: bytes for [`Quantity::Cwnd`], bit/s for [`Quantity::Rate`].
    pub quantity: Quantity,
    /// Each member's own value, in pool order (the configured pilot first, then the copilots).
    pub values: &'a [f64],
    /// Index of the current pilot in `values`.
    pub pilot: usize,
    /// The target x* when one is known (given, or derived from the BDP estimate or the intent).
    pub target: Option<f64>,
}

/// When the pool is fused (scenario key `fuse_every`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Every {
    /// Every event that can change a member's value: ACK, loss, receiver feedback, due timer
    /// (`"ack"`, the paper's).
    Event,
    /// Once per measurement window, at the ACK that closes it (`"rtt"`). Between two fusions
    /// the pilot runs on its own logic from the value last written; under rate fusion the agent
    /// paces at the last fused rate. Intents, outside calibrations, adoptions and pilot changes
    /// re-fuse at once under both.
    Rtt,
}

impl Every {
    /// The scenario spelling (`fuse_every = "ack"` / `"rtt"`).
    pub fn name(self) -> &'static str {
        match self {
            Every::Event => "ack",
            Every::Rtt => "rtt",
        }
    }
}

/// See [`Fusion::picks`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// The largest value (`fuse = "max"`).
    Largest,
    /// The smallest value (`fuse = "min"`).
    Smallest,
}

impl Pick {
    /// The picked one of `a` and `b`.
    #[inline]
    pub fn of<T: Ord>(self, a: T, b: T) -> T {
        match self {
            Pick::Largest => a.max(b),
            Pick::Smallest => a.min(b),
        }
    }

    /// The picked one of `values`, taken in order (`None` when there are none). The one
    /// selection of the pool's windows: the agent's fusions read members through it as they go.
    #[inline]
    pub fn among<T: Ord + Copy>(self, values: impl Iterator<Item = T>) -> Option<T> {
        // One loop with the running pick in an Option (not `reduce`, which peels the first
        // value off): the agent's per-ACK loop stays as small as it was written by hand.
        let mut picked: Option<T> = None;
        for v in values {
            picked = Some(picked.map_or(v, |p| self.of(p, v)));
        }
        picked
    }

    /// [`Pick::among`] for values that may be NaN (a fusion's input): a NaN is passed over,
    /// as by `f64::max` / `f64::min`; NaN when all are.
    #[inline]
    pub fn among_f64(self, values: &[f64]) -> f64 {
        let pick = match self {
            Pick::Largest => f64::max,
            Pick::Smallest => f64::min,
        };
        values.iter().copied().fold(f64::NAN, pick)
    }
}

/// A fusion function. It returns the calibrated value in the unit of `input.quantity`; a result
/// that is not finite and positive is replaced by the pilot's own value.
pub trait Fusion: Send {
    /// Name shown in telemetry and errors.
    fn name(&self) -> &str;
    /// The calibrated value f(x_1, …, x_n) from every member's own value (§2 step 3), in the
    /// unit of `input.quantity`.
    fn fuse(&mut self, input: &FusionInput<'_>) -> f64;
    /// Whether the function reads `input.target`. When it does not, the agent neither derives
    /// the target (a BDP estimate per event) nor measures what it is derived from.
    fn uses_target(&self) -> bool {
        true
    }
    /// For a function whose result is always the largest or the smallest value (max, min):
    /// which one. Window fusion then picks it while reading the members' windows, in integers
    /// and without calling [`Fusion::fuse`] per event; the result is the same.
    fn picks(&self) -> Option<Pick> {
        None
    }
    /// When it runs unless the scenario says otherwise (`fuse_every`).
    fn default_every(&self) -> Every {
        Every::Event
    }
}

/// `max` (§3.1: cwnd = max{cwnd_bbr, cwnd_cubic}) or `min` (§3.2: r = min{r_bbr, r_copa}): the
/// largest or the smallest value.
#[derive(Clone, Copy, Debug)]
pub struct Extreme(pub Pick);

impl Fusion for Extreme {
    fn name(&self) -> &str {
        match self.0 {
            Pick::Largest => "max",
            Pick::Smallest => "min",
        }
    }
    fn fuse(&mut self, input: &FusionInput<'_>) -> f64 {
        self.0.among_f64(input.values)
    }
    fn uses_target(&self) -> bool {
        false
    }
    fn picks(&self) -> Option<Pick> {
        Some(self.0)
    }
}

/// §2: argmin_i |x_i − x*|. Ties go to the earlier member (the configured pilot first); without
/// a target the pilot's value is kept.
#[derive(Clone, Copy, Debug, Default)]
pub struct Closest;

impl Fusion for Closest {
    fn name(&self) -> &str {
        "closest"
    }
    fn fuse(&mut self, input: &FusionInput<'_>) -> f64 {
        let Some(target) = input.target else {
            return input.values[input.pilot];
        };
        let mut best = input.values[input.pilot];
        let mut best_dist = f64::INFINITY;
        for &v in input.values {
            let d = (v - target).abs();
            if d < best_dist {
                best = v;
                best_dist = d;
            }
        }
        best
    }
}

/// Σ w_i·x_i / Σ w_i with fixed non-negative weights in pool order (validated by the builder:
/// one per member, sum > 0).
#[derive(Clone, Debug)]
pub struct WeightedMean {
    weights: Vec<f64>,
    sum: f64,
}

impl WeightedMean {
    /// `None` when the weights are not all finite and non-negative with a positive sum.
    pub fn new(weights: Vec<f64>) -> Option<Self> {
        let ok = weights.iter().all(|w| w.is_finite() && *w >= 0.0);
        let sum: f64 = weights.iter().sum();
        (ok && sum > 0.0).then_some(WeightedMean { weights, sum })
    }
}

impl Fusion for WeightedMean {
    fn name(&self) -> &str {
        "mean"
    }
    fn fuse(&mut self, input: &FusionInput<'_>) -> f64 {
        let dot: f64 = input
            .values
            .iter()
            .zip(&self.weights)
            .map(|(x, w)| x * w)
            .sum();
        dot / self.sum
    }
    fn uses_target(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input<'a>(values: &'a [f64], target: Option<f64>) -> FusionInput<'a> {
        FusionInput {
            quantity: Quantity::Cwnd,
            values,
            pilot: 0,
            target,
        }
    }

    #[test]
    fn max_and_min_pick_the_extremes() {
        let v = [30_000.0, 120_000.0, 45_000.0];
        assert_eq!(Extreme(Pick::Largest).fuse(&input(&v, None)), 120_000.0);
        assert_eq!(Extreme(Pick::Smallest).fuse(&input(&v, None)), 30_000.0);
        // A NaN is passed over.
        let with_nan = [f64::NAN, 45_000.0, 30_000.0];
        assert_eq!(
            Extreme(Pick::Largest).fuse(&input(&with_nan, None)),
            45_000.0
        );
        assert_eq!(Pick::Smallest.among([3, 1, 2].into_iter()), Some(1));
        assert_eq!(Pick::Largest.among(std::iter::empty::<u64>()), None);
    }

    #[test]
    fn closest_picks_argmin_distance_to_the_target_and_keeps_the_pilot_without_one() {
        let v = [30_000.0, 120_000.0, 45_000.0];
        // |30k − 50k| = 20k, |120k − 50k| = 70k, |45k − 50k| = 5k.
        assert_eq!(Closest.fuse(&input(&v, Some(50_000.0))), 45_000.0);
        assert_eq!(Closest.fuse(&input(&v, Some(100_000.0))), 120_000.0);
        let with_pilot_1 = FusionInput {
            pilot: 1,
            ..input(&v, None)
        };
        assert_eq!(Closest.fuse(&with_pilot_1), 120_000.0);
        // A tie (both 10k away) goes to the earlier member.
        assert_eq!(
            Closest.fuse(&input(&[40_000.0, 60_000.0], Some(50_000.0))),
            40_000.0
        );
    }

    #[test]
    fn weighted_mean_divides_by_the_weight_sum() {
        let mut m = WeightedMean::new(vec![3.0, 1.0]).expect("valid weights");
        // (3·40k + 1·80k) / 4 = 50k.
        assert_eq!(m.fuse(&input(&[40_000.0, 80_000.0], None)), 50_000.0);
        assert!(WeightedMean::new(vec![0.0, 0.0]).is_none());
        assert!(WeightedMean::new(vec![1.0, -0.5]).is_none());
        assert!(WeightedMean::new(vec![1.0, f64::NAN]).is_none());
    }
}
