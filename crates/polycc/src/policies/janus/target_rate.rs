//! Janus' adaptive target rate (Zhou et al., IEEE TMC 2018, §5, Algorithm 1): a flow that stays
//! aggressive too long while the RTT grows lowers its target R' by (1 − gamma); a conservative
//! flow whose throughput exceeds R'/(1 − gamma) raises it again, up to the application's R
//! (without bound for flows with no target). Flows converge to the max-min fair allocation (§6).

use crate::units::{Duration, Time};

/// §5, §7.2: tau = 20 scales the first interval Delta T_1 = tau·gamma/(1 − gamma)·RTT (5 RTTs
/// with gamma = 0.2). §6 Lemma 1 needs tau < 1/alpha, alpha the aggressive CCA's growth per RTT
/// (5 % for CUBIC before its first loss).
pub const TAU: f64 = 20.0;
/// Algorithm 1 line 8: intervals after the first reduction of an aggressive stage last 2 RTTs.
pub const LATER_INTERVAL_RTTS: u64 = 2;

/// R' and the state of Algorithm 1. Rates in bit/s; `original` 0 means no target (bulk).
#[derive(Clone, Copy, Debug)]
pub struct TargetRate {
    /// tau, the scale of the first interval Delta T_1 ([`TAU`]).
    pub tau: f64,
    /// gamma: a reduction multiplies R' by (1 − gamma) ([`super::switching::GAMMA`]).
    pub gamma: f64,
    /// R: the application's target (0 for flows without one).
    pub original: f64,
    /// R': the adjusted target.
    pub adjusted: f64,
    /// R_min: reductions stop here.
    pub min: f64,
    /// Reductions in the current aggressive stage (the first interval is Delta T_1).
    reductions: u32,
    prev_adjust_time: Time,
    prev_rtt: Duration,
}

impl TargetRate {
    /// Algorithm 1's state before the application states a target: R = R' = R_min = 0.
    pub fn new(tau: f64, gamma: f64) -> Self {
        TargetRate {
            tau,
            gamma,
            original: 0.0,
            adjusted: 0.0,
            min: 0.0,
            reductions: 0,
            prev_adjust_time: Time::ZERO,
            prev_rtt: Duration::ZERO,
        }
    }

    /// Line 1: the application states R (and R_min); R' = R.
    pub fn set(&mut self, original: f64, min: f64) {
        self.original = original;
        self.adjusted = original;
        self.min = min;
    }

    /// §4.2: a flow without a target gets R' from its available bandwidth.
    pub fn initialise(&mut self, adjusted: f64) {
        self.adjusted = adjusted;
    }

    /// Delta T of the interval in progress (lines 5–8), in RTTs as measured when the interval
    /// began (the stage's start or the last reduction). Read literally, lines 5–8 would replace
    /// Delta T_1 by 2·RTT on the loop's second pass; §5's text and Lemma 1 make Delta T_1 the
    /// first interval of a stage and 2·RTT the ones after a reduction, which we follow.
    pub fn interval(&self) -> Duration {
        if self.reductions == 0 {
            self.prev_rtt
                .mul_f64(self.tau * self.gamma / (1.0 - self.gamma))
        } else {
            self.prev_rtt * LATER_INTERVAL_RTTS
        }
    }

    /// An aggressive stage begins: time and RTT are measured from here.
    pub fn enter_aggressive(&mut self, now: Time, rtt: Duration) {
        self.reductions = 0;
        self.prev_adjust_time = now;
        self.prev_rtt = rtt;
    }

    /// Lines 3–12, after a measurement window of the aggressive stage: when the interval has
    /// passed and the RTT grew by more than sigma(RTT) since the last adjustment (the
    /// bottleneck is saturated), R' = max((1 − gamma)·R', R_min). Returns true on a reduction.
    pub fn on_aggressive(&mut self, now: Time, rtt: Duration, sigma: Duration) -> bool {
        let time_diff = now.saturating_since(self.prev_adjust_time);
        let rtt_grew = rtt > self.prev_rtt && rtt - self.prev_rtt > sigma;
        if time_diff <= self.interval() || !rtt_grew {
            return false;
        }
        self.adjusted = ((1.0 - self.gamma) * self.adjusted).max(self.min);
        self.reductions += 1;
        self.prev_adjust_time = now;
        self.prev_rtt = rtt;
        true
    }

