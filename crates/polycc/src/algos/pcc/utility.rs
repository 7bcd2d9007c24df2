//! Utility functions: what a PCC controller maximises, as pluggable values chosen by name.
//!
//! Every utility maps one monitor interval's statistics ([`UtilityInput`]) to a number; the
//! controllers only compare utilities of different rates, so units matter only within one
//! function. Rates are in Mbit/s (10^6 bit/s, PCC-Uspace's bytes·8/µs), RTTs in µs.
//!
//! [`UtilityRegistry::standard`] holds the published functions; users add their own with
//! [`UtilityRegistry::register`] and pass the registry to the controllers' `build_with` functions
//! (see `pcc/mod.rs`), which select the utility by the `utility` parameter.

use crate::algos::pcc::monitor::MiStats;
use std::collections::BTreeMap;
use std::fmt;

/// Allegro §2.2: the sigmoid's steepness α. Theorem 1 needs α ≥ max(2.2·(n − 1), 100) for n
/// competing senders to have a unique fair equilibrium, so 100 covers up to 46 flows; raise
/// `alpha` for more.
pub const ALLEGRO_ALPHA: f64 = 100.0;
/// Allegro §2.2: the loss rate the sigmoid cuts off at.
pub const ALLEGRO_LOSS_MARGIN: f64 = 0.05;
/// Allegro §4.4.1 as the authors' prototype computes it (the NSDI'15 UDT code's `cc.h`; its
/// `cc_latency.h` had 100): the RTT factor is Sigmoid_10(1 − RTT_{n−1}/RTT_n); PCC-Uspace
/// master also uses a sigmoid there (coefficient 200, dossier §7.1). The paper prints
/// the bare ratio RTT_{n−1}/RTT_n, which is too shallow: with MIs of about two RTTs, the trial
/// 1 % above the rate gains 2 % of throughput over the trial 1 % below and loses only about
/// 0.7 % to the extra RTT, so the randomized trials keep choosing the higher rate while a queue
/// stands and only loss stops them (test `latency_utility_prefers_the_lower_rate_while_a_queue_grows`).
pub const ALLEGRO_RTT_STEEPNESS: f64 = 10.0;
/// Vivace (dossier §7.2) `kSendingRateExponent` t.
pub const VIVACE_EXPONENT: f64 = 0.9;
/// Vivace `kLatencyCoefficient` b.
pub const VIVACE_LATENCY_COEF: f64 = 900.0;
/// Vivace `kVivaceLossCoefficient` c.
pub const VIVACE_LOSS_COEF: f64 = 11.35;
/// Proteus (dossier §7.3): the scavenger's RTT-deviation coefficient d, per µs (README default;
/// `kRttDeviationCoefficient` for the hybrid).
pub const PROTEUS_DEV_COEF: f64 = 0.0015;

/// What a utility sees of one MI.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct UtilityInput {
    /// Sending rate x, Mbit/s.
    pub send_rate_mbps: f64,
    /// Throughput T (acknowledged bytes over the MI), Mbit/s.
    pub throughput_mbps: f64,
    /// Loss rate L.
    pub loss_rate: f64,
    /// dRTT/dT (dimensionless), after any noise filtering by the controller.
    pub rtt_gradient: f64,
    /// RTT standard deviation σ, µs, after any noise filtering.
    pub rtt_dev_us: f64,
    /// Mean RTT of this MI, µs (NaN when unknown).
    pub mean_rtt_us: f64,
    /// Mean RTT of the previous MI, µs (NaN when unknown).
    pub prev_mean_rtt_us: f64,
    /// The RTT as this MI began and as it ended, µs (the MI's RTT regression line at its first
    /// and last reliable sample; NaN when unknown): RTT_{n−1} and RTT_n of Allegro §4.4.1's
    /// RTT factor ([`AllegroLatency`]).
    pub rtt_start_us: f64,
    /// See `rtt_start_us`.
    pub rtt_end_us: f64,
}