    /// Lines 13–15, after a measurement window of the conservative stage: when P exceeds
    /// R'/(1 − gamma), R' rises by that factor (capped at R when the flow has one). Returns
    /// true on a raise.
    pub fn on_conservative(&mut self, p_bps: f64) -> bool {
        let has_target = self.original > 0.0;
        if has_target && self.adjusted >= self.original {
            return false;
        }
        let next = self.adjusted / (1.0 - self.gamma);
        if p_bps <= next {
            return false;
        }
        self.adjusted = if has_target {
            next.min(self.original)
        } else {
            next
        };
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policies::janus::switching::GAMMA;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }
    fn at(v: u64) -> Time {
        Time::ZERO + ms(v)
    }

    #[test]
    fn first_interval_is_tau_gamma_over_one_minus_gamma_rtts_then_two() {
        let mut t = TargetRate::new(TAU, GAMMA);
        t.set(10e6, 0.0);
        // 20 · 0.2 / 0.8 = 5 RTTs: 300 ms at 60 ms.
        t.enter_aggressive(at(0), ms(60));
        assert_eq!(t.interval(), ms(300));
        assert!(t.on_aggressive(at(301), ms(70), ms(2)));
        // Then 2 RTTs of the RTT at the reduction.
        assert_eq!(t.interval(), ms(140));
    }

    #[test]
    fn reductions_need_the_interval_and_an_rtt_rise_above_sigma() {
        let mut t = TargetRate::new(TAU, GAMMA);
        t.set(10e6, 5e6);
        t.enter_aggressive(at(1000), ms(60));
        // Before Delta T_1 = 300 ms: no reduction whatever the RTT.
        assert!(!t.on_aggressive(at(1290), ms(100), ms(2)));
        // After it, an RTT rise of 1.5 ms against sigma 2 ms: the link is not saturated.
        assert!(!t.on_aggressive(at(1310), ms(61) + Duration(500_000), ms(2)));
        // A 10 ms rise: R' = 0.8 · 10 = 8 Mbit/s.
        assert!(t.on_aggressive(at(1320), ms(70), ms(2)));
        assert!((t.adjusted - 8e6).abs() < 1e-6);
        // The next interval is 2 RTTs (140 ms at 70 ms) and RTT must rise again from 70 ms.
        assert_eq!(t.interval(), ms(140));
        assert!(!t.on_aggressive(at(1450), ms(90), ms(2)));
        assert!(!t.on_aggressive(at(1470), ms(71), ms(2)));
        assert!(t.on_aggressive(at(1480), ms(80), ms(2)));
        assert!((t.adjusted - 6.4e6).abs() < 1e-6);
        // 0.8 · 6.4 = 5.12, then R_min = 5 is the floor.
        assert!(t.on_aggressive(at(1700), ms(90), ms(2)));
        assert!((t.adjusted - 5.12e6).abs() < 1e-6);
        assert!(t.on_aggressive(at(1900), ms(100), ms(2)));
        assert_eq!(t.adjusted, 5e6);
        // A new aggressive stage starts over with Delta T_1.
        t.enter_aggressive(at(5000), ms(60));
        assert_eq!(t.interval(), ms(300));
    }

    #[test]
    fn conservative_recovery_is_capped_at_r_and_unbounded_without_one() {
        let mut t = TargetRate::new(TAU, GAMMA);
        t.set(10e6, 0.0);
        t.initialise(6.4e6);
        // 6.4/0.8 = 8: P must exceed it.
        assert!(!t.on_conservative(8e6));
        assert!(t.on_conservative(8.1e6));
        assert!((t.adjusted - 8e6).abs() < 1e-6);
        assert!(t.on_conservative(11e6));
        assert_eq!(t.adjusted, 10e6, "capped at R");
        assert!(!t.on_conservative(20e6));
        // A bulk flow (R = 0) keeps rising while its throughput allows.
        let mut b = TargetRate::new(TAU, GAMMA);
        b.initialise(4e6);
        assert!(b.on_conservative(5.1e6));
        assert!((b.adjusted - 5e6).abs() < 1e-6);
        assert!(b.on_conservative(6.3e6));
        assert!((b.adjusted - 6.25e6).abs() < 1e-6);
        assert!(!b.on_conservative(6.3e6));
    }
}