impl UtilityInput {
    /// The input for a finished MI's statistics, with the previous MI's mean RTT (µs, NaN when
    /// unknown) supplied by the controller, which keeps it across MIs.
    pub fn from_stats(s: &MiStats, prev_mean_rtt_us: f64) -> Self {
        UtilityInput {
            send_rate_mbps: s.send_rate_mbps(),
            throughput_mbps: s.throughput_mbps(),
            loss_rate: s.loss_rate,
            rtt_gradient: s.rtt_gradient,
            rtt_dev_us: s.rtt_dev_us,
            mean_rtt_us: s.mean_rtt_us,
            prev_mean_rtt_us,
            rtt_start_us: s.rtt_start_us,
            rtt_end_us: s.rtt_end_us,
        }
    }
}

/// A utility function.
pub trait Utility: Send + fmt::Debug {
    /// The name the function is registered under, for telemetry and errors.
    fn name(&self) -> &str;
    /// The utility of one MI; only comparisons between values of one function matter.
    fn utility(&self, m: &UtilityInput) -> f64;
    /// The sending rate (Mbit/s) above which the function acts as a scavenger; only the hybrid
    /// has one. Vivace's control uses it to pick its decision rule (dossier §7.3).
    fn scavenger_above_mbps(&self) -> Option<f64> {
        None
    }
    /// The application moved the rate above which a hybrid acts as a scavenger; others ignore it.
    fn set_scavenger_above_mbps(&mut self, _mbps: f64) {}
}

/// Parameters a utility may use, from the controller's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UtilityParams {
    /// Allegro's sigmoid steepness α (default [`ALLEGRO_ALPHA`]).
    pub alpha: f64,
    /// Proteus's RTT-deviation coefficient d, per µs (default [`PROTEUS_DEV_COEF`]).
    pub d: f64,
    /// Proteus-H switch-over rate, Mbit/s.
    pub threshold_mbps: Option<f64>,
}

impl Default for UtilityParams {
    fn default() -> Self {
        UtilityParams {
            alpha: ALLEGRO_ALPHA,
            d: PROTEUS_DEV_COEF,
            threshold_mbps: None,
        }
    }
}

/// Allegro §2.2: Sigmoid_α(y) = 1 / (1 + e^{αy}).
pub fn sigmoid(alpha: f64, y: f64) -> f64 {
    1.0 / (1.0 + (alpha * y).exp())
}

/// Allegro §2.2, the "safe" utility: T·Sigmoid_α(L − 0.05) − x·L.
#[derive(Clone, Copy, Debug)]
pub struct AllegroSafe {
    /// The sigmoid's steepness α ([`ALLEGRO_ALPHA`]).
    pub alpha: f64,
}

impl Utility for AllegroSafe {
    fn name(&self) -> &str {
        "allegro"
    }
    fn utility(&self, m: &UtilityInput) -> f64 {
        m.throughput_mbps * sigmoid(self.alpha, m.loss_rate - ALLEGRO_LOSS_MARGIN)
            - m.send_rate_mbps * m.loss_rate
    }
}

/// Allegro §4.4.1, for latency-sensitive flows behind fair queueing:
/// (T·Sigmoid_α(L − 0.05)·Sigmoid_10(1 − RTT_{n−1}/RTT_n) − x·L) / RTT, with the RTT factor
/// the authors' code's, not the paper's bare ratio ([`ALLEGRO_RTT_STEEPNESS`]), and RTT_{n−1},
/// RTT_n the RTT as this MI began and as it ended (section below); the divisor is the MI's
/// mean RTT, in ms (a scale factor only). Without both RTTs the factor is Sigmoid(0) = ½.
///
/// # RTT factor
///
/// The paper names RTT_{n−1} and RTT_n the average RTTs of the last MI and of this one. The
/// mean RTT of an MI is the queue averaged over its packets, so the change from one MI's mean
/// to the next is half the previous MI's queue growth plus half this one's: the factor judges
/// the previous MI's rate as much as this MI's. In a randomized trial whose second pair repeats
/// the first's order (+ − + −), the second pair's two trials each follow the opposite trial and
/// see the same RTT change, so the throughput term alone decides it for the higher rate while a
/// queue grows; half of all decisions are then inconclusive and the rate sits above the link
/// rate while the queue fills (test `rtt_factor_judges_each_trial_by_its_own_rate`). The
/// authors' prototypes measured the RTT as each MI's result came in, UDT's smoothed RTT at the
/// MI's last acknowledgements (NSDI'15 code, `cc_latency.h`), or at the MI's start and end
/// (PCC-Uspace, dossier §7.1): an RTT change caused by the MI itself. Ours is that change, from
/// the MI's RTT regression line at its first and last reliable sample.
#[derive(Clone, Copy, Debug)]
pub struct AllegroLatency {
    /// The loss sigmoid's steepness α ([`ALLEGRO_ALPHA`]).
    pub alpha: f64,
}

impl Utility for AllegroLatency {
    fn name(&self) -> &str {
        "allegro-latency"
    }
    fn utility(&self, m: &UtilityInput) -> f64 {
        let rtt_ms = m.mean_rtt_us / 1e3;
        if rtt_ms.is_nan() || rtt_ms <= 0.0 {
            return AllegroSafe { alpha: self.alpha }.utility(m);
        }
        let growth = if m.rtt_start_us > 0.0 && m.rtt_end_us > 0.0 {
            1.0 - m.rtt_start_us / m.rtt_end_us
        } else {
            0.0
        };
        (m.throughput_mbps
            * sigmoid(self.alpha, m.loss_rate - ALLEGRO_LOSS_MARGIN)
            * sigmoid(ALLEGRO_RTT_STEEPNESS, growth)
            - m.send_rate_mbps * m.loss_rate)
            / rtt_ms
    }
}

/// Allegro §4.4.2, loss-resilient (for fair-queued links): T·(1 − L).
#[derive(Clone, Copy, Debug)]
pub struct LossResilient;

impl Utility for LossResilient {
    fn name(&self) -> &str {
        "loss-resilient"
    }
    fn utility(&self, m: &UtilityInput) -> f64 {
        m.throughput_mbps * (1.0 - m.loss_rate)
    }
}

/// Vivace (dossier §7.2): x^0.9 − 900·x·max(0, dRTT/dT) − 11.35·x·L. Negative gradients are
/// clamped to 0 as in PCC-Uspace master (the paper would reward them).
#[derive(Clone, Copy, Debug)]
pub struct Vivace;

impl Vivace {
    fn value(m: &UtilityInput) -> f64 {
        vivace_terms(m, m.rtt_gradient.max(0.0))
    }
}

/// x^0.9 − 900·x·gradient − 11.35·x·L.
fn vivace_terms(m: &UtilityInput, gradient: f64) -> f64 {
    let x = m.send_rate_mbps.max(0.0);
    x.powf(VIVACE_EXPONENT)
        - VIVACE_LATENCY_COEF * x * gradient
        - VIVACE_LOSS_COEF * x * m.loss_rate
}

/// Vivace as the NSDI'18 paper writes it (§3.1): x^0.9 − 900·x·dRTT/dT − 11.35·x·L, which
/// rewards a falling RTT. Under RTT noise the clamp of `vivace` is not neutral: noise pushes a
/// trial whose true gradient is negative above zero half the time, so the clamp penalises the
/// lower-rate trial of a pair more than the sign does.
#[derive(Clone, Copy, Debug)]
pub struct VivaceSigned;

impl Utility for VivaceSigned {
    fn name(&self) -> &str {
        "vivace-signed"
    }
    fn utility(&self, m: &UtilityInput) -> f64 {
        vivace_terms(m, m.rtt_gradient)
    }
}

impl Utility for Vivace {
    fn name(&self) -> &str {
        "vivace"
    }
    fn utility(&self, m: &UtilityInput) -> f64 {
        Vivace::value(m)
    }
}

/// Proteus-S (dossier §7.3): Vivace's utility − d·x·σ_RTT, σ in µs.
#[derive(Clone, Copy, Debug)]
pub struct ProteusScavenger {
    /// The RTT-deviation coefficient d, per µs ([`PROTEUS_DEV_COEF`]).
    pub d: f64,
}

impl Utility for ProteusScavenger {
    fn name(&self) -> &str {
        "proteus-scavenger"
    }
    fn utility(&self, m: &UtilityInput) -> f64 {
        Vivace::value(m) - self.d * m.send_rate_mbps.max(0.0) * m.rtt_dev_us.max(0.0)
    }
}

/// Proteus-H (dossier §7.3): Vivace's utility while the MI's sending rate is below the
/// threshold, the scavenger's above it.
#[derive(Clone, Copy, Debug)]
pub struct ProteusHybrid {
    /// The sending rate, Mbit/s, from which the scavenger utility applies.
    pub threshold_mbps: f64,
    /// The scavenger half's RTT-deviation coefficient d, per µs ([`PROTEUS_DEV_COEF`]).
    pub d: f64,
}

impl Utility for ProteusHybrid {
    fn name(&self) -> &str {
        "proteus-hybrid"
    }
    fn utility(&self, m: &UtilityInput) -> f64 {
        if m.send_rate_mbps < self.threshold_mbps {
            Vivace::value(m)
        } else {
            ProteusScavenger { d: self.d }.utility(m)
        }
    }
    fn scavenger_above_mbps(&self) -> Option<f64> {
        Some(self.threshold_mbps)
    }
    fn set_scavenger_above_mbps(&mut self, mbps: f64) {
        self.threshold_mbps = mbps;
    }
}

/// Builds a utility from its parameters, or says why not.
pub type UtilityBuilder = fn(&UtilityParams) -> Result<Box<dyn Utility>, String>;

/// Utility name → constructor.
#[derive(Clone, Default)]
pub struct UtilityRegistry {
    entries: BTreeMap<String, (&'static str, UtilityBuilder)>,
}

impl UtilityRegistry {
    /// A registry with no utility, for users who want only their own.
    pub fn empty() -> Self {
        UtilityRegistry::default()
    }

    /// The published utilities: `allegro`, `allegro-latency`, `loss-resilient`, `vivace`,
    /// `vivace-signed`, `proteus-scavenger`, `proteus-hybrid`.
    pub fn standard() -> Self {
        let mut r = UtilityRegistry::empty();
        r.register(
            "allegro",
            "Allegro §2.2 safe utility T·Sigmoid_α(L−0.05) − x·L",
            |p| Ok(Box::new(AllegroSafe { alpha: p.alpha })),
        );
        r.register(
            "allegro-latency",
            "Allegro §4.4.1 (T·Sigmoid_α(L−0.05)·Sigmoid_10(1 − RTT_start/RTT_end) − x·L)/RTT_mean over the MI",
            |p| Ok(Box::new(AllegroLatency { alpha: p.alpha })),
        );
        r.register("loss-resilient", "Allegro §4.4.2 T·(1 − L)", |_| {
            Ok(Box::new(LossResilient))
        });
        r.register(
            "vivace",
            "Vivace x^0.9 − 900·x·max(0,dRTT/dT) − 11.35·x·L",
            |_| Ok(Box::new(Vivace)),
        );
        r.register(
            "vivace-signed",
            "Vivace as in its paper: x^0.9 − 900·x·dRTT/dT − 11.35·x·L (rewards a falling RTT)",
            |_| Ok(Box::new(VivaceSigned)),
        );
        r.register(
            "proteus-scavenger",
            "Proteus-S: Vivace − d·x·σ_RTT(µs)",
            |p| Ok(Box::new(ProteusScavenger { d: p.d })),
        );
        r.register(
            "proteus-hybrid",
            "Proteus-H: Vivace below threshold_mbps, scavenger above",
            |p| match p.threshold_mbps {
                Some(t) => Ok(Box::new(ProteusHybrid {
                    threshold_mbps: t,
                    d: p.d,
                })),
                None => Err("proteus-hybrid needs threshold_mbps (no default)".to_string()),
            },
        );
        r
    }

    /// Adds or replaces `name`.
    pub fn register(&mut self, name: &str, summary: &'static str, build: UtilityBuilder) {
        self.entries.insert(name.to_string(), (summary, build));
    }

    /// The registered names, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.entries.keys().map(String::as_str).collect()
    }

    /// The one-line description `name` was registered with, if it is registered.
    pub fn summary(&self, name: &str) -> Option<&'static str> {
        self.entries.get(name).map(|e| e.0)
    }

    /// Builds utility `name` from `p`; the error names the unknown utility and lists the known
    /// ones, or is the builder's own.
    pub fn build(&self, name: &str, p: &UtilityParams) -> Result<Box<dyn Utility>, String> {
        let (_, b) = self.entries.get(name).ok_or_else(|| {
            format!(
                "unknown utility {name:?}; known: {}",
                self.names().join(", ")
            )
        })?;
        b(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(x: f64, loss: f64) -> UtilityInput {
        UtilityInput {
            send_rate_mbps: x,
            throughput_mbps: x * (1.0 - loss),
            loss_rate: loss,
            mean_rtt_us: f64::NAN,
            prev_mean_rtt_us: f64::NAN,
            ..UtilityInput::default()
        }
    }

    fn close(a: f64, b: f64, tol: f64) {
        assert!((a - b).abs() <= tol, "{a} vs {b}");
    }

    #[test]
    fn allegro_safe_values() {
        let u = AllegroSafe { alpha: 100.0 };
        // No loss: T·Sigmoid(−0.05) = 100/(1 + e^−5) = 99.3307.
        close(u.utility(&input(100.0, 0.0)), 99.330_715, 1e-5);
        // 1 % loss: 99·Sigmoid(−0.04) − 1 = 99·0.982014 − 1 = 96.2194.
        close(u.utility(&input(100.0, 0.01)), 96.219_41, 1e-4);
        // At the 5 % margin the sigmoid is ½: 95·0.5 − 5 = 42.5.
        close(u.utility(&input(100.0, 0.05)), 42.5, 1e-9);
        // 10 % loss: 90·Sigmoid(0.05) − 10 = 90·0.0066929 − 10 = −9.3976.
        close(u.utility(&input(100.0, 0.10)), -9.397_64, 1e-4);
        // Under random loss below the margin utility grows with rate: the Fig. 7 mechanism.
        assert!(u.utility(&input(105.0, 0.01)) > u.utility(&input(100.0, 0.01)));
    }

    #[test]
    fn latency_and_loss_resilient_values() {
        let lat = AllegroLatency { alpha: 100.0 };
        let mut m = input(40.0, 0.0);
        m.mean_rtt_us = 25_000.0;
        m.rtt_start_us = 20_000.0;
        m.rtt_end_us = 25_000.0;
        // 1 − 20/25 = 0.2: Sigmoid_10(0.2) = 1/(1 + e^2) = 0.119203;
        // (40·Sigmoid(−0.05)·0.119203 − 0) / 25 ms = 40·0.993307·0.119203/25 = 0.189448.
        close(lat.utility(&m), 0.189_448, 1e-5);
        // An unchanged RTT halves the throughput term: 40·0.993307·0.5/25 = 0.794646.
        m.rtt_start_us = 25_000.0;
        close(lat.utility(&m), 0.794_646, 1e-5);
        // The previous MI's mean RTT plays no part.
        m.prev_mean_rtt_us = 20_000.0;
        close(lat.utility(&m), 0.794_646, 1e-5);
        // §4.4.2: T·(1 − L) at 50 % loss: 50·0.5 = 25.
        close(LossResilient.utility(&input(100.0, 0.5)), 25.0, 1e-9);
    }

    /// Consecutive MIs at `rates` (Mbit/s) in a fluid model of a FIFO queue at capacity C =
    /// 10 Mbit/s: RTT 100 ms with 50 ms queued at first, MIs of two RTTs (Allegro's 1.7–2.2);
    /// an MI at rate x adds (x − C)/C of its length to the queue, so its RTT rises linearly from
    /// its start to its end and its mean RTT is the midpoint.
    fn fluid(rates: &[f64]) -> Vec<UtilityInput> {
        const C: f64 = 10.0;
        let (rtt_us, mi_us) = (100_000.0, 200_000.0);
        let mut queue_us = 50_000.0;
        let mut prev = f64::NAN;
        let mut out = vec![];
        for &x in rates {
            let added = (x - C) / C * mi_us;
            assert!(queue_us + added >= 0.0, "the model's queue must not empty");
            let mut m = input(x, 0.0);
            m.rtt_start_us = rtt_us + queue_us;
            m.rtt_end_us = m.rtt_start_us + added;
            m.mean_rtt_us = m.rtt_start_us + added / 2.0;
            m.prev_mean_rtt_us = prev;
            queue_us += added;
            prev = m.mean_rtt_us;
            out.push(m);
        }
        out
    }

    /// The RTT factor taken between consecutive MIs' mean RTTs, Sigmoid_10(1 − mean_{n−1}/mean_n)
    /// (this utility before issue 19).
    fn mean_to_mean(m: &UtilityInput) -> f64 {
        let growth = if m.prev_mean_rtt_us > 0.0 {
            1.0 - m.prev_mean_rtt_us / m.mean_rtt_us
        } else {
            0.0
        };
        m.throughput_mbps
            * sigmoid(100.0, m.loss_rate - ALLEGRO_LOSS_MARGIN)
            * sigmoid(ALLEGRO_RTT_STEEPNESS, growth)
            / (m.mean_rtt_us / 1e3)
    }

    #[test]
    fn latency_utility_prefers_the_lower_rate_while_a_queue_grows() {
        let lat = AllegroLatency { alpha: 100.0 };
        // The paper's printed form with mean RTTs: (T·Sigmoid(L − 0.05)·RTT_{n−1}/RTT_n − x·L)/RTT_n.
        let printed = |m: &UtilityInput| {
            m.throughput_mbps
                * sigmoid(100.0, m.loss_rate - ALLEGRO_LOSS_MARGIN)
                * (m.prev_mean_rtt_us / m.mean_rtt_us)
                / (m.mean_rtt_us / 1e3)
        };
        for first_up in [true, false] {
            // One pair of trials at C(1 ± 1 %) after an MI at C.
            let sign = if first_up { 1.0 } else { -1.0 };
            let ms = fluid(&[10.0, 10.0 * (1.0 + 0.01 * sign), 10.0 * (1.0 - 0.01 * sign)]);
            let pair = |u: &dyn Fn(&UtilityInput) -> f64| {
                let (a, b) = (u(&ms[1]), u(&ms[2]));
                if first_up {
                    (a, b)
                } else {
                    (b, a)
                }
            };
            // Up first: 0.031038 vs 0.034730; down first: 0.031425 vs 0.035225.
            let (up, down) = pair(&|m| lat.utility(m));
            assert!(down > up * 1.1, "{first_up}: up {up} down {down}");
            // The bare ratio picks the higher rate in both orders (0.066000 vs 0.065124 and
            // 0.067332 vs 0.066441): at capacity, with a queue standing, it would push on.
            let (up, down) = pair(&printed);
            assert!(up > down * 1.01, "{first_up}: printed up {up} down {down}");
        }
    }

    /// A full randomized trial (Allegro §3.2, ε = 1 %) at 0.8 % above the capacity with a queue
    /// standing, the situation the simulator showed for seconds (15.12 Mbit/s on a 15 Mbit/s
    /// link, issue 19): in the order + − + − the second pair's trials each follow the opposite
    /// trial, so their mean RTTs rise alike and the mean-to-mean factor lets the throughput term
    /// pick the higher rate: inconclusive, the rate stays and the queue grows. The RTT change
    /// within each MI judges each trial by its own rate: the lower rate wins both pairs.
    #[test]
    fn rtt_factor_judges_each_trial_by_its_own_rate() {
        use crate::algos::pcc::allegro::AllegroControl;
        let lat = AllegroLatency { alpha: 100.0 };
        let r = 10.0 * 1.008;
        for signs in [[1.0, -1.0, 1.0, -1.0], [-1.0, 1.0, -1.0, 1.0]] {
            let mut rates = vec![r];
            rates.extend(signs.iter().map(|s| r * (1.0 + 0.01 * s)));
            let ms = fluid(&rates);
            let verdict = |u: &dyn Fn(&UtilityInput) -> f64| {
                let us = [u(&ms[1]), u(&ms[2]), u(&ms[3]), u(&ms[4])];
                AllegroControl::rct_verdict(&signs, &us)
            };
            // + − + −: 0.029138, 0.032403, 0.028618, 0.031740 (mean to mean: 0.030165,
            // 0.030325, 0.030639, 0.029744).
            assert_eq!(verdict(&|m| lat.utility(m)), -1.0, "{signs:?}");
            assert_eq!(verdict(&mean_to_mean), 0.0, "{signs:?} mean to mean");
        }
        let ms = fluid(&[r, r * 1.01, r * 0.99, r * 1.01, r * 0.99]);
        close(lat.utility(&ms[3]), 0.028_618, 1e-6);
        close(mean_to_mean(&ms[3]), 0.030_639, 1e-6);
    }

    #[test]
    fn vivace_and_proteus_values() {
        let mut m = input(100.0, 0.01);
        m.rtt_gradient = 0.001;
        m.rtt_dev_us = 200.0;
        // 100^0.9 − 900·100·0.001 − 11.35·100·0.01 = 63.0957 − 90 − 11.35 = −38.2543.
        close(Vivace.utility(&m), -38.254_27, 1e-4);
        // Negative gradient is clamped: 63.0957 − 11.35 = 51.7457.
        m.rtt_gradient = -0.01;
        close(Vivace.utility(&m), 51.745_73, 1e-4);
        // The paper's form rewards it: 51.7457 + 900·100·0.01 = 951.7457.
        close(VivaceSigned.utility(&m), 951.745_73, 1e-4);
        m.rtt_gradient = 0.001;
        close(VivaceSigned.utility(&m), -38.254_27, 1e-4);
        m.rtt_gradient = -0.01;
        // Scavenger: − 0.0015·100·200 = −30 → 21.7457.
        let s = ProteusScavenger { d: 0.0015 };
        close(s.utility(&m), 21.745_73, 1e-4);
        let h = ProteusHybrid {
            threshold_mbps: 150.0,
            d: 0.0015,
        };
        close(h.utility(&m), 51.745_73, 1e-4); // below threshold: primary
        let h = ProteusHybrid {
            threshold_mbps: 50.0,
            d: 0.0015,
        };
        close(h.utility(&m), 21.745_73, 1e-4); // above: scavenger
    }

    #[derive(Debug)]
    struct Throughput;
    impl Utility for Throughput {
        fn name(&self) -> &str {
            "throughput"
        }
        fn utility(&self, m: &UtilityInput) -> f64 {
            m.throughput_mbps
        }
    }

    #[test]
    fn registry_builds_by_name_and_users_extend_it() {
        let mut r = UtilityRegistry::standard();
        let p = UtilityParams::default();
        for name in ["allegro", "allegro-latency", "loss-resilient", "vivace"] {
            assert_eq!(r.build(name, &p).expect(name).name(), name);
        }
        assert!(r.build("proteus-hybrid", &p).is_err());
        let h = r
            .build(
                "proteus-hybrid",
                &UtilityParams {
                    threshold_mbps: Some(20.0),
                    ..p
                },
            )
            .expect("hybrid");
        assert_eq!(h.scavenger_above_mbps(), Some(20.0));
        assert!(r.build("nope", &p).unwrap_err().contains("known: allegro"));
        r.register("throughput", "T", |_| Ok(Box::new(Throughput)));
        close(
            r.build("throughput", &p)
                .unwrap()
                .utility(&input(10.0, 0.1)),
            9.0,
            1e-12,
        );
    }
}
